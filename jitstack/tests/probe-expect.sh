# SPDX-License-Identifier: MIT
# probe-expect.sh - sourced: the VM frames tinyjit's probe.tj must show,
# innermost first, derived from probe.tj itself (the lines of its marked
# calls) and the depth it runs with, as tinyjit/tests/run-gdb.sh does.
# Sets WANT ("tj:descend:LINE ... tj:main:LINE").  Usage: probe_want DEPTH
probe_want() {
	ex=$ROOT/tinyjit/examples/probe.tj
	line_of() { grep -n "# probe: $1" "$ex" | cut -d: -f1; }
	WANT="tj:descend:$(line_of "the bottom")"
	i=1
	while [ "$i" -le "$1" ]; do
		if [ $((i % 2)) -eq 1 ]; then WANT="$WANT tj:descend:$(line_of "direct call")"
		else WANT="$WANT tj:descend:$(line_of "call through the host")"; fi
		i=$((i + 1))
	done
	WANT="$WANT tj:main:$(line_of "main calls descend")"
}

# The JIT frames of the first thread of a --json dump, as "NAME:LINE",
# and whether the stack goes on to main and __libc_start_call_main.
jit_chain() { # FILE
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fr = d["threads"][0]["frames"]
print(" ".join("%s:%s" % (f["function"], f.get("line", "?")) for f in fr if f["jit"]))
names = [f["function"] for f in fr]
print("reaches-main" if "main" in names and "__libc_start_call_main" in names else "stops-early")
PY
}
