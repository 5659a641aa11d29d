// SPDX-License-Identifier: GPL-2.0
/*
 * ext4-symlink-evict: a lazy (RCU-mode) path walk that follows an ext4
 * symlink while the symlink's last reference goes reads the body that
 * ext4_evict_inode() is erasing: i_data zeroed under a fast symlink's
 * i_link, i_size set to 0 under a block symlink's ->get_link(). The walk
 * then resolves what is left of the body (an empty string: the link's own
 * directory) and stat() or open() succeeds on an object the path never
 * named. No KASAN report: nothing is freed yet.
 *
 * Build:  gcc -O2 -static -pthread -o ext4-symlink-evict ext4-symlink-evict.c
 * Run:    ./ext4-symlink-evict DIR [SECONDS [WALKERS]]
 *         DIR: an empty directory on ext4 (the user needs write access
 *         only; no privilege). Default 60 s, 4 walker threads.
 *
 * In DIR: files t0 and d/e/t1, a fast symlink f (body "t0" or "d/e/t1",
 * stored in the inode) and a block symlink b (202 bytes: "./"... then the
 * target). The main thread replaces f and b in a loop by rename() over
 * them (each replacement evicts the old link's inode); the walkers stat()
 * both. Every state of DIR has f and b name a regular file (t0 or
 * d/e/t1); a directory, a missing entry or any other object is a wrong
 * result. Prints each kind of wrong result once, the time of the first,
 * and at the end the counts. Exit 0 when none was seen, 1 when one was,
 * 2 on bad usage, 3 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_ulong calls, wrong_dir, wrong_other, enoent;
static double t0, first_wrong = -1;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static ino_t ino_t0, ino_t1;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *link, const char *what, const struct stat *st)
{
	static int shown_dir, shown_other;
	int *shown = S_ISDIR(st->st_mode) ? &shown_dir : &shown_other;

	pthread_mutex_lock(&print_lock);
	if (first_wrong < 0)
		first_wrong = now() - t0;
	if (!*shown) {
		*shown = 1;
		printf("%.3f s: stat(\"%s\") %s (ino %lu, mode %o)\n", now() - t0,
		       link, what, (unsigned long)st->st_ino, st->st_mode);
		fflush(stdout);
	}
	pthread_mutex_unlock(&print_lock);
}

static void *walker(void *arg)
{
	static const char *const links[] = { "f", "b" };
	struct stat st;
	int i;

	(void)arg;
	while (!stop) {
		for (i = 0; i < 2; i++) {
			atomic_fetch_add(&calls, 1);
			if (stat(links[i], &st)) {
				/* a rename over a link never leaves it absent */
				atomic_fetch_add(&enoent, 1);
				continue;
			}
			if (S_ISREG(st.st_mode) &&
			    (st.st_ino == ino_t0 || st.st_ino == ino_t1))
				continue;
			if (S_ISDIR(st.st_mode)) {
				atomic_fetch_add(&wrong_dir, 1);
				report(links[i], "gave a directory", &st);
			} else {
				atomic_fetch_add(&wrong_other, 1);
				report(links[i], "gave another object", &st);
			}
		}
	}
	return NULL;
}

/* the body of link @name for round @r: short for f, 202 bytes for b */
static const char *body(char kind, unsigned long r)
{
	static char buf[256];
	const char *target = r & 1 ? "d/e/t1" : "t0";
	size_t i = 0, n = strlen(target);

	if (kind == 'f')
		return target;
	while (i + n + 2 <= 202) {
		memcpy(buf + i, "./", 2);
		i += 2;
	}
	strcpy(buf + i, target);
	return buf;
}

static int mkfile(const char *p, ino_t *ino)
{
	struct stat st;
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || fstat(fd, &st))
		return -1;
	*ino = st.st_ino;
	return close(fd);
}

int main(int argc, char **argv)
{
	long secs = 60, nw = 4, i;
	pthread_t th[64];
	unsigned long r;
	char *end;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s DIR [SECONDS [WALKERS]]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		secs = strtol(argv[2], &end, 10);
		if (*end || secs < 1) {
			fprintf(stderr, "SECONDS: a positive number\n");
			return 2;
		}
	}
	if (argc > 3) {
		nw = strtol(argv[3], &end, 10);
		if (*end || nw < 1 || nw > 64) {
			fprintf(stderr, "WALKERS: 1..64\n");
			return 2;
		}
	}
	if (chdir(argv[1]) || mkfile("t0", &ino_t0) ||
	    (mkdir("d", 0755) && errno != EEXIST) ||
	    (mkdir("d/e", 0755) && errno != EEXIST) || mkfile("d/e/t1", &ino_t1)) {
		perror("setup");
		return 3;
	}
	unlink("f");
	unlink("b");
	if (symlink(body('f', 0), "f") || symlink(body('b', 0), "b")) {
		perror("symlink");
		return 3;
	}
	t0 = now();
	for (i = 0; i < nw; i++)
		pthread_create(&th[i], NULL, walker, NULL);
	for (r = 1; now() - t0 < secs; r++) {
		/* each rename evicts the replaced link's inode */
		if (symlink(body('f', r), "f.n") || rename("f.n", "f") ||
		    symlink(body('b', r), "b.n") || rename("b.n", "b")) {
			perror("replace");
			unlink("f.n");
			unlink("b.n");
		}
	}
	stop = 1;
	for (i = 0; i < nw; i++)
		pthread_join(th[i], NULL);
	printf("%lu replacements, %lu stat() calls in %ld s: %lu gave a directory, "
	       "%lu another object, %lu ENOENT\n",
	       2 * (r - 1), (unsigned long)calls, secs, (unsigned long)wrong_dir,
	       (unsigned long)wrong_other, (unsigned long)enoent);
	if (first_wrong >= 0)
		printf("first wrong result after %.3f s\n", first_wrong);
	return wrong_dir || wrong_other || enoent ? 1 : 0;
}
