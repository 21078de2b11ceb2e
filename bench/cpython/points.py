# points.py - objects and method calls: make points, normalise each, keep
# the largest coordinates (attribute loads and stores, small methods,
# allocation); bench/cpython/run.sh times it.  points.py [N]
#
# SPDX-License-Identifier: MIT
import math
import sys


class Point:
    __slots__ = ("x", "y", "z")

    def __init__(self, i):
        self.x = x = math.sin(i)
        self.y = math.cos(i) * 3
        self.z = (x * x) / 2

    def normalize(self):
        norm = math.sqrt(self.x * self.x + self.y * self.y + self.z * self.z)
        self.x /= norm
        self.y /= norm
        self.z /= norm

    def maximize(self, other):
        self.x = self.x if self.x > other.x else other.x
        self.y = self.y if self.y > other.y else other.y
        self.z = self.z if self.z > other.z else other.z
        return self


def run(n):
    points = [Point(i) for i in range(n)]
    for p in points:
        p.normalize()
    best = points[0]
    for p in points[1:]:
        best = best.maximize(p)
    return best


if __name__ == "__main__":
    total = 0.0
    for _ in range(10):
        b = run(int(sys.argv[1]) if len(sys.argv) > 1 else 100000)
        total += b.x + b.y + b.z
    print(f"{total:.6f}")
