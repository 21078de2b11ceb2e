/* SPDX-License-Identifier: MIT */
/* main.c - jitstack's command line: parse it, run a command, return its
 * exit code (the codes are in session.h and jitstack(1)).
 */
#include "dump.h"
#include "base/bounds.h"
#include "record/record.h"
#include "base/follow.h"
#include "target/hold.h"
#include "top.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JS_VERSION "0.2.0" /* the tree's VERSION (Makefile) */

static const char usage[] =
	"usage: jitstack -p PID [--json] [-s] [--images] [--max-frames N] [--no-jit] [--no-demangle]\n"
	"                       [--perf-map FILE | --no-perf-map] [--jitdump FILE | --no-jitdump]\n"
	"                       [--no-python] [--debuginfo-path PATH] [--color[=WHEN]] [--max-hold MS]\n"
	"                       [--stats]\n"
	"       jitstack --core FILE [--exe PATH] [--json] [-s] [--images] [--max-frames N] [--no-jit]\n"
	"                       [--no-demangle] [--perf-map FILE | --no-perf-map] [--jitdump FILE | --no-jitdump]\n"
	"                       [--no-python] [--debuginfo-path PATH] [--color[=WHEN]]\n"
	"       jitstack record (-p PID[,PID...] | --all) [-F HZ] [-d SECONDS] [-o FILE]\n"
	"                       [--format collapsed|pprof|svg] [--mode perf|ptrace] [--idle] [--addresses]\n"
	"                       [--max-frames N] [--no-jit] [--no-demangle]\n"
	"                       [--perf-map FILE | --no-perf-map] [--jitdump FILE | --no-jitdump]\n"
	"                       [--no-python] [--debuginfo-path PATH] [--max-hold MS] [--stats]\n"
	"       jitstack top (-p PID[,PID...] | --all) [--once] [-F HZ] [-d SECONDS] [--mode perf|ptrace]\n"
	"                       [--idle] [--color[=WHEN]] [--max-frames N] [--no-jit] [--no-demangle]\n"
	"                       [--perf-map FILE | --no-perf-map] [--jitdump FILE | --no-jitdump]\n"
	"                       [--no-python] [--debuginfo-path PATH] [--max-hold MS]\n"
	"\n"
	"Print the stack of every thread of a live process or a core file, through JIT\n"
	"code registered with the GDB JIT interface (named, with source lines, unwound\n"
	"with the JIT's own CFI) or listed in its perf map (named); or sample a\n"
	"process's (or several processes') stacks into a profile, or watch the hottest\n"
	"functions live (top).\n"
	"\n"
	"  -p, --pid PID        the process to read (ptrace: same user or root)\n"
	"      --core FILE      a core file instead of a process\n"
	"      --exe PATH       the core's executable (default: from the core's notes)\n"
	"      --json           JSON output (see jitstack(1) for its shape)\n"
	"  -s, --source         source lines for every frame, loading separate debuginfo\n"
	"                       (JIT frames and programs built with -g always have them)\n"
	"      --images         list the JIT images and their functions instead of stacks\n"
	"      --max-frames N   frames per thread (default %u, at most %u)\n"
	"      --no-jit         ignore the JIT interface: JIT frames by frame pointers only\n"
	"      --no-demangle    C++ and Rust names as the symbol tables hold them\n"
	"      --perf-map FILE  name JIT code from this perf map (default: the target's\n"
	"                       /tmp/perf-PID.map; for a core, when it was written before it)\n"
	"      --no-perf-map    read no perf map\n"
	"      --jitdump FILE   name, unwind and give lines of JIT code from this perf jitdump\n"
	"                       (default: the one the target maps, jit-PID.dump; for a core,\n"
	"                       the one in its notes, records written before the core)\n"
	"      --no-jitdump     read no jitdump\n"
	"      --no-python      show no Python frames (the stacks of a CPython 3.11 or 3.13\n"
	"                       show each thread's Python functions above the eval loop\n"
	"                       frames that run them, read from the interpreter's memory;\n"
	"                       record and top: with --mode ptrace)\n"
	"      --debuginfo-path PATH  where separate debuginfo is looked for, as eu-stack's\n"
	"                       (default :.debug:/usr/lib/debug)\n"
	"      --color[=WHEN]   colour function names by kind: JIT green, native yellow,\n"
	"                       Python cyan, unnamed grey (as the SVG); WHEN is auto (the default: when\n"
	"                       stdout is a terminal and NO_COLOR is unset), always (also\n"
	"                       --color alone) or never\n"
	"      --max-read SIZE  read no more of a perf map or jitdump than SIZE bytes (K, M, G\n"
	"                       suffixes; default 1G): the rest is not read, with a warning\n"
	"      --max-read-time SECS  stop reading a perf map or jitdump after SECS (default 5)\n"
	"      --max-hold MS    no thread of the target is held stopped longer than this\n"
	"                       (default %u, 1..60000): past it the threads go on and the\n"
	"                       rest is read from copies, or while they run\n"
	"      --stats          timings and counters on stderr\n"
	"  record:\n"
	"  -p, --pid PID,PID... the processes to sample, in one profile (a PID that cannot\n"
	"                       be read is left out with a warning, unless it is the only one)\n"
	"      --all            every process this user may read, as they are at the start\n"
	"                       (not jitstack itself, not kernel threads; ones started later\n"
	"                       are not followed).  With several processes (a list, --all)\n"
	"                       collapsed and svg stacks start with a \"comm-PID\" frame;\n"
	"                       pprof samples always carry pid and comm labels\n"
	"  -F, --frequency HZ   samples per second (default 99, at most 10000)\n"
	"  -d, --duration SECS  how long (default: until the processes exit or ^C)\n"
	"  -o, --output FILE    where the profile goes (default: stdout for collapsed,\n"
	"                       jitstack.pb.gz for pprof)\n"
	"      --format FMT     collapsed (flamegraph.pl, speedscope), pprof (gzipped protobuf) or\n"
	"                       svg (an interactive flame graph)\n"
	"      --mode MODE      perf: the kernel copies registers and stacks at each sample,\n"
	"                       nothing stops (default; ptrace when perf_event_open is refused);\n"
	"                       ptrace: each sample stops the thread for its registers and stack\n"
	"      --idle           also count threads blocked in a system call (--mode ptrace)\n"
	"      --addresses      collapsed: frames with their addresses (one line per pc stack)\n"
	"  record shows its progress on stderr, in one line rewritten in place, when that is\n"
	"  a terminal (never in a pipe or a file)\n"
	"  top: record's options, and\n"
	"      --once           sample for -d seconds (default 2), print one table, exit (also\n"
	"                       when stdout is not a terminal)\n"
	"                       On a terminal: the hottest functions over the last 1 s and\n"
	"                       10 s, self and total, refreshed every second.  Keys: s sort by\n"
	"                       self, t by total, v functions/threads, p pause, q (or ^C) quit\n"
	"  -h, --help           this text;  --version  the version\n"
	"\n"
	"Exit status: 0 success, 1 failure, 2 usage, 3 no such process (or it exited),\n"
	"4 permission denied, 5 not a core file, 6 unsupported architecture.\n";

