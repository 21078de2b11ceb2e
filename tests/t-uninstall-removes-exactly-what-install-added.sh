# SPDX-License-Identifier: MIT
# `make install` into a DESTDIR that already holds other files (some of
# them named like ours: an older libjitunwind.so.0.1.0, another page in
# man3) adds the libraries, the header, jitunwind.pc, jitstack and every
# page of docs/man; `make uninstall` then removes exactly those files, and
# no other.  Twice: with PREFIX alone, and with LIBDIR, BINDIR and MANDIR
# of their own (a multiarch libdir, as the Debian packages use).
. "$(dirname "$0")/lib.sh"
need_file "$BUILD/libjitunwind.so" "make lib"
need_file "$BUILD/jitstack/jitstack" "make jitstack"
n1=$(ls "$ROOT"/docs/man/*.1 | wc -l)
n3=$(ls "$ROOT"/docs/man/*.3 | wc -l)
version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")

files() { (cd "$D" && find . ! -type d | sort); }

# round NAME LIBDIR BINDIR MANDIR [make variables...]
round() {
	name=$1 lib=$2 bin=$3 man=$4
	shift 4
	D=$T/$name
	# what was there before: neighbours in every directory install writes
	for f in "$lib/libjitunwind.so.0.1.0" "$lib/libother.so" "$lib/pkgconfig/other.pc" \
		/opt/ju/include/other.h "$bin/other" "$man/man1/other.1" "$man/man3/ju_other.3"; do
		mkdir -p "$(dirname "$D$f")"
		echo "not jitunwind's" > "$D$f"
	done
	files > "$name.before"
	make -s -C "$ROOT" install BUILD="$BUILD" DESTDIR="$D" PREFIX=/opt/ju "$@" > "$name.install.log" 2>&1 ||
		{ cat "$name.install.log"; fail "$name: make install"; }
	files > "$name.after"
	comm -13 "$name.before" "$name.after" > "$name.added"
	comm -23 "$name.before" "$name.after" > "$name.lost"
	[ -s "$name.lost" ] && { cat "$name.lost"; fail "$name: make install removed files it did not make"; }
	for f in "$lib/libjitunwind.so.$version" "$lib/libjitunwind.so.0" "$lib/libjitunwind.so" \
		"$lib/libjitunwind.a" "$lib/pkgconfig/jitunwind.pc" /opt/ju/include/jitunwind.h "$bin/jitstack" \
		"$man/man1/jitstack.1" "$man/man3/jitunwind.3" "$man/man3/ju_close.3"; do
		grep -qx ".$f" "$name.added" || { cat "$name.added"; fail "$name: $f was not installed"; }
	done
	[ "$(grep -c "^\.$man/man1/" "$name.added")" -eq "$n1" ] || fail "$name: not every page of section 1 was installed"
	[ "$(grep -c "^\.$man/man3/" "$name.added")" -eq "$n3" ] || fail "$name: not every page of section 3 was installed"
	"$D$bin/jitstack" --version > version.out 2>&1 || { cat version.out; fail "$name: the installed jitstack does not run"; }
	make -s -C "$ROOT" uninstall BUILD="$BUILD" DESTDIR="$D" PREFIX=/opt/ju "$@" > "$name.uninstall.log" 2>&1 ||
		{ cat "$name.uninstall.log"; fail "$name: make uninstall"; }
	files > "$name.final"
	comm -13 "$name.before" "$name.final" > "$name.left"
	comm -23 "$name.before" "$name.final" > "$name.removed"
	[ -s "$name.left" ] && { cat "$name.left"; fail "$name: make uninstall left files that install added"; }
	[ -s "$name.removed" ] && { cat "$name.removed"; fail "$name: make uninstall removed files that install did not add"; }
	added=$(wc -l < "$name.added")
}

round prefix /opt/ju/lib /opt/ju/bin /opt/ju/share/man
round dirs /opt/ju/lib/x86_64-linux-gnu /opt/ju/sbin /opt/ju/man \
	LIBDIR=/opt/ju/lib/x86_64-linux-gnu BINDIR=/opt/ju/sbin MANDIR=/opt/ju/man
pass "install added $added files (beside 7 others), uninstall removed exactly them, with PREFIX and with dirs of their own"
