// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: the pruners (drop_caches in a loop, or a memory hog
 * that makes the dcache shrinker prune) and vm.vfs_cache_pressure.
 */
#include "workload.h"

static void prune_pause(void)
{
	if (cfg.prune_interval_ms > 0)
		sleep_ms_stoppable(cfg.prune_interval_ms);
	else
		sched_yield();
}

static void prune_error(struct pruner *p, const char *what, int err)
{
	if (p->errors++ == 0)
		snprintf(p->first_err, sizeof(p->first_err), "%s: %s", what,
			 strerror(err));
}

static void prune_done(struct pruner *p)
{
	p->prunes++;
	atomic_store_explicit(&p->pub_prunes, p->prunes,
			      memory_order_relaxed);
}

/*
 * Each write of DROP_CACHES prints "drop_caches: 2" (pr_info) until 4 is
 * written once: thousands of console lines a second, whose printing on a
 * serial console slows the pruner and floods the guest's log.  Kernels
 * before 3.17 refuse 4; the pruner works without it.
 */
static void drop_caches_quiet(void)
{
	int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	/* on an old kernel this fails and the messages stay */
	(void)!write(fd, "4", 1);
	close(fd);
}

static void drop_caches_loop(struct pruner *p)
{
	drop_caches_quiet();
	while (!stopped()) {
		int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			prune_error(p, "open " DROP_CACHES, errno);
		} else {
			if (write(fd, "2", 1) == 1)
				prune_done(p);
			else
				prune_error(p, "write " DROP_CACHES, errno);
			close(fd);
		}
		prune_pause();
	}
}

/*
 * Memory the pressure pruner may use, in kB: MemAvailable, or on kernels
 * without it (< 3.14) a conservative estimate.  Never more than MemTotal.
 */
static int mem_available_kb(uint64_t *avail)
{
	static const char *const keys[] = {
		"MemTotal:", "MemFree:", "MemAvailable:", "Active(file):",
		"Inactive(file):", "SReclaimable:",
	};
	uint64_t val[6] = { 0 };
	bool have[6] = { false };
	char buf[8192];
	const char *line;
	size_t len = 0;
	int fd, i;

	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';

	for (line = buf; line && *line; ) {
		for (i = 0; i < 6; i++) {
			size_t kl = strlen(keys[i]);

			if (strncmp(line, keys[i], kl) == 0) {
				val[i] = strtoull(line + kl, NULL, 10);
				have[i] = true;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!have[0] || !have[1]) {
		errno = EINVAL;
		return -1;
	}
	if (have[2])
		*avail = val[2];
	else
		*avail = val[1] + (val[3] + val[4]) / 2 + val[5] / 2;
	if (*avail > val[0])
		*avail = val[0];
	return 0;
}

static void pressure_loop(struct pruner *p)
{
	uint64_t avail_kb, bytes;
	volatile char *mem;
	size_t off, size;
	void *map;

	while (!stopped()) {
		if (mem_available_kb(&avail_kb) < 0) {
			prune_error(p, "read /proc/meminfo", errno);
			sleep_ms_stoppable(100);
			continue;
		}
		/* Split across pruners: all may sample at the same moment. */
		bytes = avail_kb * (uint64_t)cfg.pressure_pct / 100 /
			(uint64_t)cfg.pruners * 1024;
		bytes &= ~(uint64_t)(TOUCH_STEP - 1);
		if (bytes > SIZE_MAX / 2)
			bytes = (SIZE_MAX / 2) & ~(uint64_t)(TOUCH_STEP - 1);
		size = (size_t)bytes;
		if (size < 64 * TOUCH_STEP) {
			sleep_ms_stoppable(10);
			continue;
		}
		map = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED) {
			prune_error(p, "mmap", errno);
			sleep_ms_stoppable(10);
			continue;
		}
		mem = map;
		for (off = 0; off < size; off += TOUCH_STEP) {
			mem[off] = 1;
			if ((off & ((TOUCH_STEP << 12) - 1)) == 0 && stopped())
				break;
		}
		if (munmap(map, size) < 0)
			prune_error(p, "munmap", errno);
		if (off >= size)
			prune_done(p);
		prune_pause();
	}
}

void *pruner_main(void *arg)
{
	struct pruner *p = arg;

	if (thread_start(PRUNE_COMM))
		(cfg.pruner == PRUNER_DROP ? drop_caches_loop : pressure_loop)(p);
	return NULL;
}

/* Reads a decimal sysctl; -1 (errno set) on failure. */
static long sysctl_read(const char *path)
{
	char buf[32];
	ssize_t n;
	long v;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = n < 0 ? errno : EINVAL;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, NULL, 10);
	if (errno || v < 0) {
		errno = EINVAL;
		return -1;
	}
	return v;
}

static int sysctl_write(const char *path, long v)
{
	char buf[32];
	int fd, n, saved;

	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, buf, (size_t)n) != n) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/* The drop_caches pruner needs DROP_CACHES writable: 0 if it is, else 1. */
int check_drop_caches(void)
{
	int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr,
			PROG ": cannot open " DROP_CACHES " for writing: %s (try --pruner pressure or none)\n",
			strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

/* Sets cfg.cache_pressure for the run, the old value in *old: 0, else 1. */
int cache_pressure_set(long *old)
{
	*old = sysctl_read(CACHE_PRESSURE);
	if (*old < 0 || sysctl_write(CACHE_PRESSURE, cfg.cache_pressure) < 0) {
		fprintf(stderr, PROG ": cannot set " CACHE_PRESSURE
			": %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}

/* Puts back the value cache_pressure_set() found: 0, else 1. */
int cache_pressure_restore(long old, bool say_why)
{
	if (sysctl_write(CACHE_PRESSURE, old) < 0) {
		if (!say_why)
			return 1;
		fprintf(stderr, PROG ": cannot restore " CACHE_PRESSURE
			" to %ld: %s\n", old, strerror(errno));
		return 1;
	}
	return 0;
}
