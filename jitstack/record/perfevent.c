/* SPDX-License-Identifier: MIT */
/* perfevent.c - per-thread perf events with user register and stack
 * copies, and their ring buffers (see perfevent.h).
 *
 * Facts from perf_event_open(2) this relies on:
 * - the mmap is one header page (struct perf_event_mmap_page) and 2^n data
 *   pages; data_head is read with acquire order, data_tail written with
 *   release order once the records before it are consumed;
 * - a sample's fields come in the order of the PERF_SAMPLE_* bits; user
 *   registers are an ABI word, then one u64 per bit of sample_regs_user in
 *   bit order; the stack is a size, that many bytes, and (size != 0) the
 *   number actually copied;
 * - with sample_id_all, other records end with the sample's TID and TIME;
 * - PERF_RECORD_LOST counts the records the kernel dropped when the ring
 *   was full.
 */
#include "record/perfevent.h"
#include "base/grow.h"
#include "base/bounds.h"

#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { PAGE = 4096, RING_SAMPLES = 48, MAX_DATA_PAGES = 256, MIN_DATA_PAGES = 8 };

#if defined(__x86_64__)
/* The registers libdwfl's unwinding starts from (session.c), in the
 * kernel's numbering (asm/perf_regs.h), ascending: the sample lists them in
 * bit order.  Live processes are unwound on the host's own machine only
 * (session.c), so this is the one register set. */
static const int sampled_regs[] = {
	PERF_REG_X86_AX,  PERF_REG_X86_BX,  PERF_REG_X86_CX,  PERF_REG_X86_DX,  PERF_REG_X86_SI,
	PERF_REG_X86_DI,  PERF_REG_X86_BP,  PERF_REG_X86_SP,  PERF_REG_X86_IP,  PERF_REG_X86_R8,
	PERF_REG_X86_R9,  PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13,
	PERF_REG_X86_R14, PERF_REG_X86_R15,
};
#define N_REGS (sizeof sampled_regs / sizeof sampled_regs[0])
#elif defined(__aarch64__)
/* x0-x28, x29 (fp), x30 (lr), sp, pc: PERF_REG_ARM64_X0 .. PERF_REG_ARM64_PC,
 * every general register, in order. */
#define N_REGS ((size_t)PERF_REG_ARM64_PC + 1)
#endif

#if defined(__x86_64__) || defined(__aarch64__)
static uint64_t regs_mask(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < N_REGS; i++)
#if defined(__x86_64__)
		m |= 1ull << sampled_regs[i];
#else
		m |= 1ull << i;
#endif
	return m;
}
#else
#define N_REGS ((size_t)0)
static uint64_t regs_mask(void)
{
	return 0;
}
#endif

static long perf_event_open(struct perf_event_attr *a, pid_t tid)
{
	return syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t data_pages_for(const js_pe *pe, uint32_t stack)
{
	size_t max = pe->max_pages && pe->max_pages < MAX_DATA_PAGES ? pe->max_pages : MAX_DATA_PAGES;
	size_t need = (size_t)RING_SAMPLES * (stack + 256) / PAGE, n = MIN_DATA_PAGES;
	while (n < need && n < max)
		n *= 2;
	return n;
}

static void fill_attr(const js_pe *pe, struct perf_event_attr *a, uint32_t stack, size_t data_size)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = pe->type;
	a->config = pe->config;
	a->freq = 1;
	a->sample_freq = (uint64_t)(pe->hz + 0.5) ? (uint64_t)(pe->hz + 0.5) : 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = regs_mask();
	a->sample_stack_user = stack;
	a->disabled = 1;
	a->exclude_kernel = 1; /* what perf_event_paranoid 2 allows; user stacks are what we unwind */
	a->exclude_hv = 1;
	a->task = 1;
	a->comm = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* the clock of the JIT list's registration times */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(data_size / 2); /* js_pe_drain takes all then */
}

/* Say why the kernel refused, in words a user can act on: first whose
 * process it is (the reason whatever perf_event_paranoid says), then the
 * knobs that refuse one's own. */
