# genexc.py - generators and exceptions through hot loops: a pipeline of
# generators, and a function that raises for the squares that are 2 modulo 7, caught by
# its caller (the exception leaves and re-enters the traces);
# bench/cpython/run.sh times it.  genexc.py [N]
#
# SPDX-License-Identifier: MIT
import sys


class Odd(Exception):
    pass


def numbers(n):
    for i in range(n):
        yield i


def squares(it):
    for i in it:
        yield i * i


def check(x):
    if x % 7 == 2:
        raise Odd(x)
    return x


def run(n):
    total = caught = 0
    for x in squares(numbers(n)):
        try:
            total += check(x)
        except Odd:
            caught += 1
    return total, caught


if __name__ == "__main__":
    print(*run(int(sys.argv[1]) if len(sys.argv) > 1 else 2000000))
