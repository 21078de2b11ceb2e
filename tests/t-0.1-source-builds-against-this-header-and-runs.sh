# SPDX-License-Identifier: MIT
# Source written for 0.1, whose ju_options and ju_blob had no sz, rebuilt
# against this tree's header as a JIT that upgrades the -dev package would:
# 0.1's examples/hello-jit.c (tests/abi/0.1/hello-jit.c, as the 0.1 tree had
# it: a batch of two blobs in designated initializers, ju_open(NULL, ...))
# and tests/abi/old_client.c (0.1's options in a designated initializer, a
# blob, a batch of two).  Each compiles with gcc at -Wall -Wextra without a
# warning, and with clang-19 without a warning that 0.1's own header did not
# give it; linked against this library (its references at JITUNWIND_0.3, the
# sized entry points), each runs: glibc backtrace() sees through its JIT
# frames, the frames its source builds.
. "$(dirname "$0")/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "the 0.1 programs' JITs emit x86-64 code"
need_file "$BUILD/libjitunwind.so" "make lib"
need_cmd readelf
CC=${CC:-cc}
# A library built with sanitizers (make check SAN=1) needs them in the program.
SAN=
nm -D "$BUILD/libjitunwind.so" | grep -q __asan_init && SAN="-fsanitize=address,undefined"

# The warnings a compiler gives a program against a header directory, as
# "line:column: text" lines.
warnings() {
	w_cc=$1 w_inc=$2 w_src=$3
	"$w_cc" -std=gnu11 -Wall -Wextra -fsyntax-only -I"$w_inc" "$w_src" 2>&1 |
		sed -n 's/^[^:]*:\([0-9]*:[0-9]*\): warning: /\1: /p' | sort
}

for prog in hello:tests/abi/0.1/hello-jit.c client:tests/abi/old_client.c; do
	name=${prog%%:*} src=$ROOT/${prog#*:}
	warnings "$CC" "$ROOT/include" "$src" > "$name.gcc"
	[ -s "$name.gcc" ] && { cat "$name.gcc"; fail "$CC warns about ${prog#*:} against this header"; }
	if command -v clang-19 > /dev/null 2>&1; then
		warnings clang-19 "$ROOT/tests/abi/0.1" "$src" > "$name.clang-0.1"
		warnings clang-19 "$ROOT/include" "$src" > "$name.clang"
		comm -13 "$name.clang-0.1" "$name.clang" > "$name.clang-new"
		[ -s "$name.clang-new" ] &&
			{ cat "$name.clang-new"; fail "clang-19 warns about ${prog#*:} against this header as it did not against 0.1's"; }
	fi
	$CC -std=gnu11 -Wall -Wextra $SAN -O1 -fno-omit-frame-pointer -rdynamic -I"$ROOT/include" -o "$name" "$src" \
		-L"$BUILD" -ljitunwind -ldl || fail "building ${prog#*:} against this header"
	# built against this header: its calls go through the macros to the sized entry points
	readelf --dyn-syms -W "$name" | grep -q ' ju_publish_batch_sz@JITUNWIND_0.3' ||
		{ readelf --dyn-syms -W "$name" | grep ' ju_'; fail "$name does not call ju_publish_batch_sz@JITUNWIND_0.3"; }
done
export LD_LIBRARY_PATH=$BUILD

# hello-jit: main -> jit_outer -> host_callback -> jit_inner -> show_stack,
# which prints backtrace()'s frames innermost first.
limit 30 ./hello > hello.out 2>&1 || { cat hello.out; fail "0.1's hello-jit exits $?"; }
cat hello.out
sed -n 's/^ *#[0-9]* *0x[0-9a-f]* *//p' hello.out |
	sed -n 's/^\(jit_[a-z]*\) (JIT code)$/\1/p; s/^[^(]*(\([a-z_][a-z_]*\)+0x[0-9a-f]*).*/\1/p' |
	sed -n '/^show_stack$/,$p' > frames # under ASan its backtrace interceptor comes first
printf '%s\n' show_stack jit_inner host_callback jit_outer main > want
head -5 frames | diff want - || fail "0.1's hello-jit: backtrace() does not see the frames its source builds"

limit 60 ./client check > client.out 2>&1
rc=$?
cat client.out
[ $rc = 0 ] || fail "0.1's old_client, rebuilt against this header, fails its checks"
pass "0.1's hello-jit and old_client build against this header without new warnings and run: backtrace() sees through their JIT frames"
