# SPDX-License-Identifier: MIT
# jitstack names native frames from its own index of each module's symbols
# (unwind/symindex.c) instead of libdwfl's pass over the whole table per
# lookup.  The index must answer as dwfl_module_addrinfo does, at every
# address: symindex_check compares the two, with the table read in place
# and through libdwfl, on
# - a shared object built to hold the cases libdwfl's rules tell apart: a
#   global and a weak alias of one function, a local at a global's
#   address, functions nested in a larger one, a weak one that holds a
#   nearer global, sizeless global and local labels (alone, at a sized
#   symbol's end, and where a sized local follows), an absolute symbol,
#   data and TLS objects, and 80 functions inside one large one (more than
#   the index walks back before it asks libdwfl); every address of it;
# - real modules: libc (its .dynsym), php8.2 when installed (.dynsym
#   only), and jitstack itself (.symtab); around each symbol.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/symindex_check" "make jitstack-check"

{
	echo '	.text'
	echo '	.globl big; .type big,@function'
	echo 'big:	.skip 0x40'
	echo '	.globl inner; .type inner,@function'
	echo 'inner:	.skip 0x40'
	echo '	.size inner, 0x40'
	echo '	.weak wk; .type wk,@function'
	echo '	.globl alias; .type alias,@function'
	echo 'wk:'
	echo 'alias:	.skip 0x20'
	echo '	.size wk, 0x20'
	echo '	.size alias, 0x20'
	echo '	.type loc,@function'
	echo 'loc:	.skip 0x10'
	echo '	.size loc, 0x20'
	echo '	.globl glabel'
	echo 'glabel:	.skip 0x10'
	echo '	.type loc2,@function'
	echo 'loc2:	.skip 0x80'
	echo '	.size loc2, 0x40'
	echo '	.weak wfar; .type wfar,@function'
	echo 'wfar:	.skip 0x20'
	echo '	.globl gnear; .type gnear,@function'
	echo 'gnear:	.skip 0x20'
	echo '	.size gnear, 0x10'
	echo '	.size wfar, 0x40'
	echo '	.type lshadow,@function'
	echo 'lshadow: .skip 0x10'
	echo '	.size lshadow, 0x10'
	i=0
	while [ $i -lt 80 ]; do
		echo "	.globl many$i; .type many$i,@function"
		echo "many$i:	.skip 8"
		echo "	.size many$i, 4"
		i=$((i + 1))
	done
	echo '	.skip 0x100'
	echo '	.size big, . - big'
	echo '	.globl lone'
	echo 'lone:	.skip 0x20'
	echo 'llabel:	.skip 0x20'
	echo '	.globl after; .type after,@function'
	echo 'after:	.skip 0x40'
	echo '	.size after, 0x10'
	echo '	.globl same1, same2; .weak same3; .type same1,@function; .type same2,@function; .type same3,@function'
	echo 'same1:'
	echo 'same2:'
	echo 'same3:'
	echo 'lsame:	.skip 0x40'
	echo '	.size same1, 0x20'
	echo '	.size same2, 0x10'
	echo '	.size same3, 0x8'
	echo '	.size lsame, 0x4'
	echo '	.globl edge'
	echo 'edge:	.skip 0x10'
	echo '	.type loc3,@function'
	echo 'loc3:	.skip 0x10'
	echo '	.size loc3, 0x10'
	echo 'tail:	.skip 0x20'
	echo '	.globl absval; .set absval, 0x123'
	echo '	.data'
	echo '	.globl obj; .type obj,@object'
	echo 'obj:	.skip 0x30'
	echo '	.size obj, 0x30'
	echo '	.section .tbss,"awT",@nobits'
	echo '	.globl tlsv; .type tlsv,@object'
	echo 'tlsv:	.skip 8'
	echo '	.size tlsv, 8'
} > tricky.S
cc -shared -nostdlib -o tricky.so tricky.S || fail "cannot build tricky.so"

limit 60 "$JTB/symindex_check" --every tricky.so > every.out 2>&1 || { cat every.out; fail "tricky.so"; }
note "$(grep -m1 'read in place' every.out)"
real="$JS" 
libc=$(ldd "$JS" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -n "$libc" ] || fail "no libc in ldd $JS"
php=$(command -v php8.2 || true)
[ -n "$php" ] || note "php8.2 is not installed: its .dynsym is left out"
limit 300 "$JTB/symindex_check" "$libc" $php "$real" > real.out 2>&1 || { cat real.out; fail "real modules"; }
grep 'read in place' real.out | while read -r l; do note "$l"; done
pass "$(tail -1 every.out | sed 's/symindex_check: //') on every address of tricky.so; $(tail -1 real.out | sed 's/symindex_check: //') on real modules"
