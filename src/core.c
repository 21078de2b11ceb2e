/* SPDX-License-Identifier: MIT */
/* core.c - the public API: contexts, input checks, staging a batch, and the
 * order in which channels see a publish.
 *
 * A publish is all-or-nothing: every blob is checked and staged (its FDEs,
 * line unit and name written into one buffer), the new arena set is planned
 * and built with each arena channel's state prepared, then the file channels
 * append their records (each restores its file on failure), and only then is
 * the new arena set swapped in, which cannot fail.
 */
#include "cfi.h"
#include "channels.h"
#include "image.h"
#include "internal.h"
#include "formats/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The JU_OPT_* bits this version knows. */
#define JU_OPT_KNOWN (JU_OPT_NO_ENV | JU_OPT_STRICT)
/* Longest source file name accepted, in bytes. */
#define JU_FILE_MAX 4096

/* All open contexts, so a fork handler can give the child its own files. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ju_ctx *all_ctx;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Held while a publish appends to the perf map and the jitdump (taken inside
 * a context's lock, so the fork handlers, which hold every context's lock,
 * never copy it held). */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

const char *ju_channel_name(uint32_t channel)
{
	for (size_t i = 0; i < JU_N_CHANNELS; i++)
		if (ju_channel_table[i]->bit == channel)
			return ju_channel_table[i]->name;
	return NULL;
}

/* ---- input checks ---------------------------------------------------------- */

/* UTF-8 (formats/utf8.h: no overlong forms, surrogates or values past
 * U+10FFFF) and no control characters: names end up on perf map lines and
 * in ELF strings. */
static bool is_text(const char *s, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;
	for (size_t i = 0; i < len;) {
		size_t k = utf8_len(p + i, len - i);
		if (!k || p[i] < 0x20 || p[i] == 0x7f)
			return false;
		i += k;
	}
	return true;
}

static int check_text(const char *what, size_t i, const char *s, size_t max, size_t *len_out)
{
	if (!s)
		return JU_FAIL(JU_ENAME, "blob %zu: %s is NULL", i, what);
	size_t len = strnlen(s, max + 1);
	if (len == 0)
		return JU_FAIL(JU_ENAME, "blob %zu: %s is empty", i, what);
	if (len > max)
		return JU_FAIL(JU_ENAME, "blob %zu: %s is longer than %zu bytes", i, what, max);
	if (!is_text(s, len))
		return JU_FAIL(JU_ENAME, "blob %zu: %s is not valid UTF-8 text (or has control characters)",
			       i, what);
	*len_out = len;
	return 0;
}

/* A name or file of inline k of blob i, by check_text's rules. */
static int check_inline_text(size_t i, size_t k, const char *field, const char *s, size_t max)
{
	size_t len = s ? strnlen(s, max + 1) : 0;
	if (len && len <= max && is_text(s, len))
		return 0; /* the message is made only for a refusal */
	char what[64];
	snprintf(what, sizeof what, "inline %zu: %s", k, field);
	return check_text(what, i, s, max, &len);
}

/* The guest frames: a tree in pre-order, as jitunwind.h's ju_inline says.
 * path[d] is the inline (index + 1) open at depth d, path[0] the blob's
 * own function; last_end[d] where the last child of path[d] ended. */
static int check_inlines(const ju_blob *b, size_t i)
{
	const ju_inline *in = b->inlines;
	size_t n = b->n_inlines;
	if (n > JU_INLINE_MAX)
		return JU_FAIL(JU_EINLINE, "blob %zu (%s): %zu inlines (max %d)", i, b->name, n,
			       JU_INLINE_MAX);
	if (!in)
		return JU_FAIL(JU_EINLINE, "blob %zu (%s): n_inlines is %zu but inlines is NULL", i, b->name,
			       n);
	if (!b->n_lines)
		return JU_FAIL(JU_EINLINE,
			       "blob %zu (%s): inlines need a line table (file and rows) to give their lines",
			       i, b->name);
	uint32_t path[JU_INLINE_DEPTH_MAX + 1] = { 0 }, last_end[JU_INLINE_DEPTH_MAX + 1] = { 0 };
	size_t depth = 0;
	for (size_t k = 0; k < n; k++) {
		const ju_inline *x = &in[k];
		int err = check_inline_text(i, k, "name", x->name, JU_NAME_MAX);
		if (!err && x->file)
			err = check_inline_text(i, k, "file", x->file, JU_FILE_MAX);
		if (!err && x->call_file)
			err = check_inline_text(i, k, "call_file", x->call_file, JU_FILE_MAX);
		if (err)
			return err;
		if (x->start >= x->end)
			return JU_FAIL(JU_EINLINE, "blob %zu (%s): inline %zu (%s): range [%u, %u) is empty",
				       i, b->name, k, x->name, x->start, x->end);
		if (x->end > b->size)
			return JU_FAIL(
				JU_EINLINE,
				"blob %zu (%s): inline %zu (%s): range [%u, %u) is beyond the blob (%zu "
				"bytes)",
				i, b->name, k, x->name, x->start, x->end, b->size);
		if (x->call_line == 0 || x->call_line > INT32_MAX)
			return JU_FAIL(JU_EINLINE,
				       "blob %zu (%s): inline %zu (%s): call_line %u is not in 1..%d", i,
				       b->name, k, x->name, x->call_line, INT32_MAX);
		if (x->parent > k)
			return JU_FAIL(
				JU_EINLINE,
				"blob %zu (%s): inline %zu (%s): parent %u is not before it (parents come "
				"before their children)",
				i, b->name, k, x->name, x->parent);
		while (depth && path[depth] != x->parent)
			depth--;
		if (path[depth] != x->parent)
			return JU_FAIL(
				JU_EINLINE,
				"blob %zu (%s): inline %zu (%s): not in pre-order: its parent, inline %u, is "
				"neither inline %zu nor one of its ancestors",
				i, b->name, k, x->name, x->parent - 1, k - 1);
		uint32_t lo = depth ? in[path[depth] - 1].start : 0;
		uint64_t hi = depth ? in[path[depth] - 1].end : b->size;
		if (x->start < lo || x->end > hi)
			return JU_FAIL(
				JU_EINLINE,
				"blob %zu (%s): inline %zu (%s): [%u, %u) is not inside its parent's range "
				"[%u, %llu)",
				i, b->name, k, x->name, x->start, x->end, lo, (unsigned long long)hi);
		if (x->start < last_end[depth])
			return JU_FAIL(
				JU_EINLINE,
				"blob %zu (%s): inline %zu (%s): [%u, %u) starts before its previous sibling "
				"ends (%u): siblings must not overlap and go by increasing start",
				i, b->name, k, x->name, x->start, x->end, last_end[depth]);
		if (depth == JU_INLINE_DEPTH_MAX)
			return JU_FAIL(JU_EINLINE, "blob %zu (%s): inline %zu (%s): nested more than %d deep",
				       i, b->name, k, x->name, JU_INLINE_DEPTH_MAX);
		last_end[depth] = x->end;
		path[++depth] = (uint32_t)k + 1;
		last_end[depth] = 0;
	}
	return 0;
}

