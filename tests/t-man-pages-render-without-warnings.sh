# SPDX-License-Identifier: MIT
# The manual pages in docs/man render without a warning from mandoc and
# groff; every function jitunwind.h declares has a page named after it,
# whose NAME line (or its .so target's) names it; every .so link is one
# line and resolves in a man tree laid out as `make install` lays it; every
# page carries the Makefile's version; and the complete programs in the
# pages' EXAMPLES compile against the header and run.
. "$(dirname "$0")/lib.sh"
need_cmd mandoc
need_cmd groff
M=$ROOT/docs/man
version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
[ -n "$version" ] || fail "no VERSION in the Makefile"

# A man tree as installed: man1/, man3/ (the .so links name man3/X.3).
mkdir -p man/man1 man/man3
for p in "$M"/*.[0-9]; do
	s=${p##*.}
	cp "$p" "man/man$s/"
done
pages=0 links=0
for p in man/man*/*; do
	name=${p##*/}
	if grep -q '^\.so ' "$p"; then
		# a link: exactly one line, naming a page of the tree
		[ "$(wc -l < "$p")" -eq 1 ] || fail "$name: a .so link must be one line"
		target=$(sed -n 's/^\.so //p' "$p")
		[ -f "man/$target" ] || fail "$name: .so $target does not resolve"
		grep -q '^\.so ' "man/$target" && fail "$name: .so $target is itself a link"
		(cd man && mandoc -T ascii "man3/$name") > link.out 2>&1 || { cat link.out; fail "$name: mandoc cannot follow its .so"; }
		grep -q . link.out || fail "$name: renders empty"
		links=$((links + 1))
		continue
	fi
	pages=$((pages + 1))
	(cd man && mandoc -T lint -W warning "${p#man/}") > lint.out 2>&1
	[ -s lint.out ] && { cat lint.out; fail "mandoc warns about $name"; }
	groff -ww -z -man "$p" > groff.out 2>&1
	[ -s groff.out ] && { cat groff.out; fail "groff warns about $name"; }
	grep -q "^\.TH [^ ]* [0-9] [^ ]* \"jitunwind $version\"" "$p" ||
		fail "$name: its .TH line does not say jitunwind $version (the Makefile's VERSION)"
done
[ $pages -gt 0 ] || fail "no manual pages in docs/man"

# Every declared function has a page of its name, which names it in NAME.
funcs=$(sed -n 's/^JU_API [^(]* \**\(ju_[a-z_]*\)(.*/\1/p' "$ROOT/include/jitunwind.h")
[ -n "$funcs" ] || fail "no JU_API functions found in jitunwind.h"
nf=0
for f in $funcs; do
	nf=$((nf + 1))
	p=man/man3/$f.3
	[ -f "$p" ] || fail "$f is declared in jitunwind.h but has no page docs/man/$f.3"
	grep -q '^\.so ' "$p" && p=man/$(sed -n 's/^\.so //p' "$p")
	sed -n '/^\.SH NAME/,/^\.SH/p' "$p" | grep -q "\\b$f\\b" ||
		fail "$f: the NAME section of ${p#man/} does not name it"
done

# The complete programs of EXAMPLES, as a reader sees them.
need_file "$BUILD/libjitunwind.a" "make lib"
# A library built with sanitizers (make check SAN=1) needs them in the program.
SAN=
nm "$BUILD/libjitunwind.a" 2>/dev/null | grep -q __asan_init && SAN="-fsanitize=address,undefined"
progs=0
for p in man/man3/*.3; do
	grep -q '^\.so ' "$p" && continue
	name=${p##*/}
	mandoc -T ascii "$p" | sed 's/.\x08//g' > page.txt
	# the EXAMPLES section's code (indented 11 columns: the section's 7,
	# .RS 4); a program starts at #include <jitunwind.h>, ends before
	# the next text that is not code
	awk -v out="ex-${name%.3}" '
		/^EXAMPLES/ { on = 1; next }
		on && /^[A-Z]/ { on = 0 }
		!on { next }
		/^           #include <jitunwind.h>$/ && !inprog { inprog = 1; n++; f = out "-" n ".c" }
		inprog && !/^$/ && !/^           / { inprog = 0 }
		inprog { sub(/^           /, ""); print > f }
	' page.txt
	for c in ex-"${name%.3}"-*.c; do
		[ -f "$c" ] || continue
		grep -q 'int main' "$c" || continue
		progs=$((progs + 1))
		cc $SAN -O1 -Wall -Wextra -Werror -I"$ROOT/include" -o "${c%.c}" "$c" "$BUILD/libjitunwind.a" -ldl -pthread \
			> cc.out 2>&1 || { cat cc.out "$c"; fail "the example program of $name does not compile"; }
		limit 30 env -u JITUNWIND -u JITUNWIND_JITDUMP_MAX "./${c%.c}" > run.out 2>&1
		rc=$?
		[ $rc -eq 0 ] || { cat run.out; fail "the example program of $name exits $rc"; }
	done
done
[ $progs -gt 0 ] || fail "no example program found in the pages (extraction broken?)"
pass "$pages pages and $links .so links render cleanly; all $nf functions have a page; $progs example programs build and run"
