/* SPDX-License-Identifier: MIT */
// personality.cc - JIT blobs published with a personality routine and an
// LSDA (ju_blob.personality, .lsda), and a C++ exception thrown below them.
// libgcc must call each blob's own personality for the blob's frame, hand it
// the blob's LSDA, and land where that LSDA says.
//
//   chain    Three blobs, one batch (one arena, one image): outer, with
//            personality A and an LSDA, calls middle, with none, which calls
//            inner, with personality B and no LSDA, which calls a C++
//            function that throws.  A and B record every call and say
//            _URC_CONTINUE_UNWIND; the exception reaches the C++ caller's
//            catch.  Expected: B then A in the search phase and again in the
//            cleanup phase, each with its blob's region start, A with its
//            LSDA and B with none.  Then outer and inner are unpublished and
//            published again at the same addresses with A and B swapped (A
//            without an LSDA now, so that each new FDE fits the freed place
//            of the other: a freed place may be reused only by a blob of the
//            same CIE), and the order must swap too.
//   catch    One blob with __gxx_personality_v0 and an LSDA (GCC's
//            except-table format, written here) whose call site has a
//            catch (...) landing pad in the blob: the landing pad takes the
//            exception (__cxa_begin_catch, __cxa_end_catch) and the blob
//            returns 42.  The C++ caller's own catch must not run.
//   dump DIR Publish the chain's blobs with the gdb channel and write every
//            image of the GDB JIT list to DIR/image-N.o; print the
//            personalities and the LSDA the images must show.
//
// --none publishes the same blobs without personality or LSDA, to show that
// each check can fail (chain: no personality is called, exit 1; catch: the
// C++ caller catches, exit 1).  The blobs' machine code is x86-64 or
// AArch64 (cross-built and run under qemu-user: t-aarch64-*.sh), each
// spelled out below.  Exit 0 when the unwinder did as the blobs say, 1
// when not, 2 on setup errors.
#include "formats/gdbjit.h"
#include "jitunwind.h"

#include <cstdint>
#include <cxxabi.h>
#include <dwarf.h>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <unwind.h>
#include <vector>

// The GDB JIT interface's standard part, all the dump reads.
extern "C" jit_descriptor __jit_debug_descriptor;
extern "C" _Unwind_Reason_Code __gxx_personality_v0(int, _Unwind_Action, _Unwind_Exception_Class,
						    struct _Unwind_Exception *, struct _Unwind_Context *);

extern "C" __attribute__((noinline)) void thrower(void)
{
	throw std::runtime_error("thrown below the JIT frames");
}

// ---- the personalities of the chain ------------------------------------------

struct call {
	char who;
	int actions;
	uintptr_t region, lsda;
};
static call calls[16];
static int n_calls;

static _Unwind_Reason_Code record(char who, int actions, struct _Unwind_Context *ctx)
{
	if (n_calls < 16)
		calls[n_calls++] = { who, actions, (uintptr_t)_Unwind_GetRegionStart(ctx),
				     (uintptr_t)_Unwind_GetLanguageSpecificData(ctx) };
	return _URC_CONTINUE_UNWIND;
}

extern "C" _Unwind_Reason_Code personality_a(int, _Unwind_Action actions, _Unwind_Exception_Class,
					     struct _Unwind_Exception *, struct _Unwind_Context *ctx)
{
	return record('A', actions, ctx);
}

extern "C" _Unwind_Reason_Code personality_b(int, _Unwind_Action actions, _Unwind_Exception_Class,
					     struct _Unwind_Exception *, struct _Unwind_Context *ctx)
{
	return record('B', actions, ctx);
}

static const uint8_t lsda_of_a[] = { 0xff, 0xff, 0x01, 0x00 }; // never parsed: A only reads its address

// ---- code ----------------------------------------------------------------------

// Each architecture's few instructions, spelled out so that the offsets in
// the frame descriptions can be read off them: a frame-pointer prologue
// (PUSH_END: after the save of the caller's frame pointer, SET_END: after
// the frame pointer is set), an absolute call, a return value, and the
// epilogue (ju_range: from after the frame pointer's restore to after the
// return).
#if defined(__x86_64__)
enum { PUSH_END = 1, SET_END = 4 };

