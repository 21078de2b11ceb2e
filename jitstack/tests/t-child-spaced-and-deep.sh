# SPDX-License-Identifier: MIT
# The child with its blobs at odd addresses 1 KiB apart (--spaced) and its
# chain repeated 8 times (--depth 8): 58 frames from c_inner to main.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
start_child child.out "$TB/child" wait --spaced --depth 8
limit 60 "$JS" -p "$CHILD_PID" --json > js.json || fail "jitstack exited $?"
json_frames js.json > frames
check_frames child.expect < frames || fail "frames by name"
check_frames child.expect --by-address < frames || fail "frames by address"
pass "spaced blobs, depth 8: $(wc -l < child.expect) frames in order"
