# SPDX-License-Identifier: MIT
# record --all reads a process's perf map a piece a round when it is huge
# (a sparse file of 16 GB costs its owner no disk), so that the other
# processes are sampled meanwhile: one target never stalls the others.
# In a PID namespace of its own (unshare --pid --mount-proc, and a private
# tmpfs on /tmp for the map: the namespace's pids are those of other
# namespaces too) run threads (tests/threads.c, T: parked threads) and
# latethread spinning in main_spin (L).  In each record mode,
# `record --all -F 200 -d 1` is run first while T has no map (the
# baseline), then with T's map of 16 GB: the run must end within 10 s, and
# L must have at least a quarter of the baseline's samples in main_spin
# (a baseline of fewer than 4, a machine too loaded to judge, is a skip).
# Before the round budget a read of the map took up to --max-read-time (5 s) a
# round: here the ptrace run took 18.8 s with L sampled once, the perf
# events run did not end within 120 s.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/threads" "make jitstack-check"
need_file "$JTB/latethread" "make jitstack-check"
need_cmd unshare
unshare --pid --fork --mount-proc true 2> unshare.err ||
	skip "no PID namespace can be made here ($(tail -1 unshare.err)): --all would sample the whole host"

cat > inner.sh <<'EOF'
# (the working directory, in /tmp perhaps, stays reachable under the mount)
mount -t tmpfs -o size=1m tmpfs /tmp || exit 3
"$JTB/threads" > th.out 2>&1 &
t=$!
"$JTB/latethread" -1 0 0 > lt.out 2>&1 &
l=$!
echo "$t $l" > pids
sleep 0.5
run() { # NAME MODE: record --all, its exit code and wall time in NAME.MODE.rc
	s0=$(date +%s%N)
	timeout 60 "$JS" record --all --mode $2 -F 200 -d 1 -o $1.$2.txt 2> $1.$2.err
	echo "$? $((($(date +%s%N) - s0) / 1000000))" > $1.$2.rc
}
for rm in $RECORD_MODES; do
	rm -f /tmp/perf-$t.map
	run base $rm
	truncate -s 16G /tmp/perf-$t.map || exit 4
	run huge $rm
done
kill $t $l
wait
EOF
JS=$JS JTB=$JTB RECORD_MODES=$RECORD_MODES limit 400 unshare --pid --fork --mount-proc sh inner.sh ||
	fail "the namespace's init exited $? (3: no tmpfs on /tmp; 4: no sparse file)"
read -r t l < pids

# samples of L in main_spin, in a collapsed profile
spins() { awk -v p="latethread-$l" 'index($0, p ";") == 1 && /main_spin/ { n += $NF } END { print n + 0 }' "$1"; }

for rm in $RECORD_MODES; do
	read -r rc0 ms0 < base.$rm.rc
	read -r rc1 ms1 < huge.$rm.rc
	[ "$rc0" = 0 ] || { cat base.$rm.err; fail "[$rm] the baseline record --all exited $rc0"; }
	[ "$rc1" = 0 ] || { cat huge.$rm.err; fail "[$rm] record --all beside a 16 GB perf map exited $rc1 after $ms1 ms"; }
	n0=$(spins base.$rm.txt)
	n1=$(spins huge.$rm.txt)
	[ "$n0" -ge 4 ] || skip "[$rm] the baseline has only $n0 samples of main_spin in 1 s: the machine is too loaded to judge"
	[ "$ms1" -le 10000 ] || fail "[$rm] record --all -d 1 beside a 16 GB perf map took $ms1 ms"
	[ $((n1 * 4)) -ge "$n0" ] ||
		fail "[$rm] main_spin has $n1 samples beside a 16 GB perf map, $n0 without it: the map held the sampling up"
	note "[$rm] main_spin: $n0 samples in $ms0 ms without the map, $n1 in $ms1 ms beside it"
done
pass "record --all samples the other processes while one's 16 GB perf map is read ($RECORD_MODES)"
