# SPDX-License-Identifier: MIT
# jitstack on LuaJIT: attached to probe.lua waiting in C called from its
# trace, and on the core of the same program aborting there, the stack reads
# the probe, the trace by the name its source gives it, lua_pcall, ...,
# lua_cpcall, main; `jitstack record` of spin.lua, whose `hot` loop does ten
# times the work of `cool`, finds hot's trace the hottest JIT leaf, at least
# three times cool's, in each record mode (perf events, ptrace).
# Baselines, which must fail: stock luajit (nothing published: the stack
# stops in the trace, and no sample names a trace).
. "$(dirname "$0")/lib.sh"
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
RECORD_MODES=${JS_RECORD_MODES:-perf ptrace}
for how in with without; do
	probe $how wait LJP_WAIT=30
	limit 60 "$JS" -p "$PROBE_PID" --json > js.json || fail "jitstack -p exited $?"
	kill_tree "$PROBE_PID"
	if [ $how = with ]; then
		judge_frames jitstack js.json || fail "jitstack live"
	else
		baseline_fails "jitstack live, stock luajit" jitstack js.json
	fi
	probe $how abort
	limit 60 "$JS" --core "$CORE" --exe "$LUAJIT" --json > js.json || fail "jitstack --core exited $?"
	if [ $how = with ]; then
		judge_frames jitstack js.json || fail "jitstack on the core"
	else
		baseline_fails "jitstack core, stock luajit" jitstack js.json
	fi
done

# record: the JIT leaves of the collapsed profile, "count name", hottest first.
leaves() {
	awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); leaf = f[k]; sub(/ +$/, "", leaf); c[leaf] += n }
	     END { for (l in c) print c[l], l }' "$1" | sort -rn
}
hot_line=$(grep -n -- '--> trace: hot' spin.lua | cut -d: -f1)
cool_line=$(grep -n -- '--> trace: cool' spin.lua | cut -d: -f1)
for how in with without; do
	set -- luajit
	[ $how = with ] && set -- luajit -l jitunwind
	"$@" spin.lua 60 > spin.out 2>&1 &
	pid=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
	sleep 0.5
	for rm in $RECORD_MODES; do
		limit 60 "$JS" record --mode "$rm" -p $pid -F 250 -d 1.5 -o prof.txt 2> rec.err ||
			{ cat rec.err; fail "[$how $rm] record exited $?"; }
		leaves prof.txt > leaves.txt
		hot=$(grep -F " lua:hot@spin.lua:$hot_line (trace " leaves.txt | awk '{ s += $1 } END { print s + 0 }')
		cool=$(grep -F " lua:cool@spin.lua:$cool_line (trace " leaves.txt | awk '{ s += $1 } END { print s + 0 }')
		top=$(grep ' lua:' leaves.txt | head -1 | cut -d' ' -f2-)
		if [ $how = with ]; then
			case $top in "lua:hot@spin.lua:$hot_line (trace "*) ;;
			*) head -5 leaves.txt; fail "[$rm] the hottest trace leaf is '$top', not hot's" ;;
			esac
			[ "$hot" -gt $((3 * cool)) ] || { head -5 leaves.txt; fail "[$rm] hot $hot samples, cool $cool: not 3x apart"; }
			echo "[$rm] with the module: hottest JIT leaf $top, $hot samples; cool's $cool; all: $(awk '{ s += $1 } END { print s }' leaves.txt)"
		else
			[ "$hot" = 0 ] && [ -z "$top" ] || { head -5 leaves.txt; fail "[$rm] stock luajit: a trace was named"; }
			echo "[$rm] stock luajit: no sample names a trace; top leaves: $(head -2 leaves.txt | tr '\n' ' ')"
		fi
	done
	kill_tree $pid
done
pass "jitstack names the trace and reaches main live and in a core, and record finds hot's trace hottest; stock luajit does neither"
