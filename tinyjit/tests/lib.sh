# SPDX-License-Identifier: MIT
# lib.sh - shared helpers for tinyjit's test drivers (sourced, POSIX sh).
#
# A driver sources this, runs its checks with `check NAME CONDITION...` or
# `expect_eq NAME WANT GOT`, and ends with `finish`: it exits 0 when every
# check passed, 1 otherwise, and 77 when it cannot run at all (saying why).
# Environment (TJ_TEST_ENV of tinyjit/tests/tests.mk, which tests/run.sh
# is given by make): TJ the tinyjit binary, TJ_TEST_B the tests' build
# directory, the stencil tools.  A driver run alone (tests/run.sh NAME, or
# sh tinyjit/tests/run-NAME.sh from the top) asks make for them.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
if [ -z "${TJ_TEST_B:-}" ]; then
	env=$(make -s --no-print-directory -C "$ROOT" BUILD="${BUILD:-build}" tinyjit-test-env) || exit 2
	eval "$env"
fi
EX=tinyjit/examples
PROGS=tinyjit/tests/progs
tj_pass=0 tj_fail=0 tj_skip=0
tj_driver=$(basename "$0" .sh)

pass() { tj_pass=$((tj_pass + 1)); }
fail() { tj_fail=$((tj_fail + 1)); echo "FAIL: $tj_driver: $*" >&2; }
skip() { tj_skip=$((tj_skip + 1)); echo "SKIP: $tj_driver: $*"; }

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then pass; else fail "$1: expected '$2', got '$3'"; fi
}

# check NAME COMMAND...: passes when COMMAND succeeds
check() {
	name=$1
	shift
	if "$@"; then pass; else fail "$name"; fi
}

skip_all() {
	echo "SKIP: $tj_driver: $*"
	exit 77
}

# The in-process channels, when this build can publish (a TJ_PUBLISH=0
# build cannot): publish_spec BINARY
publish_spec() {
	if "$1" --publish=unwinder,gdb "$EX/fib.tj" 1 >/dev/null 2>&1; then echo unwinder,gdb; else echo none; fi
}

# The JIT configurations every program is run in: each one with calls
# inlined (--inline, the default depth) and without.
MODES="--jit=off
--jit=on --frames=fp --cfi=region
--jit=on --frames=fp --cfi=exact
--jit=on --frames=nofp --cfi=region
--jit=on --frames=nofp --cfi=exact
--jit=on --frames=fp --cfi=region --inline
--jit=on --frames=fp --cfi=exact --inline
--jit=on --frames=nofp --cfi=region --inline
--jit=on --frames=nofp --cfi=exact --inline"

# frame_cost DIR: "NAME FP NOFP" for each stencil of the two sets built
# under DIR/stencils (build-stencils.sh's fp and nofp directories): its
# instructions in each set, counted in the objdump listings (relocation
# lines left out), the fp count from the framed rebuild for the stencils
# that needed one.
frame_cost() {
	fc_d=$1/stencils
	fc_frame=
	[ -s "$fc_d/fp/needs-frame.txt" ] && fc_frame=$fc_d/fp/frame.dis
	awk -v needs="$fc_d/fp/needs-frame.txt" -v omit="$fc_d/fp/omit.dis" -v frame="$fc_frame" \
		-v nofp="$fc_d/nofp/omit.dis" '
		function count(file, into, name, line, w) {
			name = ""
			while ((getline line <file) > 0) {
				if (line ~ /^[0-9a-f]+ <tj_op_[A-Za-z0-9_]*>:$/) {
					split(line, w, " ")
					name = substr(w[2], 8, length(w[2]) - 9)
				} else if (name != "" && line ~ /^ +[0-9a-f]+:/)
					into[name]++
			}
			close(file)
		}
		BEGIN {
			while ((getline line <needs) > 0)
				framed[substr(line, 7)] = 1
			count(omit, o)
			if (frame != "")
				count(frame, f)
			count(nofp, n)
			for (s in n)
				print s, ((s in framed) ? f[s] : o[s]), n[s]
		}' | sort
}

# AArch64 (tinyjit/aarch64.mk): the cross-built tinyjit runs under
# qemu-user with the cross libc.  need_aarch64 skips the driver, saying
# why, where the cross tools or qemu are missing; a64 runs a program of
# $TJ_A64_B under qemu (no core files: qemu would write its own).
need_aarch64() {
	command -v qemu-aarch64 >/dev/null 2>&1 || skip_all "qemu-aarch64 is not installed (qemu-user)"
	QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
	export QEMU_LD_PREFIX
	[ -f "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" ] ||
		skip_all "no AArch64 libc in $QEMU_LD_PREFIX (libc6-arm64-cross)"
	[ -x "$TJ_A64_B/tinyjit" ] || skip_all "$TJ_A64_B/tinyjit is not built (make tinyjit-aarch64)"
	TJ_A64=$TJ_A64_B/tinyjit
}
a64() { (ulimit -c 0 && exec timeout -k 5 60 qemu-aarch64 "$@"); }

finish() {
	echo "$tj_driver: $tj_pass passed, $tj_fail failed, $tj_skip skipped"
	[ "$tj_fail" -eq 0 ]
}