/* `memo` (or NULL) keeps the scans of CFI instruction lists for stage(). */
static int check_blob(const struct ju_ctx *ctx, const ju_blob *b, size_t i, cfi_memo *memo)
{
	if (!b->start)
		return JU_FAIL(JU_EINVAL, "blob %zu: start is NULL", i);
	if (b->size == 0)
		return JU_FAIL(JU_EINVAL, "blob %zu (%p): size is 0", i, b->start);
	if (b->size > UINT32_MAX)
		return JU_FAIL(JU_ERANGE, "blob %zu (%p): size %zu is 4 GiB or more", i, b->start, b->size);
	if ((uintptr_t)b->start + b->size < (uintptr_t)b->start)
		return JU_FAIL(JU_ERANGE, "blob %zu: range wraps around the address space", i);
	size_t len;
	int err = check_text("name", i, b->name, JU_NAME_MAX, &len);
	if (err)
		return err;
	char msg[200];
	if (cfi_check_frame(ctx->arch, &b->frame, b->size, memo, msg, sizeof msg))
		return JU_FAIL(JU_ECFI, "blob %zu (%s): %s", i, b->name, msg);
	if (b->lsda && !b->personality)
		return JU_FAIL(JU_EINVAL,
			       "blob %zu (%s): lsda is set but personality is NULL (an LSDA is read only by "
			       "its personality routine)",
			       i, b->name);
	if (b->n_lines == 0) {
		if (b->file)
			return JU_FAIL(JU_ELINES, "blob %zu (%s): file given without line rows", i, b->name);
		return b->n_inlines ? check_inlines(b, i) : 0; /* refused: they need lines */
	}
	if (!b->lines)
		return JU_FAIL(JU_ELINES, "blob %zu (%s): n_lines is %zu but lines is NULL", i, b->name,
			       b->n_lines);
	if (!b->file)
		return JU_FAIL(JU_ELINES, "blob %zu (%s): %zu line rows but file is NULL", i, b->name,
			       b->n_lines);
	err = check_text("file name", i, b->file, JU_FILE_MAX, &len);
	if (err)
		return err;
	if (image_check_lines(b->file, b->lines, b->n_lines, b->size, msg, sizeof msg))
		return JU_FAIL(JU_ELINES, "blob %zu (%s): %s", i, b->name, msg);
	return b->n_inlines ? check_inlines(b, i) : 0;
}

/* ---- staging --------------------------------------------------------------- */

typedef struct staged {
	byte_buf buf;   /* CIE, then each blob's FDEs, line unit and name */
	blob_rec *recs; /* sorted by start */
	size_t *order;  /* recs[k] came from blobs[order[k]] */
} staged;

static void stage_free(staged *s)
{
	buf_free(&s->buf);
	free(s->recs); /* order is in the same block */
}

