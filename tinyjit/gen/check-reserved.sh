#!/bin/sh
# SPDX-License-Identifier: MIT
# check-reserved.sh - does the compiler reserve the frame-pointer register
# when asked?  (a configure-style build check)
#
#   check-reserved.sh PRESSURE.c OUTDIR [FLAG...]   prints the flag to use, or nothing
#
# PRESSURE.c holds a stencil that keeps more values live across a call than
# there are callee-saved registers besides the frame pointer.  Each FLAG
# (default: -Xclang -mframe-pointer=reserved; one argument, spaces allowed)
# is tried in turn: if the compiler accepts it and the validator then finds
# no frame-pointer write (while one is found without it), the compiler
# really reserves the register and the stencils are built with that flag.
# clang-19 accepts -mframe-pointer=reserved but still allocates rbp and x29
# (fixed in LLVM 21), and rejects -ffixed-x29 for AArch64.
set -eu
src=$1 out=$2
shift 2
[ $# -gt 0 ] || set -- "-Xclang -mframe-pointer=reserved"
mkdir -p "$out"
base="$TJ_STENCIL_CFLAGS -fomit-frame-pointer"
# shellcheck disable=SC2086
$TJ_CLANG $base -c "$src" -o "$out/plain.o"
if [ -z "$($TJ_VALIDATE list "$out/plain.o" 2>/dev/null)" ]; then
	echo "check-reserved: the pressure stencil does not use the frame pointer; cannot tell, not using $*" >&2
	exit 0
fi
for flag in "$@"; do
	# shellcheck disable=SC2086
	if ! $TJ_CLANG $base $flag -c "$src" -o "$out/reserved.o" 2>/dev/null; then
		echo "check-reserved: $TJ_CLANG rejects $flag" >&2
		continue
	fi
	if [ -n "$($TJ_VALIDATE list "$out/reserved.o" 2>/dev/null)" ]; then
		echo "check-reserved: $TJ_CLANG accepts $flag but still allocates the frame pointer; not using it" >&2
		continue
	fi
	echo "check-reserved: $TJ_CLANG honours $flag" >&2
	echo "$flag"
	exit 0
done
