# SPDX-License-Identifier: MIT
# Every arena image (x86-64, and an AArch64 one built on this host) is read
# without an error or warning by readelf, eu-readelf and llvm-dwarfdump-19,
# and llvm-dwarfdump's verifier accepts its DWARF.  The images come from
# test-image-readers, which checked them with libdw at every pc.
. "$(dirname "$0")/lib.sh"
need_cmd readelf
need_cmd eu-readelf
need_cmd llvm-dwarfdump-19
"$TB/test-image-readers" > readers.out || { cat readers.out; fail "test-image-readers"; }
n=0
for f in arena-*.o aarch64.o; do
	[ -f "$f" ] || fail "no image $f was written"
	n=$((n + 1))
	readelf -W -a --debug-dump=frames,rawline,info,aranges "$f" > readelf.out 2> readelf.err
	[ -s readelf.err ] && { cat readelf.err; fail "readelf complained about $f"; }
	grep -iq 'warning' readelf.out && { grep -i warning readelf.out; fail "readelf warned on $f"; }
	grep -q 'DW_CFA_def_cfa' readelf.out || fail "readelf shows no CFA rules in $f"
	eu-readelf -a -wframes -winfo -wline -waranges "$f" > eu.out 2> eu.err
	[ -s eu.err ] && { cat eu.err; fail "eu-readelf complained about $f"; }
	llvm-dwarfdump-19 --verify "$f" > verify.out 2>&1 || { tail verify.out; fail "llvm-dwarfdump --verify $f"; }
	grep -q '^No errors' verify.out || { tail verify.out; fail "llvm-dwarfdump --verify $f"; }
	llvm-dwarfdump-19 --eh-frame --debug-line --debug-aranges "$f" > dd.out 2>&1 ||
		fail "llvm-dwarfdump on $f"
	grep -Eiq 'error|warning|invalid' dd.out && { grep -Ei 'error|warning|invalid' dd.out | head; fail "llvm-dwarfdump complained about $f"; }
	grep -q 'CFA=' dd.out || fail "llvm-dwarfdump shows no CFA rows in $f"
done
# The AArch64 image speaks AArch64: its FP frame puts the CFA on x29 (W29 in
# llvm-dwarfdump's notation) after the prologue.
llvm-dwarfdump-19 --eh-frame aarch64.o | grep -q 'CFA=W29+16' || fail "aarch64 rules"
pass "$n images read cleanly by readelf, eu-readelf and llvm-dwarfdump-19"
