# SPDX-License-Identifier: MIT
# `make deb`'s script (scripts/make-deb.sh) builds libjitunwind0,
# libjitunwind-dev and jitstack from the tree with lintian passing them,
# and leaves nothing behind: the tree's parent directory (where
# dpkg-buildpackage writes) and debian/ are as they were.  The packages
# install with dpkg into a root of their own whose package database is
# this machine's, so that their dependencies are checked against what is
# installed here; there tests/installed-packages.sh finds every file with
# its package, the exports, pkg-config, a program built against them that
# runs, and the installed jitstack naming a JIT stack; debian/copyright,
# machine-readable, names the MIT license for the whole tree, lintian's
# copyright checks pass on a source package of the tree, and every
# package's copyright file says MIT.  Purged, they leave
# no file.  (check-fresh installs them with apt-get on a fresh Debian and
# runs the same checks.)
. "$(dirname "$0")/lib.sh"
need_cmd dpkg-buildpackage
need_cmd dh
need_cmd lintian
need_cmd pkg-config
need_cmd python3
[ "$(id -u)" = 0 ] || skip "dpkg installs packages as root only"
PARENT=$(dirname "$ROOT")
version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
debver=$(cd "$ROOT" && dpkg-parsechangelog -S Version) || fail "debian/changelog cannot be read"
[ "${debver%-*}" = "$version" ] || fail "debian/changelog is at $debver, the Makefile at $version"

ls -A "$PARENT" > parent.before
(cd "$ROOT" && find debian | sort) > debian.before
t0=$(date +%s)
JOBS=2 sh "$ROOT/scripts/make-deb.sh" "$T/b" > make-deb.out 2>&1 || { cat make-deb.out; fail "make-deb.sh"; }
t1=$(date +%s)
cat make-deb.out
ls -A "$PARENT" > parent.after
diff parent.before parent.after > parent.diff || { cat parent.diff; fail "the build left files beside the tree, in $PARENT"; }
(cd "$ROOT" && find debian | sort) > debian.after
diff debian.before debian.after > debian.diff || { cat debian.diff; fail "the build left files in debian/"; }

# debian/copyright is machine-readable (DEP-5) and gives the whole tree
# the MIT license, its text in a License paragraph.
python3 - "$ROOT/debian/copyright" > copyright.out 2>&1 << 'END' || { cat copyright.out; fail "debian/copyright"; }
import sys
paras = [p for p in open(sys.argv[1]).read().split("\n\n") if p.strip()]
def field(p, name):
    for line in p.splitlines():
        if line.startswith(name + ":"):
            return line[len(name) + 1:].strip()
assert field(paras[0], "Format") == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/", "not DEP-5"
files = [p for p in paras if field(p, "Files") is not None]
assert field(files[0], "Files") == "*" and field(files[0], "License") == "MIT", "Files: * is not MIT"
assert all(field(p, "License") == "MIT" for p in files), "a Files paragraph is not MIT"
text = [p for p in paras if field(p, "Files") is None and field(p, "License") == "MIT"]
assert text and "Permission is hereby granted, free of charge" in text[0], "no License: MIT paragraph with its text"
END
# lintian's copyright checks read a source package's debian/copyright, and
# the build above is of binary packages only: a source package of the tree
# (its orig tarball the tree without debian/) is made for them.
v=${debver%-*}
python3 "$ROOT/scripts/license-headers.py" --list > files || fail "the tree's files cannot be listed"
mkdir -p "src/jitunwind-$v"
(cd "$ROOT" && tar -cf - -T "$T/files") | tar -C "src/jitunwind-$v" -xf - || fail "copying the tree"
(cd src && tar --exclude="jitunwind-$v/debian" -czf "jitunwind_$v.orig.tar.gz" "jitunwind-$v" &&
	dpkg-source -b "jitunwind-$v") > dsc.out 2>&1 || { cat dsc.out; fail "dpkg-source cannot make a source package of the tree"; }
