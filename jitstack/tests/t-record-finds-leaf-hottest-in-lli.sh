# SPDX-License-Identifier: MIT
# jitstack record on lli-19 running rec.c (MCJIT, ORC and lazy ORC): leaf,
# which spins, is the hottest frame, and its stacks run main;recurse...;leaf
# through the JIT frames.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/lli.sh"
for kind in $KINDS; do
	start_lli "$kind"
	limit 60 "$JS" record -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> rec.err || { cat rec.err; fail "[$kind] record exited $?"; }
	top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
		END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
	[ "${top#* }" = leaf ] || { cat prof.txt; fail "[$kind] the hottest frame is not leaf: $top"; }
	# the JIT part of the hottest stack: main, recurse DEPTH + 1 times, leaf
	want="main$(for _ in $(seq 0 "$DEPTH"); do printf ';recurse'; done);leaf"
	grep -q ";$want [0-9]*\$" prof.txt || { cat prof.txt; fail "[$kind] no stack ...;$want"; }
	note "[$kind] hottest: $top samples of $(awk '{ s += $NF } END { print s }' prof.txt)"
	kill_tree "$CHILD_PID"
done
pass "record: leaf is the hottest frame of lli-19 ($KINDS), under main and recurse x $((DEPTH + 1))"
