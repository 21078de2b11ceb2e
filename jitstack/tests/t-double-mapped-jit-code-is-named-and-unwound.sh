# SPDX-License-Identifier: MIT
# W^X by double mapping (tinyjit --wx): the code is written through a RW
# view and runs, and is published, at a RX view of the same pages, a memfd
# (dual, as .NET and Firefox do) or anonymous shared memory (dual-anon).
# jitstack names and unwinds every VM frame live, in a kernel core, in a
# core gcore wrote, and in a record profile; the RX view's mapping is never
# taken for an ELF module: every JIT frame is the GDB JIT image's.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/probe-expect.sh"
need_file "$TJ" "make tinyjit"
depth=5
probe_want $depth

# Every JIT frame of the dump named from the GDB JIT image, none from the
# mapping's file.
from_images() { # FILE
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f for t in d["threads"] for f in t["frames"]
       if "memfd" in (f.get("module") or "") or "/dev/zero" in (f.get("module") or "")
       or (f["jit"] and (f.get("source") != "gdb-jit" or not (f.get("module") or "").startswith("[jit ")))]
print("ok" if not bad else "bad: %s" % bad[0])
PY
}

judge() { # WHAT
	jit_chain js.json > chain
	[ "$(head -1 chain)" = "$WANT" ] || fail "[$1] VM frames: expected '$WANT', got '$(head -1 chain)'"
	[ "$(tail -1 chain)" = reaches-main ] || fail "[$1] the stack stops before main"
	r=$(from_images js.json)
	[ "$r" = ok ] || fail "[$1] a frame taken from the mapping's file: $r"
	note "[$1] every VM frame named and unwound"
}

for wx in dual dual-anon; do
	TJ_PROBE_WAIT=60 start_child tj.out "$TJ" --wx=$wx --frames=fp --cfi=exact --publish=gdb \
		"$ROOT/tinyjit/examples/probe.tj" 2 $depth
	case $wx in dual) view=/memfd: ;; *) view=/dev/zero ;; esac
	grep "$view" /proc/$CHILD_PID/maps | grep -q ' r-xs ' || { cat /proc/$CHILD_PID/maps; fail "[$wx] no RX view of $view"; }
	limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "[$wx live] jitstack exited $?"
	judge "$wx live"
	# gcore writes every mapping of the process, AddressSanitizer's
	# terabytes of shadow too (SAN=1 builds: the disk fills first)
	if [ "${SAN:-}" = 1 ]; then
		note "[$wx] SAN=1: no gcore of a sanitized process (it would write ASan's shadow)"
	elif command -v gcore >/dev/null 2>&1; then
		limit 120 gcore -o gcore "$CHILD_PID" > gcore.out 2>&1 || { cat gcore.out; fail "[$wx] gcore exited $?"; }
		limit 60 "$JS" --core "gcore.$CHILD_PID" --exe "$TJ" --json > js.json || fail "[$wx gcore] jitstack exited $?"
		judge "$wx gcore"
		rm -f "gcore.$CHILD_PID"
	else
		note "[$wx] gcore is not installed: its core left out"
	fi
	kill_tree "$CHILD_PID"
	make_core "$TJ" --wx=$wx --frames=fp --cfi=exact --publish=gdb "$ROOT/tinyjit/examples/probe.tj" 3 $depth
	limit 60 "$JS" --core "$CORE" --exe "$TJ" --json > js.json || fail "[$wx core] jitstack exited $?"
	judge "$wx kernel core"
	rm -f "$CORE"

	"$TJ" --wx=$wx --publish=gdb "$ROOT/jitstack/tests/progs/hot.tj" 100000000 > /dev/null 2>&1 &
	pid=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
	sleep 0.3
	for rm in $RECORD_MODES; do
		limit 60 "$JS" record --mode $rm -p $pid -F 250 -d 1.5 -o prof.txt 2> rec.err ||
			{ cat rec.err; fail "[$wx record $rm] exited $?"; }
		top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); leaf = f[k]; sub(/ +$/, "", leaf)
			     if (leaf ~ /^tj:/) c[leaf] += n } END { for (l in c) print c[l], l }' prof.txt |
			sort -rn | head -1 | cut -d' ' -f2)
		[ "$top" = tj:hot ] || { head -5 prof.txt; fail "[$wx record $rm] hottest JIT leaf is '$top', not tj:hot"; }
		grep -q '^tinyjit;.*main;.*;tj:main;tj:hot ' prof.txt ||
			{ head -5 prof.txt; fail "[$wx record $rm] no stack from main through tj:main to tj:hot"; }
		note "[$wx record $rm] tj:hot is the hottest JIT leaf, under tj:main"
	done
	kill_tree $pid
done
pass "double-mapped JIT code (memfd and anonymous shared views) named and unwound live, in kernel and gcore cores, and in record profiles"
