# SPDX-License-Identifier: MIT
# The profiles jitstack record writes for tinyjit running progs/hot.tj
# (tj:hot does ten times the work of tj:cool), opened by the tools people
# read them with:
# - Google's pprof, built from Debian's source: -top ranks tj:hot first with
#   the share of the samples it holds, -traces shows its stacks over
#   tj:main and main with their time, and -tags gives every sample the
#   process's pid and comm labels (as Parca and Pyroscope read them);
# - speedscope's importer (headless Chromium) takes the collapsed file and
#   the pprof file, and its sandwich view gives tj:hot the same self time;
# - the collapsed file is flamegraph.pl's input format exactly (one
#   "frame;frame;... COUNT" line per stack; Debian does not package
#   flamegraph.pl itself).
# What each tool must show comes from the profile as our own decoder
# (pprofdump) and the collapsed lines hold it.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"
HOT=$ROOT/jitstack/tests/progs/hot.tj

"$TJ" --frames=fp --cfi=region --publish=gdb "$HOT" 1000000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3
limit 60 "$JS" record -p $pid -F 250 -d 1.5 --format pprof -o hot.pb.gz 2> rec.err || { rc=$?; cat rec.err; fail "record (pprof) exited $rc"; }
limit 60 "$JS" record -p $pid -F 250 -d 1.5 -o hot.txt 2> rec.err || { rc=$?; cat rec.err; fail "record (collapsed) exited $rc"; }
kill_tree $pid

# flamegraph.pl's format: frames without ';' or line breaks, one space, a count
bad=$(grep -cvE '^[^; ][^;]*(;[^;]+)+ [0-9]+$' hot.txt)
[ "$bad" -eq 0 ] || { grep -vE '^[^; ][^;]*(;[^;]+)+ [0-9]+$' hot.txt | head -3; fail "$bad lines are not in flamegraph.pl's format"; }
c_total=$(awk '{ s += $NF } END { print s }' hot.txt)
c_hot=$(awk '$0 ~ /;tj:hot [0-9]+$/ { s += $NF } END { print s + 0 }' hot.txt)

"$JTB/pprofdump" hot.pb.gz > dump || { cat dump; fail "our decoder does not read the pprof file"; }
samples=$(awk '$1 == "samples" { print $2 }' dump)
period=$(awk '$1 == "period" { print $2 }' dump)
p_hot=$(awk '$1 == "leaf" && $2 == "tj:hot" { print $3 }' dump)
p_cool=$(awk '$1 == "leaf" && $2 == "tj:cool" { print $3 + 0 }' dump)
[ -n "$p_hot" ] && [ "$p_hot" -gt $((3 * ${p_cool:-0})) ] || { cat dump; fail "tj:hot is not 3x tj:cool in the profile itself"; }

need_pprof
"$PPROF" -top hot.pb.gz > top 2> top.err || { rc=$?; cat top.err; fail "pprof -top exited $rc"; }
"$PPROF" -traces hot.pb.gz > traces 2> traces.err || { rc=$?; cat traces.err; fail "pprof -traces exited $rc"; }
python3 - top traces "$samples" "$period" "$p_hot" "$p_cool" <<'PY' || { cat top; fail "pprof does not show what the profile holds"; }
import re, sys
top, traces = open(sys.argv[1]).read(), open(sys.argv[2]).read()
samples, period, hot, cool = (int(x) for x in sys.argv[3:7])
rows = [l.split() for l in top.splitlines() if re.match(r"\s*[\d.]+(ns|us|ms|s)?\s+[\d.]+%", l)]
assert rows, "no rows in pprof -top"
assert rows[0][-1] == "tj:hot", "pprof -top ranks %s first" % rows[0][-1]
def flat_pct(name):
    return float([r for r in rows if r[-1] == name][0][1].rstrip("%"))
assert abs(flat_pct("tj:hot") - 100.0 * hot / samples) < 0.006, (flat_pct("tj:hot"), hot, samples)
if cool:
    assert abs(flat_pct("tj:cool") - 100.0 * cool / samples) < 0.006, (flat_pct("tj:cool"), cool, samples)