static int refused(pid_t pid, int e, js_err *err)
{
	char proc[32];
	struct stat st;
	snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
	if (geteuid() != 0 && stat(proc, &st) == 0 && st.st_uid != geteuid())
		return js_fail(err, JS_EXIT_PERMISSION, e,
			       "process %d belongs to user %u, not to this one (%u): run as its user or as "
			       "root (perf_event_open: %s)",
			       (int)pid, (unsigned)st.st_uid, (unsigned)geteuid(), strerror(e));
	char v[16] = "?";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (!fgets(v, sizeof v, f))
			snprintf(v, sizeof v, "?");
		fclose(f);
	}
	v[strcspn(v, "\n")] = 0;
	return js_fail(
		err, JS_EXIT_PERMISSION, e,
		"perf_event_open on process %d refused (%s; kernel.perf_event_paranoid is %s; a seccomp "
		"filter or a container may forbid it)",
		(int)pid, strerror(e), v);
}

/* kernel.perf_event_max_sample_rate: above it perf_event_open fails with
 * EINVAL, and the kernel lowers it when sampling interrupts take long. */
static double max_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long v = 0;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? (double)v : 0;
}

int js_pe_probe(js_pe *pe, pid_t pid, double hz, js_err *err)
{
	memset(pe, 0, sizeof *pe);
	pe->pid = pid;
	pe->hz = hz;
	double max = max_rate();
	if (max && hz > max) {
		pe->asked_hz = hz;
		pe->hz = max;
	}
	if (!N_REGS)
		return js_fail(err, JS_EXIT_ARCH, 0,
			       "perf event sampling is implemented on x86-64 and AArch64 hosts only");
	/* one descriptor per thread: as many as we may have */
	struct rlimit nofile;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	pe->start_stack = JS_PE_STACK_START;
	const char *start = getenv("JITSTACK_STACK_COPY");
	if (start && *start) {
		long v = strtol(start, NULL, 0);
		pe->start_stack = v < 64 ? 64 : v > JS_PE_STACK_MAX ? JS_PE_STACK_MAX : (uint32_t)(v & ~7l);
	}
	static const struct {
		uint32_t type;
		uint64_t config;
		const char *name;
	} events[] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles" },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock" },
	};
	int e = 0;
	for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
		pe->type = events[i].type;
		pe->config = events[i].config;
		pe->event = events[i].name;
		struct perf_event_attr a;
		fill_attr(pe, &a, JS_PE_STACK_START, MIN_DATA_PAGES * PAGE);
		long fd = perf_event_open(&a, pid);
		if (fd >= 0) {
			close((int)fd);
			pe->scratch = malloc(1 << 16);
			return pe->scratch ? 0 : js_fail(err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
		}
		e = errno;
		/* no such counter here (a VM without a PMU): try the next */
		if (e != ENOENT && e != EOPNOTSUPP && e != ENODEV && e != EINVAL)
			break;
	}
	if (e == EACCES || e == EPERM)
		return refused(pid, e, err);
	if (e == ESRCH)
		return js_fail(err, JS_EXIT_NO_PROCESS, e, "process %d exited", (int)pid);
	return js_fail(err, JS_EXIT_FAILURE, e, "perf_event_open on process %d: %s", (int)pid, strerror(e));
}

static js_pe_thread *find(js_pe *pe, pid_t tid)
{
	for (size_t i = 0; i < pe->n; i++)
		if (pe->t[i].tid == tid)
			return &pe->t[i];
	return NULL;
}

static void close_event(js_pe_thread *t)
{
	if (t->ring)
		munmap(t->ring, t->ring_len);
	if (t->fd >= 0)
		close(t->fd);
	t->ring = NULL;
	t->fd = -1;
}

/* Open t's event with a stack copy of `stack` bytes and map its ring (a
 * smaller ring when locked memory runs short).  0, or an errno. */
static int open_event(js_pe *pe, js_pe_thread *t, uint32_t stack)
{
	for (size_t pages = data_pages_for(pe, stack); pages >= 2; pages /= 2) {
		struct perf_event_attr a;
		fill_attr(pe, &a, stack, pages * PAGE);
		long fd = perf_event_open(&a, t->tid);
		if (fd < 0)
			return errno;
		size_t len = (pages + 1) * PAGE;
		void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (ring == MAP_FAILED) {
			int e = errno;
			close((int)fd);
			if (e == EPERM || e == ENOMEM) /* perf_event_mlock_kb */
				continue;
			return e;
		}
		t->fd = (int)fd;
		t->ring = ring;
		t->ring_len = len;
		t->data_size = pages * PAGE;
		t->stack = stack;
		t->want = 0;
		t->win_n = t->win_max = 0;
		if (ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0)) {
			int e = errno;
			close_event(t);
			return e;
		}
		return 0;
	}
	return ENOMEM;
}

