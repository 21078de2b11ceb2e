#!/bin/sh
# SPDX-License-Identifier: MIT
# build-stencils.sh - compile a stencil source into a generated header
# (build time).  Called by tinyjit.mk; the validator test calls it too, so
# the test exercises exactly the build's path.
#
#   build-stencils.sh fp|nofp SRC OUTDIR HEADER SHIM.o [--check-only]
#
# fp:   compile SRC with -fomit-frame-pointer (plus the reserved flag when the
#       compiler honours it); tj_validate lists the stencils that still write
#       rbp; only if there are any, SRC is compiled again with a frame pointer
#       and those stencils are taken from that build after tj_validate checks
#       they write rbp only in the standard prologue/epilogue.  Any other rbp
#       write fails the build.
# nofp: compile SRC with -fomit-frame-pointer and -DTJ_STENCILS_NOFP;
#       stencils may use rbp freely, and the ones shaped to keep it free take
#       their plain shape (the comparison build for cost and failure
#       measurements).
#
# Environment: TJ_CLANG, TJ_OBJDUMP, TJ_VALIDATE, TJ_GEN, TJ_STENCIL_CFLAGS,
# TJ_RESERVED_FLAG (may be empty).
set -eu
variant=$1 src=$2 out=$3 header=$4 shim=$5
check_only=${6:-}
mkdir -p "$out"
cflags="$TJ_STENCIL_CFLAGS"

case $variant in
fp)
	# shellcheck disable=SC2086
	$TJ_CLANG $cflags -fomit-frame-pointer ${TJ_RESERVED_FLAG:-} -c "$src" -o "$out/omit.o"
	$TJ_VALIDATE list "$out/omit.o" >"$out/needs-frame.txt"
	# a framed rebuild left by an earlier build must not pass for this one's
	rm -f "$out/frame.o" "$out/frame.dis"
	frame_args=
	if [ -s "$out/needs-frame.txt" ]; then
		echo "build-stencils: rebuilding with a frame pointer: $(tr '\n' ' ' <"$out/needs-frame.txt")" >&2
		# shellcheck disable=SC2086
		$TJ_CLANG $cflags -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -c "$src" -o "$out/frame.o"
		$TJ_VALIDATE frames "$out/frame.o" "$out/needs-frame.txt"
		$TJ_OBJDUMP -dr "$out/frame.o" >"$out/frame.dis"
		frame_args="--frame $out/frame.o $out/frame.dis $out/needs-frame.txt"
	fi
	check=--check-fp
	;;
nofp)
	# shellcheck disable=SC2086
	$TJ_CLANG $cflags -fomit-frame-pointer -DTJ_STENCILS_NOFP -c "$src" -o "$out/omit.o"
	frame_args= check=
	;;
*)
	echo "build-stencils: unknown variant '$variant'" >&2
	exit 2
	;;
esac
[ "$check_only" = --check-only ] && exit 0
$TJ_OBJDUMP -dr "$out/omit.o" >"$out/omit.dis"
# shellcheck disable=SC2086
$TJ_GEN --set "$variant" --out "$header" --shim "$shim" --omit "$out/omit.o" "$out/omit.dis" \
	$frame_args $check
