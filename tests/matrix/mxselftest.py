# SPDX-License-Identifier: MIT
"""mxselftest.py - the harness checked against itself, before the matrix
trusts it (`matrix.py --selftest`, part of `make matrix-check`).

1. The judge fails what it must fail: a missing JIT frame, a wrong or
   missing name where the tool names JIT code, an extra frame, a truncated
   stack, an address outside the function; it accepts a missing optional
   frame and nothing else.  Of several stacks (ASan's allocation and free)
   one wrong one fails the cell; the report parsers keep one frame per pc
   and per inlined group, and count bpftrace's samples.  In an inline
   column the guest frames must all be there, in order, at their lines.
   In the LuaJIT block a run of the host's unnamed frames is taken by
   address, and never in place of the frame that follows it; a trace's
   name keeps its "(trace N)"; a profile passes on its share of samples
   named by the hot trace.  In the CPython block an executor's name keeps
   its "(FILE:LINE)" in every tool's output; the executor must show twice
   (its stencil's frame and its trampoline's); a run of the interpreter's
   frames is taken by address or, from a tool that gives only names, by
   python's own function names, never anything else.
2. Time: every limit is stretched by the cell's time scale (the machine's
   load, or MX_TIME_SCALE); a sampler collects in rounds until it has
   enough samples, within its bound; a cell that runs out of time is
   TIMEOUT, not judged (never FAIL, never XFAIL), counted apart, and fails
   the run all the same; each message says what was required and what was
   seen.
3. A tool that hangs is killed after the time limit, with what it started,
   and the cell is TIMEOUT, saying so; the workload's /tmp/perf-PID.map is
   removed and the scratch directory with it.
"""
import os
import shutil
import stat
import time

import mxjudge as J
import mxmethods
import mxrun

failures = []


def check(name, cond):
    print("  %s %s" % ("ok  " if cond else "FAIL", name))
    if not cond:
        failures.append(name)


def judge_cases():
    blobs = {"tj:f": (0x1000, 0x1100, 0x10f0), "tj:main": (0x1100, 0x1200, 0x1200)}
    specs = [J.Spec("inner", 0x500, 0x510, "c"), J.Spec("tj:f", 0x1000, 0x1100, "jit"),
             J.Spec("shim", 0x600, 0x608, "c", opt=True), J.Spec("tj:main", 0x1100, 0x1200, "jit"),
             J.Spec("main", 0x700, 0x780, "c")]
    e = J.Expect(specs, blobs)
    good = [(0x40, "libc_fn"), (0x505, "inner"), (0x1011, "tj:f"), (0x601, "shim"), (0x1181, "tj:main"),
            (0x741, "main"), (0x99, "__libc_start_main")]
    ok = lambda frames, **kw: J.judge(frames, e, **kw)[0]
    check("the right stack passes", ok(good, names_jit=True))
    check("a missing optional frame passes", ok(good[:3] + good[4:], names_jit=True))
    check("a missing JIT frame fails", not ok(good[:2] + good[3:], names_jit=True))
    check("a missing C frame fails", not ok(good[:5], names_jit=True))
    check("a wrong JIT name fails", not ok(good[:2] + [(0x1011, "tj:main")] + good[3:], names_jit=True))
    unnamed = good[:2] + [(0x1011, None)] + good[3:]
    check("an unnamed JIT frame fails where the tool names JIT code", not ok(unnamed, names_jit=True))
    check("an unnamed JIT frame passes where it cannot", ok(unnamed, names_jit=False))
    check("an address outside the blob fails", not ok(good[:2] + [(0x1201, "tj:f")] + good[3:]))
    check("an extra frame fails", not ok(good[:3] + [(0x9999, "junk")] + good[3:]))
    check("no innermost frame fails", not ok(good[2:]))
    check("a return address at a function's end belongs to it", ok(
        good[:5] + [(0x780, None)], names_jit=True))
    fp = [J.Spec("inner", 0x500, 0x510, "c"), J.Spec("mid", 0x520, 0x530, "c", fp=False),
          J.Spec("main", 0x700, 0x780, "c")]
    efp = J.Expect(fp, {})
    frames = [(0x505, None), (0x741, None)]
    check("fp_only skips the frames a frame-pointer walk cannot see",
          J.judge(frames, efp, fp_only=True)[0] and not J.judge(frames, efp)[0])
    parser_cases(e, good)
    guest_cases()
    luajit_cases()
    cpython_cases()


