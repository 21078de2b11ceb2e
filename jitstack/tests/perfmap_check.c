/* SPDX-License-Identifier: MIT */
/* perfmap_check.c - the perf map reader (perfmap.c) against what a target
 * can write: hostile lines, duplicates and overlaps (the latest line wins),
 * tombstones, a line still being written, a file replaced or truncated
 * under the reader; and against a model (the latest line covering each
 * address) on random maps fed in random pieces.
 *
 * Built with a level 0 of 64 ranges (JS_PM_LEVEL0), so that the random maps
 * fill every level of the reader's merge tree and carry ranges across them.
 *
 * Usage: perfmap_check DIR (scratch files go there).  Prints one line per
 * check that fails and exits 1, else prints a summary and exits 0.
 */
#include "jit/perfmap.h"
#include "base/bounds.h"
#include "tests/unit/unit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;

/* The name at pc, or "" when none. */
static const char *name_at(const js_perfmap *pm, uint64_t pc)
{
	const js_pm_seg *g = js_perfmap_find(pm, pc);
	return g ? g->name : "";
}

static void feed_all(js_perfmap *pm, const char *text)
{
	ssize_t n = js_perfmap_feed(pm, text, strlen(text));
	CHECK(n == (ssize_t)strlen(text), "fed %zu bytes, %zd consumed", strlen(text), n);
	CHECK(js_perfmap_commit(pm) == 0, "commit");
}

static void names_the_lines_of_a_plain_map(void)
{
	js_perfmap pm;
	js_perfmap_init(&pm, NULL);
	feed_all(&pm, "1000 10 first\n0x2000 0x20 second one\n3000\t8\tthird\r\n");
	CHECK(!strcmp(name_at(&pm, 0x1000), "first") && !strcmp(name_at(&pm, 0x100f), "first"), "first");
	CHECK(!*name_at(&pm, 0x1010) && !*name_at(&pm, 0xfff), "outside first");
	CHECK(!strcmp(name_at(&pm, 0x201f), "second one"), "a name with a space: '%s'", name_at(&pm, 0x201f));
	CHECK(!strcmp(name_at(&pm, 0x3000), "third"), "tabs and CRLF: '%s'", name_at(&pm, 0x3000));
	CHECK(pm.lines == 3 && pm.bad == 0, "3 lines, %lu, %lu bad", pm.lines, pm.bad);
	js_perfmap_free(&pm);
}

static void the_latest_line_wins(void)
{
	js_perfmap pm;
	js_perfmap_init(&pm, NULL);
	feed_all(&pm, "1000 100 old\n"
		      "1080 100 newer\n" /* overlaps old's tail */
		      "5000 10 dup-a\n"
		      "5000 10 dup-b\n" /* the same address twice */
		      "7000 1000 big\n"
		      "7400 10 inner\n" /* inside big, later: wins there only */
		      "9010 10 small\n"
		      "9000 100 cover\n"); /* covers small, later: wins everywhere */
	CHECK(!strcmp(name_at(&pm, 0x1010), "old"), "old keeps what newer does not cover");
	CHECK(!strcmp(name_at(&pm, 0x1090), "newer") && !strcmp(name_at(&pm, 0x117f), "newer"), "newer");
	const js_pm_seg *g = js_perfmap_find(&pm, 0x1010);
	CHECK(g && g->start == 0x1000, "old's start");
	g = js_perfmap_find(&pm, 0x1090);
	CHECK(g && g->start == 0x1080, "newer's start");
	CHECK(!strcmp(name_at(&pm, 0x5008), "dup-b"), "the later duplicate: '%s'", name_at(&pm, 0x5008));
	CHECK(!strcmp(name_at(&pm, 0x7000), "big") && !strcmp(name_at(&pm, 0x7410), "big"),
	      "big around inner");
	CHECK(!strcmp(name_at(&pm, 0x7404), "inner"), "inner");
	g = js_perfmap_find(&pm, 0x7500);
	CHECK(g && g->start == 0x7000, "big's offset counts from its own start");
	CHECK(!strcmp(name_at(&pm, 0x9014), "cover"), "cover over small: '%s'", name_at(&pm, 0x9014));
	/* appended later: painted over what is there */
	feed_all(&pm, "1000 10 newest\n9000 100 again\n");
	CHECK(!strcmp(name_at(&pm, 0x1004), "newest") && !strcmp(name_at(&pm, 0x1010), "old"),
	      "appended: newest");
	CHECK(!strcmp(name_at(&pm, 0x9014), "again"), "appended: again");
	js_perfmap_free(&pm);
}

