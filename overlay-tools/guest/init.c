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
 *   kpkeys_init.pkeys=1                     then the user pkey register
 *                                           (emulator_keys) and Linux's
 *                                           user-pkey selftests in /pkeys
 *                                           (upstream_pkey_selftests)
 *   kpkeys_init.bench=1                     run /kpkeys_bench (the series'
 *                                           tools/testing/selftests/kpkeys)
 *                                           instead of the tests
 *   kpkeys_init.provoke=<LKDTM crash type>  trigger an LKDTM crash first
 *                                           (self-test of the host runner)
 */
#include <linux/mount.h>
#include <asm/ioctls.h>

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

#ifndef MAP_HUGETLB
#define MAP_HUGETLB	0x40000
#endif

/*
 * hugetlb pages, where the kernel has them: allocating them remaps their
 * vmemmap (hugetlb vmemmap optimisation splits its PMD mappings into new
 * kernel PTE tables), and freeing them restores it.  A kernel without
 * hugetlb skips it; one whose pages cannot be allocated says so.
 */
static void hugetlb_churn(void)
{
	static char meminfo[4096];
	unsigned long len;
	char *p, *size;

	if (read_file("/proc/meminfo", meminfo, sizeof(meminfo)) < 0)
		return;
	size = strstr(meminfo, "Hugepagesize:");
	if (!size || write_file("/proc/sys/vm/nr_hugepages", "2"))
		return;
	size += strlen("Hugepagesize:");
	while (*size == ' ')
		size++;
	len = atol(size) * 1024UL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p != MAP_FAILED) {
		memset(p, 5, len);
		munmap(p, len);
	} else {
		printf("    # hugetlb: no %lu kB page could be mapped\n", len >> 10);
	}
	write_file("/proc/sys/vm/nr_hugepages", "0");
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
	hugetlb_churn();
	if (churn()) {
		*reason = "mmap/mprotect/munmap churn failed";
		return -1;
	}
	return 0;
}

/*
 * Walk every page table of the system (debugfs kpkeys/walk) with a second
 * process alive: any table that is not keyed fails.
 */
/* Set while polling: only the walks that decide are printed. */
static int walk_quiet;

static int walk_tables(const char **reason, long *kernel_tables)
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
	if (!walk_quiet)
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
	if (kernel_tables)
		*kernel_tables = kt;
	return 0;
}

static int walk_finds_no_unkeyed_tables(const char **reason)
{
	return walk_tables(reason, NULL);
}

/*
 * The HMM test driver maps 512 MiB of device-private memory with
 * memremap_pages() when it loads and unmaps it when it is removed: the
 * vmemmap of that memory gets kernel page tables built, and freed, after
 * hardened page tables are enabled.  /init loads it before the tests.
 */
#define TEST_HMM_KO	"/lib/test_hmm.ko"
static int test_hmm_loaded;

