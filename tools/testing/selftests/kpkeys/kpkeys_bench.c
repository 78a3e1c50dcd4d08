// SPDX-License-Identifier: GPL-2.0
/*
 * kpkeys_bench: the benchmark of kpkeys hardened page tables.
 *
 * The same program runs as root on a machine with pkey hardware (built by
 * kselftest's make, with libc) and in a minimal virtual machine (built
 * with nolibc, started by its init).  Every row is an operation whose
 * cost hardened page tables can change: fork and munmap of a touched
 * mapping, vmalloc through lib/test_vmalloc.ko, page faults, process
 * spawn, syscalls and context switches.  Each row runs once untimed and
 * then -r times; the time is CLOCK_MONOTONIC (under QEMU -icount shift=0:
 * executed guest instructions, 1 ns each).  The rows ending in _smp2 run
 * on two CPUs at once and need them; under QEMU, time them in a boot of
 * their own with two vCPUs and no -icount, by wall clock.
 *
 * Compare modes by booting the same kernel with kpkeys_hardened_pgtables=
 * off, nobatch and on (and a kernel without kpkeys for the syscall and
 * context-switch rows), one run of this program per boot, and hand the
 * JSON files of all runs to one report.
 *
 * Output on stdout is KTAP, one test per row (skipped where the kernel
 * cannot run it), with each measurement as a diagnostic line:
 *   # kpkeys-bench: result <row> <rep> ns=<ns> ops=<n> [thp_kb=<kB>]
 *                   [<kpkeys counter>=<delta> ...]
 * Rep 0 is the warm-up.  Counters are the deltas of
 * /sys/kernel/debug/kpkeys/stats (CONFIG_KPKEYS_STATS) around the timed
 * part.  With -j, the same results go to a JSON Lines file: a header
 * record (provenance: kernel, command line, machine, date, mode, whether
 * the kernel has kpkeys and counters), one
 * record per measurement, and one per skipped or failed row.
 *
 * Usage: kpkeys_bench [-r reps] [-q] [-R row,row] [-j file|-] [-m module]
 *                     [-l]
 *   -r  timed repetitions per row (1..50, default 5; a comparison
 *       between runs needs at least 4 per run)
 *   -q  smaller sizes and loops (a quick check that every row runs)
 *   -R  only these rows (default: all but the size sweep with -q)
 *   -j  write JSON Lines to file; "-" prints them as diagnostics
 *       ("# kpkeys-bench-json: {...}"), as the guests do
 *   -m  path of test_vmalloc.ko (default: /lib/test_vmalloc.ko, then
 *       /lib/modules/$(uname -r)/kernel/lib/test_vmalloc.ko)
 *   -l  list the rows and exit
 */
#ifndef NOLIBC
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#endif

#include "../kselftest.h"

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE	15
#endif

#define MAX_REPS	50
#define DEBUGFS		"/sys/kernel/debug"
#define KPKEYS_DIR	DEBUGFS "/kpkeys"
#define STATS_FILE	KPKEYS_DIR "/stats"
#define MODE_FILE	KPKEYS_DIR "/pgtables_mode"

static int quick;
static int debugfs;		/* debugfs is mounted: KPKEYS_DIR tells */
static unsigned long pmd_size;	/* THP size; 0 if the kernel has none */
static const char *module_path;
static FILE *json;		/* JSON Lines output, or NULL */
static int json_diag;		/* ... printed as KTAP diagnostics */

/* The counters recorded per measurement (names in kpkeys/stats). */
static const char * const counters[] = {
	"reg_writes", "reg_writes_entry", "reg_writes_sched",
	"pgtables_switches", "pgtables_switches_skipped", "lazy_mmu_sections",
	"ptps_keyed", "set_memory_pkey_calls", "pool_refills",
};

#define NR_COUNTERS	ARRAY_SIZE(counters)

