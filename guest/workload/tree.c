// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: making and checking the scratch tree. */
#include "workload.h"

void setup_fail(const char *what, const char *path, int err)
{
	fprintf(stderr, PROG ": setup: %s %s: %s\n", what, path,
		strerror(err));
	exit(1);
}

void fmt_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		setup_fail("path", buf, ENAMETOOLONG);
}

static void check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		setup_fail("stat", path, errno);
	if (!S_ISDIR(st.st_mode))
		setup_fail("mkdir", path, ENOTDIR);
}

/* mkdir -p for the user-supplied base directory (modes left alone). */
static void mkdir_parents(const char *dir)
{
	char buf[PATH_MAX];
	size_t i, len = strlen(dir);

	if (len == 0)
		return;		/* "/" */
	memcpy(buf, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			setup_fail("mkdir", buf, errno);
		buf[i] = dir[i];
	}
	check_dir(dir);
}

/* A directory of the tree itself: created with exactly this mode. */
void make_tree_dir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0) {
		if (errno != EEXIST)
			setup_fail("mkdir", path, errno);
		check_dir(path);
	}
	if (chmod(path, mode) < 0)
		setup_fail("chmod", path, errno);
}

/* MADE (if not NULL): fstat() of what was made, no lookup of PATH */
void make_file(const char *path, const void *data, size_t len, mode_t mode,
	       struct stat *made)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  mode);
	if (fd < 0)
		setup_fail("open", path, errno);
	if (write_all(fd, data, len) < 0)
		setup_fail("write", path, errno);
	if (fchmod(fd, mode) < 0)
		setup_fail("fchmod", path, errno);
	if (made && fstat(fd, made) < 0)
		setup_fail("fstat", path, errno);
	if (close(fd) < 0)
		setup_fail("close", path, errno);
}

static void walk_file_path(char *buf, size_t size, long d, long f)
{
	fmt_path(buf, size, "%s/d%02ld/f%03ld", cfg.dir, d, f);
}

/* A quarter of the source files live one level deeper, in dNN/sub/. */
static void src_file_path(char *buf, size_t size, long d, long f)
{
	if (f % 4 == 3)
		fmt_path(buf, size, "%s/src/d%02ld/sub/f%03ld", cfg.dir, d, f);
	else
		fmt_path(buf, size, "%s/src/d%02ld/f%03ld", cfg.dir, d, f);
}

struct ident *walk_idents;
dev_t tree_dev;

void record_ident(struct ident *id, const struct stat *st)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	tree_dev = st->st_dev;
}

static void setup_walk_tree(void)
{
	char path[PATH_MAX], text[64];
	struct stat st;
	long d, f;
	int n;

	for (d = 0; d < cfg.dirs; d++) {
		fmt_path(path, sizeof(path), "%s/d%02ld", cfg.dir, d);
		make_tree_dir(path, 0755);
		for (f = 0; f < cfg.files; f++) {
			walk_file_path(path, sizeof(path), d, f);
			n = snprintf(text, sizeof(text),
				     "dcrace d%02ld/f%03ld\n", d, f);
			make_file(path, text, (size_t)n, 0644, &st);
			record_ident(&walk_idents[d * cfg.files + f], &st);
		}
	}
}

static void setup_cp_tree(void)
{
	static const mode_t modes[] = { 0644, 0640, 0600, 0755 };
	char path[PATH_MAX];
	unsigned char data[4096];
	uint64_t rng = rng_init(cfg.seed, UINT64_MAX);
	long d, f;

	fmt_path(path, sizeof(path), "%s/src", cfg.dir);
	make_tree_dir(path, 0755);
	for (d = 0; d < cfg.dirs; d++) {
		fmt_path(path, sizeof(path), "%s/src/d%02ld", cfg.dir, d);
		make_tree_dir(path, 0755);
		fmt_path(path, sizeof(path), "%s/src/d%02ld/sub", cfg.dir, d);
		make_tree_dir(path, 0750);
		for (f = 0; f < cfg.files; f++) {
			size_t i, size = 1 + rng_below(&rng, sizeof(data));
			mode_t mode = modes[rng_below(&rng, 4)];

			for (i = 0; i < size; i++)
				data[i] = (unsigned char)(rng_next(&rng) >> 56);
			src_file_path(path, sizeof(path), d, f);
			make_file(path, data, size, mode, NULL);
		}
	}
}

static void verify_tree(void)
{
	char path[PATH_MAX];
	struct stat st;
	long d, f;

	for (d = 0; d < cfg.dirs; d++) {
		for (f = 0; f < cfg.files; f++) {
			if (cfg.mode == MODE_CP)
				src_file_path(path, sizeof(path), d, f);
			else
				walk_file_path(path, sizeof(path), d, f);
			if (lstat(path, &st) < 0) {
				fprintf(stderr,
					PROG ": --no-setup: %s: %s (run without --no-setup first)\n",
					path, strerror(errno));
				exit(1);
			}
			if (!S_ISREG(st.st_mode)) {
				fprintf(stderr,
					PROG ": --no-setup: %s: not a regular file\n",
					path);
				exit(1);
			}
			if (cfg.mode != MODE_CP)
				record_ident(&walk_idents[d * cfg.files + f], &st);
		}
	}
}

/* The base directory --dir, with its parents (mkdir -p). */
void make_base_dir(void)
{
	mkdir_parents(cfg.dir);
}

/*
 * Makes the walk or cp tree (or, with --no-setup, checks it); exits on
 * failure. Mode mutate makes its own (mutate_prepare()), with the helpers
 * above.
 */
void prepare_tree(void)
{
	/* what dNN/fNNN are, for the identity oracle (stat and open modes) */
	walk_idents = xcalloc((size_t)(cfg.dirs * cfg.files), sizeof(*walk_idents));
	if (cfg.no_setup) {
		verify_tree();
	} else {
		mkdir_parents(cfg.dir);
		if (cfg.mode == MODE_CP)
			setup_cp_tree();
		else
			setup_walk_tree();
		sync();
	}
}

/*
 * --pin-dirs: hold d00..d(N-1) open with O_PATH for the rest of the run
 * (the fds are never closed). A referenced dentry is never pruned, so a
 * walk through a pinned directory stays in RCU mode down to the file,
 * and the file's dentry is the component pruned under it: the last
 * lookup of stat() and open() (open_last_lookups()). The other
 * directories are pruned themselves: intermediate components.
 */
void pin_dirs(void)
{
	char path[PATH_MAX];
	long d;

	for (d = 0; d < cfg.pin_dirs; d++) {
		fmt_path(path, sizeof(path), "%s/d%02ld", cfg.dir, d);
		if (open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) < 0) {
			fprintf(stderr, PROG ": --pin-dirs: %s: %s\n", path,
				strerror(errno));
			exit(1);
		}
	}
}
