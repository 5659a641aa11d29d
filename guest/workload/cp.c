// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload: cp mode, Hugh's reproduction: each copier copies
 * DIR/src into DIR/cpK (cp -a style), removes the copy (rm -rf), again.
 */
#include "workload.h"

/*
 * Like src_error(), for the copier's removals, where giving up would leave
 * a tree behind and turn one race into a cascade of later errors: says
 * whether to try again (a false ENOENT is transient; at most 3 tries).
 * Every failed try is checked and counted: each is a syscall that
 * returned a false ENOENT, and dcrace.ko sees each one.
 */
static bool again(struct worker *w, const char *op, const char *path,
		  int err, int *tries)
{
	if (err != ENOENT) {
		note_error(w, op, path, err);
		return false;
	}
	if (!src_error(w, op, path, err))
		return false;	/* really gone: nothing to try again */
	return ++*tries < 3;
}

static bool join_path(struct worker *w, char *buf, const char *dir,
		      const char *name)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX) {
		note_error(w, "path", dir, ENAMETOOLONG);
		return false;
	}
	return true;
}

static bool is_dot(const char *name)
{
	return name[0] == '.' &&
	       (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* DIR's next entry other than . and ..; NULL at the end or on an error. */
static const struct dirent *next_entry(struct worker *w, DIR *dir,
				       const char *path)
{
	const struct dirent *de;

	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno)
				note_error(w, "readdir", path, errno);
			return NULL;
		}
		if (!is_dot(de->d_name))
			return de;
	}
}

/* MUST_EXIST: PATH was made by this copier (else ENOENT is fine). */
static void remove_tree(struct worker *w, const char *path, bool must_exist)
{
	const struct dirent *de;
	char child[PATH_MAX];
	struct stat st;
	int tries = 0;
	DIR *dir;

	for (;;) {
		int err;

		count_lookup(w);
		if (TIMED(w, lstat(path, &st)) == 0)
			break;
		err = errno;
		/*
		 * May really be absent (no leftover copy; with DIR a mount's
		 * root, the default, PATH's last component is the only one
		 * that can race): a false ENOENT only if PATH is found right
		 * after.
		 */
		if (err == ENOENT && !must_exist) {
			if (!absent_error(w, "lstat", path) || ++tries >= 3)
				return;
			continue;
		}
		if (!again(w, "lstat", path, err, &tries))
			return;
	}
	tries = 0;
	if (!S_ISDIR(st.st_mode)) {
		count_lookup(w);
		while (TIMED(w, unlink(path)) < 0 &&
		       again(w, "unlink", path, errno, &tries))
			count_lookup(w);
		return;
	}
	for (;;) {
		count_lookup(w);
		dir = TIMED(w, opendir(path));
		if (dir)
			break;
		if (!again(w, "opendir", path, errno, &tries))
			return;
	}
	while ((de = next_entry(w, dir, path)))
		if (join_path(w, child, path, de->d_name))
			remove_tree(w, child, true);
	closedir(dir);
	tries = 0;
	count_lookup(w);
	while (TIMED(w, rmdir(path)) < 0 &&
	       again(w, "rmdir", path, errno, &tries))
		count_lookup(w);
}

static void copy_file(struct worker *w, const char *src, const char *dst,
		      const struct stat *st)
{
	char buf[16384];
	int in, out;

	count_lookup(w);
	in = TIMED(w, open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
	if (in < 0) {
		src_error(w, "open", src, errno);
		return;
	}
	count_lookup(w);
	out = TIMED(w, open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600));
	if (out < 0) {
		dst_error(w, "open", dst, errno);
		close(in);
		return;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			note_error(w, "read", src, errno);
			break;
		}
		if (n == 0)
			break;
		if (write_all(out, buf, (size_t)n) < 0) {
			note_error(w, "write", dst, errno);
			break;
		}
	}
	if (fchmod(out, st->st_mode & 07777) < 0)
		note_error(w, "fchmod", dst, errno);
	if (close(out) < 0)
		note_error(w, "close", dst, errno);
	close(in);
}

static bool copy_entry(struct worker *w, const char *src, const char *dst);

/* Returns false when the copy was cut short by the end of the run. */
static bool copy_dir(struct worker *w, const char *src, const char *dst,
		     const struct stat *st)
{
	bool ok = true;
	DIR *dir;

	count_lookup(w);
	if (TIMED(w, mkdir(dst, 0700)) < 0) {
		dst_error(w, "mkdir", dst, errno);
		return true;
	}
	w->dirs_made++;
	count_lookup(w);
	dir = TIMED(w, opendir(src));
	if (!dir) {
		src_error(w, "opendir", src, errno);
	} else {
		const struct dirent *de;

		while ((de = next_entry(w, dir, src))) {
			char s[PATH_MAX], t[PATH_MAX];

			if (!join_path(w, s, src, de->d_name) ||
			    !join_path(w, t, dst, de->d_name))
				continue;
			if (!copy_entry(w, s, t)) {
				ok = false;
				break;
			}
		}
		closedir(dir);
	}
	count_lookup(w);
	if (TIMED(w, chmod(dst, st->st_mode & 07777)) < 0)
		src_error(w, "chmod", dst, errno);
	return ok;
}

static bool copy_entry(struct worker *w, const char *src, const char *dst)
{
	struct stat st;

	if (stopped())
		return false;
	count_lookup(w);
	if (TIMED(w, lstat(src, &st)) < 0) {
		src_error(w, "lstat", src, errno);
		return true;
	}
	if (S_ISDIR(st.st_mode))
		return copy_dir(w, src, dst, &st);
	if (S_ISREG(st.st_mode))
		copy_file(w, src, dst, &st);
	return true;
}

void copy_loop(struct worker *w)
{
	char src[PATH_MAX], dst[PATH_MAX];

	snprintf(src, sizeof(src), "%s/src", cfg.dir);
	snprintf(dst, sizeof(dst), "%s/cp%d", cfg.dir, w->idx);
	sleep_ms_stoppable(cfg.stagger_ms * w->idx);
	remove_tree(w, dst, false);	/* leftovers of an earlier run */
	while (!stopped()) {
		w->dirs_made = 0;
		/* A copy made its top directory and was not cut short. */
		if (copy_entry(w, src, dst) && w->dirs_made > 0)
			w->copies++;
		/* No directory made: the top mkdir failed, nothing to remove. */
		remove_tree(w, dst, w->dirs_made > 0);
	}
}