static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while (len < (ssize_t)size - 1 &&
	       (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* @dir has an entry besides . and .. (debugfs is mounted there). */
static int has_entries(const char *dir)
{
	static char buf[4096];
	long n, off;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return 0;
	while ((n = syscall(__NR_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; ) {
			const char *name = buf + off + 19;	/* d_name */
			unsigned short reclen;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") && strcmp(name, "..")) {
				close(fd);
				return 1;
			}
			off += reclen;
		}
	}
	close(fd);
	return 0;
}

/* The value of a "name value" line of @buf, or -1. */
static long kv_get(const char *buf, const char *name)
{
	size_t len = strlen(name);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, name, len) && p[len] == ' ')
			return atol(p + len + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static int read_counters(long *val)
{
	static char stats[2048];
	unsigned int i;

	if (read_file(STATS_FILE, stats, sizeof(stats)) < 0)
		return -1;
	/* A counter missing from the file is no counters, not a zero. */
	for (i = 0; i < NR_COUNTERS; i++) {
		val[i] = kv_get(stats, counters[i]);
		if (val[i] < 0)
			return -1;
	}
	return 0;
}

/* The length of @s up to its first @c or its end (nolibc has no strcspn). */
static size_t len_to(const char *s, char c)
{
	const char *e = strchr(s, c);

	return e ? (size_t)(e - s) : strlen(s);
}

/* JSON: strings are copied with everything but printable ASCII escaped. */
static void json_str(char *out, size_t size, const char *s)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *s && n + 8 < size; s++) {
		if (*s == '"' || *s == '\\') {
			out[n++] = '\\';
			out[n++] = *s;
		} else if (*s < 0x20 || *s > 0x7e) {
			n += snprintf(out + n, size - n, "\\u%04x",
				      (unsigned char)*s);
		} else {
			out[n++] = *s;
		}
	}
	out[n++] = '"';
	out[n] = '\0';
}

static void json_record(const char *rec)
{
	if (json_diag)
		printf("# kpkeys-bench-json: %s\n", rec);
	else if (json)
		fprintf(json, "%s\n", rec);
}

/* What one timed part produced. */
struct sample {
	unsigned long long ns;
	unsigned long ops;
	long thp_kb;		/* AnonHugePages before the timed part, or -1 */
	int have_counters;
	long before[NR_COUNTERS], after[NR_COUNTERS];
	unsigned long long t0;
};