static void imm64(std::vector<uint8_t> &p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p.push_back((uint8_t)(v >> (8 * i)));
}

static void emit_prologue(std::vector<uint8_t> &p)
{
	p.insert(p.end(), { 0x55, 0x48, 0x89, 0xe5 }); // push %rbp; mov %rsp,%rbp
}

static void emit_call(std::vector<uint8_t> &p, const void *target)
{
	p.insert(p.end(), { 0x48, 0xb8 }); // movabs $target,%rax
	imm64(p, (uintptr_t)target);
	p.insert(p.end(), { 0xff, 0xd0 }); // call *%rax
}

static void emit_return_value(std::vector<uint8_t> &p, uint8_t v)
{
	if (v)
		p.insert(p.end(), { 0xb8, v, 0, 0, 0 }); // mov $v,%eax
	else
		p.insert(p.end(), { 0x31, 0xc0 }); // xor %eax,%eax
}

// A landing pad gets the exception in %rax (__builtin_eh_return_data_regno(0));
// __cxa_begin_catch takes it in %rdi.
static void emit_exception_to_first_arg(std::vector<uint8_t> &p)
{
	p.insert(p.end(), { 0x48, 0x89, 0xc7 }); // mov %rax,%rdi
}

static void emit_epilogue(std::vector<uint8_t> &p, ju_range *ep)
{
	p.push_back(0x5d); // pop %rbp
	*ep = { (uint32_t)p.size(), (uint32_t)p.size() + 1 };
	p.push_back(0xc3); // ret
}
#elif defined(__aarch64__)
enum { PUSH_END = 4, SET_END = 8 };

static void insn(std::vector<uint8_t> &p, uint32_t w)
{
	for (int i = 0; i < 4; i++)
		p.push_back((uint8_t)(w >> (8 * i)));
}

static void emit_prologue(std::vector<uint8_t> &p)
{
	insn(p, 0xa9bf7bfdu); // stp x29, x30, [sp, #-16]!
	insn(p, 0x910003fdu); // mov x29, sp
}

// movz/movk x16, #target (four halves); blr x16
static void emit_call(std::vector<uint8_t> &p, const void *target)
{
	uint64_t t = (uintptr_t)target;
	for (uint32_t hw = 0; hw < 4; hw++)
		insn(p, (hw ? 0xf2800010u : 0xd2800010u) | hw << 21 |
				((uint32_t)(t >> (16 * hw)) & 0xffff) << 5);
	insn(p, 0xd63f0200u); // blr x16
}

static void emit_return_value(std::vector<uint8_t> &p, uint8_t v)
{
	insn(p, 0x52800000u | (uint32_t)v << 5); // mov w0, #v
}

// A landing pad gets the exception in x0, where __cxa_begin_catch takes it.
static void emit_exception_to_first_arg(std::vector<uint8_t> &)
{
}

static void emit_epilogue(std::vector<uint8_t> &p, ju_range *ep)
{
	insn(p, 0xa8c17bfdu); // ldp x29, x30, [sp], #16
	*ep = { (uint32_t)p.size(), (uint32_t)p.size() + 4 };
	insn(p, 0xd65f03c0u); // ret
}
#else
#error "personality.cc: the blobs are written for x86-64 and AArch64"
#endif

// A frame-pointer blob that calls target and returns.
static std::vector<uint8_t> caller_blob(const void *target, ju_range *epilogue)
{
	std::vector<uint8_t> p;
	emit_prologue(p);
	emit_call(p, target);
	emit_epilogue(p, epilogue);
	return p;
}

static ju_blob fp_blob(const uint8_t *at, size_t size, const char *name, const ju_range *epilogues,
		       size_t n_ep)
{
	ju_blob b = {};
	b.sz = sizeof b;
	b.start = at;
	b.size = size;
	b.name = name;
	b.frame.kind = JU_FRAME_FP;
	b.frame.u.fp.push_end = PUSH_END;
	b.frame.u.fp.set_end = SET_END;
	b.frame.u.fp.epilogues = epilogues;
	b.frame.u.fp.n_epilogues = n_ep;
	return b;
}

