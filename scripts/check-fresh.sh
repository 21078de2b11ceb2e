#!/bin/sh
# SPDX-License-Identifier: MIT
# check-fresh.sh [REV] - the README's quick start on a fresh Debian 12.
#
# Builds a minimal Debian 12 root (debootstrap --variant=minbase bookworm,
# from the mirror this machine's apt already uses), caches it as a tarball,
# installs only make into a copy of it, puts a clean `git archive REV`
# (HEAD by default: commit first) into it, and runs the README's two
# commands there, `make demo` and then `make check`, as a new user would:
# they must install every package they need themselves.  Then it builds
# the Debian packages (`make deb`), installs the three with
# `apt-get install ./build/deb/...deb` as the README says, and checks them
# as installed (tests/installed-packages.sh /: their files, pkg-config,
# examples/hello-jit.c built against them and run, /usr/bin/jitstack -p
# naming the JIT frames of a program linked with the installed library).
#
# The chroot runs in a mount namespace of its own, so its mounts (the root
# bound onto itself, so that it is a mount point as a real root is, which
# `unshare --mount-proc` needs; /proc, /sys, /dev, /dev/pts) vanish with it
# whatever happens; a subreaper
# (build/tools/reaper) and a last scan of /proc end every process that was
# started in it; the copy is removed.  Needs root.
#
#   JU_FRESH_CACHE   where the tarball and downloaded packages are kept
#                    (default ~/.cache/jitunwind)
#   JU_FRESH_KEEP=1  keep the root afterwards (for a look inside)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REV=${1:-HEAD}
CACHE=${JU_FRESH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jitunwind}
TARBALL=$CACHE/bookworm-minbase.tar.gz
REAPER=$ROOT/build/tools/reaper
SUITE=bookworm

say() { printf 'check-fresh: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
[ -x "$REAPER" ] || die "$REAPER is missing (make test-tools)"
git -C "$ROOT" rev-parse --verify -q "$REV^{commit}" >/dev/null || die "no such revision: $REV"

make_tarball() {
	mirror=$(sh "$ROOT/scripts/host-mirror.sh" "$SUITE")
	[ -n "$mirror" ] || die "no '$SUITE' source in this machine's apt configuration"
	say "building a minimal $SUITE root (debootstrap --variant=minbase), cached in $TARBALL"
	b=$(mktemp -d /var/tmp/jitunwind-debootstrap.XXXXXX)
	if ! debootstrap --variant=minbase "$SUITE" "$b/root" "$mirror" > "$b/log" 2>&1; then
		tail -20 "$b/log" >&2
		rm -rf "$b"
		die "debootstrap failed"
	fi
	mkdir -p "$CACHE"
	tar -C "$b/root" -czf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
	rm -rf "$b"
}

sh "$ROOT/scripts/install-deps.sh" fresh
[ -f "$TARBALL" ] || make_tarball

W=$(mktemp -d /var/tmp/jitunwind-fresh.XXXXXX)
R=$W/root
# Processes whose root is inside the copy: the reaper should have ended
# them all; this is the last line of defence, and it says so when it acts.
kill_leftovers() {
	found=
	for p in /proc/[0-9]*; do
		case $(readlink "$p/root" 2>/dev/null) in "$R" | "$R"/*)
			found="$found ${p#/proc/}" ;;
		esac
	done
	[ -z "$found" ] && return 0
	say "killing processes left in the root:$found" >&2
	kill -KILL $found 2>/dev/null || true
	return 1
}
cleanup() {
	kill_leftovers || true
	if [ "${JU_FRESH_KEEP:-0}" = 1 ]; then say "kept $R"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$R" "$CACHE/archives/partial"
tar -C "$R" -xzf "$TARBALL"
# This machine's apt sources and its Acquire:: settings (a proxy, validity
# checks of a snapshot mirror), then name resolution.
rm -f "$R/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && cp "$f" "$R$f"
done
for f in /etc/apt/apt.conf.d/*; do
	[ -f "$f" ] && grep -q '^[[:space:]]*Acquire::' "$f" && cp "$f" "$R/etc/apt/apt.conf.d/"
done
cp /etc/hosts /etc/resolv.conf "$R/etc/"
# The certificate authorities this machine adds to Debian's (a proxy's own,
# say): ca-certificates takes them in when it is installed, so TLS clients
# (npm) reach what they reach here.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$R/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/"
fi
mkdir -p "$R/root/jitunwind"
git -C "$ROOT" archive "$REV" | tar -C "$R/root/jitunwind" -xf -
say "$(git -C "$ROOT" rev-parse --short "$REV"): $(git -C "$ROOT" log -1 --format=%s "$REV")"

# Inside: its own mounts, then make installed by hand (the one package the
# quick start assumes), then the two commands, each timed.
cat > "$R/root/fresh-run.sh" <<'EOF'
set -u
export DEBIAN_FRONTEND=noninteractive
t0=$(date +%s)
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends make; } > /root/make-install.log 2>&1 ||
	{ cat /root/make-install.log; echo "check-fresh: installing make failed"; exit 1; }
cd /root/jitunwind
t1=$(date +%s)
make demo; rc=$?
t2=$(date +%s)
echo "check-fresh: make demo exited $rc after $((t2 - t1)) s"
[ $rc -eq 0 ] || exit 1
make check; rc=$?
t3=$(date +%s)
echo "check-fresh: make check exited $rc after $((t3 - t2)) s"
[ $rc -eq 0 ] || exit $rc
make deb; rc=$?
t4=$(date +%s)
echo "check-fresh: make deb exited $rc after $((t4 - t3)) s"
[ $rc -eq 0 ] || exit 1
apt-get install -y -q --no-install-recommends ./build/deb/libjitunwind0_*.deb \
	./build/deb/libjitunwind-dev_*.deb ./build/deb/jitstack_*.deb ./build/deb/lua-jitunwind_*.deb \
	> /root/deb-install.log 2>&1 ||
	{ cat /root/deb-install.log; echo "check-fresh: apt-get install of the packages failed"; exit 1; }
sh tests/installed-packages.sh /; rc=$?
# the LuaJIT module, from where the package put it
luajit -e 'local j = require "jitunwind"; print("lua-jitunwind: " .. type(j))' || rc=1
t5=$(date +%s)
echo "check-fresh: the packages installed with apt-get: checks exited $rc after $((t5 - t4)) s"
exit $rc
EOF
# In the background, so that a signal reaches our trap at once: the
# reaper passes it on and ends what runs in the root.
set +e
# shellcheck disable=SC2016
unshare --mount --propagation private sh -c '
	R=$1 CACHE=$2 REAPER=$3
	mount --bind "$R" "$R" &&
	mount -t proc proc "$R/proc" &&
	mount -t sysfs sysfs "$R/sys" &&
	mount --bind /dev "$R/dev" &&
	mount --bind /dev/pts "$R/dev/pts" &&
	mount -t tmpfs tmpfs "$R/dev/shm" &&
	mount --bind "$CACHE/archives" "$R/var/cache/apt/archives" || exit 1
	exec "$REAPER" -n check-fresh -- chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh /root/fresh-run.sh
' check-fresh "$R" "$CACHE" "$REAPER" &
UPID=$!
trap 'kill -TERM $UPID 2>/dev/null; wait $UPID; exit 130' INT TERM HUP
wait $UPID
rc=$?
trap 'exit 130' INT TERM HUP
set -e
kill_leftovers || rc=1
[ $rc -eq 0 ] && say "passed: the README's quick start and its Debian packages work on a fresh $SUITE" ||
	say "FAILED (exit $rc)"
exit $rc
