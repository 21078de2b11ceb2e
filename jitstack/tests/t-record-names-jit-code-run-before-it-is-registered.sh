# SPDX-License-Identifier: MIT
# A JIT that runs each generation of its code 5 ms before it registers it
# (tests/churnjit.c late: gen:N published from inside the spin it calls,
# replaced every 50 ms): jitstack record with perf events keeps a sample
# whose stack holds unknown code and unwinds it again after the next read
# of the JIT list, so few samples of the JIT code are left unnamed: under
# 5 %, where 10 % were taken before their image was registered (5 ms of
# each 50); and the generations are told apart.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/churnjit" "make jitstack-check"
case " $RECORD_MODES " in *" perf "*) ;; *) skip "perf mode is not among RECORD_MODES ($RECORD_MODES)" ;; esac
start_child cj.out "$JTB/churnjit" 10 late
limit 60 "$JS" record --mode perf -p "$CHILD_PID" -F 500 -d 3 --stats -o prof.txt 2> rec.err ||
	{ cat rec.err; fail "record exited $?"; }
gens=$(grep -o 'gen:[0-9]*' prof.txt | sort -u | wc -l)
read total unnamed <<EOT
$(grep -o 'main;[^;]*;spin [0-9]*' prof.txt | awk '{split($1, a, ";"); t += $2; if (a[2] !~ /^gen:/) u += $2}
	END {print t + 0, u + 0}')
EOT
again=$(sed -n 's/.*; \([0-9]*\) samples in unknown code unwound again.*/\1/p' rec.err)
[ "$total" -ge 100 ] || { cat prof.txt rec.err; fail "only $total samples under main in JIT code"; }
[ "$gens" -ge 5 ] || { cat prof.txt rec.err; fail "only $gens generations named"; }
[ "${again:-0}" -ge 1 ] || { cat rec.err; fail "no sample was unwound again"; }
[ $((100 * unnamed)) -lt $((5 * total)) ] || { cat prof.txt rec.err; fail "$unnamed of $total samples in JIT code unnamed"; }
pass "$unnamed of $total samples of JIT code run before its registration left unnamed ($again unwound again), $gens generations"