static uint8_t *code;

static bool place(size_t at, const std::vector<uint8_t> &bytes)
{
	if (mprotect(code, 4096, PROT_READ | PROT_WRITE))
		return false;
	std::memcpy(code + at, bytes.data(), bytes.size());
	// AArch64 fetches instructions through a cache of its own
	__builtin___clear_cache((char *)code + at, (char *)code + at + bytes.size());
	return !mprotect(code, 4096, PROT_READ | PROT_EXEC);
}

static ju_ctx *open_ctx(uint32_t channels)
{
	ju_options o = {};
	o.sz = sizeof o;
	o.channels = channels;
	o.flags = JU_OPT_NO_ENV;
	ju_ctx *ctx = nullptr;
	if (ju_open(&o, &ctx)) {
		std::printf("ju_open: %s\n", ju_errmsg());
		return nullptr;
	}
	return ctx;
}

// ---- chain ---------------------------------------------------------------------

enum { OUTER = 0, MIDDLE = 64, INNER = 128 };
static ju_range ep[3];
static size_t caller_size; // the bytes of each of the three (chain_code)

// The chain, or with `swapped` only its outer and inner blobs, personalities
// swapped.  The chain comes with 72 blobs of filler after it (never run),
// so that the library keeps the arena when two of its blobs are freed (it
// rebuilds small ones at once) and new blobs there reuse their places when
// they may.
enum { FILLERS = 72 };
static int publish_chain(ju_ctx *ctx, bool none, bool swapped)
{
	ju_blob b[3 + FILLERS] = { fp_blob(code + OUTER, caller_size, "jit:outer", &ep[0], 1),
				   fp_blob(code + INNER, caller_size, "jit:inner", &ep[2], 1),
				   fp_blob(code + MIDDLE, caller_size, "jit:middle", &ep[1], 1) };
	for (int i = 0; i < FILLERS; i++) {
		b[3 + i] = fp_blob(code + 256 + 16 * i, 16, "jit:filler", nullptr, 0);
		b[3 + i].frame.kind = JU_FRAME_LEAF;
	}
	if (!none) {
		b[0].personality = (const void *)(swapped ? personality_b : personality_a);
		b[0].lsda = swapped ? nullptr : lsda_of_a;
		b[1].personality = (const void *)(swapped ? personality_a : personality_b);
		b[1].lsda = nullptr; /* swapped, A without: each new FDE fits the old place */
	}
	if (ju_publish_batch(ctx, b, swapped ? 2 : 3 + FILLERS)) {
		std::printf("ju_publish_batch: %s\n", ju_errmsg());
		return 2;
	}
	return 0;
}

static bool chain_code(void)
{
	std::vector<uint8_t> outer = caller_blob(code + MIDDLE, &ep[0]);
	caller_size = outer.size(); // the three differ in the call's target only
	return caller_size <= MIDDLE - OUTER && place(OUTER, outer) &&
	       place(MIDDLE, caller_blob(code + INNER, &ep[1])) &&
	       place(INNER, caller_blob((const void *)thrower, &ep[2]));
}

__attribute__((noinline)) static bool run_chain(void)
{
	n_calls = 0;
	try {
		reinterpret_cast<void (*)(void)>(code + OUTER)();
	} catch (const std::runtime_error &) {
		return true;
	}
	return false;
}

