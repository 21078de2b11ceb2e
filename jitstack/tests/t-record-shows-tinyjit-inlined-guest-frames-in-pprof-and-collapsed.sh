# SPDX-License-Identifier: MIT
# jitstack record on tinyjit --inline (probe.tj spinning at depth 8: every
# direct guest call inlined into its caller's native frame): the guest
# frames the probe lists (TJ_PROBE_EXPECT's "guest" lines, from the VM's
# transitions and the JIT's inline tree) are, in order,
# - in Google's pprof -traces: each an entry of its own, "(inline)" where
#   the JIT inlined it (one Location with several Lines);
# - in the collapsed stacks: each a frame of its own;
# in both sampling modes.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"

for mode in $RECORD_MODES; do
	rm -f expect prof.pb.gz prof.collapsed
	# record's first sample comes once the probe spins: its expect file is written by then
	TJ_PROBE_EXPECT=expect TJ_PROBE_SPIN=3 limit 60 "$TJ" --inline --publish=gdb \
		"$ROOT/tinyjit/examples/probe.tj" 5 8 > tj.out 2>&1 &
	tj=$!
	for _ in $(seq 100); do grep -q spinning tj.out && break; sleep 0.05; done
	pid=$(sed -n 's/.*pid \([0-9]*\) spinning.*/\1/p' tj.out)
	[ -n "$pid" ] || { cat tj.out; fail "the probe did not start spinning"; }
	for fmt in pprof collapsed; do
		limit 60 "$JS" record --mode "$mode" -p "$pid" -F 200 -d 0.7 --format $fmt -o prof.$fmt 2> rec.err ||
			{ rc=$?; cat rec.err; [ "$mode" = perf ] && grep -q "perf_event" rec.err && skip "perf events unavailable"; fail "[$mode] record ($fmt) exited $rc"; }
	done
	wait $tj
	grep -q "^guest " expect || { cat expect; fail "the probe listed no guest frames"; }
	# innermost first, as pprof -traces prints a trace: "tj:X (inline)" where inlined
	want=$(awk '$1 == "guest" { printf "%s%s%s", sep, $2, ($4 == "inline" ? " (inline)" : ""); sep = "|" }' expect)
	echo "$want" | grep -q "(inline)" || fail "the probe's guest frames hold no inlined call: $want"
	need_pprof
	"$PPROF" -traces prof.pprof > traces 2> traces.err || { cat traces.err; fail "[$mode] pprof -traces exited $?"; }
	python3 - traces "$want" <<'PY' || { cat traces; fail "[$mode] pprof does not show the guest frames"; }
import sys
want = sys.argv[2].split("|")
traces, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("-----"):
        cur = []
        traces.append(cur)
    elif cur is not None and line.strip():
        # "     940ms   probe_spin" opens a trace; the rest are its frames
        cur.append(line.split(None, 1)[1].strip() if line.lstrip()[0].isdigit() else line.strip())
spin = [t for t in traces if "probe_spin" in t]
if not spin:
    sys.exit("no trace in probe_spin")
good = [t for t in spin if [f for f in t if f.startswith("tj:")] == want]
if len(good) < 0.9 * len(spin):
    sys.exit("%d of %d traces in probe_spin show %s; e.g. %s" % (
        len(good), len(spin), want, [f for f in spin[0] if f.startswith("tj:")]))
print("%d of %d traces" % (len(good), len(spin)))
PY
	# collapsed: outermost first, each guest function a frame (C frames between them)
	chain=$(echo "$want" | tr '|' '\n' | sed 's/ (inline)//' | tac | paste -sd';')
	got=$(grep ';probe_spin ' prof.collapsed | head -1 | tr ';' '\n' | grep '^tj:' | paste -sd';')
	[ "$got" = "$chain" ] || { head -3 prof.collapsed; fail "[$mode] collapsed: JIT frames $got, want $chain"; }
	note "[$mode] $(echo "$want" | tr '|' ' ')"
done
pass "tinyjit's inlined guest frames in pprof (inline Lines) and collapsed stacks, $RECORD_MODES"
