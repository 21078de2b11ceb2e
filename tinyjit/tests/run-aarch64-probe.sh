#!/bin/sh
# SPDX-License-Identifier: MIT
# run-aarch64-probe.sh - in-process unwinders through AArch64 JIT code,
# under qemu-user, as run-probe.sh checks on the host: glibc backtrace()
# walks every VM frame up to main, and a C++ exception thrown at the bottom
# reaches its handler near main, in each configuration whose frame
# description is right.  Without publishing both fail (libgcc has no
# frame-pointer fallback); with nofp stencils the region rule loses the
# exception (the CALL stencil uses x29 as a general register).
. "$(dirname "$0")/lib.sh"
need_aarch64
depth=9
vm_frames=$((depth + 2)) # main, then descend at depths 9..0

# JIT frames print as a bare [0xADDRESS] (no ELF file for dladdr)
jit_frames() { grep -c '^\[0x[0-9a-f]*\]$' "$1"; }

for cfi in region exact; do
	a64 "$TJ_A64" --cfi=$cfi --publish=unwinder "$EX/probe.tj" 1 $depth >"$TJ_TEST_B/a64-bt.out" 2>&1
	expect_eq "backtrace_shows_every_vm_frame [cfi=$cfi]" $vm_frames "$(jit_frames "$TJ_TEST_B/a64-bt.out")"
	check "backtrace_reaches_libc_start [cfi=$cfi]" grep -q __libc_start_main "$TJ_TEST_B/a64-bt.out"
done
a64 "$TJ_A64" --publish=none "$EX/probe.tj" 1 $depth >"$TJ_TEST_B/a64-bt.out" 2>&1
expect_eq backtrace_without_publishing_stops_at_the_first_jit_frame 1 "$(jit_frames "$TJ_TEST_B/a64-bt.out")"
check backtrace_without_publishing_never_reaches_main \
	sh -c "! grep -q __libc_start_main '$TJ_TEST_B/a64-bt.out'"

caught() { # FRAMES CFI PUBLISH
	a64 "$TJ_A64" --frames=$1 --cfi=$2 --publish=$3 "$EX/probe.tj" 4 $depth >"$TJ_TEST_B/a64-exc.out" 2>&1 &&
		[ "$(tail -n 1 "$TJ_TEST_B/a64-exc.out")" = "tinyjit probe: caught C++ exception 'tinyjit probe exception' (mode 4) near main" ]
}
check exception_crosses_jit_frames_fp_region caught fp region unwinder
check exception_crosses_jit_frames_fp_exact caught fp exact unwinder
check exception_crosses_jit_frames_nofp_exact caught nofp exact unwinder
not_caught() { ! caught "$@"; }
check exception_without_publishing_terminates not_caught fp exact none
# shown only if some stencil of the nofp set writes x29
if [ -n "$("$TJ_TEST_B/../gen/tj_validate" list "$TJ_A64_B/stencils/nofp/omit.o" 2>/dev/null)" ]; then
	check nofp_region_loses_the_exception not_caught nofp region unwinder
else
	skip "no AArch64 stencil of the nofp set uses x29 in this build"
fi
finish