# -traces: blocks between lines of dashes, the labels ("thread:", "comm:",
# "pid:"), "TIME leaf", then the callers
ms = 0.0
for block in traces.split("-----------+")[1:]:
    lines = [l for l in block.splitlines()[1:] if l.strip() and not l.strip().startswith(("thread:", "comm:", "pid:", "-"))]
    if not lines:
        continue
    m = re.match(r"\s*([\d.]+)(ms|s|us|ns)\s+(\S+)", lines[0])
    if m and m.group(3) == "tj:hot":
        names = [l.split()[-1] for l in lines]
        assert "tj:main" in names and "main" in names, names
        ms += float(m.group(1)) * {"s": 1e3, "ms": 1, "us": 1e-3, "ns": 1e-6}[m.group(2)]
assert abs(ms - hot * period / 1e6) < 0.01, (ms, hot * period / 1e6)
PY

# -tags: "KEY: Total T", then "T (SHARE): VALUE" lines
"$PPROF" -tags hot.pb.gz > tags 2> tags.err || { rc=$?; cat tags.err; fail "pprof -tags exited $rc"; }
tag_values() { awk -v k="$1:" '$1 == k { on = 1; next } on && !NF { exit } on { print }' tags; }
[ "$(tag_values pid)" = "$(tag_values pid | grep -E "\(  100%\): $pid\$")" ] && [ -n "$(tag_values pid)" ] ||
	{ cat tags; fail "pprof -tags: the pid label is not $pid on every sample"; }
tag_values comm | grep -qE "\(  100%\): tinyjit\$" || { cat tags; fail "pprof -tags: the comm label is not tinyjit on every sample"; }

need_node_modules
need_chromium
release=$NODE_MODULES/speedscope/dist/release
[ -f "$release/index.html" ] || fail "speedscope's release files are not where its package keeps them"
for f in hot.txt hot.pb.gz; do
	NODE_MODULES=$NODE_MODULES CHROMIUM=$CHROMIUM limit 120 node "$ROOT/jitstack/tests/browser.cjs" speedscope \
		"$release" $f tj:hot "$BUILD/jitstack/speedscope-$f.png" > $f.json 2> node.err ||
		{ cat node.err; fail "[$f] the speedscope check failed"; }
done
python3 - hot.txt.json hot.pb.gz.json "$c_total" "$c_hot" "$samples" "$period" "$p_hot" <<'PY' ||
import json, sys
col, pp = (json.load(open(f)) for f in sys.argv[1:3])
c_total, c_hot, samples, period, p_hot = (int(x) for x in sys.argv[3:8])
assert col["importer"] == ["Importing as collapsed stack format"], col["importer"]
assert pp["importer"] == ["Importing as protobuf encoded pprof file"], pp["importer"]
assert not col["errors"] and not pp["errors"], (col["errors"], pp["errors"])
assert col["row"] and col["row"]["unit"] == "count" and col["row"]["self"] == c_hot, (col["row"], c_hot)
assert col["self_sum"] == c_total, (col["self_sum"], c_total)
# speedscope shows times rounded to three or four digits ("1.37s")
assert pp["row"] and pp["row"]["unit"] == "ns" and abs(pp["row"]["self"] - p_hot * period) <= pp["row"]["tol"] + 1, (pp["row"], p_hot * period)
assert abs(pp["self_sum"] - samples * period) <= pp["self_sum_tol"] + 1, (pp["self_sum"], samples * period)
PY
	{ cat hot.txt.json hot.pb.gz.json; fail "speedscope does not read our profiles as they are"; }
note "pprof: tj:hot $p_hot of $samples samples, pid label $pid; collapsed: tj:hot $c_hot of $c_total; speedscope read both"
pass "pprof -top/-traces/-tags and speedscope show tj:hot with the share the profile holds; collapsed is flamegraph.pl's format"