enum {
	O_CORE = 256,
	O_EXE,
	O_JSON,
	O_IMAGES,
	O_MAX_FRAMES,
	O_NO_JIT,
	O_STATS,
	O_FORMAT,
	O_IDLE,
	O_ADDRESSES,
	O_NO_DEMANGLE,
	O_PERF_MAP,
	O_NO_PERF_MAP,
	O_JITDUMP,
	O_NO_JITDUMP,
	O_NO_PYTHON,
	O_DEBUGINFO_PATH,
	O_MODE,
	O_ALL,
	O_COLOR,
	O_ONCE,
	O_MAX_HOLD,
	O_MAX_READ,
	O_MAX_READ_TIME,
	O_VERSION
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "core", required_argument, NULL, O_CORE },
	{ "exe", required_argument, NULL, O_EXE },
	{ "json", no_argument, NULL, O_JSON },
	{ "source", no_argument, NULL, 's' },
	{ "images", no_argument, NULL, O_IMAGES },
	{ "max-frames", required_argument, NULL, O_MAX_FRAMES },
	{ "no-jit", no_argument, NULL, O_NO_JIT },
	{ "no-demangle", no_argument, NULL, O_NO_DEMANGLE },
	{ "perf-map", required_argument, NULL, O_PERF_MAP },
	{ "no-perf-map", no_argument, NULL, O_NO_PERF_MAP },
	{ "jitdump", required_argument, NULL, O_JITDUMP },
	{ "no-jitdump", no_argument, NULL, O_NO_JITDUMP },
	{ "no-python", no_argument, NULL, O_NO_PYTHON },
	{ "debuginfo-path", required_argument, NULL, O_DEBUGINFO_PATH },
	{ "stats", no_argument, NULL, O_STATS },
	{ "frequency", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "idle", no_argument, NULL, O_IDLE },
	{ "mode", required_argument, NULL, O_MODE },
	{ "all", no_argument, NULL, O_ALL },
	{ "addresses", no_argument, NULL, O_ADDRESSES },
	{ "color", optional_argument, NULL, O_COLOR },
	{ "once", no_argument, NULL, O_ONCE },
	{ "max-hold", required_argument, NULL, O_MAX_HOLD },
	{ "max-read", required_argument, NULL, O_MAX_READ },
	{ "max-read-time", required_argument, NULL, O_MAX_READ_TIME },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int bad_usage(const char *fmt, const char *arg)
{
	js_err e;
	js_fail(&e, JS_EXIT_USAGE, 0, fmt, arg);
	js_err_print(&e);
	fprintf(stderr, "Try 'jitstack --help'.\n");
	return e.code;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* -p PID,PID,...: at most JS_MAX_TARGETS ids, in *pids (malloc'd). */
static bool parse_pids(const char *s, pid_t **pids, size_t *n)
{
	size_t cap = 1;
	for (const char *q = s; *q; q++)
		cap += *q == ',';
	if (cap > JS_MAX_TARGETS || !(*pids = calloc(cap, sizeof **pids)))
		return false;
	*n = 0;
	char buf[32];
	for (const char *q = s;; q++) {
		size_t len = strcspn(q, ",");
		long v;
		if (len >= sizeof buf)
			return false;
		memcpy(buf, q, len);
		buf[len] = 0;
		if (!parse_long(buf, 1, INT_MAX, &v))
			return false;
		(*pids)[(*n)++] = (pid_t)v;
		q += len;
		if (!*q)
			return true;
	}
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

/* A size: digits with an optional K, M or G (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = *end == 'K' || *end == 'k'   ? 10
		    : *end == 'M' || *end == 'm' ? 20
		    : *end == 'G' || *end == 'g' ? 30
						 : 0;
	if (shift)
		end++;
	if (errno || end == s || *end || !v || *s == '-' || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

int main(int argc, char **argv)
{
	bool top = argc > 1 && !strcmp(argv[1], "top");
	bool record = top || (argc > 1 && !strcmp(argv[1], "record"));
	const char *cmd = top ? "top" : "record";
	if (record) {
		argv++;
		argc--;
	}
	js_dump_opts d = { 0 };
	js_record_opts r = { .hz = 99, .format = &js_writers[0] };
	const char *pid_arg = NULL, *format = NULL, *mode = NULL;
	bool hz_given = false, all = false, color_given = false, once = false;
	unsigned hold_ms = 0;
	uint64_t read_bytes = 0;
	double read_secs = 0;
	int c;
	long v;
	while ((c = getopt_long(argc, argv, "p:sF:d:o:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p': pid_arg = optarg; break;
		case O_CORE: d.core = optarg; break;
		case O_EXE: d.exe = optarg; break;
		case O_JSON: d.json = true; break;
		case 's': d.opt.source_all = true; break;
		case O_IMAGES: d.images = true; break;
		case O_MAX_FRAMES:
			if (!parse_long(optarg, 1, JS_MAX_FRAMES, &v))
				return bad_usage("--max-frames: expected 1..65536, got '%s'", optarg);
			d.opt.max_frames = (unsigned)v;
			break;
		case O_NO_JIT: d.opt.no_jit = true; break;
		case O_NO_DEMANGLE: d.opt.no_demangle = true; break;
		case O_PERF_MAP: d.opt.perf_map = optarg; break;
		case O_NO_PERF_MAP: d.opt.no_perf_map = true; break;
		case O_JITDUMP: d.opt.jitdump = optarg; break;
		case O_NO_JITDUMP: d.opt.no_jitdump = true; break;
		case O_NO_PYTHON: d.opt.no_python = true; break;
		case O_DEBUGINFO_PATH: d.opt.debuginfo_path = optarg; break;
		case O_STATS: d.opt.stats = true; break;
		case 'F':
			if (!parse_double(optarg, 0.1, 10000, &r.hz))
				return bad_usage("-F: expected a frequency in 0.1..10000 Hz, got '%s'",
						 optarg);
			hz_given = true;
			break;
		case 'd':
			if (!parse_double(optarg, 0.001, 1e7, &r.secs))
				return bad_usage("-d: expected a duration in seconds, got '%s'", optarg);
			break;
		case 'o': r.out = optarg; break;
		case O_FORMAT: format = optarg; break;
		case O_IDLE: r.idle = true; break;
		case O_MODE: mode = optarg; break;
		case O_ALL: all = true; break;
		case O_ADDRESSES: r.addresses = true; break;
		case O_COLOR:
			if (!optarg)
				d.color = JS_COLOR_ALWAYS;
			else if (!js_color_parse(optarg, &d.color))
				return bad_usage("--color: expected auto, always or never, got '%s'", optarg);
			color_given = true;
			break;
		case O_ONCE: once = true; break;
		case O_MAX_HOLD:
			if (!parse_long(optarg, 1, 60000, &v))
				return bad_usage("--max-hold: expected 1..60000 milliseconds, got '%s'",
						 optarg);
			hold_ms = (unsigned)v;
			break;
		case O_MAX_READ:
			if (!parse_size(optarg, &read_bytes))
				return bad_usage("--max-read: expected a size in bytes (K, M, G), got '%s'",
						 optarg);
			break;
		case O_MAX_READ_TIME:
			if (!parse_double(optarg, 0.001, 1e6, &read_secs))
				return bad_usage("--max-read-time: expected seconds, got '%s'", optarg);
			break;
		case 'h':
			printf(usage, JS_DEFAULT_MAX_FRAMES, JS_MAX_FRAMES,
			       (unsigned)(JS_DEFAULT_MAX_HOLD_NS / 1000000u));
			return 0;
		case O_VERSION: printf("jitstack %s\n", JS_VERSION); return 0;
		default: fprintf(stderr, "Try 'jitstack --help'.\n"); return JS_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	/* ^Z, and the bound on every stop of the target's threads (hold.h) */
	js_hold_setup((uint64_t)hold_ms * 1000000u);
	js_follow_set_bounds(read_bytes, (uint64_t)(read_secs * 1e9));
	if (pid_arg && !record) {
		if (!parse_long(pid_arg, 1, INT_MAX, &v))
			return bad_usage("-p: expected a process id, got '%s'", pid_arg);
		d.pid = (pid_t)v;
	}
	if (d.opt.jitdump && d.opt.no_jitdump)
		return bad_usage("%s", "--jitdump FILE and --no-jitdump exclude each other");
	if (all && !record)
		return bad_usage("%s", "--all belongs to 'jitstack record' and 'jitstack top'");
	if (once && !top)
		return bad_usage("%s", "--once belongs to 'jitstack top'");
	if (record) {
		if (!pid_arg == !all)
			return bad_usage(all ? "%s takes -p PID,... or --all, not both"
					     : "%s needs -p PID[,PID...] or --all",
					 cmd);
		if (d.core || d.json || d.images)
			return bad_usage("%s takes -p only (no --core, --json or --images)", cmd);
		if (!top && color_given)
			return bad_usage("%s", "--color belongs to the stack dump and 'jitstack top'");
		if (top && (format || r.out || r.addresses))
			return bad_usage("%s", "-o, --format and --addresses belong to 'jitstack record'");
		if (format && !(r.format = js_writer_named(format))) {
			char names[128], msg[400];
			js_writer_names(names, sizeof names);
			snprintf(msg, sizeof msg, "--format: expected %s, got '%.200s'", names, format);
			return bad_usage("%s", msg);
		}
		if (mode && strcmp(mode, "perf") && strcmp(mode, "ptrace"))
			return bad_usage("--mode: expected perf or ptrace, got '%s'", mode);
		/* perf events sample threads while they run on a CPU: blocked ones never */
		if (r.idle && mode && !strcmp(mode, "perf"))
			return bad_usage(
				"%s", "--idle needs --mode ptrace (perf events sample running threads only)");
		r.mode = (mode && !strcmp(mode, "ptrace")) || r.idle ? MODE_PTRACE : MODE_PERF;
		pid_t *pids = NULL;
		if (pid_arg && !parse_pids(pid_arg, &pids, &r.n_pids)) {
			free(pids);
			return bad_usage("-p: expected process ids separated by commas, got '%s'", pid_arg);
		}
		r.opt = d.opt;
		r.pids = pids;
		r.all = all;
		js_top_opts t = { .r = r, .once = once, .color = d.color };
		int rc = top ? js_top(&t) : js_record(&r);
		free(pids);
		return rc;
	}
	if (format || r.out || r.secs || r.idle || r.addresses || hz_given || mode)
		return bad_usage("%s",
				 "-F, -d, -o, --format, --mode, --idle and --addresses belong to 'jitstack "
				 "record'");
	if (!pid_arg == !d.core)
		return bad_usage("%s", "give either -p PID or --core FILE");
	if (d.exe && !d.core)
		return bad_usage("%s", "--exe goes with --core");
	if (d.opt.perf_map && d.opt.no_perf_map)
		return bad_usage("%s", "--perf-map FILE and --no-perf-map exclude each other");
	return js_dump(&d);
}
