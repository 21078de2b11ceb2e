# SPDX-License-Identifier: MIT
# A JIT that replaces its code at the same address every 50 ms
# (tests/churnjit.c): jitstack record re-reads the descriptor when its seq
# moves and names each generation's samples after that generation -- many
# distinct gen:N, none taking all the samples (stale names would pile up
# on one), and almost no sample of the JIT code left unnamed (a name
# remembered from a moment between two registrations would stick); in
# every record mode.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/churnjit" "make jitstack-check"
start_child cj.out "$JTB/churnjit" 10
for mode in $RECORD_MODES; do
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 2 --stats -o prof.txt 2> rec.err
	rc=$?
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	gens=$(grep -o 'gen:[0-9]*' prof.txt | sort -u | wc -l)
	top=$(grep -o 'gen:[0-9]*;spin [0-9]*' prof.txt | awk '{c[$1] += $2; t += $2} END {m = 0; for (g in c) if (c[g] > m) m = c[g]; print int(100 * m / t)}')
	rereads=$(sed -n 's/.* \([0-9]*\) JIT re-reads.*/\1/p' rec.err)
	unnamed=$(grep -o 'main;[^;]*;spin [0-9]*' prof.txt | awk '{split($1, a, ";"); t += $2; if (a[2] !~ /^gen:/) u += $2}
		END {print t ? int(100 * u / t) : 100}')
	[ "$gens" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] only $gens generations named"; }
	[ "${top:-100}" -lt 50 ] || fail "[$mode] one generation holds $top% of the samples: stale names?"
	[ "${rereads:-0}" -ge 5 ] || { cat rec.err; fail "[$mode] the descriptor was re-read $rereads times"; }
	[ "$unnamed" -lt 10 ] || { cat prof.txt; fail "[$mode] $unnamed% of the samples in JIT code are unnamed"; }
	note "[$mode] $gens generations named, the largest ${top}% of samples, $unnamed% unnamed, $rereads re-reads"
done
pass "each generation named after itself over 2 s ($RECORD_MODES)"
