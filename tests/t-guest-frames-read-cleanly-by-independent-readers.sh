# SPDX-License-Identifier: MIT
# The DWARF of guest frames, read by parsers that share no code with the
# writer: every image test-guest-frames checked with libdw (scopes and rows
# at every offset, through merges, rebuilds and reused slots) passes
# llvm-dwarfdump-19 --verify and is read without a complaint by readelf and
# eu-readelf; and llvm-symbolizer-19 --inlines finds, at the call in the
# guest child's image, the frames guest.expect derives from the tree.
. "$(dirname "$0")/lib.sh"
need_cmd readelf
need_cmd eu-readelf
need_cmd llvm-dwarfdump-19
need_cmd llvm-symbolizer-19
"$TB/test-guest-frames" > unit.out || { tail -20 unit.out; fail "test-guest-frames"; }
n=0
for f in guest-*.o; do
	[ -f "$f" ] || fail "test-guest-frames wrote no image"
	n=$((n + 1))
	llvm-dwarfdump-19 --verify "$f" > verify.out 2>&1 && grep -q '^No errors' verify.out ||
		{ tail verify.out; fail "llvm-dwarfdump --verify $f"; }
	readelf -W --debug-dump=info,rawline,aranges "$f" > readelf.out 2> readelf.err
	[ -s readelf.err ] && { cat readelf.err; fail "readelf complained about $f"; }
	grep -iq warning readelf.out && { grep -i warning readelf.out; fail "readelf warned on $f"; }
	eu-readelf -winfo -wline -waranges "$f" > eu.out 2> eu.err
	[ -s eu.err ] && { cat eu.err; fail "eu-readelf complained about $f"; }
done
grep -q DW_TAG_inlined_subroutine readelf.out || fail "the last image has no inlined subroutine"
"$TB/guest-child" dump > child.out 2>&1 || { cat child.out; fail "guest-child dump"; }
llvm-symbolizer-19 --inlines --obj=guest.o "$(cat guest.addr)" > sym.out ||
	fail "llvm-symbolizer on guest.o"
# its output: NAME, then FILE:LINE:COLUMN, per frame, innermost first
awk 'NF { if (n++ % 2) { sub(/:[0-9]+$/, ""); print name, $0 } else name = $0 }' sym.out > got
grep ' ' guest.expect > want
cmp -s got want || { cat sym.out; echo "want:"; cat want; fail "llvm-symbolizer --inlines"; }
pass "$n images verified; llvm-symbolizer shows $(wc -l < want) frames at the call"
