/* SPDX-License-Identifier: MIT */
/* output.c - text and JSON output of stacks and JIT images (output.h). */
#include "out/output.h"
#include "base/bounds.h"
#include "out/color.h"
#include "formats/utf8.h"

#include <gelf.h>
#include <inttypes.h>
#include <string.h>

/* A JSON string.  Names come from the target: bytes that are not UTF-8
 * become U+FFFD, since a JSON text is Unicode (RFC 8259 section 8.1). */
void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			size_t n = utf8_len_str((const char *)p);
			if (n)
				fwrite(p, 1, n, f), p += n - 1;
			else
				fputs("\ufffd", f);
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

static unsigned long jit_funcs(const js_session *s)
{
	unsigned long n = 0;
	for (size_t i = 0; i < s->jit.n_img; i++)
		n += js_image_usable(s->jit.img[i]) ? s->jit.img[i]->out.n_funcs : 0;
	return n;
}

static size_t jit_accepted(const js_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->jit.n_img; i++)
		n += js_image_usable(s->jit.img[i]);
	return n;
}

/* An image that holds no code: data or DWARF for code in other images
 * (LLVM's lazy ORC JIT registers the globals of a module so).  Nothing
 * failed: it is not counted or shown as rejected. */
static bool holds_no_code(const js_image *im)
{
	return !js_image_usable(im) && !im->superseded && im->out.no_code;
}

static size_t jit_no_code(const js_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->jit.n_img; i++)
		n += holds_no_code(s->jit.img[i]);
	return n;
}

/* An entry whose symbol file is in the JIT's own format, not ELF (Erlang's
 * BEAM JIT registers its own): not for jitstack to read, and nothing
 * failed either. */
static bool holds_other_format(const js_image *im)
{
	return !js_image_usable(im) && !im->superseded && im->out.not_elf;
}

static size_t jit_other_format(const js_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->jit.n_img; i++)
		n += holds_other_format(s->jit.img[i]);
	return n;
}

/* ---- text ------------------------------------------------------------------------ */

static void text_jit_summary(FILE *f, const js_session *s)
{
	for (size_t i = 0; i < s->n_src; i++)
		if (s->src[i].ops->describe && js_source_on(&s->src[i]))
			s->src[i].ops->describe(&s->src[i], f, false, json_str);
	if (s->opt->no_jit) {
		fprintf(f, "JIT: not read (--no-jit)\n");
		return;
	}
	if (!s->jit.n_desc) {
		fprintf(f, "JIT: none (no %s in the target)\n", "__jit_debug_descriptor");
		return;
	}
	for (size_t i = 0; i < s->jit.n_desc; i++) {
		const js_desc *d = &s->jit.desc[i];
		fprintf(f, "JIT: descriptor %#" PRIx64 " in %s, %s", d->addr, base_name(d->module),
			d->ext ? "jitunwind extension" : "plain GDB interface");
		if (d->ext)
			fprintf(f, ", seq %" PRIu64, d->seq);
		fprintf(f, ", %zu entries (%s)\n", d->n, js_desc_state_name(d->state));
	}
	size_t acc = jit_accepted(s), data = jit_no_code(s), other = jit_other_format(s);
	size_t bad = s->jit.n_img - acc - data - other;
	fprintf(f, "JIT: %zu image%s, %lu functions", acc, acc == 1 ? "" : "s", jit_funcs(s));
	if (data)
		fprintf(f, "; %zu image%s without code", data, data == 1 ? "" : "s");
	if (other)
		fprintf(f, "; %zu entr%s not ELF", other, other == 1 ? "y" : "ies");
	if (bad)
		fprintf(f, "; %zu image%s rejected", bad, bad == 1 ? "" : "s");
	if (s->jit.n_defer_left)
		fprintf(f, "; %zu entr%s not read (no pc of the stacks in their code)", s->jit.n_defer_left,
			s->jit.n_defer_left == 1 ? "y" : "ies");
	fputc('\n', f);
}

/* " (MODULE)": a file's base name, or a JIT image's label */
static void text_module(FILE *f, const js_sym *y)
{
	if (y->module)
		fprintf(f, " (%s)", y->jit ? y->module : base_name(y->module));
}

/* A frame's function name, coloured by its kind when o->color. */
static void text_name(js_out *o, js_frame_kind kind, const char *func, uint64_t off, bool with_off)
{
	if (o->color)
		fputs(js_color_of(kind), o->f);
	if (!func)
		fputs("??", o->f);
	else if (with_off)
		fprintf(o->f, "%s+%#" PRIx64, func, off);
	else
		fputs(func, o->f);
	if (o->color)
		fputs(JS_COLOR_OFF, o->f);
}

/* A function inlined at the frame's pc: its own line, at the same pc, of
 * the kind of the frame it was inlined into. */
