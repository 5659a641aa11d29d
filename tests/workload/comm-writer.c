// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/85-line612.t, run in the guest: rewrite dcrace.ko's injection
 * comm filter (debugfs inject/comm) in a tight loop for SECONDS, so that
 * the rcu_lookup probe's reader of the filter meets a writer often. On
 * PREEMPT_RT a reader that could sleep there shows as "scheduling while
 * atomic". Prints "comm writes: N".
 *
 * Build (static, for the initramfs-less copy): gcc -O2 -static -o cw
 * tests/workload/comm-writer.c
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *file = "/sys/kernel/debug/dcrace/inject/comm";
	double secs = argc > 1 ? atof(argv[1]) : 10, end = now() + secs;
	const char *comm = argc > 2 ? argv[2] : "dcr-walk";
	char buf[32];
	long n = 0;
	int fd = open(file, O_WRONLY), len, i;

	if (fd < 0) {
		perror(file);
		return 1;
	}
	len = snprintf(buf, sizeof(buf), "%s\n", comm);
	do {
		for (i = 0; i < 100; i++, n++) {
			if (pwrite(fd, buf, len, 0) != len) {
				perror("write");
				return 1;
			}
		}
	} while (now() < end);
	printf("comm writes: %ld\n", n);
	return 0;
}
