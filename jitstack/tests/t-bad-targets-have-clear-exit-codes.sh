# Targets jitstack cannot read fail with a clear message and the exit code
# jitstack(1) documents: 2 usage, 3 no such process (or it exited while
# being read), 4 permission denied, 5 not a core file, 6 another
# architecture.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"

expect() { # CODE MESSAGE-REGEX COMMAND...
	code=$1 re=$2; shift 2
	limit 30 "$@" > out 2> err
	rc=$?
	[ $rc -eq "$code" ] || { cat out err; fail "'$*': exit $rc, expected $code"; }
	grep -qE "$re" err || { cat err; fail "'$*': no message matching '$re'"; }
	note "exit $code: $(head -1 err)"
}

# usage
expect 2 "either -p PID or --core" "$JS"
expect 2 "either -p PID or --core" "$JS" -p 1 --core x
expect 2 "expected a process id" "$JS" -p abc
expect 2 "record needs -p" "$JS" record
expect 2 "expected collapsed or pprof" "$JS" record -p 1 --format svg
expect 2 "belong to 'jitstack record'" "$JS" -p 1 -F 99

# no such process: one that was reaped, and a zombie
sh -c 'exit 0' & gone=$!
wait $gone
expect 3 "no process $gone" "$JS" -p $gone
python3 -c '
import os, sys, time
pid = os.fork()
if pid == 0: os._exit(0)
print(pid, flush=True); time.sleep(30)' > zombie.pid &
CLEANUP_PIDS="${CLEANUP_PIDS:-} $!"
for _ in $(seq 50); do [ -s zombie.pid ] && break; sleep 0.1; done
sleep 0.2
expect 3 "zombie" "$JS" -p "$(cat zombie.pid)"

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
	strace -p "$CHILD_PID" -o /dev/null & tracer=$!
	CLEANUP_PIDS="$CLEANUP_PIDS $tracer"
	for _ in $(seq 50); do grep -q "TracerPid:[[:space:]]*[1-9]" /proc/"$CHILD_PID"/status && break; sleep 0.1; done
	expect 4 "already traced by process $tracer" "$JS" -p "$CHILD_PID"
	kill "$tracer"
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
pass "usage 2, no process 3 (gone, zombie, exits mid-read), permission 4, not a core 5, arch 6"
