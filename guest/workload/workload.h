/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace-workload - provoke the RCU path-walk / dentry-pruning race.
 *
 * Walker threads look up files that are known to exist on a scratch
 * filesystem while pruner threads make the kernel prune dentries.  Every
 * ENOENT on such a file is a user-visible "false ENOENT" (the 2011 RCU
 * path-walk bug found by Hugh Dickins).  The run is deterministic from
 * --seed: every thread has its own xorshift64* generator seeded from the
 * seed and the thread index.
 *
 * Exactly one line goes to stdout at the end:
 *	DCRACE-RESULT {json}
 *
 * Exit status: 0 run completed (whether or not a race was seen), 1 own
 * error (setup, drop_caches unusable, thread creation), 2 usage error.
 *
 * Files (one binary, built by host-scripts/build-initramfs):
 *	workload.h	shared types, the configuration, prototypes
 *	common.c	clock, sleeping, PRNG, start gate, allocation
 *	options.c	--help text and option parsing
 *	tree.c		making and checking the scratch tree
 *	record.c	a worker's counts: false ENOENTs, other errors
 *	walk.c		stat/open walkers
 *	mutate.c	mutate mode: mutators, its walkers, truth by construction
 *	rename.c	mutate mode's --rename-locked: the locked directory renamed
 *	cp.c		cp mode: copy the source tree, remove the copy
 *	prune.c		pruners (drop_caches, memory pressure), sysctls
 *	result.c	progress lines, summing up, the result JSON
 *	main.c		threads and the run's timeline
 *
 * Build (every .c file of guest/workload/ into one binary):
 *	gcc -O2 -static -pthread -Wall -Wextra -Werror \
 *		-o dcrace-workload guest/workload/[a-z]*.c
 */
#ifndef DCRACE_WORKLOAD_H
#define DCRACE_WORKLOAD_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PROG		"dcrace-workload"
#define RESULT_PREFIX	"DCRACE-RESULT "
#define DROP_CACHES	"/proc/sys/vm/drop_caches"
#define WALK_COMM	"dcr-walk"
#define PRUNE_COMM	"dcr-prune"
#define MUTATE_COMM	"dcr-mutate"
#define CACHE_PRESSURE	"/proc/sys/vm/vfs_cache_pressure"
/*
 * The pressure pruner's vfs_cache_pressure: a small tree in a small guest
 * stands for Hugh's kernel tree in a machine short of memory, so the
 * dcache shrinker is made to take more of the dcache per reclaim pass.
 */
#define CP_DEFAULT	10000
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define TOUCH_STEP	4096UL
#define MAX_THREADS	64
#define MAX_DURATION	86400.0
#define ERR_TEXT_LEN	(PATH_MAX + 64)

enum wl_mode { MODE_STAT, MODE_OPEN, MODE_CP, MODE_MUTATE, NMODES };
enum wl_pruner { PRUNER_DROP, PRUNER_PRESSURE, PRUNER_NONE };

/* The walkers' calls (--mix). */
enum walk_op { OP_STAT, OP_LSTAT, OP_OPEN, OP_OPENAT, NOPS };

/*
 * Counts per errno (0: success): errno values below ERRNO_SLOTS have
 * their own slot, larger ones share the last.
 */
#define ERRNO_SLOTS	160

/*
 * Mode mutate's paths, by what a consistent state allows (mutate.c):
 * mNN/y, mNN, and with --uid or --rename-locked locked/y.
 */
enum mut_kind { MK_Y, MK_M, MK_LOCKED, NKINDS };

extern const char *const mode_names[];
extern const char *const op_names[];
extern const char *const pruner_names[];

struct config {
	char dir[PATH_MAX / 2];	/* no trailing '/'; "" means "/" */
	const char *dir_arg;
	enum wl_mode mode;
	enum wl_pruner pruner;
	long threads;
	long pruners;
	long prune_interval_ms;
	long pressure_pct;
	long stagger_ms;
	double duration;
	uint64_t seed;
	long dirs;		/* 0: the mode's default */
	long files;
	long pin_dirs;		/* -1: the mode's default */
	long cache_pressure;	/* vm.vfs_cache_pressure; -1: leave it */
	long max_paths;
	long max_syscalls;	/* 0: no limit */
	bool setup_only;
	bool no_setup;
	bool quiet;
	bool stop_first;
	long nice;
	long mix[NOPS];		/* weight of each walk_op */
	long mix_total;
	bool mix_set;
	bool pruner_set;
	long mutators;		/* mode mutate: mutated components */
	long uid;		/* mode mutate: the walkers' uid/gid; -1 none */
	bool rename_locked;	/* mode mutate: locked renamed to and fro */
};

