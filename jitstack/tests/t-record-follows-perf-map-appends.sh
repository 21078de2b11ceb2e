# SPDX-License-Identifier: MIT
# A JIT that publishes new code every 50 ms through the perf map alone
# (tests/churnjit.c perfmap: generation N's blob gen:N at the
# same address, its line appended, the old one tombstoned): jitstack record
# reads the lines appended after it started and names each generation's
# samples after it -- many distinct gen:N, none taking most samples -- and
# it reads only what was appended: the bytes it read in all do not exceed
# the file's size (a re-read of the whole map each round would).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/churnjit" "make jitstack-check"
start_child cj.out "$JTB/churnjit" 10 perfmap
map=/tmp/perf-$CHILD_PID.map
for _ in $(seq 40); do [ -s "$map" ] && break; sleep 0.05; done
[ -s "$map" ] || fail "churnjit wrote no perf map"
for mode in $RECORD_MODES; do
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 2 --stats -o prof.txt 2> rec.err ||
		{ cat rec.err; fail "[$mode] record exited $?"; }
	size=$(stat -c %s "$map")
	gens=$(grep -o 'gen:[0-9]*' prof.txt | sort -u | wc -l)
	top=$(grep -o 'gen:[0-9]*;spin [0-9]*' prof.txt | awk '{c[$1] += $2; t += $2} END {m = 0; for (g in c) if (c[g] > m) m = c[g]; print t ? int(100 * m / t) : 100}')
	read_bytes=$(sed -n 's/.*perf map: first read .* ms, \([0-9]*\) bytes.*/\1/p' rec.err)
	rereads=$(sed -n 's/.* \([0-9]*\) re-reads from the start.*/\1/p' rec.err)
	[ "$gens" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] only $gens generations named from the perf map"; }
	[ "$top" -lt 50 ] || fail "[$mode] one generation holds $top% of the samples: lines appended were not read?"
	[ -n "$read_bytes" ] && [ "$read_bytes" -le "$size" ] || { cat rec.err; fail "[$mode] read ${read_bytes:-?} bytes of a $size-byte map"; }
	[ "${rereads:-1}" -eq 0 ] || { cat rec.err; fail "[$mode] the map was read again from its start $rereads times"; }
	note "[$mode] $gens generations named from appended lines, the largest $top% of samples; $read_bytes bytes read of $size"
done
pass "appended perf map lines name each generation, only what was appended read ($RECORD_MODES)"