static void text_inlined(js_out *o, size_t k, const js_frame *fr, const js_sym *y, const js_inline *in)
{
	fprintf(o->f, "#%-3zu 0x%016" PRIx64 " ", k, fr->pc);
	text_name(o, in->func ? js_sym_kind(y) : JS_KIND_UNNAMED, in->func, 0, false);
	text_module(o->f, y);
	if (in->file)
		fprintf(o->f, " at %s:%d", in->file, in->line);
	fputs(" [inlined]\n", o->f);
	o->any_inlined = true;
}

/* Frame fr, numbered from k: its inline frames, then itself.  Returns the
 * next number. */
static size_t text_frame(js_out *o, size_t k, const js_frame *fr, const js_sym *sym)
{
	const js_sym y = *sym;
	for (uint32_t j = 0; j < y.n_inl; j++)
		text_inlined(o, k++, fr, &y, &y.inl[j]);
	fprintf(o->f, "#%-3zu 0x%016" PRIx64 " ", k, fr->pc);
	text_name(o, js_sym_kind(&y), y.func, y.func_off, true);
	text_module(o->f, &y);
	if (y.file)
		fprintf(o->f, " at %s:%d", y.file, y.line);
	if (y.jit && !js_image_usable(y.jit))
		fputs(" [JIT image rejected]", o->f);
	if (y.source == JS_SRC_PERFMAP) {
		fputs(" [perf-map]", o->f);
		o->any_perfmap = true;
	}
	if (y.source == JS_SRC_JITDUMP) {
		fputs(" [jitdump]", o->f);
		o->any_jitdump = true;
	}
	if (fr->by_fp) {
		fputs(" [fp]", o->f);
		o->any_fp = true;
	}
	fputc('\n', o->f);
	return k + 1;
}

/* The Python frames of insert a (merge.h), numbered from k, each at the pc
 * of the eval loop activation that runs them ("-" when the native stack
 * ended before it).  Returns the next number. */
static size_t text_python(js_out *o, size_t k, const js_stack *st, const js_py_insert *a)
{
	for (size_t j = 0; j < a->n; j++) {
		const js_py_frame *p = &st->py[a->first + j];
		if (a->before < st->n)
			fprintf(o->f, "#%-3zu 0x%016" PRIx64 " ", k++, st->f[a->before].pc);
		else
			fprintf(o->f, "#%-3zu %-18s ", k++, "-");
		text_name(o, JS_KIND_PYTHON, p->qualname, 0, false);
		if (p->filename && p->line > 0)
			fprintf(o->f, " at %s:%d", p->filename, p->line);
		else if (p->filename)
			fprintf(o->f, " at %s", p->filename);
		fputs(" [python]\n", o->f);
		o->any_python = true;
	}
	return k;
}

/* ---- JSON ---------------------------------------------------------------------------- */

/* One frame object: "function" (with "offset" from its start when it is
 * the physical frame's symbol) and "file"/"line" as given; the module and
 * how the frame was found are the physical frame's. */
static void json_object(js_out *o, size_t k, size_t i, const js_frame *fr, const js_sym *y, const char *func,
			bool offset, const char *file, int line, bool inlined)
{
	FILE *f = o->f;
	fprintf(f, "%s\n      {\"index\": %zu, \"pc\": \"%#" PRIx64 "\", \"function\": ", k ? "," : "", k,
		fr->pc);
	json_str(f, func);
	if (func && offset)
		fprintf(f, ", \"offset\": %" PRIu64, y->func_off);
	fputs(", \"module\": ", f);
	json_str(f, y->module);
	if (y->module)
		fprintf(f, ", \"module_offset\": %" PRIu64, y->module_off);
	fprintf(f, ", \"jit\": %s, \"source\": ",
		y->jit || y->source == JS_SRC_PERFMAP || y->source == JS_SRC_JITDUMP ? "true" : "false");
	json_str(f, js_source_name(y->source));
	if (file) {
		fputs(", \"file\": ", f);
		json_str(f, file);
		fprintf(f, ", \"line\": %d", line);
	}
	fprintf(f, ", \"inlined\": %s, \"unwound_by\": \"%s\"}", inlined ? "true" : "false",
		i == 0      ? "registers"
		: fr->by_fp ? "frame_pointer"
			    : "cfi");
}

/* Frame i, numbered from k: its inline frames, then itself.  Returns the
 * next number. */
static size_t json_frame(js_out *o, size_t k, size_t i, const js_frame *fr, const js_sym *y)
{
	for (uint32_t j = 0; j < y->n_inl; j++) {
		const js_inline *in = &y->inl[j];
		json_object(o, k++, i, fr, y, in->func, false, in->file, in->line, true);
	}
	json_object(o, k, i, fr, y, y->func, true, y->file, y->line, false);
	return k + 1;
}

