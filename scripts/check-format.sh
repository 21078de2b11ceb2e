#!/bin/sh
# check-format.sh - every line of C changed since the format base is as
# clang-format (.clang-format) writes it.
#
# The base (.ci/format-base) is the commit before this check existed.  The
# tree's older code keeps its hand-aligned layout (DWARF bytes one item a
# line with aligned comments, instruction encodings), which clang-format
# would undo; new and rewritten lines are checked, so the formatted part
# only grows.  A new hand-aligned table goes between `/* clang-format off */`
# and `/* clang-format on */`.  `make format` fixes what this reports.
set -eu
cd "$(dirname "$0")/.."
base=$(cat .ci/format-base)
command -v git-clang-format-19 >/dev/null 2>&1 || { echo "check-format: git-clang-format-19 is missing (clang-format-19)" >&2; exit 2; }
git cat-file -e "$base^{commit}" 2>/dev/null || { echo "check-format: the base $base is not in this clone" >&2; exit 2; }
out=$(git-clang-format-19 --binary clang-format-19 --diff --extensions c,h,cc "$base" -- . 2>&1) || true
case $out in
"" | *"no modified files to format"* | *"did not modify any files"*)
	echo "check-format: every C line changed since $(git rev-parse --short "$base") is formatted"
	exit 0 ;;
esac
printf '%s\n' "$out"
echo "check-format: FAIL: the lines above are not formatted (make format)" >&2
exit 1
