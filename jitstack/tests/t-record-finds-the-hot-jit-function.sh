# SPDX-License-Identifier: MIT
# jitstack record on tinyjit running progs/hot.tj, whose function `hot`
# does ten times the work of `cool`: in every JIT mode, the collapsed
# profile's hottest JIT leaf is tj:hot, well ahead of tj:cool, and it holds
# each stack of names on one line (with --addresses, each stack of names
# and addresses); the pprof profile is gzip, decodes (protobuf-c's unpack
# of profile.proto), holds consistent tables and says the same; in every
# record mode (perf events, ptrace).
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"
HOT=$ROOT/jitstack/tests/progs/hot.tj

leaf_counts() { # collapsed stacks -> "count name" of JIT leaves, hottest first
	awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); leaf = f[k]; sub(/ +$/, "", leaf)
	       if (leaf ~ /^tj:/) c[leaf] += n }
	     END { for (l in c) print c[l], l }' "$1" | sort -rn
}

for mode in "fp region" "fp exact" "nofp exact" "nofp region"; do
	set -- $mode
	"$TJ" --frames=$1 --cfi=$2 --publish=gdb "$HOT" 100000000 > /dev/null 2>&1 &
	pid=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
	sleep 0.3
	for rm in $RECORD_MODES; do
		limit 60 "$JS" record --mode $rm -p $pid -F 250 -d 1.5 -o prof.txt 2> rec.err
		rc=$?
		[ $rc -eq 0 ] || { cat rec.err; fail "[$mode $rm] record exited $rc"; }
		leaf_counts prof.txt > leaves
		[ "$(head -1 leaves | cut -d' ' -f2)" = tj:hot ] || { cat leaves; fail "[$mode $rm] hottest JIT leaf is not tj:hot"; }
		hot=$(awk '$2 == "tj:hot" {print $1}' leaves)
		cool=$(awk '$2 == "tj:cool" {print $1}' leaves)
		[ "$hot" -gt $((3 * ${cool:-0})) ] || fail "[$mode $rm] tj:hot $hot samples, tj:cool ${cool:-0}: not 3x apart"
		dup=$(awk '{ $NF = ""; print }' prof.txt | sort | uniq -d | head -3)
		[ -z "$dup" ] || fail "[$mode $rm] collapsed: the same stack on several lines: $dup"
		limit 60 "$JS" record --mode $rm -p $pid -F 250 -d 0.5 --addresses -o addr.txt 2> rec.err ||
			{ cat rec.err; fail "[$mode $rm] record --addresses exited $?"; }
		grep -q ';tj:hot \[0x[0-9a-f]*\]' addr.txt || { head -3 addr.txt; fail "[$mode $rm] --addresses: no address on tj:hot"; }
		dup=$(awk '{ $NF = ""; print }' addr.txt | sort | uniq -d | head -3)
		[ -z "$dup" ] || fail "[$mode $rm] collapsed --addresses: the same stack on several lines: $dup"
		limit 60 "$JS" record --mode $rm -p $pid -F 250 -d 1.5 --format pprof -o prof.pb.gz 2> rec.err
		rc=$?
		[ $rc -eq 0 ] || { cat rec.err; fail "[$mode $rm] pprof record exited $rc"; }
		"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "[$mode $rm] the pprof file does not decode"; }
		top=$(awk '$1 == "leaf" && $2 ~ /^tj:/ {print $3, $2}' dump | sort -rn | head -1 | cut -d' ' -f2)
		[ "$top" = tj:hot ] || { cat dump; fail "[$mode $rm] pprof: hottest JIT leaf is $top"; }
		note "[$mode $rm] collapsed: tj:hot $hot, tj:cool ${cool:-0} samples; pprof: $(head -1 dump), hottest $top"
	done
	kill_tree $pid
done
pass "record: tj:hot is the hottest JIT function in every mode, collapsed and pprof ($RECORD_MODES)"
