// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: the stat and open walkers. */
#include "workload.h"

void walk_loop(struct worker *w)
{
	const char *op = cfg.mode == MODE_STAT ? "stat" : "open";
	char path[PATH_MAX];

	while (!stopped()) {
		unsigned int d = rng_below(&w->rng, (unsigned int)cfg.dirs);
		unsigned int f = rng_below(&w->rng, (unsigned int)cfg.files);
		struct stat st;
		int r, err;

		snprintf(path, sizeof(path), "%s/d%02u/f%03u", cfg.dir, d, f);
		if (cfg.mode == MODE_STAT) {
			r = stat(path, &st);
			err = errno;
		} else {
			r = open(path, O_RDONLY | O_CLOEXEC);
			err = errno;
			if (r >= 0)
				close(r);
		}
		count_lookup(w);
		if (r < 0)
			src_error(w, op, path, err);
	}
}
