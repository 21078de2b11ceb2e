#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind-publish.sh [BUILD] - instructions per published blob, counted by
# callgrind (repeatable, unlike wall time), with 1k..1M blobs already
# published, batches of 64 and single calls, for the channels given in
# $MASKS (default: unwinder 0x1, gdb 0x4, perfmap 0x8 and all three 0xd).
BUILD=${1:-build}
# under the reaper, which lists this run's processes that write perf maps:
# the trap's reap-perf-maps.sh removes only theirs
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$BUILD/tools/reaper" ] || exec "$BUILD/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
B=$BUILD/bench/bench-publish
MASKS=${MASKS:-"0x1 0x4 0x8 0xd"}
BASES=${BASES:-"1000 10000 100000 1000000"}
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
out=$(mktemp -d)
touch "$out/.start"
trap 'sh "$(dirname "$0")/../scripts/reap-perf-maps.sh" "$out/.start"; rm -rf "$out"' EXIT
printf '%-6s %-6s' mask mode
for b in $BASES; do printf ' %9s' "$b"; done
printf '   growth\n'
for m in $MASKS; do
	for batch in 64 1; do
		printf '%-6s %-6s' "$m" "$([ $batch = 1 ] && echo single || echo batch)"
		first=; last=
		for b in $BASES; do
			valgrind --tool=callgrind --toggle-collect=measured_publish \
				--callgrind-out-file="$out/cg" "$B" ir "$b" "$batch" "$m" > /dev/null 2>&1 ||
				{ echo " failed"; continue 2; }
			ir=$(awk '/^summary:/ { print $2 }' "$out/cg")
			per=$((ir / 4096))
			printf ' %9s' "$per"
			[ -z "$first" ] && first=$per
			last=$per
		done
		awk -v a="$first" -v b="$last" 'BEGIN { printf "   %.2fx\n", b / a }'
	done
done
