# SPDX-License-Identifier: MIT
# Functions a compiler inlined are frames of their own, as gdb shows them:
# lli-19 (MCJIT, ORC, lazy ORC) runs inl.c as clang-19 -O1 -g IR, where
# mid and leaf are inlined into outer, and the JIT's image describes them
# (DW_TAG_inlined_subroutine).  jitstack -p (JSON and text) and jitstack
# --core show leaf at its loop and mid at its call of leaf, both [inlined]
# at outer's pc, outer at its call of mid, main at its call of outer, each
# at its marked line of inl.c and numbered as gdb numbers them; gdb's bt on
# the same process names the same frames at the same lines and numbers.
# The same program compiled natively (-O2 -g): the same frames from its
# own DWARF.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/lli.sh"
. "$ROOT/jitstack/tests/inl.sh"
need_cmd gcore
need_file "$JTB/inl" "make jitstack-check"
inl_ir

# gdb's frames from leaf down to main: "#N NAME at FILE:LINE"; gdb prints
# an inlined frame without its pc, and the others with "0xPC in".
gdb_frames() { # PID
	limit 120 gdb -nx -batch -p "$1" -ex bt > gdb.out 2>&1
	sed -n 's/^#\([0-9]*\) \+\(0x[0-9a-f]* in \)\?\([a-z_]*\) (.*) at \([^ ]*\):\([0-9]*\)$/#\1 \3 at \4:\5/p' gdb.out |
		sed -n '/ leaf at /,/ main at /p' | sed 's| at .*/| at |'
}
# jitstack's text, the same frames in the same form: "#N NAME at FILE:LINE"
text_frames() { # FILE
	sed -n 's/^#\([0-9]*\) \+0x[0-9a-f]* \([a-z_]*\)\(+0x[0-9a-f]*\)\? (.*) at \([^ ]*\):\([0-9]*\)\( \[inlined\]\)\?$/#\1 \2 at \4:\5/p' "$1" |
		sed -n '/ leaf at /,/ main at /p' | sed 's| at .*/| at |'
}

for kind in $KINDS; do
	start_lli_inl "$kind"
	limit 60 "$JS" -p "$CHILD_PID" --json > live.json 2> live.err || { cat live.err; fail "[$kind] live: exit $?"; }
	check_inl_json live.json "$T/inl.c" 1 > live.frames || { cat live.frames live.err; fail "[$kind] live stack"; }
	limit 60 "$JS" -p "$CHILD_PID" > live.txt 2> live.err || fail "[$kind] text: exit $?"
	# the text: each inline frame on its own numbered line, [inlined], at
	# the pc of the frame it was inlined into
	pcs=$(grep -E " (leaf|mid) \(\[jit 0x[0-9a-f]+\]\) at $T/inl.c:[0-9]+ \[inlined\]\$| outer\+0x" live.txt | awk '{ print $2 }' | sort -u | wc -l)
	text_frames live.txt > live.text
	sed 's/ \[inlined\]$//' live.frames > want.text
	diff want.text live.text > /dev/null && [ "$pcs" = 1 ] || { cat live.txt; fail "[$kind] text: not $(tr '\n' ';' < live.frames) at one pc"; }
	note "[$kind] live: $(tr '\n' ';' < live.frames)"
	if command -v gdb > /dev/null; then
		gdb_frames "$CHILD_PID" > gdb.frames
		diff gdb.frames live.text > gdb.diff || { cat gdb.out gdb.diff; fail "[$kind] gdb's bt differs from jitstack's frames"; }
		note "[$kind] gdb: the same $(wc -l < gdb.frames) frames, numbers and lines"
	else
		note "[$kind] gdb is not installed: its bt not compared"
	fi
	limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { cat gcore.out; fail "[$kind] gcore exited $?"; }
	CORE=core.$CHILD_PID
	kill_tree "$CHILD_PID"
	limit 60 "$JS" --core "$CORE" --json > core.json 2> core.err || { cat core.err; fail "[$kind] core: exit $?"; }
	check_inl_json core.json "$T/inl.c" 1 > core.frames || { cat core.frames core.err; fail "[$kind] stack from the core"; }
	cmp -s live.frames core.frames || fail "[$kind] the core's frames differ from the live ones"
	note "[$kind] core: the same"
	rm -f "$CORE"
done

start_child native.out "$JTB/inl"
limit 60 "$JS" -p "$CHILD_PID" --json > native.json 2> native.err || { cat native.err; fail "native: exit $?"; }
check_inl_json native.json "*/inl.c" 0 > native.frames || { cat native.frames; fail "native stack"; }
limit 60 "$JS" -p "$CHILD_PID" > native.txt || fail "native text: exit $?"
text_frames native.txt > native.text
if command -v gdb > /dev/null; then
	gdb_frames "$CHILD_PID" > gdb.frames
	diff gdb.frames native.text > gdb.diff || { cat gdb.out gdb.diff; fail "native: gdb's bt differs from jitstack's frames"; }
fi
note "native -O2: $(tr '\n' ';' < native.frames)"
pass "lli-19 ($KINDS) and -O2: leaf and mid inlined into outer are frames of their own at their lines, live, in a core and as gdb shows them"
