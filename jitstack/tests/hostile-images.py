#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hostile-images.py DIR - write JIT images (x86-64 ET_REL) built to reach
the string-table reads of jitstack's image reader (elfin.c) with bytes
libelf trusts.  Each file is an input of the fuzz target (fuzz_reader.c: an
input that starts with the ELF magic is an image) and of the regression
test t-image-reader-refuses-string-tables-it-cannot-bound.sh.

libelf 0.188 opens an in-memory image (elf_memory) without copying it:
its section headers are pointers into the image, and each section's raw
bytes are fixed at open.  elf_strptr then bounds a name by the section
header as it is *now*.  jitstack applies relocations in place, so a debug
section laid over the section header table lets a relocation rewrite a
string table's sh_size after libelf has trusted its bytes; elf_strptr's
memrchr then starts at the far end of that size.  That is "overlay-*".
The others are the shapes a string table can take that libelf checks
itself: they must stay clear rejections or empty names.
"""
import os
import struct
import sys

SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS = 1, 2, 3, 4, 8
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STT_FUNC, STB_GLOBAL = 2, 1
R_X86_64_64 = 1
EHDR, SHDR, SYM, RELA = 64, 64, 24, 24
SH_OFFSET, SH_SIZE = 24, 32  # field offsets in Elf64_Shdr


def shdr(name, typ, flags, addr, off, size, link=0, info=0, align=1, ent=0):
    return struct.pack("<IIQQQQIIQQ", name, typ, flags, addr, off, size, link, info, align, ent)


def image(strtab_type=SHT_STRTAB, strtab_nul=True, symtab_link=None, overlay=None,
          strtab_out=False, sec0=(0, 0)):
    """An image with .text, .symtab, .strtab, .shstrtab, .debug_info and
    .rela.debug_info.  overlay=(field, value): .debug_info covers the
    section header table and its one relocation writes value into that
    field of .strtab's header.  sec0=(type, size): the null section's
    header, which readers skip (its size is the extended section count)."""
    names = [b"", b".text", b".symtab", b".strtab", b".shstrtab", b".debug_info", b".rela.debug_info"]
    shstr, at = b"", {}
    for n in names:
        at[n] = len(shstr)
        shstr += n + b"\0"
    fnames = b"\0jit_function_one\0jit_function_two" + (b"\0" if strtab_nul else b"")
    text = bytes([0x55, 0x48, 0x89, 0xE5, 0x5D, 0xC3]) + b"\xcc" * 10
    syms = bytes(SYM)  # symbol 0
    syms += struct.pack("<IBBHQQ", 1, STB_GLOBAL << 4 | STT_FUNC, 0, 1, 0, 8)
    syms += struct.pack("<IBBHQQ", 18, STB_GLOBAL << 4 | STT_FUNC, 0, 1, 8, 8)

    body, offs = b"", {}

    def put(key, data, align=8):
        nonlocal body
        body += bytes(-(EHDR + len(body)) % align)
        offs[key] = EHDR + len(body)
        body += data

    put("text", text, 16)
    put("symtab", syms)
    put("strtab", fnames)
    put("shstrtab", shstr)
    put("debug", bytes(16))  # replaced by the header table under overlay
    nsec, strtab_index = 7, 3
    rela = b""
    if overlay:
        field, value = overlay
        where = strtab_index * SHDR + field  # .debug_info starts at the header table
        rela = struct.pack("<QQq", where, R_X86_64_64, value)
    put("rela", rela or bytes(RELA))
    body += bytes(-(EHDR + len(body)) % 8)
    shoff = EHDR + len(body)
    dbg_off, dbg_size = (shoff, nsec * SHDR) if overlay else (offs["debug"], 16)
    str_off = offs["strtab"] if not strtab_out else 0x7FFFFFF0
    link = 3 if symtab_link is None else symtab_link
    hdrs = [
        shdr(0, sec0[0], 0, 0, 0, sec0[1]),
        shdr(at[b".text"], SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x7F0000001000, offs["text"], len(text), align=16),
        shdr(at[b".symtab"], SHT_SYMTAB, 0, 0, offs["symtab"], len(syms), link=link, info=1, align=8, ent=SYM),
        shdr(at[b".strtab"], strtab_type, 0, 0, str_off, len(fnames)),
        shdr(at[b".shstrtab"], SHT_STRTAB, 0, 0, offs["shstrtab"], len(shstr)),
        shdr(at[b".debug_info"], SHT_PROGBITS, 0, 0, dbg_off, dbg_size),
        shdr(at[b".rela.debug_info"], SHT_RELA, 0, 0, offs["rela"], RELA if rela else 0, link=2, info=5, align=8,
             ent=RELA),
    ]
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    ehdr += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, EHDR, 0, 0, SHDR, nsec, 4)
    return ehdr + body + b"".join(hdrs)


CASES = {
    # the crash: .strtab's size made huge, then its names are read
    "overlay-strtab-size": dict(overlay=(SH_SIZE, 0x7FFF00000000)),
    "overlay-strtab-size-past-image": dict(overlay=(SH_SIZE, 0x10000)),
    "overlay-strtab-offset": dict(overlay=(SH_OFFSET, 0x7FFF00000000)),
    # shapes libelf checks itself (the candidates)
    "strtab-outside-image": dict(strtab_out=True),
    "strtab-nobits": dict(strtab_type=SHT_NOBITS),
    "symtab-link-not-a-strtab": dict(symtab_link=1),
    # the symbol table linked to the null section, made to look like a
    # string table of 2^50 bytes: no bytes were checked for it
    "symtab-link-to-the-null-section": dict(symtab_link=0, sec0=(SHT_STRTAB, 1 << 50)),
    "strtab-without-final-nul": dict(strtab_nul=False),
    "well-formed": dict(),
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, kw in CASES.items():
        with open(os.path.join(out, "hostile-" + name + ".elf"), "wb") as f:
            f.write(image(**kw))
