# SPDX-License-Identifier: MIT
# jitstack record -d 30 on tests/latethread.c, which spins in main_spin
# and exits 700 ms after it is ready: in each record mode, record ends
# soon after the exit (well before 30 s) with exit status 0, says the
# process exited, and the profile (collapsed, and pprof) holds main_spin.
# Under emulation (the AArch64 system VM) every time is stretched by
# MX_TIME_SCALE: there, jitstack's start alone can take longer than 700 ms.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/latethread" "make jitstack-check"
need_file "$JTB/pprofdump" "make jitstack-check"
S=${MX_TIME_SCALE:-1}
for mode in $RECORD_MODES; do
	for fmt in collapsed pprof; do
		start_child lt.out "$JTB/latethread" -1 0 $((700 * S))
		t0=$(date +%s)
		limit $((60 * S)) "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d $((30 * S)) --format $fmt \
			-o prof.$fmt 2> rec.err
		rc=$?
		took=$(($(date +%s) - t0))
		[ $rc -eq 0 ] || { cat rec.err; fail "[$mode $fmt] record exited $rc"; }
		[ $took -lt $((10 * S)) ] || fail "[$mode $fmt] record took $took s after the target exited"
		grep -q "(the process exited)" rec.err || { cat rec.err; fail "[$mode $fmt] no word of the exit"; }
		if [ $fmt = pprof ]; then
			"$JTB/pprofdump" prof.pprof > dump || { cat dump; fail "[$mode] the pprof file does not decode"; }
			grep -q "main_spin" dump || { cat dump; fail "[$mode] pprof: no main_spin"; }
		else
			grep -q ";main_spin " prof.collapsed || { cat prof.collapsed; fail "[$mode] no main_spin"; }
		fi
		kill_tree "$CHILD_PID"
	done
	note "[$mode] record ended after the target's exit, profiles written"
done
pass "record writes the profile and exits 0 when the target exits mid-record ($RECORD_MODES)"
