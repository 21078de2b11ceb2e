#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz-smoke.sh - a short libFuzzer run of the loader, seeded with the
# examples, the bad programs and what the last long campaign kept
# (tests/fuzz-corpora/tinyjit-parser; the long run is `make fuzz-tinyjit`).
. "$(dirname "$0")/lib.sh"
runs=${TJ_FUZZ_RUNS:-20000}
corpus=$TJ_TEST_B/fuzz-corpus
rm -rf "$corpus"
mkdir -p "$corpus"
cp "$EX"/*.tj "$PROGS"/*.tj "$corpus"/
cp "$ROOT"/tests/fuzz-corpora/tinyjit-parser/* "$corpus"/ 2>/dev/null
if "$TJ_TEST_B/fuzz_parse" -runs="$runs" -seed=1 -max_len=4096 "$corpus" >"$TJ_TEST_B/fuzz.out" 2>&1; then
	pass
else
	fail "fuzz_parse: $(tail -n 30 "$TJ_TEST_B/fuzz.out")"
fi
grep -m1 'Done' "$TJ_TEST_B/fuzz.out"
finish
