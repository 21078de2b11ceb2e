#!/bin/sh
# outputs-identical.sh - are jitstack's outputs byte-identical to those of
# a reference commit's jitstack?  For a change meant to move code, not
# behaviour.  Not a test of the suite (no t- prefix): run by hand.
# SPDX-License-Identifier: MIT
#
#   sh jitstack/tests/outputs-identical.sh [-b BUILD] [COMMIT]
#
# COMMIT (default f1cd433) is built once, from `git archive`, into
# $BUILD/ref-COMMIT; the current jitstack is $BUILD/jitstack/jitstack (or
# $JS_CURRENT: the reference itself, say, to see that the script finds no
# difference where there is none).
# Both read the same targets, built once from the current tree, so only
# jitstack differs:
#   cores (deterministic): the library's child through the GDB images, the
#     perf map and the jitdump; tinyjit's probe in every frame and CFI mode
#     and with inlined guest frames; text, --json, --images, -s, --no-jit,
#     --max-frames, --color;
#   live dumps of the same waiting processes (a stopped stack is
#     deterministic): text, --json, --images, --stats;
#   record and top --once of a waiting child (--mode ptrace --idle: every
#     sample is the same stack, only how many there are varies): collapsed,
#     --addresses, pprof (decoded by pprofdump), svg, --stats.
# What varies from run to run is blanked in both before the diff, and only
# that: the sample counts, times and percentages of record and top, the
# numbers of --stats lines.  Exit 0 when every output is identical, 1 with
# the diffs otherwise, 77 when the reference cannot be built.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH=jitstack-identical
[ "${1:-}" = -b ] && { BUILD=$2; shift 2; }
# under the reaper, as the suite runs: the perf maps of this run's
# children go at the end, and only those
if [ -z "${JU_PERF_MAP_PIDS:-}" ] && [ -x "${BUILD:-$ROOT/build}/tools/reaper" ]; then
	exec "${BUILD:-$ROOT/build}/tools/reaper" -n outputs-identical -- sh "$0" -b "${BUILD:-build}" "$@"
fi
REF=${1:-f1cd433}
. "$ROOT/jitstack/tests/lib.sh"
need_file "$TB/child" "make tests"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"

REFDIR=$BUILD/ref-$REF
REFJS=$REFDIR/build/jitstack/jitstack
if [ ! -x "$REFJS" ]; then
	rm -rf "$REFDIR" && mkdir -p "$REFDIR" || exit 1
	git -C "$ROOT" archive "$REF" | tar -x -C "$REFDIR" || skip "git archive $REF failed"
	make -C "$REFDIR" -j2 jitstack > "$REFDIR/make.log" 2>&1 ||
		{ tail -20 "$REFDIR/make.log"; skip "the reference $REF does not build"; }
fi
echo "reference: $REFJS ($REF)"
CUR=${JS_CURRENT:-$JS}
echo "current:   $CUR"

ncases=0 nbad=0
# blank: what varies from run to run, by the kind of output (sed scripts)
blank_none=''
blank_stats='s/[0-9][0-9.]*/N/g'
blank_collapsed='s/ [0-9][0-9]*$/ N/'
blank_svg='s/[0-9][0-9.]*/N/g'
blank_pprof='s/^\(samples\|process [0-9]* [^ ]*\|leaf .*\|pleaf .*\|stack\) [0-9][0-9]*/\1 N/;s/^\(stack\) [0-9]* /\1 N /'
blank_top='s/[0-9][0-9.]*/N/g'

# run_case NAME BLANK-KIND FILE-OUT ARGS...: run both jitstacks with ARGS
# (FILE-OUT "-": stdout is the output; else the file ARGS write, with
# @OUT@ in ARGS standing for it) and compare output, stderr and exit code.
run_case() {
	name=$1 kind=$2 file=$3; shift 3
	ncases=$((ncases + 1))
	for side in ref cur; do
		bin=$CUR
		[ $side = ref ] && bin=$REFJS
		o=$name.$side
		rm -f "$o".file
		args=""
		for a in "$@"; do
			[ "$a" = @OUT@ ] && a=$PWD/$o.file
			args="$args '$a'"
		done
		eval limit 120 "$bin" "$args" > "$o".out 2> "$o".err
		echo "exit $?" >> "$o".err
		[ "$file" = - ] && mv "$o".out "$o".file
		[ "$file" = pprof ] && "$JTB/pprofdump" "$o".file > "$o".dec 2>&1 && mv "$o".dec "$o".file
		eval "b=\$blank_$kind"
		[ -n "$b" ] && sed -i "$b" "$o".file
		# record's closing line counts its samples
		[ "$kind" != none ] && sed -i "$blank_stats" "$o".err
	done
	if cmp -s "$name".ref.file "$name".cur.file && cmp -s "$name".ref.err "$name".cur.err; then
		echo "same: $name"
	else
		nbad=$((nbad + 1))
		echo "DIFFERENT: $name ($*)"
		diff "$name".ref.file "$name".cur.file | head -20
		diff "$name".ref.err "$name".cur.err | head -20
	fi
}

