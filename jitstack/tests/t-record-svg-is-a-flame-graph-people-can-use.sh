# SPDX-License-Identifier: MIT
# jitstack record --format svg on tinyjit running progs/hot.tj (tj:hot does
# ten times the work of tj:cool): the file is well-formed XML that needs no
# network, its frames nest (each within its parent, no wider), tj:hot is a
# JIT frame holding its samples, well ahead of tj:cool, and native frames
# are told apart.  In headless Chromium: hovering tj:hot shows its name and
# share, clicking it zooms it to the full width and "Reset zoom" brings it
# back, and searching for it colours it and reports its share; no script
# error.  The screenshot is kept as $BUILD/jitstack/flamegraph-hot.png.
# Names holding markup characters or bytes that are not UTF-8 keep the
# file well-formed.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
HOT=$ROOT/jitstack/tests/progs/hot.tj

"$TJ" --frames=fp --cfi=region --publish=gdb "$HOT" 1000000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3
limit 60 "$JS" record -p $pid -F 250 -d 2 --format svg -o hot.svg 2> rec.err || { rc=$?; cat rec.err; fail "record exited $rc"; }
kill_tree $pid

# What the file itself holds, read with Python's XML parser.
python3 - hot.svg > facts <<'PY' || fail "the SVG is not what a flame graph must be"
import re, sys
import xml.etree.ElementTree as ET
raw = open(sys.argv[1], "rb").read()
root = ET.fromstring(raw)  # strict: well-formed XML, UTF-8
S = "{http://www.w3.org/2000/svg}"
assert root.tag == S + "svg", root.tag
# self-contained: no reference to anything outside the file
text = raw.decode("utf-8")
refs = [m for m in re.findall(r'(?:href|src)\s*=\s*"([^"]*)"|url\(([^)]*)\)', text) if any(m)]
assert not refs, refs
ns = [m for m in re.findall(r'https?://[^"\s<]+', text)
      if m not in ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml")]
assert not ns, ns
g = root.find(S + "g[@id='frames']")
total = int(g.get("data-total"))
frames = []
for f in g.findall(S + "g"):
    t = f.find(S + "title").text
    name, share = t[: t.rindex(" (")], t[t.rindex(" (") :]
    n = int(f.get("data-n"))
    m = re.fullmatch(r" \((\d+) samples?, (\d+\.\d\d)%\)", share)
    assert m and int(m.group(1)) == n, t
    assert abs(float(m.group(2)) - 100.0 * n / total) < 0.006, t
    frames.append((int(f.get("data-d")), int(f.get("data-s")), n, name, f.get("data-k")))
frames.sort()
assert frames[0][:4] == (0, 0, total, "all"), frames[0]
# every frame lies within one frame a level below it (its parent)
spans = {}
for d, s, n, name, k in frames:
    spans.setdefault(d, []).append((s, s + n))
for d, s, n, name, k in frames:
    if d:
        assert any(a <= s and s + n <= b for a, b in spans[d - 1]), (name, d, s, n)
def samples(x):
    return sum(n for d, s, n, name, k in frames if name == x)
def kinds(x):
    return {k for d, s, n, name, k in frames if name == x}
hot, cool = samples("tj:hot"), samples("tj:cool")
assert kinds("tj:hot") == {"jit"} and kinds("tj:main") == {"jit"}, (kinds("tj:hot"), kinds("tj:main"))
assert kinds("main") == {"native"}, kinds("main")
assert hot > 3 * cool, (hot, cool)
print(total, hot, cool)
PY
read -r total hot cool < facts
[ "$total" -gt 100 ] || fail "only $total samples in 2 s at 250 Hz"

need_node_modules
need_chromium
mkdir -p "$BUILD/jitstack"
NODE_MODULES=$NODE_MODULES CHROMIUM=$CHROMIUM limit 120 node "$ROOT/jitstack/tests/browser.cjs" svg hot.svg tj:hot \
	"$BUILD/jitstack/flamegraph-hot.png" > seen.json 2> node.err || { cat node.err; fail "the browser check failed"; }
python3 - seen.json "$total" "$hot" <<'PY' || { cat seen.json; fail "the flame graph does not behave in Chromium"; }
import json, sys
o = json.load(open(sys.argv[1]))
total, hot = int(sys.argv[2]), int(sys.argv[3])
share = "%.2f%%" % (100.0 * hot / total)
assert o["errors"] == [], o["errors"]
assert o["total"] == total and o["samples"] == hot, (o["total"], o["samples"])
assert o["matching"] == 1, "tj:hot is drawn %d times, one stack reaches it" % o["matching"]
assert o["title"] == "tj:hot (%d samples, %s)" % (hot, share), o["title"]
assert o["details_on_hover"] == o["title"], o["details_on_hover"]
assert o["label"].startswith("tj:hot"), o["label"]
assert o["width_zoomed"] > 1179 and o["unzoom_shown"], (o["width_zoomed"], o["unzoom_shown"])
assert abs(o["width_unzoomed"] - o["width"]) < 0.01, (o["width_unzoomed"], o["width"])
assert o["matched"] == "Matched: " + share, o["matched"]
assert o["fill_searched"] == "rgb(230,0,230)", o["fill_searched"]
PY
[ -s "$BUILD/jitstack/flamegraph-hot.png" ] || fail "no screenshot"

# Names with markup and with bytes that are not UTF-8.
need_file "$JTB/hostile" "make jitstack-check"
for mode in markup badname; do
	start_child h.out "$JTB/hostile" $mode wait
	limit 60 "$JS" record -p "$CHILD_PID" --idle -F 200 -d 0.5 --format svg -o $mode.svg 2> rec.err ||
		{ rc=$?; cat rec.err; fail "[$mode] record exited $rc"; }
	kill_tree "$CHILD_PID"
	python3 - $mode.svg $mode <<'PY' || fail "[$mode] the SVG is not well-formed or lost the JIT frame's name"
import sys
import xml.etree.ElementTree as ET
want = {"markup": 'jit:<&>"', "badname": "jit:\ufffd\ufffd\ufffdb"}[sys.argv[2]]
root = ET.fromstring(open(sys.argv[1], "rb").read())
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
sys.exit(0 if any(t.startswith(want + " (") for t in titles) else "no frame titled %r in %r" % (want, titles))
PY
done
note "$total samples: tj:hot $hot, tj:cool $cool; screenshot $BUILD/jitstack/flamegraph-hot.png"
pass "record --format svg: a well-formed, self-contained flame graph that hovers, zooms and searches in Chromium"
