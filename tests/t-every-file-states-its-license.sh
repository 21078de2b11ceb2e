# SPDX-License-Identifier: MIT
# The tree is MIT licensed and says so for every file, as the REUSE
# specification asks: `reuse lint` (Debian's reuse) finds the license text
# in LICENSES/, a license and a copyright for every file of the tree (a
# clean copy of it, without what the build made), no expression it cannot
# parse and no license it does not know; and every file that can carry a
# comment states its license itself, in its own comment syntax
# (scripts/license-headers.py --check), the others being listed in
# .reuse/dep5 with the reason.  LICENSE is the MIT text, and the README
# names the license.
. "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd reuse
grep -qx 'MIT License' "$ROOT/LICENSE" 2>/dev/null || fail "LICENSE is not the MIT license's text"
cmp -s "$ROOT/LICENSE" "$ROOT/LICENSES/MIT.txt" || fail "LICENSES/MIT.txt is not LICENSE"
grep -q '^## License' "$ROOT/README.md" && grep -q 'MIT' "$ROOT/README.md" || fail "the README does not name the license"

python3 "$ROOT/scripts/license-headers.py" --check > headers.out 2>&1 ||
	{ cat headers.out; fail "files without their license line (scripts/license-headers.py adds it)"; }

# reuse reads every file under its root; a git checkout's ignored files
# (build/) it skips, a `git archive`'s it cannot: lint a copy of the tree.
python3 "$ROOT/scripts/license-headers.py" --list > files || fail "the tree's files cannot be listed"
mkdir tree
(cd "$ROOT" && tar -cf - -T "$T/files") | tar -C tree -xf - || fail "copying the tree"
limit 120 reuse --root tree lint > lint.out 2>&1
rc=$?
[ $rc = 0 ] || { cat lint.out; fail "reuse lint finds the tree not compliant"; }
grep -E 'ERROR|WARNING' lint.out | grep -v 'could not find supported VCS' && fail "reuse lint complains (above)"
grep -q '^\* Used licenses: MIT$' lint.out || { cat lint.out; fail "reuse lint sees a license other than MIT"; }
# reuse counts every file but the license texts and its own .reuse/dep5
n=$(grep -c -v -E '^(LICENSE$|LICENSES/|\.reuse/)' files)
grep -q "^\* Files with license information: $n / $n\$" lint.out ||
	{ cat lint.out; fail "reuse lint does not count the tree's $n files as licensed"; }
pass "reuse lint: the tree's $n files MIT licensed; every file that can carry a comment says so"
