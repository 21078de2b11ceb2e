# SPDX-License-Identifier: MIT
# A program that refers to __jit_debug_descriptor directly gets a copy
# relocation: its own .dynsym defines the descriptor (the copy, where the
# list lives) beside libjitunwind.so's definition (left empty).  jitstack
# reads both, from the .dynsym of each, and finds the published entry in
# the program's copy, in a core of the program stopped at its trap.
. "$(dirname "$0")/lib.sh"
P=$TB/test-gdb-copy-relocation
need_file "$P" "make tests"
readelf -rW "$P" | grep -q 'R_X86_64_COPY.*__jit_debug_descriptor' ||
	skip "the test program has no copy relocation of the descriptor (compiler default)"
make_core env LD_LIBRARY_PATH="$BUILD" "$P" trap
limit 60 "$JS" --core "$CORE" --json > core.json 2> core.err || { cat core.err; fail "jitstack exited $?"; }
python3 - core.json <<'PY' || fail "the two definitions are not read as the program's copy and the library's"
import json, sys
ds = json.load(open(sys.argv[1]))["jit"]["descriptors"]
print("  descriptors:", [(d["module"].rsplit("/", 1)[-1], d["entries"]) for d in ds])
prog = [d for d in ds if d["module"].endswith("/test-gdb-copy-relocation")]
lib = [d for d in ds if "/libjitunwind.so" in d["module"]]
sys.exit(0 if len(ds) == 2 and len(prog) == 1 and len(lib) == 1 and prog[0]["entries"] >= 1
         and lib[0]["entries"] == 0 else 1)
PY
pass "a copy-relocated descriptor: both definitions read, the entry found in the program's copy"
