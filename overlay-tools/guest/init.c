// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the kpkeys test guests, built with the kernel's nolibc
 * (tools/include/nolibc) for every architecture: no cross libc needed.
 *
 * It mounts proc, sysfs and debugfs, runs the in-guest tests and prints
 * their results as KTAP (parsed on the host by kunit.py), then prints
 * "kpkeys-init: done" and reboots; QEMU runs with -no-reboot and exits.
 *
 * Options are read from /proc/cmdline:
 *   kpkeys_init.kselftest=1                 after the tests, kselftest's
 *                                           runner on /kselftest (the
 *                                           suite kpkeys_kselftest)
 *   kpkeys_init.bench=1                     run /kpkeys_bench (the series'
 *                                           tools/testing/selftests/kpkeys)
 *                                           instead of the tests
 *   kpkeys_init.provoke=<LKDTM crash type>  trigger an LKDTM crash first
 *                                           (self-test of the host runner)
 */
#include <linux/mount.h>

#include "guest.h"

#define KTAP_MAX_TESTS	32

struct guest_test {
	const char *name;
	/* Returns 0 on success, -1 on failure, 1 when skipped. */
	int (*run)(const char **reason);
};

static int test_proc_cmdline_is_readable(const char **reason)
{
	if (!strstr(cmdline, "console=")) {
		*reason = "no console= in /proc/cmdline";
		return -1;
	}
	return 0;
}

static int test_debugfs_has_lkdtm_trigger(const char **reason)
{
	/* Opening the trigger does not fire it; writing to it does. */
	int fd = open("/sys/kernel/debug/provoke-crash/DIRECT", O_WRONLY);

	if (fd < 0) {
		*reason = "no debugfs provoke-crash/DIRECT (debugfs or LKDTM missing)";
		return -1;
	}
	close(fd);
	return 0;
}

static int test_fork_and_wait(const char **reason)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(42);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		*reason = "fork or waitpid failed";
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 42) {
		*reason = "child exit status lost";
		return -1;
	}
	return 0;
}

static int test_anonymous_mmap_is_zeroed_and_writable(const char **reason)
{
	size_t len = 4UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED) {
		*reason = "mmap failed";
		return -1;
	}
	for (i = 0; i < len; i += 4096) {
		if (p[i]) {
			*reason = "fresh anonymous page not zero";
			munmap(p, len);
			return -1;
		}
		p[i] = (char)i;
	}
	munmap(p, len);
	return 0;
}

/*
 * lib/test_vmalloc.c as a module (the benchmark loads it once per row):
 * a short fix_size_alloc_test run; its init always ends with -EAGAIN.
 */
static int test_vmalloc_module_runs(const char **reason)
{
	static char klog[1 << 16];

	if (run_test_vmalloc("nr_threads=1 run_test_mask=1 test_loop_count=1000",
			     klog, sizeof(klog))) {
		*reason = "loading /lib/test_vmalloc.ko did not end with EAGAIN";
		return -1;
	}
	if (!strstr(klog, "Summary: fix_size_alloc_test passed: 1 failed: 0 ")) {
		*reason = "test_vmalloc did not report fix_size_alloc_test passed: 1 failed: 0";
		return -1;
	}
	return 0;
}

static const struct guest_test guest_tests[] = {
	{ "proc_cmdline_is_readable", test_proc_cmdline_is_readable },
	{ "vmalloc_module_runs", test_vmalloc_module_runs },
	{ "debugfs_has_lkdtm_trigger", test_debugfs_has_lkdtm_trigger },
	{ "fork_and_wait", test_fork_and_wait },
	{ "anonymous_mmap_is_zeroed_and_writable", test_anonymous_mmap_is_zeroed_and_writable },
};

/* Hardened page tables: a page-table workload, then the whole-system walk. */

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#endif

#define WORK_LEN	(8UL << 20)
#define HUGE_LEN	(2UL << 20)

static char pgtables_mode[32];

static int pgtables_skip(const char **reason)
{
	if (read_file("/sys/kernel/debug/kpkeys/pgtables_mode", pgtables_mode,
		      sizeof(pgtables_mode)) < 0) {
		*reason = "no /sys/kernel/debug/kpkeys/pgtables_mode: CONFIG_KPKEYS_HARDENED_PGTABLES=n";
		return 1;
	}
	if (!strncmp(pgtables_mode, "off", 3)) {
		*reason = "hardened page tables are off (see the boot log)";
		return 1;
	}
	return 0;
}

