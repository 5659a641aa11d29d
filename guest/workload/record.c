// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: a worker's counts of false ENOENTs and other errors. */
#include "workload.h"

void note_false(struct worker *w, const char *path)
{
	double t = since_start();
	size_t bin = t < 0 ? 0 : (size_t)t;

	if (bin >= nbins)
		bin = nbins - 1;
	w->hist[bin]++;
	if (w->false_enoent++ == 0)
		w->first_false_t = t;
	if (cfg.stop_first)
		atomic_store(&stop_flag, 1);
	atomic_store_explicit(&w->pub_false, w->false_enoent,
			      memory_order_relaxed);
	if (w->npaths < (size_t)cfg.max_paths) {
		char *copy = strdup(path);

		if (copy) {
			w->paths[w->npaths].path = copy;
			w->paths[w->npaths].t = t;
			w->npaths++;
		}
	}
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
 * ENOENT there is the race; anything else is the workload's own error.
 */
void src_error(struct worker *w, const char *op, const char *path, int err)
{
	if (err == ENOENT)
		note_false(w, path);
	else
		note_error(w, op, path, err);
}