static int load_test_hmm(void)
{
	int fd = open(TEST_HMM_KO, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

static int test_device_memory_tables_keyed_and_freed(const char **reason)
{
	long mapped, unmapped, remapped;
	static char msg[160];
	int ret, i;

	if (pgtables_skip(reason))
		return 1;
	if (access(TEST_HMM_KO, R_OK)) {
		*reason = "no " TEST_HMM_KO ": the kernel has no CONFIG_TEST_HMM=m";
		return 1;
	}
	if (!test_hmm_loaded) {
		*reason = "loading " TEST_HMM_KO " at boot failed";
		return -1;
	}
	ret = walk_tables(reason, &mapped);
	if (ret)
		return ret;
	if (syscall(__NR_delete_module, "test_hmm", O_NONBLOCK)) {
		*reason = "removing test_hmm failed";
		return -1;
	}
	test_hmm_loaded = 0;
	/*
	 * The device memory may be released after delete_module() returns,
	 * or later still: walk until the count drops, for up to about 3 s
	 * (each walk takes 0.1 s or more), and print the last walk.
	 */
	for (i = 0; i < 30; i++) {
		walk_quiet = i < 29;
		ret = walk_tables(reason, &unmapped);
		if (ret || unmapped < mapped)
			break;
	}
	if (walk_quiet && !ret) {
		walk_quiet = 0;
		ret = walk_tables(reason, &unmapped);
	}
	walk_quiet = 0;
	if (ret)
		return ret;
	if (load_test_hmm()) {
		*reason = "loading " TEST_HMM_KO " again failed";
		return -1;
	}
	test_hmm_loaded = 1;
	ret = walk_tables(reason, &remapped);
	if (ret)
		return ret;
	printf("    # kernel page tables: %ld with device memory mapped, %ld unmapped, %ld mapped again\n",
	       mapped, unmapped, remapped);
	/*
	 * Mapping device memory again must build tables (keyed: the walks
	 * found none unkeyed).  Freeing them when the module goes is not
	 * synchronous: when it has not happened yet, the new mapping takes
	 * another range, and the count still rises.
	 */
	if (remapped <= unmapped) {
		snprintf(msg, sizeof(msg),
			 "mapping device memory again built no page table (%ld, %ld, %ld)",
			 mapped, unmapped, remapped);
		*reason = msg;
		return -1;
	}
	if (unmapped >= mapped)
		printf("    # no page table freed within 3 s of removing test_hmm\n");
	return 0;
}

/*
 * Before the workload: the tables built at boot after hardened page
 * tables were enabled (initcalls, drivers mapping device memory with
 * memremap_pages(), hugetlb, KFENCE) are keyed.
 */
static int test_walker_finds_no_unkeyed_tables_after_boot(const char **reason)
{
	return walk_finds_no_unkeyed_tables(reason);
}

/* After pgtable_workload: every table it created is keyed too. */
static int test_walker_finds_no_unkeyed_tables(const char **reason)
{
	return walk_finds_no_unkeyed_tables(reason);
}

static int test_stats_count_pgtable_work(const char **reason)
{
	static char stats[1024];

	if (pgtables_skip(reason))
		return 1;
	if (read_file("/sys/kernel/debug/kpkeys/stats", stats, sizeof(stats)) < 0) {
		*reason = "no /sys/kernel/debug/kpkeys/stats (CONFIG_KPKEYS_STATS=n, or not counting: boot with kpkeys_stats=on)";
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

/*
 * powerpc: KUAP and KUEP share the AMR and IAMR with kpkeys (<asm/kpkeys.h>
 * folds the default level into KUAP's values).  With kpkeys on, a kernel
 * access to user memory outside a user access window must still fault:
 * LKDTM's ACCESS_USERSPACE (read, then write) and EXEC_USERSPACE, each in
 * a child the oops kills.  The markers let the runner (run-qemu.py) take
 * the oops in between as expected.
 */
#ifdef __powerpc64__
/*
 * Whether a kernel message logged since @fd was opened (on /dev/kmsg,
 * non-blocking, at its end) contains @text.
 */
static int kmsg_has(int fd, const char *text)
{
	static char rec[8192];	/* a record longer than the buffer: EINVAL */
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0 && errno == EPIPE)	/* records overwritten: go on */
			continue;
		if (n < 0)			/* EAGAIN: nothing more */
			return 0;
		rec[n] = 0;
		if (strstr(rec, text))
			return 1;
	}
	return 0;
}

/*
 * LKDTM @type in a child, which must die of it, and the kernel must say
 * @why (KUAP's or KUEP's own report, arch/powerpc/mm/fault.c), not just
 * oops for some other reason.
 */
static int lkdtm_kills_child(const char *type, const char *why, const char **reason)
{
	static char msg[160];
	int status = 0, fd, kmsg;
	pid_t pid;

	fd = open("/sys/kernel/debug/provoke-crash/DIRECT", O_WRONLY);
	if (fd < 0) {
		*reason = "no LKDTM (CONFIG_LKDTM) in this kernel";
		return 1;
	}
	close(fd);
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0) {
		*reason = "cannot open /dev/kmsg to read the kernel's report";
		return -1;
	}
	if (lseek(kmsg, 0, SEEK_END) < 0) {
		close(kmsg);
		*reason = "cannot seek to the end of /dev/kmsg";
		return -1;
	}
	printf("kpkeys-test: the next oops is expected (LKDTM %s)\n", type);
	pid = fork();
	if (pid == 0) {
		write_file("/sys/kernel/debug/provoke-crash/DIRECT", type);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("kpkeys-test: the expected oops is over\n");
		close(kmsg);
		*reason = "fork or waitpid failed";
		return -1;
	}
	printf("kpkeys-test: the expected oops is over\n");
	if (!WIFSIGNALED(status)) {
		close(kmsg);
		snprintf(msg, sizeof(msg), "LKDTM %s: the kernel access survived", type);
		*reason = msg;
		return -1;
	}
	if (!kmsg_has(kmsg, why)) {
		close(kmsg);
		snprintf(msg, sizeof(msg), "LKDTM %s: the child died, but the kernel never said \"%s\"",
			 type, why);
		*reason = msg;
		return -1;
	}
	close(kmsg);
	return 0;
}
#endif

static int test_kuap_blocks_user_access(const char **reason)
{
#ifdef __powerpc64__
	return lkdtm_kills_child("ACCESS_USERSPACE", "Kernel attempted to read user page",
				 reason);
#else
	*reason = "powerpc only: KUAP shares the AMR with kpkeys";
	return 1;
#endif
}

static int test_kuep_blocks_user_exec(const char **reason)
{
#ifdef __powerpc64__
	return lkdtm_kills_child("EXEC_USERSPACE", "kernel tried to execute user page",
				 reason);
#else
	*reason = "powerpc only: KUEP shares the IAMR with kpkeys";
	return 1;
#endif
}

static const struct guest_test pgtables_tests[] = {
	{ "walker_finds_no_unkeyed_tables_after_boot",
	  test_walker_finds_no_unkeyed_tables_after_boot },
	{ "device_memory_tables_keyed_and_freed",
	  test_device_memory_tables_keyed_and_freed },
	{ "pgtable_workload", test_pgtable_workload },
	{ "walker_finds_no_unkeyed_tables", test_walker_finds_no_unkeyed_tables },
	{ "stats_count_pgtable_work", test_stats_count_pgtable_work },
	{ "cpuinfo_pks_flag", test_cpuinfo_pks_flag },
	{ "efi_runtime_variable_read", test_efi_runtime_variable_read },
	{ "kuap_blocks_user_access", test_kuap_blocks_user_access },
	{ "kuep_blocks_user_exec", test_kuep_blocks_user_exec },
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

/*
 * kpkeys_init.pkeys=1: the user pkey register as the emulator enforces
 * it (the suite emulator_keys), then Linux's own user-pkey selftests
 * (upstream_pkey_selftests, built into /pkeys by mkinitrd.sh), on arm64
 * (POR_EL0, FEAT_S1POE) and powerpc (the AMR).
 */
#ifndef PKEY_DISABLE_WRITE
#define PKEY_DISABLE_WRITE	0x2
#endif

/* Write-disable user pkey @key in the register, as pkey_set() does. */
static int user_key_deny_write(int key)
{
#if defined(__aarch64__)
	unsigned long por;

	/* POR_EL0: 4 bits per key; R|X (0b0011) takes W away. */
	__asm__ volatile("mrs %0, s3_3_c10_c2_4" : "=r" (por));
	por &= ~(0xfUL << (4 * key));
	por |= 0x3UL << (4 * key);
	__asm__ volatile("msr s3_3_c10_c2_4, %0\n\tisb" : : "r" (por) : "memory");
	return 0;
#elif defined(__powerpc64__)
	unsigned long amr;

	/* AMR (SPR 13 from problem state): key 0 at the top, 0b10 = WD. */
	__asm__ volatile("mfspr %0, 13" : "=r" (amr));
	amr |= 0x2UL << (2 * (31 - key));
	__asm__ volatile("isync\n\tmtspr 13, %0\n\tisync" : : "r" (amr) : "memory");
	return 0;
#else
	return -1;
#endif
}

/*
 * A store that the TLB has seen allowed, then the key's write permission
 * taken away by a register write, then a store at once: it must fault.
 * An emulator that caches permissions in its TLB and does not flush them
 * on the write lets the second store through.
 */
static int test_key_write_disable_faults_at_once(const char **reason)
{
	volatile char *page;
	long key;
	int status = 0;
	pid_t pid;

	key = syscall(__NR_pkey_alloc, 0, 0);
	if (key < 0) {
		*reason = "pkey_alloc() failed: the kernel or the CPU has no user pkeys (arm64: FEAT_S1POE, which only the project's QEMU emulates; powerpc: hash MMU storage keys)";
		return -1;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED ||
	    syscall(__NR_pkey_mprotect, page, 4096, PROT_READ | PROT_WRITE, key)) {
		*reason = "mmap() or pkey_mprotect() failed";
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		page[0] = 1;		/* the TLB now holds the page writable */
		if (user_key_deny_write(key))
			_exit(2);
		page[0] = 2;		/* must fault */
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		*reason = "fork() or waitpid() failed";
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		*reason = "no user pkey register on this architecture";
		return 1;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		*reason = "the store after the key's write permission was taken away did not fault: the emulator kept a stale permission";
		return -1;
	}
	return 0;
}

/*
 * The kernel keeps one user pkey for page tables: POIndex 7 on arm64
 * (<asm/kpkeys.h>), storage key 4 on powerpc.  Through the system calls,
 * user space can neither allocate it, nor free it and then allocate it,
 * nor give a page that key.
 */
#if defined(__aarch64__)
#define KERNEL_PKEY	7
#define MAX_PKEYS	8
#elif defined(__powerpc64__)
#define KERNEL_PKEY	4
#define MAX_PKEYS	32
#endif

static int test_kernel_pkey_is_reserved(const char **reason)
{
#ifdef KERNEL_PKEY
	static char msg[96];
	long keys[MAX_PKEYS], key;
	int n = 0, ret = 0;
	void *page;

	while (n < MAX_PKEYS && (key = syscall(__NR_pkey_alloc, 0, 0)) >= 0) {
		keys[n++] = key;
		if (key == KERNEL_PKEY) {
			snprintf(msg, sizeof(msg), "pkey_alloc() returned %d, the kernel's page-table key",
				 KERNEL_PKEY);
			*reason = msg;
			ret = -1;
		}
	}
	if (!n) {
		*reason = "pkey_alloc() failed: no user pkeys";
		return -1;
	}
	/* Exhausted, with the kernel's key never handed out. */
	if (!ret && (n == MAX_PKEYS || errno != ENOSPC)) {
		*reason = "pkey_alloc() did not run out with ENOSPC";
		ret = -1;
	}
	while (n)
		syscall(__NR_pkey_free, keys[--n]);
	if (!ret && (syscall(__NR_pkey_free, KERNEL_PKEY) != -1 || errno != EINVAL)) {
		*reason = "pkey_free() of the kernel's key did not fail with EINVAL";
		ret = -1;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ret && (page == MAP_FAILED ||
		     syscall(__NR_pkey_mprotect, page, 4096, PROT_READ, KERNEL_PKEY) != -1 ||
		     errno != EINVAL)) {
		*reason = "pkey_mprotect() with the kernel's key did not fail with EINVAL";
		ret = -1;
	}
	if (page != MAP_FAILED)
		munmap(page, 4096);
	return ret;
#else
	*reason = "arm64 and powerpc only: the kernel's page-table pkey";
	return 1;
#endif
}

static const struct guest_test key_tests[] = {
	{ "key_write_disable_faults_at_once", test_key_write_disable_faults_at_once },
	{ "kernel_pkey_is_reserved", test_kernel_pkey_is_reserved },
};

#if defined(__aarch64__) || defined(__powerpc64__)
/*
 * One upstream selftest: run it as nobody (as root protection_keys also
 * reserves hugetlb pages, which not every guest has), read its output
 * until every process that holds it has exited (protection_keys forks,
 * its parent exits and the child goes on with the remaining tests), reap
 * them all (init adopts the orphans), and judge the output, not only the
 * exit status: a KTAP program must print the expected plan and as many
 * "ok" lines, a powerpc harness program "success:".
 */
struct upstream_test {
	const char *name;	/* under /pkeys */
	int plan;		/* KTAP plan of a full run; 0: powerpc harness */
};

static char upstream_reason[256];

static int run_upstream(const struct upstream_test *t)
{
	static char buf[4096], line[512], path[64], tail[16][160];
	char *argv[] = { path, NULL };
	char *envp[] = { "PATH=/bin", "HOME=/tmp", NULL };
	int fds[2], status = 0, plan = -1, oks = 0, fails = 0, skips = 0;
	int success = 0, bail = 0, st, nlines = 0;
	size_t len = 0;
	ssize_t n, i;
	pid_t pid, w;

	snprintf(path, sizeof(path), "/pkeys/%s", t->name);
	if (access(path, X_OK)) {
		snprintf(upstream_reason, sizeof(upstream_reason),
			 "%s is not in the initramfs", path);
		return -1;
	}
	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (chdir("/tmp") || syscall(__NR_setgid, 65534) ||
		    syscall(__NR_setuid, 65534)) {
			printf("# cannot become nobody in /tmp (errno %d)\n", errno);
			_exit(126);
		}
		execve(path, argv, envp);
		printf("# cannot run %s (errno %d)\n", path, errno);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0 && (n = read(fds[0], buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			len = 0;
			/* The last lines, shown if the test fails. */
			snprintf(tail[nlines++ % 16], sizeof(tail[0]), "%s", line);
			if (!strncmp(line, "1..", 3))
				plan = atoi(line + 3);
			else if (!strncmp(line, "ok ", 3) && strstr(line, "# SKIP"))
				skips++;
			else if (!strncmp(line, "ok ", 3))
				oks++;
			else if (!strncmp(line, "not ok ", 7))
				fails++;
			else if (!strncmp(line, "success: ", 9))
				success++;
			else if (!strncmp(line, "failure: ", 9) || !strncmp(line, "skip: ", 6))
				fails++;
			else if (!strncmp(line, "Bail out!", 9))
				bail++;
			else if (strncmp(line, "# Totals:", 9) &&
				 strncmp(line, "# cannot ", 9))
				continue;
			/* The plan, the summary and every failure on the console. */
			if (strncmp(line, "ok ", 3) && strncmp(line, "success: ", 9))
				ktap("    # %s: %s\n", t->name, line);
		}
	}
	close(fds[0]);
	/* Every descendant: the direct child, then the orphans init adopted. */
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	while ((w = waitpid(-1, &st, 0)) > 0)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(upstream_reason, sizeof(upstream_reason),
			 "exited with status %d%s", WIFEXITED(status) ? WEXITSTATUS(status) :
			 WTERMSIG(status), WIFEXITED(status) ? "" : " (the signal)");
	else if (t->plan && (plan != t->plan || oks != t->plan || fails || skips || bail))
		snprintf(upstream_reason, sizeof(upstream_reason),
			 "plan 1..%d (a full run is 1..%d), %d ok, %d failed, %d skipped%s",
			 plan, t->plan, oks, fails, skips, bail ? ", bailed out" : "");
	else if (!t->plan && (success != 1 || fails))
		snprintf(upstream_reason, sizeof(upstream_reason),
			 "%d success lines, %d failure or skip lines", success, fails);
	else
		upstream_reason[0] = '\0';
	if (upstream_reason[0]) {
		for (i = nlines > 16 ? nlines - 16 : 0; i < nlines; i++)
			ktap("    # %s| %s\n", t->name, tail[i % 16]);
		return -1;
	}
	ktap("    # %s: %d of %d passed\n", t->name, t->plan ? oks : success,
	     t->plan ? t->plan : 1);
	return 0;
}

/* The plans of Linux 7.3's selftests: tests x iterations. */
static const struct upstream_test upstream_tests[] = {
#if defined(__aarch64__)
	{ "protection_keys", 462 },
	{ "pkey_sighandler_tests", 5 },
#elif defined(__powerpc64__)
	{ "protection_keys", 440 },
	/*
	 * Not pkey_siginfo: its two threads race pkey_mprotect() a million
	 * times each, over 4 minutes under TCG.
	 */
	{ "pkey_exec_prot", 0 },
#endif
};

#define UPSTREAM_TEST(i)						\
static __attribute__((unused)) int test_upstream_##i(const char **reason) \
{									\
	int ret = run_upstream(&upstream_tests[i]);			\
									\
	*reason = upstream_reason;					\
	return ret;							\
}

UPSTREAM_TEST(0)
UPSTREAM_TEST(1)

static const struct guest_test upstream_suite[] = {
#if defined(__aarch64__)
	{ "protection_keys", test_upstream_0 },
	{ "pkey_sighandler_tests", test_upstream_1 },
#elif defined(__powerpc64__)
	{ "protection_keys", test_upstream_0 },
	{ "pkey_exec_prot", test_upstream_1 },
#endif
};
#endif /* arm64 or powerpc */

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

	/* Device memory mapped from the start (the HMM test driver). */
	if (!access(TEST_HMM_KO, R_OK)) {
		test_hmm_loaded = !load_test_hmm();
		if (!test_hmm_loaded)
			printf("kpkeys-init: cannot load %s (errno %d)\n",
			       TEST_HMM_KO, errno);
	}

	run_suite("kpkeys_guest_harness", guest_tests,
		  sizeof(guest_tests) / sizeof(guest_tests[0]));
	run_suite("kpkeys_hardened_pgtables_guest", pgtables_tests,
		  sizeof(pgtables_tests) / sizeof(pgtables_tests[0]));
	if (!cmdline_get("kpkeys_init.kselftest", provoke, sizeof(provoke)) &&
	    !strcmp(provoke, "1"))
		run_kselftest();
	if (!cmdline_get("kpkeys_init.pkeys", provoke, sizeof(provoke)) &&
	    !strcmp(provoke, "1")) {
		run_suite("emulator_keys", key_tests,
			  sizeof(key_tests) / sizeof(key_tests[0]));
#if defined(__aarch64__) || defined(__powerpc64__)
		run_suite("upstream_pkey_selftests", upstream_suite,
			  sizeof(upstream_suite) / sizeof(upstream_suite[0]));
#endif
	}
	printf("kpkeys-init: done\n");
	fflush(stdout);
	/*
	 * Wait until the console has sent it all (tcdrain()): reboot() does
	 * not, and the last lines, the done line among them, could be lost.
	 */
	ioctl(1, TCSBRK, 1);
	reboot(RB_AUTOBOOT);
	return 0;
}
