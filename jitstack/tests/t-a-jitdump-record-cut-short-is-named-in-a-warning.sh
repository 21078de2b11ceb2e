# SPDX-License-Identifier: MIT
# A jitdump whose last record runs past the end of the file (a writer
# killed in the middle of a record, a copy cut short) loses that record:
# jitstack says so once, naming the record and where the file ends.
# The core of a child that published through the jitdump alone
# (JITUNWIND=jitdump) is read with --jitdump FILE, copies of its dump:
#  - the whole copy: no such warning;
#  - cut 4 bytes into the prefix of the last CODE_DEBUG_INFO or
#    CODE_UNWINDING_INFO record (at byte X, S bytes long: found here by
#    walking the records as perf's jitdump specification lays them out):
#    one warning, "the KIND record of S bytes at byte X runs past the end
#    of the file at byte X+20: not read", in the dump (read for its
#    stacks) and in --images (read whole);
#  - cut 8 bytes into that record, before its prefix is whole: "the record
#    at byte X is cut short at byte X+8";
#  - cut inside the header: "its header is cut short".
# Before, each was dropped without a word.
. "$(dirname "$0")/lib.sh"
need_file "$TB/child" "make tests"
mkdir -p dumps
make_core env JITDUMPDIR="$PWD/dumps" JITUNWIND=jitdump "$TB/child" abort
dump=$(ls dumps/.debug/jit/*/jit-*.dump dumps/jit-*.dump 2>/dev/null | head -1)
[ -n "$dump" ] && [ -s "$dump" ] || { find dumps; fail "the child wrote no jitdump"; }
cp "$dump" whole.dump
# the last DEBUG_INFO (2) or UNWINDING_INFO (4) record: "OFFSET SIZE KIND"
cat > last.py <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
off = struct.unpack_from("<I", b, 8)[0]  # the header's total_size
last = None
while off + 16 <= len(b):
    kind, size = struct.unpack_from("<II", b, off)
    if kind in (2, 4):
        last = (off, size, {2: "CODE_DEBUG_INFO", 4: "CODE_UNWINDING_INFO"}[kind])
    off += size
print(*last)
PY
set -- $(python3 last.py whole.dump)
X=$1 S=$2 KIND=$3
[ -n "$KIND" ] || fail "no DEBUG_INFO or UNWINDING_INFO record in the child's jitdump"
note "the last $KIND record: $S bytes at byte $X"

warnings() { grep -cE "jitdump [^ ]*: (the .*record .*(runs past the end|cut short)|its header is cut short)" "$1"; }

limit 60 "$JS" --core "$CORE" --jitdump whole.dump > whole.out 2> whole.err || { cat whole.err; fail "the whole dump: exit $?"; }
[ "$(warnings whole.err)" = 0 ] || { cat whole.err; fail "a warning of a cut record in the whole dump"; }

head -c $((X + 20)) whole.dump > cut.dump
want="jitdump cut.dump: the $KIND record of $S bytes at byte $X runs past the end of the file at byte $((X + 20)): not read"
for form in "" --images; do
	limit 60 "$JS" --core "$CORE" --jitdump cut.dump $form > cut.out 2> cut.err || { cat cut.err; fail "cut dump $form: exit $?"; }
	grep -qF "$want" cut.err || { cat cut.err; fail "cut dump $form: no warning \"$want\""; }
	[ "$(warnings cut.err)" = 1 ] || { cat cut.err; fail "cut dump $form: not one warning of the cut record"; }
done
note "$want"

head -c $((X + 8)) whole.dump > prefix.dump
limit 60 "$JS" --core "$CORE" --jitdump prefix.dump > prefix.out 2> prefix.err || { cat prefix.err; fail "prefix cut: exit $?"; }
grep -qF "jitdump prefix.dump: the record at byte $X is cut short at byte $((X + 8)): not read" prefix.err ||
	{ cat prefix.err; fail "a prefix cut short is not named"; }

head -c 20 whole.dump > header.dump
limit 60 "$JS" --core "$CORE" --jitdump header.dump > header.out 2> header.err || { cat header.err; fail "header cut: exit $?"; }
grep -qF "jitdump header.dump: its header is cut short at byte 20: the file is not read" header.err ||
	{ cat header.err; fail "a header cut short is not named"; }
pass "a jitdump record or header cut short is named once in a warning, with where the file ends"
