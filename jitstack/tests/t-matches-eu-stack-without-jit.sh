# On programs without JIT code jitstack's frames are eu-stack's: the same
# threads, and per thread the same function names in the same order (both
# read the same modules through libdwfl; jitstack must not lose or invent
# a frame).  A multithreaded C program, and sleep(1).
. "$(dirname "$0")/lib.sh"
need_cmd eu-stack
need_file "$JTB/threads" "make jitstack-check"

names_js() { # FILE.json -> "TID name name ..." per thread, sorted
	python3 - "$1" <<'PY'
import json, sys
for t in sorted(json.load(open(sys.argv[1]))["threads"], key=lambda t: t["tid"]):
    print(t["tid"], " ".join(f["function"] or "??" for f in t["frames"]))
PY
}
names_eu() { # eu-stack output -> the same shape
	awk '/^TID / { if (tid) print tid line; tid = $2; sub(":", "", tid); line = ""; next }
	     /^#[0-9]+ / { line = line " " ($3 != "" ? $3 : "??") }
	     END { if (tid) print tid line }' "$1" | sort -n
}

compare() { # PID WHAT
	limit 60 "$JS" -p "$1" --json > js.json || fail "$2: jitstack exited $?"
	limit 60 eu-stack -p "$1" > eu.out 2>&1 || fail "$2: eu-stack exited $?"
	names_js js.json > js.names
	names_eu eu.out > eu.names
	if ! diff -u eu.names js.names; then fail "$2: jitstack's frames differ from eu-stack's"; fi
	[ "$(wc -l < js.names)" -ge 1 ] || fail "$2: no thread"
	note "$2: $(wc -l < js.names) threads, $(wc -w < js.names) words identical"
}

start_child th.out "$JTB/threads"
compare "$CHILD_PID" threads
sleep 60 & SLEEP=$!
CLEANUP_PIDS="$CLEANUP_PIDS $SLEEP"
sleep 0.2
compare "$SLEEP" sleep
pass "jitstack and eu-stack name the same frames per thread on programs without JIT code"
