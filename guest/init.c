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
 *   kpkeys_init.provoke=<LKDTM crash type>  trigger an LKDTM crash first
 *                                           (self-test of the host runner)
 */
#include <linux/mount.h>

#define KTAP_MAX_TESTS	32

struct guest_test {
	const char *name;
	/* Returns 0 on success, -1 on failure, 1 when skipped. */
	int (*run)(const char **reason);
};

static char cmdline[4096];

static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while (len < (ssize_t)size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

static int write_file(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, str, strlen(str));
	close(fd);
	return n == (ssize_t)strlen(str) ? 0 : -1;
}

/* Value of "key=" on the kernel command line, copied into @val. */
static int cmdline_get(const char *key, char *val, size_t size)
{
	size_t klen = strlen(key);
	const char *p = cmdline;

	while (*p) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = 0;

			p += klen + 1;
			while (p[n] && p[n] != ' ' && p[n] != '\n' && n < size - 1) {
				val[n] = p[n];
				n++;
			}
			val[n] = '\0';
			return 0;
		}
		while (*p && *p != ' ')
			p++;
	}
	return -1;
}

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

static const struct guest_test guest_tests[] = {
	{ "proc_cmdline_is_readable", test_proc_cmdline_is_readable },
	{ "debugfs_has_lkdtm_trigger", test_debugfs_has_lkdtm_trigger },
	{ "fork_and_wait", test_fork_and_wait },
	{ "anonymous_mmap_is_zeroed_and_writable", test_anonymous_mmap_is_zeroed_and_writable },
};

/* One KTAP suite, nested the way KUnit prints it, so kunit.py parses it. */
static void run_suite(const char *suite, const struct guest_test *tests, int n)
{
	int i, failed = 0;

	printf("KTAP version 1\n1..1\n");
	printf("    KTAP version 1\n    # Subtest: %s\n    1..%d\n", suite, n);
	for (i = 0; i < n; i++) {
		const char *reason = "";
		int ret = tests[i].run(&reason);

		if (ret > 0)
			printf("    ok %d %s # SKIP %s\n", i + 1, tests[i].name, reason);
		else if (ret < 0)
			printf("    # %s: %s\n    not ok %d %s\n", tests[i].name,
			       reason, i + 1, tests[i].name);
		else
			printf("    ok %d %s\n", i + 1, tests[i].name);
		failed |= ret < 0;
	}
	printf("%s 1 %s\n", failed ? "not ok" : "ok", suite);
}

int main(void)
{
	char provoke[64];

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));

	if (!cmdline_get("kpkeys_init.provoke", provoke, sizeof(provoke))) {
		printf("kpkeys-init: provoking LKDTM %s\n", provoke);
		if (write_file("/sys/kernel/debug/provoke-crash/DIRECT", provoke))
			printf("kpkeys-init: cannot trigger LKDTM %s\n", provoke);
	}

	run_suite("kpkeys_guest_harness", guest_tests,
		  sizeof(guest_tests) / sizeof(guest_tests[0]));
	printf("kpkeys-init: done\n");
	fflush(stdout);
	reboot(RB_AUTOBOOT);
	return 0;
}