static void skips_tombstones_and_hostile_lines(void)
{
	js_perfmap pm;
	js_perfmap_init(&pm, NULL);
	char *longline = malloc(JS_MAX_PERFMAP_LINE + 100);
	memset(longline, 'a', JS_MAX_PERFMAP_LINE + 99);
	memcpy(longline, "b000 10 ", 8);
	longline[JS_MAX_PERFMAP_LINE + 99] = 0;
	const char *bad[] = {
		"#000 10 tombstone\n",
		"#1000 10 dead blob\n",
		"zz 10 badhex\n",
		"c000 zz badsize\n",
		"c000 10\n",
		"c000 10 \n",
		"c000 0 zero\n",
		"ffffffffffffff00 100 wraps\n",
		"ffffffffffffff00 100 wrapsto0\n",
		"10000000000000000 10 seventeen digits\n",
		"c000 10000000000000000 huge size\n",
		"0x 10 nodigits\n",
		"c000-10 name\n",
		" c000 10 leading blank\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		js_perfmap_feed(&pm, bad[i], strlen(bad[i]));
	ssize_t n = js_perfmap_feed(&pm, longline, strlen(longline));
	CHECK(n == (ssize_t)strlen(longline) && pm.skipping,
	      "an overlong partial line is dropped as it comes");
	js_perfmap_feed(&pm, "aaaa\n", 5);
	CHECK(!pm.skipping, "... through its newline");
	static const char odd[] = "d000 10 caf\xc3\xa9 \xff\xfe \x01\x1b[2J\x7f end\n"
				  "e000 10 nul\0inside\n";
	js_perfmap_feed(&pm, odd, sizeof odd - 1);
	CHECK(js_perfmap_commit(&pm) == 0, "commit");
	CHECK(pm.tombstones == 2, "tombstones %lu", pm.tombstones);
	CHECK(pm.bad == sizeof bad / sizeof *bad - 2 + 1, "bad lines %lu", pm.bad);
	CHECK(js_perfmap_size(&pm) == 2, "only the two good lines: %zu", js_perfmap_size(&pm));
	CHECK(!*name_at(&pm, 0x1000) && !*name_at(&pm, 0xb000) && !*name_at(&pm, 0xc000),
	      "nothing from bad lines");
	CHECK(!strcmp(name_at(&pm, 0xd000), "caf\xc3\xa9 \xff\xfe ??[2J? end"),
	      "control bytes replaced: '%s'", name_at(&pm, 0xd000));
	CHECK(!strcmp(name_at(&pm, 0xe000), "nul?inside"), "NUL replaced: '%s'", name_at(&pm, 0xe000));
	free(longline);
	js_perfmap_free(&pm);
}

static void waits_for_a_line_being_written(void)
{
	js_perfmap pm;
	js_perfmap_init(&pm, NULL);
	const char *t = "1000 10 done\n2000 10 half";
	ssize_t n = js_perfmap_feed(&pm, t, strlen(t));
	CHECK(n == 13, "consumed through the last newline: %zd", n);
	js_perfmap_commit(&pm);
	CHECK(!*name_at(&pm, 0x2000), "the partial line is not read");
	const char *rest = "2000 10 half-done\n";
	CHECK(js_perfmap_feed(&pm, rest, strlen(rest)) == (ssize_t)strlen(rest), "the completed line");
	js_perfmap_commit(&pm);
	CHECK(!strcmp(name_at(&pm, 0x2000), "half-done"), "completed: '%s'", name_at(&pm, 0x2000));
	js_perfmap_free(&pm);
}

static void put(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(2);
	}
}

static void follows_the_file(void)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/perf-1.map", dir);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	unlink(path);
	js_perfmap pm;
	js_perfmap_init(&pm, path);
	js_err why = { 0 };
	CHECK(js_perfmap_refresh(&pm, &why) < 0 && why.errnum == ENOENT, "no file yet: %s", why.msg);
	put(path, "w", "1000 10 one\n2000 10 tw");
	CHECK(js_perfmap_refresh(&pm, &why) == 1, "first read");
	CHECK(!strcmp(name_at(&pm, 0x1000), "one") && !*name_at(&pm, 0x2000),
	      "one, and not the partial line");
	uint64_t bytes = pm.bytes;
	CHECK(js_perfmap_refresh(&pm, &why) == 0 && pm.bytes == bytes, "nothing new: nothing read");
	put(path, "a", "o\n3000 10 three\n");
	CHECK(js_perfmap_refresh(&pm, &why) == 1, "appended");
	CHECK(!strcmp(name_at(&pm, 0x2000), "two") && !strcmp(name_at(&pm, 0x3000), "three"), "two, three");
	CHECK(pm.bytes - bytes == strlen("2000 10 two\n3000 10 three\n"), "only the new bytes: %" PRIu64,
	      pm.bytes - bytes);
	put(tmp, "w", "4000 10 four\n");
	rename(tmp, path);
	CHECK(js_perfmap_refresh(&pm, &why) == 1 && pm.rereads == 1, "replaced: read again");
	CHECK(!*name_at(&pm, 0x1000) && !strcmp(name_at(&pm, 0x4000), "four"), "only the new file's lines");
	put(path, "w", "5000 1 x\n"); /* the same inode, shorter */
	CHECK(js_perfmap_refresh(&pm, &why) == 1 && pm.rereads == 2, "truncated: read again");
	CHECK(!*name_at(&pm, 0x4000) && !strcmp(name_at(&pm, 0x5000), "x"), "after truncation");
	js_perfmap_free(&pm);
	/* a symbolic link where the target's map should be is not followed */
	char link[4200];
	snprintf(link, sizeof link, "%s/perf-2.map", dir);
	unlink(link);
	if (symlink(path, link) == 0) {
		js_perfmap_init(&pm, link);
		pm.owner = (long)getuid();
		CHECK(js_perfmap_refresh(&pm, &why) < 0 && !js_perfmap_size(&pm),
		      "a symbolic link is refused");
		js_perfmap_free(&pm);
		js_perfmap_init(&pm, link); /* the user's own --perf-map FILE */
		CHECK(js_perfmap_refresh(&pm, &why) == 1, "... unless named by the user");
		js_perfmap_free(&pm);
	}
	snprintf(link, sizeof link, "%s", dir);
	js_perfmap_init(&pm, link);
	CHECK(js_perfmap_refresh(&pm, &why) < 0, "a directory is refused");
	js_perfmap_free(&pm);
}

