// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: mode mutate, whose truth is by construction.
 *
 * K mutators (comm dcr-mutate, root) each turn one component DIR/mNN
 * around, as fast as they can, one syscall a step:
 *	file mNN (0644) -> unlink -> mkdir mNN (0755) -> create mNN/y (0644)
 *	-> unlink mNN/y -> rmdir -> create the file mNN -> ...
 * and in one cycle of four (drawn from --seed) two renames: a prepared
 * file mNN.t renamed over the file mNN (a file replaced by a file), and
 * the directory mNN (holding y) renamed to mNN.t and back (gone, then
 * back). The walkers (dcr-walk; --uid N: that uid and gid, this thread
 * only) stat or open mNN/y and mNN, and with --uid the static
 * locked/y under a 0700 root-owned directory, which --rename-locked
 * renames to locked.r and back (rename.c; the walkers then walk locked/y
 * with or without --uid). Every state a walker can see is one of: mNN a
 * file, missing, a directory with or without y; locked there or renamed
 * away. So per path (mutate_allowed()):
 *	mNN/y		0, ENOENT, ENOTDIR
 *	mNN		0, ENOENT
 *	locked/y	EACCES (--uid N > 0), 0 (--uid 0 or root); ENOENT
 *			too with --rename-locked
 * for every call (stat, lstat, open O_RDONLY, openat). Any other errno
 * is a user-visible false error, listed in "paths" with its errno; no
 * verifying lookup is needed (nor made).
 */
#include "workload.h"

/* locked/y as the setup made it (renames keep its inode) */
static struct ident locked_ident;

/* Mode mutate's paths (enum mut_kind), as the result names them. */
static const char *const kind_names[NKINDS] = { "m/y", "m", "locked/y" };

/* The mutators' steps, each one syscall. */
enum mstep {
	MS_NEWFILE_T, MS_RENAME_T_M, MS_UNLINK_M, MS_MKDIR_M, MS_CREATE_Y,
	MS_RENAME_M_T, MS_UNLINK_Y, MS_RMDIR_M, MS_CREATE_M,
};

struct mutator {
	_Atomic uint64_t pub_mutations;
	pthread_t tid;
	int idx;
	uint64_t rng;
	uint64_t mutations;
	uint64_t errors;
	bool created;
	enum mstep cycle[12];
	int len, pos;
	char first_err[ERR_TEXT_LEN];
	char m[PATH_MAX], y[PATH_MAX], t[PATH_MAX], ty[PATH_MAX];
};

static struct mutator **mutators;

/* Is ERR what some consistent state of a path of KIND gives? */
static bool mutate_allowed(enum mut_kind kind, int err)
{
	switch (kind) {
	case MK_Y:
		return err == 0 || err == ENOENT || err == ENOTDIR;
	case MK_M:
		return err == 0 || err == ENOENT;
	default:
		return err == (cfg.uid > 0 ? EACCES : 0) ||
		       (cfg.rename_locked && err == ENOENT);
	}
}

/* Do the walkers walk locked/y? With --uid or --rename-locked. */
static bool walks_locked(void)
{
	return cfg.uid >= 0 || cfg.rename_locked;
}

static void mutator_paths(struct mutator *m)
{
	fmt_path(m->m, sizeof(m->m), "%s/m%02d", cfg.dir, m->idx);
	fmt_path(m->y, sizeof(m->y), "%s/m%02d/y", cfg.dir, m->idx);
	fmt_path(m->t, sizeof(m->t), "%s/m%02d.t", cfg.dir, m->idx);
	fmt_path(m->ty, sizeof(m->ty), "%s/m%02d.t/y", cfg.dir, m->idx);
}

/* Creates the empty file PATH (mode 0644): 0 or the errno. */
static int create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	return close(fd) < 0 ? errno : 0;
}

