#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-deps.py - prove that scripts/install-deps.sh installs everything the
build and the tests used.

  check-deps.py [--drop PKG]... [--expect-missing PKG] TRACE...

TRACE files list the paths the build and the tests opened (tests/tools/
opentrace writes them).  Each path is mapped to the Debian package that owns
it (dpkg's file lists, as `dpkg -S` reads them).  A fresh Debian 12 machine
has the packages `debootstrap --variant=minbase` installs (Essential and
Priority: required, and apt), plus make; install-deps.sh then installs its
lists with --no-install-recommends, which brings their Depends and
Pre-Depends and nothing else.  Any owner outside that closure is a package
a fresh machine would not have: it is named, with the files that need it,
and the exit status is 1.

--drop PKG leaves PKG out of install-deps.sh's list (as if a line were
deleted from it); --expect-missing PKG inverts the verdict: exit 0 only if
the check fails and names PKG.  Together they show the check can fail.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPKG_INFO = "/var/lib/dpkg/info"
# What a fresh machine has before install-deps.sh runs: make is the one
# package the quick start asks for by hand.
BASE_EXTRA = ["apt", "make"]
# Files that are read because they are there, never because the build or a
# test asks for them: on a machine without them nothing changes.  A package
# that owns one is taken as present, with its Depends (LLVMgold.so brings
# libLLVM).  make check-fresh is the proof that nothing real hides here.
INCIDENTAL = [
    (re.compile(r"^/etc/"), "configuration, read where present (ld.so.conf.d, locale.alias, ...)"),
    (re.compile(r"/libnss_[^/]*\.so[^/]*$"), "NSS modules, loaded as /etc/nsswitch.conf names them"),
    (re.compile(r"\.pth$"), "Python's site module reads every .pth file of its package directories"),
    (re.compile(r"/(LLVMgold|liblto_plugin)[^/]*\.so[^/]*$"), "ld and ar load every plugin in /usr/lib/bfd-plugins"),
    (re.compile(r"^/usr/bin/lsb_release$"), "lldb runs it, where it is installed, to name the distribution"),
    (re.compile(r"^/usr/share/fonts/"), "fontconfig (Chromium) lists every font installed"),
    (re.compile(r"^/usr/lib/llvm-[0-9]+/bin/llvm-objdump$"),
     "pprof tries llvm-objdump first, where it is on the PATH, before binutils' objdump"),
    (re.compile(r"\.(egg-info/PKG-INFO|dist-info/METADATA)$"),
     "Python's importlib.metadata reads every installed distribution's metadata (reuse, as it starts)"),
    (re.compile(r"^/usr/lib/python3/dist-packages/apt"),
     "python-debian's deb822 (reuse reading .reuse/dep5) takes apt_pkg where installed, else parses itself"),
    (re.compile(r"^/usr/bin/git$"),
     "license-headers.py lists a checkout's files with git where it is installed, else walks the tree"),
]
# Merged /usr: dpkg lists /lib/x, /bin/x ... while the kernel reports the
# path it opened, /usr/lib/x.
MERGED = ("/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/")


def installed_packages():
    """name -> (essential_or_required, provides, [dependency groups])."""
    fmt = "${Package}\\t${db:Status-Abbrev}\\t${Essential}\\t${Priority}\\t${Provides}\\t${Pre-Depends}\\t${Depends}\\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fmt], check=True, capture_output=True, text=True).stdout
    pkgs = {}
    for line in out.splitlines():
        name, status, essential, priority, provides, predeps, deps = (line.split("\t") + [""] * 7)[:7]
        if not status.startswith("ii"):
            continue
        base = essential == "yes" or priority == "required"
        groups = parse_deps(predeps) + parse_deps(deps)
        prev = pkgs.get(name)
        if prev:  # the same package for a second architecture
            base = base or prev[0]
            groups = prev[2] + groups
        pkgs[name] = (base, [bare(p) for p in provides.split(",") if p.strip()], groups)
    return pkgs


def bare(dep):
    """'libc6:any (>= 2.34)' -> 'libc6'."""
    return re.sub(r"\s*\(.*?\)|\s*\[.*?\]|\s*<.*?>", "", dep).strip().split(":")[0]


def parse_deps(field):
    """'a (>= 1), b | c' -> [['a'], ['b', 'c']]."""
    return [[bare(alt) for alt in g.split("|")] for g in field.split(",") if g.strip()]