static void read_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	out[0] = 0;
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = 0;
		fclose(f);
	}
	out[strcspn(out, "\n")] = 0;
}

int js_pe_add(js_pe *pe, pid_t tid, const char *comm, js_err *err)
{
	js_pe_thread *t = find(pe, tid);
	if (t && !t->hup)
		return 0;
	if (!t) {
		if (pe->n >= JS_MAX_THREADS)
			return -1;
		if (!js_grow(&pe->t, &pe->cap, pe->n, sizeof *pe->t))
			return js_fail(err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
		t = &pe->t[pe->n++];
	}
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->fd = -1;
	int e = open_event(pe, t, pe->start_stack);
	if (!e) {
		/* read once the event is on: a rename after this comes as a
		 * PERF_RECORD_COMM, one before it is read here (a thread that
		 * names itself as it starts races its own event's opening) */
		read_comm(pe->pid, tid, t->comm, sizeof t->comm);
		if (!t->comm[0] && comm)
			snprintf(t->comm, sizeof t->comm, "%s", comm);
		return 0;
	}
	t->hup = true;
	if (e == ESRCH)
		return -1;
	pe->st.open_failed++;
	if (e == EMFILE || e == ENFILE || e == ENOMEM)
		return -1; /* this thread goes unsampled (counted); a later listing retries */
	if (e == EACCES || e == EPERM)
		return refused(pe->pid, e, err);
	return js_fail(err, JS_EXIT_FAILURE, e, "perf_event_open on thread %d: %s", (int)tid, strerror(e));
}

/* ---- records ------------------------------------------------------------------- */

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static void set_regs(struct user_regs_struct *r, const uint64_t *v)
{
#if defined(__x86_64__)
	/* in sampled_regs' order */
	r->rax = v[0], r->rbx = v[1], r->rcx = v[2], r->rdx = v[3], r->rsi = v[4], r->rdi = v[5];
	r->rbp = v[6], r->rsp = v[7], r->rip = v[8], r->r8 = v[9], r->r9 = v[10], r->r10 = v[11];
	r->r11 = v[12], r->r12 = v[13], r->r13 = v[14], r->r14 = v[15], r->r15 = v[16];
#elif defined(__aarch64__)
	for (int i = 0; i < 31; i++)
		r->regs[i] = v[i];
	r->sp = v[PERF_REG_ARM64_SP], r->pc = v[PERF_REG_ARM64_PC];
#else
	(void)r, (void)v;
#endif
}

/* A sample record (header excluded): bounded by its size. */
static bool parse_sample(js_pe *pe, js_pe_thread *t, const uint8_t *p, size_t len, js_pe_sample *x)
{
	const uint8_t *end = p + len;
	memset(x, 0, sizeof *x);
	x->t = t;
	if (end - p < 24)
		return false;
	x->tid = (pid_t)(u64_at(p) >> 32); /* pid, tid: two u32s */
	x->time_ns = u64_at(p + 8);
	uint64_t abi = u64_at(p + 16);
	p += 24;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE) {
		pe->st.no_regs++; /* a kernel thread, or a sample the kernel could not take */
		return false;
	}
	if ((size_t)(end - p) < N_REGS * 8 + 8)
		return false;
	uint64_t v[N_REGS ? N_REGS : 1];
	memcpy(v, p, N_REGS * 8);
	set_regs(&x->regs, v);
	p += N_REGS * 8;
	uint64_t size = u64_at(p);
	p += 8;
	if (size > (uint64_t)(end - p) || (size && (uint64_t)(end - p) - size < 8))
		return false;
	x->stack = p;
	x->stack_size = size;
	x->stack_len = size ? u64_at(p + size) : 0;
	if (x->stack_len > size)
		x->stack_len = size;
	return true;
}

/* The TID at the end of a non-sample record (sample_id_all: TID, TIME). */
static void on_task(js_pe *pe, uint32_t type, const uint8_t *p, size_t len)
{
	if (len < 16)
		return;
	uint32_t pid = (uint32_t)u64_at(p), tid = (uint32_t)u64_at(p + 8);
	if (type == PERF_RECORD_EXIT) {
		pe->st.exits++;
		js_pe_thread *t = find(pe, (pid_t)tid);
		if (t)
			t->hup = true;
		return;
	}
	/* a thread of the process cloned: fork records are pid, ppid, tid, ptid */
	if ((pid_t)pid == pe->pid && !find(pe, (pid_t)tid) && js_pe_add(pe, (pid_t)tid, NULL, NULL) == 0)
		pe->st.forks++;
}