static int step_call(struct mutator *m, enum mstep s)
{
	int r;

	switch (s) {
	case MS_NEWFILE_T:
		return create_file(m->t);
	case MS_RENAME_T_M:
		r = rename(m->t, m->m);
		break;
	case MS_UNLINK_M:
		r = unlink(m->m);
		break;
	case MS_MKDIR_M:
		r = mkdir(m->m, 0755);
		break;
	case MS_CREATE_Y:
		return create_file(m->y);
	case MS_RENAME_M_T:
		r = rename(m->m, m->t);
		break;
	case MS_UNLINK_Y:
		r = unlink(m->y);
		break;
	case MS_RMDIR_M:
		r = rmdir(m->m);
		break;
	default:
		return create_file(m->m);
	}
	return r < 0 ? errno : 0;
}

static const char *const step_names[] = {
	"create", "rename", "unlink", "mkdir", "create", "rename", "unlink",
	"rmdir", "create",
};

/* The next cycle's steps: from the file mNN back to it. */
static void plan_cycle(struct mutator *m)
{
	bool renames = rng_below(&m->rng, 4) == 0;
	int n = 0;

	if (renames) {
		m->cycle[n++] = MS_NEWFILE_T;
		m->cycle[n++] = MS_RENAME_T_M;
	}
	m->cycle[n++] = MS_UNLINK_M;
	m->cycle[n++] = MS_MKDIR_M;
	m->cycle[n++] = MS_CREATE_Y;
	if (renames) {
		m->cycle[n++] = MS_RENAME_M_T;
		m->cycle[n++] = MS_RENAME_T_M;
	}
	m->cycle[n++] = MS_UNLINK_Y;
	m->cycle[n++] = MS_RMDIR_M;
	m->cycle[n++] = MS_CREATE_M;
	m->len = n;
	m->pos = 0;
}

/* Whatever a failed step left: removed, and the file mNN made again. */
static int mutator_reset(struct mutator *m)
{
	unlink(m->y);
	unlink(m->ty);
	rmdir(m->m);
	rmdir(m->t);
	unlink(m->m);
	unlink(m->t);
	return create_file(m->m);
}

static void mutator_error(struct mutator *m, enum mstep s, int err)
{
	if (m->errors++ == 0)
		snprintf(m->first_err, sizeof(m->first_err), "mutator %s %s: %s",
			 step_names[s], s == MS_CREATE_Y || s == MS_UNLINK_Y ?
			 m->y : m->m, strerror(err));
}

/*
 * Cycles until the run stops, then to the end of the cycle (the tree is
 * left as the setup made it). A failed step is an error of the
 * workload's own; the component is reset and the cycling goes on.
 */
static void mutate_loop(struct mutator *m)
{
	plan_cycle(m);
	while (!stopped() || m->pos) {
		enum mstep s = m->cycle[m->pos];
		int err = step_call(m, s);

		if (err) {
			mutator_error(m, s, err);
			if (mutator_reset(m))
				return;
			plan_cycle(m);
			continue;
		}
		m->mutations++;
		atomic_store_explicit(&m->pub_mutations, m->mutations,
				      memory_order_relaxed);
		if (++m->pos == m->len)
			plan_cycle(m);
	}
}

static void *mutator_main(void *arg)
{
	struct mutator *m = arg;

	if (thread_start(MUTATE_COMM))
		mutate_loop(m);
	return NULL;
}

/*
 * Starts the mutators and the renamer (they wait at the gate): 0, or the
 * error.
 */
int mutate_start(long *created)
{
	long i;
	int err;

	*created = 0;
	if (cfg.mode != MODE_MUTATE)
		return 0;
	err = rename_start(created);
	if (err)
		return err;
	mutators = xcalloc((size_t)cfg.mutators, sizeof(*mutators));
	for (i = 0; i < cfg.mutators; i++) {
		struct mutator *m = alloc_aligned(sizeof(*m));

		m->idx = (int)i;
		m->rng = rng_init(cfg.seed, (uint64_t)(MAX_THREADS + i));
		mutator_paths(m);
		mutators[i] = m;
		err = pthread_create(&m->tid, NULL, mutator_main, m);
		if (err)
			return err;
		m->created = true;
		(*created)++;
	}
	return 0;
}

/*
 * Joins the mutators and the renamer; their mutations and errors into R
 * (if any).
 */
