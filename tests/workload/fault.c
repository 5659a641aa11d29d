// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for tests/25-workload.t: makes one libc call fail, on
 * paths that contain a given string, as a false ENOENT (or another false
 * error) would, on a host build of the workload.
 *
 *	DCRACE_FAULT_OP		stat, lstat, open or unlink, or several
 *				separated by commas ("stat,lstat")
 *	DCRACE_FAULT_PATH	fail only paths containing this string
 *	DCRACE_FAULT_TIMES	fail only the first N such calls (default: all)
 *	DCRACE_FAULT_COUNT	file that gets the number of failures made
 *	DCRACE_FAULT_ERRNO	the errno, a number (default ENOENT)
 *
 * Build: gcc -shared -fPIC -o fault.so tests/workload/fault.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_ulong made;

/* Is OP one of the comma-separated LIST? */
static int op_listed(const char *list, const char *op)
{
	size_t n = strlen(op);

	for (;;) {
		if (strncmp(list, op, n) == 0 && (list[n] == ',' || !list[n]))
			return 1;
		list = strchr(list, ',');
		if (!list)
			return 0;
		list++;
	}
}

static int fault(const char *op, const char *path)
{
	const char *want = getenv("DCRACE_FAULT_OP");
	const char *sub = getenv("DCRACE_FAULT_PATH");
	const char *times = getenv("DCRACE_FAULT_TIMES");
	const char *err = getenv("DCRACE_FAULT_ERRNO");

	if (!want || !op_listed(want, op) || !sub || !strstr(path, sub))
		return 0;
	if (times && atomic_load(&made) >= strtoul(times, NULL, 10))
		return 0;
	atomic_fetch_add(&made, 1);
	errno = err ? atoi(err) : ENOENT;
	return 1;
}

int stat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);

	if (fault("stat", path))
		return -1;
	if (!real)
		real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
	return real(path, st);
}

int lstat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);

	if (fault("lstat", path))
		return -1;
	if (!real)
		real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "lstat");
	return real(path, st);
}

int unlink(const char *path)
{
	static int (*real)(const char *);

	if (fault("unlink", path))
		return -1;
	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	return real(path);
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	if (fault("open", path))
		return -1;
	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	return real(path, flags, mode);
}

static void __attribute__((destructor)) report(void)
{
	const char *out = getenv("DCRACE_FAULT_COUNT");
	FILE *f;

	if (!out)
		return;
	f = fopen(out, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", (unsigned long)atomic_load(&made));
	fclose(f);
}
