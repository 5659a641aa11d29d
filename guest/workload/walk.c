// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: the walkers: stat(), lstat(), open() + close() or
 * openat() + close() of random files of the tree, in the proportions of
 * --mix (by default the mode's one call).
 */
#include "workload.h"

/* "stat=50,open=50": the calls with a weight, for the result. */
void mix_string(char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < NOPS && len < size; i++) {
		if (cfg.mix[i])
			len += (size_t)snprintf(buf + len, size - len, "%s%s=%ld",
						len ? "," : "", op_names[i],
						cfg.mix[i]);
	}
}

/* The only call with a weight, or -1 when there are several. */
int single_op(void)
{
	int i;

	for (i = 0; i < NOPS; i++)
		if (cfg.mix[i] == cfg.mix_total)
			return i;
	return -1;
}

enum walk_op pick_op(struct worker *w)
{
	long r = (long)rng_below(&w->rng, (unsigned int)cfg.mix_total);
	int i;

	for (i = 0; i < NOPS - 1; i++) {
		r -= cfg.mix[i];
		if (r < 0)
			break;
	}
	return (enum walk_op)i;
}

/*
 * One call, timed (TIMED()); its errno when it failed, else 0 and in *GOT
 * the object it met (open: fstat() of the fd, after the timed call;
 * st_mode 0 when that failed).
 */
int walk_call(struct worker *w, enum walk_op op, int dirfd, const char *path,
	      const char *rel, struct stat *got)
{
	int r;

	switch (op) {
	case OP_STAT:
		r = TIMED(w, stat(path, got));
		break;
	case OP_LSTAT:
		r = TIMED(w, lstat(path, got));
		break;
	case OP_OPEN:
		r = TIMED(w, open(path, O_RDONLY | O_CLOEXEC));
		break;
	default:
		r = TIMED(w, openat(dirfd, rel, O_RDONLY | O_CLOEXEC));
		break;
	}
	if (r < 0)
		return errno;
	if (op == OP_OPEN || op == OP_OPENAT) {
		if (fstat(r, got) < 0)
			got->st_mode = 0;
		close(r);
	}
	return 0;
}

/*
 * A walker's setup: PATH gets "DIR/" (its length in *BASE); with openat
 * in the mix an O_PATH fd of DIR in *DIRFD, else AT_FDCWD. False (the
 * error noted) when DIR cannot be opened.
 */
bool walk_setup(struct worker *w, char *path, size_t size, size_t *base,
		int *dirfd)
{
	*dirfd = AT_FDCWD;
	*base = (size_t)snprintf(path, size, "%s/", cfg.dir);
	if (!cfg.mix[OP_OPENAT])
		return true;
	*dirfd = open(*base > 1 ? cfg.dir : "/",
		      O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		note_error(w, "open", *base > 1 ? cfg.dir : "/", errno);
		return false;
	}
	return true;
}

void walk_loop(struct worker *w)
{
	int fixed = single_op(), dirfd;
	char path[PATH_MAX];
	size_t base;

	if (!walk_setup(w, path, sizeof(path), &base, &dirfd))
		return;
	while (!stopped()) {
		unsigned int d = rng_below(&w->rng, (unsigned int)cfg.dirs);
		unsigned int f = rng_below(&w->rng, (unsigned int)cfg.files);
		enum walk_op op = fixed >= 0 ? (enum walk_op)fixed : pick_op(w);
		struct stat st;
		int err;

		snprintf(path, sizeof(path), "%s/d%02u/f%03u", cfg.dir, d, f);
		err = walk_call(w, op, dirfd, path, path + base, &st);
		count_lookup(w);
		if (err)
			src_error(w, op_names[op], path, err);
		else
			check_identity(w, path, &st,
				       &walk_idents[d * cfg.files + f], S_IFREG);
	}
	if (dirfd >= 0)
		close(dirfd);
}
