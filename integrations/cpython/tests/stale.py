# stale.py - an executor freed and its memory taken by the next one:
# first's loop is traced, then its executors are invalidated
# (_testinternalcapi.invalidate_executors: the JIT frees their code), and
# second's loop is traced, its executor mapped where first's was freed
# (the kernel hands the same pages back; the test checks that it did).
# Then second waits in time.sleep called from its trace, for a debugger.
# Prints "ready" before the wait; the lines marked "# mark: NAME" are read
# by the tests (lib.sh mark).
#
# SPDX-License-Identifier: MIT
import _testinternalcapi
import time


def first(n):
    t = 0
    for i in range(n):
        t += i  # mark: first-enter
    return t


def second(n, delays):
    t = 0
    for i in range(n):
        time.sleep(delays[i])  # mark: second-sleep
        t += i  # mark: second-enter
    return t


if __name__ == "__main__":
    first(1000)
    _testinternalcapi.invalidate_executors(first.__code__)
    second(1000, [0.0] * 1000)
    print("ready", flush=True)
    second(1000, [0.0] * 999 + [60.0])
