// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace-workload - provoke the RCU path-walk / dentry-pruning race.
 *
 * Walker threads look up files that are known to exist on a scratch
 * filesystem while pruner threads make the kernel prune dentries.  Every
 * ENOENT on such a file is a user-visible "false ENOENT" (the 2011 RCU
 * path-walk bug found by Hugh Dickins).  The run is deterministic from
 * --seed: every thread has its own xorshift64* generator seeded from the
 * seed and the thread index.
 *
 * Exactly one line goes to stdout at the end:
 *	DCRACE-RESULT {json}
 *
 * Exit status: 0 run completed (whether or not a race was seen), 1 own
 * error (setup, drop_caches unusable, thread creation), 2 usage error.
 *
 * Build: gcc -O2 -static -pthread -Wall -Wextra -Werror \
 *	-o dcrace-workload guest/workload.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PROG		"dcrace-workload"
#define RESULT_PREFIX	"DCRACE-RESULT "
#define DROP_CACHES	"/proc/sys/vm/drop_caches"
#define WALK_COMM	"dcr-walk"
#define PRUNE_COMM	"dcr-prune"
#define CACHE_PRESSURE	"/proc/sys/vm/vfs_cache_pressure"
/*
 * The pressure pruner's vfs_cache_pressure: a small tree in a small guest
 * stands for Hugh's kernel tree in a machine short of memory, so the
 * dcache shrinker is made to take more of the dcache per reclaim pass.
 */
#define CP_DEFAULT	10000
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define TOUCH_STEP	4096UL
#define MAX_THREADS	64
#define MAX_DURATION	86400.0
#define ERR_TEXT_LEN	(PATH_MAX + 64)

enum wl_mode { MODE_STAT, MODE_OPEN, MODE_CP };
enum wl_pruner { PRUNER_DROP, PRUNER_PRESSURE, PRUNER_NONE };

static const char *const mode_names[] = { "stat", "open", "cp" };
static const char *const pruner_names[] = {
	"drop_caches", "pressure", "none"
};

struct config {
	char dir[PATH_MAX / 2];	/* no trailing '/'; "" means "/" */
	const char *dir_arg;
	enum wl_mode mode;
	enum wl_pruner pruner;
	bool pruner_set;
	long threads;
	long pruners;
	long prune_interval_ms;
	long pressure_pct;
	long stagger_ms;
	double duration;
	uint64_t seed;
	long dirs;		/* 0: the mode's default */
	long files;
	long cache_pressure;	/* vm.vfs_cache_pressure; -1: leave it */
	long max_paths;
	bool setup_only;
	bool no_setup;
	bool quiet;
	bool stop_first;
	long nice;
};

static struct config cfg = {
	.dir_arg = "/mnt",
	.mode = MODE_STAT,
	.pruner = PRUNER_DROP,
	.threads = 2,
	.pruners = 1,
	.prune_interval_ms = 0,
	.pressure_pct = 90,
	.stagger_ms = 200,
	.duration = 10.0,
	.seed = 1,
	.cache_pressure = -1,
	.max_paths = 20,
};

struct path_rec {
	char *path;
	double t;
};

/* One per walker/copier; only its own thread writes it until joined. */
struct worker {
	_Atomic uint64_t pub_syscalls;	/* published for the progress line */
	_Atomic uint64_t pub_false;
	pthread_t tid;
	int idx;
	uint64_t rng;
	uint64_t syscalls;
	uint64_t false_enoent;
	uint64_t other_errors;
	uint64_t copies;
	uint64_t dirs_made;	/* by the current copy */
	double first_false_t;
	double first_err_t;
	char *first_err;
	uint64_t *hist;
	struct path_rec *paths;
	size_t npaths;
};

struct pruner {
	_Atomic uint64_t pub_prunes;
	pthread_t tid;
	int idx;
	uint64_t prunes;
	uint64_t errors;
	char first_err[128];
};

static atomic_int stop_flag;
static double start_time;
static size_t nbins;

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_ready;
static int gate_state;		/* 0 wait, 1 go, 2 abort */

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double since_start(void)
{
	return mono_now() - start_time;
}

static bool stopped(void)
{
	return atomic_load_explicit(&stop_flag, memory_order_relaxed) != 0;
}

/* SIGTERM, SIGINT: end the run early; the result is still printed. */
static void on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, 1);
}

static void sleep_until(double when)
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
static void sleep_ms_stoppable(long ms)
{
	double end = mono_now() + (double)ms / 1000.0;

	while (!stopped()) {
		double now = mono_now();

		if (now >= end)
			break;
		sleep_until(end - now > 0.05 ? now + 0.05 : end);
	}
}

