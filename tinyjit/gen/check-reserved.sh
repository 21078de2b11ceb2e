#!/bin/sh
# check-reserved.sh - does the compiler honour -Xclang -mframe-pointer=reserved?
# (a configure-style build check)
#
#   check-reserved.sh PRESSURE.c OUTDIR   prints the flag to use, or nothing
#
# PRESSURE.c holds a stencil that keeps more values live across a call than
# there are callee-saved registers besides rbp.  If the flag is accepted and
# the validator then finds no rbp write (while one is found without it), the
# compiler really reserves rbp and the stencils are built with the flag.
# clang-19 accepts the flag but still allocates rbp (fixed in LLVM 21).
set -eu
src=$1 out=$2
mkdir -p "$out"
flag="-Xclang -mframe-pointer=reserved"
base="$TJ_STENCIL_CFLAGS -fomit-frame-pointer"
# shellcheck disable=SC2086
$TJ_CLANG $base -c "$src" -o "$out/plain.o"
if [ -z "$($TJ_VALIDATE list "$out/plain.o" 2>/dev/null)" ]; then
	echo "check-reserved: the pressure stencil does not use rbp; cannot tell, not using the flag" >&2
	exit 0
fi
# shellcheck disable=SC2086
if ! $TJ_CLANG $base $flag -c "$src" -o "$out/reserved.o" 2>/dev/null; then
	echo "check-reserved: $TJ_CLANG rejects $flag" >&2
	exit 0
fi
if [ -n "$($TJ_VALIDATE list "$out/reserved.o" 2>/dev/null)" ]; then
	echo "check-reserved: $TJ_CLANG accepts $flag but still allocates rbp; not using it" >&2
	exit 0
fi
echo "check-reserved: $TJ_CLANG honours $flag" >&2
echo "$flag"
