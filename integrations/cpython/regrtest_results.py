#!/usr/bin/python3
# regrtest_results.py - the results of a run of CPython's regrtest in a form
# two runs can be compared by (regrtest.sh).
#
#   regrtest_results.py parse OUT   OUT/log.txt and OUT/junit.xml into
#       OUT/files.txt  "TEST_FILE STATE", one a line (passed, failed,
#                      skipped, resource-denied, env-changed, no-tests,
#                      crashed, timed-out, interrupted), from the progress
#                      lines of the log
#       OUT/cases.txt  "TEST_ID STATUS", one a test case (pass, fail,
#                      error, skip, xfail, xpass), from the JUnit XML
#       OUT/counts.txt the counts of both, and regrtest's own totals
#   regrtest_results.py compare A B  the test files and test cases whose
#       results differ between the runs A and B (directories parsed as
#       above); exits 1 when some do.
#
# Runs under the system's python3, not the interpreter under test.
#
# SPDX-License-Identifier: MIT
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

# "0:01:02 load avg: 3.10 [ 12/480/1] test_x failed (2 errors) -- running..."
PROGRESS = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\] (?:\S+ )?(test[\w.]*) (.*)$")
STATES = (  # the beginnings of libregrtest's TestResult.__str__, longest first
    ("failed (env changed)", "env-changed"),
    ("failed", "failed"),
    ("skipped (resource denied)", "resource-denied"),
    ("skipped", "skipped"),
    ("passed", "passed"),
    ("ran no tests", "no-tests"),
    ("timed out", "timed-out"),
    ("worker non-zero exit code", "crashed"),
    ("worker bug", "crashed"),
    ("interrupted", "interrupted"),
    ("crashed", "crashed"),
)
# regrtest's summary lines: "Total tests: ...", "Total test files: ...",
# "Result: ..."
TOTALS = re.compile(r"^(Total tests|Total test files|Result): (.*)$")
ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def parse_log(path):
    files, totals = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            t = TOTALS.match(line)
            if t:
                totals.append(line)
                continue
            m = PROGRESS.search(line)
            if not m:
                continue
            rest = m.group(2)
            for prefix, state in STATES:
                if rest.startswith(prefix):
                    # a re-run replaces the first result: keep the first
                    files.setdefault(m.group(1), state)
                    break
    return files, totals


def case_status(tc):
    tags = {child.tag for child in tc}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "fail"
    if "skipped" in tags:
        return "skip"
    if "output" in tags:
        return "xfail"
    if "outcome" in tags:
        return "xpass"
    return "pass"


def parse_junit(path):
    cases = {}
    if not os.path.exists(path):
        return cases
    for tc in ET.parse(path).getroot().iter("testcase"):
        # a subtest's parameters may print an object's address, which
        # differs from run to run
        name = ADDRESS.sub(" at 0x?", tc.get("name", "?"))
        status = case_status(tc)
        # the same test id twice (a re-run): the worst counts
        if name in cases and cases[name] != "pass":
            continue
        cases[name] = status
    return cases


def write(path, d):
    with open(path, "w") as f:
        for k in sorted(d):
            f.write(f"{k} {d[k]}\n")


def read(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").rpartition(" ")
                d[k] = v
    return d


def parse(out):
    files, totals = parse_log(os.path.join(out, "log.txt"))
    cases = parse_junit(os.path.join(out, "junit.xml"))
    write(os.path.join(out, "files.txt"), files)
    write(os.path.join(out, "cases.txt"), cases)
    fc = collections.Counter(files.values())
    cc = collections.Counter(cases.values())
    with open(os.path.join(out, "counts.txt"), "w") as f:
        f.write(f"test files: {len(files)}: " + ", ".join(f"{k} {fc[k]}" for k in sorted(fc)) + "\n")
        f.write(f"test cases: {len(cases)}: " + ", ".join(f"{k} {cc[k]}" for k in sorted(cc)) + "\n")
        for t in totals:
            f.write(f"regrtest: {t}\n")
    with open(os.path.join(out, "counts.txt")) as f:
        sys.stdout.write(f.read())


def compare(a, b):
    for d in (a, b):
        if not os.path.exists(os.path.join(d, "files.txt")):
            sys.stderr.write(f"regrtest_results.py: {d}/files.txt is missing (not a parsed run)\n")
            return 2
    differ = 0
    for what in ("files", "cases"):
        da = read(os.path.join(a, what + ".txt"))
        db = read(os.path.join(b, what + ".txt"))
        keys = sorted(set(da) | set(db))
        rows = [(k, da.get(k, "-"), db.get(k, "-")) for k in keys if da.get(k) != db.get(k)]
        # a case the other run did not list because its whole file did not
        # run there is a file difference already; still shown
        print(f"{what}: {len(da)} in {a}, {len(db)} in {b}, {len(rows)} differ")
        for k, va, vb in rows:
            print(f"  {k}: {va} / {vb}")
        differ += len(rows)
    return 1 if differ else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "parse":
        parse(argv[2])
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    sys.stderr.write("usage: regrtest_results.py parse OUT | compare A B\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
