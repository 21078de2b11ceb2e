# pyhot.py - a CPU-bound Python program for jitstack's Python flame graph
# (README): main() calls hot(), which does nine times the work of cool(),
# again and again; hot's work goes through a method and a generator.
#   python3 pyhot.py
# SPDX-License-Identifier: MIT


class Grid:
    def cell(self, i):
        return (i * 7) % 13


def squares(n):
    for i in range(n):
        yield i * i


def hot(grid):
    total = 0
    for i in squares(9000):
        total += grid.cell(i)
    return total


def cool(grid):
    return sum(grid.cell(i) for i in range(1000))


def main():
    grid = Grid()
    while True:
        hot(grid)
        cool(grid)


main()
