// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: mode mutate's --rename-locked. One thread (comm
 * dcr-mutate, root) renames the 0700 directory DIR/locked to locked.r and
 * back, one rename(2) a step, as fast as it can (as the mutators do their
 * steps), and ends with locked in place. A walker's locked/y then finds
 * the directory, or not (ENOENT: renamed away); with --uid N > 0 the
 * directory it finds refuses it (EACCES).
 */
#include "workload.h"

struct renamer {
	pthread_t tid;
	bool created;
	uint64_t renames;
	uint64_t errors;
	char first_err[ERR_TEXT_LEN];
	char home[PATH_MAX], away[PATH_MAX];
};

static struct renamer *renamer;

/*
 * Until the run stops and locked is back. A failed rename is an error of
 * the workload's own, and ends the renaming (the next setup makes locked
 * again and removes locked.r: rename_cleanup()).
 */
static void rename_loop(struct renamer *r)
{
	bool away = false;

	while (!stopped() || away) {
		const char *from = away ? r->away : r->home;
		const char *to = away ? r->home : r->away;

		if (rename(from, to) < 0) {
			r->errors++;
			snprintf(r->first_err, sizeof(r->first_err),
				 "renamer rename %s: %s", from, strerror(errno));
			return;
		}
		r->renames++;
		away = !away;
	}
}

static void *renamer_main(void *arg)
{
	struct renamer *r = arg;

	if (thread_start(MUTATE_COMM))
		rename_loop(r);
	return NULL;
}

/* The renamed directory's two names: DIR/locked, DIR/locked.r. */
static void locked_names(char *home, char *away, size_t size)
{
	fmt_path(home, size, "%s/locked", cfg.dir);
	fmt_path(away, size, "%s/locked.r", cfg.dir);
}

/* Setup: removes what a run may have left renamed, locked.r (with y). */
void rename_cleanup(void)
{
	char home[PATH_MAX], away[PATH_MAX], y[PATH_MAX];

	locked_names(home, away, sizeof(home));
	fmt_path(y, sizeof(y), "%s/y", away);
	if (unlink(y) < 0 && errno != ENOENT && errno != ENOTDIR)
		setup_fail("unlink", y, errno);
	if (rmdir(away) < 0 && errno != ENOENT)
		setup_fail("rmdir", away, errno);
}

/* Starts the renamer, with --rename-locked (it waits at the gate). */
int rename_start(long *created)
{
	int err;

	if (cfg.mode != MODE_MUTATE || !cfg.rename_locked)
		return 0;
	renamer = alloc_aligned(sizeof(*renamer));
	locked_names(renamer->home, renamer->away, sizeof(renamer->home));
	err = pthread_create(&renamer->tid, NULL, renamer_main, renamer);
	if (err)
		return err;
	renamer->created = true;
	(*created)++;
	return 0;
}

/* Joins the renamer; its renames and errors into R (if any). */
void rename_join(struct result *r)
{
	if (!renamer || !renamer->created)
		return;
	pthread_join(renamer->tid, NULL);
	if (!r)
		return;
	r->locked_renames += renamer->renames;
	r->other_errors += renamer->errors;
	if (renamer->errors && !r->first_err)
		r->first_err = renamer->first_err;
}
