# SPDX-License-Identifier: MIT
# Names that only a separate debug file holds (a static function, stripped
# from the program, kept in the file .gnu_debuglink names beside it) are
# found, and libdw's debuginfod client (libdebuginfod, which pulls in libcurl
# and a TLS library: milliseconds per run) is never loaded while
# DEBUGINFOD_URLS is unset and no local debug file exists for a module.
. "$(dirname "$0")/lib.sh"
need_cmd gcc
need_cmd objcopy
cat > deep.c <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) static void only_in_symtab_wait(void) { for (;;) pause(); }
__attribute__((noinline)) static void only_in_symtab_call(void) { only_in_symtab_wait(); __asm__ volatile(""); }
int main(void) { printf("ready %d\n", (int)getpid()); fflush(stdout); only_in_symtab_call(); return 0; }
C
gcc -O1 -g -fno-omit-frame-pointer -o deep deep.c || fail "cannot build the test program"
objcopy --only-keep-debug deep deep.debug && objcopy --strip-all --add-gnu-debuglink=deep.debug deep ||
	fail "objcopy failed"
nm deep 2>/dev/null | grep -q only_in_symtab && fail "the stripped program still has its symbol table"

start_child a.out ./deep
unset DEBUGINFOD_URLS
LD_DEBUG=files limit 30 "$JS" -p "$CHILD_PID" > with 2> ld.err || { tail ld.err; fail "jitstack exited $?"; }
grep -qE '^#[0-9]+ .* only_in_symtab_wait\+0x[0-9a-f]+ \(deep\)' with &&
	grep -qE '^#[0-9]+ .* only_in_symtab_call\+0x[0-9a-f]+ \(deep\)' with ||
	{ cat with; fail "the functions that only deep.debug names are not named"; }
grep -q 'libdebuginfod' ld.err && { grep libdebuginfod ld.err | head -3; fail "libdebuginfod was loaded without DEBUGINFOD_URLS"; }
mv deep.debug elsewhere.debug
LD_DEBUG=files limit 30 "$JS" -p "$CHILD_PID" > without 2> ld.err || { tail ld.err; fail "jitstack exited $? without the debug file"; }
grep -q 'libdebuginfod' ld.err &&
	{ grep libdebuginfod ld.err | head -3; fail "libdebuginfod was loaded without DEBUGINFOD_URLS for a module with no debug file"; }
grep -q 'only_in_symtab' without && { cat without; fail "names from a debug file that is not there"; }
grep -qE ' __libc_start_call_main\+0x' without || { cat without; fail "without the debug file, the stack does not reach libc's start"; }
note "$(grep -E 'only_in_symtab' with | tr -s ' ' | tr '\n' ';')"
pass "separate debuginfo names the static functions; no debuginfod client without DEBUGINFOD_URLS"
