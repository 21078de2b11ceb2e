#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_frames.py EXPECT [--fp] [--by-address] [--allow-unnamed-jit] < FRAMES

Judge the frames a tool reported against the child's expect file.

FRAMES: one frame per line, innermost first: "NAME", "0xADDR" or
"0xADDR NAME".  EXPECT: lines "name lo hi kind fp|-" written by the child.

From the first frame that is c_inner, the frames must match the expected
ones one for one down to main.  --fp expects only the frames a frame-pointer
walk can see (the "fp" lines).  --by-address judges each frame by its
address (a return address, so the call is at address-1, except for the
innermost frame) instead of its name.  --allow-unnamed-jit accepts an
address-only frame in place of a JIT frame if its address is inside the
blob (for tools that find JIT frames but cannot name them).
Exit 0 on a match, 1 otherwise.
"""
import sys


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    fp_only = "--fp" in args
    by_addr = "--by-address" in args
    allow_unnamed = "--allow-unnamed-jit" in args
    expect = []
    with open(args[0]) as f:
        for line in f:
            name, lo, hi, kind, fp = line.split()
            if fp_only and fp != "fp":
                continue
            expect.append((name, int(lo, 16), int(hi, 16), kind))
    frames = []
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        addr, name = None, None
        if parts[0].startswith("0x"):
            addr = int(parts[0], 16)
            name = parts[1] if len(parts) > 1 else None
        else:
            name = parts[0]
        frames.append((addr, name))

    def label(i):
        addr, name = frames[i]
        if by_addr and addr is not None:
            pc = addr - (1 if i else 0)
            for e in expect:
                if e[1] <= pc < e[2]:
                    return e[0]
            return "?"
        return name or "?"

    got = [label(i) for i in range(len(frames))]
    print("got:      " + " ".join(got))
    print("expected: " + " ".join(e[0] for e in expect))
    first = got.index("c_inner") if "c_inner" in got else -1
    ok = first >= 0 and len(got) - first >= len(expect)
    if ok:
        for k, e in enumerate(expect):
            g = got[first + k]
            if g == e[0]:
                continue
            addr = frames[first + k][0]
            pc = None if addr is None else addr - (1 if first + k else 0)
            if (allow_unnamed and e[3] != "c" and pc is not None
                    and e[1] <= pc < e[2] and g in ("?", "??", None)):
                continue
            ok = False
            break
    print("result: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
