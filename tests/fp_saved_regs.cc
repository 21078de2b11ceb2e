/* SPDX-License-Identifier: MIT */
// fp_saved_regs.cc - a JIT frame with an asmjit-style prologue (push rbp;
// mov rbp,rsp; push rbx; push r12), described as a frame-pointer frame with
// its saved registers, between a C++ catch and a throw.  After the catch the
// caller's callee-saved registers must hold the caller's values: the
// unwinder restores rbx and r12 from where the JIT frame saved them, not from
// the junk the JIT code left in the registers.
//
// caller() keeps five values live across the call, so the compiler holds them
// in callee-saved registers (rbx and r12 among them); its result is compared
// with the same formula computed directly.  With --undescribed the frame is
// published without its saved registers, and the program shows what the
// caller then gets (exit 3 if that is right after all: the check is void).
//
// With --region the same prologue is a shim of its own (a frame-pointer
// blob that saves rbx and r12 and jumps on), and the code that clobbers them
// and calls the thrower is a second blob described as a region frame of the
// shim's, listing the registers the shim saved (--region --undescribed: the
// region frame without them).
//
// x86-64 only; exit 0 when the caller's registers survive, 1 when not, 2 on
// setup errors.
#include "jitunwind.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>

extern "C" __attribute__((noinline)) void thrower(void)
{
	throw std::runtime_error("thrown below the JIT frame");
}

static void (*jit_fn)(void);

__attribute__((noinline)) static long caller(long x)
{
	long a = x * 7 + 1, b = x * 13 + 5, c = x * x + 3, d = x * 31 + 2, e = x * 17 + 9;
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
	try {
		jit_fn();
	} catch (const std::exception &) {
	}
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
	return a + b * 3 + c * 5 + d * 7 + e * 11;
}

static long expected(long x)
{
	return (x * 7 + 1) + (x * 13 + 5) * 3 + (x * x + 3) * 5 + (x * 31 + 2) * 7 + (x * 17 + 9) * 11;
}

static size_t emit(uint8_t *p, ju_saved_reg *saved, ju_range *epilogue)
{
	size_t n = 0;
	auto imm64 = [&](uint64_t v) {
		std::memcpy(p + n, &v, 8);
		n += 8;
	};
	p[n++] = 0x55; // push %rbp
	p[n++] = 0x48;
	p[n++] = 0x89;
	p[n++] = 0xe5; // mov %rsp,%rbp
	p[n++] = 0x53; // push %rbx: at CFA-24
	saved[0] = { 3, -24, (uint32_t)n };
	p[n++] = 0x41;
	p[n++] = 0x54; // push %r12: at CFA-32
	saved[1] = { 12, -32, (uint32_t)n };
	p[n++] = 0x48;
	p[n++] = 0xbb;
	imm64(0x1111111111111111ull); // movabs $junk,%rbx
	p[n++] = 0x49;
	p[n++] = 0xbc;
	imm64(0x2222222222222222ull); // movabs $junk,%r12
	p[n++] = 0x48;
	p[n++] = 0xb8;
	imm64((uintptr_t)thrower); // movabs $thrower,%rax
	p[n++] = 0xff;
	p[n++] = 0xd0; // call *%rax
	p[n++] = 0x41;
	p[n++] = 0x5c; // pop %r12
	p[n++] = 0x5b; // pop %rbx
	p[n++] = 0x5d; // pop %rbp
	epilogue->start = (uint32_t)n;
	p[n++] = 0xc3; // ret
	epilogue->end = (uint32_t)n;
	return n;
}

// The shim: push rbp; mov rbp,rsp; push rbx; push r12; jmp to the region
// blob, which clobbers them and calls the thrower, then returns for the shim.
static size_t emit_shim(uint8_t *p, const uint8_t *region, ju_saved_reg *saved)
{
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	p[n++] = 0x53;
	saved[0] = { 3, -24, (uint32_t)n };
	p[n++] = 0x41, p[n++] = 0x54;
	saved[1] = { 12, -32, (uint32_t)n };
	uint64_t t = (uintptr_t)region;
	p[n++] = 0x48, p[n++] = 0xb8; // movabs $region,%rax
	std::memcpy(p + n, &t, 8);
	n += 8;
	p[n++] = 0xff, p[n++] = 0xe0; // jmp *%rax
	return n;
}