def cpython_cases():
    """The CPython block (mxcpython.py): executor names with spaces and
    parentheses, the executor twice, a run of python's own frames judged
    by address or by name."""
    ex = "py:hot (cpyprobe.py:25)"
    specs = [J.Spec("cpyp_inner", 0x500, 0x510, "c"), J.Spec("cpyp_probe", 0x520, 0x540, "c"),
             J.Spec(ex, 0x1000, 0x2000, "jit"), J.Spec(ex, 0x1000, 0x2000, "jit"),
             J.Spec("_PyEval_EvalFrameDefault", 0x8000, 0x8800, "c"),
             J.Spec("python's own code", 0x4000, 0x9000, "c", opt=True, many=True,
                    names={"PyEval_EvalCode", "run_mod", "Py_RunMain", "pymain_run_python"}),
             J.Spec("Py_BytesMain", 0x8900, 0x8940, "c")]
    e = J.Expect(specs, {ex: (0x1000, 0x2000, 0x2000)})
    top = [(0x505, "cpyp_inner"), (0x531, "cpyp_probe"), (0x1279, ex), (0x102d, ex), (0x8011, None)]
    run = [(0x5001, None), (0x6001, None)]
    tail = [(0x8911, "Py_BytesMain")]
    ok = lambda frames, names_jit=True: J.judge(frames, e, names_jit=names_jit)[0]
    check("cpython: the executor twice, then the interpreter, passes", ok(top + run + tail))
    check("cpython: the executor once fails", not ok(top[:3] + top[4:] + run + tail))
    check("cpython: the executor by another line fails",
          not ok(top[:2] + [(0x1279, "py:hot (cpyprobe.py:24)")] + top[3:] + run + tail))
    check("cpython: an unnamed executor passes where the tool names no JIT code",
          ok(top[:2] + [(0x1279, None), (0x102d, None)] + top[4:] + run + tail, names_jit=False))
    named = [(None, "cpyp_inner"), (None, "cpyp_probe"), (None, ex), (None, ex),
             (None, "_PyEval_EvalFrameDefault"), (None, "PyEval_EvalCode"),
             (None, "pymain_run_python.constprop.0"), (None, "Py_BytesMain")]
    check("cpython: python's own frames known by name only (perf) pass", ok(named))
    check("cpython: a name that is not python's in the run fails",
          not ok(named[:5] + [(None, "dlopen")] + named[5:]))
    gdb = ("#4  0x0000000000000531 in cpyp_probe (self=<optimized out>, arg=0x1) at cpyprobe.c:200\n"
           "#5  0x0000000000001279 in py:hot (cpyprobe.py:25) () at cpyprobe.py:24\n"
           "#6  0x000000000000102d in py:hot (cpyprobe.py:25) () at cpyprobe.py:25\n")
    check("gdb: an executor's name keeps its (FILE:LINE)",
          J.parse_gdb(gdb)[1:] == [(0x1279, ex), (0x102d, ex)])
    lldb = "    frame #5: 0x0000000000001279 JIT(0x1)`py:hot (cpyprobe.py:25) at cpyprobe.py:24\n"
    check("lldb: an executor's name keeps its (FILE:LINE)",
          J.parse_lldb("frame #0: 0x1 a`b\n" + lldb)[1] == (0x1279, ex))
    bpf = ("@[\n\t1279 py:hot (cpyprobe.py:25)+633 (/tmp/perf-1.map)\n"
           "\t102d py:cold exit 7+45 (/tmp/perf-1.map)\n]: 1\n")
    check("bpftrace: an executor's name keeps its (FILE:LINE), a cold exit its number",
          J.parse_bpftrace(bpf) == [[(0x1279, ex), (0x102d, "py:cold exit 7")]])
    eu = "#5  0x0000000000001279 - 1 py:hot (cpyprobe.py:25)\n"
    check("eu-stack: an executor's name keeps its (FILE:LINE)", J.parse_eu_stack(eu) == [(0x1279, ex)])
    js = ('{"threads": [{"tid": 1, "frames": ['
          '{"index": 0, "pc": "0x1279", "function": "py:hot (cpyprobe.py:25)", "inlined": false},'
          '{"index": 1, "pc": "0x4100", "function": "<module>", "python": true, "inlined": false},'
          '{"index": 2, "pc": "0x4100", "function": "_PyEval_EvalFrameDefault", "inlined": false}]}]}')
    check("jitstack: a Python frame (read from the interpreter) is no native frame",
          J.parse_jitstack(js) == [(0x1279, ex), (0x4100, "_PyEval_EvalFrameDefault")])


