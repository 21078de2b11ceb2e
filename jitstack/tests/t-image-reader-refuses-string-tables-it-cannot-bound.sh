# SPDX-License-Identifier: MIT
# The image reader on images built to reach its string-table reads
# (hostile-images.py): a debug section laid over the section headers,
# whose relocation would rewrite a string table's size after libelf has
# trusted it (libelf's elf_strptr then read a wild address: the crash the
# fuzzer found), is refused for covering the headers; the shapes libelf
# checks itself stay clean rejections or names left out.  Run through the
# fuzz target under ASan, one input at a time.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/fuzz_reader" "make jitstack-check (needs clang-19 and libfuzzer-19-dev)"
python3 "$ROOT/jitstack/tests/hostile-images.py" seeds || fail "hostile-images.py"

# expect CASE WORDS: the image's outcome contains WORDS
expect() {
	f=seeds/hostile-$1.elf
	JS_FUZZ_SAY=1 limit 30 "$JTB/fuzz_reader" "$f" > "$1.out" 2>&1 || { cat "$1.out"; fail "$1: the reader crashed"; }
	got=$(grep '^image: ' "$1.out") || { cat "$1.out"; fail "$1: no outcome"; }
	case $got in *"$2"*) ;; *) fail "$1: '$got', expected '$2'" ;; esac
}
for c in overlay-strtab-size overlay-strtab-size-past-image overlay-strtab-offset; do
	expect $c "rejected: section 5: [0x128, +0x1c0) covers the image's ELF or section headers"
done
expect strtab-outside-image "rejected: section 3: [0x7ffffff0, +0x23) is outside the image"
expect strtab-nobits "rejected: neither function symbols nor CFI"
expect symtab-link-not-a-strtab "rejected: neither function symbols nor CFI"
expect symtab-link-to-the-null-section "rejected: neither function symbols nor CFI"
# the second name runs off the table's end: that function is left unnamed
expect strtab-without-final-nul "image: 1 functions"
expect well-formed "image: 2 functions"
pass "$(ls seeds | wc -l) hostile images read: the overlays refused, the rest as libelf checks them"
