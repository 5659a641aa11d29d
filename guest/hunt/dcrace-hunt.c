// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-hunt: the hunt's scenarios (docs/design.md, "The hunt"). Each
 * ends lifetimes under RCU ("lazy") path walks: walker threads (comm
 * dcr-walk) walk paths relative to the process's cwd, which they share
 * with the controller thread (comm dcr-ctl) that changes what the walks
 * stand on. Every outcome is counted per path and errno; an errno outside
 * the scenario's truth table (what some state of the scenario allows) is
 * a false error. The other oracle, KASAN, is the kernel's: the result
 * names the walkers' thread ids so a report's task can be matched.
 *
 * Scenarios:
 *   proc-umount  a private proc mount on --dir, the cwd in it, unmounted
 *                lazily, the last reference dropped by chdir("/")
 *   proc-exit    the cwd in /proc/<child>; the child killed and reaped,
 *                then the cwd left (the last proc inode of its pid goes)
 *   lazy-umount  --mount TYPE:SOURCE[:OPTIONS] mounted on --dir, a small
 *                tree made, the cwd in it, unmounted lazily, left
 *   replace      nNN turns file <-> directory in place, xNN (a directory)
 *                and tNN (a file) swap names (RENAME_EXCHANGE), locked
 *                renamed to and fro, its mode 0700 <-> 0755; walkers
 *                (with --uid) walk nNN/y, xNN/y and locked/y
 *   prune        walkers stat files on --dir while the controller writes
 *                2 to /proc/sys/vm/drop_caches
 *
 * Output: one JSON object on stdout. Exit 0 when it ran, 1 on a false
 * error, 2 on bad usage, 3 when the scenario could not be set up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATHS	8
#define MAX_WALKERS	8
#define NERR		134	/* errno slots: 0 is success */
#define ALLOWED(p, e)	((e) < 64 && ((p)->allowed >> (e) & 1))

struct hpath {
	char name[128];
	unsigned long allowed;	/* bit e: errno e allowed (bit 0: success) */
	atomic_ulong count[NERR];
};

static struct {
	const char *scenario, *dir, *mount_spec;
	double duration;
	long iterations, walkers, hold_us, uid;
} cfg = { .duration = 5, .iterations = 0, .walkers = 2, .hold_us = 2000,
	  .uid = -1 };

static struct hpath paths[MAX_PATHS];
static int npaths;
static atomic_int stop;
static atomic_long walker_tids[MAX_WALKERS];
static long iterations, ctl_errors;
static char ctl_error[256];

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dcrace-hunt --scenario S [options]\n"
"\n"
"Scenarios: proc-umount, proc-exit, lazy-umount, replace, prune (see the\n"
"head of guest/hunt/dcrace-hunt.c or docs/design.md, \"The hunt\").\n"
"\n"
"  --dir D          where the scenario works (default /tmp/dcr-hunt)\n"
"  --mount SPEC     lazy-umount: TYPE:SOURCE[:OPTIONS] to mount on --dir\n"
"  --duration S     seconds to run (default 5)\n"
"  --iterations N   stop after N controller cycles too (default: none)\n"
"  --walkers N      walker threads, 1-%d (default 2)\n"
"  --hold-us N      how long each state is held, us (default 2000)\n"
"  --uid N          replace: the walkers run as uid/gid N\n"
"  -h, --help       this text\n", MAX_WALKERS);
}

static void ctl_fail(const char *fmt, ...)
{
	va_list ap;

	if (!ctl_errors++) {
		va_start(ap, fmt);
		vsnprintf(ctl_error, sizeof(ctl_error), fmt, ap);
		va_end(ap);
	}
}

