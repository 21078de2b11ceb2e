# SPDX-License-Identifier: MIT
# jitstack record on tests/hostilestack.c, which spins with its stack and
# frame pointers in a buffer of lies (a frame-pointer cycle, return
# addresses into its own code, into data and at random): in each record
# mode record ends on time with exit 0, names the leaf hostile_spin in most
# samples, and no stack is longer than --max-frames (the default 256).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/hostilestack" "make jitstack-check"
start_child hs.out "$JTB/hostilestack"
for mode in $RECORD_MODES; do
	t0=$(date +%s)
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 500 -d 1 -o prof.txt 2> rec.err
	rc=$?
	took=$(($(date +%s) - t0))
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	[ $took -lt 15 ] || fail "[$mode] record -d 1 took $took s"
	read total leaf longest <<EOT
$(awk -F';' '{ n = split($NF, a, " "); c = a[n]; t += c; if ($NF ~ /^hostile_spin /) l += c; if (NF - 1 > m) m = NF - 1 }
	END { print t + 0, l + 0, m + 0 }' prof.txt)
EOT
	[ "$total" -ge 20 ] || { cat prof.txt rec.err; fail "[$mode] only $total samples"; }
	[ $((10 * leaf)) -ge $((9 * total)) ] || { cat prof.txt; fail "[$mode] hostile_spin is the leaf of $leaf of $total samples"; }
	[ "$longest" -le 256 ] || fail "[$mode] a stack of $longest frames"
	note "[$mode] $total samples, $leaf with hostile_spin at the leaf, the longest stack $longest frames"
done
pass "hostile stacks: record ends on time, stacks bounded by --max-frames ($RECORD_MODES)"
