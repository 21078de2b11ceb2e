# SPDX-License-Identifier: MIT
# tinyjit's probe (a deep C -> JIT -> C -> JIT stack) live, in every JIT
# mode: each VM frame named tj:<function> at its .tj line, in order, and the
# stack going on to main.  --frames=nofp --cfi=region is the combination
# whose published CFI is wrong by construction (the CALL stencil uses rbp,
# which the region rule trusts; tinyjit/README.md): there jitstack must
# still name the innermost frame correctly and end cleanly.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/probe-expect.sh"
need_file "$TJ" "make tinyjit"
depth=7
probe_want $depth
for mode in "fp region" "fp exact" "nofp exact" "nofp region"; do
	set -- $mode
	TJ_PROBE_WAIT=60 start_child tj.out "$TJ" --frames=$1 --cfi=$2 --publish=gdb \
		"$ROOT/tinyjit/examples/probe.tj" 2 $depth
	limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "[$mode] jitstack exited $?"
	jit_chain js.json > chain
	got=$(head -1 chain)
	if [ "$mode" = "nofp region" ]; then
		first=${WANT%% *}
		[ "${got%% *}" = "$first" ] || fail "[$mode] innermost VM frame: expected $first, got '${got%% *}'"
		note "[$mode] innermost frame $first; the rest as far as the (wrong) region CFI leads: $got"
	else
		[ "$got" = "$WANT" ] || fail "[$mode] VM frames: expected '$WANT', got '$got'"
		[ "$(tail -1 chain)" = reaches-main ] || fail "[$mode] the stack stops before main"
		note "[$mode] $got"
	fi
	kill_tree "$CHILD_PID"
done
pass "tinyjit probe, depth $depth: every VM frame named at its line in all modes"