static void add_path(const char *name, const int *allowed)
{
	struct hpath *p = &paths[npaths++];

	snprintf(p->name, sizeof(p->name), "%s", name);
	for (; *allowed >= 0; allowed++)
		p->allowed |= 1UL << *allowed;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hold(void)
{
	usleep(cfg.hold_us);
}

static void *walker(void *arg)
{
	long id = (long)arg;
	struct stat st;
	int i, fd, e;

	prctl(PR_SET_NAME, "dcr-walk");
	walker_tids[id] = syscall(SYS_gettid);
	/* raw setresuid: this thread only, not the process (glibc's is) */
	if (cfg.uid >= 0 && (syscall(SYS_setresgid, cfg.uid, cfg.uid, cfg.uid) ||
			     syscall(SYS_setresuid, cfg.uid, cfg.uid, cfg.uid)))
		ctl_fail("walker: setresuid(%ld): %s", cfg.uid, strerror(errno));
	while (!stop) {
		for (i = 0; i < npaths; i++) {
			e = fstatat(AT_FDCWD, paths[i].name, &st, 0) ? errno : 0;
			atomic_fetch_add(&paths[i].count[e < NERR ? e : NERR - 1], 1);
			fd = openat(AT_FDCWD, paths[i].name, O_RDONLY);
			e = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			atomic_fetch_add(&paths[i].count[e < NERR ? e : NERR - 1], 1);
		}
	}
	return NULL;
}

/* ---- the scenarios' controllers: one cycle each ------------------------ */

static pid_t sleeper;

static void proc_umount_cycle(void)
{
	if (mount("proc", cfg.dir, "proc",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME, NULL))
		return ctl_fail("mount proc on %s: %s", cfg.dir, strerror(errno));
	if (chdir(cfg.dir))
		return ctl_fail("chdir %s: %s", cfg.dir, strerror(errno));
	hold();
	if (umount2(cfg.dir, MNT_DETACH))
		ctl_fail("umount -l %s: %s", cfg.dir, strerror(errno));
	hold();
	/* the last reference: cleanup_mnt() at this call's return */
	if (chdir("/"))
		ctl_fail("chdir /: %s", strerror(errno));
	hold();
}

static void proc_exit_cycle(void)
{
	char d[64];
	pid_t c = fork();

	if (c < 0)
		return ctl_fail("fork: %s", strerror(errno));
	if (!c) {
		for (;;)
			pause();
	}
	snprintf(d, sizeof(d), "/proc/%d", c);
	if (chdir(d))
		ctl_fail("chdir %s: %s", d, strerror(errno));
	hold();
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	/* the task's own reference to its pid goes a grace period later */
	hold();
	if (chdir("/"))
		ctl_fail("chdir /: %s", strerror(errno));
	hold();
}

static char m_type[32], m_src[128], m_opts[256];

static void write_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, "dcrace\n", 7) != 7)
		ctl_fail("create %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void lazy_umount_cycle(void)
{
	char p[512];

	if (mount(m_src, cfg.dir, m_type, MS_NOATIME, m_opts[0] ? m_opts : NULL))
		return ctl_fail("mount %s %s on %s: %s", m_type, m_src, cfg.dir,
				strerror(errno));
	snprintf(p, sizeof(p), "%s/d", cfg.dir);
	if (mkdir(p, 0755) && errno != EEXIST)
		ctl_fail("mkdir %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/d/f", cfg.dir);
	write_file(p, 0644);
	/* a fast symlink and (on filesystems that have them) a slow one */
	snprintf(p, sizeof(p), "%s/l", cfg.dir);
	if (symlink("d/f", p) && errno != EEXIST && errno != EPERM)
		ctl_fail("symlink %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/ll", cfg.dir);
	if (symlink("././././././././././././././././././././././././././././././././d/f", p) &&
	    errno != EEXIST && errno != EPERM)
		ctl_fail("symlink %s: %s", p, strerror(errno));
	if (chdir(cfg.dir))
		return ctl_fail("chdir %s: %s", cfg.dir, strerror(errno));
	hold();
	if (umount2(cfg.dir, MNT_DETACH))
		ctl_fail("umount -l %s: %s", cfg.dir, strerror(errno));
	hold();
	if (chdir("/"))
		ctl_fail("chdir /: %s", strerror(errno));
	hold();
}

/*
 * replace: nNN turns file <-> directory in place (the same dentry goes
 * negative, then positive with the other type: 6.1's may_lookup() EACCES),
 * xNN (a directory) and tNN (a file) swap names (RENAME_EXCHANGE), locked
 * is renamed to and fro and its mode flips 0700 <-> 0755.
 */
static void replace_cycle(void)
{
	char a[64], b[64];
	struct stat st;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(a, sizeof(a), "n%02d", i);
		snprintf(b, sizeof(b), "n%02d/y", i);
		if (!lstat(a, &st) && S_ISDIR(st.st_mode)) {
			if (unlink(b) || rmdir(a))
				ctl_fail("rmdir %s: %s", a, strerror(errno));
			write_file(a, 0644);
		} else {
			if (unlink(a) || mkdir(a, 0755))
				ctl_fail("mkdir %s: %s", a, strerror(errno));
			write_file(b, 0644);
		}
		snprintf(a, sizeof(a), "x%02d", i);
		snprintf(b, sizeof(b), "t%02d", i);
		if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE))
			ctl_fail("renameat2 %s %s EXCHANGE: %s", a, b,
				 strerror(errno));
	}
	if (rename("locked", "locked.r") || rename("locked.r", "locked"))
		ctl_fail("rename locked: %s", strerror(errno));
	if (!stat("locked", &st) &&
	    chmod("locked", (st.st_mode & 0777) == 0700 ? 0755 : 0700))
		ctl_fail("chmod locked: %s", strerror(errno));
}

