# shapes.py - traces of other shapes than hot.py's, each waiting in
# time.sleep called from JIT code (for a debugger to attach to, or a core):
#
#   shapes.py side   side's loop takes one branch 1000 times, then the
#                    other: the trace's guard fails each time, its side
#                    exit gets hot and becomes an executor of its own,
#                    entered from the first one's; it calls time.sleep
#   shapes.py gen    gen's loop, a generator's, calls time.sleep and
#                    yields, for a consumer's loop
#   shapes.py exc    catch's loop calls fail, which sleeps and raises
#                    ValueError; catch catches it: every iteration raises
#                    out of the trace and is caught
#
# Each warms its loop up, prints "ready", then runs it again with a delay
# of 0 but for the last iteration's, 60 s.  The tests read the lines
# marked "# mark: NAME" (lib.sh mark).
#
# SPDX-License-Identifier: MIT
import sys
import time


def side(n, flip, delays):
    total = 0
    for i in range(n):
        if i < flip:
            total += 1
        else:
            time.sleep(delays[i])  # mark: side-sleep
        total -= 1  # mark: side-enter
    return total


def gen(n, delays):
    for i in range(n):
        time.sleep(delays[i])  # mark: gen-sleep
        yield i  # mark: gen-yield


def consume(n, delays):
    total = 0
    for v in gen(n, delays):
        total += v  # mark: consume-enter
    return total


def fail(x, delay):
    time.sleep(delay)  # mark: exc-sleep
    raise ValueError(x)


def catch(n, delays):
    caught = 0
    for i in range(n):
        try:
            fail(i, delays[i])  # mark: exc-call
        except ValueError:
            caught += 1
        caught -= 0  # mark: exc-enter
    return caught


def run(shape, n, last):
    delays = [0.0] * (n - 1) + [last]
    if shape == "side":
        return side(n, 1000, delays)
    if shape == "gen":
        return consume(n, delays)
    return catch(n, delays)


if __name__ == "__main__":
    shape = sys.argv[1]
    run(shape, 2000, 0.0)
    print("ready", flush=True)
    print(run(shape, 2000, 60.0))