void mutate_join(struct result *r)
{
	long i;

	rename_join(r);
	for (i = 0; mutators && i < cfg.mutators; i++) {
		struct mutator *m = mutators[i];

		if (!m || !m->created)
			continue;
		pthread_join(m->tid, NULL);
		if (!r)
			continue;
		r->mutations += m->mutations;
		r->other_errors += m->errors;
		if (m->errors && !r->first_err)
			r->first_err = m->first_err;
	}
}

/* Removes what a run may have left of component I; the file mNN made. */
static void prepare_component(long i)
{
	struct mutator m = { .idx = (int)i };
	const char *const rm[] = { m.y, m.ty };
	const char *const rd[] = { m.m, m.t };
	int k;

	mutator_paths(&m);
	for (k = 0; k < 2; k++)
		if (unlink(rm[k]) < 0 && errno != ENOENT && errno != ENOTDIR)
			setup_fail("unlink", rm[k], errno);
	for (k = 0; k < 2; k++)
		if (rmdir(rd[k]) < 0 && errno != ENOENT && errno != ENOTDIR)
			setup_fail("rmdir", rd[k], errno);
	for (k = 0; k < 2; k++)
		if (unlink(rd[k]) < 0 && errno != ENOENT)
			setup_fail("unlink", rd[k], errno);
	make_file(m.m, "", 0, 0644, NULL);
}

/* --no-setup: the files mNN and locked/y must be there (ST: what is). */
static void verify_component(const char *path, struct stat *st)
{
	if (lstat(path, st) < 0 || !S_ISREG(st->st_mode)) {
		fprintf(stderr, PROG ": --no-setup: %s: %s (run without --no-setup first)\n",
			path, errno ? strerror(errno) : "not a regular file");
		exit(1);
	}
}

/*
 * The tree of mode mutate (or, with --no-setup, its check): the files
 * mNN, and locked/y in a 0700 directory owned by root (when run as root).
 */
void mutate_prepare(void)
{
	char path[PATH_MAX];
	struct stat st;
	long i;

	if (!cfg.no_setup)
		make_base_dir();
	for (i = 0; i < cfg.mutators; i++) {
		fmt_path(path, sizeof(path), "%s/m%02ld", cfg.dir, i);
		errno = 0;
		if (cfg.no_setup)
			verify_component(path, &st);
		else
			prepare_component(i);
	}
	if (!cfg.no_setup)
		rename_cleanup();
	fmt_path(path, sizeof(path), "%s/locked", cfg.dir);
	if (!cfg.no_setup) {
		make_tree_dir(path, 0700);
		if (geteuid() == 0 && chown(path, 0, 0) < 0)
			setup_fail("chown", path, errno);
	}
	fmt_path(path, sizeof(path), "%s/locked/y", cfg.dir);
	errno = 0;
	if (cfg.no_setup)
		verify_component(path, &st);
	else
		make_file(path, "", 0, 0644, &st);
	record_ident(&locked_ident, &st);
	if (!cfg.no_setup)
		sync();
}

/*
 * --uid N: this walker thread (only: the raw syscalls change one
 * thread's credentials, glibc's setuid() all of them) becomes uid and gid
 * N without supplementary groups, and must be able to search DIR.
 * 0, or 1 after saying why.
 */
