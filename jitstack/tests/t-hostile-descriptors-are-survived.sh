# SPDX-License-Identifier: MIT
# A target whose JIT descriptor is broken on purpose (tests/hostile.c):
# cycles, absurd sizes, unmapped pointers, garbage and truncated images,
# CFI that makes a frame its own caller or names an absurd register, a seq that stays odd, a list that
# changes under the reader.  For each, jitstack finishes quickly, exits 0,
# says what was wrong, and still shows every frame (the JIT frame through
# the frame pointer when its image is unusable).  Some from cores too.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/hostile" "make jitstack-check"

# mode | a warning that must appear (empty: none required)
cases='cycle|loops back
huge|image size 1152921504606846976
unmapped|is unreadable
garbage|2 JIT entries hold symbol files that are not ELF
badcfi|its own caller
hugereg|1 malformed FDEs dropped
outside|
twice|overlaps the newer image
version|version 2
long|longer than 1000000 entries
odd|odd
absurd|n_entries says
churn|
torn|'

# (a here-document, not a pipe: the loop must run in this shell, so that
# the children it starts are the ones the clean-up ends when a check fails)
while IFS='|' read -r mode warning; do
	start_child h.out "$JTB/hostile" "$mode" wait
	start=$(date +%s%N)
	limit 30 "$JS" -p "$CHILD_PID" --json > js.json 2> js.err
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $rc -eq 0 ] || { cat js.err; fail "[$mode] jitstack exited $rc"; }
	python3 -c "import json,sys; json.load(open('js.json'))" || fail "[$mode] invalid JSON"
	json_frames js.json > frames
	check_frames child.expect --by-address --allow-unnamed-jit < frames > check.out ||
		{ cat check.out js.err js.json; fail "[$mode] frames"; }
	if [ -n "$warning" ]; then
		grep -q "$warning" js.json || { cat js.json; fail "[$mode] no warning '$warning'"; }
	fi
	note "[$mode] ${ms} ms: $(python3 -c "import json; print('; '.join(json.load(open('js.json'))['warnings'])[:150] or 'no warning')")"
	kill_tree "$CHILD_PID"
done <<EOF
$cases
EOF

# the newer of two registrations of the same code names it, both ways round
for order in "" reverse; do
	start_child h.out env HOSTILE_ORDER=$order "$JTB/hostile" twice wait
	limit 30 "$JS" -p "$CHILD_PID" --json > js.json 2> js.err || fail "[twice $order] exit $?"
	json_frames js.json | grep -q ' jit:blob$' || { cat js.json; fail "[twice $order] jit:blob is not named"; }
	! grep -q '"function": "jit:olde"' js.json || fail "[twice $order] the older registration named the frame"
	kill_tree "$CHILD_PID"
done
note "[twice] the newer registration names the code"

# entries in a JIT's own format (not ELF) are no failure: not counted or
# shown as rejected, in text, JSON or --images (garbage's other entries are
# broken ELF images, which are)
start_child h.out "$JTB/hostile" garbage wait
limit 30 "$JS" -p "$CHILD_PID" > text 2> err || fail "[garbage] exit $?"
limit 30 "$JS" -p "$CHILD_PID" --images > images 2>&1 || fail "[garbage --images] exit $?"
limit 30 "$JS" -p "$CHILD_PID" --json > js.json 2> js.err || fail "[garbage --json] exit $?"
kill_tree "$CHILD_PID"
rejected=$(python3 -c '
import json, sys
st = [im["status"] for im in json.load(open(sys.argv[1]))["jit"]["images"]]
print(st.count("rejected") if st.count("not-elf") == 2 else "statuses %r" % st)' js.json)
case $rejected in [0-9]*) ;; *) fail "[garbage] JSON does not give the 2 entries that are not ELF the status not-elf: $rejected" ;; esac
grep -qE "; 2 entries not ELF(; $rejected images? rejected)?\$" text ||
	{ head -5 text; fail "[garbage] the summary does not count 2 entries not ELF and $rejected rejected images"; }
[ "$(grep -c '^  not ELF: ' images)" -eq 2 ] && [ "$(grep -c '^  rejected: ' images)" -eq "$rejected" ] ||
	{ cat images; fail "[garbage] --images does not say not ELF for 2 entries and rejected for $rejected"; }
note "[garbage] 2 entries not ELF, $rejected broken images rejected"

for mode in cycle garbage badcfi odd; do
	make_core "$JTB/hostile" "$mode" abort
	limit 30 "$JS" --core "$CORE" --json > js.json 2> js.err
	rc=$?
	[ $rc -eq 0 ] || { cat js.err; fail "[$mode core] exit $rc"; }
	json_frames js.json > frames
	check_frames child.expect --by-address --allow-unnamed-jit < frames > check.out ||
		{ cat check.out; fail "[$mode core] frames"; }
	note "[$mode core] ok"
done
pass "14 broken descriptors live and 4 in cores: bounded, no crash, every frame shown"