typedef struct keyed {
	uintptr_t start;
	size_t idx;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Order of the blobs by start address. */
static int sort_order(const ju_blob *blobs, size_t n, size_t *order)
{
	if (n == 1) {
		order[0] = 0;
		return 0;
	}
	keyed *k = ju__malloc(n * sizeof *k);
	if (!k)
		return -1;
	for (size_t i = 0; i < n; i++)
		k[i] = (keyed){ (uintptr_t)blobs[i].start, i };
	qsort(k, n, sizeof *k, cmp_keyed);
	for (size_t i = 0; i < n; i++)
		order[i] = k[i].idx;
	free(k);
	return 0;
}

/* A blob with guest frames: its line unit, then its compile unit, which
 * every image copies (image.h).  0 or JU_ENOMEM. */
static int stage_guest_frames(byte_buf *buf, const ju_blob *b, blob_rec *r)
{
	inline_plan p;
	if (image_plan_inlines(b, &p))
		return JU_ENOMEM;
	r->line_off = (uint32_t)buf->len;
	image_write_inline_line_unit(buf, b, &p, r->start);
	r->line_len = (uint32_t)(buf->len - r->line_off);
	r->info_off = (uint32_t)buf->len;
	image_write_inline_cu(buf, b, &p, r->start);
	r->info_len = (uint32_t)(buf->len - r->info_off);
	image_plan_free(&p);
	return 0;
}

/* The index + 1 of the blob's CIE in ctx->cies (blob_rec.cie), added
 * there when new; 0 for a blob without a personality.  -1 when the
 * context's table is full (JU_ERANGE) or cannot be made. */
static long cie_of(struct ju_ctx *ctx, const ju_blob *b)
{
	if (!b->personality)
		return 0;
	cie_key key = { (uintptr_t)b->personality, b->lsda != NULL };
	for (size_t k = 0; k < ctx->n_cies; k++)
		if (ctx->cies[k].personality == key.personality && ctx->cies[k].lsda == key.lsda)
			return (long)k + 1;
	if (ctx->n_cies == JU_PERSONALITY_MAX)
		return -1;
	if (!ctx->cies && !(ctx->cies = ju__malloc(JU_PERSONALITY_MAX * sizeof *ctx->cies)))
		return -1;
	ctx->cies[ctx->n_cies++] = key; /* kept if the publish fails: unused, it makes no CIE */
	return (long)ctx->n_cies;
}

static int stage(struct ju_ctx *ctx, const ju_blob *blobs, size_t n, cfi_memo *memo, staged *s)
{
	memset(s, 0, sizeof *s);
	buf_init_grow(&s->buf, BUF_UNBOUNDED);
	_Static_assert(sizeof(blob_rec) % _Alignof(size_t) == 0, "order follows the records");
	s->recs = ju__malloc(n * (sizeof *s->recs + sizeof *s->order));
	if (!s->recs)
		goto oom;
	s->order = (size_t *)(void *)(s->recs + n);
	if (sort_order(blobs, n, s->order))
		goto oom;
	/* No CIE here: image_build points each FDE at its image's CIE. */
	const size_t cie = 0;
	for (size_t k = 0; k < n; k++) {
		const ju_blob *b = &blobs[s->order[k]];
		blob_rec *r = &s->recs[k];
		long pers = cie_of(ctx, b);
		if (pers < 0 && ctx->n_cies < JU_PERSONALITY_MAX)
			goto oom;
		if (pers < 0) {
			int err = JU_FAIL(JU_ERANGE,
					  "blob %zu (%s): a context's blobs may use at most %d distinct "
					  "personality routines (with and without an LSDA)",
					  s->order[k], b->name, JU_PERSONALITY_MAX);
			stage_free(s);
			return err;
		}
		*r = (blob_rec){ .start = (uintptr_t)b->start,
				 .size = (uint32_t)b->size,
				 .cie = (uint32_t)pers };
		r->fde_off = (uint32_t)s->buf.len;
		uint64_t lsda = (uintptr_t)b->lsda;
		cfi_write_blob_fdes(ctx->arch, &s->buf, cie, CFI_ENC_ABS8, 0, r->start, r->size, &b->frame,
				    b->lsda ? &lsda : NULL, memo);
		r->fde_len = (uint32_t)(s->buf.len - r->fde_off);
		if (b->n_lines && b->n_inlines) {
			if (stage_guest_frames(&s->buf, b, r))
				goto oom;
		} else if (b->n_lines) {
			r->line_off = (uint32_t)s->buf.len;
			image_write_line_unit(&s->buf, b->file, b->lines, b->n_lines, r->start, r->size);
			r->line_len = (uint32_t)(s->buf.len - r->line_off);
		}
		r->name_off = (uint32_t)s->buf.len;
		r->name_len = (uint16_t)strlen(b->name);
		buf_str(&s->buf, b->name);
		if (!buf_ok(&s->buf) || s->buf.len > UINT32_MAX)
			goto oom;
	}
	return 0;
oom:
	stage_free(s);
	return JU_FAIL(JU_ENOMEM, "out of memory staging %zu blobs", n);
}

static int check_overlaps(struct ju_ctx *ctx, const ju_blob *blobs, const staged *s, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const blob_rec *r = &s->recs[k];
		if (k && s->recs[k - 1].start + s->recs[k - 1].size > r->start)
			return JU_FAIL(JU_EOVERLAP, "blob %zu (%s) overlaps blob %zu (%s) of the same batch",
				       s->order[k], blobs[s->order[k]].name, s->order[k - 1],
				       blobs[s->order[k - 1]].name);
		if (arena_overlaps(ctx, r->start, r->start + r->size))
			return JU_FAIL(JU_EOVERLAP,
				       "blob %zu (%s) [%#llx, %#llx) overlaps code already published",
				       s->order[k], blobs[s->order[k]].name, (unsigned long long)r->start,
				       (unsigned long long)(r->start + r->size));
	}
	return 0;
}

/* ---- other contexts --------------------------------------------------------- */

/* Contexts share the process's unwinders, which cannot tell whose code a pc
 * is, so no two may publish overlapping code.  A publish checks the other
 * contexts' blobs and commits with the cross lock (channels.c) held, and
 * every change to a context's arenas holds it, so a check never reads an
 * arena set mid-change and two contexts cannot both pass a check and then
 * publish over each other.  Order: all_lock, then a context's lock, then the
 * cross lock (a leaf), which also guards cross_ctx. */