# (lintian indexes every file first, running readelf on the fuzzers'
# hostile ELF corpora too, and warns about them: minutes, and noise that
# is left out here)
limit 900 lintian -C debian/copyright,debian/copyright/dep5,debian/copyright/dep5/components \
	--fail-on error,warning --display-level '>=info' "src/jitunwind_$debver.dsc" > lintian-copyright.out 2>&1
rc=$?
grep -v -e 'Warning while running readelf' -e 'root privileges' lintian-copyright.out > lintian-copyright.tags
cat lintian-copyright.tags
[ $rc = 0 ] || fail "lintian's copyright checks fail (exit $rc)"
grep -qE '^[EWIP]: ' lintian-copyright.tags && fail "lintian's copyright checks report tags (above)"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
pkgs="libjitunwind0 libjitunwind-dev jitstack"
# the LuaJIT module's package: x86-64 only, as the module is
[ "$arch" = amd64 ] && pkgs="$pkgs lua-jitunwind"
debs=
for p in $pkgs; do
	d=$T/b/deb/${p}_${debver}_$arch.deb
	[ -f "$d" ] || fail "no $p package was built"
	debs="$debs $d"
done
ma() { dpkg-deb -f "$T/b/deb/${1}_${debver}_$arch.deb" Multi-Arch; }
[ "$(ma libjitunwind0)" = same ] && [ "$(ma libjitunwind-dev)" = same ] && [ "$(ma jitstack)" = foreign ] ||
	fail "Multi-Arch: libjitunwind0 '$(ma libjitunwind0)', libjitunwind-dev '$(ma libjitunwind-dev)', jitstack '$(ma jitstack)'"
dpkg-deb -f "$T/b/deb/libjitunwind-dev_${debver}_$arch.deb" Depends | grep -q "libjitunwind0 (= $debver)" ||
	fail "libjitunwind-dev does not depend on libjitunwind0 (= $debver)"

# a root of their own, with this machine's package database
R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
cp /var/lib/dpkg/status "$R/var/lib/dpkg/status"
[ -f /var/lib/dpkg/arch ] && cp /var/lib/dpkg/arch "$R/var/lib/dpkg/arch"
: > "$R/var/lib/dpkg/available"
(cd "$R" && find . | sort) > root.before
# shellcheck disable=SC2086
dpkg --root="$R" -i $debs > dpkg.out 2>&1 || { cat dpkg.out; fail "dpkg -i refused the packages"; }
for p in $pkgs; do
	[ "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status} ${Version}' "$p")" = "install ok installed $debver" ] ||
		fail "$p is not installed at $debver"
done
sh "$ROOT/tests/installed-packages.sh" "$R" || fail "the installed packages (above)"
for p in $pkgs; do
	grep -qx 'License: MIT' "$R/usr/share/doc/$p/copyright" 2>/dev/null || fail "$p's copyright file does not name the MIT license"
done
if [ "$arch" = amd64 ]; then
	m=$R/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/lua/5.1
	[ -f "$m/jitunwind.so" ] || fail "lua-jitunwind holds no $m/jitunwind.so"
	if command -v luajit > /dev/null 2>&1; then
		LUA_CPATH="$m/?.so" limit 30 luajit -e 'local j = require "jitunwind"; print(type(j))' > lua.out 2>&1 &&
			grep -qx table lua.out || { cat lua.out; fail "luajit cannot load the packaged module"; }
	fi
fi

# shellcheck disable=SC2086
dpkg --root="$R" --purge $(echo $pkgs | tr ' ' '\n' | tac) > purge.out 2>&1 || { cat purge.out; fail "dpkg --purge"; }
(cd "$R" && find . ! -path './var/lib/dpkg/*' | sort) > root.after
grep -v '^\./var/lib/dpkg/' root.before | diff - root.after > root.diff ||
	{ cat root.diff; fail "purging the packages left files"; }
pass "make-deb.sh built the packages in $((t1 - t0)) s, lintian-clean, leaving nothing behind; installed, they work; purged, they leave nothing"
