// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: a worker's counts of false ENOENTs and other errors
 * (mode mutate: of false errors, any errno, note_false_error()).
 *
 * An ENOENT on a path the workload guarantees is checked before it counts
 * as false: right after the failure the path (for a create, its parent)
 * is looked up with lstat(), up to 3 times since that lookup can race too;
 * if it is really missing the failure counts as "gone", not false.  At
 * the end of the run every kept false ENOENT on a path that stays for the
 * whole run (the walk tree, cp's source tree) is checked again, and moved
 * to "gone" if its path is missing then.
 *
 * Each kept false ENOENT has the start and end of its call (TIMED(), and
 * still_there()'s own lstat()s): the harness matches dcrace.ko's event to
 * the very call that failed.
 */
#include "workload.h"

/* False ENOENTs kept by all workers (at most keep_cap()). */
static atomic_size_t kept;

static size_t keep_cap(void)
{
	return cfg.max_paths > KEEP_MIN ? (size_t)cfg.max_paths : KEEP_MIN;
}

/* Does PATH stay for the whole run (no copier removes it)? */
static bool persists(const char *path)
{
	size_t n = strlen(cfg.dir);

	if (cfg.mode == MODE_MUTATE)
		return false;	/* truth by construction: nothing to recheck */
	if (cfg.mode != MODE_CP)
		return true;
	if (strncmp(path, cfg.dir, n) != 0)
		return false;
	return path[n] == '\0' ||
	       (strncmp(path + n, "/src", 4) == 0 &&
		(path[n + 4] == '\0' || path[n + 4] == '/'));
}

/* A failed call: its op, path, time since the start, start and end ns. */
struct failed_call {
	const char *op;
	const char *path;
	int err;
	double t;
	uint64_t start_ns;
	uint64_t end_ns;
};

static void keep(struct worker *w, const struct failed_call *c,
		 const char *check)
{
	const char *path = c->path;
	struct path_rec *r;

	if (atomic_fetch_add(&kept, 1) >= keep_cap())
		return;
	if (w->npaths == w->paths_cap) {
		size_t cap = w->paths_cap ? 2 * w->paths_cap : 64;
		struct path_rec *p = realloc(w->paths, cap * sizeof(*p));

		if (!p)
			return;
		w->paths = p;
		w->paths_cap = cap;
	}
	r = &w->paths[w->npaths];
	r->path = strdup(path);
	r->check = check == path ? r->path : strdup(check);
	if (!r->path || !r->check)
		return;
	r->op = c->op;
	r->err = c->err;
	r->t = c->t;
	r->start_ns = c->start_ns;
	r->end_ns = c->end_ns;
	r->tid = w->os_tid;
	r->persist = persists(check);
	r->gone = false;
	w->npaths++;
}

static void note_false(struct worker *w, const struct failed_call *c,
		       const char *check)
{
	double t = c->t;
	size_t bin = t < 0 ? 0 : (size_t)t;

	if (bin >= nbins)
		bin = nbins - 1;
	w->hist[bin]++;
	if (w->false_total++ == 0)
		w->first_false_t = t;
	w->false_errs[errno_slot(c->err)]++;
	if (c->err == ENOENT && w->false_enoent++ == 0)
		w->first_enoent_t = t;
	if (cfg.stop_first)
		atomic_store(&stop_flag, 1);
	atomic_store_explicit(&w->pub_false, w->false_total,
			      memory_order_relaxed);
	keep(w, c, check);
}

/*
 * Is CHECK there?  lstat() up to 3 times: a failed one that a later one
 * contradicts was itself a false ENOENT, and counts as one, with its own
 * start and end.
 */
static bool still_there(struct worker *w, const char *check)
{
	struct failed_call c[3];
	struct stat st;
	int i, j, r;

	for (i = 0; i < 3; i++) {
		if (!w) {
			r = lstat(check, &st);
		} else {
			count_lookup(w);
			c[i].start_ns = mono_ns();
			r = lstat(check, &st);
			timed_end(w);
			c[i].end_ns = w->call_end;
		}
		if (r == 0 || errno != ENOENT) {
			for (j = 0; w && j < i; j++)
				note_false(w, &c[j], check);
			return true;
		}
		c[i].op = "lstat";
		c[i].path = check;
		c[i].err = ENOENT;
		c[i].t = since_start();
	}
	return false;
}

/*
 * Is the ENOENT of OP on PATH (W's last TIMED() call) false (CHECK is
 * there right after)? If so it is counted. CHECK really missing counts
 * as "gone", unless MAY_BE_ABSENT.
 */
static bool verify_enoent(struct worker *w, const char *op, const char *path,
			  const char *check, bool may_be_absent)
{
	struct failed_call c = {
		.op = op, .path = path, .err = ENOENT, .t = since_start(),
		.start_ns = w->call_start, .end_ns = w->call_end,
	};

	if (!still_there(w, check)) {
		if (!may_be_absent)
			w->gone++;
		return false;
	}
	note_false(w, &c, check);
	return true;
}

static const char *type_name(mode_t type)
{
	switch (type & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symbolic link";
	case 0: return "nothing (fstat failed)";
	default: return "special file";
	}
}

/*
 * A successful call on PATH met GOT: it must be of TYPE, on WANT's dev,
 * and WANT's inode when that is known (not 0). Anything else is a wrong
 * object, counted, the first one described.
 */
void check_identity(struct worker *w, const char *path, const struct stat *got,
		    const struct ident *want, mode_t type)
{
	w->ident_checks++;
	if ((got->st_mode & S_IFMT) == type && got->st_dev == want->dev &&
	    (!want->ino || got->st_ino == want->ino))
		return;
	if (w->wrong_objects++ == 0)
		snprintf(w->first_wrong, sizeof(w->first_wrong),
			 "%s: got %s ino %lu dev %lu, not the %s ino %lu dev %lu",
			 path, type_name(got->st_mode),
			 (unsigned long)got->st_ino, (unsigned long)got->st_dev,
			 type_name(type), (unsigned long)want->ino,
			 (unsigned long)want->dev);
}

void note_error(struct worker *w, const char *op, const char *path, int err)
{
	if (w->other_errors++ == 0) {
		w->first_err_t = since_start();
		w->first_err = malloc(ERR_TEXT_LEN);
		if (w->first_err)
			snprintf(w->first_err, ERR_TEXT_LEN, "%s %s: %s",
				 op, path, strerror(err));
	}
}

/*
 * A failed syscall on a path the workload guarantees: a source entry, or a
 * destination whose parent directory the copier made and alone removes.
 * ENOENT there is the race, once the path is found there; anything else
 * is the workload's own error.  Returns whether it was a false ENOENT.
 */
bool src_error(struct worker *w, const char *op, const char *path, int err)
{
	if (err == ENOENT)
		return verify_enoent(w, op, path, path, false);
	note_error(w, op, path, err);
	return false;
}

/*
 * An ENOENT on PATH, which may really be absent (cp's leftover copy):
 * false only if PATH is found right after, then counted like
 * src_error()'s; really absent is no error and not "gone".  Returns
 * whether it was a false ENOENT.
 */
bool absent_error(struct worker *w, const char *op, const char *path)
{
	return verify_enoent(w, op, path, path, true);
}

/* Like src_error(), for a call that creates PATH: its parent must exist. */
bool dst_error(struct worker *w, const char *op, const char *path, int err)
{
	char parent[PATH_MAX];
	const char *slash;
	size_t n;

	if (err != ENOENT) {
		note_error(w, op, path, err);
		return false;
	}
	slash = strrchr(path, '/');
	n = slash ? (size_t)(slash - path) : 0;
	if (n >= sizeof(parent))
		n = sizeof(parent) - 1;
	memcpy(parent, path, n);
	parent[n] = '\0';
	return verify_enoent(w, op, path, n ? parent : "/", false);
}

/* After the run (threads joined): kept false ENOENTs whose path is gone. */
void recheck_false(struct worker *w)
{
	double first = -1;
	size_t i, bin;

	for (i = 0; i < w->npaths; i++) {
		struct path_rec *r = &w->paths[i];

		if (r->persist && !still_there(NULL, r->check)) {
			r->gone = true;
			w->false_enoent--;
			w->false_total--;
			w->false_errs[ENOENT]--;
			w->gone++;
			bin = r->t < 0 ? 0 : (size_t)r->t;
			w->hist[bin < nbins ? bin : nbins - 1]--;
		} else if (first < 0 || r->t < first) {
			first = r->t;
		}
	}
	if (first >= 0 || !w->false_total)
		w->first_false_t = first;
}

/*
 * Mode mutate: W's last TIMED() call returned ERR, which no consistent
 * state of PATH allows: a false error, by construction (no check).
 */
void note_false_error(struct worker *w, const char *op, const char *path,
		      int err)
{
	struct failed_call c = {
		.op = op, .path = path, .err = err, .t = since_start(),
		.start_ns = w->call_start, .end_ns = w->call_end,
	};

	note_false(w, &c, path);
}