def luajit_cases():
    """The LuaJIT block: a run of frames in luajit's own code (unnamed in
    the stripped binary) between lua_pcall and lua_cpcall, trace names
    with spaces, and the profilers' share of samples in the hot trace."""
    import mxluajit
    trace = "lua:hot@probe.lua:19 (trace 1)"
    specs = [J.Spec("ljp_probe", 0x500, 0x510, "c"), J.Spec(trace, 0x1000, 0x1100, "jit"),
             J.Spec("lua_pcall", 0x8000, 0x8100, "c"),
             J.Spec("luajit's own code", 0x4000, 0x9000, "c", opt=True, many=True),
             J.Spec("lua_cpcall", 0x8200, 0x8240, "c"), J.Spec("main", 0x4100, 0x4200, "c")]
    e = J.Expect(specs, {trace: (0x1000, 0x1100, 0x1100)})
    top = [(0x505, "ljp_probe"), (0x1011, trace), (0x8011, None)]
    run = [(0x5001, None), (0x6001, None), (0x7001, None)]
    tail = [(0x8211, "lua_cpcall"), (0x4111, "main")]
    ok = lambda frames: J.judge(frames, e, names_jit=True)[0]
    check("luajit: a run of its own frames between lua_pcall and lua_cpcall passes", ok(top + run + tail))
    check("luajit: no such frame at all passes (the run is optional)", ok(top + tail))
    check("luajit: the run does not swallow lua_cpcall", not ok(top + run + tail[1:]))
    check("luajit: a frame outside luajit's code in the run fails",
          not ok(top + run[:1] + [(0x70000001, "libc_fn")] + run[1:] + tail))
    check("luajit: the run takes no frame known only by name", not ok(top + [(None, "docall")] + tail))
    check("luajit: a missing trace fails", not ok(top[:1] + top[2:] + run + tail))
    check("luajit: the trace by another number fails",
          not ok([top[0], (0x1011, "lua:hot@probe.lua:19 (trace 2)")] + top[2:] + run + tail))
    gdb = ("#4  0x00007f0000000505 in ljp_probe (i=10000) at ljprobe.c:131\n"
           "#5  0x0000000000001011 in lua:hot@probe.lua:19 (trace 1) () at probe.lua:19\n"
           "#6  0x0000000000008011 in lua_pcall ()\n")
    check("gdb: a trace's name keeps its (trace N)", J.parse_gdb(gdb)[1] == (0x1011, trace))
    lldb = "    frame #5: 0x0000000000001011 JIT(0x1)`lua:hot@probe.lua:19 (trace 1) at probe.lua:19\n"
    check("lldb: a trace's name keeps its (trace N)", J.parse_lldb("frame #0: 0x1 a`b\n" + lldb)[1] ==
          (0x1011, trace))
    eu = "#5  0x0000000000001011 - 1 lua:hot@probe.lua:19 (trace 1)\n"
    check("eu-stack: a trace's name keeps its (trace N)", J.parse_eu_stack(eu) == [(0x1011, trace)])
    bpf = "@[\n\t1011 lua:hot@spin.lua:14 (trace 1)+17 (/tmp/perf-1.map)\n]: 1\n"
    check("bpftrace: a trace's name keeps its (trace N)",
          J.parse_bpftrace(bpf) == [[(0x1011, "lua:hot@spin.lua:14 (trace 1)")]])
    guest = ("#5  0x0000000000001011 in lua:step@guest.lua:15 () at guest.lua:15\n"
             "#6  lua:hot@guest.lua:22 (trace 1) () at guest.lua:23\n")
    check("gdb: a trace's inline frame and the trace, at their lines",
          J.guests_gdb(guest) == [("lua:step@guest.lua:15", "guest.lua:15"),
                                  ("lua:hot@guest.lua:22 (trace 1)", "guest.lua:23")])
    hot, cool = "lua:hot@spin.lua:14 (trace 1)", "lua:cool@spin.lua:20 (trace 2)"
    want = mxluajit.Leaves([hot], [cool])
    leaves = lambda h, c, o: mxluajit.judge_leaves(
        [[(None, hot)]] * h + [[(None, cool)]] * c + [[(0x1234, None)]] * o, want)[0]
    check("profile: samples mostly in hot's trace pass", leaves(150, 20, 30))
    check("profile: hot's trace unnamed (bare addresses) fails", not leaves(0, 0, 200))
    check("profile: less than half in hot's trace fails", not leaves(90, 10, 100))
    check("profile: hot's not three times cool's fails", not leaves(120, 50, 0))
    check("profile: too few samples fail", not leaves(40, 5, 0))
    why = mxluajit.judge_leaves([[(None, hot)]] * 40, want)[1]
    check("profile: too few samples say how many were seen and required (%s)" % why,
          why == "40 samples, but 50 are required")
    why = mxluajit.judge_leaves([[(None, hot)]] * 40 + [[(None, cool)]] * 20, want)[1]
    check("profile: a poor share says what was required (%s)" % why,
          "20 in cool's, but 61 in hot's are required (half of all, and more than three times cool's)" in why)


