#!/bin/sh
# SPDX-License-Identifier: MIT
# check-format.sh [--fix] - every C and C++ file git tracks is as
# clang-format-19 (.clang-format) writes it.
#
# Hand-aligned tables (DWARF abbreviations two items a line, one-line
# decoder cases) stand between `/* clang-format off */` and
# `/* clang-format on */`.  .clang-format-ignore lists what is kept as it
# was released (the 0.1 header the ABI test builds against).  --fix (make
# format) rewrites the files in place instead of reporting them.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format-19 >/dev/null 2>&1 || { echo "check-format: clang-format-19 is missing" >&2; exit 2; }
files=$(git ls-files '*.c' '*.h' '*.cc')
if [ "${1:-}" = --fix ]; then
	printf '%s\n' "$files" | xargs clang-format-19 -i
	exit 0
fi
out=$(printf '%s\n' "$files" | xargs clang-format-19 --dry-run --Werror 2>&1) && [ -z "$out" ] && {
	echo "check-format: all $(printf '%s\n' "$files" | wc -l) C files are formatted"
	exit 0
}
printf '%s\n' "$out" | grep -- '-Wclang-format-violations' | sed 's/: error: .*//' | sort -u -t: -k1,1 | head -40
echo "check-format: FAIL: the files above are not formatted (make format)" >&2
exit 1
