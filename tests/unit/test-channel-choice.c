/* SPDX-License-Identifier: MIT */
/* test-channel-choice.c - which channels ju_open turns on.
 *
 * The default is the in-memory channels: no perf map, no jitdump, and no
 * jitdump directory under $HOME.  JITUNWIND's words and the options' masks ask
 * for the perf files; a channel named by itself must open or ju_open fails,
 * one that only a group asked for is left off; a malformed JITUNWIND is
 * JU_EENV with a message that names the word.
 *
 * This program does not link nongnu libunwind, so the libunwind channel has no
 * consumer here, and a symbolic link planted at /tmp/perf-<pid>.map makes the
 * perf map unwritable: the two ways a channel cannot open.
 */
#include "jitunwind.h"
#include "unit.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define IN_MEMORY (JU_CH_UNWINDER | JU_CH_GDB) /* JU_CH_DEFAULT but libunwind, absent here */
#define FILES (JU_CH_PERFMAP | JU_CH_JITDUMP)

static uint8_t *R; /* an inaccessible reservation: addresses, never run */
static char map[64], home[PATH_MAX], dump_glob[PATH_MAX + 64];

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static bool dump_written(void)
{
	glob_t g;
	bool found = glob(dump_glob, 0, NULL, &g) == 0 && g.gl_pathc == 1;
	if (found) {
		struct stat st;
		found = stat(g.gl_pathv[0], &st) == 0 && st.st_size > 0;
	}
	globfree(&g);
	return found;
}

/* Open with JITUNWIND=env (NULL: unset) and the options, expect `want_rc`;
 * on success check the channels, publish a blob and close again. */
static void open_as(const char *env, const ju_options *o, int want_rc, uint32_t want_ch, const char *what)
{
	if (env)
		setenv("JITUNWIND", env, 1);
	else
		unsetenv("JITUNWIND");
	ju_ctx *c = (ju_ctx *)1;
	int rc = ju_open(o, &c);
	CHECK(rc == want_rc, "%s: ju_open returned %d (%s), want %d", what, rc, ju_errmsg(), want_rc);
	if (rc) {
		CHECK(c == NULL, "%s: out not cleared on failure", what);
		CHECK(ju_errmsg()[0], "%s: no message", what);
		return;
	}
	CHECK(ju_channels(c) == want_ch, "%s: channels %#x, want %#x", what, ju_channels(c), want_ch);
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + 0x100,
		      .size = 16,
		      .name = "cc:blob",
		      .frame = { .kind = JU_FRAME_LEAF } };
	CHECK_RC(ju_publish(c, &b), 0);
	CHECK_RC(ju_unpublish_all(c), 0);
	CHECK_RC(ju_close(c), 0);
}

static void default_writes_no_file(void)
{
	open_as(NULL, NULL, 0, IN_MEMORY, "ju_open(NULL)");
	ju_options zero = { .sz = sizeof(ju_options) };
	open_as(NULL, &zero, 0, IN_MEMORY, "channels 0");
	ju_options def = { .sz = sizeof(ju_options), .channels = JU_CH_DEFAULT, .flags = JU_OPT_NO_ENV };
	open_as(NULL, &def, 0, IN_MEMORY, "JU_CH_DEFAULT");
	open_as("default", NULL, 0, IN_MEMORY, "JITUNWIND=default");
	open_as("", NULL, 0, IN_MEMORY, "JITUNWIND= (empty: unset)");
	CHECK(!exists(map), "the default wrote %s", map);
	char debug[PATH_MAX + 16];
	snprintf(debug, sizeof debug, "%s/.debug", home);
	CHECK(!exists(debug), "the default made %s", debug);
	CHECK(!dump_written(), "the default wrote a jitdump");
}

static void perf_writes_both_files(void)
{
	open_as("perf", NULL, 0, IN_MEMORY | FILES, "JITUNWIND=perf");
	CHECK(exists(map), "JITUNWIND=perf wrote no %s", map);
	CHECK(dump_written(), "JITUNWIND=perf wrote no %s", dump_glob);
	open_as("all", NULL, 0, IN_MEMORY | FILES, "JITUNWIND=all");
	ju_options all = { .sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV };
	open_as(NULL, &all, 0, IN_MEMORY | FILES, "JU_CH_ALL");
}

static void words_combine(void)
{
	open_as("none", NULL, 0, 0, "JITUNWIND=none");
	open_as("default,perfmap", NULL, 0, IN_MEMORY | JU_CH_PERFMAP, "default,perfmap");
	open_as("jitdump,default", NULL, 0, IN_MEMORY | JU_CH_JITDUMP, "jitdump,default");
	open_as("gdb,perfmap", NULL, 0, JU_CH_GDB | JU_CH_PERFMAP, "gdb,perfmap");
	open_as("perf,perf,gdb", NULL, 0, IN_MEMORY | FILES, "perf,perf,gdb");
	/* JITUNWIND overrides the options, whatever they say */
	ju_options gdb = { .sz = sizeof(ju_options), .channels = JU_CH_GDB };
	open_as("perf", &gdb, 0, IN_MEMORY | FILES, "JITUNWIND=perf over JU_CH_GDB");
	ju_options strict = { .sz = sizeof(ju_options), .channels = JU_CH_DEFAULT, .flags = JU_OPT_STRICT };
	open_as("default", &strict, 0, IN_MEMORY, "JITUNWIND=default over JU_OPT_STRICT");
	open_as(NULL, &strict, JU_ENOCONSUMER, 0, "JU_CH_DEFAULT with JU_OPT_STRICT");
	ju_options dump = { .sz = sizeof(ju_options),
			    .channels = JU_CH_DEFAULT | JU_CH_JITDUMP,
			    .flags = JU_OPT_NO_ENV };
	open_as("none", &dump, 0, IN_MEMORY | JU_CH_JITDUMP, "JU_CH_DEFAULT | JU_CH_JITDUMP");
}

