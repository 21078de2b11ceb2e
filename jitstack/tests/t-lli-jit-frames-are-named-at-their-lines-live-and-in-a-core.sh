# SPDX-License-Identifier: MIT
# LLVM's own JITs, as lli-19 runs clang-19 -g IR (DWARF 5: .debug_addr,
# DW_FORM_addrx), MCJIT, ORC and lazy ORC (one image per function and one
# for the globals, relocated against each other's symbols): jitstack -p
# and jitstack --core name leaf, every frame of recurse and main, each at
# its line of rec.c, and go on through lli to _start; --images and JSON
# call no image rejected and claim no lines that are not shown.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/lli.sh"
# gdb's gcore writes the core of the running lli: a signal would run
# LLVM's handler, which symbolizes its stack (a fork of llvm-symbolizer)
# before the default action is back, and a core dumped meanwhile holds
# the handler's stack
need_cmd gcore
for kind in $KINDS; do
	start_lli "$kind"
	limit 60 "$JS" -p "$CHILD_PID" --json > live.json 2> live.err || { cat live.err; fail "[$kind] live: exit $?"; }
	check_rec_json live.json > live.frames || { cat live.frames live.err; fail "[$kind] live stack"; }
	limit 60 "$JS" -p "$CHILD_PID" > live.txt 2> live.err || fail "[$kind] text: exit $?"
	grep -q "^#0 .* leaf+0x.* at $T/rec.c:$L_LEAF\$" live.txt || { cat live.txt; fail "[$kind] text: leaf not at rec.c:$L_LEAF"; }
	limit 60 "$JS" -p "$CHILD_PID" --images > images.txt 2> images.err || fail "[$kind] --images: exit $?"
	grep -n 'rejected\|dropped' images.txt images.err live.err && fail "[$kind] an image was rejected or lost a section"
	n_code=$(grep -c '^\[jit 0x' images.txt)
	n_lines=$(grep -c '^  [0-9]* functions, [0-9]* FDEs, source lines' images.txt)
	[ "$n_code" -gt 0 ] && [ "$n_code" = "$n_lines" ] || { cat images.txt; fail "[$kind] --images: $n_lines of $n_code images with lines"; }
	note "[$kind] live: $(tr '\n' ';' < live.frames)"
	limit 120 gcore -o core "$CHILD_PID" > gcore.out 2>&1 || { cat gcore.out; fail "[$kind] gcore exited $?"; }
	CORE=core.$CHILD_PID
	kill_tree "$CHILD_PID"
	limit 60 "$JS" --core "$CORE" --json > core.json 2> core.err || { cat core.err; fail "[$kind] core: exit $?"; }
	check_rec_json core.json > core.frames || { cat core.frames core.err; fail "[$kind] stack from the core"; }
	grep -n 'rejected\|dropped' core.err && fail "[$kind] core: an image was rejected or lost a section"
	note "[$kind] core: the same $(wc -l < core.frames) lines"
	rm -f "$CORE"
done
pass "lli-19 ($KINDS): leaf, recurse x $((DEPTH + 1)) and main named at their lines of rec.c, live and in a core, down to lli's _start"
