// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/70-soak.t (issue 22, item 10): a loop of good opens of FILE
 * (its dentry found in the dcache), each followed by a prune of every unused dentry (drop_caches) and an
 * openat(file_fd, "x"), which fails with ENOTDIR in path_init() while
 * LOOKUP_RCU is set, at the same nameidata address as the good open's.
 * A dcrace.ko that kept the good open's step (a path_openat() return it
 * did not probe) would judge the pruned, freed dentry there.
 *
 * With a third argument "negative" the opens are of FILE.neg, which does
 * not exist: the second of each pair finds its negative dentry in RCU
 * mode and fails there (ENOENT), so open()'s step is kept for
 * path_openat()'s return; a dcrace.ko that missed that return (its test
 * knob test_miss_returns=1) holds the negative dentry in its slot when
 * openat(file_fd, "x") ends the next walk in RCU mode.
 *
 * Usage: openat-notdir FILE LOOPS [negative]
 * Prints "OPENAT-NOTDIR loops=N good=N enotdir=N"; exit 0 when every
 * good open succeeded (negative: failed with ENOENT) and every
 * openat(file_fd, "x") failed with ENOTDIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int drop, filefd, fd, i, j, loops, good = 0, enotdir = 0, neg;
	char path[4096];

	if (argc < 3 || argc > 4 || (loops = atoi(argv[2])) <= 0 ||
	    (argc == 4 && strcmp(argv[3], "negative"))) {
		fprintf(stderr, "usage: openat-notdir FILE LOOPS [negative]\n");
		return 2;
	}
	neg = argc == 4;
	snprintf(path, sizeof(path), "%s%s", argv[1], neg ? ".neg" : "");
	fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
	drop = open("/proc/sys/vm/drop_caches", O_WRONLY);
	filefd = open("/dev/null", O_RDONLY);
	if (fd < 0 || drop < 0 || filefd < 0) {
		perror("openat-notdir: setup");
		return 1;
	}
	close(fd);
	/* 4 first: no "drop_caches: 2" line on the console per write */
	if (pwrite(drop, "4", 1, 0) != 1)
		perror("openat-notdir: drop_caches 4");
	for (i = 0; i < loops; i++) {
		/* the first after a prune misses the dcache, the second not */
		fd = openat(AT_FDCWD, path, O_RDONLY);
		if (fd >= 0)
			close(fd);
		fd = openat(AT_FDCWD, path, O_RDONLY);
		if (fd >= 0)
			close(fd);
		if (neg ? fd < 0 && errno == ENOENT : fd >= 0)
			good++;
		/* twice: the first pass only ages a recently used dentry */
		for (j = 0; j < 2; j++)
			if (pwrite(drop, "2", 1, 0) != 1)
				perror("openat-notdir: drop_caches 2");
		/* a grace period or more: the pruned dentry is freed */
		usleep(10000);
		fd = openat(filefd, "x", O_RDONLY);
		if (fd >= 0)
			close(fd);
		else if (errno == ENOTDIR)
			enotdir++;
	}
	printf("OPENAT-NOTDIR loops=%d good=%d enotdir=%d\n", loops, good,
	       enotdir);
	return good == loops && enotdir == loops ? 0 : 1;
}
