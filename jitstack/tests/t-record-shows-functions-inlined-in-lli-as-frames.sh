# SPDX-License-Identifier: MIT
# jitstack record on lli-19 running inl.c's -O1 IR with leaf spinning
# (MCJIT, ORC, lazy ORC; every mode of RECORD_MODES): leaf and mid,
# inlined into outer, are frames of their own.  Collapsed: leaf is the
# hottest frame, over main;outer;mid.  pprof: outer's pcs are locations
# with three lines, innermost first (leaf at its loop, mid at its call of
# leaf, outer at its call of mid: profile.proto's inlining), and the
# samples expand to main;outer;mid;leaf; Google's pprof -traces shows leaf
# and mid "(inline)" over outer.  SVG: leaf and mid are frames marked
# inlined (data-i), outer is not.
. "$(dirname "$0")/lib.sh"
. "$ROOT/jitstack/tests/lli.sh"
. "$ROOT/jitstack/tests/inl.sh"
need_file "$JTB/pprofdump" "make jitstack-check"
inl_ir
# Google's pprof, when it can be had (its absence skips only its check)
PPROF_WHY=
if (need_pprof) > pprof.why 2>&1; then
	need_pprof
else
	grep -q '^skip: ' pprof.why || { cat pprof.why; fail "pprof cannot be built"; }
	PPROF_WHY=$(sed -n 's/^skip: //p' pprof.why)
fi

for kind in $KINDS; do
	start_lli_inl "$kind" spin
	for mode in $RECORD_MODES; do
		limit 60 "$JS" record --mode "$mode" -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> rec.err ||
			{ cat rec.err; fail "[$kind $mode] record exited $?"; }
		top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
			END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
		[ "${top#* }" = leaf ] || { cat prof.txt; fail "[$kind $mode] the hottest frame is not leaf: $top"; }
		grep -q ";main;outer;mid;leaf [0-9]*\$" prof.txt || { cat prof.txt; fail "[$kind $mode] no stack ...;main;outer;mid;leaf"; }
		limit 60 "$JS" record --mode "$mode" -p "$CHILD_PID" -F 200 -d 1 --format pprof -o prof.pb.gz 2> rec.err ||
			{ cat rec.err; fail "[$kind $mode] record (pprof) exited $?"; }
		"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "[$kind $mode] the pprof file does not decode"; }
		want="leaf:$L_LEAF mid:$L_MID outer:$L_OUTER"
		grep -qE "^location [0-9]+ 0x[0-9a-f]+ $want\$" dump || { grep '^location' dump; fail "[$kind $mode] pprof: no location $want"; }
		grep -q '^stack [0-9]* .*;main;outer;mid;leaf$' dump || { grep '^stack' dump; fail "[$kind $mode] pprof: no sample main;outer;mid;leaf"; }
		awk '$1 == "leaf" && $2 == "leaf" { found = 1 } END { exit !found }' dump || { cat dump; fail "[$kind $mode] pprof: leaf is no sample's leaf"; }
		note "[$kind $mode] hottest: $top of $(awk '{ s += $NF } END { print s }' prof.txt); pprof location $want"
	done
	if [ -z "$PPROF_WHY" ]; then
		"$PPROF" -traces prof.pb.gz > traces 2> traces.err || { cat traces.err; fail "[$kind] pprof -traces exited $?"; }
		# each trace: the labels, then "TIME leaf (inline)" and the callers,
		# one a line
		sed 's/^ *[0-9.]*[mun]\?s  *//; s/^ *//' traces | tr '\n' ';' | grep -q ';leaf (inline);mid (inline);outer;main;' ||
			{ cat traces; fail "[$kind] pprof -traces does not show leaf and mid inlined into outer"; }
		note "[$kind] pprof -traces: leaf (inline), mid (inline), outer, main"
	fi
	limit 60 "$JS" record -p "$CHILD_PID" -F 200 -d 1 --format svg -o prof.svg 2> rec.err || { cat rec.err; fail "[$kind] record (svg) exited $?"; }
	python3 - prof.svg <<'PY' || fail "[$kind] svg: leaf and mid are not frames marked inlined over outer"
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
g = ET.parse(sys.argv[1]).getroot().find(S + "g[@id='frames']")
kinds = {}
for f in g.findall(S + "g"):
    name = f.find(S + "title").text.rsplit(" (", 1)[0]
    kinds.setdefault(name, set()).add((int(f.get("data-d")), f.get("data-i") == "1"))
depth = {n: {d for d, _ in v} for n, v in kinds.items()}
assert {i for _, i in kinds["leaf"]} == {True} and {i for _, i in kinds["mid"]} == {True}, kinds
assert {i for _, i in kinds["outer"]} == {False}, kinds["outer"]
assert any(d + 1 in depth["mid"] and d + 2 in depth["leaf"] for d in depth["outer"]), depth
PY
	kill_tree "$CHILD_PID"
done
[ -z "$PPROF_WHY" ] || note "pprof -traces not checked: $PPROF_WHY"
pass "record ($RECORD_MODES; $KINDS): leaf and mid inlined into outer are frames in collapsed, pprof and svg"
