/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the guest programs (/init and /bench), each built as
 * one translation unit with nolibc: everything here is static.
 */
#ifndef KPKEYS_GUEST_H
#define KPKEYS_GUEST_H

static char cmdline[4096];

static inline int read_file(const char *path, char *buf, size_t size)
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

static inline int write_file(const char *path, const char *str)
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
static inline int cmdline_get(const char *key, char *val, size_t size)
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

/* Read "name value" lines of a debugfs file into @val; -1 if absent. */
static inline long kv_get(const char *buf, const char *name)
{
	size_t len = strlen(name);
	const char *p = buf;

	while (*p) {
		if (!strncmp(p, name, len) && p[len] == ' ')
			return atol(p + len + 1);
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return -1;
}

/*
 * Load /lib/test_vmalloc.ko with @params (its init runs the tests, then
 * always fails with -EAGAIN, which unloads it) and copy the kernel log of
 * that run into @klog.  Returns 0, or -1 with errno set.
 */
static inline int run_test_vmalloc(const char *params, char *klog, int size)
{
	int fd, len;

	fd = open("/lib/test_vmalloc.ko", O_RDONLY);
	if (fd < 0)
		return -1;
	/* Clear the log: the summary found afterwards is this run's. */
	syscall(__NR_syslog, 5, NULL, 0);
	if (syscall(__NR_finit_module, fd, params, 0) == 0 || errno != EAGAIN) {
		if (errno == EAGAIN)
			errno = EINVAL;
		close(fd);
		return -1;
	}
	close(fd);
	len = syscall(__NR_syslog, 3, klog, size - 1);
	if (len < 0)
		return -1;
	klog[len] = '\0';
	return 0;
}

#endif /* KPKEYS_GUEST_H */
