#!/bin/sh
# SPDX-License-Identifier: MIT
# run-probe.sh - in-process unwinders through JIT code, with the probe
# program: glibc backtrace() walks every VM frame up to main, and a C++
# exception thrown at the bottom reaches its handler near main, in each
# configuration whose frame description is right.  Without publishing,
# both fail (libgcc has no frame-pointer fallback).
. "$(dirname "$0")/lib.sh"
if ! $TJ --publish=unwinder "$EX/probe.tj" 0 1 >/dev/null 2>&1; then
	skip_all "this tinyjit cannot publish to the unwinder channel (built without libjitunwind?)"
fi
depth=9
vm_frames=$((depth + 2)) # main, then descend at depths 9..0

# JIT frames print as a bare [0xADDRESS] (no ELF file for dladdr)
jit_frames() { grep -c '^\[0x[0-9a-f]*\]$' "$1"; }

for cfi in region exact; do
	$TJ --cfi=$cfi --publish=unwinder "$EX/probe.tj" 1 $depth >"$TJ_TEST_B/bt.out" 2>&1
	expect_eq "backtrace_shows_every_vm_frame [cfi=$cfi]" $vm_frames "$(jit_frames "$TJ_TEST_B/bt.out")"
	check "backtrace_reaches_libc_start [cfi=$cfi]" grep -q __libc_start_main "$TJ_TEST_B/bt.out"
done
# W^X with two views of the code: the RX view's addresses are published
for wx in dual dual-anon; do
	$TJ --wx=$wx --cfi=exact --publish=unwinder "$EX/probe.tj" 1 $depth >"$TJ_TEST_B/bt.out" 2>&1
	expect_eq "backtrace_shows_every_vm_frame [wx=$wx]" $vm_frames "$(jit_frames "$TJ_TEST_B/bt.out")"
	check "backtrace_reaches_libc_start [wx=$wx]" grep -q __libc_start_main "$TJ_TEST_B/bt.out"
done
$TJ --publish=none "$EX/probe.tj" 1 $depth >"$TJ_TEST_B/bt.out" 2>&1
expect_eq backtrace_without_publishing_stops_at_the_first_jit_frame 1 "$(jit_frames "$TJ_TEST_B/bt.out")"
check backtrace_without_publishing_never_reaches_main \
	sh -c "! grep -q __libc_start_main '$TJ_TEST_B/bt.out'"

caught() { # FRAMES CFI PUBLISH [--wx=...]
	$TJ --frames=$1 --cfi=$2 --publish=$3 ${4:-} "$EX/probe.tj" 4 $depth >"$TJ_TEST_B/exc.out" 2>&1 &&
		grep -q "caught C++ exception" "$TJ_TEST_B/exc.out" &&
		[ "$(tail -n 1 "$TJ_TEST_B/exc.out")" = "tinyjit probe: caught C++ exception 'tinyjit probe exception' (mode 4) near main" ]
}
check exception_crosses_jit_frames_fp_region caught fp region unwinder
check exception_crosses_jit_frames_fp_exact caught fp exact unwinder
check exception_crosses_jit_frames_nofp_exact caught nofp exact unwinder
check exception_crosses_jit_frames_fp_exact_wx_dual caught fp exact unwinder --wx=dual
check exception_crosses_jit_frames_fp_exact_wx_dual_anon caught fp exact unwinder --wx=dual-anon
check exception_without_publishing_terminates sh -c "! $TJ --publish=none $EX/probe.tj 4 $depth >/dev/null 2>&1"
# nofp stencils that use rbp break the frame-pointer chain the region rule
# follows: shown only if some stencil of the nofp set writes rbp
if [ -n "$("$TJ_TEST_B/../gen/tj_validate" list "$TJ_TEST_B/../stencils/nofp/omit.o" 2>/dev/null)" ]; then
	check nofp_region_loses_the_exception sh -c "! $TJ --frames=nofp --cfi=region --publish=unwinder $EX/probe.tj 4 $depth >/dev/null 2>&1"
else
	skip "no stencil of the nofp set uses rbp in this build"
fi
finish
