# SPDX-License-Identifier: MIT
# A JIT whose __jit_debug_descriptor is local (defined static or hidden)
# and that ships stripped, its symbols in a separate debug file: jitstack
# finds the descriptor in that file, through .gnu_debuglink (in the
# program's .debug/, and under a debug root given with --debuginfo-path)
# and through the build-id (ROOT/.build-id/xx/rest.debug), and names
# every frame of the child, live and in a core.  Without the debug file it
# finds no descriptor and the JIT frames stay unnamed: the test shows that
# first, so that it cannot pass by accident.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/child-localdesc" "make jitstack-check"
need_cmd objcopy
need_cmd strip
mkdir -p bin
# one debug file, two stripped programs: one with a debuglink, one without
cp "$JTB/child-localdesc" bin/child-ld
objcopy --only-keep-debug bin/child-ld child-ld.debug || fail "objcopy --only-keep-debug"
strip bin/child-ld && cp bin/child-ld bin/child-id || fail "strip"
objcopy --add-gnu-debuglink=child-ld.debug bin/child-ld || fail "objcopy --add-gnu-debuglink"
readelf -sW bin/child-ld 2>/dev/null | grep -q __jit_debug_descriptor && fail "the stripped program still names the descriptor"
readelf -sW child-ld.debug 2>/dev/null | grep -q ' LOCAL .* __jit_debug_descriptor$' || fail "the debug file lacks the local descriptor"
id=$(readelf -n bin/child-id 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || skip "the program has no build-id (the toolchain links without --build-id)"

# Live and from a core, the child's frames as it expects them.  Usage:
# names PROGRAM LABEL [OPTION...]
names() {
	prog=$1 label=$2; shift 2
	start_child child.out "$prog" wait
	limit 60 "$JS" -p "$CHILD_PID" --json "$@" > live.json 2> live.err || { cat live.err; fail "[$label] live: exit $?"; }
	json_frames live.json > frames
	check_frames child.expect < frames || { cat frames; fail "[$label] live: frames by name"; }
	kill_tree "$CHILD_PID"
	make_core "$prog" abort
	limit 60 "$JS" --core "$CORE" --json "$@" > core.json 2> core.err || { cat core.err; fail "[$label] core: exit $?"; }
	json_frames core.json > frames
	check_frames child.expect < frames || { cat frames; fail "[$label] core: frames by name"; }
	rm -f "$CORE"
	note "[$label] live and core: every frame named, $(grep -c ' jit:' frames) JIT frames"
}

# Without it, nothing names the JIT frames.  Usage: unnamed PROGRAM LABEL [OPTION...]
unnamed() {
	prog=$1 label=$2; shift 2
	start_child child.out "$prog" wait
	limit 60 "$JS" -p "$CHILD_PID" "$@" > live.txt 2> live.err || { cat live.err; fail "[$label] live: exit $?"; }
	kill_tree "$CHILD_PID"
	grep -q '^JIT: none' live.txt && ! grep -q ' jit:' live.txt ||
		{ cat live.txt; fail "[$label] without the debug file, a descriptor or a JIT name was found anyway"; }
	note "[$label] without the debug file: no descriptor, the JIT frames unnamed (as the test expects)"
}

unnamed bin/child-ld "debuglink, no debug file"
mkdir -p bin/.debug && cp child-ld.debug bin/.debug/
names bin/child-ld "debuglink, bin/.debug/"
rm -r bin/.debug
mkdir -p "root$T/bin" && cp child-ld.debug "root$T/bin/"
unnamed bin/child-ld "debuglink, debug root not given"
names bin/child-ld "debuglink, --debuginfo-path ROOT" --debuginfo-path "$T/root"

mkdir -p "ids/.build-id/$(echo "$id" | cut -c1-2)"
unnamed bin/child-id "build-id, no debug file" --debuginfo-path "$T/ids"
cp child-ld.debug "ids/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
names bin/child-id "build-id, --debuginfo-path ROOT" --debuginfo-path "$T/ids"
pass "a local descriptor in a stripped program found in its separate debuginfo (debuglink, build-id), live and in a core"
