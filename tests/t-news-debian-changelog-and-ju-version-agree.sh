# SPDX-License-Identifier: MIT
# NEWS.md, debian/changelog, the Makefile's VERSION, jitunwind.h's
# JU_VERSION_* and the library's ju_version() name the same version: the
# newest release in NEWS.md (its first "## X.Y.Z (YYYY-MM-DD)" heading,
# after an "## Unreleased" section for the next one) is debian/changelog's
# newest upstream version, of the same date, and every version
# debian/changelog names has its NEWS section; NEWS's versions fall from
# the top.
. "$(dirname "$0")/lib.sh"
need_cmd dpkg-parsechangelog
need_file "$BUILD/libjitunwind.so" "make lib"
N=$ROOT/NEWS.md
[ -f "$N" ] || fail "there is no NEWS.md"
grep '^## ' "$N" > headings
head -1 headings | grep -qx '## Unreleased' || fail "NEWS.md does not open with an '## Unreleased' section: $(head -1 headings)"
sed 1d headings | grep -v -E '^## [0-9]+\.[0-9]+\.[0-9]+ \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$' &&
	fail "NEWS.md: a release heading (above) is not '## X.Y.Z (YYYY-MM-DD)'"
sed -n 's/^## \([0-9.]*\) (\(.*\))$/\1 \2/p' headings > releases
[ -s releases ] || fail "NEWS.md names no release"
sort -t. -k1,1nr -k2,2nr -k3,3nr -u releases | diff releases - > order.diff ||
	{ cat order.diff; fail "NEWS.md's releases do not fall from the top, one section each"; }
read -r news news_date < releases

make_version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
deb=$(cd "$ROOT" && dpkg-parsechangelog -S Version) || fail "debian/changelog cannot be read"
deb_date=$(date -u -d "$(cd "$ROOT" && dpkg-parsechangelog -S Date)" +%F) || fail "debian/changelog's date"
hdr=$(sed -n 's/^#define JU_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$ROOT/include/jitunwind.h" | paste -sd.)
[ "$make_version" = "$news" ] || fail "the Makefile's VERSION is $make_version, NEWS.md's newest release $news"
[ "${deb%-*}" = "$news" ] || fail "debian/changelog is at $deb, NEWS.md's newest release is $news"
[ "$deb_date" = "$news_date" ] || fail "debian/changelog dates $deb $deb_date, NEWS.md $news_date"
[ "$hdr" = "$news" ] || fail "jitunwind.h's JU_VERSION_* say $hdr, NEWS.md $news"
(cd "$ROOT" && dpkg-parsechangelog --all -S Version) | sed 's/-[^-]*$//' | sort -u > deb-versions
while read -r v; do
	grep -q "^$v " releases || fail "debian/changelog names $v, which NEWS.md has no section for"
done < deb-versions

# the library as built says the same
SAN=
nm -D "$BUILD/libjitunwind.so" | grep -q __asan_init && SAN="-fsanitize=address,undefined"
printf '#include <jitunwind.h>\n#include <stdio.h>\nint main(void) { uint32_t v = ju_version();\n printf("%%u.%%u.%%u\\n", v >> 16, v >> 8 & 0xff, v & 0xff); return 0; }\n' > v.c
${CC:-cc} $SAN -I"$ROOT/include" -o v v.c -L"$BUILD" -ljitunwind || fail "building the version probe"
lib=$(LD_LIBRARY_PATH=$BUILD ./v) || fail "the version probe"
[ "$lib" = "$news" ] || fail "ju_version() says $lib, NEWS.md $news"
pass "NEWS.md's newest release $news ($news_date) is debian/changelog's, the Makefile's, jitunwind.h's and ju_version()'s"
