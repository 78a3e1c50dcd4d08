// SPDX-License-Identifier: GPL-2.0
/*
 * /bench: the kpkeys benchmark suite, run in the guest by scripts/bench.py.
 * The same source, with the same parameters, is built with the kernel's
 * nolibc for every architecture; /init execs it when the kernel command
 * line has kpkeys_init.bench=1.
 *
 * Each row is measured kpkeys_bench.reps times (default 5) after one
 * untimed warm-up, in the same boot; the host boots once per
 * kpkeys_hardened_pgtables= mode and compares.  Time is the guest's
 * CLOCK_MONOTONIC: under QEMU -icount shift=0 it counts executed
 * instructions (1 ns each), not host time.
 *
 * Output, one line per measurement (the host parses it):
 *   kpkeys-bench: begin <row> <rep>
 *   kpkeys-bench: result <row> <rep> ns=<ns> ops=<n> [thp_kb=<kB>]
 *                 [<kpkeys counter>=<delta> ...]
 * "kpkeys-bench: error <row> <what>" when a row fails, and
 * "kpkeys-bench: skip <row> <why>" when it cannot run on this kernel (h:1
 * without THP, as on powerpc hash with 4K pages).
 * Rep 0 is the warm-up.  Counters are the deltas of
 * /sys/kernel/debug/kpkeys/stats around the timed part (for the vmalloc
 * rows: around the module load, whose time is the test's own).
 *
 * Options (kernel command line):
 *   kpkeys_bench.reps=<n>    timed repetitions per row (1..50)
 *   kpkeys_bench.quick=1     smaller sizes and loops (CI)
 *   kpkeys_bench.rows=<a,b>  only these rows (default: all)
 */
#include <linux/reboot.h>

#include "guest.h"

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE	15
#endif

#define MAX_REPS	50

static int quick;
static unsigned long pmd_size;	/* THP size; 0 if the kernel has none */

/* The counters recorded per measurement (names in kpkeys/stats). */
static const char * const counters[] = {
	"reg_writes", "reg_writes_entry", "reg_writes_sched",
	"pgtables_switches", "pgtables_switches_skipped", "lazy_mmu_sections",
	"ptps_keyed", "set_memory_pkey_calls", "set_memory_pkey_splits",
	"set_memory_pkey_tlb_flushes", "pool_refills",
};
#define NR_COUNTERS	(sizeof(counters) / sizeof(counters[0]))

static int read_counters(long *val)
{
	static char stats[2048];
	unsigned int i;

	if (read_file("/sys/kernel/debug/kpkeys/stats", stats, sizeof(stats)) < 0)
		return -1;
	for (i = 0; i < NR_COUNTERS; i++)
		val[i] = kv_get(stats, counters[i]);
	return 0;
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
	long arg;		/* row-specific: huge pages, nr_pages, ... */
	long arg2;
	const char *params;	/* test_vmalloc parameters */
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

/* Mapping of the fork and munmap rows: 64 MiB, 8 MiB with quick. */
static unsigned long map_len(void)
{
	unsigned long len = (quick ? 8UL : 64UL) << 20;

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
 * mapping but keeps the large folio (the prior-art "h:1").
 */
static char *map_touched(int huge, long *thp_kb, char **base, unsigned long *base_len)
{
	unsigned long len = map_len(), align = pmd_size ? pmd_size : 4096;
	unsigned long i;
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

static int run_fork(const struct row *row, struct sample *s)
{
	unsigned long base_len, i, n = 2;
	char *base, *p;
	int status;

	p = map_touched(row->arg, &s->thp_kb, &base, &base_len);
	if (!p)
		return -1;
	timed_begin(s);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return -1;
	}
	timed_end(s, n);
	munmap(base, base_len);
	return 0;
}

static int run_munmap(const struct row *row, struct sample *s)
{
	unsigned long base_len;
	char *base, *p;
	int ret;

	p = map_touched(row->arg, &s->thp_kb, &base, &base_len);
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
	unsigned long i, n = quick ? 20000 : 100000;
	static char page[4096];
	int fd = open("/tmp/bench-lseek", O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page))
		return -1;
	timed_begin(s);
	for (i = 0; i < n; i++)
		lseek(fd, 0, SEEK_SET);
	timed_end(s, n);
	close(fd);
	unlink("/tmp/bench-lseek");
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
		if (syscall(__NR_mprotect, p, len, PROT_READ) || munmap(p, len))
			return -1;
	}
	timed_end(s, n);
	return 0;
}

/*
 * lib/test_vmalloc.c, loaded as a module with this row's parameters; its
 * init always fails with -EAGAIN, so it is unloaded at once.  The time is
 * the test's own ("avg: <n> usec", guest clock), checked for "failed: 0".
 */