def guest_cases():
    """In an inline column the guest frames are judged too: every VM
    frame, inlined or not, in order, at its line; each tool's report is
    read as that tool prints it."""
    e = J.Expect([], {}, guests=[("tj:leaf", "p.tj:5", True), ("tj:f", "p.tj:9", False),
                                 ("tj:main", "p.tj:2", False)])
    ok = lambda got, lines=True: J.judge_guests(got, e, lines)[0]
    gdb = ("#6  0x00007f0000000010 in tj:leaf () at /x/p.tj:5\n#7  tj:f () at /x/p.tj:9\n"
           "#8  0x0000555500000010 in tj_shim_call ()\n#9  0x00007f0000000110 in tj:main () at /x/p.tj:2\n")
    check("gdb: inline frames at their lines pass", ok(J.guests_gdb(gdb)))
    check("gdb: the inline frame's native frame is the function it is inlined into",
          [n for _, n in J.parse_gdb(gdb)] == ["tj:f", "tj_shim_call", "tj:main"])
    no_tree = gdb.replace("tj:leaf () at /x/p.tj:5\n#7  tj:f () at /x/p.tj:9", "tj:f () at /x/p.tj:5")
    check("gdb: a stack without the inline frame fails", not ok(J.guests_gdb(no_tree)))
    check("gdb: a guest frame at another line fails", not ok(J.guests_gdb(gdb.replace("p.tj:9", "p.tj:8"))))
    check("gdb: an extra guest frame fails", not ok(J.guests_gdb(gdb + "#10 tj:main () at /x/p.tj:2\n")))
    lldb = ("  * frame #0: 0x0000000000000500 x`inner at x.c:1\n"
            "    frame #6: 0x00007f0000000010 JIT(0x1)`tj:f [inlined] tj:leaf at p.tj:5\n"
            "    frame #7: 0x00007f0000000004 JIT(0x1)`tj:f at p.tj:9\n"
            "    frame #8: 0x00007f0000000110 JIT(0x1)`tj:main at p.tj:2\n")
    check("lldb: inline frames at their lines pass", ok(J.guests_lldb(lldb)))
    check("lldb: the frame after an [inlined] one is the same native frame",
          J.parse_lldb(lldb) == [(0x500, "inner"), (0x7f0000000010, "tj:f"), (0x7f0000000110, "tj:main")])
    dwfl = ("0x7f0000000010 tj:leaf at /x/p.tj:5 inlined\n0x7f0000000010 tj:f at /x/p.tj:9\n"
            "0x7f0000000110 tj:main at /x/p.tj:2\n")
    check("mx-dwfl --inline: inline frames at their lines pass", ok(J.guests_addr_name(dwfl)))
    check("mx-dwfl --inline: an inlined line is no native frame",
          J.parse_addr_name(dwfl) == [(0x7f0000000010, "tj:f"), (0x7f0000000110, "tj:main")])
    js = ('{"threads": [{"frames": [{"function": "tj:leaf", "file": "/x/p.tj", "line": 5, "inlined": true},'
          ' {"function": "tj:f", "file": "/x/p.tj", "line": 9}, {"function": "tj:main", "file": "/x/p.tj",'
          ' "line": 2}]}]}')
    check("jitstack: inline frames at their lines pass", ok(J.guests_jitstack(js)))
    check("jitstack: an inline frame not shown fails",
          not ok(J.guests_jitstack(js.replace('"tj:leaf"', '"c_fn"'))))
    perf = "  7 \n\t7f0000000010 tj:leaf <- tj:f+0x10\n\t7f0000000110 tj:main+0x10\n\n"
    chains = J.perf_chains(perf)
    check("perf map chains: the guest functions in order pass (no lines)", ok(chains[0], lines=False))
    check("perf map chains: a chain missing its inline fails",
          not ok(J.perf_chains(perf.replace("tj:leaf <- ", ""))[0], lines=False))
    check("perf: a chain's native frame is its last function",
          J.parse_perf(perf)[0] == [(None, "tj:f"), (None, "tj:main")])
    bpf = "@[\n\t7f0000000010 tj:leaf <- tj:f+16 (/tmp/perf-1.map)\n\t7f0000000110 tj:main+16 (/tmp/p.map)\n]: 2\n"
    check("bpftrace: chains read per sample", len(J.bpftrace_chains(bpf)) == 2 and
          ok(J.bpftrace_chains(bpf)[0], lines=False))
    check("bpftrace: a chain's native frame is its last function",
          J.parse_bpftrace(bpf)[0] == [(0x7f0000000010, "tj:f"), (0x7f0000000110, "tj:main")])