/* libunwind has no consumer here: only a group may leave it off. */
static void a_named_channel_must_open(void)
{
	const char *named[] = { "libunwind", "default,libunwind", "perf,libunwind", "all,libunwind",
				"unwinder,libunwind,gdb" };
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
		open_as(named[i], NULL, JU_ENOCONSUMER, 0, named[i]);
		CHECK(strstr(ju_errmsg(), "libunwind"), "%s: message: %s", named[i], ju_errmsg());
	}
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_LIBUNWIND,
			 .flags = JU_OPT_NO_ENV };
	open_as(NULL, &o, JU_ENOCONSUMER, 0, "JU_CH_UNWINDER | JU_CH_LIBUNWIND");
	o.channels = JU_CH_LIBUNWIND;
	open_as(NULL, &o, JU_ENOCONSUMER, 0, "JU_CH_LIBUNWIND");
	o = (ju_options){ .sz = sizeof(ju_options),
			  .channels = JU_CH_ALL,
			  .flags = JU_OPT_NO_ENV | JU_OPT_STRICT };
	open_as(NULL, &o, JU_ENOCONSUMER, 0, "JU_CH_ALL with JU_OPT_STRICT");
}

/* A perf map that cannot be written fails the words that name it ("perf"
 * does) and is left off by the groups. */
static void perf_requires_the_files(void)
{
	unlink(map);
	if (symlink("/nonexistent/test-channel-choice", map)) {
		CHECK(0, "symlink %s: %s", map, strerror(errno));
		return;
	}
	open_as("perf", NULL, JU_EPERM, 0, "JITUNWIND=perf, map unwritable");
	CHECK(strstr(ju_errmsg(), map), "message: %s", ju_errmsg());
	open_as("default,perfmap", NULL, JU_EPERM, 0, "JITUNWIND=default,perfmap, map unwritable");
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_DEFAULT | JU_CH_PERFMAP,
			 .flags = JU_OPT_NO_ENV };
	open_as(NULL, &o, JU_EPERM, 0, "JU_CH_DEFAULT | JU_CH_PERFMAP, map unwritable");
	open_as("all", NULL, 0, IN_MEMORY | JU_CH_JITDUMP, "JITUNWIND=all, map unwritable");
	o.channels = JU_CH_ALL;
	open_as(NULL, &o, 0, IN_MEMORY | JU_CH_JITDUMP, "JU_CH_ALL, map unwritable");
	open_as("default", NULL, 0, IN_MEMORY, "JITUNWIND=default, map unwritable");
	unlink(map);
}

static void bad_spellings_are_refused(void)
{
	static const struct {
		const char *env, *says;
	} bad[] = {
		{ "bogus", "unknown word \"bogus\"" },
		{ "ALL", "unknown word \"ALL\"" },
		{ "Perf", "unknown word \"Perf\"" },
		{ "perfs", "unknown word \"perfs\"" },
		{ "defaults", "unknown word \"defaults\"" },
		{ " perf", "unknown word \" perf\"" },
		{ "perf map", "unknown word \"perf map\"" },
		{ "gdb,perf-map", "unknown word \"perf-map\"" },
		{ "gdb,", "empty word" },
		{ ",gdb", "empty word" },
		{ "unwinder,,gdb", "empty word" },
		{ ",", "empty word" },
		{ "none,gdb", "\"none\" cannot be combined" },
		{ "perf,none", "\"none\" cannot be combined" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		open_as(bad[i].env, NULL, JU_EENV, 0, bad[i].env);
		CHECK(strstr(ju_errmsg(), "JITUNWIND=") && strstr(ju_errmsg(), bad[i].says),
		      "JITUNWIND=\"%s\": message \"%s\" should say %s", bad[i].env, ju_errmsg(), bad[i].says);
	}
	/* the message lists what is accepted */
	open_as("bogus", NULL, JU_EENV, 0, "bogus");
	CHECK(strstr(ju_errmsg(), "perf") && strstr(ju_errmsg(), "default"), "message: %s", ju_errmsg());
	/* JU_OPT_NO_ENV does not read it */
	ju_options o = { .sz = sizeof(ju_options), .flags = JU_OPT_NO_ENV };
	open_as("bogus", &o, 0, IN_MEMORY, "JITUNWIND=bogus under JU_OPT_NO_ENV");
}

int main(void)
{
	R = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (R == MAP_FAILED)
		UNIT_SKIP("mmap: %s", strerror(errno));
	snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
	/* a map an earlier process with our pid left is not ours to judge by */
	if (exists(map) && unlink(map))
		UNIT_SKIP("%s exists and cannot be removed: %s", map, strerror(errno));
	/* The jitdump goes where it goes by default: $HOME/.debug/jit/..., with
	 * $HOME a directory of our own. */
	if (!getcwd(home, sizeof home - 8))
		UNIT_SKIP("getcwd: %s", strerror(errno));
	strcat(home, "/home");
	if (mkdir(home, 0700) && errno != EEXIST)
		UNIT_SKIP("mkdir %s: %s", home, strerror(errno));
	setenv("HOME", home, 1);
	unsetenv("JITDUMPDIR");
	snprintf(dump_glob, sizeof dump_glob, "%s/.debug/jit/jitunwind-*/jit-%d.dump", home, (int)getpid());

	default_writes_no_file(); /* first: nothing has opened a file yet */
	perf_writes_both_files();
	words_combine();
	a_named_channel_must_open();
	perf_requires_the_files();
	bad_spellings_are_refused();
	unsetenv("JITUNWIND");
	unlink(map);
	return unit_done("test-channel-choice");
}
