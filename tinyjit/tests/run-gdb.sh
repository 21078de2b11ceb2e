#!/bin/sh
# SPDX-License-Identifier: MIT
# run-gdb.sh - in gdb, the probe's stack shows every VM frame as a named
# tj:<function> frame with its .tj source line, in both CFI modes.  The
# expected frames come from probe.tj itself: the lines of its marked calls
# and the depth it is run with.
. "$(dirname "$0")/lib.sh"
command -v gdb >/dev/null || skip_all "gdb is not installed"
if ! $TJ --publish=gdb "$EX/probe.tj" 0 1 >/dev/null 2>&1; then
	skip_all "this tinyjit cannot publish to gdb (built without libjitunwind?)"
fi
line_of() { grep -n "# probe: $1" "$EX/probe.tj" | cut -d: -f1; }
main_line=$(line_of "main calls descend")
direct_line=$(line_of "direct call")
host_line=$(line_of "call through the host")
bottom_line=$(line_of "the bottom")
depth=6

# innermost first: descend(0) at the probe call, then descend(i) at the call
# it made (odd i: direct; even i: through the host), then main
want="descend:$bottom_line"
i=1
while [ $i -le $depth ]; do
	if [ $((i % 2)) -eq 1 ]; then want="$want descend:$direct_line"; else want="$want descend:$host_line"; fi
	i=$((i + 1))
done
want="$want main:$main_line"

for cfi in region exact; do
	gdb -q -nx -batch -ex run -ex bt --args $TJ --cfi=$cfi --publish=gdb "$EX/probe.tj" 3 $depth \
		>"$TJ_TEST_B/gdb.out" 2>&1
	got=$(sed -n 's/.* in tj:\([A-Za-z0-9_]*\) () at [^ ]*probe\.tj:\([0-9]*\)$/\1:\2/p' "$TJ_TEST_B/gdb.out" | tr '\n' ' ')
	expect_eq "gdb_names_every_vm_frame_with_its_line [cfi=$cfi]" "$want" "${got% }"
	check "gdb_unwinds_through_to_main [cfi=$cfi]" grep -q ' in main (.*) at .*main\.c:' "$TJ_TEST_B/gdb.out"
done
finish
