# `make deb`'s script (scripts/make-deb.sh) builds libjitunwind0,
# libjitunwind-dev and jitstack from the tree with lintian passing them,
# and leaves nothing behind: the tree's parent directory (where
# dpkg-buildpackage writes) and debian/ are as they were.  The packages
# install with dpkg into a root of their own whose package database is
# this machine's, so that their dependencies are checked against what is
# installed here; there tests/installed-packages.sh finds every file with
# its package, the exports, pkg-config, a program built against them that
# runs, and the installed jitstack naming a JIT stack.  Purged, they leave
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