static void prune_pause(void)
{
	if (cfg.prune_interval_ms > 0)
		sleep_ms_stoppable(cfg.prune_interval_ms);
	else
		sched_yield();
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rng_init(uint64_t seed, uint64_t idx)
{
	uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (idx + 1));
	uint64_t s = splitmix64(&x);

	return s ? s : 0x2545f4914f6cdd1dULL;
}

/* xorshift64* */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)((rng_next(s) >> 32) % n);
}

static int write_all(int fd, const void *buf, size_t len)
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

static void json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* ------------------------------------------------------------------ */
/* Option parsing                                                      */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options]\n"
"  --dir DIR                scratch tree location (default /mnt)\n"
"  --mode stat|open|cp      walker operation (default stat)\n"
"  --threads N              walker/copier threads, 1..64 (default 2)\n"
"  --pruner drop_caches|pressure|none\n"
"                           (default drop_caches; pressure for cp)\n"
"  --pruners N              pruner threads, 1..64 (default 1)\n"
"  --prune-interval-ms N    pause between prunes (default 0 = yield)\n"
"  --pressure-pct N         percent of MemAvailable per round, 1..99\n"
"                           (default 90; split across pruners)\n"
"  --stagger-ms N           cp: start delay per copier (default 200)\n"
"  --duration SEC           run time, >0, fractions allowed (default 10)\n"
"  --seed N                 PRNG seed (default 1)\n"
"  --dirs N                 directories in the tree, 1..1000\n"
"                           (default 8; cp: 32)\n"
"  --files N                files per directory, 1..10000\n"
"                           (default 64; cp: 128)\n"
"  --cache-pressure N       set vm.vfs_cache_pressure to N, 1..100000, for\n"
"                           the run (restored after; default: the pressure\n"
"                           pruner sets " STR(CP_DEFAULT) ", others leave it)\n"
"  --max-paths N            false-ENOENT paths listed (default 20)\n"
"  --setup-only             create the tree, sync, print result, exit\n"
"  --no-setup               use the existing tree (must exist)\n"
"  --quiet                  no progress lines on stderr\n"
"  --nice N                 run at nice N, 0..19 (default 0): background\n"
"                           load that yields to a foreground job\n"
"  --stop-at-first          end the run at the first false ENOENT\n"
"                           (for time-to-first measurements)\n"
"  --help                   this text\n"
"Prints one line: " RESULT_PREFIX "{json}, also when SIGTERM or SIGINT\n"
"ends the run early.\n"
"Exit: 0 run completed, 1 own error, 2 usage error.\n");
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(2);
}

static long parse_long(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	if (*s == '\0' || *s == ' ' || *s == '\t' || *s == '+')
		usage_error("invalid value for --%s: '%s'", opt, s);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		usage_error("invalid value for --%s: '%s'", opt, s);
	if (v < min || v > max) {
		usage_error("--%s %s out of range %ld..%ld", opt, s, min, max);
	}
	return v;
}

static uint64_t parse_u64(const char *opt, const char *s)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		usage_error("invalid value for --%s: '%s'", opt, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		usage_error("invalid value for --%s: '%s'", opt, s);
	return (uint64_t)v;
}

static double parse_duration(const char *opt, const char *s)
{
	char *end;
	double v;

	if (*s == '\0' || *s == ' ' || *s == '\t')
		usage_error("invalid value for --%s: '%s'", opt, s);
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
		usage_error("invalid value for --%s: '%s'", opt, s);
	if (v <= 0.0 || v > MAX_DURATION)
		usage_error("--%s %s must be > 0 and <= 86400", opt, s);
	return v;
}

