#!/bin/sh
# build.sh [--frame-pointers] BUILD OUT PATCH... - a JIT-enabled CPython
# 3.13 with the given patches, built once and cached outside the tree;
# OUT/dir then names its build directory (the interpreter is OUT/dir's
# `python`, run in place).
#
# --frame-pointers configures --with-jit-frame-pointers (patch 0004: the
# stencils keep rbp, the trampoline sets it) and compiles the interpreter
# with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer, as
# distributions that keep frame pointers do: a frame-pointer chain from
# every function, through executors, to main.
#
# The source is Debian trixie's python3.13 package (fetch-source.sh), its
# upstream tarball only: Debian's own patches are not applied (see
# README.md).  The build is cached in $CACHE/<key>, the key a hash of the
# .dsc (which holds the tarball's checksums), the configure arguments, the
# patches and, with the jitunwind patch, jit_jitunwind.c and
# include/jitunwind.h (the interpreter links libjitunwind.so dynamically:
# it is compiled against the header, and finds the library of the tree it
# runs with through LD_LIBRARY_PATH).  A build that fails leaves no cache
# entry.
#
#   JU_CPYTHON_CACHE  the cache (default ~/.cache/jitunwind/cpython)
#
# SPDX-License-Identifier: MIT
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
USAGE="usage: build.sh [--frame-pointers] BUILD OUT PATCH..."
fp=
if [ "${1:-}" = --frame-pointers ]; then
	fp=1
	shift
fi
BUILD=$(cd "${1:?$USAGE}" && pwd)
OUT=${2:?$USAGE}
shift 2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
CY=$ROOT/integrations/cpython
CACHE=${JU_CPYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jitunwind/cpython}
JOBS=${JU_CPYTHON_JOBS:-2}

say() { printf 'cpython: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

sh "$CY/fetch-source.sh" "$CACHE/src"
dsc=$(ls "$CACHE"/src/python3.13_*.dsc | sort | tail -1)
ju=
for p in "$@"; do case $p in *jitunwind*) ju=1 ;; esac; done
CONFIGURE="--enable-experimental-jit=yes PYTHON_FOR_REGEN=/usr/bin/python3"
CFLAGS_FP=
if [ -n "$fp" ]; then
	CONFIGURE="$CONFIGURE --with-jit-frame-pointers"
	CFLAGS_FP="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
fi
key=$({
	sha256sum "$dsc" | cut -d' ' -f1
	echo "$CONFIGURE${CFLAGS_FP:+ CFLAGS=$CFLAGS_FP}"
	[ -z "$ju" ] || sha256sum "$CY/jit_jitunwind.c" "$ROOT/include/jitunwind.h" | cut -d' ' -f1
	# a patch's explanation above its first diff changes no build
	for p in "$@"; do awk '/^(diff |--- )/ { d = 1 } d' "$p" | sha256sum | cut -d' ' -f1; done
} | sha256sum | cut -c1-16)
dir=$CACHE/$key
if [ -x "$dir/src/python" ] && [ -f "$dir/built" ]; then
	echo "$dir/src" > "$OUT/dir"
	exit 0
fi

say "building CPython in $dir (patches:$(for p in "$@"; do printf ' %s' "${p##*/}"; done))"
rm -rf "$dir"
mkdir -p "$dir"
t0=$(date +%s)
dpkg-source -x --skip-patches "$dsc" "$dir/src" > "$dir/extract.log" 2>&1 ||
	{ cat "$dir/extract.log" >&2; die "dpkg-source -x failed"; }
rm -rf "$dir/src/debian"
for p in "$@"; do
	patch -d "$dir/src" -p1 --no-backup-if-mismatch < "$p" > "$dir/patch.log" 2>&1 ||
		{ cat "$dir/patch.log" >&2; die "patch ${p##*/} does not apply"; }
done
if [ -n "$ju" ]; then
	cp "$CY/jit_jitunwind.c" "$dir/src/Python/jit_jitunwind.c"
	[ -e "$BUILD/libjitunwind.so" ] || die "$BUILD/libjitunwind.so is missing (make lib)"
fi
cd "$dir/src"
say "configure $CONFIGURE${CFLAGS_FP:+ CFLAGS=\"$CFLAGS_FP\"} (log: $dir/configure.log)"
# shellcheck disable=SC2086
./configure $CONFIGURE ${CFLAGS_FP:+"CFLAGS=$CFLAGS_FP"} > "$dir/configure.log" 2>&1 ||
	{ tail -30 "$dir/configure.log" >&2; die "configure failed"; }
t1=$(date +%s)
say "make -j$JOBS (log: $dir/make.log)"
if [ -n "$ju" ]; then
	# the build runs its python, which loads libjitunwind.so
	LD_LIBRARY_PATH=$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	make -j"$JOBS" "JITUNWIND_CFLAGS=-I$ROOT/include" "JITUNWIND_LIBS=-L$BUILD -ljitunwind" > "$dir/make.log" 2>&1
else
	make -j"$JOBS" > "$dir/make.log" 2>&1
fi || { tail -40 "$dir/make.log" >&2; die "make failed"; }
t2=$(date +%s)
say "built in $((t2 - t0)) s (configure $((t1 - t0)) s, make $((t2 - t1)) s)"
echo "configure $((t1 - t0)) make $((t2 - t1))" > "$dir/built"
echo "$dir/src" > "$OUT/dir"