struct row {
	const char *name;
	int (*run)(const struct row *row, struct sample *s);
	long arg;		/* huge pages (fork, munmap), test mask (vmalloc) */
	long arg2;		/* MiB mapped (fork, munmap), big (vmalloc) */
	const char *params;	/* test_vmalloc parameters */
	int cpus;		/* CPUs it runs on at once (0: one) */
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The timed part: counters first, then the clock; the reverse at the end. */
static void timed_begin(struct sample *s)
{
	s->have_counters = !read_counters(s->before);
	s->t0 = now_ns();
}

static void timed_end(struct sample *s, unsigned long ops)
{
	s->ns = now_ns() - s->t0;
	s->ops = ops;
	s->have_counters = s->have_counters && !read_counters(s->after);
}

/*
 * Mapping of the fork and munmap rows: row->arg2 MiB (64 by default), an
 * eighth of it with -q; never less than one THP.
 */
static unsigned long map_len(const struct row *row)
{
	unsigned long len = (unsigned long)(row->arg2 ? row->arg2 : 64) << 20;

	if (quick)
		len /= 8;
	return len < pmd_size ? pmd_size : len;
}

static long meminfo_kb(const char *name)
{
	static char buf[4096];
	char *p;

	if (read_file("/proc/meminfo", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, name);
	if (!p)
		return -1;
	p += strlen(name);
	while (*p == ' ' || *p == ':')
		p++;
	return atol(p);
}

/*
 * The fork/munmap mapping, touched.  h:0: small folios (MADV_NOHUGEPAGE).
 * h:1: THP folios mapped by PTEs: MADV_HUGEPAGE, touch (PMD-mapped THPs),
 * then mprotect() one page of each THP and back, which splits the PMD
 * mapping but keeps the large folio.
 */
static char *map_touched(const struct row *row, long *thp_kb, char **base,
			 unsigned long *base_len)
{
	unsigned long len = map_len(row), align = pmd_size ? pmd_size : 4096;
	unsigned long i;
	int huge = row->arg;
	char *p, *m;

	*base_len = len + align;
	m = mmap(NULL, *base_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	*base = m;
	p = (char *)(((unsigned long)m + align - 1) & ~(align - 1));
	if (pmd_size && syscall(__NR_madvise, p, len,
				huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		munmap(m, *base_len);
		return NULL;
	}
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	*thp_kb = meminfo_kb("AnonHugePages");
	if (huge && pmd_size) {
		for (i = 0; i < len; i += pmd_size) {
			syscall(__NR_mprotect, p + i, 4096, PROT_READ);
			syscall(__NR_mprotect, p + i, 4096, PROT_READ | PROT_WRITE);
		}
	}
	return p;
}

/* Two forks of a process with the mapping; each child exits at once. */
static int run_fork(const struct row *row, struct sample *s)
{
	unsigned long base_len, i, n = 2;
	char *base, *p;
	int status;

	p = map_touched(row, &s->thp_kb, &base, &base_len);
	if (!p)
		return -1;
	timed_begin(s);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			munmap(base, base_len);
			return -1;
		}
	}
	timed_end(s, n);
	munmap(base, base_len);
	return 0;
}

/*
 * Two CPUs at once: two processes, one pinned to each of CPUs 0 and 1,
 * each with its own touched mapping, fork it in a loop at the same time.
 * Their page-table allocations and frees meet in the kpkeys pool (its
 * lock, and its refills, whose keying flushes the TLB of both CPUs).  Each
 * times its own loop, started together once both have mapped and touched;
 * the time is their mean, per fork (and the child's exit).  The counters
 * cover the whole row, the mappings' set-up and teardown included.
 */
static int run_fork_smp(const struct row *row, struct sample *s)
{
	unsigned long long ns[2] = { 0, 0 };
	unsigned long i, n = quick ? 10 : 50;
	int ready[2], go[2], res[2], w, status, ret = 0;
	pid_t pids[2] = { -1, -1 };
	char c = 0;

	if (pipe(ready))
		return -1;
	if (pipe(go)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pipe(res)) {
		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
		return -1;
	}
	for (w = 0; w < 2; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			unsigned long mask = 1UL << w, base_len;
			unsigned long long t0, t;
			long thp_kb;
			char *base;

			close(ready[0]);
			close(go[1]);
			close(res[0]);
			/* Unpinned if this fails: the row still runs on two CPUs. */
			syscall(__NR_sched_setaffinity, 0, sizeof(mask), &mask);
			if (!map_touched(row, &thp_kb, &base, &base_len))
				_exit(1);
			if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(1);
			t0 = now_ns();
			for (i = 0; i < n; i++) {
				pid_t pid = fork();

				if (pid == 0)
					_exit(0);
				if (pid < 0 || waitpid(pid, &status, 0) != pid)
					_exit(1);
			}
			t = now_ns() - t0;
			_exit(write(res[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
		}
		if (pids[w] < 0)
			ret = -1;
	}
	/* Each side keeps only its ends: a worker that dies is an EOF here. */
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	for (w = 0; w < 2 && !ret; w++)
		if (read(ready[0], &c, 1) != 1)
			ret = -1;
	timed_begin(s);
	for (w = 0; w < 2 && !ret; w++)
		if (write(go[1], &c, 1) != 1)
			ret = -1;
	close(go[1]);
	for (w = 0; w < 2 && !ret; w++)
		if (read(res[0], &ns[w], sizeof(ns[w])) != sizeof(ns[w]))
			ret = -1;
	timed_end(s, n);
	for (w = 0; w < 2; w++)
		if (pids[w] > 0 &&
		    (waitpid(pids[w], &status, 0) != pids[w] || status))
			ret = -1;
	close(ready[0]);
	close(res[0]);
	s->ns = (ns[0] + ns[1]) / 2;
	return ret;
}

static int run_munmap(const struct row *row, struct sample *s)
{
	unsigned long base_len;
	char *base, *p;
	int ret;

	p = map_touched(row, &s->thp_kb, &base, &base_len);
	if (!p)
		return -1;
	timed_begin(s);
	ret = munmap(base, base_len);
	timed_end(s, 1);
	return ret;
}

static int run_getppid(const struct row *row, struct sample *s)
{
	unsigned long i, n = quick ? 20000 : 100000;

	timed_begin(s);
	for (i = 0; i < n; i++)
		getppid();
	timed_end(s, n);
	return 0;
}

/* will-it-scale lseek1: lseek() on a private file, in a loop. */
static int run_lseek(const struct row *row, struct sample *s)
{
	static const char path[] = "/tmp/kpkeys-bench-lseek";
	unsigned long i, n = quick ? 20000 : 100000;
	static char page[4096];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, page, sizeof(page)) != sizeof(page)) {
		close(fd);
		return -1;
	}
	timed_begin(s);
	for (i = 0; i < n; i++)
		lseek(fd, 0, SEEK_SET);
	timed_end(s, n);
	close(fd);
	return 0;
}

/*
 * Context switches: two tasks hand one byte back and forth through two
 * pipes; on one CPU every transfer is a switch.  One op is a round trip.
 */
static int run_pipe(const struct row *row, struct sample *s)
{
	unsigned long i, n = quick ? 2000 : 10000;
	int ab[2], ba[2], status, ret = 0;
	char c = 0;
	pid_t pid;

	if (pipe(ab))
		return -1;
	if (pipe(ba)) {
		close(ab[0]);
		close(ab[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(ab[1]);
		close(ba[0]);
		for (i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	/* Each side keeps only its ends: an early exit is an EOF, not a hang. */
	close(ab[0]);
	close(ba[1]);
	if (pid > 0) {
		timed_begin(s);
		for (i = 0; i < n && !ret; i++)
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				ret = -1;
		timed_end(s, n);
	}
	close(ab[1]);
	close(ba[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		ret = -1;
	return ret;
}

/*
 * Whole process lifetimes: fork, exec of this program with --exit (which
 * returns at once), exit and wait.  One op builds the page tables of a new
 * image and tears down two address spaces.  The guests' nolibc build is
 * static; a libc build is usually dynamic and pays for ld.so too, so
 * compare spawn only between runs of the same binary.
 */
static int run_spawn(const struct row *row, struct sample *s)
{
	unsigned long i, n = quick ? 20 : 100;
	int status;

	timed_begin(s);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			static const char * const argv[] = {
				"kpkeys_bench", "--exit", NULL
			};
			static const char * const envp[] = { NULL };

			execve("/proc/self/exe", (char * const *)argv,
			       (char * const *)envp);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return -1;
	}
	timed_end(s, n);
	return 0;
}

/*
 * will-it-scale page_fault1: map 16 MiB of private anonymous memory in
 * small pages, write one byte per page, unmap.  One op is one fault, which
 * allocates and maps a page (and every 512 faults a page table).
 */
static int run_page_fault(const struct row *row, struct sample *s)
{
	unsigned long i, j, loops = quick ? 1 : 4, len = 16UL << 20;

	timed_begin(s);
	for (i = 0; i < loops; i++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		if (pmd_size)
			syscall(__NR_madvise, p, len, MADV_NOHUGEPAGE);
		for (j = 0; j < len; j += 4096)
			p[j] = 1;
		if (munmap(p, len))
			return -1;
	}
	timed_end(s, loops * (len / 4096));
	return 0;
}

/* Page-table churn: map, touch, mprotect, unmap 256 KiB, in a loop. */
static int run_churn(const struct row *row, struct sample *s)
{
	unsigned long i, j, n = quick ? 50 : 300, len = 256UL << 10;

	timed_begin(s);
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		for (j = 0; j < len; j += 4096)
			p[j] = 1;
		if (syscall(__NR_mprotect, p, len, PROT_READ)) {
			munmap(p, len);
			return -1;
		}
		if (munmap(p, len))
			return -1;
	}
	timed_end(s, n);
	return 0;
}

/*
 * Load test_vmalloc.ko with @params (its init runs the tests, then always
 * fails with -EAGAIN, which unloads it) and copy the kernel messages the
 * run printed into @klog, read from /dev/kmsg (the log is not cleared).
 * Returns 0, or -1 with errno set.
 */
static const char *vmalloc_failed = "test_vmalloc";	/* what failed */

static int run_test_vmalloc(const char *params, char *klog, size_t size)
{
	size_t len = 0;
	int fd, kmsg;
	ssize_t n;

	vmalloc_failed = "opening test_vmalloc.ko";
	fd = open(module_path, O_RDONLY);
	if (fd < 0)
		return -1;
	vmalloc_failed = "reading /dev/kmsg";
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0 || lseek(kmsg, 0, SEEK_END) < 0) {
		if (kmsg >= 0)
			close(kmsg);
		close(fd);
		return -1;
	}
	vmalloc_failed = "loading test_vmalloc.ko (finit_module)";
	if (syscall(__NR_finit_module, fd, params, 0) == 0 || errno != EAGAIN) {
		if (errno == EAGAIN)
			errno = EINVAL;
		close(kmsg);
		close(fd);
		return -1;
	}
	vmalloc_failed = "test_vmalloc (no summary with failed: 0 in the log)";
	close(fd);
	/* One record per read: "<prio>,<seq>,<usec>,<flags>;<text>\n" */
	while (len < size - 1 &&
	       (n = read(kmsg, klog + len, size - 1 - len)) > 0) {
		char *text = memchr(klog + len, ';', n);

		if (text) {
			text++;
			n -= text - (klog + len);
			memmove(klog + len, text, n);
		}
		len += n;
	}
	close(kmsg);
	klog[len] = '\0';
	return 0;
}

/*
 * lib/test_vmalloc.c, with this row's parameters.  The time is the test's
 * own ("avg: <n> usec" for all its loops), checked for "failed: 0".
 */
static int run_vmalloc(const struct row *row, struct sample *s)
{
	static char params[256], klog[1 << 16], name[64];
	unsigned long loops = quick ? 500 : 5000, usec = 0;
	int threads = row->cpus ? row->cpus : 1, seen = 0;
	char *line, *p, *q;

	/* 512 pages and more: a tenth of the loops, the same order of time. */
	if (row->arg2)
		loops /= 10;
	snprintf(params, sizeof(params),
		 "nr_threads=%d test_repeat_count=1 test_loop_count=%lu %s",
		 threads, loops, row->params);
	timed_begin(s);
	if (run_test_vmalloc(params, klog, sizeof(klog)))
		return -1;
	timed_end(s, loops);
	snprintf(name, sizeof(name), "Summary: %s passed:",
		 row->arg == 8 ? "random_size_alloc_test" :
		 row->arg == 1024 ? "vm_map_ram_test" : "fix_size_alloc_test");
	/*
	 * One summary per thread:
	 * "... passed: <n> failed: <n> xfailed: <n> ... avg: <n> usec".
	 * Every thread must have passed; the time is their mean.
	 */
	for (line = klog; (line = strstr(line, name)); line = p + 1, seen++) {
		p = strchr(line, '\n');
		if (!p)
			p = line + strlen(line) - 1;
		else
			*p = '\0';
		q = strstr(line, "avg: ");
		if (!strstr(line, " failed: 0 ") || !q)
			return -1;
		usec += atol(q + 5);
	}
	if (seen != threads) {
		vmalloc_failed = "counting the test_vmalloc summaries";
		errno = EPROTO;
		return -1;
	}
	s->ns = usec * 1000ULL / threads;
	return 0;
}

#define FORK(n, h, mib)		{ n, run_fork, h, mib }
#define MUNMAP(n, h, mib)	{ n, run_munmap, h, mib }
#define VMALLOC(n, mask, p)	{ n, run_vmalloc, mask, 0, p }
#define VMALLOC_BIG(n, p)	{ n, run_vmalloc, 1, 1, "run_test_mask=1 " p }
#define VMALLOC_SMP(n, p)	{ n, run_vmalloc, 1, 0, "run_test_mask=1 " p, 2 }

static const struct row rows[] = {
	FORK("fork_h0", 0, 0),
	FORK("fork_h1", 1, 0),
	MUNMAP("munmap_h0", 0, 0),
	MUNMAP("munmap_h1", 1, 0),
	FORK("fork_h0_16m", 0, 16),
	FORK("fork_h0_256m", 0, 256),
	FORK("fork_h1_16m", 1, 16),
	FORK("fork_h1_256m", 1, 256),
	MUNMAP("munmap_h0_16m", 0, 16),
	MUNMAP("munmap_h0_256m", 0, 256),
	MUNMAP("munmap_h1_16m", 1, 16),
	MUNMAP("munmap_h1_256m", 1, 256),
	VMALLOC("vmalloc_fix_p1_h0", 1, "run_test_mask=1 nr_pages=1 use_huge=0"),
	VMALLOC("vmalloc_fix_p4_h0", 1, "run_test_mask=1 nr_pages=4 use_huge=0"),
	VMALLOC("vmalloc_fix_p16_h0", 1, "run_test_mask=1 nr_pages=16 use_huge=0"),
	VMALLOC("vmalloc_fix_p64_h0", 1, "run_test_mask=1 nr_pages=64 use_huge=0"),
	VMALLOC("vmalloc_fix_p256_h0", 1, "run_test_mask=1 nr_pages=256 use_huge=0"),
	VMALLOC("vmalloc_fix_p16_h1", 1, "run_test_mask=1 nr_pages=16 use_huge=1"),
	VMALLOC("vmalloc_fix_p64_h1", 1, "run_test_mask=1 nr_pages=64 use_huge=1"),
	VMALLOC("vmalloc_fix_p256_h1", 1, "run_test_mask=1 nr_pages=256 use_huge=1"),
	VMALLOC_BIG("vmalloc_fix_p512_h0", "nr_pages=512 use_huge=0"),
	VMALLOC_BIG("vmalloc_fix_p512_h1", "nr_pages=512 use_huge=1"),
	VMALLOC_BIG("vmalloc_fix_p1024_h1", "nr_pages=1024 use_huge=1"),
	VMALLOC("vmalloc_random_p1", 8, "run_test_mask=8"),
	VMALLOC("vmalloc_vm_map_ram_p1", 1024, "run_test_mask=1024"),
	{ "null_syscall", run_getppid },
	{ "lseek", run_lseek },
	{ "pipe_ctxsw", run_pipe },
	{ "spawn", run_spawn },
	{ "page_fault1", run_page_fault },
	{ "pgtable_churn", run_churn },
	{ "fork_smp2", run_fork_smp, 0, 16, NULL, 2 },
	VMALLOC_SMP("vmalloc_fix_p64_smp2", "nr_pages=64 use_huge=0"),
};

/* Left out by -q unless -R names them: the sweep around the 64 MiB rows. */
static int size_sweep(const struct row *row)
{
	return (row->run == run_fork || row->run == run_munmap) && row->arg2;
}

static int row_selected(const char *list, const struct row *row)
{
	size_t len = strlen(row->name);
	const char *p = list;

	if (!list)
		return !(quick && size_sweep(row));
	while ((p = strstr(p, row->name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

/* Online CPUs, from /sys/devices/system/cpu/online ("0-1", "0,2-3"); 0 if unreadable. */
static int online_cpus(void)
{
	static char buf[256];
	int n = 0, a, b;
	char *p = buf;

	if (read_file("/sys/devices/system/cpu/online", buf, sizeof(buf)) < 0)
		return 0;
	while (*p >= '0' && *p <= '9') {
		a = atoi(p);
		b = a;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '-') {
			b = atoi(++p);
			while (*p >= '0' && *p <= '9')
				p++;
		}
		n += b - a + 1;
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

/* Why @row cannot run on this kernel, or NULL. */
static const char *row_skip_reason(const struct row *row)
{
	if (row->cpus > 1) {
		int cpus = online_cpus();

		if (!cpus)
			return "cannot read /sys/devices/system/cpu/online";
		if (row->cpus > cpus)
			return "needs 2 online CPUs";
	}
	if ((row->run == run_fork || row->run == run_munmap) && row->arg &&
	    !pmd_size)
		return "no THP in this kernel (transparent_hugepage/hpage_pmd_size absent or 0)";
	if (row->run == run_vmalloc && access(module_path, R_OK))
		return "test_vmalloc.ko not found (CONFIG_TEST_VMALLOC=m; give its path with -m)";
	return NULL;
}

static void report_row(const struct row *row, const char *what,
		       const char *why)
{
	static char rec[1024], w[512];

	json_str(w, sizeof(w), why);
	snprintf(rec, sizeof(rec), "{\"row\": \"%s\", \"%s\": %s}",
		 row->name, what, w);
	json_record(rec);
}

static void run_row(const struct row *row, int reps)
{
	static char rec[2048];
	const char *why = row_skip_reason(row);
	unsigned int i;
	size_t n;
	int rep;

	if (why) {
		printf("# kpkeys-bench: skip %s %s\n", row->name, why);
		report_row(row, "skip", why);
		ksft_test_result_skip("%s: %s\n", row->name, why);
		return;
	}
	for (rep = 0; rep <= reps; rep++) {
		struct sample s = { .thp_kb = -1 };

		printf("# kpkeys-bench: begin %s %d\n", row->name, rep);
		if (row->run(row, &s)) {
			static char msg[128];

			snprintf(msg, sizeof(msg), "%s failed (errno %d)",
				 row->run == run_vmalloc ? vmalloc_failed :
				 "the measurement", errno);
			printf("# kpkeys-bench: error %s %s\n", row->name, msg);
			report_row(row, "error", msg);
			ksft_test_result_fail("%s: %s\n", row->name, msg);
			return;
		}
		printf("# kpkeys-bench: result %s %d ns=%llu ops=%lu",
		       row->name, rep, s.ns, s.ops);
		n = snprintf(rec, sizeof(rec),
			     "{\"row\": \"%s\", \"rep\": %d, \"ns\": %llu, \"ops\": %lu",
			     row->name, rep, s.ns, s.ops);
		if (s.thp_kb >= 0) {
			printf(" thp_kb=%ld", s.thp_kb);
			n += snprintf(rec + n, sizeof(rec) - n,
				      ", \"thp_kb\": %ld", s.thp_kb);
		}
		for (i = 0; s.have_counters && i < NR_COUNTERS; i++) {
			printf(" %s=%ld", counters[i], s.after[i] - s.before[i]);
			n += snprintf(rec + n, sizeof(rec) - n, ", \"%s\": %ld",
				      counters[i], s.after[i] - s.before[i]);
		}
		printf("\n");
		snprintf(rec + n, sizeof(rec) - n, "}");
		json_record(rec);
	}
	ksft_test_result_pass("%s\n", row->name);
}

/* The first line of /proc/cpuinfo that starts with one of @keys. */
static void cpu_model(char *out, size_t size)
{
	static const char * const keys[] = { "model name", "cpu\t", "CPU part" };
	static char buf[8192];
	unsigned int i;
	char *p, *e;

	snprintf(out, size, "unknown");
	if (read_file("/proc/cpuinfo", buf, sizeof(buf)) < 0)
		return;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		p = strstr(buf, keys[i]);
		if (!p)
			continue;
		p = strchr(p, ':');
		if (!p)
			continue;
		p += 2;
		e = strchr(p, '\n');
		if (e)
			*e = '\0';
		snprintf(out, size, "%s", p);
		return;
	}
}

/* The header record: where these results come from. */
static void provenance(int reps, int nsel)
{
	static char rec[8192], cmdline[2048], c[2100], mode[64], m[80];
	static char model[256], mj[300], rel[200], ver[200], arch[80];
	struct timespec now = { 0 };
	struct utsname u;
	size_t n;
	int vm;

	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = '\0';
	cmdline[len_to(cmdline, '\n')] = '\0';
	if (read_file(MODE_FILE, mode, sizeof(mode)) <= 0)
		snprintf(mode, sizeof(mode), "unknown (no %s)", MODE_FILE);
	mode[len_to(mode, '\n')] = '\0';
	cpu_model(model, sizeof(model));
	/* x86 sets the "hypervisor" CPU flag under QEMU, KVM and friends. */
	{
		static char ci[16384];

		vm = read_file("/proc/cpuinfo", ci, sizeof(ci)) > 0 &&
		     strstr(ci, " hypervisor");
	}
	clock_gettime(CLOCK_REALTIME, &now);
	uname(&u);
	json_str(c, sizeof(c), cmdline);
	json_str(m, sizeof(m), mode);
	json_str(mj, sizeof(mj), model);
	json_str(rel, sizeof(rel), u.release);
	json_str(ver, sizeof(ver), u.version);
	json_str(arch, sizeof(arch), u.machine);
	n = snprintf(rec, sizeof(rec), "{\"kpkeys_bench\": 1, \"arch\": %s", arch);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"kernel\": %s", rel);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"kernel_version\": %s", ver);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"cmdline\": %s", c);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"mode\": %s", m);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"cpu\": %s", mj);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"virtual\": %s",
		      vm ? "true" : "false");
	n += snprintf(rec + n, sizeof(rec) - n, ", \"time\": %lld",
		      (long long)now.tv_sec);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"reps\": %d", reps);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"quick\": %d", quick);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"rows\": %d", nsel);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"map_bytes\": %lu",
		      map_len(&rows[0]));
	n += snprintf(rec + n, sizeof(rec) - n, ", \"thp_bytes\": %lu", pmd_size);
	n += snprintf(rec + n, sizeof(rec) - n, ", \"stats\": %s",
		      access(STATS_FILE, R_OK) ? "false" : "true");
	snprintf(rec + n, sizeof(rec) - n, ", \"kpkeys\": %s}",
		 !debugfs ? "null" : access(KPKEYS_DIR, F_OK) ? "false" : "true");
	json_record(rec);
}