static struct ju_ctx *cross_ctx; /* every open context, by cross_next */

static int check_other_contexts(struct ju_ctx *ctx, const ju_blob *blobs, const staged *s, size_t n)
{
	for (struct ju_ctx *o = cross_ctx; o; o = o->cross_next) {
		if (o == ctx || !o->n_live)
			continue;
		for (size_t k = 0; k < n; k++) {
			const blob_rec *r = &s->recs[k];
			if (arena_overlaps(o, r->start, r->start + r->size))
				return JU_FAIL(JU_EOVERLAP,
					       "blob %zu (%s) [%#llx, %#llx) overlaps code another context "
					       "of this process published",
					       s->order[k], blobs[s->order[k]].name,
					       (unsigned long long)r->start,
					       (unsigned long long)(r->start + r->size));
		}
	}
	return 0;
}

/* ---- file channels --------------------------------------------------------- */

/* The perf files: opt-in, for they leave files behind (a jitdump holds a copy
 * of all the code). */
#define JU_CH_FILES (JU_CH_PERFMAP | JU_CH_JITDUMP)

_Static_assert(JU_N_CHANNELS <= sizeof((struct ju_ctx *)0)->file_err / sizeof(int),
	       "a failure slot per channel");

/* Channel i could not write its file (a full disk: ENOSPC; EIO; a file
 * replaced under it), and left it as it was, whole up to its last record.
 * Any local user can fill /tmp, so that must not take the in-memory
 * channels down with it: the channel turns off in this context, says so
 * once, and the publish goes on without it.  Returns 0. */
static void file_failed(struct ju_ctx *ctx, size_t i, int err)
{
	const ju_channel_ops *ops = ju_channel_table[i];
	ju__log(ctx, JU_LOG_WARN, "channel %s is off: %s; the other channels go on", ops->name, ju_errmsg());
	ops->close(ctx);
	ctx->channels &= ~ops->bit;
	ctx->file_err[i] = err;
	ctx->file_missed[i] = 0; /* this batch counts once it is published */
	ju__clear_error();
}

static int log_files(struct ju_ctx *ctx, const ju_blob *blobs, const staged *s, size_t n)
{
	uint32_t files = ctx->channels & JU_CH_FILES;
	if (!files)
		return 0;
	/* Rows of blobs with guest frames get their files from the staged line
	 * units (image.h): a jitdump row names its innermost guest's file. */
	size_t guest_rows = 0;
	for (size_t k = 0; k < n; k++)
		guest_rows += blobs[k].n_inlines ? blobs[k].n_lines : 0;
	blob_view *v = ju__malloc(n * sizeof *v + guest_rows * sizeof(const char *));
	if (!v)
		return JU_FAIL(JU_ENOMEM, "out of memory for %zu blob views", n);
	const char **row_file = (const char **)(void *)(v + n);
	for (size_t k = 0; k < n; k++) {
		const ju_blob *b = &blobs[s->order[k]];
		const blob_rec *r = &s->recs[k];
		v[s->order[k]] = (blob_view){
			.start = r->start,
			.size = r->size,
			.name = b->name,
			.name_len = r->name_len,
			.fde = s->buf.p + r->fde_off,
			.fde_len = r->fde_len,
			.file = b->n_lines ? b->file : NULL,
			.lines = b->lines,
			.n_lines = b->n_lines,
			.inlines = b->inlines,
			.n_inlines = b->n_inlines, /* check_blob: only with lines */
		};
		if (!b->n_inlines)
			continue;
		if (image_decode_line_unit(s->buf.p + r->line_off, r->line_len, r->start, NULL, row_file,
					   b->n_lines) != (long)b->n_lines) {
			free(v);
			return JU_FAIL(JU_ENOMEM, "out of memory decoding the line table of %s", b->name);
		}
		v[s->order[k]].row_file = row_file;
		row_file += b->n_lines;
	}
	/* All or nothing across the files, in table order: when the jitdump
	 * runs out of memory after the perf map took its lines, the lines are
	 * taken back.  A file that cannot be written is another matter: the
	 * channel turns off (file_failed) and the publish goes on.  The lock
	 * keeps other contexts' appends out of the way in between. */
	pthread_mutex_lock(&files_lock);
	int err = 0;
	size_t i = 0;
	for (; i < JU_N_CHANNELS && !err; i++) {
		const ju_channel_ops *ops = ju_channel_table[i];
		if ((ctx->channels & ops->bit) && ops->log_blobs)
			err = ops->log_blobs(ctx, v, n);
		if (err == JU_EIO || err == JU_EPERM) {
			file_failed(ctx, i, err);
			err = 0;
		}
	}
	for (size_t j = err ? i - 1 : 0; j-- > 0;) {
		const ju_channel_ops *ops = ju_channel_table[j];
		if ((ctx->channels & ops->bit) && ops->unlog_last)
			ops->unlog_last(ctx);
	}
	pthread_mutex_unlock(&files_lock);
	free(v);
	return err;
}

/* The blobs the file channels turned off by a failure did not get. */
static void count_missed(struct ju_ctx *ctx, size_t n)
{
	for (size_t i = 0; i < JU_N_CHANNELS; i++)
		if (ctx->file_err[i])
			ctx->file_missed[i] += n;
}

/* Tell the file channels that n blobs left the arena set: those at
 * starts[0..n) (sorted), or every one with `all` (starts NULL). */