/* The Python frames of insert a, numbered from k (as text_python).
 * Returns the next number. */
static size_t json_python(js_out *o, size_t k, const js_stack *st, const js_py_insert *a)
{
	FILE *f = o->f;
	for (size_t j = 0; j < a->n; j++, k++) {
		const js_py_frame *p = &st->py[a->first + j];
		fprintf(f, "%s\n      {\"index\": %zu, \"pc\": ", k ? "," : "", k);
		if (a->before < st->n)
			fprintf(f, "\"%#" PRIx64 "\"", st->f[a->before].pc);
		else
			fputs("null", f);
		fputs(", \"function\": ", f);
		json_str(f, p->qualname);
		fputs(", \"module\": null, \"jit\": false, \"source\": \"python\"", f);
		if (p->filename) {
			fputs(", \"file\": ", f);
			json_str(f, p->filename);
			fprintf(f, ", \"line\": %d", p->line);
		}
		fputs(", \"inlined\": false, \"python\": true, \"unwound_by\": \"interpreter\"}", f);
	}
	return k;
}

void out_begin(js_out *o, js_session *s)
{
	o->threads = 0;
	o->any_fp = o->any_perfmap = o->any_jitdump = o->any_inlined = o->any_python = false;
	FILE *f = o->f;
	if (!o->json) {
		if (s->core)
			fprintf(f, "Core of PID %d (%s)\n", (int)s->pid, s->comm);
		else
			fprintf(f, "PID %d (%s) %s\n", (int)s->pid, s->comm, s->exe_path);
		text_jit_summary(f, s);
		return;
	}
	fprintf(f, "{\n  \"target\": {\"%s\": %d, \"name\": ", "pid", (int)s->pid);
	json_str(f, s->comm);
	fputs(", \"executable\": ", f);
	json_str(f, s->exe_path[0] ? s->exe_path : NULL);
	fprintf(f, ", \"core\": %s},\n  \"jit\": {\"descriptors\": [", s->core ? "true" : "false");
	for (size_t i = 0; i < s->jit.n_desc; i++) {
		const js_desc *d = &s->jit.desc[i];
		fprintf(f, "%s\n    {\"address\": \"%#" PRIx64 "\", \"module\": ", i ? "," : "", d->addr);
		json_str(f, d->module);
		fprintf(f,
			", \"extension\": %s, \"seq\": %" PRIu64
			", \"entries\": %zu, \"state\": \"%s\", \"note\": ",
			d->ext ? "true" : "false", d->seq, d->n, js_desc_state_name(d->state));
		json_str(f, d->note[0] ? d->note : NULL);
		fputc('}', f);
	}
	fputs("],\n    \"images\": [", f);
	for (size_t i = 0; i < s->jit.n_img; i++) {
		const js_image *im = s->jit.img[i];
		fprintf(f,
			"%s\n    {\"entry\": \"%#" PRIx64 "\", \"image\": \"%#" PRIx64
			"\", \"size\": %" PRIu64 ", \"code\": [\"%#" PRIx64 "\", \"%#" PRIx64
			"\"], \"label\": ",
			i ? "," : "", im->entry, im->symfile_addr, im->symfile_size, im->code_lo,
			im->code_hi);
		json_str(f, im->label);
		if (js_image_usable(im)) {
			fprintf(f, ", \"status\": \"ok\", \"functions\": %lu, \"fdes\": %lu, \"lines\": %s",
				im->out.n_funcs, im->out.n_fdes, im->out.has_lines ? "true" : "false");
		} else if (holds_no_code(im)) {
			fprintf(f, ", \"status\": \"no-code\", \"exports\": %zu", im->exports.n);
		} else if (holds_other_format(im)) {
			fputs(", \"status\": \"not-elf\"", f);
		} else {
			fputs(", \"status\": \"rejected\", \"reason\": ", f);
			json_str(f, im->out.why.msg);
		}
		fputs(", \"note\": ", f);
		json_str(f, im->out.note[0] ? im->out.note : NULL);
		fputc('}', f);
	}
	fprintf(f, "],\n    \"entries_not_read\": %zu", s->jit.n_defer_left);
	for (size_t i = 0; i < s->n_src; i++) {
		const js_source *src = &s->src[i];
		if (!src->ops->describe)
			continue;
		fprintf(f, ",\n    \"%s\": ", src->ops->json_key);
		if (js_source_on(src))
			src->ops->describe(src, f, true, json_str);
		else
			fputs("null", f);
	}
	fputs("},\n  \"threads\": [", f);
}

