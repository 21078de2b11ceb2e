#!/bin/sh
# SPDX-License-Identifier: MIT
# a64-insns.sh - the frame-pointer discipline's cost on AArch64: guest
# instructions executed by the AArch64 tinyjit under qemu-user, FP-kept
# against no-FP stencils.  Prints a Markdown table (docs/BENCHMARKS.md).
#
#   bench/tinyjit/a64-insns.sh [BUILD]     (BUILD defaults to build)
#
# Debian's qemu-user ships no TCG plugins (no libinsn.so, no qemu-plugin.h
# to build one), so the count comes from qemu's own logs instead:
# -d in_asm lists each translated block's instructions, -d exec,nochain
# logs every execution of a block (nochain: also those a chained jump would
# hide).  Executed instructions = sum over executions of the block's length.
# Deterministic: the same binary and input give the same count every run.
set -eu
B=${1:-build}
TJ=$B/aarch64/tinyjit/tinyjit
EX=tinyjit/examples
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# guest instructions of one run: count ARGS...
count() {
	rm -f "$TMP/log"
	mkfifo "$TMP/log"
	python3 -c '
import re, sys
size, total, cur, n = {}, 0, None, 0
for line in open(sys.argv[1]):
    if line.startswith("IN:"):
        cur, n = None, 0
    elif line.startswith("0x") and ":  " in line:
        if cur is None:
            cur = int(line.split(":")[0], 16)
        n += 1
        size[cur] = n
    elif line.startswith("Trace "):
        cur = None
        pc = int(re.search(r"\[[0-9a-f]+/([0-9a-f]+)/", line).group(1), 16)
        total += size[pc]
print(total)' "$TMP/log" &
	reader=$!
	qemu-aarch64 -d in_asm,exec,nochain -D "$TMP/log" "$TJ" --publish=none "$@" >/dev/null
	wait $reader
}

# the CALL stencil, the one that differs (the others are the same code)
size() { sed -n "s/.*\[TJ_OP_CALL\] = { tj_$1_CALL_code, \([0-9]*\),.*/\1/p" "$B/aarch64/tinyjit/stencils_$1.h"; }
echo "CALL stencil: fp $(( $(size fp) / 4 )) instructions, nofp $(( $(size nofp) / 4 ))"
echo
printf '| program | fp (instructions) | nofp | fp - nofp |\n|---|---|---|---|\n'
while read -r prog args; do
	fp=$(count --frames=fp "$EX/$prog.tj" $args)
	nofp=$(count --frames=nofp "$EX/$prog.tj" $args)
	d=$((fp - nofp))
	printf '| %s %s | %s | %s | %+d (%s%%) |\n' "$prog" "$args" "$fp" "$nofp" "$d" \
		"$(python3 -c "print('%+.3f' % (100.0 * $d / $nofp))")"
done <<LIST
fib 18
ackermann 2 3
mutual 1001
loops 150
collatz 2000
LIST