static void on_comm(js_pe *pe, const uint8_t *p, size_t len)
{
	if (len < 9)
		return;
	js_pe_thread *t = find(pe, (pid_t)(u64_at(p) >> 32));
	if (!t)
		return;
	size_t n = strnlen((const char *)p + 8, len - 8);
	if (n >= sizeof t->comm)
		n = sizeof t->comm - 1;
	memcpy(t->comm, p + 8, n);
	t->comm[n] = 0;
}

/* Drain one ring.  Threads may be added meanwhile (fork records), which
 * moves pe->t: the thread is named by index.  With forks_only, the ring is
 * only read: its fork records are taken, everything stays for the drain. */
static size_t drain_one(js_pe *pe, size_t i, void (*cb)(const js_pe_sample *, void *), void *arg,
			bool forks_only)
{
	size_t count = 0;
	if (!pe->t[i].ring)
		return 0;
	struct perf_event_mmap_page *h = (void *)pe->t[i].ring;
	uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE), tail = h->data_tail;
	while (tail < head && pe->t[i].ring) {
		js_pe_thread *t = &pe->t[i];
		const uint8_t *data = t->ring + PAGE;
		size_t mask = t->data_size - 1, off = (size_t)(tail & mask);
		struct perf_event_header eh;
		if (head - tail < sizeof eh)
			break;
		if (off + sizeof eh <= t->data_size) {
			memcpy(&eh, data + off, sizeof eh);
		} else {
			size_t first = t->data_size - off;
			memcpy(&eh, data + off, first);
			memcpy((uint8_t *)&eh + first, data, sizeof eh - first);
		}
		if (eh.size < sizeof eh || eh.size > head - tail)
			break; /* cannot happen with a sane kernel: give the ring up */
		const uint8_t *rec = data + off;
		if (off + eh.size > t->data_size) { /* wraps: copy it whole */
			size_t first = t->data_size - off;
			memcpy(pe->scratch, data + off, first);
			memcpy(pe->scratch + first, data, eh.size - first);
			rec = pe->scratch;
		}
		const uint8_t *body = rec + sizeof eh;
		size_t blen = eh.size - sizeof eh;
		if (forks_only) {
			if (eh.type == PERF_RECORD_FORK)
				on_task(pe, eh.type, body, blen);
			tail += eh.size;
			continue;
		}
		js_pe_sample x;
		switch (eh.type) {
		case PERF_RECORD_SAMPLE:
			if (parse_sample(pe, t, body, blen, &x)) {
				pe->st.samples++;
				pe->st.stack_bytes += x.stack_size;
				count++;
				cb(&x, arg);
			}
			break;
		case PERF_RECORD_LOST:
			pe->st.lost_records++;
			if (blen >= 16)
				pe->st.lost += u64_at(body + 8);
			break;
		case PERF_RECORD_THROTTLE: pe->st.throttled++; break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: on_task(pe, eh.type, body, blen); break;
		case PERF_RECORD_COMM: on_comm(pe, body, blen); break;
		default: break;
		}
		tail += eh.size;
		h = (void *)pe->t[i].ring;
		__atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
	}
	if (!forks_only && pe->t[i].ring && tail < head) /* a broken record: skip what is there */
		__atomic_store_n(&((struct perf_event_mmap_page *)(void *)pe->t[i].ring)->data_tail, head,
				 __ATOMIC_RELEASE);
	return count;
}

/* Has everything in t's ring been read (a reopen would lose nothing)? */
static bool ring_empty(const js_pe_thread *t)
{
	if (!t->ring)
		return true;
	const struct perf_event_mmap_page *h = (const void *)t->ring;
	return __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE) == h->data_tail;
}

void js_pe_used(js_pe *pe, const js_pe_sample *x, size_t used, bool ran_off)
{
	js_pe_thread *t = x->t;
	bool full = x->stack_len == x->stack_size && x->stack_size;
	if (ran_off && full)
		pe->st.truncated++;
	if (t->stack != x->stack_size)
		return; /* a sample of the event before a resize */
	if (ran_off && full) {
		if (t->stack < JS_PE_STACK_MAX)
			t->want = t->stack * 2 > JS_PE_STACK_MAX ? JS_PE_STACK_MAX : t->stack * 2;
		return;
	}
	if (used > t->win_max)
		t->win_max = (uint32_t)used;
	if (++t->win_n < JS_PE_WINDOW)
		return;
	uint32_t fit = (t->win_max + t->win_max / 2 + 1024 + 1023) & ~1023u;
	if (fit < JS_PE_STACK_MIN)
		fit = JS_PE_STACK_MIN;
	if (fit < t->stack / 2 && !t->want)
		t->want = fit;
	t->win_n = t->win_max = 0;
}