/* Map, touch, mprotect, split and unmap: every level of page table churns. */
static int churn(void)
{
	char *p = mmap(NULL, WORK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < WORK_LEN; i += 4096)
		p[i] = 1;
	if (syscall(__NR_mprotect, p, WORK_LEN / 2, PROT_READ))
		return -1;
	if (syscall(__NR_mprotect, p, WORK_LEN / 2, PROT_READ | PROT_WRITE))
		return -1;
	/* Unmapping a middle page splits the mapping. */
	munmap(p + WORK_LEN / 2, 4096);
	return munmap(p, WORK_LEN);
}

/* A THP-backed region (2 MiB aligned); NULL if none. */
static char *map_huge(void)
{
	char *p = mmap(NULL, 2 * HUGE_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *huge;

	if (p == MAP_FAILED)
		return NULL;
	huge = (char *)(((unsigned long)p + HUGE_LEN - 1) & ~(HUGE_LEN - 1));
	syscall(__NR_madvise, huge, HUGE_LEN, MADV_HUGEPAGE);
	memset(huge, 2, HUGE_LEN);
	return huge;
}

static int test_pgtable_workload(const char **reason)
{
	int i, status;
	char *huge;

	if (pgtables_skip(reason))
		return 1;
	huge = map_huge();
	if (!huge) {
		*reason = "mmap of the THP region failed";
		return -1;
	}
	for (i = 0; i < 8; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { "/init", NULL }, *envp[] = { NULL };

			/* The child writes its copy of the THP region. */
			huge[i * 4096] = 3;
			if (churn())
				_exit(1);
			/* Every other child replaces its mm: exec. */
			if (i & 1)
				execve("/init", argv, envp);
			_exit(i & 1);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			*reason = "a forked child failed its mmap/mprotect/munmap churn or its exec";
			return -1;
		}
	}
	/* Partial munmap of the THP region splits its PMD. */
	munmap(huge + 4096, 4096);
	munmap(huge, HUGE_LEN);
	if (churn()) {
		*reason = "mmap/mprotect/munmap churn failed";
		return -1;
	}
	return 0;
}

