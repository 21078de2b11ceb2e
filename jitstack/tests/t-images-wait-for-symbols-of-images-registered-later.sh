# SPDX-License-Identifier: MIT
# The images of LLVM's lazy ORC JIT (lli-19 -jit-kind=orc-lazy on rec.c):
# one per function, whose DWARF names the global `sink`, and one for the
# globals, which defines it.  relocs_check reads them through jitmodules.c
# from a list in memory: the function image alone waits for the symbol
# (and claims no lines); once the globals image is registered, the next
# refresh rewrites the function image with its lines (a JIT may register
# them in either order, and jitstack record reads the list as it grows).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/relocs_check" "make jitstack-check"
. "$ROOT/jitstack/tests/lli.sh"
start_lli orc-lazy
mkdir images
JITSTACK_DUMP_IMAGES=$T/images limit 60 "$JS" -p "$CHILD_PID" > /dev/null 2> js.err || { cat js.err; fail "jitstack exited $?"; }
kill_tree "$CHILD_PID"
defines() { # TYPE NAME: the image that defines NAME
	for f in images/*.elf; do
		readelf -sW "$f" 2>/dev/null | awk -v t="$1" -v n="$2" '$4 == t && $5 == "GLOBAL" && $7 != "UND" && $8 == n { f = 1 } END { exit !f }' &&
			echo "$f" && return
	done
}
fn=$(defines FUNC leaf)
globals=$(defines OBJECT sink)
[ -n "$fn" ] && [ -n "$globals" ] || { ls -l images; fail "no image defines leaf, or none defines sink"; }
readelf -rW "$fn" 2>/dev/null | grep -q 'rela.debug_addr' || fail "leaf's image has no .debug_addr relocations (a new lli?)"
limit 60 "$JTB/relocs_check" "$fn" "$globals" > check.out 2>&1 || { cat check.out; fail "relocs_check"; }
cat check.out
pass "a function image waits for the globals image's symbol, and gets its lines once that is registered"