def parser_cases(e, good):
    """The report parsers keep what the judge must see, and the judge of
    several stacks fails when one of them is wrong."""
    from matrix import verdict
    short = good[:2] + good[3:]
    both = mxmethods.Outcome(e, stacks={"allocated": good, "freed": good}, names_jit=True)
    one_bad = mxmethods.Outcome(e, stacks={"allocated": good, "freed": short}, names_jit=True)
    check("two right stacks pass", verdict(both)[0])
    check("one wrong stack of two fails", not verdict(one_bad)[0])
    asan = ("==1==ERROR: AddressSanitizer: heap-use-after-free\n"
            "    #0 0x505 in inner x.c:1\n    #1 0x1011  (<unknown module>)\n"
            "    #2 0x1181  (<unknown module>)\n    #3 0x741 in inlined x.c:2\n"
            "    #4 0x741 in main x.c:3\n\nfreed by thread T0 here:\n    #0 0x505 in inner x.c:1\n"
            "    #1 0x1181  (<unknown module>)\n")
    st = J.parse_asan(asan)
    check("ASan: a pc listed once per inlined function is one frame",
          [a for a, _ in st["access"]] == [0x505, 0x1011, 0x1181, 0x741])
    check("ASan: a free stack missing a JIT frame fails", not J.judge(st["freed"], e)[0])
    heap = ("1 calls to allocation functions with 1B peak consumption from\n"
            "  inner\n    in /x\n  0x1011\n    in ??\n  0x1181\n    in ??\n"
            "  inlined\n    at x.c:2\n    in /x\n  main\n    at x.c:3\n")
    check("heaptrack: an inlined function's frame is the function it is inlined into",
          J.parse_heaptrack(heap) == [(None, "inner"), (0x1011, None), (0x1181, None), (None, "main")])
    bpf = "@[\n\t505 inner+5 (/x)\n\t1011 0x1011 ([unknown])\n\t1181 tj:main+129 (/tmp/p.map)\n]: 3\n"
    samples = J.parse_bpftrace(bpf)
    check("bpftrace: a stack counts its samples; an address printed as the name is no name",
          len(samples) == 3 and samples[0][1] == (0x1011, None) and samples[0][2] == (0x1181, "tj:main"))


def time_cases(ctx, run_root):
    """Limits follow the load; samplers go on until they have enough; a
    cell out of time is not judged; the messages say required and seen."""
    for part in (limit_cases, sample_message_cases, not_judged_cases):
        try:
            part(ctx, run_root)
        except Exception as e:  # a harness without what is checked fails, never stops the test
            check("%s: %s: %s" % (part.__name__, type(e).__name__, e), False)


