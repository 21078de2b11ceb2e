# SPDX-License-Identifier: MIT
# A JIT that publishes new code every 50 ms through a jitdump alone
# (tests/churnjit.c jitdump: generation N's blob gen:N at the same address,
# its records appended): jitstack record, in every mode, reads the records
# appended after it started and names each generation's samples after it
# -- many distinct gen:N, none taking most samples -- and it reads only
# what was appended: the bytes it read in all do not exceed the file's
# size (a re-read of the whole dump each round would).  Under a SAN=1
# build, LeakSanitizer finds nothing left of the images made from the
# dump's CFI as generations replace one another (each freed as one
# js_image, with all it owns).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/churnjit" "make jitstack-check"
# a perf map older than this is another process's, at a reused pid
touch started
start_child cj.out "$JTB/churnjit" 20 jitdump
dump=jit-$CHILD_PID.dump
for _ in $(seq 40); do [ -s "$dump" ] && break; sleep 0.05; done
[ -s "$dump" ] || fail "churnjit wrote no jitdump"
[ ! "/tmp/perf-$CHILD_PID.map" -nt started ] || fail "churnjit wrote a perf map"
lsan=
nm -D "$JS" 2>/dev/null | grep -q __asan_init && lsan=1
for mode in $RECORD_MODES; do
	rc=0
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
		limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 2 --stats -o prof.txt 2> rec.err || rc=$?
	! grep -q 'LeakSanitizer' rec.err || { cat rec.err; fail "[$mode] LeakSanitizer found leaks after record followed the dump"; }
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	size=$(stat -c %s "$dump")
	gens=$(grep -o 'gen:[0-9]*' prof.txt | sort -u | wc -l)
	top=$(grep -o 'gen:[0-9]*;spin [0-9]*' prof.txt | awk '{c[$1] += $2; t += $2} END {m = 0; for (g in c) if (c[g] > m) m = c[g]; print t ? int(100 * m / t) : 100}')
	read_bytes=$(sed -n 's/.*jitdump: .* ms in all, \([0-9]*\) bytes read.*/\1/p' rec.err)
	rereads=$(sed -n 's/.*jitdump: .* \([0-9]*\) re-reads from the start.*/\1/p' rec.err)
	[ "$gens" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] only $gens generations named from the jitdump"; }
	[ "$top" -lt 50 ] || fail "[$mode] one generation holds $top% of the samples: records appended were not read?"
	[ -n "$read_bytes" ] && [ "$read_bytes" -le "$size" ] || { cat rec.err; fail "[$mode] read ${read_bytes:-?} bytes of a $size-byte dump"; }
	[ "${rereads:-1}" -eq 0 ] || { cat rec.err; fail "[$mode] the dump was read again from its start $rereads times"; }
	note "[$mode] $gens generations named from appended records, the largest $top% of samples; $read_bytes bytes read of $size${lsan:+; LeakSanitizer: no leak}"
done
pass "every record mode names the generations from the dump's appended records, reading only what was appended"