extern struct config cfg;

/*
 * A false error (ENOENT, or in mode mutate any errno the path's states
 * do not allow): the failed call and when, for the JSON "paths". The
 * call ran between start_ns and end_ns (CLOCK_MONOTONIC, read right
 * before and right after it): dcrace.ko's event for it lies in between.
 */
struct path_rec {
	char *path;		/* the path the call failed on */
	const char *op;		/* the call: "stat", "open", "mkdir", ... */
	int err;		/* its errno */
	double t;		/* seconds since the start, after the call */
	uint64_t start_ns;
	uint64_t end_ns;
	int tid;		/* gettid() of the failing thread */
	bool persist;		/* CHECK stays for the whole run */
	bool gone;		/* reclassified: really gone at the end */
	char *check;		/* what must exist: path, or its parent */
};

/*
 * The false ENOENTs kept per run for the check at the end and for
 * "paths": at least this many, more with a larger --max-paths.
 */
#define KEEP_MIN	100000

/* One per walker/copier; only its own thread writes it until joined. */
struct worker {
	_Atomic uint64_t pub_syscalls;	/* published for the progress line */
	_Atomic uint64_t pub_false;
	pthread_t tid;
	int os_tid;		/* gettid() */
	int idx;
	uint64_t rng;
	uint64_t syscalls;
	uint64_t false_enoent;
	uint64_t false_total;	/* false errors of any errno */
	uint64_t false_errs[ERRNO_SLOTS];
	uint64_t outcomes[NOPS][ERRNO_SLOTS];	/* mode mutate */
	uint64_t kind_outcomes[NKINDS][ERRNO_SLOTS];
	uint64_t gone;		/* ENOENT on a path really gone */
	uint64_t other_errors;
	uint64_t ident_checks;	/* successes checked against the tree */
	uint64_t wrong_objects;	/* ... that met another object */
	char first_wrong[256];
	uint64_t copies;
	uint64_t dirs_made;	/* by the current copy */
	uint64_t call_start;	/* the last TIMED() call's start, end (ns) */
	uint64_t call_end;
	double first_false_t;	/* the first false error */
	double first_enoent_t;	/* the first false ENOENT */
	double first_err_t;
	char *first_err;
	uint64_t *hist;
	struct path_rec *paths;
	size_t npaths, paths_cap;
};

struct pruner {
	_Atomic uint64_t pub_prunes;
	pthread_t tid;
	int idx;
	uint64_t prunes;
	uint64_t errors;
	char first_err[128];
};

struct result {
	double elapsed;
	uint64_t syscalls;
	uint64_t false_enoent;
	uint64_t false_total;
	uint64_t false_errs[ERRNO_SLOTS];
	uint64_t outcomes[NOPS][ERRNO_SLOTS];
	uint64_t kind_outcomes[NKINDS][ERRNO_SLOTS];
	uint64_t gone;
	uint64_t other_errors;
	uint64_t ident_checks;
	uint64_t wrong_objects;
	const char *first_wrong;
	uint64_t copies;
	uint64_t prunes;
	uint64_t prune_errors;
	uint64_t mutations;
	uint64_t locked_renames;
	double first_false_t;	/* < 0: none */
	double first_enoent_t;	/* < 0: none */
	const char *first_err;
	uint64_t *hist;
	struct path_rec *paths;
	size_t npaths;
	int *tids;		/* the walkers' (copiers') gettid()s */
	size_t ntids;
};

extern atomic_int stop_flag;
extern _Atomic uint64_t syscalls_total;
extern double start_time;
extern size_t nbins;

static inline bool stopped(void)
{
	return atomic_load_explicit(&stop_flag, memory_order_relaxed) != 0;
}

/* One more syscall; --max-syscalls reached ends the run. */
static inline void count_lookup(struct worker *w)
{
	w->syscalls++;
	atomic_store_explicit(&w->pub_syscalls, w->syscalls,
			      memory_order_relaxed);
	if (cfg.max_syscalls &&
	    atomic_fetch_add_explicit(&syscalls_total, 1,
				      memory_order_relaxed) + 1 >=
	    (uint64_t)cfg.max_syscalls)
		atomic_store(&stop_flag, 1);
}