// The calls expected: the inner blob's personality, then the outer's, in
// each phase.
static int judge_chain(const char *what, char inner, char outer, const void *a_lsda)
{
	uintptr_t al = (uintptr_t)a_lsda;
	struct want {
		char who;
		int phase;
		uintptr_t region, lsda;
	} w[4] = {
		{ inner, _UA_SEARCH_PHASE, (uintptr_t)(code + INNER), inner == 'A' ? al : 0 },
		{ outer, _UA_SEARCH_PHASE, (uintptr_t)(code + OUTER), outer == 'A' ? al : 0 },
		{ inner, _UA_CLEANUP_PHASE, (uintptr_t)(code + INNER), inner == 'A' ? al : 0 },
		{ outer, _UA_CLEANUP_PHASE, (uintptr_t)(code + OUTER), outer == 'A' ? al : 0 },
	};
	int bad = 0;
	std::printf("%s: %d personality calls\n", what, n_calls);
	for (int i = 0; i < n_calls; i++)
		std::printf("  %c actions %#x region %#lx lsda %#lx\n", calls[i].who, calls[i].actions,
			    (unsigned long)calls[i].region, (unsigned long)calls[i].lsda);
	if (n_calls != 4) {
		std::printf("%s: want 4 calls (%c, %c in each phase)\n", what, inner, outer);
		return 1;
	}
	for (int i = 0; i < 4; i++) {
		const call &c = calls[i];
		if (c.who != w[i].who || !(c.actions & w[i].phase) || c.region != w[i].region ||
		    c.lsda != w[i].lsda) {
			std::printf("%s: call %d: want %c in the %s phase, region %#lx, lsda %#lx\n", what, i,
				    w[i].who, w[i].phase == _UA_SEARCH_PHASE ? "search" : "cleanup",
				    (unsigned long)w[i].region, (unsigned long)w[i].lsda);
			bad = 1;
		}
	}
	return bad;
}

static int chain(bool none)
{
	if (!chain_code())
		return 2;
	ju_ctx *ctx = open_ctx(JU_CH_UNWINDER);
	if (!ctx || publish_chain(ctx, none, false))
		return 2;
	if (!run_chain()) {
		std::printf("the exception did not reach the C++ caller\n");
		return 1;
	}
	int bad = judge_chain("chain", 'B', 'A', lsda_of_a);
	// Again with the personalities swapped, at the same addresses, the
	// middle blob kept: its arena stays, and the new blobs may take the
	// freed places of the old ones only if their CIE is the same.
	const void *ends[2] = { code + OUTER, code + INNER };
	if (ju_unpublish_batch(ctx, ends, 2) || publish_chain(ctx, none, true))
		return 2;
	if (!run_chain()) {
		std::printf("the exception did not reach the C++ caller\n");
		return 1;
	}
	bad |= judge_chain("swapped", 'A', 'B', nullptr);
	ju_unpublish_all(ctx);
	ju_close(ctx);
	return bad;
}

// ---- catch ---------------------------------------------------------------------

static void uleb(std::vector<uint8_t> &v, uint32_t x)
{
	do {
		uint8_t byte = x & 0x7f;
		x >>= 7;
		v.push_back(byte | (x ? 0x80 : 0));
	} while (x);
}

// GCC's LSDA (the .gcc_except_table format read by __gxx_personality_v0):
// one call site [cs_start, cs_start + cs_len) whose landing pad at lp takes
// any exception (type filter 1, a null type: catch (...)).
static std::vector<uint8_t> catch_all_lsda(uint32_t cs_start, uint32_t cs_len, uint32_t lp)
{
	std::vector<uint8_t> cs, v;
	uleb(cs, cs_start); // call site: start, from the region start
	uleb(cs, cs_len);   //   length
	uleb(cs, lp);       //   landing pad, from the region start (LPStart omitted)
	uleb(cs, 1);        //   action: the first action record, + 1
	std::vector<uint8_t> after_ttype;
	after_ttype.push_back(DW_EH_PE_uleb128); // call-site encoding
	uleb(after_ttype, (uint32_t)cs.size());  // call-site table length
	after_ttype.insert(after_ttype.end(), cs.begin(), cs.end());
	after_ttype.push_back(1);                              // action record: type filter 1 (sleb)
	after_ttype.push_back(0);                              //   no next record
	after_ttype.insert(after_ttype.end(), { 0, 0, 0, 0 }); // type table, entry 1: null, catch (...)
	v.push_back(DW_EH_PE_omit);                            // LPStart: the region start
	v.push_back(DW_EH_PE_udata4);                          // type table encoding
	uleb(v, (uint32_t)after_ttype.size());                 // type table base, from after this field
	v.insert(v.end(), after_ttype.begin(), after_ttype.end());
	return v;
}