def limit_cases(ctx, run_root):
    log = []
    cell = mxrun.Cell(run_root, "selftest-time", log)
    try:
        check("a cell's time scale is the machine's load, at least 1 (%g)" % cell.scale, cell.scale >= 1)
        cell.scale = 3
        check("a limit is stretched by the time scale", cell.limit(30) == 90)
        check("a stretched limit says so (%s)" % cell.scaled(30),
              cell.scaled(30) == "90 s (30 s x 3 for the machine's load)")
        scale, how = mxrun.calibrate(0.05)
        check("the calibration measures the load, at least 1 (%g: %s)" % (scale, how),
              scale >= 1 and ("busy loop" in how or "MX_TIME_SCALE" in how))
        old = os.environ.get("MX_TIME_SCALE")
        try:
            os.environ["MX_TIME_SCALE"] = "4"
            check("MX_TIME_SCALE overrides the measure", mxrun._override() == 4.0)
            os.environ["MX_TIME_SCALE"] = "fast"
            try:
                mxrun._override()
                bad = None
            except SystemExit as e:
                bad = str(e)
            check("a bad MX_TIME_SCALE is a clear error (%s)" % bad, bad and "'fast'" in bad)
        finally:
            if old is None:
                os.environ.pop("MX_TIME_SCALE", None)
            else:
                os.environ["MX_TIME_SCALE"] = old

        # rounds of sampling: the fake tool takes 4 samples a second, all in the spin
        rounds = []
        count = lambda r: (r[0], r[1], "in probe_spin")

        def take(secs):
            rounds.append(secs)
            n = int(4 * secs)
            return n, n
        got = cell.sample(take, count, 10, 1.5)
        check("a sampler goes on in longer rounds until it has enough samples (%s)" % rounds,
              len(rounds) == 2 and rounds[1] > rounds[0] and got[0] >= 10)
        old_bound = mxrun.SAMPLE_BOUND
        mxrun.SAMPLE_BOUND = 0.2  # less than a second: one round only
        try:
            try:
                cell.sample(lambda secs: (3, 3), count, 10, 1.5)
                why = None
            except mxrun.Timeout as e:
                why = str(e)
            check("too few samples within the bound is a time-out, not a result (%s)" % why,
                  why is not None and why.startswith("3 samples, all in probe_spin, in 1 round") and
                  why.endswith("but 10 in probe_spin are required"))
            got = cell.sample(lambda secs: (3, 40), count, 10, 1.5)
            check("enough samples, too few of them in the spin, is judged (a failure)", got == (3, 40))
        finally:
            mxrun.SAMPLE_BOUND = old_bound
    finally:
        cell.cleanup()


def sample_message_cases(ctx, run_root):
    """The judge's messages: required and seen."""
    from matrix import judge_samples
    specs = [J.Spec("probe_spin", 0x500, 0x510, "c"), J.Spec("main", 0x700, 0x780, "c")]
    e = J.Expect(specs, {})
    good, bad = [(0x505, "probe_spin"), (0x741, "main")], [(0x505, "probe_spin")]
    ok, why = judge_samples([good] * 3, e, False)
    check("3 samples in the spin: '%s'" % why,
          not ok and why == "3 samples, all in probe_spin, but 10 in probe_spin are required")
    ok, why = judge_samples([good] * 3 + [[(0x900, None)]] * 40, e, False)
    check("43 samples, 3 in the spin: '%s'" % why,
          not ok and why == "43 samples, 3 of them in probe_spin, but 10 in probe_spin are required")
    ok, why = judge_samples([good] * 35 + [bad] * 5, e, False)
    check("35 of 40 right: '%s'" % why.split(";")[0],
          not ok and why.startswith("35 of the 40 samples in probe_spin show the whole stack (36 required)"))
    check("36 of 40 right pass", judge_samples([good] * 36 + [bad] * 4, e, False)[0])


def not_judged_cases(ctx, run_root):
    """A cell out of time: TIMEOUT, even where a failure is expected;
    counted apart; the run fails."""
    import matrix

    def out_of_time(ctx, col, cell):
        raise mxrun.Timeout("gdb did not finish in 120 s: killed")
    fake = mxmethods.Method("gdb-live", "gdb live", out_of_time, "")
    col = next(c for c in mxmethods.COLUMNS if c.id == "fp-region")
    res, _ = matrix.run_cell(ctx, fake, col, run_root, keep=False)
    check("a cell out of time is TIMEOUT, not judged (%s: %s)" % (res["status"], res["detail"]),
          res["status"] == "TIMEOUT" and res["detail"] == "not judged: gdb did not finish in 120 s: killed")
    xcol = next(c for c in mxmethods.COLUMNS if c.id == "nofp-none")
    fake = mxmethods.Method("fp-walk", "fp walk", out_of_time, "")
    xres, _ = matrix.run_cell(ctx, fake, xcol, run_root, keep=False)
    check("an expected failure out of time is TIMEOUT too, not XFAIL (%s, expected %s)" % (
        xres["status"], xres["expected"]), xres["status"] == "TIMEOUT" and xres["expected"] != "pass")
    passed = dict(res, status="PASS", detail="fine")
    doc = {"cells": [passed, res], "steps": [], "columns": [], "lj_columns": [], "time_scale": 2}
    check("the summary counts it apart (%s)" % matrix.summary(doc),
          "1 PASS, 0 XFAIL, 0 SKIP, 0 N/A, 0 FAIL, 0 XPASS, 1 TIMEOUT (not judged)" in matrix.summary(doc))
    check("it is not a failure of the tool", not matrix.problems(doc))
    check("but the run does not pass", matrix.exit_code(doc) == 1 and
          matrix.exit_code(dict(doc, cells=[passed])) == 0)


