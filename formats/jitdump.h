/* SPDX-License-Identifier: MIT */
/* jitdump.h - the perf jitdump file format (tools/perf/Documentation/
 * jitdump-specification.txt; perf's tools/perf/util/jitdump.h is the
 * reader's copy) and the layout `perf inject --jit` gives the ELF file it
 * synthesizes for each CODE_LOAD (tools/perf/util/genelf.c).
 *
 * Shared by the writer (src/ch_jitdump.c) and the tests that parse dumps
 * back, so the layout is defined once.
 *
 * A file is a header followed by records, each starting with jd_prefix;
 * `total_size` covers the whole record, so a reader steps over records it
 * does not know.  All values are in the writer's byte order (perf detects a
 * byte-swapped magic).  Timestamps are CLOCK_MONOTONIC nanoseconds unless
 * JD_FLAGS_ARCH_TIMESTAMP is set; perf accepts them only from a recording
 * made with `perf record -k 1` (`--clockid=monotonic`).
 */
#ifndef JU_FORMATS_JITDUMP_H
#define JU_FORMATS_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#define JD_MAGIC 0x4A695444u /* "JiTD" read as a little-endian u32 */
#define JD_VERSION 1u
/* Timestamps are the CPU's (TSC) instead of CLOCK_MONOTONIC. */
#define JD_FLAGS_ARCH_TIMESTAMP (1ull << 0)

/* The file is named jit-<pid>.dump; perf finds it through an executable
 * mapping of it in process <pid> (its MMAP event). */
#define JD_FILE_FMT "jit-%d.dump"

typedef struct jd_header {
	uint32_t magic;      /* JD_MAGIC */
	uint32_t version;    /* JD_VERSION */
	uint32_t total_size; /* sizeof(jd_header): readers skip what they do not know */
	uint32_t elf_mach;   /* EM_* of the code */
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp; /* when the file was started */
	uint64_t flags;     /* JD_FLAGS_* */
} jd_header;

enum jd_record_id {
	JD_CODE_LOAD = 0,
	JD_CODE_MOVE = 1,
	JD_CODE_DEBUG_INFO = 2,
	JD_CODE_CLOSE = 3,
	JD_CODE_UNWINDING_INFO = 4,
};

typedef struct jd_prefix {
	uint32_t id;         /* enum jd_record_id */
	uint32_t total_size; /* the whole record, prefix included */
	uint64_t timestamp;
} jd_prefix;

/* Followed by the NUL-terminated symbol name and then the code bytes.  perf
 * finds the code as the last code_size bytes of the record. */
typedef struct jd_code_load {
	jd_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;       /* address of the symbol */
	uint64_t code_addr; /* address of the code */
	uint64_t code_size;
	uint64_t code_index; /* unique per file; names perf's jitted-<pid>-<index>.so */
} jd_code_load;

typedef struct jd_code_move {
	jd_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t old_code_addr;
	uint64_t new_code_addr;
	uint64_t code_size;
	uint64_t code_index;
} jd_code_move;

/* One row of a line table: followed by the NUL-terminated source file name
 * (in full each time: perf 6.1 compares names with strcmp and does not
 * implement the specification's "\xff\0 = same as before"). */
typedef struct jd_debug_entry {
	uint64_t addr;   /* absolute code address */
	int32_t lineno;  /* 1-based */
	int32_t discrim; /* column discriminator, 0 */
} jd_debug_entry;

/* Applies to the next CODE_LOAD.  Followed by nr_entry debug entries. */
typedef struct jd_code_debug_info {
	jd_prefix p;
	uint64_t code_addr;
	uint64_t nr_entry;
} jd_code_debug_info;

/* Applies to the next CODE_LOAD.  Followed by unwinding_size bytes: the
 * .eh_frame section, then the .eh_frame_hdr section (the last
 * eh_frame_hdr_size bytes), then padding up to total_size. */
typedef struct jd_code_unwinding_info {
	jd_prefix p;
	uint64_t unwinding_size; /* .eh_frame + .eh_frame_hdr */
	uint64_t eh_frame_hdr_size;
	/* Bytes past the 8-aligned end of the code that perf's synthesized
	 * mapping also covers (0: the mapping is the code alone). */
	uint64_t mapped_size;
} jd_code_unwinding_info;

typedef struct jd_code_close {
	jd_prefix p;
} jd_code_close;

_Static_assert(sizeof(jd_header) == 40, "jitdump header is 40 bytes");
_Static_assert(sizeof(jd_prefix) == 16, "record prefix is 16 bytes");
_Static_assert(sizeof(jd_code_load) == 56, "CODE_LOAD header is 56 bytes");
_Static_assert(sizeof(jd_code_move) == 64, "CODE_MOVE header is 64 bytes");
_Static_assert(sizeof(jd_debug_entry) == 16, "debug entry is 16 bytes before its name");
_Static_assert(sizeof(jd_code_debug_info) == 32, "DEBUG_INFO header is 32 bytes");
_Static_assert(sizeof(jd_code_unwinding_info) == 40, "UNWINDING_INFO header is 40 bytes");
_Static_assert(offsetof(jd_code_load, code_index) == 48, "CODE_LOAD layout");
_Static_assert(offsetof(jd_code_unwinding_info, mapped_size) == 32, "UNWINDING_INFO layout");

/* ---- the ELF file perf inject writes for each CODE_LOAD (genelf.c) -------
 *
 * An ET_DYN without program headers whose sections have these addresses
 * (perf 6.1, tools/perf/util/genelf.c, jit_write_elf):
 *
 *   .text          JD_ELF_TEXT_ADDR, code_size bytes (genelf's
 *                  GEN_ELF_TEXT_OFFSET); one STT_FUNC symbol covering it
 *   .eh_frame      JD_ELF_EH_FRAME_ADDR(code_size), unwinding_size -
 *                  eh_frame_hdr_size bytes
 *   .eh_frame_hdr  right after .eh_frame
 *   .debug_line    from DEBUG_INFO; rows at JD_ELF_TEXT_ADDR + (entry addr -
 *                  code_addr)
 *
 * and perf maps it with an MMAP2 event at code_addr, pgoff JD_ELF_TEXT_ADDR,
 * length code_size, or JD_ALIGN8(code_size) + mapped_size when mapped_size
 * is not 0.  The pc-relative pointers of .eh_frame and .eh_frame_hdr must be
 * right at these addresses.
 */
#define JD_ELF_TEXT_ADDR 0x80u
#define JD_ALIGN8(x) (((x) + 7) & ~(uint64_t)7)
#define JD_ELF_EH_FRAME_ADDR(code_size) JD_ALIGN8(JD_ELF_TEXT_ADDR + (uint64_t)(code_size))

#endif