uint64_t mono_ns(void);

/* The end of a TIMED() call: its end time; errno kept. */
static inline void timed_end(struct worker *w)
{
	int e = errno;

	w->call_end = mono_ns();
	errno = e;
}

/*
 * CALL, one syscall of worker W on a path, timed: W's call_start and
 * call_end are CLOCK_MONOTONIC right before and right after it (the
 * clock of dcrace.ko's event times), for the failure's "paths" entry.
 */
#define TIMED(w, call) __extension__ ({		\
	__typeof__(call) timed_r_;		\
	(w)->call_start = mono_ns();		\
	timed_r_ = (call);			\
	timed_end(w);				\
	timed_r_;				\
})

/* common.c */
double mono_now(void);
double since_start(void);
void on_stop_signal(int sig);
void sleep_until(double when);
void sleep_ms_stoppable(long ms);
uint64_t rng_init(uint64_t seed, uint64_t idx);
uint64_t rng_next(uint64_t *s);
unsigned int rng_below(uint64_t *s, unsigned int n);
int write_all(int fd, const void *buf, size_t len);
bool gate_wait(void);
bool thread_start(const char *comm);
void gate_open(int state, int nready);
void *alloc_aligned(size_t size);
void *xcalloc(size_t n, size_t size);
const char *errno_name(int err, char *buf, size_t size);

static inline size_t errno_slot(int err)
{
	return err >= 0 && err < ERRNO_SLOTS ? (size_t)err : ERRNO_SLOTS - 1;
}

/* options.c */
void parse_args(int argc, char **argv);

/* tree.c: the tree's helpers (it calls no mode's code) */
void make_base_dir(void);
void prepare_tree(void);
void pin_dirs(void);
void __attribute__((noreturn)) setup_fail(const char *what, const char *path,
					  int err);
void fmt_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void make_tree_dir(const char *path, mode_t mode);
void make_file(const char *path, const void *data, size_t len, mode_t mode,
	       struct stat *made);

/* record.c */
void note_error(struct worker *w, const char *op, const char *path, int err);
bool src_error(struct worker *w, const char *op, const char *path, int err);
bool dst_error(struct worker *w, const char *op, const char *path, int err);
bool absent_error(struct worker *w, const char *op, const char *path);
void recheck_false(struct worker *w);
void note_false_error(struct worker *w, const char *op, const char *path,
		      int err);

/* walk.c */
bool walk_setup(struct worker *w, char *path, size_t size, size_t *base,
		int *dirfd);
void walk_loop(struct worker *w);
void mix_string(char *buf, size_t size);
int single_op(void);
enum walk_op pick_op(struct worker *w);
int walk_call(struct worker *w, enum walk_op op, int dirfd, const char *path,
	      const char *rel, struct stat *got);

/*
 * The identity oracle (tree.c, record.c): a call that succeeds on the
 * wrong object is invisible to an errno check. The setup records what each
 * walked path names (st_dev, st_ino, file type); every successful stat(),
 * lstat() and open() (fstat() of the fd) is compared with it.
 */
struct ident {
	dev_t dev;
	ino_t ino;
};

extern struct ident *walk_idents;	/* dNN/fNNN: [d * files + f] */
extern dev_t tree_dev;
void record_ident(struct ident *id, const struct stat *st);
void check_identity(struct worker *w, const char *path, const struct stat *got,
		    const struct ident *want, mode_t type);

/* mutate.c */
void mutate_prepare(void);
int mutate_start(long *created);
void mutate_join(struct result *r);
int walker_drop_privileges(void);
void mutate_walk_loop(struct worker *w);
void mutate_json(FILE *f, const struct result *r);
void errno_counts_json(FILE *f, const uint64_t *counts);

/* rename.c */
void rename_cleanup(void);
int rename_start(long *created);
void rename_join(struct result *r);

/* cp.c */
void copy_loop(struct worker *w);

/* prune.c */
void *pruner_main(void *arg);
int check_drop_caches(void);
int cache_pressure_set(long *old);
int cache_pressure_restore(long old, bool say_why);

/* result.c */
void progress(struct worker **workers, struct pruner **pruners, long npruners);
void collect_result(struct result *r, struct worker **workers,
		    struct pruner **pruners, long npruners);
void print_result(const struct result *r, long npruners);

#endif /* DCRACE_WORKLOAD_H */
