# pyshapes.py - a Python program whose threads, and a forked child, stop
# in code of other shapes than pyframes.py's, for the Python frame
# reader's tests (t-python-frames-of-coroutines-*.sh): coroutines run by
# asyncio's event loop (their frames owned by the coroutine objects, with
# asyncio's own frames between them and the thread's function), a class
# body, code run by exec() from a string, and a child made by os.fork()
# whose one thread goes on from the fork.
# SPDX-License-Identifier: MIT
#
# Every line a frame of this file stops at ends with "#@TAG";
# pyshapes.expect lists each role's frames of this file by those tags,
# and those of the exec'd string (SOURCE, "<pyshapes-exec>") by its
# lines.  Each parks by printing
# "parked NATIVE-TID ROLE" (the child: "parked NATIVE-TID fork PID") and
# sleeping at the same line.
#   python3 pyshapes.py
import _thread
import asyncio
import os
import threading
import time

ROLES = ("coro", "cls", "exec")
all_in = threading.Barrier(len(ROLES) + 1)


def park(role, extra=b""):
    os.write(1, b"parked %d %s%s\n" % (threading.get_native_id(), role.encode(), extra))
    time.sleep(1000)  #@park


async def inner():
    park("coro")  #@coro-inner


async def outer():
    await inner()  #@coro-outer


def run_coro():
    all_in.wait()
    asyncio.run(outer())  #@coro-run


def run_class():
    all_in.wait()

    class Shape:  #@cls-class
        park("cls")  #@cls-body

    return Shape


SOURCE = "\n\ndef shaped():\n    park('exec')\n\nshaped()\n"


def run_exec():
    all_in.wait()
    exec(compile(SOURCE, "<pyshapes-exec>", "exec"), {"park": park})  #@exec-run


def main():
    for f in (run_coro, run_class, run_exec):
        _thread.start_new_thread(f, ())
    all_in.wait()
    time.sleep(0.2)
    child = os.fork()
    if child == 0:
        park("fork", b" %d" % os.getpid())  #@fork-child
    park("main")  #@main-park


main()  #@module-main
