# SPDX-License-Identifier: MIT
# jitstack --core on the child's core, with and without --exe: the same
# frames as live, read from the descriptor in the core.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
make_core "$TB/child" abort --depth 2
for exe in "" "--exe $TB/child"; do
	# shellcheck disable=SC2086
	limit 60 "$JS" --core "$CORE" $exe --json > js.json || fail "jitstack --core $exe exited $?"
	json_frames js.json > frames
	check_frames child.expect < frames || fail "frames by name ($exe)"
	check_frames child.expect --by-address < frames || fail "frames by address ($exe)"
done
grep -q '"state": "stopped"' js.json || fail "the core's descriptor was not read as a snapshot"

# The executable moved after the crash: without --exe its frames cannot be
# named (and jitstack says so); --exe with a relative path names them again.
cp "$TB/child" ./child-here
make_core ./child-here abort
mv child-here child-moved
limit 60 "$JS" --core "$CORE" > moved.txt 2> moved.err || fail "moved executable: exit $?"
grep -q "child-here: cannot be read" moved.err || { cat moved.err; fail "no warning about the missing executable"; }
limit 60 "$JS" --core "$CORE" --exe child-moved --json > js.json || fail "--exe child-moved: exit $?"
json_frames js.json > frames
check_frames child.expect < frames || fail "frames with --exe after the executable moved"
pass "core: every frame of the child (depth 2) named in order; a moved executable found with --exe"
