# SPDX-License-Identifier: MIT
# debuggers.sh - sourced by the gdb and lldb drivers (t-gdb-*.sh,
# t-lldb-*.sh) after lib.sh: run a debugger in batch mode and turn its
# backtrace into the frame list check_frames.py reads ("0xADDR NAME", "NAME"
# or "0xADDR", innermost first).

GDB=${GDB:-gdb}
LLDB=${LLDB:-lldb-16}

need_gdb() { need_cmd "$GDB"; }
need_lldb() { need_cmd "$LLDB"; }

# Cores land in the working directory as "core" (or core.PID); anything else
# (a pipe to systemd-coredump or apport) is not ours to collect.
need_core_in_cwd() {
	case $(cat /proc/sys/kernel/core_pattern) in
	core|core.*|core-*) ;;
	*) skip "core_pattern is '$(cat /proc/sys/kernel/core_pattern)', not a file in the cwd" ;;
	esac
}

# Run the child so it aborts and leaves a core; sets CORE.
make_core() { # CHILD ARGS...
	rm -f core core.*
	(ulimit -c unlimited && exec "$@") > child.out 2>&1
	CORE=$(ls core core.* 2>/dev/null | head -1)
	[ -n "$CORE" ] || { cat child.out; skip "no core file was written (ulimit or core_pattern)"; }
}

# gdb's "#N  0xADDR in NAME (ARGS) at FILE:LINE" and "#N  NAME (ARGS) ..."
# (an inlined frame has no address of its own).
gdb_frames() {
	awk '/^#[0-9]+ / {
		sub(/^#[0-9]+ +/, "")
		addr = ""
		if ($0 ~ /^0x[0-9a-f]+ in /) { addr = $1; sub(/^0x[0-9a-f]+ in /, "") }
		name = $1
		print (addr != "" ? addr " " : "") name
	}'
}

# lldb's "frame #N: 0xADDR MODULE`NAME + OFF at FILE:LINE"; a frame inlined
# into NAME reads "MODULE`NAME [inlined] INNER", and an address lldb cannot
# attribute has nothing after it.
lldb_frames() {
	awk '/frame #[0-9]+: 0x/ {
		sub(/.*frame #[0-9]+: /, "")
		addr = $1
		rest = substr($0, length(addr) + 2)
		name = ""
		i = index(rest, "`")
		if (i) {
			name = substr(rest, i + 1)
			j = index(name, " [inlined] ")
			if (j) name = substr(name, j + 11)
			sub(/[ (].*/, "", name)
		}
		print addr (name != "" ? " " name : "")
	}'
}

# gdb bt of a live process (attach needs ptrace rights: root, or
# ptrace_scope 0).
gdb_bt_live() { # PID
	limit 120 "$GDB" -nx -batch -p "$1" -ex "set pagination off" -ex bt > gdb.out 2>&1
	gdb_frames < gdb.out > frames
}

gdb_bt_core() { # PROGRAM CORE
	limit 120 "$GDB" -nx -batch -ex "set pagination off" -ex bt "$1" "$2" > gdb.out 2>&1
	gdb_frames < gdb.out > frames
}

lldb_bt_live() { # PID
	limit 120 "$LLDB" --no-lldbinit -b -p "$1" -o bt > lldb.out 2>&1
	lldb_frames < lldb.out > frames
}

lldb_bt_core() { # PROGRAM CORE
	limit 120 "$LLDB" --no-lldbinit -b -c "$2" "$1" -o bt > lldb.out 2>&1
	lldb_frames < lldb.out > frames
}

# The "FILE:LINE" a debugger must show for the jit:fp frame, derived from the
# line table the child published (EXPECT.lines, written beside its expect
# file) and the frame's address in the backtrace (a return address: the call
# is at address-1).  Usage: jit_fp_line FRAMES EXPECT
jit_fp_line() {
	python3 - "$1" "$2" <<'EOF'
import sys
frames_path, expect_path = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(expect_path + ".lines") if l.startswith("jit:fp ")]
lo = next(int(l.split()[1], 16) for l in open(expect_path) if l.split()[0] == "jit:fp")
frames = [l.split() for l in open(frames_path) if l.strip()]
inner = next(i for i, f in enumerate(frames) if f[-1] == "c_inner" or (len(f) > 1 and f[1] == "c_inner"))
addr = next(int(f[0], 16) for f in frames[inner:] if len(f) > 1 and f[1] == "jit:fp")
off = addr - 1 - lo
row = max((r for r in rows if int(r[2]) <= off), key=lambda r: int(r[2]))
print("%s:%s" % (row[1], row[3]))
EOF
}

# The stale-name checks on tests/reuse_child.c (t-*-dead-jit-code-*.sh):
# every thread's backtrace and a symbol lookup of every address its expect
# file (reuse.expect) names, from a live process or a core, written to
# gdb.out or lldb.out and judged by check_reuse.py.
# Usage: reuse_gdb -p PID | reuse_gdb PROGRAM CORE (and reuse_lldb alike)
reuse_gdb() {
	python3 "$ROOT/tests/check_reuse.py" commands gdb reuse.expect > reuse.gdb ||
		fail "no gdb commands from reuse.expect"
	limit 120 "$GDB" -nx -batch "$@" -x reuse.gdb > gdb.out 2>&1
}

reuse_lldb() {
	python3 "$ROOT/tests/check_reuse.py" commands lldb reuse.expect > reuse.lldb ||
		fail "no lldb commands from reuse.expect"
	if [ "$1" = -p ]; then
		limit 120 "$LLDB" --no-lldbinit -b -p "$2" -s reuse.lldb > lldb.out 2>&1
	else
		limit 120 "$LLDB" --no-lldbinit -b -c "$2" "$1" -s reuse.lldb > lldb.out 2>&1
	fi
}

# Judge TOOL.out; on failure show why, and the output itself when it could
# not be read.  Usage: reuse_judge gdb|lldb
reuse_judge() {
	python3 "$ROOT/tests/check_reuse.py" judge "$1" reuse.expect "$1.out" > judge.out
	rc=$?
	cat judge.out
	[ $rc -eq 2 ] && cat "$1.out"
	return $rc
}

# The guest child's frames (tests/guest_child.c): the names a debugger
# showed (the frames file, from gdb_frames or lldb_frames) from c_callback
# down to main must be guest.expect's, one for one, and each guest frame
# must be shown at the FILE:LINE it gives there.  Usage: guest_judge OUT
guest_judge() {
	awk '{ print $NF }' frames | sed -n '/^c_callback$/,/^main$/p' > got
	awk '{ print $1 }' guest.expect > want
	cmp -s got want || { echo "frames shown:"; cat got; echo "frames expected:"; cat want; return 1; }
	while read -r name at; do
		[ -n "$at" ] || continue
		grep -Eq "[\` ]$name (\(\) )?at $at(:[0-9]+)?\$" "$1" || { echo "$name is not shown at $at"; return 1; }
		echo "$name at $at"
	done < guest.expect
}
