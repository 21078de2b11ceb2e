# SPDX-License-Identifier: MIT
# perf names a sample in inlined guest code by its chain of guest functions,
# innermost first: `guest-child spin` loops inside guest:leaf (inlined into
# guest:mid, inlined into guest:run) with the perf map as its only channel,
# and `perf report` puts the samples in the blob under
# "guest:leaf <- guest:mid <- guest:run" -- the guest frames of
# guest.expect, joined by " <- ".  perf record -g's frame-pointer callchains
# go on from there to run_guest and main.  Counter-check: published without
# its tree, the same code is only guest:run.
. "$(dirname "$0")/lib.sh"
need_cmd perf

record() { # OUT ARGS...: perf record -g of `guest-child spin ARGS`
	out=$1; shift
	JITUNWIND=perfmap perf record -q -e cpu-clock -g -o "$out" -- "$TB/guest-child" spin 2 "$@" \
		> child.out 2>&1 || { cat child.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$out" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "no samples in $out"
	CLEANUP_MAPS="${CLEANUP_MAPS:-} /tmp/perf-$pid.map"
}
trap 'rm -f ${CLEANUP_MAPS:-}; cleanup' EXIT INT TERM

# The chain at the loop: the guest frames of the expect file (the lines with
# a FILE:LINE), innermost first.
record perf.data --expect guest.expect
chain=$(awk 'NF == 2 { printf "%s%s", sep, $1; sep = " <- " }' guest.expect)
[ "$chain" = "guest:leaf <- guest:mid <- guest:run" ] || fail "unexpected guest frames: $chain"
echo "perf map of the run:"; cat "/tmp/perf-$pid.map"
awk -v c="$chain" '{ n = $0; sub(/^[^ ]+ [^ ]+ /, "", n) } n == c { found = 1 } END { exit !found }' \
	"/tmp/perf-$pid.map" || fail "no line of the perf map is named '$chain'"

# perf report: the symbol of most samples in the process is the chain.
perf report -i perf.data --stdio --no-children --sort sym 2>/dev/null > report.txt
echo "perf report, top:"; grep -v '^#' report.txt | grep -v '^$' | head -5
top=$(grep -v '^#' report.txt | grep -m1 '%' | sed 's/.*\] //; s/ *$//')
[ "$top" = "$chain" ] || fail "perf report's top symbol is '$top', want '$chain'"
pct=$(grep -v '^#' report.txt | grep -m1 '%' | awk '{ sub(/%/, "", $1); print int($1) }')
[ "$pct" -ge 80 ] || fail "only $pct% of the samples are in '$chain'"

# perf script -g: the chain, then the C callers the frame-pointer walk finds.
perf script -i perf.data -F ip,sym 2>/dev/null |
	awk 'NF == 0 { if (s != "") print substr(s, 2); s = ""; next }
	     { $1 = ""; s = s " |" substr($0, 2) } END { if (s != "") print substr(s, 2) }' > chains.txt
want="$chain |run_guest |main"
total=$(wc -l < chains.txt)
ok=$(grep -cF "$want" chains.txt || true)
echo "callchains: $ok of $total begin '$want'"; head -1 chains.txt
[ "$total" -ge 50 ] || fail "only $total samples"
[ $((ok * 10)) -ge $((total * 8)) ] || fail "fewer than 80% of the callchains are '$want ...'"

# Counter-check: without the tree, the samples are guest:run's.
record perf.plain --no-inlines --expect plain.expect
perf report -i perf.plain --stdio --no-children --sort sym 2>/dev/null > plain.txt
top=$(grep -v '^#' plain.txt | grep -m1 '%' | sed 's/.*\] //; s/ *$//')
[ "$top" = "guest:run" ] || fail "without the tree the top symbol is '$top', want guest:run"
grep -q ' <- ' plain.txt && fail "a chain name without a tree"
pass "perf report names samples in inlined guest code '$chain'"