# dumps CASE ARGS...: the dump's forms for one target
dumps() {
	c=$1; shift
	run_case "$c-text" none - "$@"
	run_case "$c-json" none - "$@" --json
	run_case "$c-images" none - "$@" --images
	run_case "$c-images-json" none - "$@" --images --json
	run_case "$c-source" none - "$@" -s
	run_case "$c-nojit" none - "$@" --no-jit
	run_case "$c-max3" none - "$@" --max-frames 3 --json
	run_case "$c-color" none - "$@" --color=always
	run_case "$c-nodemangle" none - "$@" --no-demangle
}

# ---- cores ------------------------------------------------------------------
mkdir cores && cd cores || exit 1
make_core "$TB/child" abort --depth 2 && mv "$CORE" gdb.core
make_core env JITUNWIND=perfmap "$TB/child" abort && mv "$CORE" perfmap.core
map=$(ls -t /tmp/perf-*.map | head -1)
cp "$map" perfmap.map
mkdir -p dumps
make_core env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump "$TB/child" abort && mv "$CORE" jitdump.core
for mode in "fp region" "fp exact" "nofp exact" "nofp region"; do
	set -- $mode
	make_core "$TJ" --frames=$1 --cfi=$2 --publish=gdb "$ROOT/tinyjit/examples/probe.tj" 3 6
	mv "$CORE" tj-$1-$2.core
done
make_core "$TJ" --inline --publish=gdb,perfmap,jitdump "$ROOT/tinyjit/examples/probe.tj" 3 6 &&
	mv "$CORE" tj-inline.core
cd .. || exit 1

dumps core-gdb --core cores/gdb.core
run_case core-gdb-exe none - --core cores/gdb.core --exe "$TB/child" --json
dumps core-perfmap --core cores/perfmap.core
run_case core-perfmap-file none - --core cores/perfmap.core --perf-map cores/perfmap.map --json
run_case core-perfmap-none none - --core cores/perfmap.core --no-perf-map
dumps core-jitdump --core cores/jitdump.core
run_case core-jitdump-none none - --core cores/jitdump.core --no-jitdump --json
for m in fp-region fp-exact nofp-exact nofp-region inline; do
	run_case "core-tj-$m" none - --core cores/tj-$m.core --exe "$TJ"
	run_case "core-tj-$m-json" none - --core cores/tj-$m.core --exe "$TJ" --json
done
dumps core-tj-inline-all --core cores/tj-inline.core --exe "$TJ"

# ---- live dumps ----------------------------------------------------------------
live() { # CASE PROGRAM...: the dumps of one waiting process
	c=$1; shift
	start_child "$c.child" "$@"
	pid=$CHILD_PID
	dumps "$c" -p "$pid"
	run_case "$c-stats" stats - -p "$pid" --stats
	kill_tree "$pid"
	wait "$pid" 2>/dev/null
}
live live-gdb "$TB/child" wait --depth 3
live live-perfmap env JITUNWIND=perfmap "$TB/child" wait
live live-jitdump env JITUNWIND=jitdump "$TB/child" wait
live live-spaced "$TB/child" wait --spaced --depth 8
export TJ_PROBE_WAIT=60
live live-tj-inline "$TJ" --inline --publish=gdb,perfmap,jitdump "$ROOT/tinyjit/examples/probe.tj" 2 6
live live-tj-nofp "$TJ" --frames=nofp --cfi=exact --publish=gdb "$ROOT/tinyjit/examples/probe.tj" 2 6

# ---- record and top of waiting processes --------------------------------------------
records() { # CASE PROGRAM...: record and top of one waiting process
	c=$1; shift
	start_child "$c.child" "$@"
	pid=$CHILD_PID
	rec="record -p $pid --mode ptrace --idle -F 50 -d 0.4"
	# shellcheck disable=SC2086
	{
		run_case "$c-collapsed" collapsed - $rec --format collapsed
		run_case "$c-addresses" collapsed - $rec --format collapsed --addresses
		run_case "$c-pprof" pprof pprof $rec --format pprof -o @OUT@
		run_case "$c-svg" svg svg $rec --format svg -o @OUT@
		run_case "$c-stats" stats - $rec --format collapsed --stats
		run_case "$c-top" top - top -p $pid --once --mode ptrace --idle -F 50 -d 0.4
	}
	kill_tree "$pid"
	wait "$pid" 2>/dev/null
}
records rec-gdb "$TB/child" wait --depth 3
records rec-perf env JITUNWIND=perf "$TB/child" wait
records rec-tj-inline "$TJ" --inline --publish=gdb,perfmap,jitdump "$ROOT/tinyjit/examples/probe.tj" 2 6

echo "$ncases cases, $nbad different"
[ $nbad -eq 0 ] || fail "$nbad of $ncases outputs differ from $REF's"
pass "all $ncases outputs are identical to $REF's"