def hang_case(ctx, run_root):
    """gdb replaced by a script that hangs (and leaves a grandchild)."""
    fake = os.path.join(run_root, "selftest-bin")
    shutil.rmtree(fake, ignore_errors=True)
    os.makedirs(fake)
    pids = os.path.join(fake, "pids")
    with open(os.path.join(fake, "gdb"), "w") as f:
        f.write("#!/bin/sh\nsleep 1000 &\necho $$ $! > '%s'\nexec sleep 1000\n" % pids)
    os.chmod(os.path.join(fake, "gdb"), stat.S_IRWXU)
    old_path, old_timeout = os.environ["PATH"], mxmethods.TOOL_TIMEOUT
    os.environ["PATH"] = fake + ":" + old_path
    mxmethods.TOOL_TIMEOUT = 2
    try:
        from matrix import run_cell
        method = next(m for m in mxmethods.METHODS if m.id == "gdb-live")
        col = next(c for c in mxmethods.COLUMNS if c.id == "fp-region")
        t0 = time.monotonic()
        res, log = run_cell(ctx, method, col, run_root, keep=False)
        took = time.monotonic() - t0
    finally:
        os.environ["PATH"], mxmethods.TOOL_TIMEOUT = old_path, old_timeout
    check("a hanging tool's cell is not judged (%s), not failed" % res["status"], res["status"] == "TIMEOUT")
    limit = "%g s" % (2 * res["scale"]) if res["scale"] == 1 else \
        "%.0f s (2 s x %g for the machine's load)" % (2 * res["scale"], res["scale"])
    check("the cell says it was killed, and after how long: %s" % res["detail"],
          res["detail"] == "not judged: gdb did not finish in %s: killed" % limit)
    check("within the limit (%.1f s)" % took, took < 30 * res["scale"])
    def still_running(pid):
        # a live, non-zombie process that is still the fake tool's sleep or
        # shell (not a recycled pid)
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat_ = f.read()
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            return False
        return stat_.split(") ")[1][0] != "Z" and (b"sleep" in cmd or b"gdb" in cmd)
    # a killed process group takes a moment to go on a loaded machine
    deadline = time.monotonic() + 5
    while True:
        alive = [p for p in open(pids).read().split() if still_running(p)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    check("the tool and what it started are gone", not alive)
    workload = [l for l in log if l.startswith("$ ") and l.endswith(" &")]
    check("the workload was started", bool(workload))
    check("the scratch directory is removed", not os.path.exists(os.path.join(run_root, "gdb-live__fp-region")))
    maps = [l for l in os.listdir("/tmp") if l.startswith("perf-")]
    leftover = [m for m in maps if any(m == "perf-%s.map" % p for p in _pids_in(log))]
    check("the workload's perf map is removed", not leftover)
    shutil.rmtree(fake, ignore_errors=True)


def _pids_in(log):
    import re
    return [m.group(1) for l in log for m in [re.search(r"-p (\d+)", l)] if m]


def run(ctx, run_root):
    print("matrix self-test: the judge")
    judge_cases()
    print("matrix self-test: time")
    try:
        time_cases(ctx, run_root)
    finally:
        mxrun.kill_all()
    print("matrix self-test: a hanging tool")
    try:
        hang_case(ctx, run_root)
    finally:
        mxrun.kill_all()
    print("matrix self-test: %s" % ("%d failed" % len(failures) if failures else "all passed"))
    return 1 if failures else 0
