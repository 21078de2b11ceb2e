# SPDX-License-Identifier: MIT
# A short libFuzzer run (ASan + UBSan) of the descriptor and image reader
# on a corpus of real images and target memories (fuzz-corpus.sh); the
# long run is `make fuzz-jitstack`.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/fuzz_reader" "make jitstack-check (needs clang-19 and libfuzzer-19-dev)"
sh "$ROOT/jitstack/tests/fuzz-corpus.sh" "$BUILD" corpus > corpus.log 2>&1 || { cat corpus.log; fail "corpus"; }
limit 120 "$JTB/fuzz_reader" -max_total_time=20 -rss_limit_mb=2048 -artifact_prefix="$T/" corpus > fuzz.log 2>&1 ||
	{ tail -30 fuzz.log; fail "the fuzzer found a crash"; }
pass "$(grep -o 'Done [0-9]* runs in [0-9]* second' fuzz.log), $(cat corpus.log)"