static std::vector<uint8_t> the_lsda;

// prologue; call thrower; return 0 -- the landing pad: the exception to
// __cxa_begin_catch; call __cxa_end_catch; return 42.
static std::vector<uint8_t> catching_blob(ju_range *ep2, uint32_t *cs_start, uint32_t *cs_len, uint32_t *lp)
{
	std::vector<uint8_t> p;
	emit_prologue(p);
	*cs_start = (uint32_t)p.size();
	emit_call(p, (const void *)thrower);
	*cs_len = (uint32_t)p.size() - *cs_start;
	emit_return_value(p, 0);
	emit_epilogue(p, &ep2[0]);
	*lp = (uint32_t)p.size();
	emit_exception_to_first_arg(p);
	emit_call(p, (const void *)__cxxabiv1::__cxa_begin_catch);
	emit_call(p, (const void *)__cxxabiv1::__cxa_end_catch);
	emit_return_value(p, 42);
	emit_epilogue(p, &ep2[1]);
	return p;
}

static int catch_test(bool none)
{
	static ju_range eps[2];
	uint32_t cs_start, cs_len, lp;
	std::vector<uint8_t> p = catching_blob(eps, &cs_start, &cs_len, &lp);
	the_lsda = catch_all_lsda(cs_start, cs_len, lp);
	if (!place(0, p))
		return 2;
	ju_ctx *ctx = open_ctx(JU_CH_UNWINDER);
	if (!ctx)
		return 2;
	ju_blob b = fp_blob(code, p.size(), "jit:catches", eps, 2);
	if (!none) {
		b.personality = (const void *)__gxx_personality_v0;
		b.lsda = the_lsda.data();
	}
	if (ju_publish(ctx, &b)) {
		std::printf("ju_publish: %s\n", ju_errmsg());
		return 2;
	}
	int got;
	try {
		got = reinterpret_cast<int (*)(void)>(code)();
	} catch (const std::exception &) {
		got = -1;
	}
	ju_unpublish_all(ctx);
	ju_close(ctx);
	if (got == 42) {
		std::printf("catch: the blob's landing pad caught the exception (42)\n");
		return 0;
	}
	std::printf("catch: the blob returned %d (-1: the C++ caller caught the exception; want 42, the "
		    "blob's landing pad)\n",
		    got);
	return 1;
}

// ---- dump ----------------------------------------------------------------------

static int dump(const char *dir)
{
	if (!chain_code())
		return 2;
	ju_ctx *ctx = open_ctx(JU_CH_GDB);
	if (!ctx || publish_chain(ctx, false, false))
		return 2;
	int n = 0;
	for (const jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry) {
		std::string path = std::string(dir) + "/image-" + std::to_string(n++) + ".o";
		FILE *f = std::fopen(path.c_str(), "wb");
		if (!f || std::fwrite(e->symfile_addr, 1, e->symfile_size, f) != e->symfile_size ||
		    std::fclose(f))
			return 2;
	}
	std::printf(
		"images %d\npersonality_a %#lx\npersonality_b %#lx\nlsda_a %#lx\nouter %#lx\ninner %#lx\n", n,
		(unsigned long)(uintptr_t)personality_a, (unsigned long)(uintptr_t)personality_b,
		(unsigned long)(uintptr_t)lsda_of_a, (unsigned long)(uintptr_t)(code + OUTER),
		(unsigned long)(uintptr_t)(code + INNER));
	ju_unpublish_all(ctx);
	ju_close(ctx);
	return n ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::puts("usage: personality chain|catch|dump DIR [--none]");
		return 2;
	}
	bool none = argc > 2 && !std::strcmp(argv[argc - 1], "--none");
	void *m = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	code = static_cast<uint8_t *>(m);
	std::string mode = argv[1];
	if (mode == "chain")
		return chain(none);
	if (mode == "catch")
		return catch_test(none);
	if (mode == "dump" && argc > 2)
		return dump(argv[2]);
	return 2;
}
