# SPDX-License-Identifier: MIT
# python/'s reader of CPython 3.11's location tables gives every code unit
# of every code object of Python's standard library (compiled by Debian's
# python3) the line CPython's own co_lines() gives it: short, one-line,
# no-column, long and no-location entries, negative line deltas and all.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/pyline_check" "make $JTB/pyline_check"
[ -x /usr/bin/python3.11 ] || skip "/usr/bin/python3.11 is not installed"
limit 300 /usr/bin/python3.11 - > tables <<'PY' || fail "python3.11 could not list the code objects"
import glob, sys
def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_linetable"):
            yield from walk(c)
for path in sorted(glob.glob("/usr/lib/python3.11/*.py")):
    try:
        top = compile(open(path, "rb").read(), path, "exec")
    except (SyntaxError, ValueError):
        continue
    for co in walk(top):
        ranges = " ".join("%d:%d:%s" % r for r in co.co_lines())
        print(co.co_firstlineno, co.co_linetable.hex() or "-", ranges)
PY
limit 120 "$JTB/pyline_check" < tables > out || { cat out; fail "lines differ from CPython's"; }
pass "$(cat out)"
