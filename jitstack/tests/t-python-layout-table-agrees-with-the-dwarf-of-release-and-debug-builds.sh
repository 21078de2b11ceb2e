# SPDX-License-Identifier: MIT
# python/'s table of CPython 3.11's offsets, used where an interpreter has
# no DWARF, holds field by field the offsets that the DWARF of Debian's
# release build (its separate debug file) and of its debug build
# (python3.11d) give: where the two builds' layouts differ, a table could
# not agree with both, and this says which field.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/pyframes.sh"
n=0
for py in /usr/bin/python3.11 /usr/bin/python3.11d; do
	[ -x "$py" ] || skip "$py is not installed (python3.11-dbg)"
	limit 60 "$PYF" --check-table 11 "$py" > out 2> err || { cat err; fail "$py: the table differs from its DWARF"; }
	fields=$(wc -l < out)
	[ "$fields" -ge 20 ] || { cat out err; fail "$py: only $fields fields compared"; }
	awk '$2 != $3 { exit 1 }' out || { cat out; fail "$py: a field differs"; }
	n=$((n + fields))
done
pass "$n fields of the 3.11 table, each equal to the DWARF of the release and the debug build"
