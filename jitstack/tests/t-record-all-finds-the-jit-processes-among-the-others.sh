# SPDX-License-Identifier: MIT
# jitstack record --all, in a PID namespace of its own (unshare --pid
# --mount-proc: --all is not run over the whole host, whose processes are
# not this test's).  In the namespace run: the shell (its init), tinyjit
# on progs/hot.tj (A) and on progs/boil.tj (B), latethread spinning in
# main_spin (L, a process without a JIT) and an idle sleep (S).  In each
# record mode, --all records every one of them but jitstack itself
# (--stats has a line for each, the sleep's too, and none for jitstack),
# A's stacks have tj:hot hottest, B's tj:boil, L's hold main_spin, each
# under its process's frame, and the pprof profile has A, B and L by
# their pid labels.  Run as another user (nobody) beside root's processes,
# --all takes only that user's own process.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/latethread" "make jitstack-check"
need_file "$JTB/pprofdump" "make jitstack-check"
need_cmd unshare
# (root only)
unshare --pid --fork --mount-proc true 2> unshare.err ||
	skip "no PID namespace can be made here ($(tail -1 unshare.err)): --all would sample the whole host"
PROGS=$ROOT/jitstack/tests/progs

# The namespace's init: start the processes, record, write down the pids.
cat > inner.sh <<'EOF'
"$TJ" --frames=fp --cfi=region --publish=gdb "$PROGS/hot.tj" 1000000000 > /dev/null 2>&1 &
a=$!
"$TJ" --frames=fp --cfi=region --publish=gdb "$PROGS/boil.tj" 1000000000 > /dev/null 2>&1 &
b=$!
"$JTB/latethread" -1 0 0 > lt.out 2>&1 &
l=$!
sleep 60 &
s=$!
echo "$$ $a $b $l $s" > pids
sleep 0.5
for rm in $RECORD_MODES; do
	timeout 60 "$JS" record --all --mode $rm -F 250 -d 1.5 --stats -o all.$rm.txt 2> all.$rm.err
	echo $? > all.$rm.rc
	timeout 60 "$JS" record --all --mode $rm -F 250 -d 1 --format pprof -o all.$rm.pb.gz 2> pp.$rm.err
	echo $? > pp.$rm.rc
done
# as another user: only that user's processes
if [ -n "${NOBODY:-}" ]; then
	$NOBODY nb/tinyjit --frames=fp --cfi=region --publish=gdb ./hot.tj 1000000000 > /dev/null 2>&1 &
	n=$!
	echo $n > nobody.pid
	sleep 0.5
	$NOBODY ./jitstack-copy record --all -F 250 -d 1 --stats -o - > nobody.txt 2> nobody.err
	echo $? > nobody.rc
	kill $n
fi
kill $a $b $l $s
wait
EOF
NOBODY=
if command -v setpriv > /dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
	# nobody runs and reads copies: the build tree may be where nobody
	# cannot read (under /root, made with a strict umask)
	mkdir nb && cp "$JS" ./jitstack-copy && cp "$TJ" nb/tinyjit && cp "$PROGS/hot.tj" . &&
		chmod 755 . nb ./jitstack-copy nb/tinyjit && chmod 644 hot.tj
fi
TJ=$TJ JS=$JS JTB=$JTB PROGS=$PROGS RECORD_MODES=$RECORD_MODES NOBODY=$NOBODY limit 200 unshare --pid --fork --mount-proc sh inner.sh ||
	fail "the namespace's init exited $?"
read -r init a b l s < pids

leaves_of() { # FILE PROCESS-FRAME -> "count leaf", hottest first
	awk -v p="$2" '{ n = $NF; $NF = ""; k = split($0, f, ";"); if (f[1] != p) next
	       leaf = f[k]; sub(/ +$/, "", leaf); c[leaf] += n }
	     END { for (l in c) print c[l], l }' "$1" | sort -rn
}

for rm in $RECORD_MODES; do
	[ "$(cat all.$rm.rc)" = 0 ] || { cat all.$rm.err; fail "[$rm] record --all exited $(cat all.$rm.rc)"; }
	n=$(sed -n 's/^jitstack: --all: recording \([0-9]*\) processes.*/\1/p' all.$rm.err)
	[ "${n:-0}" -ge 5 ] || { cat all.$rm.err; fail "[$rm] --all recorded ${n:-no} processes, not the 5 there are"; }
	for p in "$init sh" "$a tinyjit" "$b tinyjit" "$l latethread" "$s sleep"; do
		set -- $p
		grep -q "stats: process $1 ($2)" all.$rm.err || { cat all.$rm.err; fail "[$rm] --all left out $2 ($1)"; }
	done
	grep -q "stats: process [0-9]* (jitstack)" all.$rm.err && fail "[$rm] --all recorded jitstack itself"
	[ "$(leaves_of all.$rm.txt tinyjit-$a | grep ' tj:' | head -1 | cut -d' ' -f2)" = tj:hot ] ||
		{ leaves_of all.$rm.txt tinyjit-$a; fail "[$rm] A's hottest JIT leaf is not tj:hot"; }
	[ "$(leaves_of all.$rm.txt tinyjit-$b | grep ' tj:' | head -1 | cut -d' ' -f2)" = tj:boil ] ||
		{ leaves_of all.$rm.txt tinyjit-$b; fail "[$rm] B's hottest JIT leaf is not tj:boil"; }
	grep -q "^latethread-$l;latethread;.*;main_spin" all.$rm.txt || { head -5 all.$rm.txt; fail "[$rm] L's main_spin is not in the profile"; }
	[ "$(cat pp.$rm.rc)" = 0 ] || { cat pp.$rm.err; fail "[$rm] record --all --format pprof exited $(cat pp.$rm.rc)"; }
	"$JTB/pprofdump" all.$rm.pb.gz > dump || { cat dump; fail "[$rm] the pprof file does not decode"; }
	for p in "$a tinyjit" "$b tinyjit" "$l latethread"; do
		set -- $p
		grep -qE "^process $1 $2 [1-9]" dump || { cat dump; fail "[$rm] pprof: no samples labelled pid $1, comm $2"; }
	done
	note "[$rm] --all recorded $n processes; A $(leaves_of all.$rm.txt tinyjit-$a | head -1), B $(leaves_of all.$rm.txt tinyjit-$b | head -1)"
done
if [ -n "$NOBODY" ]; then
	n=$(cat nobody.pid)
	[ "$(cat nobody.rc)" = 0 ] || { cat nobody.err; fail "[nobody] record --all exited $(cat nobody.rc)"; }
	grep -q "^jitstack: --all: recording 1 process$" nobody.err || { cat nobody.err; fail "[nobody] --all did not take exactly nobody's one process"; }
	grep -q "stats: process $n (tinyjit)" nobody.err || { cat nobody.err; fail "[nobody] --all left out nobody's tinyjit"; }
	grep -q "^tinyjit-$n;tinyjit;.*;tj:hot [0-9]*$" nobody.txt || { cat nobody.err; head -3 nobody.txt; fail "[nobody] tj:hot is not in the profile"; }
	note "[nobody] --all took only nobody's own process"
else
	note "skipped the other-user case: needs root and setpriv"
fi
pass "record --all records every process of the namespace but itself, each under its own frame ($RECORD_MODES); a user's --all, that user's own"