static void help(void)
{
	printf("kpkeys_bench [-r reps] [-q] [-R row,row] [-j file|-]\n");
	printf("             [-m test_vmalloc.ko] [-l]\n");
}

int main(int argc, char **argv)
{
	static char buf[64], modpath[256];
	const char *list = NULL, *json_path = NULL, *p;
	unsigned int i, nsel = 0;
	char *end;
	int reps = 5, opt;
	size_t len;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return 0;	/* the program run_spawn() execs */

	while ((opt = getopt(argc, argv, "r:qR:j:m:lh")) != -1) {
		switch (opt) {
		case 'r':
			reps = strtol(optarg, &end, 10);
			if (*end || reps < 1 || reps > MAX_REPS) {
				printf("kpkeys_bench: -r %s: the repetitions must be 1..%d\n",
				       optarg, MAX_REPS);
				return KSFT_FAIL;
			}
			break;
		case 'q':
			quick = 1;
			break;
		case 'R':
			list = optarg;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'm':
			module_path = optarg;
			break;
		case 'l':
			for (i = 0; i < ARRAY_SIZE(rows); i++)
				printf("%s\n", rows[i].name);
			return 0;
		default:
			help();
			return opt == 'h' ? 0 : KSFT_FAIL;
		}
	}
	for (p = list; p && *p; p += len + (p[len] == ',')) {
		len = len_to(p, ',');
		for (i = 0; i < ARRAY_SIZE(rows); i++)
			if (strlen(rows[i].name) == len &&
			    !strncmp(rows[i].name, p, len))
				break;
		if (i == ARRAY_SIZE(rows)) {
			printf("kpkeys_bench: -R: unknown row '%.*s' (-l lists them)\n",
			       (int)len, p);
			return KSFT_FAIL;
		}
	}
	if (json_path && !strcmp(json_path, "-")) {
		json_diag = 1;
	} else if (json_path) {
		json = fopen(json_path, "w");
		if (!json) {
			printf("kpkeys_bench: cannot write %s (errno %d)\n",
			       json_path, errno);
			return KSFT_FAIL;
		}
	}
	if (!module_path) {
		struct utsname u;

		module_path = "/lib/test_vmalloc.ko";
		if (access(module_path, R_OK) && !uname(&u)) {
			snprintf(modpath, sizeof(modpath),
				 "/lib/modules/%s/kernel/lib/test_vmalloc.ko",
				 u.release);
			module_path = modpath;
		}
	}
	if (geteuid()) {
		ksft_print_header();
		ksft_exit_skip("kpkeys_bench needs root (test_vmalloc.ko, debugfs)\n");
	}
	/*
	 * The mode and the counters are in debugfs; a kernel without kpkeys
	 * has no kpkeys directory there, which only counts once debugfs is
	 * known to be mounted.
	 */
	debugfs = !access(DEBUGFS "/kpkeys", F_OK) || has_entries(DEBUGFS) ||
		  !mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	if (!debugfs)
		printf("# kpkeys-bench: cannot mount debugfs on %s (errno %d): %s\n",
		       DEBUGFS, errno, "mode, counters and whether the kernel has kpkeys unknown");
	if (read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
		      buf, sizeof(buf)) > 0)
		pmd_size = atol(buf);

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		nsel += row_selected(list, &rows[i]);
	ksft_print_header();
	ksft_set_plan(nsel);
	printf("# kpkeys-bench: start reps=%d quick=%d map_bytes=%lu thp_bytes=%lu stats=%s\n",
	       reps, quick, map_len(&rows[0]), pmd_size,
	       access(STATS_FILE, R_OK) ? "no" : "yes");
	provenance(reps, nsel);
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		if (row_selected(list, &rows[i]))
			run_row(&rows[i], reps);
	printf("# kpkeys-bench: done\n");
	if (json)
		fclose(json);
	/* Skipped rows (no THP, no test_vmalloc.ko) are no failure. */
	if (ksft_get_fail_cnt())
		ksft_exit_fail();
	if (!ksft_get_pass_cnt())
		ksft_exit_skip("no row could run on this kernel\n");
	ksft_exit_pass();
}
