#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh [BUILD] - make bench-scale: jitstack against eu-stack and gdb on JIT
# processes of 1k to 1M functions (run.py says what and how).
exec python3 "$(dirname "$0")/run.py" "${1:-build}"