static int run_vmalloc(const struct row *row, struct sample *s)
{
	static char params[256], klog[1 << 16], name[64];
	unsigned long loops = quick ? 500 : 5000;
	char *line, *p;

	snprintf(params, sizeof(params), "nr_threads=1 test_repeat_count=1 test_loop_count=%lu %s",
		 loops, row->params);
	timed_begin(s);
	if (run_test_vmalloc(params, klog, sizeof(klog)))
		return -1;
	timed_end(s, loops);
	snprintf(name, sizeof(name), "Summary: %s passed:",
		 row->arg == 8 ? "random_size_alloc_test" :
		 row->arg == 1024 ? "vm_map_ram_test" : "fix_size_alloc_test");
	line = strstr(klog, name);
	if (!line || !strstr(line, "failed: 0 "))
		return -1;
	p = strstr(line, "avg: ");
	if (!p)
		return -1;
	/* The test's own time for all its loops (one repetition). */
	s->ns = atol(p + 5) * 1000ULL;
	return 0;
}

#define VMALLOC(n, mask, p)	{ n, run_vmalloc, mask, 0, p }

static const struct row rows[] = {
	{ "fork_h0", run_fork, 0 },
	{ "fork_h1", run_fork, 1 },
	{ "munmap_h0", run_munmap, 0 },
	{ "munmap_h1", run_munmap, 1 },
	VMALLOC("vmalloc_fix_p1_h0", 1, "run_test_mask=1 nr_pages=1 use_huge=0"),
	VMALLOC("vmalloc_fix_p4_h0", 1, "run_test_mask=1 nr_pages=4 use_huge=0"),
	VMALLOC("vmalloc_fix_p16_h0", 1, "run_test_mask=1 nr_pages=16 use_huge=0"),
	VMALLOC("vmalloc_fix_p64_h0", 1, "run_test_mask=1 nr_pages=64 use_huge=0"),
	VMALLOC("vmalloc_fix_p256_h0", 1, "run_test_mask=1 nr_pages=256 use_huge=0"),
	VMALLOC("vmalloc_fix_p16_h1", 1, "run_test_mask=1 nr_pages=16 use_huge=1"),
	VMALLOC("vmalloc_fix_p64_h1", 1, "run_test_mask=1 nr_pages=64 use_huge=1"),
	VMALLOC("vmalloc_fix_p256_h1", 1, "run_test_mask=1 nr_pages=256 use_huge=1"),
	VMALLOC("vmalloc_random_p1", 8, "run_test_mask=8"),
	VMALLOC("vmalloc_vm_map_ram_p1", 1024, "run_test_mask=1024"),
	{ "null_syscall", run_getppid },
	{ "lseek", run_lseek },
	{ "pgtable_churn", run_churn },
};

static int row_selected(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	if (!*list)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

static void run_row(const struct row *row, int reps)
{
	unsigned int i;
	int rep;

	if ((row->run == run_fork || row->run == run_munmap) && row->arg &&
	    !pmd_size) {
		printf("kpkeys-bench: skip %s no THP in this kernel (transparent_hugepage/hpage_pmd_size absent or 0)\n",
		       row->name);
		return;
	}
	for (rep = 0; rep <= reps; rep++) {
		struct sample s = { .thp_kb = -1 };

		printf("kpkeys-bench: begin %s %d\n", row->name, rep);
		if (row->run(row, &s)) {
			printf("kpkeys-bench: error %s %s failed (errno %d)\n",
			       row->name, row->run == run_vmalloc ?
			       "test_vmalloc" : "the measurement", errno);
			return;
		}
		printf("kpkeys-bench: result %s %d ns=%llu ops=%lu", row->name,
		       rep, s.ns, s.ops);
		if (s.thp_kb >= 0)
			printf(" thp_kb=%ld", s.thp_kb);
		for (i = 0; s.have_counters && i < NR_COUNTERS; i++)
			printf(" %s=%ld", counters[i], s.after[i] - s.before[i]);
		printf("\n");
	}
}

int main(void)
{
	static char val[512], buf[64];
	unsigned int i;
	int reps = 5;

	if (getpid() == 1) {
		mount("proc", "/proc", "proc", 0, NULL);
		mount("sysfs", "/sys", "sysfs", 0, NULL);
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	}
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	if (!cmdline_get("kpkeys_bench.reps", val, sizeof(val)))
		reps = atoi(val);
	if (reps < 1 || reps > MAX_REPS) {
		printf("kpkeys-bench: error all kpkeys_bench.reps=%d: must be 1..%d\n",
		       reps, MAX_REPS);
		reps = 0;
	}
	quick = !cmdline_get("kpkeys_bench.quick", val, sizeof(val)) &&
		!strcmp(val, "1");
	if (read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
		      buf, sizeof(buf)) > 0)
		pmd_size = atol(buf);
	if (cmdline_get("kpkeys_bench.rows", val, sizeof(val)))
		val[0] = '\0';

	printf("kpkeys-bench: start reps=%d quick=%d map_bytes=%lu thp_bytes=%lu stats=%s\n",
	       reps, quick, map_len(), pmd_size,
	       access("/sys/kernel/debug/kpkeys/stats", R_OK) ? "no" : "yes");
	for (i = 0; reps && i < sizeof(rows) / sizeof(rows[0]); i++)
		if (row_selected(val, rows[i].name))
			run_row(&rows[i], reps);
	printf("kpkeys-bench: done\n");
	fflush(stdout);
	if (getpid() == 1)
		reboot(RB_AUTOBOOT);
	return 0;
}