/* ---- against a model ---- */

typedef struct mline {
	uint64_t lo, hi;
	char name[16];
} mline;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* The latest line covering pc, or NULL. */
static const mline *model(const mline *v, size_t n, uint64_t pc)
{
	for (size_t i = n; i-- > 0;)
		if (pc >= v[i].lo && pc < v[i].hi)
			return &v[i];
	return NULL;
}

static void agrees_with_the_model(unsigned rounds)
{
	enum { N = 12000 };
	mline *v = malloc(N * sizeof *v);
	char *text = malloc(N * 64);
	for (unsigned r = 0; r < rounds; r++) {
		size_t n = 200 + rnd() % (N - 200), len = 0;
		uint64_t span = 0x1000 + rnd() % 0x100000; /* dense or sparse */
		for (size_t i = 0; i < n; i++) {
			v[i].lo = 0x400000 + rnd() % span;
			v[i].hi = v[i].lo + 1 + rnd() % (rnd() % 8 ? 0x40 : 0x2000);
			snprintf(v[i].name, sizeof v[i].name, "f%zu", i);
			len += (size_t)sprintf(text + len, "%" PRIx64 " %" PRIx64 " %s\n", v[i].lo,
					       v[i].hi - v[i].lo, v[i].name);
		}
		/* fed in random pieces, committed at random: the overlay and
		 * its merges into the base are all taken */
		js_perfmap pm;
		js_perfmap_init(&pm, NULL);
		size_t at = 0, pending = 0;
		while (at < len) {
			size_t piece = 1 + rnd() % (r % 2 ? 300 : 40000);
			if (piece > len - at - pending)
				piece = len - at - pending;
			ssize_t used = js_perfmap_feed(&pm, text + at, pending + piece);
			if (used < 0)
				break;
			pending = pending + piece - (size_t)used;
			at += (size_t)used;
			if (rnd() % 3 == 0)
				js_perfmap_commit(&pm);
		}
		js_perfmap_commit(&pm);
		CHECK(pm.lines == n, "round %u: %lu lines of %zu", r, pm.lines, n);
		size_t wrong = 0;
		for (unsigned k = 0; k < 4000; k++) {
			uint64_t pc = 0x400000 - 0x10 + rnd() % (span + 0x2100);
			const mline *m = model(v, n, pc);
			const js_pm_seg *g = js_perfmap_find(&pm, pc);
			if (m ? !g || strcmp(g->name, m->name) || g->start != m->lo : g != NULL) {
				if (!wrong++)
					printf("round %u pc %#" PRIx64 ": model %s, map %s\n", r, pc,
					       m ? m->name : "-", g ? g->name : "-");
			}
		}
		CHECK(!wrong, "round %u: %zu of 4000 lookups differ from the model", r, wrong);
		/* each level's ranges are sorted and disjoint */
		bool sorted = true;
		for (unsigned l = 0; l < JS_PM_LEVELS; l++)
			for (size_t i = 1; i < pm.n_lvl[l]; i++)
				sorted &= pm.lvl[l][i].lo >= pm.lvl[l][i - 1].hi &&
					  pm.lvl[l][i].lo < pm.lvl[l][i].hi;
		CHECK(sorted, "round %u: ranges disjoint and sorted", r);
		js_perfmap_free(&pm);
	}
	free(v);
	free(text);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: perfmap_check DIR\n");
		return 2;
	}
	dir = argv[1];
	names_the_lines_of_a_plain_map();
	the_latest_line_wins();
	skips_tombstones_and_hostile_lines();
	waits_for_a_line_being_written();
	follows_the_file();
	agrees_with_the_model(40);
	printf("%d checks, %d failed\n", unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}
