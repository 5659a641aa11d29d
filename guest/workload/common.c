// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: clock, sleeping, PRNG, start gate, allocation. */
#include "workload.h"

atomic_int stop_flag;
_Atomic uint64_t syscalls_total;
double start_time;
size_t nbins;

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_ready;
static int gate_state;		/* 0 wait, 1 go, 2 abort */

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double since_start(void)
{
	return mono_now() - start_time;
}

/* SIGTERM, SIGINT: end the run early; the result is still printed. */
void on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, 1);
}

void sleep_until(double when)
{
	struct timespec ts;
	int r;

	ts.tv_sec = (time_t)when;
	ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	if (ts.tv_nsec < 0)
		ts.tv_nsec = 0;
	do {
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (r == EINTR);
}

/* Sleep for ms milliseconds, returning early once the run is stopped. */
void sleep_ms_stoppable(long ms)
{
	double end = mono_now() + (double)ms / 1000.0;

	while (!stopped()) {
		double now = mono_now();

		if (now >= end)
			break;
		sleep_until(end - now > 0.05 ? now + 0.05 : end);
	}
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rng_init(uint64_t seed, uint64_t idx)
{
	uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (idx + 1));
	uint64_t s = splitmix64(&x);

	return s ? s : 0x2545f4914f6cdd1dULL;
}

/* xorshift64* */
uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)((rng_next(s) >> 32) % n);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A thread's start: its name, then the gate; false: the run is off. */
bool thread_start(const char *comm)
{
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	return gate_wait();
}

bool gate_wait(void)
{
	int st;

	pthread_mutex_lock(&gate_lock);
	gate_ready++;
	pthread_cond_broadcast(&gate_cond);
	while (gate_state == 0)
		pthread_cond_wait(&gate_cond, &gate_lock);
	st = gate_state;
	pthread_mutex_unlock(&gate_lock);
	return st == 1;
}

void gate_open(int state, int nready)
{
	pthread_mutex_lock(&gate_lock);
	while (state == 1 && gate_ready < nready)
		pthread_cond_wait(&gate_cond, &gate_lock);
	if (state == 1)
		start_time = mono_now();
	gate_state = state;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

void *alloc_aligned(size_t size)
{
	void *p;

	size = (size + 63) & ~(size_t)63;
	if (posix_memalign(&p, 64, size) != 0) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}


/* The symbolic names the result uses (dcrace.ko's: E<number> otherwise). */
static const char *const errno_names[ERRNO_SLOTS] = {
	[EPERM] = "EPERM", [ENOENT] = "ENOENT", [EINTR] = "EINTR",
	[EIO] = "EIO", [ENXIO] = "ENXIO", [EBADF] = "EBADF",
	[ECHILD] = "ECHILD", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES", [EFAULT] = "EFAULT", [EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST", [EXDEV] = "EXDEV", [ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR", [EISDIR] = "EISDIR", [EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE", [EMFILE] = "EMFILE", [ENOSPC] = "ENOSPC",
	[EROFS] = "EROFS", [EMLINK] = "EMLINK",
	[ENAMETOOLONG] = "ENAMETOOLONG", [ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP", [EOVERFLOW] = "EOVERFLOW", [ESTALE] = "ESTALE",
};

/* ERR's name: "0" for success, ENOENT, ..., or E<number>. */
const char *errno_name(int err, char *buf, size_t size)
{
	if (err == 0)
		return "0";
	if (err > 0 && err < ERRNO_SLOTS && errno_names[err])
		return errno_names[err];
	snprintf(buf, size, "E%d", err);
	return buf;
}
