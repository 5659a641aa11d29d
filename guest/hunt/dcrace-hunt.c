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
 *                lazily, --grace grace periods waited, the last
 *                reference dropped by chdir("/"); walkers follow self,
 *                thread-self and the PDE symlinks mounts and net
 *   proc-exit    the cwd in /proc/<child>; the child killed and reaped,
 *                --grace grace periods waited (the task's own reference
 *                to its pid goes one grace period after the reap), then
 *                the cwd left (the last proc inode of its pid goes, and
 *                with it, in 6.1, the pid itself)
 *   lazy-umount  --mount TYPE:SOURCE[:OPTIONS] mounted on --dir, a small
 *                tree made, the cwd in it, unmounted lazily, left
 *   replace      nNN turns file <-> directory in place, xNN (a directory)
 *                and tNN (a file) swap names (RENAME_EXCHANGE), locked
 *                renamed to and fro, its mode 0700 <-> 0755; walkers
 *                (with --uid) walk nNN/y, xNN/y and locked/y
 *   prune        walkers stat files on --dir while the controller writes
 *                2 to /proc/sys/vm/drop_caches
 *   symlink      symlinks of every body kind (s1 fast: 2-6 bytes, s2 202
 *                bytes: above tmpfs's 128 and ext4's 60 inline, s3 1002,
 *                s4 -> s1: a link to a link) replaced by rename over
 *                them (never absent; --sync 1: syncfs() after, a journal
 *                reuses freed blocks once committed), evicted (drop_caches)
 *                while present, then unlinked and made again; their
 *                targets t0 and d/e/t1 alternate
 *
 * Start points (--start): the walks start at the cwd, at a directory fd
 * the controller opens and then closes under them (path_init() drops
 * the file's reference before the walk goes on: dirfd), at a chroot
 * root (root) or at /proc/<child>/task/<tid> of a thread that exits
 * while its process lives (task), or at a directory the controller
 * empties and removes under the walks, then leaves (rmdir: lazy-umount's
 * tree in --dir/w, the filesystem mounted once, unmounted at the end);
 * proc-umount's PDE symlinks (mounts,
 * net) and the self/thread-self links are followed from each.
 *
 * Truth tables are per state where a scenario has states (proc-exit: the
 * child alive, killed, reaped, the cwd left): the controller moves a
 * phase counter before and after each action, a walker reads it before
 * and after each call, and an outcome is false only when no state the
 * call overlapped allows it.
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
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ident.h"

#define MAX_PATHS	8
#define MAX_WALKERS	8
#define MAX_STATES	4
#define MAX_GRACE	8
#define NERR		134	/* errno slots: 0 is success */
#define ALLOWED(m, e)	((e) < 64 && ((m) >> (e) & 1))

struct hpath {
	char name[128];
	char abs[130];		/* "/" name: the path under --start root */
	/* the names of the objects it may resolve to ("": not checked) */
	char names[64];
	/* per state, bit e: errno e allowed (bit 0: success) */
	unsigned long allowed[MAX_STATES];
	atomic_ulong count[NERR];
	atomic_ulong false_count[NERR];	/* outcomes no overlapped state allows */
};

static struct {
	const char *scenario, *dir, *mount_spec;
	double duration;
	long iterations, walkers, hold_us, uid;
	int casefold, evict, sync;
	const char *start;
} cfg = { .duration = 5, .iterations = 0, .walkers = 2, .hold_us = 2000,
	  .uid = -1, .evict = 1 };

static struct hpath paths[MAX_PATHS];
static int npaths;
/*
 * The scenario's states: nstates of them, the controller's phase counter
 * even in a state, odd during the action between two (state_begin(),
 * state_end()); the state of even phase p is (p / 2 + state0) % nstates.
 */
