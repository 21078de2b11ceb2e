# SPDX-License-Identifier: MIT
# tinyjit's probe aborting at the bottom of its stack, then jitstack --core
# on the core, in every JIT mode (see the live driver for nofp/region).
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/probe-expect.sh"
need_file "$TJ" "make tinyjit"
depth=6
probe_want $depth
for mode in "fp region" "fp exact" "nofp exact" "nofp region"; do
	set -- $mode
	make_core "$TJ" --frames=$1 --cfi=$2 --publish=gdb "$ROOT/tinyjit/examples/probe.tj" 3 $depth
	limit 60 "$JS" --core "$CORE" --exe "$TJ" --json > js.json || fail "[$mode] jitstack exited $?"
	jit_chain js.json > chain
	got=$(head -1 chain)
	if [ "$mode" = "nofp region" ]; then
		[ "${got%% *}" = "${WANT%% *}" ] || fail "[$mode] innermost VM frame: got '${got%% *}'"
	else
		[ "$got" = "$WANT" ] || fail "[$mode] VM frames: expected '$WANT', got '$got'"
		[ "$(tail -1 chain)" = reaches-main ] || fail "[$mode] the stack stops before main"
	fi
	note "[$mode] $got"
done
pass "tinyjit probe cores, depth $depth: every VM frame named at its line"
