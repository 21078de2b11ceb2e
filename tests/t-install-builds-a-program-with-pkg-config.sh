# SPDX-License-Identifier: MIT
# `make install DESTDIR=... PREFIX=/opt/ju` installs the header, both libraries
# and jitunwind.pc; a program built from them with pkg-config runs, shared and
# static.  What the libraries export: t-exports-are-the-api-at-their-versions.
. "$(dirname "$0")/lib.sh"
need_cmd pkg-config
D=$T/root
make -s -C "$ROOT" install BUILD="$BUILD" DESTDIR="$D" PREFIX=/opt/ju > install.log 2>&1 ||
	{ cat install.log; fail "make install"; }
for f in opt/ju/include/jitunwind.h opt/ju/lib/libjitunwind.so opt/ju/lib/libjitunwind.a opt/ju/lib/pkgconfig/jitunwind.pc; do
	[ -e "$D/$f" ] || fail "$f was not installed"
done
# A library built with sanitizers (make check SAN=1) needs them in the program.
SAN=
nm -D "$D/opt/ju/lib/libjitunwind.so" | grep -q __asan_init && SAN="-fsanitize=address,undefined"
export PKG_CONFIG_PATH=$D/opt/ju/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
flags=$(pkg-config --cflags --libs jitunwind) || fail "pkg-config does not know jitunwind"
cc $SAN -O1 -fno-omit-frame-pointer -rdynamic -o hello "$ROOT/examples/hello-jit.c" $flags -ldl -pthread ||
	fail "building against the installed shared library"
LD_LIBRARY_PATH=$D/opt/ju/lib ./hello > out || { cat out; fail "hello (shared)"; }
grep -q 'jit_inner (JIT code)' out && grep -q 'jit_outer (JIT code)' out && grep -q 'main' out ||
	{ cat out; fail "the shared build did not see through the JIT frames"; }
cc $SAN -O1 -fno-omit-frame-pointer -rdynamic -I"$D/opt/ju/include" -o hello-static \
	"$ROOT/examples/hello-jit.c" "$D/opt/ju/lib/libjitunwind.a" -ldl -pthread || fail "static build"
./hello-static > out || { cat out; fail "hello (static)"; }
grep -q 'jit_outer (JIT code)' out || fail "the static build did not see through the JIT frames"
pass "installed library, header and pkg-config file build working programs"