void out_thread(js_out *o, const js_stack *st)
{
	FILE *f = o->f;
	if (!o->json) {
		fprintf(f, "\nTID %d (%s):\n", (int)st->tid, st->comm);
		if (st->skipped)
			fprintf(f, "    not unwound: %s\n", st->skipped);
		for (size_t i = 0, k = 0, a = 0; i <= st->n; i++) {
			for (; a < st->n_py_at && st->py_at[a].before == i; a++)
				k = text_python(o, k, st, &st->py_at[a]);
			if (i < st->n)
				k = text_frame(o, k, &st->f[i], &st->sym[i]);
		}
		if (st->truncated)
			fprintf(f, "    ... more frames (--max-frames %zu)\n", st->n);
		else if (st->end[0] && st->n)
			fprintf(f, "    (unwinding stopped: %s)\n", st->end);
		o->threads++;
		return;
	}
	fprintf(f, "%s\n    {\"tid\": %d, \"name\": ", o->threads ? "," : "", (int)st->tid);
	json_str(f, st->comm);
	if (st->skipped) {
		fputs(", \"skipped\": ", f);
		json_str(f, st->skipped);
	}
	fputs(", \"frames\": [", f);
	for (size_t i = 0, k = 0, a = 0; i <= st->n; i++) {
		for (; a < st->n_py_at && st->py_at[a].before == i; a++)
			k = json_python(o, k, st, &st->py_at[a]);
		if (i < st->n)
			k = json_frame(o, k, i, &st->f[i], &st->sym[i]);
	}
	fprintf(f, "],\n     \"truncated\": %s, \"end\": ", st->truncated ? "true" : "false");
	json_str(f, st->end[0] ? st->end : NULL);
	fputc('}', f);
	o->threads++;
}

void out_end(js_out *o, js_session *s)
{
	js_warn_jit_data(s);
	FILE *f = o->f;
	if (!o->json) {
		if (o->any_inlined)
			fprintf(f, "\n[inlined]: a function inlined at the pc of the frame below it\n");
		if (o->any_fp)
			fprintf(f,
				"%s[fp]: found by following the frame pointer (no CFI for the frame below it)\n",
				o->any_inlined ? "" : "\n");
		if (o->any_perfmap)
			fprintf(f, "%s[perf-map]: named from %s\n", o->any_inlined || o->any_fp ? "" : "\n",
				s->pm.path);
		if (o->any_jitdump)
			fprintf(f, "%s[jitdump]: named from %s\n",
				o->any_inlined || o->any_fp || o->any_perfmap ? "" : "\n", s->jd.path);
		if (o->any_python)
			fprintf(f, "%s[python]: a Python function, run by the eval loop frame below it\n",
				o->any_inlined || o->any_fp || o->any_perfmap || o->any_jitdump ? "" : "\n");
		fflush(f);
		js_print_warnings(s, "");
		return;
	}
	fputs("],\n  \"warnings\": [", f);
	for (size_t i = 0; i < s->n_warn; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, s->warn[i]);
	}
	fputs("]\n}\n", f);
	fflush(f);
}

/* ---- --images ------------------------------------------------------------------------ */

static void image_functions(FILE *f, const js_image *im)
{
	Elf *e = elf_memory((char *)im->out.elf, im->out.elf_size);
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			/* our own rewritten image, opened afresh: its headers are
			 * as libelf checked them (see elfin.c, name_at) */
			if (gelf_getsym(d, (int)i, &sym) && (name = elf_strptr(e, sh.sh_link, sym.st_name)))
				fprintf(f, "    %#018" PRIx64 " %6" PRIu64 " %s\n", sym.st_value, sym.st_size,
					name);
		}
	}
	if (e)
		elf_end(e);
}

void out_images(js_out *o, js_session *s)
{
	FILE *f = o->f;
	for (size_t i = 0; i < s->jit.n_img; i++) {
		const js_image *im = s->jit.img[i];
		fprintf(f,
			"\n%s entry %#" PRIx64 ", image %#" PRIx64 " (%" PRIu64 " bytes), code %#" PRIx64
			"-%#" PRIx64 "\n",
			im->label, im->entry, im->symfile_addr, im->symfile_size, im->code_lo, im->code_hi);
		if (holds_no_code(im)) {
			fprintf(f,
				"  no code: data or debug information for other images, %zu symbol%s for them\n",
				im->exports.n, im->exports.n == 1 ? "" : "s");
			continue;
		}
		if (holds_other_format(im)) {
			fputs("  not ELF: a symbol file in the JIT's own format, not read\n", f);
			continue;
		}
		if (!js_image_usable(im)) {
			fprintf(f, "  rejected: %s\n", im->out.why.msg);
			continue;
		}
		fprintf(f, "  %lu functions, %lu FDEs%s%s%s\n", im->out.n_funcs, im->out.n_fdes,
			im->out.has_lines ? ", source lines" : "", im->out.note[0] ? "; " : "", im->out.note);
		image_functions(f, im);
	}
}