void js_pe_take_forks(js_pe *pe)
{
	for (size_t i = 0; i < pe->n; i++)
		drain_one(pe, i, NULL, NULL, true);
}

/* A resize waits for an empty ring, so that no sample taken at the old size
 * is read at the new one.  Samples land while a drain unwinds the ones
 * before them: where unwinding is slow (AddressSanitizer, a loaded machine)
 * the ring was never empty at the check, and a copy that ran short never
 * grew.  So a thread with a resize pending is drained again, a few passes,
 * each taking only what landed during the one before. */
enum { RESIZE_CATCH_UP = 4 };

size_t js_pe_drain(js_pe *pe, void (*cb)(const js_pe_sample *x, void *arg), void *arg)
{
	size_t count = 0;
	for (size_t i = 0; i < pe->n; i++) {
		count += drain_one(pe, i, cb, arg, false);
		for (int k = 0;
		     k < RESIZE_CATCH_UP && pe->t[i].want && !pe->t[i].hup && !ring_empty(&pe->t[i]); k++)
			count += drain_one(pe, i, cb, arg, false);
	}
	size_t w = 0;
	for (size_t i = 0; i < pe->n; i++) {
		js_pe_thread *t = &pe->t[i];
		if (t->want && !t->hup && ring_empty(t)) {
			uint32_t want = t->want;
			bool grow = want > t->stack;
			close_event(t);
			int e = open_event(pe, t, want);
			if (e)
				t->hup = true;
			else if (grow)
				pe->st.grown++;
			else
				pe->st.shrunk++;
		}
		if (t->hup && ring_empty(t)) {
			close_event(t);
			continue;
		}
		pe->t[w++] = *t;
	}
	pe->n = w;
	return count;
}

bool js_pe_wait(js_pe *pe, int fd, int timeout_ms)
{
	return js_pe_wait_all(&pe, 1, fd, timeout_ms);
}

/* One poll over every ring: on the stack for up to MAX_POLL descriptors,
 * else allocated (without memory, the first MAX_POLL are watched; the
 * others are drained at the next timeout all the same). */
bool js_pe_wait_all(js_pe *const *pe, size_t n_pe, int fd, int timeout_ms)
{
	enum { MAX_POLL = 1024 };
	struct pollfd stack_p[MAX_POLL], *p = stack_p;
	size_t want = fd >= 0, cap = MAX_POLL, n = 0;
	for (size_t k = 0; k < n_pe; k++)
		want += pe[k]->n;
	if (want > MAX_POLL && (p = malloc(want * sizeof *p)))
		cap = want;
	else if (!p)
		p = stack_p;
	if (fd >= 0)
		p[n++] = (struct pollfd){ fd, POLLIN, 0 };
	for (size_t k = 0; k < n_pe; k++)
		for (size_t i = 0; i < pe[k]->n && n < cap; i++)
			p[n++] = (struct pollfd){ pe[k]->t[i].fd, POLLIN, 0 };
	bool readable = false;
	if (poll(p, n, timeout_ms) > 0) {
		size_t j = fd >= 0;
		for (size_t k = 0; k < n_pe; k++)
			for (size_t i = 0; i < pe[k]->n && j < n; i++, j++)
				if (p[j].revents & (POLLHUP | POLLERR))
					pe[k]->t[i].hup = true;
		readable = fd >= 0 && (p[0].revents & POLLIN);
	}
	if (p != stack_p)
		free(p);
	return readable;
}

bool js_pe_pending(const js_pe *pe)
{
	for (size_t i = 0; i < pe->n; i++)
		if (!ring_empty(&pe->t[i]))
			return true;
	return false;
}

bool js_pe_all_gone(const js_pe *pe)
{
	for (size_t i = 0; i < pe->n; i++)
		if (!pe->t[i].hup)
			return false;
	return true;
}

void js_pe_close(js_pe *pe)
{
	for (size_t i = 0; i < pe->n; i++)
		close_event(&pe->t[i]);
	free(pe->t);
	free(pe->scratch);
	memset(pe, 0, sizeof *pe);
}
