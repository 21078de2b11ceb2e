#!/bin/sh
# SPDX-License-Identifier: MIT
# check.sh - the matrix in the form `make check` runs (tests/run.sh matrix):
# the self-test, then every cell; an unexpected FAIL or an unexpected PASS
# fails it.  MATRIX_ARGS passes options to matrix.py.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
# Under the sanitizers the workloads are other programs (ASan's runtime
# turns core dumps off, valgrind cannot run them): the matrix judges
# unwinders on the normal build.
[ "${SAN:-}" = 1 ] && { echo "skip: under SAN=1 (the matrix judges the normal build: make matrix-check)"; exit 77; }
# shellcheck disable=SC2086
exec python3 "$ROOT/tests/matrix/matrix.py" --build "$BUILD" --form check --selftest ${MATRIX_ARGS:-}
