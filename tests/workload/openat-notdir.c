// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/70-soak.t (issue 22, item 10): a loop of good opens of FILE
 * (its dentry found in the dcache), each followed by a prune of every unused dentry (drop_caches) and an
 * openat(file_fd, "x"), which fails with ENOTDIR in path_init() while
 * LOOKUP_RCU is set, at the same nameidata address as the good open's.
 * A dcrace.ko that kept the good open's step (a path_openat() return it
 * did not probe) would judge the pruned, freed dentry there.
 *
 * Usage: openat-notdir FILE LOOPS
 * Prints "OPENAT-NOTDIR loops=N good=N enotdir=N"; exit 0 when every
 * good open succeeded and every openat(file_fd, "x") failed with ENOTDIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int drop, filefd, fd, i, j, loops, good = 0, enotdir = 0;

	if (argc != 3 || (loops = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: openat-notdir FILE LOOPS\n");
		return 2;
	}
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
		fd = openat(AT_FDCWD, argv[1], O_RDONLY);
		if (fd >= 0)
			close(fd);
		fd = openat(AT_FDCWD, argv[1], O_RDONLY);
		if (fd >= 0) {
			good++;
			close(fd);
		}
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