enum {
	OPT_DIR = 256, OPT_MODE, OPT_THREADS, OPT_PRUNER, OPT_PRUNERS,
	OPT_INTERVAL, OPT_PCT, OPT_STAGGER, OPT_DURATION, OPT_SEED,
	OPT_DIRS, OPT_FILES, OPT_CACHE_PRESSURE, OPT_MAXPATHS, OPT_SETUP_ONLY, OPT_NO_SETUP,
	OPT_QUIET, OPT_STOP_FIRST, OPT_NICE, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "dir",		required_argument, NULL, OPT_DIR },
	{ "mode",		required_argument, NULL, OPT_MODE },
	{ "threads",		required_argument, NULL, OPT_THREADS },
	{ "pruner",		required_argument, NULL, OPT_PRUNER },
	{ "pruners",		required_argument, NULL, OPT_PRUNERS },
	{ "prune-interval-ms",	required_argument, NULL, OPT_INTERVAL },
	{ "pressure-pct",	required_argument, NULL, OPT_PCT },
	{ "stagger-ms",		required_argument, NULL, OPT_STAGGER },
	{ "duration",		required_argument, NULL, OPT_DURATION },
	{ "seed",		required_argument, NULL, OPT_SEED },
	{ "dirs",		required_argument, NULL, OPT_DIRS },
	{ "files",		required_argument, NULL, OPT_FILES },
	{ "cache-pressure",	required_argument, NULL, OPT_CACHE_PRESSURE },
	{ "max-paths",		required_argument, NULL, OPT_MAXPATHS },
	{ "setup-only",		no_argument,	   NULL, OPT_SETUP_ONLY },
	{ "no-setup",		no_argument,	   NULL, OPT_NO_SETUP },
	{ "quiet",		no_argument,	   NULL, OPT_QUIET },
	{ "stop-at-first",	no_argument,	   NULL, OPT_STOP_FIRST },
	{ "nice",		required_argument, NULL, OPT_NICE },
	{ "help",		no_argument,	   NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int lookup_name(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static void parse_args(int argc, char **argv)
{
	size_t len;
	int c, v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DIR:
			cfg.dir_arg = optarg;
			break;
		case OPT_MODE:
			v = lookup_name(mode_names, 3, optarg);
			if (v < 0)
				usage_error("invalid --mode '%s' (stat|open|cp)",
					    optarg);
			cfg.mode = (enum wl_mode)v;
			break;
		case OPT_THREADS:
			cfg.threads = parse_long("threads", optarg, 1,
						 MAX_THREADS);
			break;
		case OPT_PRUNER:
			v = lookup_name(pruner_names, 3, optarg);
			if (v < 0)
				usage_error("invalid --pruner '%s' (drop_caches|pressure|none)",
					    optarg);
			cfg.pruner = (enum wl_pruner)v;
			cfg.pruner_set = true;
			break;
		case OPT_PRUNERS:
			cfg.pruners = parse_long("pruners", optarg, 1,
						 MAX_THREADS);
			break;
		case OPT_INTERVAL:
			cfg.prune_interval_ms = parse_long("prune-interval-ms",
							   optarg, 0, 3600000);
			break;
		case OPT_PCT:
			cfg.pressure_pct = parse_long("pressure-pct", optarg,
						      1, 99);
			break;
		case OPT_STAGGER:
			cfg.stagger_ms = parse_long("stagger-ms", optarg, 0,
						    3600000);
			break;
		case OPT_DURATION:
			cfg.duration = parse_duration("duration", optarg);
			break;
		case OPT_SEED:
			cfg.seed = parse_u64("seed", optarg);
			break;
		case OPT_DIRS:
			cfg.dirs = parse_long("dirs", optarg, 1, 1000);
			break;
		case OPT_FILES:
			cfg.files = parse_long("files", optarg, 1, 10000);
			break;
		case OPT_CACHE_PRESSURE:
			cfg.cache_pressure = parse_long("cache-pressure",
							optarg, 1, 100000);
			break;
		case OPT_MAXPATHS:
			cfg.max_paths = parse_long("max-paths", optarg, 0,
						   100000);
			break;
		case OPT_SETUP_ONLY:
			cfg.setup_only = true;
			break;
		case OPT_NO_SETUP:
			cfg.no_setup = true;
			break;
		case OPT_QUIET:
			cfg.quiet = true;
			break;
		case OPT_NICE:
			cfg.nice = parse_long("nice", optarg, 0, 19);
			break;
		case OPT_STOP_FIRST:
			cfg.stop_first = true;
			break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg.setup_only && cfg.no_setup)
		usage_error("--setup-only and --no-setup exclude each other");
	if (!cfg.pruner_set && cfg.mode == MODE_CP)
		cfg.pruner = PRUNER_PRESSURE;
	if (!cfg.dirs)
		cfg.dirs = cfg.mode == MODE_CP ? 32 : 8;
	if (!cfg.files)
		cfg.files = cfg.mode == MODE_CP ? 128 : 64;
	if (cfg.cache_pressure < 0 && cfg.pruner == PRUNER_PRESSURE)
		cfg.cache_pressure = CP_DEFAULT;

	len = strlen(cfg.dir_arg);
	if (len == 0 || len >= sizeof(cfg.dir))
		usage_error("invalid --dir '%s' (empty or too long)",
			    cfg.dir_arg);
	memcpy(cfg.dir, cfg.dir_arg, len + 1);
	while (len > 0 && cfg.dir[len - 1] == '/')
		cfg.dir[--len] = '\0';

	/* ceil(duration) + 1 bins, without libm. */
	nbins = (size_t)cfg.duration;
	if ((double)nbins < cfg.duration)
		nbins++;
	nbins++;
}

/* ------------------------------------------------------------------ */
/* Tree setup                                                          */
/* ------------------------------------------------------------------ */

static void __attribute__((noreturn)) setup_fail(const char *what,
						 const char *path, int err)
{
	fprintf(stderr, PROG ": setup: %s %s: %s\n", what, path,
		strerror(err));
	exit(1);
}

static void fmt_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fmt_path(char *buf, size_t size, const char *fmt, ...)
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
static void make_tree_dir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0) {
		if (errno != EEXIST)
			setup_fail("mkdir", path, errno);
		check_dir(path);
	}
	if (chmod(path, mode) < 0)
		setup_fail("chmod", path, errno);
}