def closure(start, pkgs):
    """Every installed package that installing START with Depends and
    Pre-Depends (no Recommends) brings.  Of alternatives, a group already
    satisfied adds nothing; otherwise the first alternative installed here
    (as a package or through Provides) is taken, as apt would."""
    providers = {}
    for name, (_, provides, _) in pkgs.items():
        for v in provides:
            providers.setdefault(v, []).append(name)

    def candidates(name):
        return ([name] if name in pkgs else []) + providers.get(name, [])

    have = set()
    todo = [p for p in start if p in pkgs]
    pending = []
    while todo or pending:
        # plain dependencies first, to a fixpoint ...
        while todo:
            p = todo.pop()
            if p in have:
                continue
            have.add(p)
            for group in pkgs[p][2]:
                if len(group) == 1 and group[0] in pkgs:
                    todo.append(group[0])
                else:
                    pending.append(group)
        # ... then alternatives and virtual packages
        for group in pending:
            alts = [c for a in group for c in candidates(a)]
            if alts and not any(a in have for a in alts):
                todo.append(alts[0])
        pending = []
    return have


def owners():
    """path -> set of packages, from dpkg's file lists."""
    own = {}
    for lst in glob.glob(os.path.join(DPKG_INFO, "*.list")):
        pkg = os.path.basename(lst)[:-5].split(":")[0]
        with open(lst, errors="replace") as f:
            for path in f:
                own.setdefault(path.rstrip("\n"), set()).add(pkg)
    return own


def owner_of(path, own):
    if path in own:
        return own[path]
    if path.startswith("/usr/") and path[4:].startswith(MERGED):
        return own.get(path[4:])
    return None


def wanted(drop):
    out = subprocess.run(["sh", os.path.join(ROOT, "scripts/install-deps.sh"), "--list", "build", "test"],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p not in drop]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--expect-missing")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()

    paths, untraced = set(), []
    for t in a.traces:
        with open(t, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("#untraced:") or line.startswith("#overflow:"):
                    untraced.append(line[1:])
                elif line and not line.startswith("#"):
                    paths.add(line)
    if untraced:
        print("check-deps: skipped: the suite ran untraced (%s)" % untraced[0])
        return 77
    if not paths:
        print("check-deps: skipped: the trace is empty")
        return 77

    pkgs = installed_packages()
    want = wanted(a.drop)
    base = [p for p, (b, _, _) in pkgs.items() if b] + BASE_EXTRA
    own = owners()
    incidental = set()
    for path in paths:
        if any(rx.search(path) for rx, _ in INCIDENTAL):
            incidental |= owner_of(path, own) or set()
    have = closure(base + want + sorted(incidental), pkgs)

    if a.expect_missing and not any(a.expect_missing in (owner_of(p, own) or ()) for p in paths):
        print("check-deps: self-test skipped: no traced file belongs to %s (nothing was built in this "
              "build directory under the trace: make clean, then make check)" % a.expect_missing)
        return 77
    missing, used, unowned = {}, set(), 0
    for path in sorted(paths):
        o = owner_of(path, own)
        if not o:
            unowned += 1
            continue
        used |= o
        if not (o & have):
            for p in o:
                missing.setdefault(p, []).append(path)

    if a.expect_missing:
        if a.expect_missing in missing:
            print("check-deps: without %s in install-deps.sh the check fails and names it (%d files)"
                  % (", ".join(a.drop) or "nothing", len(missing[a.expect_missing])))
            return 0
        print("check-deps: FAIL: with %s dropped from install-deps.sh, %s was not reported missing"
              % (", ".join(a.drop), a.expect_missing))
        return 1
    if missing:
        print("check-deps: FAIL: the build and tests used packages that scripts/install-deps.sh does not install:")
        for p in sorted(missing):
            files = missing[p]
            print("  %s: %s%s" % (p, files[0], " (+%d more)" % (len(files) - 1) if len(files) > 1 else ""))
        return 1
    print("check-deps: %d files from %d packages, all installed by install-deps.sh or on a minimal Debian "
          "(%d files owned by no package; read only where present: %s)"
          % (len(paths) - unowned, len(used), unowned, " ".join(sorted(incidental - closure(base + want, pkgs)))
             or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