static int test_walker_finds_no_unkeyed_tables(const char **reason)
{
	static char walk[512];
	int fds[2], status;
	char c = 0;
	pid_t pid;
	long kt, ku, ut, uu, mms;

	if (pgtables_skip(reason))
		return 1;
	/* A second process with its own page tables, alive during the walk. */
	if (pipe(fds)) {
		*reason = "pipe failed";
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		char *huge = map_huge();

		close(fds[1]);
		if (huge)
			huge[0] = 4;
		read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	usleep(100000);
	if (read_file("/sys/kernel/debug/kpkeys/walk", walk, sizeof(walk)) < 0) {
		*reason = "cannot read /sys/kernel/debug/kpkeys/walk";
		return -1;
	}
	write(fds[1], &c, 1);
	close(fds[1]);
	waitpid(pid, &status, 0);

	kt = kv_get(walk, "kernel_tables");
	ku = kv_get(walk, "kernel_unkeyed");
	mms = kv_get(walk, "user_mms");
	ut = kv_get(walk, "user_tables");
	uu = kv_get(walk, "user_unkeyed");
	printf("    # walk: kernel %ld tables (%ld unkeyed), %ld user mms, %ld tables (%ld unkeyed), %ld+%ld from kmem caches\n",
	       kt, ku, mms, ut, uu, kv_get(walk, "kernel_slab"),
	       kv_get(walk, "user_slab"));
	if (kt <= 0 || mms < 2 || ut <= 0) {
		*reason = "the walk found no page tables";
		return -1;
	}
	if (ku || uu) {
		*reason = "unkeyed page-table pages (listed in the kernel log)";
		return -1;
	}
	return 0;
}

static int test_stats_count_pgtable_work(const char **reason)
{
	static char stats[1024];

	if (pgtables_skip(reason))
		return 1;
	if (read_file("/sys/kernel/debug/kpkeys/stats", stats, sizeof(stats)) < 0) {
		*reason = "no /sys/kernel/debug/kpkeys/stats: CONFIG_KPKEYS_STATS=n";
		return 1;
	}
	printf("    # stats: pool_allocs %ld pool_frees %ld pool_refills %ld ptps_keyed %ld set_memory_pkey_calls %ld pgtables_switches %ld skipped %ld reg_writes %ld\n",
	       kv_get(stats, "pool_allocs"), kv_get(stats, "pool_frees"),
	       kv_get(stats, "pool_refills"), kv_get(stats, "ptps_keyed"),
	       kv_get(stats, "set_memory_pkey_calls"),
	       kv_get(stats, "pgtables_switches"),
	       kv_get(stats, "pgtables_switches_skipped"),
	       kv_get(stats, "reg_writes"));
	if (kv_get(stats, "pool_allocs") <= 0 || kv_get(stats, "pool_frees") <= 0) {
		*reason = "page-table allocations and frees did not go through the pool";
		return -1;
	}
	if (kv_get(stats, "pool_empty") != 0) {
		*reason = "an allocation found the page-table pool empty";
		return -1;
	}
	return 0;
}

/* x86: /proc/cpuinfo says whether the kernel uses PKS (the host checks). */
static int test_cpuinfo_pks_flag(const char **reason)
{
#ifdef __x86_64__
	static char cpuinfo[16384];
	char *flags;

	if (read_file("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) < 0) {
		*reason = "cannot read /proc/cpuinfo";
		return -1;
	}
	flags = strstr(cpuinfo, "\nflags");
	if (!flags) {
		*reason = "no flags line in /proc/cpuinfo";
		return -1;
	}
	if (strchr(flags + 1, '\n'))
		*strchr(flags + 1, '\n') = '\0';
	printf("    # cpuinfo: pks %s\n", strstr(flags, " pks") ? "present" : "absent");
	return 0;
#else
	*reason = "PKS is x86 only";
	return 1;
#endif
}

/*
 * x86 keys the EFI page tables (efi_mm) too: reading a variable through
 * efivarfs makes the kernel call the GetVariable() runtime service on
 * them.  Booted without UEFI firmware there is nothing to call.
 */
#define EFIVARS	"/sys/firmware/efi/efivars"

static int test_efi_runtime_variable_read(const char **reason)
{
	static char why[192], mounts[8192], name[256], path[320];
	static char dents[4096] __attribute__((aligned(8)));
	char data[1024];
	long n, total = 0;
	int fd, off, len = 0;

	if (access("/sys/firmware/efi", F_OK)) {
		*reason = "not booted under UEFI firmware";
		return 1;
	}
	*reason = why;
	if (read_file("/proc/mounts", mounts, sizeof(mounts)) < 0) {
		snprintf(why, sizeof(why), "cannot read /proc/mounts (errno %d)", errno);
		return -1;
	}
	if (!strstr(mounts, " " EFIVARS " efivarfs ")) {
		if (access(EFIVARS, F_OK) && mkdir(EFIVARS, 0755)) {
			snprintf(why, sizeof(why), "mkdir %s failed (errno %d)", EFIVARS, errno);
			return -1;
		}
		if (mount("efivarfs", EFIVARS, "efivarfs", 0, NULL)) {
			snprintf(why, sizeof(why), "mount efivarfs on %s failed (errno %d)",
				 EFIVARS, errno);
			return -1;
		}
	}

	/* The first regular file: a variable, named <name>-<vendor GUID>. */
	fd = open(EFIVARS, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		snprintf(why, sizeof(why), "open %s failed (errno %d)", EFIVARS, errno);
		return -1;
	}
	name[0] = '\0';
	while (!name[0] && (len = getdents64(fd, (void *)dents, sizeof(dents))) > 0) {
		for (off = 0; off < len;) {
			struct linux_dirent64 *d = (void *)(dents + off);

			off += d->d_reclen;
			if (d->d_type == DT_REG ||
			    (d->d_type == DT_UNKNOWN && d->d_name[0] != '.')) {
				strlcpy(name, d->d_name, sizeof(name));
				break;
			}
		}
	}
	if (len < 0) {
		snprintf(why, sizeof(why), "getdents64 on %s failed (errno %d)",
			 EFIVARS, errno);
		close(fd);
		return -1;
	}
	close(fd);
	if (!name[0]) {
		*reason = "efivarfs lists no variable";
		return -1;
	}

	/* 4 bytes of attributes, then the data: GetVariable() ran. */
	snprintf(path, sizeof(path), "%s/%s", EFIVARS, name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(why, sizeof(why), "open %s failed (errno %d)", path, errno);
		return -1;
	}
	while ((n = read(fd, data, sizeof(data))) > 0)
		total += n;
	if (n < 0) {
		snprintf(why, sizeof(why), "read of %s failed after %ld bytes (errno %d)",
			 name, total, errno);
		close(fd);
		return -1;
	}
	close(fd);
	printf("    # efi: read %ld bytes of %s\n", total, name);
	if (total < 4) {
		snprintf(why, sizeof(why), "read only %ld bytes of %s (less than the 4-byte attributes)",
			 total, name);
		return -1;
	}
	return 0;
}

static const struct guest_test pgtables_tests[] = {
	{ "pgtable_workload", test_pgtable_workload },
	{ "walker_finds_no_unkeyed_tables", test_walker_finds_no_unkeyed_tables },
	{ "stats_count_pgtable_work", test_stats_count_pgtable_work },
	{ "cpuinfo_pks_flag", test_cpuinfo_pks_flag },
	{ "efi_runtime_variable_read", test_efi_runtime_variable_read },
};

/*
 * Print KTAP with one write(2) per call: nolibc's printf() writes each
 * piece of its format separately, and a kernel message that reaches the
 * shared console between two pieces splits the line (the host puts split
 * lines back together, but it sees fewer of them this way).
 */
static __attribute__((format(printf, 1, 2))) void ktap(const char *fmt, ...)
{
	static char buf[1024];
	va_list args;
	int len, off = 0;
	ssize_t n;

	va_start(args, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	if (len < 0)
		return;
	if (len >= (int)sizeof(buf)) {
		/* Truncated: still end the line. */
		len = sizeof(buf) - 1;
		buf[len - 1] = '\n';
	}
	while (off < len && (n = write(1, buf + off, len - off)) > 0)
		off += n;
}

/* One KTAP suite, nested the way KUnit prints it, so kunit.py parses it. */
static void run_suite(const char *suite, const struct guest_test *tests, int n)
{
	int i, failed = 0;

	ktap("KTAP version 1\n1..1\n");
	ktap("    KTAP version 1\n    # Subtest: %s\n    1..%d\n", suite, n);
	for (i = 0; i < n; i++) {
		const char *reason = "";
		int ret = tests[i].run(&reason);

		if (ret > 0)
			ktap("    ok %d %s # SKIP %s\n", i + 1, tests[i].name, reason);
		else if (ret < 0)
			ktap("    # %s: %s\n    not ok %d %s\n", tests[i].name,
			     reason, i + 1, tests[i].name);
		else
			ktap("    ok %d %s\n", i + 1, tests[i].name);
		failed |= ret < 0;
	}
	ktap("%s 1 %s\n", failed ? "not ok" : "ok", suite);
}

/*
 * kpkeys_init.bench=1: run the benchmark (tools/testing/selftests/kpkeys)
 * with its options from the command line (kpkeys_bench.reps=, .quick=1,
 * .rows=), its JSON Lines printed on the console, and nothing else.
 */
static void run_bench(void)
{
	static char reps[16], rows[2048], quick[8];
	char *argv[12] = { "/kpkeys_bench", "-j", "-", "-m", "/lib/test_vmalloc.ko" };
	char *envp[] = { NULL };
	int argc = 5, status;
	pid_t pid;

	if (!cmdline_get("kpkeys_bench.reps", reps, sizeof(reps))) {
		argv[argc++] = "-r";
		argv[argc++] = reps;
	}
	if (!cmdline_get("kpkeys_bench.quick", quick, sizeof(quick)) &&
	    !strcmp(quick, "1"))
		argv[argc++] = "-q";
	if (!cmdline_get("kpkeys_bench.rows", rows, sizeof(rows))) {
		argv[argc++] = "-R";
		argv[argc++] = rows;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, envp);
		printf("kpkeys-init: cannot run %s (errno %d)\n", argv[0], errno);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		printf("kpkeys-init: cannot run %s (errno %d)\n", argv[0], errno);
	else if (WIFSIGNALED(status))
		printf("kpkeys-init: %s killed by signal %d\n", argv[0],
		       WTERMSIG(status));
	else
		printf("kpkeys-init: %s exited with status %d\n", argv[0],
		       WEXITSTATUS(status));
	fflush(stdout);
}

/*
 * kpkeys_init.kselftest=1: run kselftest's own runner, run_kselftest.sh,
 * on the kselftest install of the series' selftests (mkinitrd.sh builds
 * it with kselftest's make into /kselftest) with busybox's shell, and
 * report it as the suite kpkeys_kselftest: the runner's TAP, indented as
 * the suite's subtests.  The benchmark gets a short row list through the
 * runner's per-test arguments (KSELFTEST_KPKEYS_BENCH_ARGS); the rows on
 * two CPUs are among them, the check boots have two.  The suite fails if
 * the runner reports a failure, reports nothing, or exits non-zero.
 */
#define KSELFTEST_RUNNER	"/kselftest/run_kselftest.sh"
#define KSELFTEST_BENCH_ARGS	"-q -r 1 -R null_syscall,fork_h0,munmap_h0," \
				"vmalloc_fix_p1_h0,fork_smp2,vmalloc_fix_p64_smp2"

static void run_kselftest(void)
{
	static char buf[4096], line[1024];
	char *argv[] = { "/bin/sh", KSELFTEST_RUNNER, NULL };
	char *envp[] = { "PATH=/bin:/usr/bin", "HOME=/",
			 "KSELFTEST_KPKEYS_BENCH_ARGS=" KSELFTEST_BENCH_ARGS, NULL };
	int fds[2], status = -1, oks = 0, fails = 0;
	size_t len = 0;
	ssize_t n, i;
	pid_t pid;

	ktap("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: kpkeys_kselftest\n");
	if (access(KSELFTEST_RUNNER, R_OK) || access("/bin/sh", X_OK)) {
		ktap("    1..0 # SKIP no kselftest install or no /bin/sh in the initramfs\n");
		ktap("ok 1 kpkeys_kselftest # SKIP no kselftest install\n");
		return;
	}
	if (pipe(fds)) {
		ktap("    # cannot create a pipe (errno %d)\nnot ok 1 kpkeys_kselftest\n",
		     errno);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (chdir("/kselftest") == 0)
			execve(argv[0], argv, envp);
		printf("# cannot run %s (errno %d)\n", KSELFTEST_RUNNER, errno);
		_exit(127);
	}
	close(fds[1]);
	/* Line by line, indented: the runner's TAP is the suite's subtests. */
	while (pid > 0 && (n = read(fds[0], buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n' && len < sizeof(line) - 1) {
				line[len++] = buf[i];
				continue;
			}
			if (buf[i] != '\n')
				continue;	/* an over-long line: cut */
			line[len] = '\0';
			len = 0;
			/* The suite's version line is above; the runner's plan follows. */
			if (!oks && !fails && !strncmp(line, "TAP version ", 12))
				continue;
			ktap("    %s\n", line);
			if (!strncmp(line, "ok ", 3))
				oks++;
			else if (!strncmp(line, "not ok ", 7))
				fails++;
		}
	}
	if (len) {		/* a last line without its newline */
		line[len] = '\0';
		ktap("    %s\n", line);
	}
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		ktap("    # cannot run %s (errno %d)\n", KSELFTEST_RUNNER, errno);
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		ktap("    # %s exited with status %d\n", KSELFTEST_RUNNER,
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (!oks && !fails)
		ktap("    # the runner reported no test\n");
	ktap("%s 1 kpkeys_kselftest\n",
	     !fails && oks && WIFEXITED(status) && !WEXITSTATUS(status) ?
	     "ok" : "not ok");
}

int main(void)
{
	char provoke[64];

	/* Exec'ed by the page-table workload: just exit. */
	if (getpid() != 1)
		return 0;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	/* No devtmpfs: the benchmark reads test_vmalloc's results here. */
	mkdir("/dev", 0755);
	if (mknod("/dev/kmsg", S_IFCHR | 0600, makedev(1, 11)) && errno != EEXIST)
		printf("kpkeys-init: cannot create /dev/kmsg (errno %d)\n", errno);
	/* kselftest's runner writes to /dev/stdout and /dev/null. */
	if ((mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3)) && errno != EEXIST) ||
	    (symlink("/proc/self/fd", "/dev/fd") && errno != EEXIST) ||
	    (symlink("/proc/self/fd/1", "/dev/stdout") && errno != EEXIST) ||
	    (symlink("/proc/self/fd/2", "/dev/stderr") && errno != EEXIST))
		printf("kpkeys-init: cannot populate /dev (errno %d)\n", errno);

	if (!cmdline_get("kpkeys_init.bench", provoke, sizeof(provoke)) &&
	    !strcmp(provoke, "1")) {
		run_bench();
		reboot(RB_AUTOBOOT);
	}

	if (!cmdline_get("kpkeys_init.provoke", provoke, sizeof(provoke))) {
		printf("kpkeys-init: provoking LKDTM %s\n", provoke);
		if (write_file("/sys/kernel/debug/provoke-crash/DIRECT", provoke))
			printf("kpkeys-init: cannot trigger LKDTM %s\n", provoke);
	}

	run_suite("kpkeys_guest_harness", guest_tests,
		  sizeof(guest_tests) / sizeof(guest_tests[0]));
	run_suite("kpkeys_hardened_pgtables_guest", pgtables_tests,
		  sizeof(pgtables_tests) / sizeof(pgtables_tests[0]));
	if (!cmdline_get("kpkeys_init.kselftest", provoke, sizeof(provoke)) &&
	    !strcmp(provoke, "1"))
		run_kselftest();
	printf("kpkeys-init: done\n");
	fflush(stdout);
	reboot(RB_AUTOBOOT);
	return 0;
}