static void prune_cycle(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	if (fd < 0 || write(fd, "2\n", 2) != 2)
		ctl_fail("drop_caches: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* ---- setup: the paths and what each state allows ------------------------ */

static const int ok_enoent[] = { 0, ENOENT, -1 };

static int setup(void (**cycle)(void))
{
	char p[600];
	int i;

	if (mkdir(cfg.dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "dcrace-hunt: mkdir %s: %s\n", cfg.dir, strerror(errno));
		return 3;
	}
	if (!strcmp(cfg.scenario, "proc-umount")) {
		static const int proc_ok[] = { 0, ENOENT, ESRCH, -1 };

		sleeper = fork();
		if (!sleeper) {
			for (;;)
				pause();
		}
		add_path("self/status", ok_enoent);
		add_path("thread-self/comm", ok_enoent);
		snprintf(p, sizeof(p), "%d/status", sleeper);
		add_path(p, proc_ok);
		*cycle = proc_umount_cycle;
	} else if (!strcmp(cfg.scenario, "proc-exit")) {
		static const int proc_ok[] = { 0, ENOENT, ESRCH, -1 };
		static const int ns_ok[] = { 0, ENOENT, ESRCH, EACCES, -1 };

		add_path("status", proc_ok);
		add_path("fd/0", proc_ok);
		add_path("exe", proc_ok);
		/* proc_ns_get_link(): -EACCES once the task is gone */
		add_path("ns/mnt", ns_ok);
		*cycle = proc_exit_cycle;
	} else if (!strcmp(cfg.scenario, "lazy-umount")) {
		if (!cfg.mount_spec ||
		    sscanf(cfg.mount_spec, "%31[^:]:%127[^:]:%255[^\n]", m_type,
			   m_src, m_opts) < 2) {
			fprintf(stderr, "dcrace-hunt: lazy-umount needs --mount TYPE:SOURCE[:OPTIONS]\n");
			return 2;
		}
		add_path("d/f", ok_enoent);
		add_path("l", ok_enoent);
		add_path("ll", ok_enoent);
		add_path("D/F", ok_enoent);
		*cycle = lazy_umount_cycle;
	} else if (!strcmp(cfg.scenario, "replace")) {
		/* nNN: a file or a directory holding y; xNN/tNN swapped */
		static const int n_ok[] = { 0, ENOENT, ENOTDIR, -1 };
		static const int locked_ok[] = { 0, ENOENT, EACCES, -1 };

		if (chdir(cfg.dir))
			return 3;
		for (i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "n%02d/y", i);
			unlink(p);
			snprintf(p, sizeof(p), "n%02d", i);
			unlink(p);
			rmdir(p);
			write_file(p, 0644);
			snprintf(p, sizeof(p), "x%02d", i);
			unlink(p);
			if (mkdir(p, 0755) && errno != EEXIST)
				return 3;
			snprintf(p, sizeof(p), "x%02d/y", i);
			write_file(p, 0644);
			snprintf(p, sizeof(p), "t%02d", i);
			if (rmdir(p) && errno == ENOTDIR)
				unlink(p);
			write_file(p, 0644);
			snprintf(p, sizeof(p), "n%02d/y", i);
			add_path(p, n_ok);
			snprintf(p, sizeof(p), "x%02d/y", i);
			add_path(p, n_ok);
		}
		rename("locked.r", "locked");
		if (mkdir("locked", 0700) && errno != EEXIST)
			return 3;
		chmod("locked", 0700);
		write_file("locked/y", 0644);
		add_path("locked/y", cfg.uid >= 0 ? locked_ok : ok_enoent);
		*cycle = replace_cycle;
	} else if (!strcmp(cfg.scenario, "prune")) {
		if (chdir(cfg.dir))
			return 3;
		for (i = 0; i < 4; i++) {
			snprintf(p, sizeof(p), "p%02d", i);
			if (mkdir(p, 0755) && errno != EEXIST)
				return 3;
			snprintf(p, sizeof(p), "p%02d/f", i);
			write_file(p, 0644);
			add_path(p, (const int[]){ 0, -1 });
		}
		*cycle = prune_cycle;
	} else {
		fprintf(stderr, "dcrace-hunt: unknown scenario '%s' (see --help)\n",
			cfg.scenario);
		return 2;
	}
	return ctl_errors ? 3 : 0;
}

static const char *errname(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case ECHILD: return "ECHILD";
	case ELOOP: return "ELOOP";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case ESTALE: return "ESTALE";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static long parse_long(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "dcrace-hunt: %s wants a number in %ld..%ld, not '%s'\n",
			opt, min, max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_WALKERS];
	void (*cycle)(void) = NULL;
	unsigned long calls = 0, false_total = 0;
	double t0, t;
	int i, e, rc, first;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			fprintf(stderr, "dcrace-hunt: %s: unknown or missing its value (see --help)\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--scenario"))
			cfg.scenario = v;
		else if (!strcmp(a, "--dir"))
			cfg.dir = v;
		else if (!strcmp(a, "--mount"))
			cfg.mount_spec = v;
		else if (!strcmp(a, "--duration"))
			cfg.duration = parse_long(a, v, 1, 86400);
		else if (!strcmp(a, "--iterations"))
			cfg.iterations = parse_long(a, v, 1, 1L << 40);
		else if (!strcmp(a, "--walkers"))
			cfg.walkers = parse_long(a, v, 1, MAX_WALKERS);
		else if (!strcmp(a, "--hold-us"))
			cfg.hold_us = parse_long(a, v, 0, 1000000);
		else if (!strcmp(a, "--uid"))
			cfg.uid = parse_long(a, v, 0, 65535);
		else {
			fprintf(stderr, "dcrace-hunt: unknown option %s (see --help)\n", a);
			return 2;
		}
	}
	if (!cfg.scenario) {
		fprintf(stderr, "dcrace-hunt: --scenario is required (see --help)\n");
		return 2;
	}
	if (!cfg.dir)
		cfg.dir = "/tmp/dcr-hunt";
	if (cfg.uid >= 0 && strcmp(cfg.scenario, "replace")) {
		fprintf(stderr, "dcrace-hunt: --uid is for scenario replace\n");
		return 2;
	}
	rc = setup(&cycle);
	if (rc) {
		if (rc == 3)
			fprintf(stderr, "dcrace-hunt: setup failed: %s\n",
				ctl_errors ? ctl_error : strerror(errno));
		return rc;
	}
	prctl(PR_SET_NAME, "dcr-ctl");
	for (i = 0; i < cfg.walkers; i++)
		pthread_create(&th[i], NULL, walker, (void *)(long)i);
	t0 = now();
	do {
		cycle();
		iterations++;
	} while ((t = now() - t0) < cfg.duration &&
		 (!cfg.iterations || iterations < cfg.iterations) &&
		 ctl_errors < 100);
	stop = 1;
	for (i = 0; i < cfg.walkers; i++)
		pthread_join(th[i], NULL);
	if (chdir("/"))
		ctl_fail("chdir /: %s", strerror(errno));
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
	}
	printf("{\"scenario\": \"%s\", \"seconds\": %.3f, \"iterations\": %ld, ",
	       cfg.scenario, t, iterations);
	printf("\"walkers\": %ld, \"uid\": %ld, \"ctl_tid\": %ld, \"walker_tids\": [",
	       cfg.walkers, cfg.uid, (long)syscall(SYS_gettid));
	for (i = 0; i < cfg.walkers; i++)
		printf("%s%ld", i ? ", " : "", walker_tids[i]);
	printf("], \"outcomes\": {");
	for (i = 0; i < npaths; i++) {
		printf("%s\"%s\": {", i ? ", " : "", paths[i].name);
		for (e = 0, first = 1; e < NERR; e++) {
			unsigned long n = paths[i].count[e];

			if (!n)
				continue;
			calls += n;
			printf("%s\"%s\": %lu", first ? "" : ", ", errname(e), n);
			first = 0;
			if (!ALLOWED(&paths[i], e))
				false_total += n;
		}
		printf("}");
	}
	printf("}, \"false_errors\": {");
	for (i = 0, first = 1; i < npaths; i++) {
		for (e = 0; e < NERR; e++) {
			if (!paths[i].count[e] || ALLOWED(&paths[i], e))
				continue;
			printf("%s\"%s %s\": %lu", first ? "" : ", ", paths[i].name,
			       errname(e), (unsigned long)paths[i].count[e]);
			first = 0;
		}
	}
	printf("}, \"false_total\": %lu, \"calls\": %lu, \"ctl_errors\": %ld, \"ctl_error\": \"%s\"}\n",
	       false_total, calls, ctl_errors, ctl_error);
	return false_total ? 1 : 0;
}