static void files_forget(struct ju_ctx *ctx, const uint64_t *starts, size_t n, bool all)
{
	if (!n || !(ctx->channels & JU_CH_FILES))
		return;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		const ju_channel_ops *ops = ju_channel_table[i];
		if (!(ctx->channels & ops->bit))
			continue;
		if (ops->blobs_gone_at)
			ops->blobs_gone_at(ctx, starts, n, all);
		else if (ops->blobs_gone)
			ops->blobs_gone(ctx, n, all);
	}
	pthread_mutex_unlock(&files_lock);
}

/* ---- the API --------------------------------------------------------------- */

/* The context's table of checked CFI instruction lists (*out), for a call
 * that publishes blobs[0..n); NULL while no blob has had raw CFI.  0 or
 * JU_ENOMEM: like every allocation of a publish, a failed one fails it. */
static int memo_for(struct ju_ctx *ctx, const ju_blob *blobs, size_t n, cfi_memo **out)
{
	*out = NULL;
	if (!ctx->cfi_memo) {
		size_t i = 0;
		while (i < n && blobs[i].frame.kind != JU_FRAME_CFI)
			i++;
		if (i == n)
			return 0;
		if (!(ctx->cfi_memo = ju__malloc(sizeof *ctx->cfi_memo)))
			return JU_FAIL(JU_ENOMEM, "out of memory for the table of checked CFI");
		cfi_memo_init(ctx->cfi_memo);
	}
	cfi_memo_call(ctx->cfi_memo);
	*out = ctx->cfi_memo;
	return 0;
}

static int publish_locked(struct ju_ctx *ctx, const ju_blob *blobs, size_t n)
{
	cfi_memo *memo; /* the checks' scans, for stage() too */
	int merr = memo_for(ctx, blobs, n, &memo);
	if (merr)
		return merr;
	for (size_t i = 0; i < n; i++) {
		int err = check_blob(ctx, &blobs[i], i, memo);
		if (err)
			return err;
	}
	staged s;
	int err = stage(ctx, blobs, n, memo, &s);
	if (err)
		return err;
	err = check_overlaps(ctx, blobs, &s, n);
	struct arena_plan *plan = NULL;
	if (!err)
		err = arena_prepare_publish(ctx, s.recs, n, s.buf.p, &plan);
	if (!err) {
		ju__cross_lock();
		err = check_other_contexts(ctx, blobs, &s, n);
		if (!err)
			err = log_files(ctx, blobs, &s, n);
		if (err) {
			arena_abort_publish(ctx, plan);
		} else {
			arena_commit_publish(ctx, plan);
			ctx->n_live += n;
			count_missed(ctx, n);
		}
		ju__cross_unlock();
	}
	stage_free(&s);
	return err;
}

int ju_publish_batch_sz(ju_ctx *ctx, const ju_blob *blobs, size_t n, size_t blob_sz)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	if (n == 0)
		return 0;
	if (!blobs)
		return JU_FAIL(JU_EINVAL, "blobs is NULL");
	if (n > (1u << 26))
		return JU_FAIL(JU_ERANGE, "batch of %zu blobs is too large (max %u)", n, 1u << 26);
	const ju_blob *v;
	ju_blob *owned;
	int err = ju__blobs_in(blobs, blob_sz, n, &v, &owned);
	if (err)
		return err;
	pthread_mutex_lock(&ctx->lock);
	err = publish_locked(ctx, v, n);
	pthread_mutex_unlock(&ctx->lock);
	free(owned);
	return err;
}

int ju_publish_sz(ju_ctx *ctx, const ju_blob *blob, size_t blob_sz)
{
	ju__clear_error();
	if (!blob)
		return JU_FAIL(JU_EINVAL, "blob is NULL");
	return ju_publish_batch_sz(ctx, blob, 1, blob_sz);
}

/* The plain symbols: no size beside the struct (see abi.c). */
int(ju_publish_batch)(ju_ctx *ctx, const ju_blob *blobs, size_t n)
{
	return ju_publish_batch_sz(ctx, blobs, n, 0);
}

int(ju_publish)(ju_ctx *ctx, const ju_blob *blob)
{
	return ju_publish_sz(ctx, blob, 0);
}

/* The most room any channel's consumer needs after the blob.  Every channel
 * that has a say is asked, on or off in this context: the room is what the
 * consumer needs (the jitdump's perf inject), and a JIT that leaves it when
 * it allocates code does so whatever channels a run turns on. */
static int room_after(const struct ju_ctx *ctx, const blob_view *v, uint64_t *room)
{
	*room = 0;
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		const ju_channel_ops *ops = ju_channel_table[i];
		uint64_t need;
		if (!ops->room_after)
			continue;
		int err = ops->room_after(ctx, v, &need);
		if (err)
			return err;
		if (need > *room)
			*room = need;
	}
	return 0;
}

