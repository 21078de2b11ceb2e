# SPDX-License-Identifier: MIT
# A short libFuzzer run (ASan + UBSan) of the API against its model
# (tests/fuzz_api.c): publishes, batches, unpublishes, batch unpublishes with
# missing and repeated starts, unpublish_all, close and reopen, and injected
# allocation faults, every result and the state after it checked.  It starts
# from tests/fuzz-api-seeds (inputs that found bugs); the long run is `make
# fuzz-lib`.
. "$(dirname "$0")/lib.sh"
need_file "$TB/fuzz-api" "make check builds it (clang-19, libclang-rt-19-dev)"
mkdir -p corpus
cp "$ROOT"/tests/fuzz-api-seeds/* corpus/
limit 120 "$TB/fuzz-api" -max_total_time=20 -rss_limit_mb=2048 -artifact_prefix="$T/" corpus > fuzz.log 2>&1 ||
	{ grep -E 'fuzz_api:|ERROR|SUMMARY' fuzz.log | head -20; fail "the fuzzer found a failure"; }
pass "$(grep -o 'Done [0-9]* runs in [0-9]* second' fuzz.log)"