static void make_file(const char *path, const void *data, size_t len,
		      mode_t mode)
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

static void setup_walk_tree(void)
{
	char path[PATH_MAX], text[64];
	long d, f;
	int n;

	for (d = 0; d < cfg.dirs; d++) {
		fmt_path(path, sizeof(path), "%s/d%02ld", cfg.dir, d);
		make_tree_dir(path, 0755);
		for (f = 0; f < cfg.files; f++) {
			walk_file_path(path, sizeof(path), d, f);
			n = snprintf(text, sizeof(text),
				     "dcrace d%02ld/f%03ld\n", d, f);
			make_file(path, text, (size_t)n, 0644);
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
			make_file(path, data, size, mode);
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
		}
	}
}

/* ------------------------------------------------------------------ */
/* Start gate                                                          */
/* ------------------------------------------------------------------ */

static bool gate_wait(void)
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

static void gate_open(int state, int nready)
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

/* ------------------------------------------------------------------ */
/* Walkers                                                             */
/* ------------------------------------------------------------------ */

static void note_false(struct worker *w, const char *path)
{
	double t = since_start();
	size_t bin = t < 0 ? 0 : (size_t)t;

	if (bin >= nbins)
		bin = nbins - 1;
	w->hist[bin]++;
	if (w->false_enoent++ == 0)
		w->first_false_t = t;
	if (cfg.stop_first)
		atomic_store(&stop_flag, 1);
	atomic_store_explicit(&w->pub_false, w->false_enoent,
			      memory_order_relaxed);
	if (w->npaths < (size_t)cfg.max_paths) {
		char *copy = strdup(path);

		if (copy) {
			w->paths[w->npaths].path = copy;
			w->paths[w->npaths].t = t;
			w->npaths++;
		}
	}
}

static void note_error(struct worker *w, const char *op, const char *path,
		       int err)
{
	if (w->other_errors++ == 0) {
		w->first_err_t = since_start();
		w->first_err = malloc(ERR_TEXT_LEN);
		if (w->first_err)
			snprintf(w->first_err, ERR_TEXT_LEN, "%s %s: %s",
				 op, path, strerror(err));
	}
}

/*
 * A failed syscall on a path the workload guarantees: a source entry, or a
 * destination whose parent directory the copier made and alone removes.
 * ENOENT there is the race; anything else is the workload's own error.
 */
static void src_error(struct worker *w, const char *op, const char *path,
		      int err)
{
	if (err == ENOENT)
		note_false(w, path);
	else
		note_error(w, op, path, err);
}

/*
 * Like src_error(), for the copier's removals, where giving up would leave
 * a tree behind and turn one race into a cascade of later errors: says
 * whether to try again (a false ENOENT is transient; at most 3 tries).
 */
static bool again(struct worker *w, const char *op, const char *path,
		  int err, int *tries)
{
	src_error(w, op, path, err);
	return err == ENOENT && ++*tries < 3;
}

static void count_lookup(struct worker *w)
{
	w->syscalls++;
	atomic_store_explicit(&w->pub_syscalls, w->syscalls,
			      memory_order_relaxed);
}

static void walk_loop(struct worker *w)
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

/* ------------------------------------------------------------------ */
/* Copiers (cp -a of DIR/src into DIR/cpK, then rm -rf DIR/cpK)        */
/* ------------------------------------------------------------------ */

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

/* MUST_EXIST: PATH was made by this copier (else ENOENT is fine). */
static void remove_tree(struct worker *w, const char *path, bool must_exist)
{
	char child[PATH_MAX];
	struct stat st;
	int tries = 0;
	DIR *dir;

	for (;;) {
		int err;

		count_lookup(w);
		if (lstat(path, &st) == 0)
			break;
		err = errno;
		if (err == ENOENT && !must_exist)
			return;
		if (!again(w, "lstat", path, err, &tries))
			return;
	}
	tries = 0;
	if (!S_ISDIR(st.st_mode)) {
		count_lookup(w);
		while (unlink(path) < 0 && again(w, "unlink", path, errno, &tries))
			count_lookup(w);
		return;
	}
	for (;;) {
		count_lookup(w);
		dir = opendir(path);
		if (dir)
			break;
		if (!again(w, "opendir", path, errno, &tries))
			return;
	}
	for (;;) {
		const struct dirent *de;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno)
				note_error(w, "readdir", path, errno);
			break;
		}
		if (is_dot(de->d_name))
			continue;
		if (join_path(w, child, path, de->d_name))
			remove_tree(w, child, true);
	}
	closedir(dir);
	tries = 0;
	count_lookup(w);
	while (rmdir(path) < 0 && again(w, "rmdir", path, errno, &tries))
		count_lookup(w);
}