int ju_room_after_sz(const ju_ctx *ctx, const ju_blob *user, size_t *room, size_t blob_sz)
{
	ju__clear_error();
	if (!ctx || !user || !room)
		return JU_FAIL(JU_EINVAL, "%s is NULL", !ctx ? "context" : !user ? "blob" : "room");
	ju_blob in;
	const ju_blob *blob = &in;
	int err = ju__blob_in(user, blob_sz, 0, &in);
	if (!err)
		err = check_blob(ctx, blob, 0, NULL);
	if (err)
		return err;
	byte_buf fde;
	buf_init_grow(&fde, BUF_UNBOUNDED);
	uint64_t lsda = (uintptr_t)blob->lsda;
	cfi_write_blob_fdes(ctx->arch, &fde, 0, CFI_ENC_ABS8, 0, (uintptr_t)blob->start, blob->size,
			    &blob->frame, blob->lsda ? &lsda : NULL, NULL);
	uint64_t need = 0;
	if (!buf_ok(&fde))
		err = JU_FAIL(JU_ENOMEM, "out of memory for the FDEs of %s", blob->name);
	else
		err = room_after(ctx,
				 &(blob_view){ .start = (uintptr_t)blob->start,
					       .size = blob->size,
					       .name = blob->name,
					       .fde = fde.p,
					       .fde_len = fde.len },
				 &need);
	buf_free(&fde);
	if (!err)
		*room = (size_t)need;
	return err;
}

int(ju_room_after)(const ju_ctx *ctx, const ju_blob *blob, size_t *room)
{
	return ju_room_after_sz(ctx, blob, room, 0);
}

int ju_unpublish(ju_ctx *ctx, const void *start)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	pthread_mutex_lock(&ctx->lock);
	ju__cross_lock();
	arena *a;
	uint64_t at = (uintptr_t)start;
	int err = arena_find(ctx, at, &a)
			  ? 0
			  : JU_FAIL(JU_ENOENT,
				    "nothing is published at %p (never published, or unpublished already)",
				    start);
	if (!err)
		arena_unpublish(ctx, &at, 1);
	ju__cross_unlock();
	if (!err)
		files_forget(ctx, &at, 1, false);
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

static int cmp_addr(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int ju_unpublish_batch(ju_ctx *ctx, const void *const *starts, size_t n)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	if (n == 0)
		return 0;
	if (!starts)
		return JU_FAIL(JU_EINVAL, "starts is NULL");
	if (n > (1u << 26))
		return JU_FAIL(JU_ERANGE, "batch of %zu blobs is too large (max %u)", n, 1u << 26);
	uint64_t *at = ju__malloc(n * sizeof *at);
	if (!at)
		return JU_FAIL(JU_ENOMEM, "out of memory for a batch of %zu starts", n);
	for (size_t i = 0; i < n; i++)
		at[i] = (uintptr_t)starts[i];
	qsort(at, n, sizeof *at, cmp_addr);
	pthread_mutex_lock(&ctx->lock);
	ju__cross_lock();
	/* All or nothing: every start is checked before anything changes. */
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		arena *a;
		if (i && at[i] == at[i - 1])
			err = JU_FAIL(JU_EINVAL, "%p appears twice in the batch", (void *)(uintptr_t)at[i]);
		else if (!arena_find(ctx, at[i], &a))
			err = JU_FAIL(JU_ENOENT,
				      "nothing is published at %p (never published, or unpublished already); "
				      "nothing was unpublished",
				      (void *)(uintptr_t)at[i]);
	}
	if (!err)
		arena_unpublish(ctx, at, n);
	ju__cross_unlock();
	if (!err)
		files_forget(ctx, at, n, false);
	pthread_mutex_unlock(&ctx->lock);
	free(at);
	return err;
}

int ju_unpublish_all(ju_ctx *ctx)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	pthread_mutex_lock(&ctx->lock);
	size_t n = ctx->n_live;
	ju__cross_lock();
	arena_retire_all(ctx);
	ju__cross_unlock();
	files_forget(ctx, NULL, n, true);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

size_t ju_count(const ju_ctx *ctx)
{
	if (!ctx)
		return 0;
	ju_ctx *c = (ju_ctx *)ctx;
	pthread_mutex_lock(&c->lock);
	size_t n = c->n_live;
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint32_t ju_channels(const ju_ctx *ctx)
{
	return ctx ? ctx->channels : 0;
}

int ju_channel_error(const ju_ctx *ctx, uint32_t channel, size_t *missed)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		if (ju_channel_table[i]->bit != channel)
			continue;
		/* the lock guards the counters; taking it changes no state a caller sees */
		ju_ctx *c = (ju_ctx *)ctx;
		pthread_mutex_lock(&c->lock);
		int err = c->file_err[i];
		if (missed)
			*missed = c->file_missed[i];
		pthread_mutex_unlock(&c->lock);
		return err;
	}
	return JU_FAIL(JU_EINVAL, "%#x is not one channel bit", channel);
}

/* ---- opening and closing --------------------------------------------------- */

/* What one word of JITUNWIND asks for: `want` the channels to open, `need`
 * those of them that must open.  A group opens each of its channels where it
 * can; a channel's own name requires it. */
static bool env_word(const char *p, size_t len, uint32_t *want, uint32_t *need)
{
	static const struct {
		const char *word;
		uint32_t want, need;
	} groups[] = {
		{ "default", JU_CH_DEFAULT, 0 },
		{ "all", JU_CH_ALL, 0 },
		{ "perf", JU_CH_DEFAULT | JU_CH_FILES, JU_CH_FILES }, /* "default,perfmap,jitdump" */
	};
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
		if (strlen(groups[i].word) == len && !strncmp(groups[i].word, p, len)) {
			*want |= groups[i].want;
			*need |= groups[i].need;
			return true;
		}
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		const char *name = ju_channel_table[i]->name;
		if (strlen(name) == len && !strncmp(name, p, len)) {
			*want |= ju_channel_table[i]->bit;
			*need |= ju_channel_table[i]->bit;
			return true;
		}
	}
	return false;
}

