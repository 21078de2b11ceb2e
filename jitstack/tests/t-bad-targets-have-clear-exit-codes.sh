# SPDX-License-Identifier: MIT
# Targets jitstack cannot read fail with a clear message and the exit code
# jitstack(1) documents: 1 output that cannot be written, 2 usage, 3 no
# such process (or it exited while being read), 4 permission denied, 5 not
# a core file (a FIFO, a core cut after its notes), 6 another
# architecture; and a core cut in its memory segments is read with a
# warning.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"

# expect_exit, saying which message came
expect() { # CODE MESSAGE-REGEX COMMAND...
	expect_exit "$@"
	note "exit $1: $(head -1 err)"
}

# output that cannot be written
start_child child.out "$TB/child" wait
limit 30 "$JS" -p "$CHILD_PID" > /dev/full 2> err
rc=$?
[ $rc -eq 1 ] || { cat err; fail "stacks written to a full disk: exit $rc, expected 1"; }
grep -q "writing the output" err || { cat err; fail "no message for the output that failed"; }
note "exit 1: $(head -1 err)"
kill_tree "$CHILD_PID"

# usage
expect 2 "either -p PID or --core" "$JS"
expect 2 "either -p PID or --core" "$JS" -p 1 --core x
expect 2 "expected a process id" "$JS" -p abc
expect 2 "record needs -p" "$JS" record
expect 2 "expected collapsed, pprof or svg" "$JS" record -p 1 --format html
expect 2 "expected perf or ptrace" "$JS" record -p 1 --mode bpf
expect 2 "--idle needs --mode ptrace" "$JS" record -p 1 --idle --mode perf
expect 2 "belong to 'jitstack record'" "$JS" -p 1 --mode perf
expect 2 "belong to 'jitstack record'" "$JS" -p 1 -F 99

# no such process: one that was reaped, and a zombie
sh -c 'exit 0' & gone=$!
wait $gone
expect 3 "no process $gone" "$JS" -p $gone
expect 3 "no process $gone" "$JS" record -p $gone -d 1
start_zombie
expect 3 "zombie" "$JS" -p "$ZOMBIE"
expect 3 "zombie" "$JS" record -p "$ZOMBIE" -d 1
# a process whose main thread called pthread_exit is no zombie: it says so
if [ -x "$JTB/leaderexit" ]; then
	start_child le.out "$JTB/leaderexit"
	expect 3 "its main thread has exited \(pthread_exit\) while 1 other thread lives on" "$JS" -p "$CHILD_PID"
	kill_tree "$CHILD_PID"
fi
# another user's process: record names whose it is first, not
# perf_event_paranoid (run as nobody, on a process of root's)
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	start_child child.out "$TB/child" wait
	chmod 755 "$T" && cp "$JS" "$T/js-copy"
	expect_exit 4 "^jitstack: process $CHILD_PID belongs to user 0, not to this one \(65534\)" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$T/js-copy" record -p "$CHILD_PID" -d 0.5 -o /dev/null
	note "exit 4: $(head -1 err)"
	kill_tree "$CHILD_PID"
else
	note "not root or no setpriv: another user's process not tried"
fi
# jitstack cannot trace itself, and says that rather than naming users
expect_exit 4 "is jitstack itself" sh -c 'exec "$1" -p $$' sh "$JS"
note "exit 4: $(head -1 err)"

# a process that exits while it is being read
start_child child.out "$TB/child" wait
JITSTACK_FAULT=kill-after-stop expect 3 "exited while" "$JS" -p "$CHILD_PID"

# permission denied: another user's process, and one already traced
start_child child.out "$TB/child" wait
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	cp "$JS" ./jitstack-copy && chmod 755 . ./jitstack-copy
	expect 4 "not allowed" setpriv --reuid=65534 --regid=65534 --clear-groups ./jitstack-copy -p "$CHILD_PID"
else
	note "skipped the other-user case: needs root and setpriv"
fi
if command -v strace >/dev/null 2>&1; then
	start_tracer "$CHILD_PID"
	expect 4 "already traced by process $TRACER" "$JS" -p "$CHILD_PID"
	kill "$TRACER"
fi

# not a core: text, an ELF executable, an empty file, a missing file, a cut core
printf 'hello\n' > text
expect 5 "not a core file" "$JS" --core text
expect 5 "ELF shared object, not a core file|ELF executable, not a core file" "$JS" --core "$TB/child"
: > empty
expect 5 "not a core file" "$JS" --core empty
expect 5 "cannot open" "$JS" --core does-not-exist
make_core "$TB/child" abort
head -c 2000 "$CORE" > cut
expect 5 "no thread state|not a core" "$JS" --core cut
# a FIFO, as the core or as --exe, must not block jitstack in open()
mkfifo fifo
expect 5 "not a regular file" "$JS" --core fifo
expect 2 "--exe .*not a regular file" "$JS" --core "$CORE" --exe fifo
# cut right after its notes (threads' registers, no memory), then halfway
# through its memory: the first is unreadable, the second warned about
python3 - "$CORE" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", b, 0x20)
phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
notes_end, loads = 0, []
for i in range(phnum):
    t, _, off, _, _, filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * phentsize)
    if t == 4:
        notes_end = max(notes_end, off + filesz)
    elif t == 1 and filesz:
        loads.append((off, filesz))
open("cut-after-notes", "wb").write(b[:notes_end])
last = max(off + size for off, size in loads)
open("cut-in-memory", "wb").write(b[:last - 4096])
PY
expect 5 "truncated.*none of its [0-9]* memory segments" "$JS" --core cut-after-notes
limit 60 "$JS" --core cut-in-memory > out 2> err || { cat err; fail "a core cut in its last segment: exit $?"; }
grep -q "warning: the core is truncated" err || { cat err; fail "no warning for a core cut in its memory"; }
note "cut in its memory: $(grep truncated err)"

# another architecture: a RISC-V core and a 32-bit i386 core (headers only;
# AArch64 cores are read: t-aarch64-core-under-qemu.sh)
python3 - <<'PY'
import struct
def core(path, cls, machine):
    ident = b"\x7fELF" + bytes([cls, 1, 1]) + bytes(9)
    if cls == 2:
        hdr = ident + struct.pack("<HHIQQQIHHHHHH", 4, machine, 1, 0, 64, 0, 0, 64, 56, 0, 64, 0, 0)
    else:
        hdr = ident + struct.pack("<HHIIIIIHHHHHH", 4, machine, 1, 0, 52, 0, 0, 52, 32, 0, 40, 0, 0)
    open(path, "wb").write(hdr)
core("core.riscv", 2, 243)
core("core.i386", 1, 3)
PY
expect 6 "RISC-V" "$JS" --core core.riscv
expect 6 "i386 \\(32-bit\\)" "$JS" --core core.i386
pass "output 1, usage 2, no process 3 (gone, zombie, exits mid-read), permission 4, not a core 5 (FIFO, cut after notes), arch 6; a core cut in its memory warned about"
