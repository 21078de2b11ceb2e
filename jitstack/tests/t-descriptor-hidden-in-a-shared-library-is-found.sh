# SPDX-License-Identifier: MIT
# A JIT linked into a shared library that exports only its API (as a
# library that links LLVM statically does, through a version script):
# __jit_debug_descriptor and __jit_debug_register_code are local, in no
# .dynsym, so nothing the dynamic linker sees names them.  jitstack finds
# the descriptor in the library's own .symtab while it is unstripped, and
# in its separate debuginfo (.gnu_debuglink) once stripped, and names every
# frame of the child, live and in a core; a stripped library without its
# debug file gives no descriptor, shown first so that the test cannot pass
# by accident.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/child-hiddenlib" "make jitstack-check"
need_cmd objcopy
need_cmd strip
mkdir -p bin
cp "$JTB/child-hiddenlib" "$JTB/libhiddenjit.so" bin/
lib=bin/libhiddenjit.so
readelf -W --dyn-syms "$lib" 2>/dev/null | grep -q '__jit_debug_' && fail "the library exports a __jit_debug_ symbol"
readelf -sW "$lib" 2>/dev/null | grep -q ' LOCAL .* __jit_debug_descriptor$' || fail "the library lacks its local descriptor"

# Live and from a core, the child's frames as it expects them, and the
# module the descriptor was found in.  Usage: names LABEL
names() {
	label=$1
	start_child child.out bin/child-hiddenlib wait
	limit 60 "$JS" -p "$CHILD_PID" --json > live.json 2> live.err || { cat live.err; fail "[$label] live: exit $?"; }
	json_frames live.json > frames
	check_frames child.expect < frames || { cat frames; fail "[$label] live: frames by name"; }
	python3 - live.json <<'PY' || fail "[$label] the descriptor is not the library's"
import json, sys
d = json.load(open(sys.argv[1]))
ds = d["jit"]["descriptors"]
sys.exit(0 if len(ds) == 1 and ds[0]["module"].endswith("libhiddenjit.so") else 1)
PY
	kill_tree "$CHILD_PID"
	make_core bin/child-hiddenlib abort
	limit 60 "$JS" --core "$CORE" --json > core.json 2> core.err || { cat core.err; fail "[$label] core: exit $?"; }
	json_frames core.json > frames
	check_frames child.expect < frames || { cat frames; fail "[$label] core: frames by name"; }
	rm -f "$CORE"
	note "[$label] live and core: every frame named, $(grep -c ' jit:' frames) JIT frames"
}

names "unstripped: its .symtab"
objcopy --only-keep-debug "$lib" hiddenjit.debug && strip "$lib" &&
	objcopy --add-gnu-debuglink=hiddenjit.debug "$lib" || fail "cannot strip the library"
readelf -sW "$lib" 2>/dev/null | grep -q __jit_debug_descriptor && fail "the stripped library still names the descriptor"
start_child child.out bin/child-hiddenlib wait
limit 60 "$JS" -p "$CHILD_PID" > live.txt 2> live.err || { cat live.err; fail "[no debug file] live: exit $?"; }
kill_tree "$CHILD_PID"
grep -q '^JIT: none' live.txt || { cat live.txt; fail "[no debug file] a descriptor was found anyway"; }
note "[stripped, no debug file] no descriptor (as the test expects)"
mkdir -p bin/.debug && mv hiddenjit.debug bin/.debug/
names "stripped: its separate debuginfo"
pass "a descriptor local to a shared library found in its .symtab, and once stripped in its debuginfo, live and in a core"