/* The channels' names in table order, ", " between them. */
static const char *channel_names(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < JU_N_CHANNELS && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
					ju_channel_table[i]->name);
	return buf;
}

/* Parse JITUNWIND: "none", or a comma list of words (env_word). */
static int parse_env(const char *v, uint32_t *want, uint32_t *need)
{
	char names[128];
	*want = *need = 0;
	if (!strcmp(v, "none"))
		return 0;
	for (const char *p = v;; p++) {
		size_t len = strcspn(p, ",");
		if (!len)
			return JU_FAIL(JU_EENV, "JITUNWIND=\"%s\": empty word (a stray comma)", v);
		if (len == 4 && !strncmp(p, "none", 4))
			return JU_FAIL(JU_EENV, "JITUNWIND=\"%s\": \"none\" cannot be combined with channels",
				       v);
		if (!env_word(p, len, want, need))
			return JU_FAIL(JU_EENV,
				       "JITUNWIND=\"%s\": unknown word \"%.*s\" (want none, or a comma list "
				       "of default, perf, all and the channels %s)",
				       v, (int)len, p, channel_names(names, sizeof names));
		p += len;
		if (!*p)
			return 0;
	}
}

/* What the options ask for, read as parse_env reads words: the groups (0 and
 * JU_CH_DEFAULT, JU_CH_ALL) open their channels where they can; any other
 * mask names its channels, but for all of JU_CH_DEFAULT, which it asks for
 * as the default does.  JU_OPT_STRICT requires everything asked for. */
static void options_channels(const ju_options *o, uint32_t *want, uint32_t *need)
{
	uint32_t m = o->channels ? o->channels : JU_CH_DEFAULT;
	*want = m;
	if (o->flags & JU_OPT_STRICT)
		*need = m;
	else if (m == JU_CH_ALL)
		*need = 0;
	else if ((m & JU_CH_DEFAULT) == JU_CH_DEFAULT)
		*need = m & ~(uint32_t)JU_CH_DEFAULT;
	else
		*need = m;
}

/* Parse JITUNWIND_JITDUMP_MAX: bytes with an optional K/M/G/T suffix
 * (powers of 1024), or "unlimited". */
static int parse_jitdump_max(const char *v, uint64_t *out)
{
	static const char want[] = "want bytes, optionally with a K, M, G or T suffix, or unlimited";
	if (!strcmp(v, "unlimited")) {
		*out = UINT64_MAX;
		return 0;
	}
	uint64_t n = 0;
	const char *p = v;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return JU_FAIL(JU_EENV, "JITUNWIND_JITDUMP_MAX=\"%s\": too large", v);
		n = n * 10 + (uint64_t)(*p - '0');
	}
	static const char units[] = "KMGT";
	char unit = (char)(*p & ~0x20); /* upper case */
	const char *u = unit ? strchr(units, unit) : NULL;
	if (p == v || (*p && (!u || p[1])))
		return JU_FAIL(JU_EENV, "JITUNWIND_JITDUMP_MAX=\"%s\": %s", v, want);
	for (int shift = u ? 10 * (int)(u - units + 1) : 0; shift; shift -= 10) {
		if (n > UINT64_MAX >> 10)
			return JU_FAIL(JU_EENV, "JITUNWIND_JITDUMP_MAX=\"%s\": too large", v);
		n <<= 10;
	}
	if (!n)
		return JU_FAIL(JU_EENV,
			       "JITUNWIND_JITDUMP_MAX=\"%s\": a cap of 0 bytes (to write no jitdump, leave "
			       "the channel off)",
			       v);
	*out = n;
	return 0;
}

static void close_channels(struct ju_ctx *ctx)
{
	for (size_t i = JU_N_CHANNELS; i-- > 0;) {
		const ju_channel_ops *ops = ju_channel_table[i];
		if ((ctx->channels & ops->bit) && ops->close)
			ops->close(ctx);
	}
	ctx->channels = 0;
}

static void each_ctx_lock(void)
{
	pthread_mutex_lock(&all_lock);
	for (struct ju_ctx *c = all_ctx; c; c = c->next)
		pthread_mutex_lock(&c->lock);
}

static void each_ctx_unlock(void)
{
	for (struct ju_ctx *c = all_ctx; c; c = c->next)
		pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&all_lock);
}

/* A child's own files.  A channel whose file cannot be had turns off, as at
 * open, and the others go on: any local user can plant a file at the path of
 * an upcoming pid (/tmp/perf-<pid>.map), and that must not stop the child's
 * publishes into memory. */
static void after_fork_locked(struct ju_ctx *ctx)
{
	ctx->pid = getpid();
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		const ju_channel_ops *ops = ju_channel_table[i];
		if (!(ctx->channels & ops->bit) || !ops->after_fork || !ops->after_fork(ctx))
			continue;
		ju__log(ctx, JU_LOG_WARN, "channel %s is off in process %d: %s", ops->name, (int)ctx->pid,
			ju_errmsg());
		ops->close(ctx);
		ctx->channels &= ~ops->bit;
	}
	ju__clear_error();
}

/* In the child: unlock, then give every context this process's own perf map
 * and jitdump with everything inherited from the parent. */
static void atfork_child(void)
{
	for (struct ju_ctx *c = all_ctx; c; c = c->next) {
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_lock(&c->lock);
		after_fork_locked(c);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&all_lock);
}

static void install_atfork(void)
{
	pthread_atfork(each_ctx_lock, each_ctx_unlock, atfork_child);
}

