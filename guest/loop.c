// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-loop: the cost of one path walk, timed in the guest (bench
 * --icount: under QEMU -icount the guest's clock counts instructions).
 *
 *	dcrace-loop OP PATH CALLS ROUNDS
 *
 * OP is stat (stat(PATH)) or open (open(PATH, O_RDONLY) + close()).
 * After one untimed warm-up round (the dentries cached), each of ROUNDS
 * rounds makes CALLS calls between two CLOCK_MONOTONIC reads and prints
 *
 *	DCRACE-LOOP OP ROUND CALLS NS_PER_CALL
 *
 * Exit 0, 1 when a call fails (errno on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long arg(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 100000000) {
		fprintf(stderr, "dcrace-loop: %s wants 1..100000000, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int one(int open_op, const char *path)
{
	struct stat st;
	int fd;

	if (!open_op)
		return stat(path, &st);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	return close(fd);
}

int main(int argc, char **argv)
{
	long calls, rounds, r, i;
	int open_op;
	double t0;

	if (argc != 5 || (strcmp(argv[1], "stat") && strcmp(argv[1], "open"))) {
		fprintf(stderr, "usage: dcrace-loop stat|open PATH CALLS ROUNDS\n");
		return 2;
	}
	open_op = !strcmp(argv[1], "open");
	calls = arg(argv[3], "CALLS");
	rounds = arg(argv[4], "ROUNDS");
	for (r = 0; r <= rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < calls; i++) {
			if (one(open_op, argv[2])) {
				fprintf(stderr, "dcrace-loop: %s %s: %s\n", argv[1], argv[2],
					strerror(errno));
				return 1;
			}
		}
		/* round 0 warms the dcache up: not printed */
		if (r)
			printf("DCRACE-LOOP %s %ld %ld %.3f\n", argv[1], r, calls,
			       (now_ns() - t0) / calls);
	}
	return 0;
}