static int nstates = 1, state0;
static atomic_ulong phase;
static long grace[MAX_GRACE] = { 0, 1, 3 };
static int ngrace = 3;
static long grace_cycles[MAX_GRACE];
static atomic_int stop;
static atomic_long walker_tids[MAX_WALKERS];
static long iterations, ctl_errors;
static char ctl_error[256];

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dcrace-hunt --scenario S [options]\n"
"\n"
"Scenarios: proc-umount, proc-exit, lazy-umount, replace, prune, symlink\n"
"(see the\n"
"head of guest/hunt/dcrace-hunt.c or docs/design.md, \"The hunt\").\n"
"\n"
"  --dir D          where the scenario works (default /tmp/dcr-hunt)\n"
"  --mount SPEC     lazy-umount: TYPE:SOURCE[:OPTIONS] to mount on --dir\n"
"  --duration S     seconds to run (default 5)\n"
"  --iterations N   stop after N controller cycles too (default: none)\n"
"  --walkers N      walker threads, 1-%d (default 2)\n"
"  --hold-us N      how long each state is held, us (default 2000)\n"
"  --uid N          replace: the walkers run as uid/gid N\n"
"  --start S        where the walks start (proc-umount, proc-exit,\n"
"                   lazy-umount): cwd (default), dirfd (a directory fd\n"
"                   the controller opens and closes: path_init() drops\n"
"                   its reference), root (the process chrooted there;\n"
"                   proc-exit only), task (proc-exit: the cwd\n"
"                   /proc/<child>/task/<tid> of a thread that exits while\n"
"                   its process lives), rmdir (lazy-umount: mounted once,\n"
"                   the cwd --dir/w, emptied and removed under the\n"
"                   walks, then left)\n"
"  --evict 0        symlink: no drop_caches every other cycle (default 1)\n"
"  --sync 1         symlink: syncfs() after the renames (default 0)\n"
"  --casefold 1     lazy-umount, prune: make directory c casefolded (ext4,\n"
"                   +F), c/f in it, and walk c/F (->d_hash()/->d_compare()\n"
"                   with a name to fold); fails when the filesystem cannot\n"
"  --grace LIST     proc-exit, proc-umount: RCU grace periods waited\n"
"                   before the last reference goes, cycled over the\n"
"                   controller's cycles (default 0,1,3; needs dcrace.ko's\n"
"                   debugfs file synchronize_rcu when one is not 0)\n"
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

static unsigned long mask_of(const int *allowed)
{
	unsigned long m = 0;

	for (; *allowed >= 0; allowed++)
		m |= 1UL << *allowed;
	return m;
}

/* a path whose outcomes are the same in every state */
static void add_path(const char *name, const int *allowed)
{
	struct hpath *p = &paths[npaths++];
	int i;

	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->abs, sizeof(p->abs), "/%s", name);
	for (i = 0; i < MAX_STATES; i++)
		p->allowed[i] = mask_of(allowed);
}

/* a path with one table per state (nstates of them) */
static void add_path_states(const char *name, const int *const *allowed)
{
	struct hpath *p = &paths[npaths++];
	int i;

	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->abs, sizeof(p->abs), "/%s", name);
	for (i = 0; i < nstates; i++)
		p->allowed[i] = mask_of(allowed[i]);
}

/* the objects the last path added may resolve to (identity oracle) */
static void path_resolves_to(const char *names)
{
	snprintf(paths[npaths - 1].names, sizeof(paths[0].names), "%s", names);
}

/* where the walks' relative paths start: --dir, or --dir/w (--start rmdir) */
static char base_dir[256];

/* the name the identity registry keeps for @path (relative to base_dir) */
static const char *ident_name(const char *path)
{
	size_t n = strlen(base_dir);

	if (!strncmp(path, base_dir, n) && path[n] == '/')
		return path + n + 1;
	return strncmp(path, "./", 2) ? path : path + 2;
}

static void made(const char *path)
{
	ident_made(ident_name(path), path);
}

static void removed(const char *path)
{
	ident_removed(ident_name(path));
}

static void state_begin(void)
{
	atomic_fetch_add(&phase, 1);
}

static void state_end(void)
{
	atomic_fetch_add(&phase, 1);
}

/* what the states of phases ph0..ph1 (a call's span) allow on @p */
static unsigned long allowed_between(const struct hpath *p, unsigned long ph0,
				     unsigned long ph1)
{
	unsigned long m = 0, ph;

	if (ph1 - ph0 >= 2UL * nstates)
		ph1 = ph0 + 2UL * nstates;
	for (ph = ph0; ph <= ph1; ph++) {
		/* an odd phase is an action: the states on both sides */
		m |= p->allowed[((ph / 2) + state0) % nstates];
		if (ph & 1)
			m |= p->allowed[((ph / 2 + 1) + state0) % nstates];
	}
	return m;
}

static void count(struct hpath *p, int e, unsigned long ph0)
{
	unsigned long m = allowed_between(p, ph0, atomic_load(&phase));

	if (e >= NERR)
		e = NERR - 1;
	atomic_fetch_add(&p->count[e], 1);
	if (!ALLOWED(m, e))
		atomic_fetch_add(&p->false_count[e], 1);
}

/*
 * The grace periods of this cycle (--grace, cycled): dcrace.ko's
 * synchronize_rcu returns after that many.
 */
static int grace_fd = -1;	/* opened at setup: a chroot may hide it later */

