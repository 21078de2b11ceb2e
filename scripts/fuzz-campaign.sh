#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz-campaign.sh BUILD OUT [RUNS] - each parser's fuzz target for RUNS
# executions (default 10 million), one after the other, from the corpus in
# the tree (tests/fuzz-corpora/PARSER, plus what `make check` seeds), under
# AddressSanitizer, UBSan and LeakSanitizer (libFuzzer's defaults).  Each
# run's log and libFuzzer's final stats go to OUT/PARSER.log, the corpus it
# grew to OUT/PARSER/, and a line per parser to OUT/summary: executions,
# seconds, coverage (features, edges), crashes and leaks.  docs/FUZZING.md
# has the results.  Needs `make fuzz-lib fuzz-tinyjit fuzz-jitstack`'s
# targets built (make fuzz-targets).  FUZZ_ONLY="api jitstack-pmap" runs
# only the parsers it names, so that two shells can share the work.
set -u
BUILD=${1:?usage: fuzz-campaign.sh BUILD OUT [RUNS]}
OUT=${2:?usage: fuzz-campaign.sh BUILD OUT [RUNS]}
RUNS=${3:-10000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
CORPORA=$ROOT/tests/fuzz-corpora
[ -n "${FUZZ_ONLY:-}" ] && touch "$OUT/summary" || : > "$OUT/summary"

# campaign NAME ENV BINARY FLAGS... : one parser
campaign() {
	name=$1 env=$2 bin=$3
	shift 3
	case " ${FUZZ_ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
	[ -x "$bin" ] || { echo "$name: $bin is not built" | tee -a "$OUT/summary"; return 1; }
	mkdir -p "$OUT/$name" "$OUT/$name-crashes"
	[ -d "$CORPORA/$name" ] && cp "$CORPORA/$name"/* "$OUT/$name/" 2>/dev/null
	for seed in ${SEEDS:-}; do [ -d "$seed" ] && cp "$seed"/* "$OUT/$name/" 2>/dev/null; done
	t0=$(date +%s)
	(cd "$OUT/$name-crashes" && env $env "$bin" -runs="$RUNS" -print_final_stats=1 -rss_limit_mb=4096 \
		-artifact_prefix="$OUT/$name-crashes/" "$@" "$OUT/$name") > "$OUT/$name.log" 2>&1
	rc=$?
	t=$(($(date +%s) - t0))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log")
	feat=$(grep -o 'ft: [0-9]*' "$OUT/$name.log" | tail -1 | cut -d' ' -f2)
	cov=$(grep -o 'cov: [0-9]*' "$OUT/$name.log" | tail -1 | cut -d' ' -f2)
	crashes=$(ls "$OUT/$name-crashes" | grep -c '^crash-')
	leaks=$(ls "$OUT/$name-crashes" | grep -c '^leak-')
	echo "$name: exit $rc, ${execs:-?} executions in $t s, cov ${cov:-?} edges, ft ${feat:-?} features," \
		"$crashes crashes, $leaks leaks" | tee -a "$OUT/summary"
}

TB=$BUILD/tests JTB=$BUILD/jitstack/tests TJB=$BUILD/tinyjit/tests
SEEDS="$ROOT/tinyjit/examples $ROOT/tinyjit/tests/progs" \
	campaign tinyjit-parser "" "$TJB/fuzz_parse" -max_len=8192
for p in image mem jdmp pmap; do
	SEEDS="$JTB/fuzz-corpus" campaign "jitstack-$p" "JS_FUZZ_ONLY=$p" "$JTB/fuzz_reader"
done
SEEDS="$ROOT/tests/fuzz-api-seeds" campaign api "" "$TB/fuzz-api"
