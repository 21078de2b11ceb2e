# SPDX-License-Identifier: MIT
# The gdb channel's images of blobs with personality routines, as gdb, lldb
# and libdw get them: readelf, eu-readelf and llvm-dwarfdump-19 read their
# .eh_frame without a complaint, and show the outer blob's FDE under a
# "zPLR" CIE with personality A and its LSDA, the inner blob's under a "zPR"
# CIE with personality B, and the middle one's under the plain "zR" CIE.
# llvm-dwarfdump-19 --verify finds no error in them either.  The images of
# x86-64 blobs, and of AArch64 blobs (the same program cross-built, run
# under qemu-user) when the cross-built program and qemu are there.  The
# addresses come from the workload (tests/personality.cc dump prints them),
# never from a tool.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/aarch64.sh"
need_file "$TB/personality" "make tests builds it"
need_cmd readelf
need_cmd eu-readelf
need_cmd llvm-dwarfdump-19

# check ARCH DIR: the images in DIR, their dump's values in DIR/dump.out
check() {
	arch=$1 images=$2
	val() { awk -v k="$1" '$1 == k { print $2 }' "$images/dump.out"; }
	for f in "$images"/*.o; do
		readelf -h "$f" | grep -q "Machine:.*$arch" || fail "$f is not an $arch image"
		readelf -W --debug-dump=frames "$f" > "$f.readelf" 2> "$f.readelf.err"
		[ -s "$f.readelf.err" ] && { cat "$f.readelf.err"; fail "readelf complained about $f"; }
		grep -iq warning "$f.readelf" && fail "readelf warned on $f"
		eu-readelf -wframes "$f" > "$f.eu" 2> "$f.eu.err"
		[ -s "$f.eu.err" ] && { cat "$f.eu.err"; fail "eu-readelf complained about $f"; }
		llvm-dwarfdump-19 --eh-frame "$f" > "$f.dd" 2>&1 || fail "llvm-dwarfdump-19 on $f"
		grep -Eiq 'error|warning|invalid' "$f.dd" && { grep -Ei 'error|warning|invalid' "$f.dd" | head; fail "llvm-dwarfdump-19 complained about $f"; }
		llvm-dwarfdump-19 --verify "$f" > "$f.verify" 2>&1 && grep -q '^No errors' "$f.verify" ||
			{ cat "$f.verify"; fail "llvm-dwarfdump-19 --verify found errors in $f"; }
	done
	python3 - "$(val personality_a)" "$(val personality_b)" "$(val lsda_a)" "$(val outer)" "$(val inner)" "$images"/*.o <<'PY' || fail "$arch: the CIEs and FDEs are not as published"
import re, struct, sys
pa, pb, lsda, outer, inner = (int(x, 16) for x in sys.argv[1:6])
middle = outer + 64
files = sys.argv[6:]

def records(text, fde_re):
    """Each record's header line and body, by the header's offset."""
    recs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r'^([0-9a-f]{8}) [0-9a-f]+ [0-9a-f]+ (CIE|FDE)(.*)', line)
        if m:
            cur = recs.setdefault(int(m.group(1), 16), [m.group(2), m.group(3), []])
        elif cur is not None:
            cur[2].append(line.strip())
    return recs

def fde_at(recs, pc):
    for off, (kind, head, body) in recs.items():
        m = re.search(r'cie=([0-9a-f]+) pc=(?:0x)?([0-9a-f]+)', head)
        if kind == 'FDE' and m and int(m.group(2), 16) == pc:
            return int(m.group(1), 16), body
    return None

want = {outer: ('zPLR', pa, lsda), inner: ('zPR', pb, None), middle: ('zR', None, None)}
found = 0
for f in files:
    dd = records(open(f + '.dd').read(), None)
    re_ = records(open(f + '.readelf').read(), None)
    for pc, (aug, pers, l) in want.items():
        hit = fde_at(dd, pc)
        if not hit:
            continue
        found += 1
        cie, body = hit
        cbody = dd[cie][2]
        assert f'Augmentation:          "{aug}"' in cbody, (f, hex(pc), cbody)
        got = [x for x in cbody if x.startswith('Personality Address:')]
        if pers is None:
            assert not got, (f, hex(pc), got)
        else:
            assert got and int(got[0].split()[-1], 16) == pers, (f, hex(pc), got, hex(pers))
        lines = [x for x in body if x.startswith('LSDA Address:')]
        if l is None:
            assert not lines, (f, hex(pc), lines)
        else:
            assert lines and int(lines[0].split()[-1], 16) == l, (f, hex(pc), lines)
        # readelf: the same CIE, its augmentation data the encoding byte 0
        # (absolute) and the personality, little-endian
        rcie, rbody = fde_at(re_, pc)
        assert rcie == cie, (f, hex(pc), rcie, cie)
        rc = re_[rcie][2]
        assert any(x.startswith('Augmentation:') and f'"{aug}"' in x for x in rc), rc
        if pers is not None:
            data = [x for x in rc if x.startswith('Augmentation data:')][0].split()[2:]
            assert data[0] == '00' and bytes(int(b, 16) for b in data[1:9]) == struct.pack('<Q', pers), data
            rl = [x for x in rbody if x.startswith('Augmentation data:')]
            if l is not None:
                assert rl and bytes(int(b, 16) for b in rl[0].split()[2:10]) == struct.pack('<Q', l), rl
        print(f'{f}: FDE at {pc:#x}: CIE "{aug}"' + (f', personality {pers:#x}' if pers else '') + (f', LSDA {l:#x}' if l else ''))
assert found == 3, f'found {found} of the 3 blobs'
PY
	grep -q 'zPLR' "$images"/*.eu || fail "$arch: eu-readelf shows no zPLR CIE"
	echo "$arch: the zPLR, zPR and zR CIEs as published"
}

mkdir x86-64
limit 60 "$TB/personality" dump x86-64 > x86-64/dump.out 2>&1
rc=$?
cat x86-64/dump.out
[ $rc = 0 ] || fail "dump: exit $rc"
check X86-64 x86-64

# AArch64: the blobs' instructions and the CIEs' columns (x30, sp) differ
A64=$BUILD/aarch64/personality
if ! command -v qemu-aarch64 > /dev/null; then
	echo "skip (AArch64 images): qemu-aarch64 is not installed"
	arches=x86-64
elif [ ! -e "$A64" ] || [ ! -e "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" ]; then
	echo "skip (AArch64 images): $A64 or the AArch64 libc is missing (make tests-aarch64; libc6-arm64-cross)"
	arches=x86-64
else
	mkdir aarch64
	(ulimit -c 0 && exec timeout -k 5 60 qemu-aarch64 "$A64" dump aarch64) > aarch64/dump.out 2>&1
	rc=$?
	cat aarch64/dump.out
	[ $rc = 0 ] || fail "AArch64 dump: exit $rc"
	check AArch64 aarch64
	arches="x86-64 and AArch64"
fi
pass "readelf, eu-readelf and llvm-dwarfdump-19 read the zPLR and zPR CIEs with the published personalities and LSDA ($arches)"