static size_t emit_region(uint8_t *p)
{
	size_t n = 0;
	auto imm64 = [&](uint64_t v) {
		std::memcpy(p + n, &v, 8);
		n += 8;
	};
	p[n++] = 0x48, p[n++] = 0xbb;
	imm64(0x1111111111111111ull); // movabs $junk,%rbx
	p[n++] = 0x49, p[n++] = 0xbc;
	imm64(0x2222222222222222ull); // movabs $junk,%r12
	p[n++] = 0x48, p[n++] = 0xb8;
	imm64((uintptr_t)thrower);    // movabs $thrower,%rax
	p[n++] = 0xff, p[n++] = 0xd0; // call *%rax
	p[n++] = 0x41, p[n++] = 0x5c; // pop %r12
	p[n++] = 0x5b;                // pop %rbx
	p[n++] = 0x5d;                // pop %rbp
	p[n++] = 0xc3;                // ret
	return n;
}

int main(int argc, char **argv)
{
#ifndef __x86_64__
	std::puts("skip: the JIT code is x86-64");
	return 77;
#endif
	bool undescribed = false, region = false;
	for (int i = 1; i < argc; i++) {
		undescribed |= !std::strcmp(argv[i], "--undescribed");
		region |= !std::strcmp(argv[i], "--region");
	}
	void *m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	uint8_t *code = static_cast<uint8_t *>(m);
	static ju_saved_reg saved[2];
	static ju_range epilogue;
	size_t size = region ? emit_shim(code, code + 128, saved) : emit(code, saved, &epilogue);
	size_t region_size = region ? emit_region(code + 128) : 0;
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC))
		return 2;
	jit_fn = reinterpret_cast<void (*)(void)>(code);

	ju_options o = {};
	o.sz = sizeof o;
	o.channels = JU_CH_UNWINDER;
	o.flags = JU_OPT_NO_ENV;
	ju_ctx *ctx;
	if (ju_open(&o, &ctx))
		return std::printf("ju_open: %s\n", ju_errmsg()), 2;
	ju_blob b = {};
	b.sz = sizeof b;
	b.start = code;
	b.size = size;
	b.name = "jit:saves-rbx-r12";
	b.frame.kind = JU_FRAME_FP;
	b.frame.u.fp.push_end = 1;
	b.frame.u.fp.set_end = 4;
	b.frame.u.fp.epilogues = &epilogue;
	b.frame.u.fp.n_epilogues = 1;
	b.frame.u.fp.saved = undescribed ? nullptr : saved;
	b.frame.u.fp.n_saved = undescribed ? 0 : 2;
	static ju_saved_reg region_saved[2] = { { 3, -24, 0 }, { 12, -32, 0 } };
	ju_blob r = {};
	r.sz = sizeof r;
	if (region) {
		b.name = "jit:shim-saves-rbx-r12";
		b.frame.u.fp.epilogues = nullptr;
		b.frame.u.fp.n_epilogues = 0;
		b.frame.u.fp.saved = saved; // the shim itself is always described
		b.frame.u.fp.n_saved = 2;
		r.start = code + 128;
		r.size = region_size;
		r.name = "jit:region-in-the-shim";
		r.frame.kind = JU_FRAME_REGION;
		r.frame.u.region.cfa_offset = 16;
		r.frame.u.region.fp_offset = -16;
		r.frame.u.region.ra_offset = -8;
		r.frame.u.region.saved = undescribed ? nullptr : region_saved;
		r.frame.u.region.n_saved = undescribed ? 0 : 2;
	}
	ju_blob both[2] = { b, r };
	if (ju_publish_batch(ctx, both, region ? 2 : 1))
		return std::printf("ju_publish: %s\n", ju_errmsg()), 2;

	int bad = 0;
	for (long x = 1; x <= 9; x += 4) {
		long got = caller(x), want = expected(x);
		std::printf("caller(%ld) = %ld, want %ld\n", x, got, want);
		bad += got != want;
	}
	ju_unpublish_all(ctx);
	ju_close(ctx);
	if (undescribed)
		return bad ? 1 : 3;
	std::printf("result: %s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
