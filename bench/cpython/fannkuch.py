# fannkuch.py - the fannkuch-redux permutation benchmark (list slicing and
# reversal, integer loops); bench/cpython/run.sh times it.  fannkuch.py [N]
#
# SPDX-License-Identifier: MIT
import sys


def fannkuch(n):
    perm1 = list(range(n))
    count = [0] * n
    max_flips = checksum = 0
    r = n
    sign = 1
    while True:
        while r != 1:
            count[r - 1] = r
            r -= 1
        perm = perm1[:]
        flips = 0
        k = perm[0]
        while k:
            perm[: k + 1] = perm[k::-1]
            flips += 1
            k = perm[0]
        max_flips = max(max_flips, flips)
        checksum += flips * sign
        sign = -sign
        while True:
            if r == n:
                return checksum, max_flips
            first = perm1[0]
            for i in range(r):
                perm1[i] = perm1[i + 1]
            perm1[r] = first
            count[r] -= 1
            if count[r] > 0:
                break
            r += 1


if __name__ == "__main__":
    print(*fannkuch(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
