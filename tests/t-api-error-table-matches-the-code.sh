# docs/API.md's table of error codes is the code's: every JU_E* code the
# header defines is a row of the table and nothing else is; ju_strerror
# (src/error.c) describes each; every error the library makes (JU_FAIL in
# src/) is one of them (ch_jitdump.c's internal JU_EEXIST_RETRY, never
# returned, aside).  What each row promises for a given case is
# checked where the case is (a directory planted at the perf map's path
# gives JU_EPERM, as the JU_EPERM row says: test-perfmap).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
H=$ROOT/include/jitunwind.h
sed -n 's/^[[:space:]]*\(JU_E[A-Z_]*\) = -[0-9]*,.*/\1/p' "$H" | sort > header
[ -s header ] || fail "no JU_E* codes found in $H"
sed -n '/^## Error codes/,/^## /p' "$ROOT/docs/API.md" | sed -n 's/^| `\(JU_E[A-Z_]*\)` |.*/\1/p' | sort > table
[ -s table ] || fail "no error table found in docs/API.md"
diff header table > diff.out || { cat diff.out; fail "the header's codes (<) and API.md's table (>) differ"; }
for c in $(cat header); do
	grep -q "case $c: return \"" "$ROOT/src/error.c" || fail "ju_strerror has no text for $c"
done
grep -oh 'JU_FAIL(JU_E[A-Z_]*' "$ROOT"/src/*.c | sed 's/JU_FAIL(//' | sort -u > used
grep -v -x -f header used | grep -v '^JU_EEXIST_RETRY$' > unknown
[ ! -s unknown ] || { cat unknown; fail "src/ makes errors that are not in the header: $(cat unknown | tr '\n' ' ')"; }
pass "$(wc -l < header) error codes: the header, API.md's table and ju_strerror agree; src/ makes no other"
