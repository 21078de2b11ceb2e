# SPDX-License-Identifier: MIT
# The descriptor search reads every module's own symbol tables, and hands
# to libdwfl (which opens the file and looks for separate debuginfo) only
# the modules that can hold the descriptor: one whose tables define it, the
# program, one that exports __jit_debug_register_code (gdb takes a
# descriptor only from an object that also has that function).  A decoy
# library preloaded into the library's child is stripped, and its separate
# debug file defines a __jit_debug_descriptor without a
# __jit_debug_register_code, as gdb would never use it: jitstack finds only
# the child's descriptor, names every frame, and --stats shows that one
# module was opened by libdwfl and no debuginfo looked up.  Alone in a
# process with no other descriptor, the decoy is found (the last resort:
# every stripped module's debuginfo), which shows its debug file is where
# the search would see it.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
need_file "$JTB/threads" "make jitstack-check"
need_cmd gcc
need_cmd objcopy
need_cmd strip
mkdir -p bin/.debug
cat > decoy.c <<'C'
/* a symbol of the protocol's name, local, with nothing behind it */
__attribute__((used)) static unsigned long long __jit_debug_descriptor[4];
int decoy_answer(void) { return 42; }
C
gcc -shared -fPIC -g -o bin/libdecoy.so decoy.c || fail "cannot build the decoy library"
objcopy --only-keep-debug bin/libdecoy.so bin/.debug/libdecoy.debug && strip bin/libdecoy.so &&
	objcopy --add-gnu-debuglink=bin/.debug/libdecoy.debug bin/libdecoy.so || fail "cannot strip the decoy"
readelf -sW bin/.debug/libdecoy.debug | grep -q ' LOCAL .* __jit_debug_descriptor$' || fail "the decoy's debug file lacks its symbol"
readelf -sW bin/libdecoy.so | grep -q __jit_debug && fail "the stripped decoy still names the symbol"

# preload BIN: the decoy, after AddressSanitizer's runtime where BIN has it
# (SAN=1: ASan must come first in the initial library list)
preload() {
	asan=$(ldd "$1" 2>/dev/null | awk '/libasan/ { print $3 }')
	echo "${asan:+$asan }$T/bin/libdecoy.so"
}
start_child child.out env LD_PRELOAD="$(preload "$TB/child")" "$TB/child" wait
grep -q libdecoy "/proc/$CHILD_PID/maps" || fail "the decoy is not loaded in the child"
limit 60 "$JS" -p "$CHILD_PID" --json --stats > js.json 2> js.err || { cat js.err; fail "jitstack exited $?"; }
kill_tree "$CHILD_PID"
json_frames js.json > frames
check_frames child.expect < frames || { cat frames; fail "frames by name"; }
python3 - js.json <<'PY' || fail "the decoy's descriptor was read"
import json, sys
ds = json.load(open(sys.argv[1]))["jit"]["descriptors"]
print("  descriptors:", [(d["module"], d["entries"]) for d in ds])
sys.exit(0 if len(ds) == 1 and ds[0]["module"].endswith("/child") else 1)
PY
stats=$(grep 'stats: descriptor search:' js.err) || { cat js.err; fail "--stats does not count the descriptor search"; }
note "$stats"
echo "$stats" | grep -qE ' [0-9]+ files read by jitstack, 1 modules opened by libdwfl, 0 looked up in separate debuginfo$' ||
	fail "the search opened more than the child, or looked for debuginfo"

# the decoy where no module holds a descriptor
start_child threads.out env LD_PRELOAD="$(preload "$JTB/threads")" "$JTB/threads"
limit 60 "$JS" -p "$CHILD_PID" --stats > alone.txt 2> alone.err || { cat alone.err; fail "jitstack exited $? (decoy alone)"; }
kill_tree "$CHILD_PID"
grep -q '^JIT: descriptor .* in libdecoy.so' alone.txt || { cat alone.txt alone.err; fail "the decoy alone was not found"; }
note "alone: $(grep '^JIT: descriptor' alone.txt)"
pass "debuginfo is read only of modules that can hold the descriptor; the last resort reads the others"
