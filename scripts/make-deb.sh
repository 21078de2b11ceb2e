#!/bin/sh
# SPDX-License-Identifier: MIT
# make-deb.sh [BUILD] - the Debian packages of the tree (debian/), into
# BUILD/deb (BUILD: build by default).  `make deb` runs it.
#
# dpkg-buildpackage -us -uc -b runs at the top of the tree (debian/rules
# builds through the Makefile into debian/build, never build/) and writes
# the packages, the .buildinfo and the .changes into the tree's parent
# directory.  They are moved from there into BUILD/deb, so that nothing is
# left beside the tree; files of those names already in the parent are
# someone else's, and stop the build before it starts.  The tree is cleaned
# after the build (debian/build, debian/tmp, ...), whether it succeeded or
# not.  Then lintian checks
# the .changes: an error or a warning fails (debian/*.lintian-overrides
# holds each accepted one, with its reason).
#
#   JOBS  parallel jobs of the build (default: the number of processors)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUT=$BUILD/deb
PARENT=$(dirname "$ROOT")
JOBS=${JOBS:-$(nproc)}

say() { printf 'make-deb: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

cd "$ROOT"
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
source=$(dpkg-parsechangelog -S Source)
changes=${source}_${version}_$arch.changes
# Every name the build can write into the parent: each package's .deb and
# its -dbgsym's, the .buildinfo and the .changes.
names="$changes ${source}_${version}_$arch.buildinfo"
for p in $(sed -n 's/^Package: *//p' debian/control); do
	names="$names ${p}_${version}_$arch.deb ${p}-dbgsym_${version}_$arch.deb"
done
for f in $names; do
	[ ! -e "$PARENT/$f" ] || die "$PARENT/$f is there already; move it away first"
done

# Whatever happens, what the build wrote beside the tree goes to $OUT.
collect() {
	for f in $names; do
		[ -e "$PARENT/$f" ] && mv -f "$PARENT/$f" "$OUT/"
	done
	return 0
}
rm -rf "$OUT"
mkdir -p "$OUT"
trap collect EXIT
trap 'exit 130' INT TERM HUP

# A package is built from the tree alone: none of the calling make's
# variables (make check SAN=1 exports SAN; make deb BUILD=... passes BUILD
# down in MAKEFLAGS) may reach debian/rules.
t0=$(date +%s)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u SAN -u WERROR -u BUILD \
	dpkg-buildpackage -us -uc -b --post-clean -j"$JOBS" > "$OUT/build.log" 2>&1 ||
	{
		tail -40 "$OUT/build.log" >&2
		# --post-clean runs only after a build that succeeded
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES debian/rules clean >> "$OUT/build.log" 2>&1
		die "dpkg-buildpackage failed (log: $OUT/build.log)"
	}
t1=$(date +%s)
collect
[ -f "$OUT/$changes" ] || die "no $changes was written"
# everything the .changes lists must have come over
sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} [0-9]* [^ ]* [^ ]* //p' "$OUT/$changes" > "$OUT/files"
[ -s "$OUT/files" ] || die "$changes lists no files"
while read -r f; do
	[ -f "$OUT/$f" ] || die "$f, listed in $changes, is not in $OUT"
done < "$OUT/files"
say "built in $((t1 - t0)) s: $(tr '\n' ' ' < "$OUT/files")"

rc=0
lintian --fail-on error,warning "$OUT/$changes" > "$OUT/lintian.log" 2>&1 || rc=$?
t2=$(date +%s)
cat "$OUT/lintian.log"
[ $rc -eq 0 ] || die "lintian reports errors or warnings (log: $OUT/lintian.log)"
say "lintian: no error, no warning ($((t2 - t1)) s); packages in $OUT"
