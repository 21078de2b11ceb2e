# SPDX-License-Identifier: MIT
# JIT code kept in shared memory, as PHP's opcache JIT keeps it: anonymous
# shared memory (/dev/zero (deleted) in maps), SysV shared memory
# (/SYSV... (deleted)) and a memfd.  Such a mapping is in no file: it must
# not be taken for a module, which would hide the JIT images of the code
# in it.  Every frame named in order, live and from a core, and no image
# rejected.
. "$(dirname "$0")/lib.sh"
for p in foreignjit jitobj.o; do need_file "$JTB/$p" "make jitstack-check"; done

for kind in shared sysv memfd; do
	FOREIGNJIT_CODE=$kind start_child fj.out "$JTB/foreignjit" wait "$JTB/jitobj.o"
	limit 60 "$JS" -p "$CHILD_PID" --json > js.json 2> js.err || { cat js.err; fail "[$kind] jitstack exited $?"; }
	json_frames js.json > frames
	check_frames child.expect < frames || { cat js.err; fail "[$kind] live frames by name"; }
	grep -q '"status": "rejected"' js.json && { cat js.err; fail "[$kind] a JIT image was rejected"; }
	kill_tree "$CHILD_PID"

	FOREIGNJIT_CODE=$kind make_core "$JTB/foreignjit" abort "$JTB/jitobj.o"
	limit 60 "$JS" --core "$CORE" --json > js.json 2> js.err || { cat js.err; fail "[$kind] --core exited $?"; }
	json_frames js.json > frames
	check_frames child.expect < frames || { cat js.err; fail "[$kind] core frames by name"; }
	note "[$kind] live and core: every frame named"
done
pass "JIT code in anonymous shared memory, SysV shared memory and a memfd: named live and from cores"
