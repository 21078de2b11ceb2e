#!/bin/sh
# SPDX-License-Identifier: MIT
# installed-packages.sh DIR - check the Debian packages libjitunwind0,
# libjitunwind-dev and jitstack as installed under DIR: "/" for this system
# (check-fresh installs them with apt-get), or a root of their own with
# its dpkg database in DIR/var/lib/dpkg (t-debian-packages-build-and-install).
#
# Each file is where the packages should put it and belongs to its package;
# every function of jitunwind.h has its manual page; the library exports
# the API at its symbol versions (tests/abi/exports); pkg-config gives the
# tree's version and the flags that build examples/hello-jit.c against the
# shared library, which then runs and sees through its JIT frames; the
# installed jitstack says the tree's version and names every frame of the
# library's test child (tests/child.c, built the same way), the JIT ones
# included.  Under "/" the programs find the library as any program does
# (ld.so's cache); under another DIR through LD_LIBRARY_PATH.
# Prints what it checked; at the first failure, says why and exits 1.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${1:?usage: installed-packages.sh DIR}
S=${S%/}
MA=$(cc -print-multiarch)
LIB=$S/usr/lib/$MA
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
W=$(mktemp -d "${TMPDIR:-/tmp}/jitunwind-pkgs.XXXXXX")
CHILD=
trap '[ -n "$CHILD" ] && kill "$CHILD" 2>/dev/null; rm -rf "$W"' EXIT
cd "$W" || exit 1

fail() { echo "installed-packages: FAIL: $*"; exit 1; }
ok() { echo "installed-packages: $*"; }

# files, and whose they are
owner() { dpkg-query --admindir="$S/var/lib/dpkg" -S "$1" 2>/dev/null | sed 's/:.*//' | sed 's/, /\n/g'; }
for spec in libjitunwind0:/usr/lib/$MA/libjitunwind.so.$VERSION libjitunwind0:/usr/lib/$MA/libjitunwind.so.0 \
	libjitunwind-dev:/usr/lib/$MA/libjitunwind.so libjitunwind-dev:/usr/lib/$MA/libjitunwind.a \
	libjitunwind-dev:/usr/lib/$MA/pkgconfig/jitunwind.pc libjitunwind-dev:/usr/include/jitunwind.h \
	libjitunwind-dev:/usr/share/man/man3/jitunwind.3.gz \
	jitstack:/usr/bin/jitstack jitstack:/usr/share/man/man1/jitstack.1.gz; do
	pkg=${spec%%:*} f=${spec#*:}
	[ -e "$S$f" ] || fail "$f is not installed (or is a dangling link)"
	owner "$f" | grep -qx "$pkg" || fail "$f does not belong to $pkg (dpkg -S: $(owner "$f" | tr '\n' ' '))"
done
[ -x "$S/usr/bin/jitstack" ] || fail "/usr/bin/jitstack is not executable"
n=0
for f in $(sed -n 's/^JU_API [^(]* \**\(ju_[a-z_]*\)(.*/\1/p' "$ROOT/include/jitunwind.h"); do
	p=$S/usr/share/man/man3/$f.3.gz
	[ -e "$p" ] || fail "$f has no manual page (man3/$f.3.gz, or a link that resolves)"
	gzip -dc "$p" | grep -q '^\.TH ' || fail "man3/$f.3.gz is not a manual page"
	n=$((n + 1))
done
ok "files in place and owned by their packages; $n function pages"

# the library's exports
sh "$ROOT/tests/abi/exported-symbols.sh" "$LIB/libjitunwind.so.0" "$LIB/libjitunwind.a" > exports ||
	fail "reading the installed libraries' symbols"
grep -v '^#' "$ROOT/tests/abi/exports" | diff - exports > exports.diff ||
	{ cat exports.diff; fail "the installed libraries' exports differ from tests/abi/exports"; }
ok "the installed libraries export the API at its versions"

# pkg-config, and a program built with it
if [ -n "$S" ]; then
	export PKG_CONFIG_SYSROOT_DIR="$S" PKG_CONFIG_LIBDIR="$LIB/pkgconfig"
	export LD_LIBRARY_PATH="$LIB"
fi
v=$(pkg-config --modversion jitunwind) || fail "pkg-config does not find jitunwind"
[ "$v" = "$VERSION" ] || fail "pkg-config says jitunwind $v, the tree is $VERSION"
flags=$(pkg-config --cflags --libs jitunwind) || fail "pkg-config --cflags --libs jitunwind"
cc -O1 -fno-omit-frame-pointer -rdynamic -o hello "$ROOT/examples/hello-jit.c" $flags > cc.out 2>&1 ||
	{ cat cc.out; fail "building hello-jit.c with pkg-config's flags ($flags)"; }
readelf -d hello | grep -q 'NEEDED.*\[libjitunwind\.so\.0\]' || fail "hello-jit is not linked with libjitunwind.so.0"
# (by the file it is: with /usr merged, ld.so's cache names /lib/$MA/...)
got=$(ldd ./hello | sed -n 's/^[[:space:]]*libjitunwind\.so\.0 => \([^ ]*\) .*/\1/p')
[ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$LIB/libjitunwind.so.0")" ] ||
	{ ldd ./hello; fail "hello-jit does not load the installed libjitunwind.so.0"; }
./hello > hello.out 2>&1 || { rc=$?; cat hello.out; fail "hello-jit exits $rc"; }
grep -q 'jit_inner (JIT code)' hello.out && grep -q 'jit_outer (JIT code)' hello.out && grep -q 'main' hello.out ||
	{ cat hello.out; fail "hello-jit's backtrace() does not go through its JIT frames to main"; }
ok "pkg-config $v: hello-jit builds, loads $got and sees through its JIT frames"

# the installed jitstack on a program linked with the installed library
js=$S/usr/bin/jitstack
[ "$("$js" --version)" = "jitstack $VERSION" ] || fail "jitstack --version says '$("$js" --version)', not jitstack $VERSION"
cc -O1 -fno-omit-frame-pointer -rdynamic -o child "$ROOT/tests/child.c" $flags > cc.out 2>&1 ||
	{ cat cc.out; fail "building tests/child.c with pkg-config's flags"; }
./child wait > child.out 2>&1 &
CHILD=$!
for _ in $(seq 100); do
	grep -q '^ready' child.out && break
	kill -0 "$CHILD" 2>/dev/null || break
	sleep 0.05
done
grep -q "^ready $CHILD\$" child.out || { cat child.out; fail "the child did not get ready"; }
timeout 60 "$js" -p "$CHILD" --json > js.json 2> js.err || { rc=$?; cat js.err; fail "jitstack -p exits $rc"; }
python3 - js.json > frames <<'PY' || fail "jitstack's JSON cannot be read"
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["threads"][0]["frames"]:
    print(f["pc"], f["function"] or "?")
PY
python3 "$ROOT/tests/check_frames.py" child.expect < frames > check.out 2>&1 ||
	{ cat check.out frames; fail "the installed jitstack does not name the child's frames in order"; }
jit=$(awk '$4 != "c" { printf "%s ", $1 }' child.expect)
ok "jitstack $VERSION names every frame of a child linked with the installed library, JIT frames ${jit}included"
