# SPDX-License-Identifier: MIT
# perf record -k 1 + perf inject --jit + perf report --sort sym,srcline: a
# blob with guest frames (guest-child spin: guest:run inlines guest:mid,
# which inlines guest:leaf, which loops) is sampled in its innermost guest
# function.  perf's jitdump has no inline records: the symbol stays the
# blob's name, but the srcline of a sample is the row of its DEBUG_INFO,
# which carries the innermost line in the innermost inline's file --
# leaf.py, not the blob's guest.py.  The expected FILE:LINE is the innermost
# guest frame's at the loop, derived from the workload's tables
# (guest.expect's first line).
. "$(dirname "$0")/lib.sh"
need_cmd perf
need_file "$TB/guest-child" "make tests"
# lib.sh points JITDUMPDIR at $T: the jitdump lands there.

env JITUNWIND=jitdump perf record -q -F 999 -e cpu-clock -k 1 -o spin.data -- \
	"$TB/guest-child" spin 2 --expect guest.expect > child.out 2>&1 ||
	{ cat child.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
grep -q '^skip' child.out && skip "$(grep '^skip' child.out)"
perf inject --jit -i spin.data -o spin.jit.data 2> inject.err || { cat inject.err; fail "perf inject --jit"; }
read -r leaf want_line < guest.expect || fail "guest-child wrote no expect file"
[ "$leaf" = guest:leaf ] || fail "guest.expect does not start in guest:leaf: $leaf"
want_sym=guest:run # the blob's name: the jitdump's CODE_LOAD
perf report -i spin.jit.data --stdio --sort sym,srcline 2>/dev/null | grep -v '^#' | grep . > report.txt
head -3 report.txt
# the hottest entry: "PCT% [.] SYM SRCLINE"
set -- $(head -1 report.txt)
[ "$3" = "$want_sym" ] && [ "$4" = "$want_line" ] ||
	fail "perf's hottest entry is '$3 $4', want '$want_sym $want_line'"
pct=${1%%.*}
[ "$pct" -ge 50 ] || fail "only $1 of the samples at $want_line"
pass "perf report shows $want_sym at $want_line, the innermost guest line in its file"
