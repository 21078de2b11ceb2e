# SPDX-License-Identifier: MIT
# Images shaped as other JITs shape them (tests/foreignjit.c): an LLVM-style
# relocatable object with PROGBITS .text, its .eh_frame (or .debug_frame)
# and DWARF still needing their relocations, and a LuaJIT-style ET_REL with
# NOBITS .text, text-relative FDE pointers and no .debug_aranges -- in a
# plain descriptor (no outside-reader extension); and clang's DWARF 5, whose
# unit addresses live in .debug_addr.  Every frame named in order, live and
# from a core, the JIT frames with their source lines.
. "$(dirname "$0")/lib.sh"
for p in foreignjit jitobj.o jitobj-df.o jitobj-clang.o; do need_file "$JTB/$p" "make jitstack-check"; done

want_lines() { # FILE: TRACE_1 at trace.lua:11, the object's functions in jitobj.c
	python3 - "$1" <<'PY'
import json, sys
fr = {f["function"]: f for f in json.load(open(sys.argv[1]))["threads"][0]["frames"] if f["jit"]}
ok = fr.get("TRACE_1", {}).get("file") == "trace.lua" and fr["TRACE_1"].get("line") == 11
ok &= all(fr.get(n, {}).get("file", "").endswith("jitobj.c") for n in ("jitobj_inner", "jitobj_outer"))
ok &= all(f["unwound_by"] != "frame_pointer" for f in json.load(open(sys.argv[1]))["threads"][0]["frames"][:8])
sys.exit(0 if ok else 1)
PY
}

for obj in jitobj.o jitobj-df.o jitobj-clang.o; do
	start_child fj.out "$JTB/foreignjit" wait "$JTB/$obj"
	limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "[$obj] jitstack exited $?"
	json_frames js.json > frames
	check_frames child.expect < frames || fail "[$obj] live frames by name"
	check_frames child.expect --by-address < frames || fail "[$obj] live frames by address"
	want_lines js.json || { cat js.json; fail "[$obj] JIT source lines or CFI missing"; }
	grep -q '"extension": false' js.json || fail "[$obj] the descriptor should be a plain one"
	kill_tree "$CHILD_PID"

	make_core "$JTB/foreignjit" abort "$JTB/$obj"
	limit 60 "$JS" --core "$CORE" --json > js.json || fail "[$obj] jitstack --core exited $?"
	json_frames js.json > frames
	check_frames child.expect < frames || fail "[$obj] core frames by name"
	want_lines js.json || fail "[$obj] core: JIT source lines or CFI missing"
	note "[$obj] live and core: $(tr '\n' ' ' < child.expect | awk '{for (i = 1; i <= NF; i += 5) printf "%s ", $i}')"
done
pass "LLVM-style objects (.eh_frame, .debug_frame, clang's DWARF 5) and a LuaJIT-style image, live and core"
