#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""matrix.py - the unwind matrix: every unwinder x every mode, judged against
the frames the workload itself says it has.

  matrix.py --build BUILD --form full|check|quick [--write-doc docs/MATRIX.md]
            [--jobs N] [--only METHOD,...] [--columns COLUMN,...] [--steps UNWINDER,...]
            [--no-steps] [--keep] [--selftest]
  matrix.py --build BUILD --bench tests/matrix/BENCH.md

Rows are unwinders (mxmethods.METHODS), columns a workload in a publishing
mode (mxmethods.COLUMNS); the LuaJIT block (mxluajit.py) is a table of its
own: stock luajit without and with the jitunwind module, in the rows that
have a way into it; so is the CPython block (mxcpython.py): CPython 3.13's
stock JIT, with our patches, and with them and frame pointers.  A cell is PASS, FAIL, XFAIL (listed with its
reason in mxxfail.py), XPASS (listed there but passed), SKIP (a tool is
missing; the reason is printed), N/A, or TIMEOUT (not judged: a time limit
ran out, stretched as it is to the machine's load, mxrun.py).  Then the
every-instruction part (mxsteps.py).  Exit 1 on any FAIL, XPASS or
TIMEOUT, or a required every-instruction result below 100 %.

Writes BUILD/matrix/matrix.json (for machines) and, with --write-doc, the
Markdown page; per-cell logs go to BUILD/matrix/logs.  Scratch directories
live in BUILD/matrix/run and are removed; nothing is left in /tmp (the
library's /tmp/perf-PID.map files are removed for every workload started).
"""
import argparse
import concurrent.futures
import json
import math
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mxjudge as J  # noqa: E402
import mxrun  # noqa: E402
import mxsteps  # noqa: E402
from mxmethods import COLUMNS, METHODS, MIN_SAMPLES, SYSTEM_COLUMNS, Ctx  # noqa: E402
import mxaarch64  # noqa: E402
import mxluajit  # noqa: E402
import mxcpython  # noqa: E402
from mxxfail import XFAIL, expected_failure  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE_SHARE = 0.9

# The quick form (`make demo`): every unwinder in the default mode and in
# the modes that tell most (frame pointers only; no frame pointers with
# exact CFI; guest calls inlined), the every-instruction test in one exact
# mode.
QUICK_COLUMNS = ["fp-none", "fp-region", "nofp-exact", "inline-fp-exact"]
QUICK_STEPS = ["nofp-exact"]
# The LuaJIT block in `make check`: the module's column (the integration's
# own tests run each check without the module too)
CHECK_LJ_COLUMNS = ["lj-module"]
# The CPython block in `make check`: the patched interpreter's columns (the
# integration's own tests run each check on the stock JIT too)
CHECK_CPY_COLUMNS = ["cpy-jit", "cpy-fp"]


# ---- judging a cell --------------------------------------------------------------

def judge_samples(samples, expect, names_jit, fp_only=False):
    """SAMPLE_SHARE of the samples in the spinning function, and at least
    MIN_SAMPLES of them, must show the whole stack."""
    first = [s for s in expect.frames if s.fp or not fp_only][0]
    relevant = J.relevant(samples, expect, names_jit, fp_only)
    good = 0
    bad_why = None
    for s in relevant:
        ok, why = J.judge(s, expect, names_jit, fp_only=fp_only)
        good += ok
        bad_why = bad_why or (None if ok else why)
    n = len(relevant)
    if n < MIN_SAMPLES:
        return False, "%d samples, %s in %s, but %d in %s are required" % (
            len(samples), mxrun.share(n, len(samples)), first.name, MIN_SAMPLES, first.name)
    need = math.ceil(SAMPLE_SHARE * n - 1e-9)
    ok = good >= need
    why = "%d of the %d samples in %s show the whole stack (%d required)" % (good, n, first.name, need)
    return ok, why if ok or not bad_why else why + "; e.g. " + bad_why


def unnamed_jit(frames, expect):
    return any(a is not None and n in J.UNNAMED and expect.blob_at(a - (1 if i else 0))
               for i, (a, n) in enumerate(frames))


def judge_guest_samples(chains, expect, lines):
    """Each sample's guest frames (perf map chains): SAMPLE_SHARE of the
    samples that hold JIT code must show all the workload's, in order."""
    relevant = [c for c in chains if c]
    good, bad_why = 0, None
    for c in relevant:
        ok, why = J.judge_guests(c, expect, lines)
        good += ok
        bad_why = bad_why or (None if ok else why)
    if len(relevant) < MIN_SAMPLES:
        return False, "%d samples, %s with JIT frames, but %d with JIT frames are required" % (
            len(chains), mxrun.share(len(relevant), len(chains)), MIN_SAMPLES)
    need = math.ceil(SAMPLE_SHARE * len(relevant) - 1e-9)
    ok = good >= need
    why = "%d of the %d samples with JIT frames show the guest frames in order (%d required)" % (
        good, len(relevant), need)
    return ok, why if ok or not bad_why else why + "; e.g. " + bad_why


def verdict(outcome, fp_only=False):
    """The native frames' verdict and, in an inline column, the guest
    frames' (both must pass)."""
    ok, why = native_verdict(outcome, fp_only)
    if outcome.guests is None or fp_only:
        return ok, why
    if outcome.samples is not None:
        g_ok, g_why = judge_guest_samples(outcome.guests, outcome.expect, outcome.guest_lines)
    else:
        g_ok, g_why = J.judge_guests(outcome.guests, outcome.expect, outcome.guest_lines)
        if not g_ok:
            g_why += " [got: %s]" % " ".join("%s@%s" % g if g[1] else g[0] for g in outcome.guests)
    return ok and g_ok, "%s; guests: %s" % (why, g_why)


def native_verdict(outcome, fp_only=False):
    if outcome.verdict is not None:
        return outcome.verdict, outcome.note
    if outcome.samples is not None:
        return judge_samples(outcome.samples, outcome.expect, outcome.names_jit, fp_only)
    if outcome.stacks is not None:
        results = [(label,) + J.judge(frames, outcome.expect, outcome.names_jit, fp_only=fp_only)
                   for label, frames in sorted(outcome.stacks.items())]
        why = "; ".join("%s: %s%s" % (label, why, "" if ok else " [got: %s]" % J.describe(
            outcome.stacks[label][:60], outcome.expect)) for label, ok, why in results)
        return all(ok for _, ok, _ in results), why
    ok, why = J.judge(outcome.frames, outcome.expect, outcome.names_jit, fp_only=fp_only,
                      inline_dups=outcome.inline_dups)
    if ok and unnamed_jit(outcome.frames, outcome.expect):
        why += ", JIT frames by address only"
    if not ok:
        why += " [got: %s]" % J.describe(outcome.frames[:60], outcome.expect)
    return ok, why


def run_cell(ctx, method, col, run_root, keep):
    log = ["%s x %s" % (method.id, col.id)]
    cell = mxrun.Cell(run_root, "%s__%s" % (method.id, col.id), log)
    xf = expected_failure(method.id, col.id)
    t0 = time.monotonic()
    res = {"method": method.id, "column": col.id, "expected": "fail" if xf else "pass",
           "reason": xf[0] if xf else None}
    try:
        outcome = (mxaarch64.run(method, ctx, col, cell) if col.arch == "aarch64" else
                   mxaarch64.system_run(method, ctx, col, cell) if col.arch == "aarch64-system"
                   else mxluajit.run(method, ctx, col, cell) if col.workload == "luajit"
                   else mxcpython.run(method, ctx, col, cell) if col.workload == "cpython"
                   else method.run(ctx, col, cell))
        ok, why = verdict(outcome)
        if outcome.note and outcome.verdict is None:
            why += " (%s)" % outcome.note
        if not ok and xf and xf[1] == "fp":
            fp_ok, fp_why = verdict(outcome, fp_only=True)
            if not fp_ok:
                why += "; and not even the frame-pointer-visible frames: " + fp_why
                xf = None
                res["expected"] = "fail, seeing the frame-pointer-visible frames"
        status = ("XPASS" if ok else "XFAIL") if xf else ("PASS" if ok else "FAIL")
    except mxrun.Skip as e:
        status, why = "SKIP", str(e)
    except mxrun.NotApplicable as e:
        status, why = "N/A", str(e)
    except mxrun.Timeout as e:  # not judged: neither the tool's failure nor a pass
        status, why = "TIMEOUT", "not judged: %s" % e
    except Exception as e:  # a broken cell is a failure, never a crash of the run
        status, why = ("XFAIL" if xf else "FAIL"), "%s: %s" % (type(e).__name__, e)
    finally:
        cell.cleanup(keep)
    res.update(status=status, detail=why, seconds=round(time.monotonic() - t0, 2), scale=cell.scale)
    log.append("%s: %s" % (status, why))
    return res, log


def run_steps(ctx, col, unwinder, run_root, keep):
    log = ["every instruction: %s x %s" % (unwinder[0], col.id)]
    cell = mxrun.Cell(run_root, "steps__%s__%s" % (unwinder[0], col.id), log)
    required = (unwinder[0], col.id) in mxsteps.REQUIRED
    res = {"unwinder": unwinder[0], "column": col.id, "required": required}
    try:
        r = mxsteps.run_one(ctx, col, unwinder, cell)
        res.update(r)
        ok = r["total"] > 0 and r["good"] == r["total"] and not r["unmodelled"]
        res["status"] = ("PASS" if ok else "FAIL") if required else "INFO"
    except mxrun.Skip as e:
        res.update(status="SKIP", first_bad=str(e))
    except mxrun.NotApplicable as e:
        res.update(status="N/A", first_bad=str(e))
    except mxrun.Timeout as e:
        res.update(status="TIMEOUT", first_bad="not judged: %s" % e)
    except Exception as e:
        res.update(status="FAIL", first_bad="%s: %s" % (type(e).__name__, e))
    finally:
        cell.cleanup(keep)
    log.append(json.dumps(res))
    return res, log


# ---- output ------------------------------------------------------------------------

COLOR = {"PASS": "32", "XFAIL": "33", "FAIL": "1;31", "XPASS": "1;31", "SKIP": "36", "N/A": "2",
         "INFO": "0", "TIMEOUT": "1;35"}


def paint(text, status, tty):
    return "\033[%sm%s\033[0m" % (COLOR.get(status, "0"), text) if tty else text


def pct(r):
    if not r.get("total"):
        return "-"
    return "%d/%d (%.0f %%)" % (r["good"], r["total"], 100.0 * r["good"] / r["total"])


def terminal_grid(doc, methods, cols, tty):
    cells = {(c["method"], c["column"]): c for c in doc["cells"]}
    lw = max([len(m["label"]) for m in doc["methods"]] + [len(u[1]) for u in mxsteps.UNWINDERS]) + 2
    cw = max([11] + [len(c["id"]) + 1 for c in cols])
    out = ["%-*s" % (lw, "") + "".join("%-*s" % (cw, c["id"]) for c in cols)]
    for m in methods:
        row = "%-*s" % (lw, m["label"])
        for c in cols:
            cell = cells.get((m["id"], c["id"]))
            s = cell["status"] if cell else "-"
            row += paint("%-*s" % (cw, s), s, tty)
        out.append(row)
    return out


def terminal_table(doc, tty):
    cols = doc["columns"]
    lw = max([len(m["label"]) for m in doc["methods"]] + [len(u[1]) for u in mxsteps.UNWINDERS]) + 2
    out = terminal_grid(doc, doc["methods"], cols, tty) if cols else []
    if doc["lj_columns"]:
        out += ([""] if out else []) + ["LuaJIT: stock luajit without and with the jitunwind module"]
        out += terminal_grid(doc, doc["lj_methods"], doc["lj_columns"], tty)
    if doc.get("cpy_columns"):
        out += ([""] if out else []) + ["CPython: 3.13's stock JIT, with the jitunwind patches, and with "
                                        "frame pointers"]
        out += terminal_grid(doc, doc["cpy_methods"], doc["cpy_columns"], tty)
    if doc["steps"]:
        out.append("")
        out.append("every instruction (single-stepping tj:leaf: body, native call, return)")
        scols = [c for c in cols if any(s["column"] == c["id"] for s in doc["steps"])]
        out.append("%-*s" % (lw, "") + "".join("%-15s" % c["id"] for c in scols))
        steps = {(s["unwinder"], s["column"]): s for s in doc["steps"]}
        for uid, label, _, _ in mxsteps.UNWINDERS:
            if not any(s["unwinder"] == uid for s in doc["steps"]):
                continue
            row = "%-*s" % (lw, label)
            for c in scols:
                s = steps.get((uid, c["id"]))
                text = (pct(s) + ("!" if s["required"] else "")) if s and s.get("total") else (
                    s["status"] if s else "-")
                row += paint("%-15s" % text, s["status"] if s else "INFO", tty)
            out.append(row)
        out.append("(! = 100 % required)")
    out.append("")
    for status, reason, where in grouped(doc):
        out.append("%s %s: %s" % (paint(status, status, tty), where, reason))
    for c in not_judged(doc):
        out.append("%s %s x %s: %s" % (paint("TIMEOUT", "TIMEOUT", tty), c.get("method") or
                                       "every instruction, " + c["unwinder"], c["column"],
                                       c.get("detail") or c.get("first_bad")))
    return "\n".join(out)


def grouped(doc):
    """(status, reason, "methods x columns") for the XFAIL, SKIP and N/A
    cells, one line per reason."""
    col_order = [c["id"] for c in doc["columns"] + doc["lj_columns"] + doc.get("cpy_columns", [])]
    groups = {}
    for c in doc["cells"]:
        if c["status"] in ("XFAIL", "SKIP", "N/A"):
            key = (c["status"], c["reason"] if c["status"] == "XFAIL" else c["detail"])
            ms, cs = groups.setdefault(key, ([], []))
            ms.append(c["method"]) if c["method"] not in ms else None
            cs.append(c["column"]) if c["column"] not in cs else None
    out = []
    for (status, reason), (ms, cs) in groups.items():
        cols = "every column" if len(cs) == len(col_order) else ", ".join(
            sorted(cs, key=col_order.index))
        out.append((status, reason, "%s x %s" % (", ".join(ms), cols)))
    return out


def problems(doc):
    bad = [c for c in doc["cells"] if c["status"] in ("FAIL", "XPASS")]
    bad += [s for s in doc["steps"] if s["status"] == "FAIL"]
    return bad


def exit_code(doc):
    """1 on any unexpected result, and on any result not judged in time: a
    run with a TIMEOUT has not shown that everything passes."""
    return 1 if problems(doc) or not_judged(doc) else 0


def not_judged(doc):
    """The cells and every-instruction runs that ran out of time: neither
    passed nor failed, and the run does not pass with them."""
    return [c for c in doc["cells"] + doc["steps"] if c["status"] == "TIMEOUT"]


def summary(doc):
    n = {}
    for c in doc["cells"]:
        n[c["status"]] = n.get(c["status"], 0) + 1
    st = [s for s in doc["steps"] if s["required"]]
    steps_out = sum(s["status"] == "TIMEOUT" for s in doc["steps"])
    return ("%d PASS, %d XFAIL, %d SKIP, %d N/A, %d FAIL, %d XPASS, %d TIMEOUT (not judged); every "
            "instruction: %d of %d required at 100 %%%s"
            % (n.get("PASS", 0), n.get("XFAIL", 0), n.get("SKIP", 0), n.get("N/A", 0), n.get("FAIL", 0),
               n.get("XPASS", 0), n.get("TIMEOUT", 0),
               sum(s["status"] == "PASS" for s in st), len(st),
               ", %d not judged (TIMEOUT)" % steps_out if steps_out else ""))


def tool_versions():
    def first_line(cmd):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "not installed"

    def deb(pkg):
        try:
            return subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                                  text=True, timeout=30).stdout or "not installed"
        except OSError:
            return "?"
    return [("gdb", first_line(["gdb", "--version"])), ("lldb", first_line(["lldb-16", "--version"])),
            ("perf", first_line(["perf", "--version"])), ("valgrind", first_line(["valgrind", "--version"])),
            ("elfutils (libdwfl, eu-stack)", deb("libdw1")), ("nongnu libunwind", deb("libunwind8")),
            ("LLVM libunwind", deb("libunwind-14")), ("libgcc", deb("libgcc-s1")), ("glibc", deb("libc6")),
            ("AddressSanitizer (GCC's libasan)", deb("libasan8")),
            ("libbacktrace (GCC's, in libgcc-12-dev)", deb("libgcc-12-dev")),
            ("bpftrace", first_line(["bpftrace", "--version"])), ("heaptrack", deb("heaptrack")),
            ("gperftools (libprofiler)", deb("libgoogle-perftools4")),
            ("luajit (the LuaJIT block)", deb("luajit")),
            ("CPython (the CPython block)", "3.13.5 (integrations/cpython, built from Debian trixie's "
             "python3.13 source package)"),
            ("kernel (bpftrace's and perf's frame-pointer walk)", first_line(["uname", "-r"]))]


def markdown(doc):
    cols = doc["columns"]
    col_ids = [c["id"] for c in cols]
    cells = {(c["method"], c["column"]): c for c in doc["cells"]}
    if doc.get("system"):
        L = ["<!-- SPDX-License-Identifier: MIT -->", "# The unwind matrix on an AArch64 kernel", "",
             "Generated by `make check-aarch64-system`: Debian arm64 booted under qemu-system-aarch64 "
             "(`tests/aarch64-system`) runs `tests/matrix/matrix.py --system aarch64`; do not edit by "
             "hand. These are the AArch64 cells that need a real kernel (ptrace, perf events, "
             "valgrind), with the in-process rows beside them; the AArch64 columns under qemu-user "
             "are in [MATRIX.md](MATRIX.md).", ""]
        generated = ""
    else:
        L = ["<!-- SPDX-License-Identifier: MIT -->", "# The unwind matrix", ""]
        generated = "Generated by `make matrix` (`tests/matrix/matrix.py`); do not edit by hand. "
    L += [generated + "Every unwinder below is run on a real stack through JIT code and judged against the frames "
         "the workload itself says it has (its call chain and its published blobs), never against "
         "another tool's output. A frame counts when its address falls inside the right function or "
         "blob and, where the tool names JIT code, carries the right `tj:` name (in the LuaJIT block, the "
         "trace's `lua:` name; in the CPython block, the executor's `py:` name).", "",
         "**PASS** the whole stack, innermost to `main` · **XFAIL** a known limitation, reason below · "
         "**FAIL** / **XPASS** (unexpected) fail `make %s` · **TIMEOUT** not judged: a time limit ran "
         "out even stretched to the machine's load (neither a pass nor the tool's failure; it fails the "
         "run all the same, listed below) · **SKIP** the tool is missing here · "
         "**N/A** %s, reason below." % (
             ("check-aarch64-system", "not run in the VM") if doc.get("system") else
             ("check", "the unwinder has no way into that workload (an AArch64 guest under qemu-user) "
              "or is not run in that column")),
         "",
         "## Columns", "",
         "| column | workload and mode |", "|---|---|"]
    for c in cols:
        L.append("| `%s` | %s |" % (c["id"], c["label"]))
    L += ["", "The probe is `tinyjit/examples/probe.tj` at depth %d: main → JIT → shim → JIT → host C → "
          "JIT → … → `probe()` in C, ~40 native frames. The child is `tests/child.c` (hand-written "
          "fp, cfi and region blobs) at depth 2." % doc["probe_depth"], ""]
    if any(c["id"].startswith("inline-") for c in cols):
        L += ["**Guest frames.** In the `inline-*` columns tinyjit inlines the probe's direct guest "
              "calls (`--inline`): each of `descend`'s direct calls, and `main`'s, runs in its caller's "
              "native frame and is published as an inline tree (docs/API.md, \"Guest frames\"). The "
              "probe's expect file then also lists the VM's frames, innermost first, each at its `.tj` "
              "line and marked where it runs inlined, from the VM's own transitions and the inline tree "
              "the JIT compiled (`tinyjit/host/hostfns.c`). The rows that can show inline frames pass "
              "only if they show every one of those guest frames, in order, at its line, and the "
              "native frames as everywhere: gdb and lldb (live and core), libdwfl with the GDB JIT "
              "images (`mx-dwfl --inline`: libdw's scopes at each pc, as `eu-stack -i` walks them) and "
              "jitstack (live and core). perf `-g` and bpftrace name JIT code from the perf map, whose "
              "lines for guest code are named by their chain of guest functions: they must show every "
              "guest function in order, with no lines (the perf map has none). The other rows have no "
              "notion of inline frames and are judged on the native frames: the in-process unwinders, "
              "C++ exceptions and the profilers that print one name per pc; eu-stack, which reads no JIT "
              "registration and so cannot name JIT code, `-i` or not; libunwind-ptrace, which takes "
              "only the images' FDEs; and perf with the jitdump, whose format has no inline records "
              "(the innermost guest line is in its `DEBUG_INFO`, docs/API.md). With the direct calls "
              "inlined, no CALL stencil is on this stack, so `inline-nofp-exact` keeps the frame-pointer "
              "chain that `nofp-exact` loses: the frame-pointer walkers pass there.", ""]
    L += ["## The matrix", "",
          "| unwinder | " + " | ".join("`%s`" % c["id"] for c in cols) + " |",
          "|---|" + "---|" * len(cols)]
    for m in doc["methods"]:
        row = []
        for c in cols:
            cell = cells.get((m["id"], c["id"]))
            s = cell["status"] if cell else "–"
            row.append("**%s**" % s if s in ("FAIL", "XPASS", "TIMEOUT") else s)
        L.append("| %s | %s |" % (m["label"], " | ".join(row)))
    if doc["lj_columns"]:
        L += luajit_section(doc, cells)
    if doc.get("cpy_columns"):
        L += cpython_section(doc, cells)
    L += ["", "## Expected failures", "",
          "From the one table in `tests/matrix/mxxfail.py`; each is a limitation of the unwinder (or of "
          "what the mode publishes), not of the harness.", ""]
    partial = {r: bool(p) for m, c, r, *p in XFAIL}
    for status, reason, where in grouped(doc):
        if status == "XFAIL":
            L.append("- %s: %s%s" % (where.replace(" x ", " × "), reason,
                                      " (it must still show every frame-pointer-visible frame)"
                                      if partial.get(reason) else ""))
    skipped = [(r, w) for st, r, w in grouped(doc) if st == "SKIP"]
    if skipped:
        L += ["", "## Skipped", ""]
        L += ["- %s: %s" % (w.replace(" x ", " × "), r) for r, w in skipped]
    na = [(r, w) for st, r, w in grouped(doc) if st == "N/A"]
    if na:
        L += ["", "## Not applicable", ""]
        L += ["- %s: %s" % (w.replace(" x ", " × "), r) for r, w in na]
    odd = [c for c in doc["cells"] if c["status"] in ("FAIL", "XPASS")]
    if odd:
        L += ["", "## Unexpected results", ""]
        L += ["- %s × `%s`: %s: %s" % (c["method"], c["column"], c["status"], c["detail"]) for c in odd]
    late = not_judged(doc)
    if late:
        L += ["", "## Not judged", "",
              "A time limit ran out, stretched to the machine's load (time scale %s): these were "
              "neither passed nor failed, and the run failed for them." % doc.get("time_scale", "?"), ""]
        L += ["- %s × `%s`: %s" % (c.get("method") or "every instruction, " + c["unwinder"], c["column"],
                                    c.get("detail") or c.get("first_bad")) for c in late]
    if doc["steps"]:
        scols = [c for c in cols if any(s["column"] == c["id"] for s in doc["steps"])]
        steps = {(s["unwinder"], s["column"]): s for s in doc["steps"]}
        L += ["", "## Every instruction", "",
              "`tests/matrix/step.tj` stops for a tracer (`mx-step-*`; gdb and lldb driven by "
              "`mxstep_gdb.py` and `mxstep_lldb.py`), which single-steps `tj:leaf` from "
              "its first instruction through its body, a native call (`probe(0)`: `tj_rt_host` → `h_probe`) "
              "and its return, and unwinds the whole stack at every position (the debuggers: `stepi` or "
              "`thread step-inst`, then `bt`). Positions whose stack is "
              "right, of all positions; bold: 100 % required. A position in a function's trampolines "
              "has the return address of the call to it on the stack, which the region rule and "
              "frame-pointer walks do not know of.", "",
              "| unwinder | " + " | ".join("`%s`" % c["id"] for c in scols) + " |",
              "|---|" + "---|" * len(scols)]
        for uid, label, _, _ in mxsteps.UNWINDERS:
            if not any(s["unwinder"] == uid for s in doc["steps"]):
                continue
            row = []
            for c in scols:
                s = steps.get((uid, c["id"]))
                t = pct(s) if s and s.get("total") else (s["status"] if s else "–")
                row.append("**%s**" % t if s and s["required"] else t)
            L.append("| %s | %s |" % (label, " | ".join(row)))
        one = next((s for s in doc["steps"] if s.get("total")), None)
        if one:
            L += ["", "%d positions a run: %d in tj:leaf's code (its trampolines included), the rest in "
                  "`tj_rt_host`, `h_probe` and the shim's epilogue." % (one["total"], one["jit_total"])]
        order = [u[0] for u in mxsteps.UNWINDERS]
        firsts = sorted((s for s in doc["steps"] if s.get("first_bad") and s["status"] != "N/A"),
                        key=lambda s: (order.index(s["unwinder"]), col_ids.index(s["column"])))
        if firsts:
            L += ["", "First wrong position of each run below 100 %:", ""]
            L += ["- %s × `%s`: %s" % (s["unwinder"], s["column"], s["first_bad"]) for s in firsts]
    L += ["", "## How each unwinder is driven", "", "| unwinder | how |", "|---|---|"]
    L += ["| %s | %s |" % (m["label"], m["how"]) for m in doc["methods"]]
    L += ["", "## Tools", "", "| tool | version |", "|---|---|"]
    L += ["| %s | %s |" % t for t in doc["tools"]]
    L += ["", "Summary: " + summary(doc), ""]
    return "\n".join(L)


def luajit_section(doc, cells):
    """The LuaJIT block: its workload, columns and table (mxluajit.py)."""
    L = ["", "## LuaJIT", "",
         "A JIT no one here wrote: Debian's stock `luajit` (2.1.0-beta3), run without and with the "
         "jitunwind module (`luajit -l jitunwind`, integrations/luajit), on the LuaJIT integration's "
         "own workloads (integrations/luajit/tests). `probe.lua`'s hot loop becomes a trace that "
         "calls C through the FFI (`ljprobe.c`), which unwinds itself, waits for a tool to attach or "
         "aborts for a core. The expected stack comes from the workload alone: `ljprobe.c` writes its "
         "own frames, the return address into the trace and where each object is loaded; "
         "`tracelog.lua` writes LuaJIT's own trace events (which trace lives where, and the line it "
         "starts at); the script marks the line the trace is named after. It reads `ljp_inner`, "
         "`ljp_probe`, the trace (`lua:hot@probe.lua:LINE (trace N)` where the tool names JIT code), "
         "`lua_pcall`, luajit's own functions (`docall`, `pmain`, `lj_vm_cpcall`: unnamed in the "
         "stripped binary, judged by their addresses in its code), `lua_cpcall`, `main`. The "
         "profilers (perf, bpftrace) run `spin.lua`, whose hot loop does ten times the work of its "
         "cool one: they pass when at least half of the samples, and three times cool's, are named "
         "by hot's trace (the trace keeps no frame pointer, so the kernel's walk goes no further; "
         "perf's DWARF unwinder gets no unwind tables for traces packed without room after them: "
         "docs/API.md, \"Room after a blob\").", "",
         "| column | workload and mode |", "|---|---|"]
    L += ["| `%s` | %s |" % (c["id"], c["label"]) for c in doc["lj_columns"]]
    L += ["", "In `lj-guest` the trace inlines `step`, a Lua function that makes the C call "
          "(`guest.lua`). The rows that show inline frames (gdb, lldb, libdwfl with `--inline`, "
          "jitstack) pass only if they also show `lua:step@guest.lua:LINE`, at the line it is defined "
          "on, inlined into the trace, and the trace at the line of the call (the lines are the "
          "script's marks); the other rows are judged on the native frames. The profilers are not "
          "judged there (below).", "",
          "| unwinder | " + " | ".join("`%s`" % c["id"] for c in doc["lj_columns"]) + " |",
          "|---|" + "---|" * len(doc["lj_columns"])]
    for m in doc["lj_methods"]:
        row = []
        for c in doc["lj_columns"]:
            cell = cells.get((m["id"], c["id"]))
            st = cell["status"] if cell else "–"
            row.append("**%s**" % st if st in ("FAIL", "XPASS", "TIMEOUT") else st)
        L.append("| %s | %s |" % (m["label"], " | ".join(row)))
    L += ["", "Not in the LuaJIT block:", ""]
    L += ["- %s: %s" % (label, why) for label, why in doc["lj_not_run"]]
    return L


def cpython_section(doc, cells):
    """The CPython block: its workload, columns and table (mxcpython.py)."""
    L = ["", "## CPython", "",
         "A JIT no one here wrote: CPython 3.13.5's own JIT (`--enable-experimental-jit`), built by "
         "integrations/cpython three ways: the stock JIT (`make cpython-stock`: LLVM 19 for the "
         "stencils, nothing published), with the jitunwind patches (`make cpython`: every executor "
         "published, named by the Python function it runs) and with them and frame pointers "
         "(`make cpython-fp`: `--with-jit-frame-pointers`, the interpreter compiled with frame "
         "pointers). The workload is `cpyprobe.py` (integrations/cpython/tests): the trace of `hot`'s "
         "loop calls `_cpyprobe.probe` (`cpyprobe.c`, a C extension built against each interpreter's "
         "own headers) directly, and the probe unwinds itself, waits for a tool to attach, aborts for "
         "a core or spins for a sampler. The expected stack comes from the workload alone: "
         "`cpyprobe.c` writes its own frames, its return address, the traced function's code object "
         "(qualname and file), the executor of that code holding the return address (CPython's own "
         "`jit_code` and `jit_size`) and where each object is loaded; the script marks the line the "
         "trace starts at (`# mark: enter`), which names the executor. It reads `cpyp_inner`, "
         "`cpyp_probe`, the executor twice (`py:hot (cpyprobe.py:LINE)` where the tool names JIT code: "
         "the stencil copy that made the call, then the executor's trampoline), "
         "`_PyEval_EvalFrameDefault`, the interpreter's own functions (`PyEval_EvalCode`, `run_mod`, "
         "..., `Py_RunMain`: judged by their addresses in python's code, by their names where a tool "
         "gives only names), `Py_BytesMain` (python's `main` tail-calls it). The samplers (perf, "
         "bpftrace, the frame-pointer walk) take the probe spinning in `cpyp_inner` and are judged as "
         "in the tinyjit columns: 90 % of the samples in `cpyp_inner`, at least 10, show the whole "
         "stack. Every column runs with `JITUNWIND=all` and `PYTHON_JIT=1`; the stock JIT links no "
         "libjitunwind and ignores it. LLVM libunwind and nongnu libunwind are preloaded into the "
         "interpreter for their rows (it cannot be relinked: a cached build), which is also how "
         "libjitunwind finds nongnu libunwind's `_U_dyn_register` when its context opens, at "
         "start-up.", "",
         "| column | workload and mode |", "|---|---|"]
    L += ["| `%s` | %s |" % (c["id"], c["label"]) for c in doc["cpy_columns"]]
    L += ["", "| unwinder | " + " | ".join("`%s`" % c["id"] for c in doc["cpy_columns"]) + " |",
          "|---|" + "---|" * len(doc["cpy_columns"])]
    for m in doc["cpy_methods"]:
        row = []
        for c in doc["cpy_columns"]:
            cell = cells.get((m["id"], c["id"]))
            st = cell["status"] if cell else "–"
            row.append("**%s**" % st if st in ("FAIL", "XPASS", "TIMEOUT") else st)
        L.append("| %s | %s |" % (m["label"], " | ".join(row)))
    L += ["", "Not in the CPython block:", ""]
    L += ["- %s: %s" % (label, why) for label, why in doc["cpy_not_run"]]
    return L


# ---- main ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--form", choices=["full", "check", "quick"], default="full")
    ap.add_argument("--write-doc")
    ap.add_argument("--bench")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", help="comma list of method ids")
    ap.add_argument("--columns", help="comma list of column ids")
    ap.add_argument("--no-steps", action="store_true")
    ap.add_argument("--steps", help="comma list of every-instruction unwinder ids (mxsteps.UNWINDERS)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--selftest", action="store_true", help="check the harness itself first")
    ap.add_argument("--system", choices=["aarch64"],
                    help="the system VM's columns, run inside it (tests/aarch64-system)")
    args = ap.parse_args()
    all_cols = SYSTEM_COLUMNS if args.system else COLUMNS
    if args.system:
        args.no_steps = True

    build = args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build)
    ctx = Ctx(ROOT, build)
    out_dir = os.path.join(build, "matrix")
    run_root = os.path.join(out_dir, "run")
    log_dir = os.path.join(out_dir, "logs")
    for d in (run_root, log_dir):
        os.makedirs(d, exist_ok=True)

    def on_signal(sig, frame):
        print("matrix: interrupted; stopping and cleaning up", flush=True)
        mxrun.stop()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    if args.bench:
        import mxbench
        try:
            return mxbench.run(ctx, run_root, args.bench)
        finally:
            mxrun.kill_all()

    scale, how = mxrun.calibrate()
    print("matrix: time limits x %g for the machine's load (%s; MX_TIME_SCALE=N sets it)" % (scale, how),
          flush=True)
    if args.selftest:
        import mxselftest
        if mxselftest.run(ctx, run_root):
            return 1

    methods = [m for m in METHODS if not args.only or m.id in args.only.split(",")]
    col_ids = args.columns.split(",") if args.columns else (
        QUICK_COLUMNS if args.form == "quick" and not args.system else [c.id for c in all_cols])
    cols = [c for c in all_cols if c.id in col_ids]
    lj_ids = col_ids if args.columns else (
        [] if args.system or args.form == "quick" else
        CHECK_LJ_COLUMNS if args.form == "check" else [c.id for c in mxluajit.COLUMNS])
    lj_cols = [c for c in mxluajit.COLUMNS if c.id in lj_ids]
    lj_methods = [m for m in methods if m.id in mxluajit.ROWS]
    cpy_ids = col_ids if args.columns else (
        [] if args.system or args.form == "quick" else
        CHECK_CPY_COLUMNS if args.form == "check" else [c.id for c in mxcpython.COLUMNS])
    cpy_cols = [c for c in mxcpython.COLUMNS if c.id in cpy_ids]
    cpy_methods = [m for m in methods if m.id in mxcpython.ROWS]
    step_cols = [] if args.no_steps else [c for c in mxsteps.STEP_COLUMNS if c.id in (
        QUICK_STEPS if args.form == "quick" else col_ids)]
    unwinders = mxsteps.UNWINDERS[:2] if args.form == "quick" else mxsteps.UNWINDERS
    if args.steps:
        unwinders = [u for u in mxsteps.UNWINDERS if u[0] in args.steps.split(",")]

    t0 = time.monotonic()
    tty = sys.stdout.isatty()
    print("unwind matrix (%s form): %d unwinders x %d columns, every instruction in %d modes, "
          "LuaJIT %d x %d, CPython %d x %d, %d jobs" % (
              args.form, len(methods), len(cols), len(step_cols), len(lj_methods), len(lj_cols),
              len(cpy_methods), len(cpy_cols), args.jobs), flush=True)
    if lj_cols:
        why = mxluajit.missing(ctx)
        if why:
            print("matrix: the LuaJIT block is skipped: " + why, flush=True)
    if cpy_cols:
        why = mxcpython.missing(ctx)
        if why:
            print("matrix: the CPython block is skipped: " + why, flush=True)
    cells, steps = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_cell, ctx, m, c, run_root, args.keep) for m in methods for c in cols]
        futs += [pool.submit(run_cell, ctx, m, c, run_root, args.keep) for m in lj_methods for c in lj_cols]
        futs += [pool.submit(run_cell, ctx, m, c, run_root, args.keep) for m in cpy_methods for c in cpy_cols]
        futs += [pool.submit(run_steps, ctx, c, u, run_root, args.keep) for c in step_cols for u in unwinders]
        for f in concurrent.futures.as_completed(futs):
            res, log = f.result()
            name = ("steps__%s__%s" % (res["unwinder"], res["column"]) if "unwinder" in res
                    else "%s__%s" % (res["method"], res["column"]))
            with open(os.path.join(log_dir, name + ".log"), "w") as lf:
                lf.write("\n".join(log) + "\n")
            (steps if "unwinder" in res else cells).append(res)
            if res["status"] in ("FAIL", "XPASS", "TIMEOUT") and not mxrun.stopping.is_set():
                print("  %s %s: %s" % (paint(res["status"], res["status"], tty), name, 
                                       res.get("detail") or res.get("first_bad")), flush=True)
    mxrun.kill_all()
    try:
        os.rmdir(run_root)
    except OSError:
        pass
    if mxrun.stopping.is_set():
        return 130

    doc = {"form": args.form, "system": args.system, "probe_depth": __import__("mxmethods").DEPTH,
           "columns": [{"id": c.id, "label": c.label, "workload": c.workload} for c in cols],
           "methods": [{"id": m.id, "label": m.label, "how": m.how} for m in methods],
           "lj_columns": [{"id": c.id, "label": c.label, "workload": c.workload} for c in lj_cols],
           "lj_methods": [{"id": m.id, "label": m.label} for m in lj_methods],
           "lj_not_run": [(m.label, mxluajit.NOT_RUN[m.id]) for m in METHODS if m.id in mxluajit.NOT_RUN],
           "cpy_columns": [{"id": c.id, "label": c.label, "workload": c.workload} for c in cpy_cols],
           "cpy_methods": [{"id": m.id, "label": m.label} for m in cpy_methods],
           "cpy_not_run": [(m.label, mxcpython.NOT_RUN[m.id]) for m in METHODS if m.id in mxcpython.NOT_RUN],
           "cells": sorted(cells, key=lambda c: ([m.id for m in methods].index(c["method"]),
                                                 [c2.id for c2 in cols + lj_cols + cpy_cols].index(
                                                     c["column"]))),
           "steps": sorted(steps, key=lambda s: (s["unwinder"], s["column"])),
           "xfail": [{"methods": m, "columns": c, "reason": r} for m, c, r, *_ in XFAIL],
           "tools": tool_versions() if args.write_doc else [],
           "time_scale": scale, "load": how,
           "seconds": round(time.monotonic() - t0, 1)}
    doc["summary"] = summary(doc)
    with open(os.path.join(out_dir, "matrix.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(terminal_table(doc, tty))
    if args.write_doc:
        with open(args.write_doc if os.path.isabs(args.write_doc) else os.path.join(ROOT, args.write_doc),
                  "w") as f:
            f.write(markdown(doc))
    bad, late = problems(doc), not_judged(doc)
    print("matrix: %s (%.0f s); logs in %s; JSON in %s" % (doc["summary"], doc["seconds"],
                                                            os.path.relpath(log_dir),
                                                            os.path.relpath(os.path.join(out_dir, "matrix.json"))))
    if bad:
        print(paint("matrix: %d unexpected results" % len(bad), "FAIL", tty))
    if late:
        print(paint("matrix: %d not judged: a time limit ran out at time scale %g (the machine's load "
                    "at the start: %s); they neither passed nor failed, and the run fails for them: run "
                    "again on a quieter machine or with a larger MX_TIME_SCALE" % (len(late), scale, how),
                    "TIMEOUT", tty))
    return exit_code(doc)


if __name__ == "__main__":
    sys.exit(main())
