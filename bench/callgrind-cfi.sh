#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind-cfi.sh [BUILD...] - instructions per published blob of CPython's
# executor shapes (JU_FRAME_CFI, one range per stencil copy over shared
# stencil arrays: "cold", a cold exit of 3 ranges; "trace", 60 ranges),
# counted by callgrind around 1024 publishes after $BASE (default 200) were
# published one by one; single calls and batches of 64; channel masks in
# $MASKS (default: 0, the default channels, and 0xd, unwinder + gdb +
# perfmap).  With several build directories (the tree before and after a
# change, each built with `make lib bench-build`) the columns are side by
# side.
[ $# -gt 0 ] || set -- build
# under the reaper, which lists this run's processes that write perf maps
[ -n "${JU_PERF_MAP_PIDS:-}" ] || [ ! -x "$1/tools/reaper" ] || exec "$1/tools/reaper" -n "${0##*/}" -- sh "$0" "$@"
MASKS=${MASKS:-"0 0xd"}
BASE=${BASE:-200}
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
out=$(mktemp -d)
touch "$out/.start"
trap 'sh "$(dirname "$0")/../scripts/reap-perf-maps.sh" "$out/.start"; rm -rf "$out"' EXIT
printf '%-6s %-6s %-6s' shape mask mode
for b in "$@"; do printf ' %14s' "$(basename "$(dirname "$(readlink -f "$b")")")/${b##*/}"; done
[ $# -eq 2 ] && printf ' %8s' ratio
printf '\n'
for shape in cold trace; do
	for m in $MASKS; do
		for batch in 1 64; do
			printf '%-6s %-6s %-6s' "$shape" "$m" "$([ $batch = 1 ] && echo single || echo batch)"
			first=
			for b in "$@"; do
				if valgrind --tool=callgrind --toggle-collect=measured_publish_cfi \
					--callgrind-out-file="$out/cg" "$b/bench/bench-publish" ir-cfi "$shape" "$BASE" \
					"$batch" "$m" > /dev/null 2>&1; then
					per=$(($(awk '/^summary:/ { print $2 }' "$out/cg") / 1024))
				else
					per=failed
				fi
				printf ' %14s' "$per"
				[ -z "$first" ] && first=$per
			done
			[ $# -eq 2 ] && awk -v a="$first" -v b="$per" 'BEGIN { printf " %7.2fx", b / a }'
			printf '\n'
		done
	done
done
