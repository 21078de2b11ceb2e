#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""license-headers.py [--check | --list] - give every file git tracks an
SPDX-License-Identifier line naming MIT, in a comment of its own syntax,
unless it already has one or .reuse/dep5 lists it as a file that cannot carry one
(data, corpora, golden and historic copies); the license texts and the
one-line manual-page links (.so) are left alone too.

Where the line goes:
  - at the top, after a shebang (#!), a PHP open tag or a manual page's
    first comment line, for sources, scripts, build files and documents;
  - at the end, for the guest programs whose line numbers tools print and
    the docs quote (tinyjit's .tj, Lua, JavaScript, Java, PHP), so that no
    line moves.

--check lists the files that lack the line and exits 1 if there are any
(t-every-file-states-its-license runs it); --list prints the tree's files
(git's list, or outside a checkout every file but what the build makes).  A file whose kind is not
known here is reported, never guessed at.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys

TAG = "SPDX-License-" + "Identifier: MIT"  # in two pieces, so that this line is no tag

# comment syntax -> (prefix, suffix)
HASH = ("# ", "")
C = ("/* ", " */")
SLASH = ("// ", "")
HTML = ("<!-- ", " -->")
ROFF = ('.\\" ', "")
LUA = ("-- ", "")

BY_EXT = {
    ".c": C, ".h": C, ".cc": C, ".def": C, ".map": C,
    ".sh": HASH, ".py": HASH, ".mk": HASH, ".awk": HASH, ".supp": HASH, ".suppr": HASH,
    ".in": HASH, ".lintian-overrides": HASH, ".install": HASH, ".guest": HASH, ".coverage-ignore": HASH,
    ".md": HTML, ".1": ROFF, ".3": ROFF, ".proto": SLASH, ".cjs": SLASH,
    ".tj": HASH, ".lua": LUA, ".js": SLASH, ".java": SLASH, ".php": SLASH,
}
BY_NAME = {
    "Makefile": HASH, "rules": HASH, "control": HASH, "PACKAGES": HASH, "exports": HASH, "run": HASH,
    ".gitignore": HASH, ".clang-format": HASH, ".clang-format-ignore": HASH,
}
AT_END = {".tj", ".lua", ".js", ".java", ".php"}


def dep5_patterns(root):
    """The Files patterns of .reuse/dep5's paragraphs other than "*"."""
    pats, cur = [], None
    with open(os.path.join(root, ".reuse", "dep5")) as f:
        for line in f:
            if line.startswith("Files:"):
                cur = line[len("Files:"):].split()
            elif cur is not None and line[:1] in " \t" and line.strip():
                cur += line.split()
            else:
                if cur:
                    pats += [p for p in cur if p != "*"]
                cur = None
    if cur:
        pats += [p for p in cur if p != "*"]
    return pats


def covered(path, pats):
    # dep5's "*" matches "/" too, as fnmatch's does
    return any(fnmatch.fnmatchcase(path, p) for p in pats)


def syntax(path):
    name = os.path.basename(path)
    if name in BY_NAME:
        return BY_NAME[name]
    for ext, s in BY_EXT.items():
        if name.endswith(ext):
            return s
    return None


def insert(path, text, style):
    line = style[0] + TAG + style[1] + "\n"
    ext = os.path.splitext(path)[1]
    if ext in AT_END:
        return text + ("" if text.endswith("\n") or not text else "\n") + line
    lines = text.splitlines(keepends=True)
    at = 0
    if lines and (lines[0].startswith("#!") or lines[0].startswith("<?php")):
        at = 1
    elif style is ROFF and lines and lines[0].startswith('.\\"'):
        at = 1
    return "".join(lines[:at] + [line] + lines[at:])


# Outside a git checkout (a `git archive`, as check-fresh unpacks), what
# the build and its tools make, as .gitignore names it.
BUILT_DIRS = ("build", ".git", "__pycache__")
BUILT_IN_DEBIAN = ("build", "tmp", ".debhelper", "libjitunwind0", "libjitunwind-dev", "jitstack",
                   "lua-jitunwind")


def source_files(root):
    """The files of the tree: git's list, or a walk that leaves out what
    the build makes."""
    # A fresh Debian root has no git at all: walk the tree there too.
    if os.path.exists(os.path.join(root, ".git")) and shutil.which("git"):
        git = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, text=True)
        if git.returncode == 0:
            return [p for p in git.stdout.split("\0") if p]
    files = []
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if not (rel == "." and x.startswith(BUILT_DIRS))
                   and x not in ("__pycache__", ".git")
                   and not (rel == "debian" and x in BUILT_IN_DEBIAN)]
        for n in names:
            p = os.path.normpath(os.path.join(rel, n))
            if n.endswith(".o") or n == "core" or re.fullmatch(r"core\.[0-9]+", n) or \
                    n.startswith(("vgcore.", "perf.data")):
                continue
            if rel == "debian" and (n in ("files", "debhelper-build-stamp") or
                                    n.endswith((".substvars", ".debhelper.log"))):
                continue
            files.append(p)
    return sorted(files)


def main():
    args = sys.argv[1:]
    check = args == ["--check"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    if args == ["--list"]:
        print("\n".join(source_files(root)))
        return 0
    pats = dep5_patterns(root)
    files = source_files(root)
    missing, unknown = [], []
    for path in filter(None, files):
        if covered(path, pats) or path in ("LICENSE", ".reuse/dep5") or path.startswith("LICENSES/"):
            continue
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        if TAG in text:
            continue
        if text.startswith(".so ") and text.count("\n") <= 1:
            continue  # a manual page's link: one line (t-man-pages-render-without-warnings)
        style = syntax(path)
        if style is None:
            unknown.append(path)
            continue
        if check:
            missing.append(path)
            continue
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(insert(path, text, style))
    for p in missing:
        print("no %s line: %s" % (TAG, p))
    for p in unknown:
        print("no known comment syntax (add the line by hand, or list it in .reuse/dep5): %s" % p)
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