int ju_after_fork(ju_ctx *ctx)
{
	ju__clear_error();
	if (!ctx)
		return JU_FAIL(JU_EINVAL, "context is NULL");
	pthread_mutex_lock(&ctx->lock);
	after_fork_locked(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* Open the channels in `want`.  One in `need` that cannot open fails it all;
 * the others are left off, with a line in the log. */
static int open_channels(struct ju_ctx *ctx, uint32_t want, uint32_t need)
{
	for (size_t i = 0; i < JU_N_CHANNELS; i++) {
		const ju_channel_ops *ops = ju_channel_table[i];
		if (!(want & ops->bit))
			continue;
		int err = ops->open(ctx);
		if (!err) {
			ctx->channels |= ops->bit;
			continue;
		}
		if (need & ops->bit) {
			close_channels(ctx);
			return err; /* the channel made the message */
		}
		ju__log(ctx, JU_LOG_INFO, "channel %s is off: %s", ops->name, ju_errmsg());
	}
	ju__clear_error();
	return 0;
}

int ju_open_sz(const ju_options *opt, ju_ctx **out, size_t opt_sz)
{
	ju__clear_error();
	if (!out)
		return JU_FAIL(JU_EINVAL, "out is NULL");
	*out = NULL;
	ju_options o;
	int in_err = ju__options_in(opt, opt_sz, &o);
	if (in_err)
		return in_err;
	if (o.channels & ~(uint32_t)JU_CH_ALL)
		return JU_FAIL(JU_EINVAL, "unknown channel bits %#x", o.channels & ~(uint32_t)JU_CH_ALL);
	if (o.flags & ~(uint32_t)JU_OPT_KNOWN)
		return JU_FAIL(JU_EINVAL, "unknown flag bits %#x", o.flags & ~(uint32_t)JU_OPT_KNOWN);
	uint32_t want, need;
	options_channels(&o, &want, &need);
	const char *env = (o.flags & JU_OPT_NO_ENV) ? NULL : getenv("JITUNWIND");
	bool env_empty = env && !*env;
	if (env_empty)
		env = NULL; /* `JITUNWIND= prog`: set but empty is the same as unset */
	if (env) {
		int err = parse_env(env, &want, &need);
		if (err)
			return err;
	}
	if (!o.jitdump_max_bytes)
		o.jitdump_max_bytes = JU_JITDUMP_MAX_DEFAULT;
	const char *jd_max = (o.flags & JU_OPT_NO_ENV) ? NULL : getenv("JITUNWIND_JITDUMP_MAX");
	if (jd_max && *jd_max) {
		int err = parse_jitdump_max(jd_max, &o.jitdump_max_bytes);
		if (err)
			return err;
	}
	const ju_arch *arch = arch_host();
	if (!arch)
		return JU_FAIL(JU_EINVAL, "this machine's architecture is not supported");

	struct ju_ctx *ctx = ju__calloc(1, sizeof *ctx);
	if (!ctx)
		return JU_FAIL(JU_ENOMEM, "out of memory for a context");
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->arch = arch;
	ctx->live = &arena_live;
	ctx->opt = o;
	ctx->pid = getpid();
	ctx->no_reuse = getenv("NOREUSE") != NULL; /* read once: a publish is too hot for getenv */
	if (o.jitdump_dir && !(ctx->jitdump_dir = ju__strdup(o.jitdump_dir))) {
		free(ctx);
		return JU_FAIL(JU_ENOMEM, "out of memory");
	}
	ctx->opt.jitdump_dir = ctx->jitdump_dir;
	if (env_empty)
		ju__log(ctx, JU_LOG_INFO,
			"JITUNWIND is empty: treated as unset, the options choose the channels");
	int err = open_channels(ctx, want, need);
	if (err) {
		free(ctx->jitdump_dir);
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return err;
	}
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&all_lock);
	ctx->next = all_ctx;
	all_ctx = ctx;
	ju__cross_lock();
	ctx->cross_next = cross_ctx;
	cross_ctx = ctx;
	ju__cross_unlock();
	pthread_mutex_unlock(&all_lock);
	*out = ctx;
	return 0;
}

int(ju_open)(const ju_options *opt, ju_ctx **out)
{
	return ju_open_sz(opt, out, 0);
}

int ju_close(ju_ctx *ctx)
{
	ju__clear_error();
	if (!ctx)
		return 0;
	pthread_mutex_lock(&all_lock);
	pthread_mutex_lock(&ctx->lock);
	if (ctx->n_live) {
		size_t n = ctx->n_live;
		pthread_mutex_unlock(&ctx->lock);
		pthread_mutex_unlock(&all_lock);
		return JU_FAIL(JU_EBUSY,
			       "%zu blobs are still published; unpublish them first "
			       "(ju_unpublish_all)",
			       n);
	}
	for (struct ju_ctx **p = &all_ctx; *p; p = &(*p)->next)
		if (*p == ctx) {
			*p = ctx->next;
			break;
		}
	ju__cross_lock();
	for (struct ju_ctx **p = &cross_ctx; *p; p = &(*p)->cross_next)
		if (*p == ctx) {
			*p = ctx->cross_next;
			break;
		}
	ju__cross_unlock();
	arena_reclaim_all(ctx); /* channel states go before the channels close */
	close_channels(ctx);
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_unlock(&all_lock);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->arenas);
	free(ctx->jitdump_dir);
	free(ctx->cies);
	free(ctx->cfi_memo);
	free(ctx);
	return 0;
}