int walker_drop_privileges(void)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	long id = cfg.uid;

	if (cfg.mode != MODE_MUTATE || id < 0)
		return 0;
	/* the first walker to fail says why and exits; the others wait */
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, id, id, id) < 0 ||
	    syscall(SYS_setresuid, id, id, id) < 0) {
		pthread_mutex_lock(&once);
		fprintf(stderr, PROG ": --uid %ld: %s\n", id, strerror(errno));
		return 1;
	}
	if (access(cfg.dir_arg, X_OK) < 0) {
		pthread_mutex_lock(&once);
		fprintf(stderr, PROG ": --uid %ld cannot search %s: %s\n", id,
			cfg.dir_arg, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * Identity in mode mutate: mNN/y is only ever a file (a directory where
 * only y was is a wrong object), mNN a file or a directory, locked/y the
 * file the setup made; every one on the tree's filesystem.
 */
static void mutate_identity(struct worker *w, enum mut_kind kind,
			    const char *path, const struct stat *st)
{
	struct ident any = { tree_dev, 0 };

	switch (kind) {
	case MK_Y:
		check_identity(w, path, st, &any, S_IFREG);
		break;
	case MK_M:
		check_identity(w, path, st, &any,
			       S_ISDIR(st->st_mode) ? S_IFDIR : S_IFREG);
		break;
	default:
		check_identity(w, path, st, &locked_ident, S_IFREG);
		break;
	}
}

/* A walker's next path: its kind, written into PATH. */
static enum mut_kind pick_path(struct worker *w, char *path, size_t size)
{
	unsigned int n = (unsigned int)(2 * cfg.mutators + walks_locked());
	unsigned int p = rng_below(&w->rng, n);

	if (p >= 2 * cfg.mutators) {
		snprintf(path, size, "%s/locked/y", cfg.dir);
		return MK_LOCKED;
	}
	if (p >= cfg.mutators) {
		snprintf(path, size, "%s/m%02u", cfg.dir,
			 p - (unsigned int)cfg.mutators);
		return MK_M;
	}
	snprintf(path, size, "%s/m%02u/y", cfg.dir, p);
	return MK_Y;
}

void mutate_walk_loop(struct worker *w)
{
	int fixed = single_op(), dirfd;
	char path[PATH_MAX];
	size_t base;

	if (!walk_setup(w, path, sizeof(path), &base, &dirfd))
		return;
	while (!stopped()) {
		enum mut_kind kind = pick_path(w, path, sizeof(path));
		enum walk_op op = fixed >= 0 ? (enum walk_op)fixed : pick_op(w);
		struct stat st;
		int err = walk_call(w, op, dirfd, path, path + base, &st);

		count_lookup(w);
		w->outcomes[op][errno_slot(err)]++;
		w->kind_outcomes[kind][errno_slot(err)]++;
		if (!mutate_allowed(kind, err))
			note_false_error(w, op_names[op], path, err);
		else if (!err)
			mutate_identity(w, kind, path, &st);
	}
	if (dirfd >= 0)
		close(dirfd);
}

/* {"0":n,"ENOENT":n,...}: the non-zero counts of COUNTS. */
void errno_counts_json(FILE *f, const uint64_t *counts)
{
	char buf[16];
	bool first = true;
	int e;

	fputc('{', f);
	for (e = 0; e < ERRNO_SLOTS; e++) {
		if (!counts[e])
			continue;
		fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",",
			errno_name(e, buf, sizeof(buf)), counts[e]);
		first = false;
	}
	fputc('}', f);
}

/* "allowed": per path kind walked, the errnos a consistent state gives. */
static void allowed_json(FILE *f)
{
	char buf[16];
	int k, e;

	fputs(",\"allowed\":{", f);
	for (k = 0; k < NKINDS - !walks_locked(); k++) {
		bool first = true;

		fprintf(f, "%s\"%s\":[", k ? "," : "", kind_names[k]);
		for (e = 0; e < ERRNO_SLOTS - 1; e++) {
			if (!mutate_allowed((enum mut_kind)k, e))
				continue;
			fprintf(f, "%s\"%s\"", first ? "" : ",",
				errno_name(e, buf, sizeof(buf)));
			first = false;
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/* Mode mutate's part of the result line (after a ","-ended field). */
void mutate_json(FILE *f, const struct result *r)
{
	int i;

	fprintf(f, "\"mutators\":%ld,\"mutations\":%" PRIu64 ",\"uid\":",
		cfg.mutators, r->mutations);
	if (cfg.uid >= 0)
		fprintf(f, "%ld", cfg.uid);
	else
		fputs("null", f);
	fprintf(f, ",\"rename_locked\":%s,\"locked_renames\":%" PRIu64,
		cfg.rename_locked ? "true" : "false", r->locked_renames);
	allowed_json(f);
	fputs(",\"outcomes\":{", f);
	for (i = 0; i < NOPS; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", op_names[i]);
		errno_counts_json(f, r->outcomes[i]);
	}
	fputs("},\"outcomes_by_path\":{", f);
	for (i = 0; i < NKINDS; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", kind_names[i]);
		errno_counts_json(f, r->kind_outcomes[i]);
	}
	fputs("},", f);
}