static void grace_wait(void)
{
	int i = iterations % ngrace;
	char buf[16];
	int len;

	grace_cycles[i]++;
	if (!grace[i])
		return;
	len = snprintf(buf, sizeof(buf), "%ld\n", grace[i]);
	/* at offset 0: debugfs refuses a write anywhere else */
	if (grace_fd < 0 || pwrite(grace_fd, buf, len, 0) != len)
		ctl_fail("synchronize_rcu %ld: %s", grace[i],
			 strerror(grace_fd < 0 ? ENOENT : errno));
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

/*
 * Start points (--start): where the walkers' relative paths start, and
 * how the controller enters and leaves it. dirfd: walkers pass the fd the
 * controller published (-1 once closed: EBADF); root: absolute paths
 * under a chroot shared by the process's threads.
 */
enum { START_CWD, START_DIRFD, START_ROOT, START_TASK, START_RMDIR };
static int start_kind;
static atomic_int start_fd = -1;
static int realroot_fd = -1;

/*
 * dirfd: the number the walkers are given never changes hands. Leaving
 * dup2()s an empty, removed directory over it (the start point's last
 * reference goes as with close()) instead of freeing it, so a walker that
 * loaded the number just before walks that directory (ENOENT), never a
 * file the controller opened next under the freed number (ENOTDIR, a
 * harness race seen once on 6.12 tmpfs lazy-umount-dirfd).
 */
static int start_fd_num = -1, empty_fd = -1;
static long start_fd_entries;

static int start_dirfd_init(void)
{
	char tmpl[] = "/tmp/dcr-empty-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	empty_fd = open(tmpl, O_RDONLY | O_DIRECTORY);
	if (empty_fd < 0 || rmdir(tmpl))
		return -1;
	start_fd_num = fcntl(empty_fd, F_DUPFD, 512);
	return start_fd_num < 0 ? -1 : 0;
}

static int start_enter(const char *dir)
{
	int fd;

	switch (start_kind) {
	case START_DIRFD:
		fd = open(dir, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return -1;
		if (dup2(fd, start_fd_num) < 0) {
			close(fd);
			return -1;
		}
		close(fd);
		atomic_store(&start_fd, start_fd_num);
		start_fd_entries++;
		return 0;
	case START_ROOT:
		if (chroot(dir))
			return -1;
		return chdir("/");
	default:
		return chdir(dir);
	}
}

/* the last reference to the start point goes here (see each scenario) */
static int start_leave(void)
{
	int fd;

	switch (start_kind) {
	case START_DIRFD:
		fd = atomic_exchange(&start_fd, -1);
		if (fd < 0)
			return 0;
		return dup2(empty_fd, fd) < 0 ? -1 : 0;
	case START_ROOT:
		if (fchdir(realroot_fd))
			return -1;
		return chroot(".");
	default:
		return chdir("/");
	}
}

static int walk_stat(const struct hpath *p, struct stat *st)
{
	switch (start_kind) {
	case START_DIRFD:
		return fstatat(atomic_load(&start_fd), p->name, st, 0);
	case START_ROOT:
		return stat(p->abs, st);
	default:
		return fstatat(AT_FDCWD, p->name, st, 0);
	}
}

static int walk_open(const struct hpath *p)
{
	switch (start_kind) {
	case START_DIRFD:
		return openat(atomic_load(&start_fd), p->name, O_RDONLY);
	case START_ROOT:
		return open(p->abs, O_RDONLY);
	default:
		return openat(AT_FDCWD, p->name, O_RDONLY);
	}
}

static void *walker(void *arg)
{
	long id = (long)arg;
	struct stat st;
	unsigned long ph, c0;
	int i, fd, e;

	prctl(PR_SET_NAME, "dcr-walk");
	walker_tids[id] = syscall(SYS_gettid);
	/* raw setresuid: this thread only, not the process (glibc's is) */
	if (cfg.uid >= 0 && (syscall(SYS_setresgid, cfg.uid, cfg.uid, cfg.uid) ||
			     syscall(SYS_setresuid, cfg.uid, cfg.uid, cfg.uid)))
		ctl_fail("walker: setresuid(%ld): %s", cfg.uid, strerror(errno));
	while (!stop) {
		for (i = 0; i < npaths; i++) {
			ph = atomic_load(&phase);
			c0 = ident_clock();
			e = walk_stat(&paths[i], &st) ? errno : 0;
			count(&paths[i], e, ph);
			if (!e)
				ident_check(i, paths[i].names, &st, c0);
			ph = atomic_load(&phase);
			c0 = ident_clock();
			fd = walk_open(&paths[i]);
			e = fd < 0 ? errno : 0;
			/* the object open() gave: fstat() of the fd */
			if (fd >= 0 && !fstat(fd, &st))
				ident_check(i, paths[i].names, &st, c0);
			if (fd >= 0)
				close(fd);
			count(&paths[i], e, ph);
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
	if (start_enter(cfg.dir))
		return ctl_fail("enter %s: %s", cfg.dir, strerror(errno));
	hold();
	if (umount2(cfg.dir, MNT_DETACH))
		ctl_fail("umount -l %s: %s", cfg.dir, strerror(errno));
	hold();
	grace_wait();
	/* the last reference: cleanup_mnt() at this call's return */
	if (start_leave())
		ctl_fail("leave %s: %s", cfg.dir, strerror(errno));
	hold();
}

/* --start task: the child's second thread, gone when the pipe speaks */
static int task_pipe[2];

static void *task_thread(void *arg)
{
	char b;

	(void)arg;
	if (read(task_pipe[0], &b, 1) < 0)
		_exit(1);
	return NULL;	/* this thread exits, its process lives */
}

static pid_t child_with_thread(pid_t *tid)
{
	int tp[2];
	pid_t c;
	pthread_t t;

	if (pipe(task_pipe) || pipe(tp))
		return -1;
	c = fork();
	if (!c) {
		pid_t me;

		pthread_create(&t, NULL, task_thread, NULL);
		/* the thread's tid: the highest in /proc/self/task but ours */
		me = getpid();
		for (;;) {
			char p[64];
			pid_t x;

			for (x = me + 1; x < me + 64; x++) {
				snprintf(p, sizeof(p), "/proc/self/task/%d", x);
				if (!access(p, F_OK))
					break;
			}
			if (x < me + 64) {
				if (write(tp[1], &x, sizeof(x)) != sizeof(x))
					_exit(1);
				break;
			}
			usleep(100);
		}
		for (;;)
			pause();
	}
	close(task_pipe[0]);
	close(tp[1]);
	if (c < 0 || read(tp[0], tid, sizeof(*tid)) != sizeof(*tid))
		c = c < 0 ? c : -1;
	close(tp[0]);
	return c;
}

static void proc_exit_cycle(void)
{
	char d[80];
	pid_t tid = 0, c;
	int i;

	c = start_kind == START_TASK ? child_with_thread(&tid) : fork();
	if (c < 0)
		return ctl_fail("fork: %s", strerror(errno));
	if (!c) {
		for (;;)
			pause();
	}
	if (start_kind == START_TASK)
		snprintf(d, sizeof(d), "/proc/%d/task/%d", c, tid);
	else
		snprintf(d, sizeof(d), "/proc/%d", c);
	state_begin();
	if (start_enter(d))
		ctl_fail("enter %s: %s", d, strerror(errno));
	state_end();		/* alive */
	hold();
	state_begin();
	if (start_kind == START_TASK) {
		/* the thread exits (and reaps itself); wait until it is gone */
		if (write(task_pipe[1], "x", 1) != 1)
			ctl_fail("task pipe: %s", strerror(errno));
		for (i = 0; i < 10000 && !access(d, F_OK); i++)
			usleep(100);
	} else {
		kill(c, SIGKILL);
	}
	state_end();		/* killed, maybe not yet dead */
	hold();
	state_begin();
	if (start_kind != START_TASK)
		waitpid(c, NULL, 0);
	state_end();		/* reaped */
	hold();
	/*
	 * the task's own reference to its pid goes a grace period after the
	 * reap (delayed_put_pid()): with it gone, the last proc inode's
	 * eviction puts the last reference
	 */
	grace_wait();
	state_begin();
	if (start_leave())
		ctl_fail("leave %s: %s", d, strerror(errno));
	state_end();		/* left */
	if (start_kind == START_TASK) {
		close(task_pipe[1]);
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
	}
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
	made(path);
}

/* mkdir, registered (an existing one too: it is the scenario's) */
static int make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	made(path);
	return 0;
}

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL	0x40000000
#endif

/* @dir/c casefolded (made empty first), c/f in it; a failure is loud */
static void casefold_dir(const char *dir)
{
	char p[512];
	int fd, flags;

	snprintf(p, sizeof(p), "%s/c", dir);
	if (make_dir(p))
		return ctl_fail("mkdir %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return ctl_fail("open %s: %s", p, strerror(errno));
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		ctl_fail("casefold: FS_IOC_GETFLAGS %s: %s", p, strerror(errno));
	} else if (!(flags & FS_CASEFOLD_FL)) {
		flags |= FS_CASEFOLD_FL;
		if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
			ctl_fail("casefold: chattr +F %s: %s", p, strerror(errno));
	}
	close(fd);
	snprintf(p, sizeof(p), "%s/c/f", dir);
	write_file(p, 0644);
}

/* a symlink target of @len bytes naming d/f: "././.../d/f" */
static const char *long_target(size_t len)
{
	static char t[1024];
	size_t i;

	for (i = 0; i + 3 < len && i + 2 < sizeof(t) - 4; i += 2)
		memcpy(t + i, "./", 2);
	strcpy(t + i, "d/f");
	return t;
}

/* the tree lazy-umount walks, relative to base_dir */
static const char *const tree_files[] = { "d/f", "l", "ll", "lll", "c/f" };
static const char *const tree_dirs[] = { "d", "c" };

/*
 * --start rmdir: the cwd base_dir emptied and removed under the walks
 * (lookups in it fail with ENOENT: a dead directory), then left: the
 * last reference to its dentry and inode goes at chdir("/")
 */
static void rmdir_base(void)
{
	char p[512];
	size_t i;

	for (i = 0; i < sizeof(tree_files) / sizeof(tree_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", base_dir, tree_files[i]);
		if (unlink(p) && errno != ENOENT)
			ctl_fail("unlink %s: %s", p, strerror(errno));
		removed(p);
	}
	for (i = 0; i < sizeof(tree_dirs) / sizeof(tree_dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", base_dir, tree_dirs[i]);
		if (rmdir(p) && errno != ENOENT)
			ctl_fail("rmdir %s: %s", p, strerror(errno));
		removed(p);
	}
	if (rmdir(base_dir))
		ctl_fail("rmdir %s: %s", base_dir, strerror(errno));
}

/* --start rmdir: the filesystem stays mounted from the first cycle on */
static int rmdir_mounted;

static void lazy_umount_cycle(void)
{
	char p[512];
	size_t i;

	if (!rmdir_mounted &&
	    mount(m_src, cfg.dir, m_type, MS_NOATIME, m_opts[0] ? m_opts : NULL))
		return ctl_fail("mount %s %s on %s: %s", m_type, m_src, cfg.dir,
				strerror(errno));
	rmdir_mounted = start_kind == START_RMDIR;
	if (start_kind == START_RMDIR && make_dir(base_dir))
		ctl_fail("mkdir %s: %s", base_dir, strerror(errno));
	snprintf(p, sizeof(p), "%s/d", base_dir);
	if (make_dir(p))
		ctl_fail("mkdir %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/d/f", base_dir);
	write_file(p, 0644);
	/* a fast symlink and (on filesystems that have them) a slow one */
	snprintf(p, sizeof(p), "%s/l", base_dir);
	if (symlink("d/f", p) && errno != EEXIST && errno != EPERM)
		ctl_fail("symlink %s: %s", p, strerror(errno));
	made(p);
	snprintf(p, sizeof(p), "%s/ll", base_dir);
	if (symlink("././././././././././././././././././././././././././././././././d/f", p) &&
	    errno != EEXIST && errno != EPERM)
		ctl_fail("symlink %s: %s", p, strerror(errno));
	made(p);
	/* above tmpfs's inline limit (128 bytes): ->get_link() runs */
	snprintf(p, sizeof(p), "%s/lll", base_dir);
	if (symlink(long_target(301), p) && errno != EEXIST && errno != EPERM)
		ctl_fail("symlink %s: %s", p, strerror(errno));
	made(p);
	if (cfg.casefold)
		casefold_dir(base_dir);
	if (start_enter(base_dir))
		return ctl_fail("enter %s: %s", base_dir, strerror(errno));
	hold();
	if (start_kind == START_RMDIR) {
		rmdir_base();
		hold();
		if (start_leave())
			ctl_fail("leave %s: %s", base_dir, strerror(errno));
		hold();
		return;
	}
	if (umount2(cfg.dir, MNT_DETACH))
		ctl_fail("umount -l %s: %s", cfg.dir, strerror(errno));
	hold();
	if (start_kind != START_RMDIR && start_leave())
		ctl_fail("leave %s: %s", cfg.dir, strerror(errno));
	/* the detached filesystem is gone: its numbers may come back */
	for (i = 0; i < sizeof(tree_files) / sizeof(tree_files[0]); i++)
		ident_removed(tree_files[i]);
	for (i = 0; i < sizeof(tree_dirs) / sizeof(tree_dirs[0]); i++)
		ident_removed(tree_dirs[i]);
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
			if (unlink(b))
				ctl_fail("unlink %s: %s", b, strerror(errno));
			removed(b);
			if (rmdir(a))
				ctl_fail("rmdir %s: %s", a, strerror(errno));
			removed(a);
			write_file(a, 0644);
		} else {
			if (unlink(a))
				ctl_fail("unlink %s: %s", a, strerror(errno));
			removed(a);
			if (make_dir(a))
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

/*
 * symlink: the links, their targets by cycle parity (a body of @len
 * bytes: "./" repeated, then the target)
 */
#define NLINKS	4
static const char *const link_names[NLINKS] = { "s1", "s2", "s3", "s4" };
static const size_t link_lens[NLINKS] = { 0, 202, 1002, 0 };
static long symlink_cycles;

static const char *link_body(int k, long parity)
{
	static char t[1100];
	const char *target = parity & 1 ? "d/e/t1" : "t0";
	size_t i, n = strlen(target);

	if (k == 3)
		return "s1";
	if (!link_lens[k])
		return target;
	for (i = 0; i + n + 2 <= link_lens[k] && i + 2 < sizeof(t) - n - 1; i += 2)
		memcpy(t + i, "./", 2);
	strcpy(t + i, target);
	return t;
}

static void make_link(int k, long parity, const char *name)
{
	if (symlink(link_body(k, parity), name))
		ctl_fail("symlink %s: %s", name, strerror(errno));
}

/*
 * States: 0 present (every link there: a rename over it never leaves it
 * absent, an eviction drops only what the kernel can read back), 1
 * absent (unlinked, not yet made again).
 */
static void symlink_cycle(void)
{
	char tmp[16];
	int k, fd;

	/* present: each link replaced by one to the other target */
	for (k = 0; k < NLINKS; k++) {
		snprintf(tmp, sizeof(tmp), "%s.n", link_names[k]);
		unlink(tmp);
		make_link(k, symlink_cycles + 1, tmp);
		if (rename(tmp, link_names[k]))
			ctl_fail("rename %s %s: %s", tmp, link_names[k], strerror(errno));
	}
	/*
	 * the replaced links' blocks free for the next links (a journal
	 * commits what it freed: ext4 reuses a freed metadata block only
	 * after its transaction committed)
	 */
	if (cfg.sync) {
		fd = open(".", O_RDONLY | O_DIRECTORY);
		if (fd < 0 || syncfs(fd))
			ctl_fail("syncfs: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	hold();
	/* present: their dentries and inodes evicted, bodies read back */
	if (cfg.evict && symlink_cycles % 2 == 0) {
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (fd < 0 || write(fd, "2\n", 2) != 2)
			ctl_fail("drop_caches: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		hold();
	}
	/* every fourth cycle: unlinked (absent), then made again (present) */
	if (symlink_cycles % 4 == 3) {
		state_begin();
		for (k = 0; k < NLINKS; k++)
			if (unlink(link_names[k]))
				ctl_fail("unlink %s: %s", link_names[k], strerror(errno));
		state_end();
		hold();
		state_begin();
		for (k = 0; k < NLINKS; k++)
			make_link(k, symlink_cycles + 1, link_names[k]);
		state_end();
		hold();
	}
	symlink_cycles++;
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
	grace_fd = open("/sys/kernel/debug/dcrace/synchronize_rcu", O_WRONLY | O_CLOEXEC);
	realroot_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!strcmp(cfg.scenario, "proc-umount")) {
		sleeper = fork();
		if (!sleeper) {
			for (;;)
				pause();
		}
		add_path("self/status", ok_enoent);
		add_path("thread-self/comm", ok_enoent);
		/* PDE symlinks: proc_get_link() reads the PDE's data */
		add_path("mounts", ok_enoent);
		add_path("net/unix", ok_enoent);
		/* the sleeper lives all along: its status, or no mount */
		snprintf(p, sizeof(p), "%d/status", sleeper);
		add_path(p, ok_enoent);
		*cycle = proc_umount_cycle;
	} else if (!strcmp(cfg.scenario, "proc-exit")) {
		/*
		 * States: 0 alive (the cwd its /proc/<pid>), 1 killed (a
		 * zombie: no files, no mm; or not dead yet), 2 reaped (every
		 * walk from the cwd fails in may_lookup(): ESRCH, or ENOENT
		 * from a lookup under it), 3 left (the cwd /, none of these
		 * names there); the first cycle starts in 3.
		 */
		static const int alive[] = { 0, -1 };
		static const int zombie[] = { 0, ENOENT, -1 };
		static const int zombie_ns[] = { 0, ENOENT, EACCES, -1 };
		static const int reaped[] = { ENOENT, ESRCH, -1 };
		static const int reaped_ns[] = { ENOENT, ESRCH, EACCES, -1 };
		static const int left[] = { ENOENT, -1 };
		static const int *const status[] = { alive, alive, reaped, left };
		static const int *const files[] = { alive, zombie, reaped, left };
		/* proc_ns_get_link(): -EACCES once the task is gone */
		static const int *const ns[] = { alive, zombie_ns, reaped_ns, left };
		static const int no_fd0[] = { ENOENT, -1 };
		static const int *const fd0_closed[] = { no_fd0, no_fd0, reaped, left };

		nstates = 4;
		state0 = 3;
		add_path_states("status", status);
		/* fd/0: the child's stdin, if the hunt has one */
		add_path_states("fd/0", fcntl(0, F_GETFD) < 0 ? fd0_closed : files);
		add_path_states("exe", files);
		add_path_states("ns/mnt", ns);
		/* a thread that exits reaps itself: killed is reaped at once */
		for (i = 0; start_kind == START_TASK && i < npaths; i++)
			paths[i].allowed[1] |= paths[i].allowed[2];
		*cycle = proc_exit_cycle;
	} else if (!strcmp(cfg.scenario, "lazy-umount")) {
		if (!cfg.mount_spec ||
		    sscanf(cfg.mount_spec, "%31[^:]:%127[^:]:%255[^\n]", m_type,
			   m_src, m_opts) < 2) {
			fprintf(stderr, "dcrace-hunt: lazy-umount needs --mount TYPE:SOURCE[:OPTIONS]\n");
			return 2;
		}
		/* every name resolves to d/f (c/F to c/f): its identity */
		add_path("d/f", ok_enoent);
		path_resolves_to("d/f");
		add_path("l", ok_enoent);
		path_resolves_to("d/f");
		add_path("ll", ok_enoent);
		path_resolves_to("d/f");
		add_path("lll", ok_enoent);
		path_resolves_to("d/f");
		if (cfg.casefold) {
			add_path("c/F", ok_enoent);
			path_resolves_to("c/f");
		}
		*cycle = lazy_umount_cycle;
	} else if (!strcmp(cfg.scenario, "replace")) {
		/* nNN: a file or a directory holding y; xNN/tNN swapped */
		static const int n_ok[] = { 0, ENOENT, ENOTDIR, -1 };
		/* xNN is the directory (y in it) or the file: never absent */
		static const int x_ok[] = { 0, ENOTDIR, -1 };
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
			if (make_dir(p))
				return 3;
			snprintf(p, sizeof(p), "x%02d/y", i);
			write_file(p, 0644);
			/* a run before may have left tNN the directory */
			snprintf(p, sizeof(p), "t%02d/y", i);
			unlink(p);
			snprintf(p, sizeof(p), "t%02d", i);
			if (rmdir(p) && errno == ENOTDIR)
				unlink(p);
			write_file(p, 0644);
			snprintf(p, sizeof(p), "n%02d/y", i);
			add_path(p, n_ok);
			path_resolves_to(p);
			snprintf(p, sizeof(p), "x%02d/y", i);
			add_path(p, x_ok);
			path_resolves_to(p);
		}
		rename("locked.r", "locked");
		if (mkdir("locked", 0700) && errno != EEXIST)
			return 3;
		chmod("locked", 0700);
		write_file("locked/y", 0644);
		add_path("locked/y", cfg.uid >= 0 ? locked_ok : ok_enoent);
		path_resolves_to("locked/y");
		*cycle = replace_cycle;
	} else if (!strcmp(cfg.scenario, "symlink")) {
		static const int present[] = { 0, -1 };
		static const int absent[] = { ENOENT, -1 };
		static const int *const st[] = { present, absent };

		if (chdir(cfg.dir))
			return 3;
		write_file("t0", 0644);
		if (make_dir("d") || make_dir("d/e"))
			return 3;
		write_file("d/e/t1", 0644);
		nstates = 2;
		for (i = 0; i < NLINKS; i++) {
			snprintf(p, sizeof(p), "%s.n", link_names[i]);
			unlink(p);
			unlink(link_names[i]);
			make_link(i, 0, link_names[i]);
			add_path_states(link_names[i], st);
			path_resolves_to("t0,d/e/t1");
		}
		*cycle = symlink_cycle;
	} else if (!strcmp(cfg.scenario, "prune")) {
		if (chdir(cfg.dir))
			return 3;
		for (i = 0; i < 4; i++) {
			snprintf(p, sizeof(p), "p%02d", i);
			if (make_dir(p))
				return 3;
			snprintf(p, sizeof(p), "p%02d/f", i);
			write_file(p, 0644);
			add_path(p, (const int[]){ 0, -1 });
			path_resolves_to(p);
		}
		if (cfg.casefold) {
			casefold_dir(".");
			add_path("c/F", (const int[]){ 0, -1 });
			path_resolves_to("c/f");
		}
		*cycle = prune_cycle;
	} else {
		fprintf(stderr, "dcrace-hunt: unknown scenario '%s' (see --help)\n",
			cfg.scenario);
		return 2;
	}
	/* dirfd: once the controller closed it (the left state), EBADF */
	for (i = 0; start_kind == START_DIRFD && i < npaths; i++)
		paths[i].allowed[nstates > 1 ? 3 : 0] |= 1UL << EBADF;
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
	case EBADF: return "EBADF";
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

/* --grace LIST: up to MAX_GRACE counts 0..100, comma-separated */
static void parse_grace(const char *v)
{
	char buf[128], *tok, *save = NULL;

	if (strlen(v) >= sizeof(buf)) {
		fprintf(stderr, "dcrace-hunt: --grace: list too long\n");
		exit(2);
	}
	strcpy(buf, v);
	ngrace = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (ngrace == MAX_GRACE) {
			fprintf(stderr, "dcrace-hunt: --grace: at most %d values\n", MAX_GRACE);
			exit(2);
		}
		grace[ngrace++] = parse_long("--grace", tok, 0, 100);
	}
	if (!ngrace) {
		fprintf(stderr, "dcrace-hunt: --grace wants counts like 0,1,3\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_WALKERS];
	void (*cycle)(void) = NULL;
	unsigned long calls = 0, false_total = 0, wrong;
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
		else if (!strcmp(a, "--grace"))
			parse_grace(v);
		else if (!strcmp(a, "--start"))
			cfg.start = v;
		else if (!strcmp(a, "--casefold"))
			cfg.casefold = parse_long(a, v, 0, 1);
		else if (!strcmp(a, "--evict"))
			cfg.evict = parse_long(a, v, 0, 1);
		else if (!strcmp(a, "--sync"))
			cfg.sync = parse_long(a, v, 0, 1);
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
	if (cfg.start && strcmp(cfg.start, "cwd")) {
		static const char *const ok[][2] = {
			{ "dirfd", "proc-umount proc-exit lazy-umount" },
			{ "root", "proc-exit" }, { "task", "proc-exit" },
			{ "rmdir", "lazy-umount" },
		};
		const char *for_sc = NULL;

		for (i = 0; i < 4; i++)
			if (!strcmp(cfg.start, ok[i][0]))
				for_sc = ok[i][1];
		if (!for_sc || !strstr(for_sc, cfg.scenario)) {
			fprintf(stderr, "dcrace-hunt: --start %s: not for scenario %s (cwd; dirfd: proc-umount, proc-exit, lazy-umount; root, task: proc-exit; rmdir: lazy-umount)\n",
				cfg.start, cfg.scenario);
			return 2;
		}
		start_kind = !strcmp(cfg.start, "dirfd") ? START_DIRFD :
			     !strcmp(cfg.start, "root") ? START_ROOT :
			     !strcmp(cfg.start, "rmdir") ? START_RMDIR : START_TASK;
	}
	snprintf(base_dir, sizeof(base_dir), start_kind == START_RMDIR ? "%s/w" : "%s",
		 cfg.dir);
	if (cfg.uid >= 0 && strcmp(cfg.scenario, "replace")) {
		fprintf(stderr, "dcrace-hunt: --uid is for scenario replace\n");
		return 2;
	}
	if (start_kind == START_DIRFD && start_dirfd_init()) {
		fprintf(stderr, "dcrace-hunt: --start dirfd: %s\n", strerror(errno));
		return 3;
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
	if (rmdir_mounted && umount2(cfg.dir, MNT_DETACH))
		ctl_fail("umount -l %s: %s", cfg.dir, strerror(errno));
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
	}
	printf("{\"scenario\": \"%s\", \"start\": \"%s\", \"seconds\": %.3f, \"iterations\": %ld, ",
	       cfg.scenario, cfg.start ? cfg.start : "cwd", t, iterations);
	printf("\"walkers\": %ld, \"uid\": %ld, \"ctl_tid\": %ld, ", cfg.walkers,
	       cfg.uid, (long)syscall(SYS_gettid));
	/* dirfd: the one number the walkers were given, and how often it was */
	printf("\"start_fd\": %d, \"start_fd_entries\": %ld, \"walker_tids\": [",
	       start_fd_num, start_fd_entries);
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
			false_total += paths[i].false_count[e];
		}
		printf("}");
	}
	printf("}, \"false_errors\": {");
	for (i = 0, first = 1; i < npaths; i++) {
		for (e = 0; e < NERR; e++) {
			if (!paths[i].false_count[e])
				continue;
			printf("%s\"%s %s\": %lu", first ? "" : ", ", paths[i].name,
			       errname(e), (unsigned long)paths[i].false_count[e]);
			first = 0;
		}
	}
	printf("}, ");
	{
		const char *pn[MAX_PATHS], *nm[MAX_PATHS];

		for (i = 0; i < npaths; i++) {
			pn[i] = paths[i].name;
			nm[i] = paths[i].names;
		}
		wrong = ident_finish(stdout, pn, nm);
	}
	printf("\"states\": %d, \"grace\": {", nstates);
	for (i = 0; i < ngrace; i++)
		printf("%s\"%ld\": %ld", i ? ", " : "", grace[i], grace_cycles[i]);
	printf("}, \"false_total\": %lu, \"calls\": %lu, \"ctl_errors\": %ld, \"ctl_error\": \"%s\"}\n",
	       false_total, calls, ctl_errors, ctl_error);
	return false_total || wrong ? 1 : 0;
}
