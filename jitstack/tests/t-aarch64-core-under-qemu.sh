# SPDX-License-Identifier: MIT
# AArch64 cores, read on this x86-64 host: the library's child, cross-built
# for AArch64, traps in c_inner under qemu-user, which writes an AArch64 core
# (one without an NT_FILE note).  jitstack --core with --exe names every
# frame from c_inner to main in order, by name and by address; every JIT
# frame is found through its image's CFI, and jit:fp carries the line of
# the table the child published.  Without --exe it says why it cannot find
# the modules.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
A64=$BUILD/aarch64/child
need_cmd qemu-aarch64
need_file "$A64" "make tests-aarch64"
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}

for d in 1 3; do
	rm -f qemu_*.core core core.*
	# qemu writes the guest's core itself, named qemu_PROGRAM_DATE_PID.core
	(ulimit -c unlimited && exec timeout -k 5 60 qemu-aarch64 "$A64" trap --depth $d) > run.out 2>&1
	CORE=$(ls qemu_*.core 2>/dev/null | head -1)
	[ -n "$CORE" ] || { cat run.out; fail "qemu wrote no core (depth $d)"; }
	rm -f core core.* # qemu's own, when the host's core_pattern writes one
	file "$CORE" | grep -q 'ARM aarch64' || { file "$CORE"; fail "$CORE is not an AArch64 core"; }

	limit 60 "$JS" --core "$CORE" --exe "$A64" --json > js.json 2> js.err || { cat js.err; fail "jitstack exited $?"; }
	json_frames js.json > frames
	check_frames child.expect < frames || fail "frames by name, depth $d"
	check_frames child.expect --by-address < frames || fail "frames by address, depth $d"
	python3 - js.json <<'PY' || fail "a frame between c_inner and main was not found by CFI"
import json, sys
fr = json.load(open(sys.argv[1]))["threads"][0]["frames"]
names = [f["function"] for f in fr]
lo, hi = names.index("c_inner"), names.index("main")
bad = [(f["function"], f["unwound_by"]) for f in fr[lo:hi + 1] if f["unwound_by"] == "frame_pointer"]
jit = [f for f in fr[lo:hi + 1] if f["jit"]]
print("JIT frames:", len(jit), "by frame pointer:", bad)
sys.exit(1 if bad or not jit else 0)
PY
	limit 60 "$JS" --core "$CORE" --exe "$A64" > js.txt 2>&1 || fail "jitstack (text) exited $?"
	want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
	grep -q "jit:fp+0x[0-9a-f]* (\[jit 0x[0-9a-f]*\]) at $want\$" js.txt || { cat js.txt; fail "jit:fp is not shown at $want"; }
	echo "depth $d: frames match, jit:fp at $want"
done
cat js.txt

limit 60 "$JS" --core "$CORE" > noexe.txt 2> noexe.err
grep -q "no NT_FILE note and its modules cannot be found without --exe" noexe.err ||
	{ cat noexe.err; fail "no warning without --exe"; }
pass "AArch64 core (qemu-user) read on x86-64: every frame named, JIT frames by CFI, jit:fp's line"