static void copy_file(struct worker *w, const char *src, const char *dst,
		      const struct stat *st)
{
	char buf[16384];
	int in, out;

	count_lookup(w);
	in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0) {
		src_error(w, "open", src, errno);
		return;
	}
	count_lookup(w);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		src_error(w, "open", dst, errno);
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

static void copy_link(struct worker *w, const char *src, const char *dst)
{
	char target[PATH_MAX];
	ssize_t n;

	count_lookup(w);
	n = readlink(src, target, sizeof(target) - 1);
	if (n < 0) {
		src_error(w, "readlink", src, errno);
		return;
	}
	target[n] = '\0';
	count_lookup(w);
	if (symlink(target, dst) < 0)
		src_error(w, "symlink", dst, errno);
}

static bool copy_entry(struct worker *w, const char *src, const char *dst);

/* Returns false when the copy was cut short by the end of the run. */
static bool copy_dir(struct worker *w, const char *src, const char *dst,
		     const struct stat *st)
{
	bool ok = true;
	DIR *dir;

	count_lookup(w);
	if (mkdir(dst, 0700) < 0) {
		src_error(w, "mkdir", dst, errno);
		return true;
	}
	w->dirs_made++;
	count_lookup(w);
	dir = opendir(src);
	if (!dir) {
		src_error(w, "opendir", src, errno);
	} else {
		for (;;) {
			char s[PATH_MAX], t[PATH_MAX];
			const struct dirent *de;

			errno = 0;
			de = readdir(dir);
			if (!de) {
				if (errno)
					note_error(w, "readdir", src, errno);
				break;
			}
			if (is_dot(de->d_name))
				continue;
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
	if (chmod(dst, st->st_mode & 07777) < 0)
		src_error(w, "chmod", dst, errno);
	return ok;
}

static bool copy_entry(struct worker *w, const char *src, const char *dst)
{
	struct stat st;

	if (stopped())
		return false;
	count_lookup(w);
	if (lstat(src, &st) < 0) {
		src_error(w, "lstat", src, errno);
		return true;
	}
	if (S_ISDIR(st.st_mode))
		return copy_dir(w, src, dst, &st);
	if (S_ISREG(st.st_mode))
		copy_file(w, src, dst, &st);
	else if (S_ISLNK(st.st_mode))
		copy_link(w, src, dst);
	return true;
}

static void copy_loop(struct worker *w)
{
	char src[PATH_MAX], dst[PATH_MAX];

	snprintf(src, sizeof(src), "%s/src", cfg.dir);
	snprintf(dst, sizeof(dst), "%s/cp%d", cfg.dir, w->idx);
	sleep_ms_stoppable(cfg.stagger_ms * w->idx);
	remove_tree(w, dst, false);	/* leftovers of an earlier run */
	while (!stopped()) {
		w->dirs_made = 0;
		if (copy_entry(w, src, dst))
			w->copies++;
		/* No directory made: the top mkdir failed, nothing to remove. */
		remove_tree(w, dst, w->dirs_made > 0);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, WALK_COMM, 0, 0, 0);
	if (!gate_wait())
		return NULL;
	if (cfg.mode == MODE_CP)
		copy_loop(w);
	else
		walk_loop(w);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Pruners                                                             */
/* ------------------------------------------------------------------ */

static void prune_error(struct pruner *p, const char *what, int err)
{
	if (p->errors++ == 0)
		snprintf(p->first_err, sizeof(p->first_err), "%s: %s", what,
			 strerror(err));
}

static void prune_done(struct pruner *p)
{
	p->prunes++;
	atomic_store_explicit(&p->pub_prunes, p->prunes,
			      memory_order_relaxed);
}

static void drop_caches_loop(struct pruner *p)
{
	while (!stopped()) {
		int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			prune_error(p, "open " DROP_CACHES, errno);
		} else {
			if (write(fd, "2", 1) == 1)
				prune_done(p);
			else
				prune_error(p, "write " DROP_CACHES, errno);
			close(fd);
		}
		prune_pause();
	}
}

/*
 * Memory the pressure pruner may use, in kB: MemAvailable, or on kernels
 * without it (< 3.14) a conservative estimate.  Never more than MemTotal.
 */
static int mem_available_kb(uint64_t *avail)
{
	static const char *const keys[] = {
		"MemTotal:", "MemFree:", "MemAvailable:", "Active(file):",
		"Inactive(file):", "SReclaimable:",
	};
	uint64_t val[6] = { 0 };
	bool have[6] = { false };
	char buf[8192];
	const char *line;
	size_t len = 0;
	int fd, i;

	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';

	for (line = buf; line && *line; ) {
		for (i = 0; i < 6; i++) {
			size_t kl = strlen(keys[i]);

			if (strncmp(line, keys[i], kl) == 0) {
				val[i] = strtoull(line + kl, NULL, 10);
				have[i] = true;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!have[0] || !have[1]) {
		errno = EINVAL;
		return -1;
	}
	if (have[2])
		*avail = val[2];
	else
		*avail = val[1] + (val[3] + val[4]) / 2 + val[5] / 2;
	if (*avail > val[0])
		*avail = val[0];
	return 0;
}

static void pressure_loop(struct pruner *p)
{
	uint64_t avail_kb, bytes;
	volatile char *mem;
	size_t off, size;
	void *map;

	while (!stopped()) {
		if (mem_available_kb(&avail_kb) < 0) {
			prune_error(p, "read /proc/meminfo", errno);
			sleep_ms_stoppable(100);
			continue;
		}
		/* Split across pruners: all may sample at the same moment. */
		bytes = avail_kb * (uint64_t)cfg.pressure_pct / 100 /
			(uint64_t)cfg.pruners * 1024;
		bytes &= ~(uint64_t)(TOUCH_STEP - 1);
		if (bytes > SIZE_MAX / 2)
			bytes = (SIZE_MAX / 2) & ~(uint64_t)(TOUCH_STEP - 1);
		size = (size_t)bytes;
		if (size < 64 * TOUCH_STEP) {
			sleep_ms_stoppable(10);
			continue;
		}
		map = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED) {
			prune_error(p, "mmap", errno);
			sleep_ms_stoppable(10);
			continue;
		}
		mem = map;
		for (off = 0; off < size; off += TOUCH_STEP) {
			mem[off] = 1;
			if ((off & ((TOUCH_STEP << 12) - 1)) == 0 && stopped())
				break;
		}
		if (munmap(map, size) < 0)
			prune_error(p, "munmap", errno);
		if (off >= size)
			prune_done(p);
		prune_pause();
	}
}

static void *pruner_main(void *arg)
{
	struct pruner *p = arg;

	prctl(PR_SET_NAME, PRUNE_COMM, 0, 0, 0);
	if (!gate_wait())
		return NULL;
	if (cfg.pruner == PRUNER_DROP)
		drop_caches_loop(p);
	else
		pressure_loop(p);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Result                                                              */
/* ------------------------------------------------------------------ */

struct result {
	double elapsed;
	uint64_t syscalls;
	uint64_t false_enoent;
	uint64_t other_errors;
	uint64_t copies;
	uint64_t prunes;
	uint64_t prune_errors;
	double first_false_t;	/* < 0: none */
	const char *first_err;
	uint64_t *hist;
	struct path_rec *paths;
	size_t npaths;
};

static int cmp_path_rec(const void *a, const void *b)
{
	const struct path_rec *x = a, *y = b;

	if (x->t < y->t)
		return -1;
	return x->t > y->t;
}

static void print_result(const struct result *r, long npruners)
{
	FILE *f = stdout;
	uint64_t listed = 0;
	size_t i;

	printf(RESULT_PREFIX "{\"version\":1,\"mode\":\"%s\",\"pruner\":\"%s\",",
	       mode_names[cfg.mode], pruner_names[cfg.pruner]);
	fputs("\"dir\":", f);
	json_string(f, cfg.dir_arg);
	printf(",\"seed\":%" PRIu64 ",\"threads\":%ld,\"pruners\":%ld,"
	       "\"dirs\":%ld,\"files\":%ld,"
	       "\"cache_pressure\":%ld,"	/* -1: left as it was */
	       "\"duration_s\":%.3f,\"elapsed_s\":%.3f,\"syscalls\":%" PRIu64
	       ",\"false_enoent\":%" PRIu64 ",\"other_errors\":%" PRIu64
	       ",\"first_error\":",
	       cfg.seed, cfg.threads, npruners, cfg.dirs, cfg.files,
	       cfg.cache_pressure, cfg.duration, r->elapsed, r->syscalls,
	       r->false_enoent, r->other_errors);
	if (r->first_err)
		json_string(f, r->first_err);
	else
		fputs("null", f);
	fputs(",\"first_false_enoent_s\":", f);
	if (r->first_false_t >= 0)
		printf("%.3f", r->first_false_t);
	else
		fputs("null", f);
	printf(",\"prunes\":%" PRIu64 ",\"prune_errors\":%" PRIu64
	       ",\"per_second\":[", r->prunes, r->prune_errors);
	for (i = 0; i < nbins; i++)
		printf("%s%" PRIu64, i ? "," : "", r->hist ? r->hist[i] : 0);
	fputs("],\"paths\":[", f);
	for (i = 0; i < r->npaths && i < (size_t)cfg.max_paths; i++) {
		fputs(i ? ",{\"path\":" : "{\"path\":", f);
		json_string(f, r->paths[i].path);
		printf(",\"t\":%.3f}", r->paths[i].t);
		listed++;
	}
	printf("],\"paths_dropped\":%" PRIu64 ",\"copies\":%" PRIu64 "}\n",
	       r->false_enoent - listed, r->copies);
	fflush(f);
}

static void progress(struct worker **workers, struct pruner **pruners,
		     long npruners)
{
	uint64_t sys = 0, fe = 0, pr = 0;
	long i;

	for (i = 0; i < cfg.threads; i++) {
		sys += atomic_load_explicit(&workers[i]->pub_syscalls,
					    memory_order_relaxed);
		fe += atomic_load_explicit(&workers[i]->pub_false,
					   memory_order_relaxed);
	}
	for (i = 0; i < npruners; i++)
		pr += atomic_load_explicit(&pruners[i]->pub_prunes,
					   memory_order_relaxed);
	fprintf(stderr, PROG ": %.1fs syscalls=%" PRIu64 " false_enoent=%"
		PRIu64 " prunes=%" PRIu64 "\n", since_start(), sys, fe, pr);
}

static void *alloc_aligned(size_t size)
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

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

/* Reads a decimal sysctl; -1 (errno set) on failure. */
static long sysctl_read(const char *path)
{
	char buf[32];
	ssize_t n;
	long v;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = n < 0 ? errno : EINVAL;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, NULL, 10);
	if (errno || v < 0) {
		errno = EINVAL;
		return -1;
	}
	return v;
}

static int sysctl_write(const char *path, long v)
{
	char buf[32];
	int fd, n, saved;

	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, buf, (size_t)n) != n) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	long old_cache_pressure = -1;
	struct worker **workers;
	struct pruner **pruners;
	struct result res;
	long npruners, i, created_w = 0, created_p = 0;
	double t0, end, next, first_err_t = 0;
	size_t total_paths = 0;
	int err, status = 0;

	parse_args(argc, argv);
	/* Before any thread: they inherit it. */
	if (cfg.nice && setpriority(PRIO_PROCESS, 0, (int)cfg.nice) < 0) {
		fprintf(stderr, PROG ": setpriority(%ld): %s\n", cfg.nice,
			strerror(errno));
		return 1;
	}
	umask(0);
	memset(&res, 0, sizeof(res));
	res.first_false_t = -1;

	npruners = cfg.pruner == PRUNER_NONE ? 0 : cfg.pruners;
	if (!cfg.setup_only && cfg.pruner == PRUNER_DROP) {
		int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			fprintf(stderr,
				PROG ": cannot open " DROP_CACHES " for writing: %s (try --pruner pressure or none)\n",
				strerror(errno));
			return 1;
		}
		close(fd);
	}

	t0 = mono_now();
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
	if (!cfg.quiet)
		fprintf(stderr, PROG ": %s tree in %s: %.3fs\n",
			cfg.no_setup ? "checked" : "created",
			cfg.dir_arg, mono_now() - t0);
	if (cfg.setup_only) {
		res.elapsed = mono_now() - t0;
		print_result(&res, npruners);
		return 0;
	}
	if (cfg.cache_pressure >= 0) {
		old_cache_pressure = sysctl_read(CACHE_PRESSURE);
		if (old_cache_pressure < 0 ||
		    sysctl_write(CACHE_PRESSURE, cfg.cache_pressure) < 0) {
			fprintf(stderr, PROG ": cannot set " CACHE_PRESSURE
				": %s\n",
				strerror(errno));
			return 1;
		}
	}

	workers = xcalloc((size_t)cfg.threads, sizeof(*workers));
	for (i = 0; i < cfg.threads; i++) {
		struct worker *w = alloc_aligned(sizeof(*w));

		w->idx = (int)i;
		w->rng = rng_init(cfg.seed, (uint64_t)i);
		w->hist = xcalloc(nbins, sizeof(*w->hist));
		w->paths = xcalloc((size_t)cfg.max_paths, sizeof(*w->paths));
		w->first_false_t = -1;
		workers[i] = w;
	}
	pruners = xcalloc((size_t)(npruners ? npruners : 1), sizeof(*pruners));
	for (i = 0; i < npruners; i++) {
		pruners[i] = alloc_aligned(sizeof(*pruners[i]));
		pruners[i]->idx = (int)i;
	}

	for (i = 0; i < cfg.threads; i++) {
		err = pthread_create(&workers[i]->tid, NULL, worker_main,
				     workers[i]);
		if (err)
			goto create_failed;
		created_w++;
	}
	for (i = 0; i < npruners; i++) {
		err = pthread_create(&pruners[i]->tid, NULL, pruner_main,
				     pruners[i]);
		if (err)
			goto create_failed;
		created_p++;
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	gate_open(1, (int)(created_w + created_p));

	end = start_time + cfg.duration;
	next = start_time + 1.0;
	for (;;) {
		double now = mono_now();

		double until = next < end ? next : end;

		if (now >= end || atomic_load(&stop_flag))
			break;
		if (now >= next) {
			if (!cfg.quiet)
				progress(workers, pruners, npruners);
			next += 1.0;
			continue;
		}
		/* --stop-at-first: notice a walker's stop within 10 ms */
		if (cfg.stop_first && until > now + 0.01)
			until = now + 0.01;
		sleep_until(until);
	}
	atomic_store(&stop_flag, 1);
	for (i = 0; i < cfg.threads; i++)
		pthread_join(workers[i]->tid, NULL);
	res.elapsed = since_start();
	for (i = 0; i < npruners; i++)
		pthread_join(pruners[i]->tid, NULL);
	if (old_cache_pressure >= 0 &&
	    sysctl_write(CACHE_PRESSURE, old_cache_pressure) < 0) {
		fprintf(stderr, PROG ": cannot restore " CACHE_PRESSURE
			" to %ld: %s\n", old_cache_pressure, strerror(errno));
		status = 1;
	}

	res.hist = xcalloc(nbins, sizeof(*res.hist));
	for (i = 0; i < cfg.threads; i++) {
		const struct worker *w = workers[i];
		size_t b;

		res.syscalls += w->syscalls;
		res.false_enoent += w->false_enoent;
		res.other_errors += w->other_errors;
		res.copies += w->copies;
		for (b = 0; b < nbins; b++)
			res.hist[b] += w->hist[b];
		if (w->false_enoent &&
		    (res.first_false_t < 0 ||
		     w->first_false_t < res.first_false_t))
			res.first_false_t = w->first_false_t;
		if (w->first_err &&
		    (!res.first_err || w->first_err_t < first_err_t)) {
			res.first_err = w->first_err;
			first_err_t = w->first_err_t;
		}
		total_paths += w->npaths;
	}
	res.paths = xcalloc(total_paths, sizeof(*res.paths));
	for (i = 0; i < cfg.threads; i++) {
		memcpy(res.paths + res.npaths, workers[i]->paths,
		       workers[i]->npaths * sizeof(*res.paths));
		res.npaths += workers[i]->npaths;
	}
	qsort(res.paths, res.npaths, sizeof(*res.paths), cmp_path_rec);

	for (i = 0; i < npruners; i++) {
		res.prunes += pruners[i]->prunes;
		res.prune_errors += pruners[i]->errors;
	}
	for (i = 0; i < npruners; i++) {
		if (pruners[i]->errors) {
			fprintf(stderr, PROG ": pruner %ld: %" PRIu64
				" errors, first: %s\n", i, pruners[i]->errors,
				pruners[i]->first_err);
			break;
		}
	}
	if (!cfg.quiet)
		fprintf(stderr, PROG ": done: %.3fs syscalls=%" PRIu64
			" false_enoent=%" PRIu64 " other_errors=%" PRIu64
			" prunes=%" PRIu64 "\n", res.elapsed, res.syscalls,
			res.false_enoent, res.other_errors, res.prunes);
	print_result(&res, npruners);

	if (npruners && res.prunes == 0 && res.prune_errors) {
		fprintf(stderr, PROG ": the %s pruner never succeeded\n",
			pruner_names[cfg.pruner]);
		status = 1;
	}
	return status;

create_failed:
	fprintf(stderr, PROG ": pthread_create: %s\n", strerror(err));
	gate_open(2, 0);
	for (i = 0; i < created_w; i++)
		pthread_join(workers[i]->tid, NULL);
	for (i = 0; i < created_p; i++)
		pthread_join(pruners[i]->tid, NULL);
	if (old_cache_pressure >= 0)
		sysctl_write(CACHE_PRESSURE, old_cache_pressure);
	return 1;
}
