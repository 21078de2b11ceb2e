#!/bin/sh
# SPDX-License-Identifier: MIT
# install-deps.sh GROUP... - install the Debian packages a make target needs,
# only those missing.  Groups:
#   build  compilers and libraries to build everything
#   test   the consumers the tests, the demo and the benchmarks run for
#          real (gdb, lldb, perf, valgrind, ...)
#   deb    what `make deb` needs to build the Debian packages and check
#          them: debian/control's Build-Depends, debhelper, lintian (the
#          test group has it too: make check builds the packages)
#   fresh  what `make check-fresh` needs to build a minimal Debian root
#   aarch64-system  what `make check-aarch64-system` needs to build and boot
#          a Debian arm64 system under qemu-system-aarch64
# install-deps.sh --list GROUP... prints the packages instead.
#
# Packages come with --no-install-recommends: only their Depends follow.
# `make check` proves the lists complete: every file the build and the
# tests open must belong to a package listed here, to one of their
# Depends, or to a minimal Debian (scripts/check-deps.py).
set -eu
list=
[ "${1:-}" = --list ] && { list=1; shift; }

# debian/control's Build-Depends, names only: read from it, so that the
# two lists cannot part.  A name restricted to architectures ("[amd64]")
# counts only on those.
control_build_depends() {
	arch=$(dpkg --print-architecture)
	sed -n '/^Build-Depends:/,/^[^[:space:]]/p' "$(dirname "$0")/../debian/control" |
		sed '1s/^Build-Depends://; /^[^[:space:]]/d' | tr ',' '\n' |
		sed 's/([^)]*)//; s/[[:space:]]//g; /^$/d; /^debhelper-compat$/d' |
		awk -v a="$arch" '{ if (match($0, /\[.*\]/)) { l = substr($0, RSTART + 1, RLENGTH - 2); n = split(l, v, " ");
			sub(/\[.*\]/, ""); ok = 0; for (i = 1; i <= n; i++) if (v[i] == a) ok = 1; if (!ok) next } print }'
}
# dpkg-buildpackage needs build-essential (every Debian build's implicit
# dependency) besides the Build-Depends.  dpkg-dev locks its files with
# File::FcntlLock where it is installed (only a Recommends of it; without
# it, a warning and flock).
deb="build-essential dpkg-dev debhelper lintian libfile-fcntllock-perl $(control_build_depends)"

build="make gcc g++ binutils pkg-config libelf-dev libdw-dev libunwind-dev zlib1g-dev
       clang-19 lld-19 llvm-19 libfuzzer-19-dev libprotobuf-c-dev protobuf-c-compiler"
# libFuzzer's and the sanitizers' runtimes for clang-19 (the fuzz targets):
# only a Recommends of clang-19.
build="$build libclang-rt-19-dev"
# The LuaJIT module (integrations/luajit) builds against LuaJIT's headers.
build="$build libluajit-5.1-dev"
# libunwind-14 is LLVM's libunwind (runtime only: its -dev package conflicts
# with nongnu libunwind-dev, and we load it by file name).
# The AArch64 tests cross-build the library and run it under qemu-user,
# where gdb-multiarch and lldb read it through qemu's gdb stub.
# The matrix's eBPF, allocation and CPU profilers: bpftrace, heaptrack (which
# compresses its data with zstd where that is installed; no dependency of it), and
# gperftools' libprofiler.so (its raw profile is read without pprof).
test="gdb lldb-16 elfutils linux-perf valgrind libunwind-14 procps file python3
      gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gdb-multiarch
      bpftrace heaptrack zstd libgoogle-perftools4"
# make format and the format check of .ci/run (clang-format-19)
test="$test clang-format-19"
# the ABI check against the released baseline (abidw, abidiff)
test="$test abigail-tools"
# the manual pages' linters (t-man-pages-render-without-warnings)
test="$test mandoc groff-base"
# t-debian-packages-build-and-install builds the packages as `make deb` does
test="$test $deb"
# the LuaJIT module's tests run Debian's stock luajit
test="$test luajit"
# the license check (t-every-file-states-its-license: reuse lint)
test="$test reuse"
# jitstack's Python frame tests: python3.11d (a debug build with DWARF),
# the release build's separate debug file, and gdb's py-bt (python-gdb.py)
test="$test python3.11-dbg"

want=""
for g in "$@"; do
	case $g in
	build) want="$want $build" ;;
	test) want="$want $test" ;;
	deb) want="$want $deb" ;;
	fresh) want="$want debootstrap git" ;;
	aarch64-system) want="$want debootstrap qemu-system-arm qemu-user-static e2fsprogs
		gcc-aarch64-linux-gnu g++-aarch64-linux-gnu" ;;
	*) echo "install-deps.sh: unknown group '$g'" >&2; exit 2 ;;
	esac
done
# Packages other parts of the tree ask for to build and test, one per line:
# "PACKAGE", or "PACKAGE COMMAND" for a package wanted only where no
# COMMAND is on the PATH but its own (npm: Debian's npm conflicts with node
# builds that bring theirs).
installed() { case $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) in *" installed") return 0 ;; esac; return 1; }
case " $* " in *" build "* | *" test "*)
	for f in "$(dirname "$0")"/../tinyjit/PACKAGES "$(dirname "$0")"/../jitstack/PACKAGES \
		"$(dirname "$0")"/../integrations/cpython/PACKAGES; do
		[ -f "$f" ] || continue
		while read -r pkg cmd; do
			case $pkg in '' | '#'*) continue ;; esac
			[ -n "$cmd" ] && ! installed "$pkg" && command -v "$cmd" >/dev/null 2>&1 && continue
			want="$want $pkg"
		done < "$f"
	done ;;
esac

if [ -n "$list" ]; then
	printf '%s\n' $want | sort -u
	exit 0
fi

missing=""
for p in $want; do
	installed "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps.sh: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps.sh: not root and no sudo; install these packages:$missing" >&2
		exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
