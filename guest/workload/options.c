// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: --help text and option parsing. */
#include "workload.h"

const char *const mode_names[] = { "stat", "open", "cp", "mutate" };
const char *const op_names[] = { "stat", "lstat", "open", "openat" };
const char *const pruner_names[] = {
	"drop_caches", "pressure", "none"
};

struct config cfg = {
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
	.pin_dirs = -1,
	.max_paths = 100000,
	.uid = -1,
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options]\n"
"  --dir DIR                scratch tree location (default /mnt)\n"
"  --mode stat|open|cp|mutate\n"
"                           walker operation (default stat); mutate:\n"
"                           mutators turn DIR/mNN file -> gone -> dir\n"
"                           (with y) -> gone -> file, walkers stat/open\n"
"                           mNN/y and mNN; an errno no state allows is a\n"
"                           false error (docs/design.md)\n"
"  --mutators N             mutate: mutator threads, one component each,\n"
"                           1..64 (default 1)\n"
"  --uid N                  mutate: walkers run as uid and gid N, 0..2^31-1\n"
"                           (each thread alone; mutators stay root) and\n"
"                           also walk locked/y (a 0700 root directory)\n"
"  --rename-locked          mutate: a thread renames locked to locked.r and\n"
"                           back as fast as it can (locked/y may then give\n"
"                           ENOENT); the walkers walk locked/y\n"
"  --threads N              walker/copier threads, 1..64 (default 2)\n"
"  --pruner drop_caches|pressure|none\n"
"                           (default drop_caches, none in mode mutate;\n"
"                           pressure is Hugh's memory shortage: slower,\n"
"                           see docs/design.md)\n"
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
"                           (default 8; cp: 128)\n"
"  --pin-dirs N             stat, open: hold the first N directories open\n"
"                           (O_PATH) for the run, so that they are never\n"
"                           pruned and the walks through them reach the\n"
"                           last component in RCU mode; 0..--dirs\n"
"                           (default: half the directories; cp: 0)\n"
"  --cache-pressure N       set vm.vfs_cache_pressure to N, 1..100000, for\n"
"                           the run (restored after; default: the pressure\n"
"                           pruner sets " STR(CP_DEFAULT) ", others leave it)\n"
"  --max-paths N            false-ENOENT paths listed in \"paths\", each with\n"
"                           t, tid, op and the call's start_ns, end_ns\n"
"                           (CLOCK_MONOTONIC); 0..1000000\n"
"                           (default 100000: all of a 20 s injected run)\n"
"  --max-syscalls N         end the run after N syscalls (all walkers), or\n"
"                           at --duration if sooner; 1..10^12 (default: no\n"
"                           limit): a run bounded by count, not time\n"
"  --setup-only             create the tree, sync, print result, exit\n"
"  --no-setup               use the existing tree (must exist)\n"
"  --quiet                  no progress lines on stderr\n"
"  --nice N                 run at nice N, 0..19 (default 0): background\n"
"                           load that yields to a foreground job\n"
"  --mix OP=W[,OP=W...]     walkers (stat, open, mutate): make the calls OP\n"
"                           in proportion to the weights W, 0..1000;\n"
"                           OP: stat, lstat, open (open O_RDONLY, close),\n"
"                           openat (the same, relative to a DIR fd)\n"
"                           (default stat=100; open=100 in mode open)\n"
"  --stop-at-first          end the run at the first false ENOENT (mode\n"
"                           mutate: the first false error)\n"
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
	OPT_DIRS, OPT_FILES, OPT_PIN_DIRS, OPT_CACHE_PRESSURE, OPT_MAXPATHS,
	OPT_MAXSYSCALLS, OPT_SETUP_ONLY, OPT_NO_SETUP,
	OPT_QUIET, OPT_STOP_FIRST, OPT_NICE, OPT_MIX, OPT_MUTATORS, OPT_UID,
	OPT_RENAME_LOCKED, OPT_HELP,
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
	{ "pin-dirs",		required_argument, NULL, OPT_PIN_DIRS },
	{ "cache-pressure",	required_argument, NULL, OPT_CACHE_PRESSURE },
	{ "max-paths",		required_argument, NULL, OPT_MAXPATHS },
	{ "max-syscalls",	required_argument, NULL, OPT_MAXSYSCALLS },
	{ "setup-only",		no_argument,	   NULL, OPT_SETUP_ONLY },
	{ "no-setup",		no_argument,	   NULL, OPT_NO_SETUP },
	{ "quiet",		no_argument,	   NULL, OPT_QUIET },
	{ "stop-at-first",	no_argument,	   NULL, OPT_STOP_FIRST },
	{ "nice",		required_argument, NULL, OPT_NICE },
	{ "mix",		required_argument, NULL, OPT_MIX },
	{ "mutators",		required_argument, NULL, OPT_MUTATORS },
	{ "uid",		required_argument, NULL, OPT_UID },
	{ "rename-locked",	no_argument,	   NULL, OPT_RENAME_LOCKED },
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

/* The options that take an integer in a range. */
static const struct {
	int id;
	const char *name;
	long *field;
	long min, max;
} long_fields[] = {
	{ OPT_THREADS, "threads", &cfg.threads, 1, MAX_THREADS },
	{ OPT_PRUNERS, "pruners", &cfg.pruners, 1, MAX_THREADS },
	{ OPT_INTERVAL, "prune-interval-ms", &cfg.prune_interval_ms, 0,
	  3600000 },
	{ OPT_PCT, "pressure-pct", &cfg.pressure_pct, 1, 99 },
	{ OPT_STAGGER, "stagger-ms", &cfg.stagger_ms, 0, 3600000 },
	{ OPT_DIRS, "dirs", &cfg.dirs, 1, 1000 },
	{ OPT_FILES, "files", &cfg.files, 1, 10000 },
	{ OPT_PIN_DIRS, "pin-dirs", &cfg.pin_dirs, 0, 1000 },
	{ OPT_CACHE_PRESSURE, "cache-pressure", &cfg.cache_pressure, 1,
	  100000 },
	{ OPT_MAXPATHS, "max-paths", &cfg.max_paths, 0, 1000000 },
	{ OPT_MAXSYSCALLS, "max-syscalls", &cfg.max_syscalls, 1,
	  1000000000000L },
	{ OPT_NICE, "nice", &cfg.nice, 0, 19 },
	{ OPT_MUTATORS, "mutators", &cfg.mutators, 1, MAX_THREADS },
	{ OPT_UID, "uid", &cfg.uid, 0, 2147483647L },
};

static bool parse_long_field(int c)
{
	size_t i;

	for (i = 0; i < sizeof(long_fields) / sizeof(long_fields[0]); i++) {
		if (long_fields[i].id == c) {
			*long_fields[i].field = parse_long(long_fields[i].name,
							   optarg,
							   long_fields[i].min,
							   long_fields[i].max);
			return true;
		}
	}
	return false;
}

/* --mix stat=50,open=50: weights of the walkers' calls. */
static void parse_mix(const char *arg)
{
	char buf[256], *item, *save = NULL;
	int op;

	if (strlen(arg) >= sizeof(buf))
		usage_error("invalid --mix '%s' (too long)", arg);
	memcpy(buf, arg, strlen(arg) + 1);
	memset(cfg.mix, 0, sizeof(cfg.mix));
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (eq)
			*eq = '\0';
		op = lookup_name(op_names, NOPS, item);
		if (!eq || op < 0)
			usage_error("invalid --mix '%s' (OP=WEIGHT,... with OP stat|lstat|open|openat)",
				    arg);
		cfg.mix[op] = parse_long("mix", eq + 1, 0, 1000);
	}
	cfg.mix_set = true;
}

static void parse_option(int c, char **argv)
{
	int v;

	switch (c) {
	case OPT_DIR:
		cfg.dir_arg = optarg;
		break;
	case OPT_MODE:
		v = lookup_name(mode_names, NMODES, optarg);
		if (v < 0)
			usage_error("invalid --mode '%s' (stat|open|cp|mutate)",
				    optarg);
		cfg.mode = (enum wl_mode)v;
		break;
	case OPT_PRUNER:
		v = lookup_name(pruner_names, 3, optarg);
		if (v < 0)
			usage_error("invalid --pruner '%s' (drop_caches|pressure|none)",
				    optarg);
		cfg.pruner = (enum wl_pruner)v;
		cfg.pruner_set = true;
		break;
	case OPT_DURATION:
		cfg.duration = parse_duration("duration", optarg);
		break;
	case OPT_SEED:
		cfg.seed = parse_u64("seed", optarg);
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
	case OPT_STOP_FIRST:
		cfg.stop_first = true;
		break;
	case OPT_RENAME_LOCKED:
		cfg.rename_locked = true;
		break;
	case OPT_MIX:
		parse_mix(optarg);
		break;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	case ':':
		usage_error("option '%s' needs a value", argv[optind - 1]);
		break;
	default:
		usage_error("unknown option '%s'", argv[optind - 1]);
	}
}

/* The walkers' calls: --mix, or the mode's one call. */
static void finish_mix(void)
{
	int i;

	if (cfg.mix_set && cfg.mode == MODE_CP)
		usage_error("--mix is for --mode stat, open or mutate");
	if (!cfg.mix_set)
		cfg.mix[cfg.mode == MODE_OPEN ? OP_OPEN : OP_STAT] = 100;
	for (i = 0; i < NOPS; i++)
		cfg.mix_total += cfg.mix[i];
	if (cfg.mix_total == 0)
		usage_error("--mix: every weight is 0");
}

/* Mode mutate's options, and the ones it has no use for. */
static void finish_mutate(void)
{
	if (cfg.mode != MODE_MUTATE) {
		if (cfg.mutators || cfg.uid >= 0)
			usage_error("--mutators and --uid are for --mode mutate");
		if (cfg.rename_locked)
			usage_error("--rename-locked is for --mode mutate");
		return;
	}
	if (cfg.dirs || cfg.files || cfg.pin_dirs >= 0)
		usage_error("--dirs, --files and --pin-dirs are not for --mode mutate");
	if (!cfg.mutators)
		cfg.mutators = 1;
	cfg.pin_dirs = 0;
	/* the mutations are the writers */
	if (!cfg.pruner_set)
		cfg.pruner = PRUNER_NONE;
}

/* Defaults that depend on other options; the directory; the bins. */
static void finish_args(void)
{
	size_t len;

	finish_mix();
	finish_mutate();
	if (cfg.setup_only && cfg.no_setup)
		usage_error("--setup-only and --no-setup exclude each other");
	if (!cfg.dirs && cfg.mode != MODE_MUTATE)
		cfg.dirs = cfg.mode == MODE_CP ? 32 : 8;
	if (!cfg.files && cfg.mode != MODE_MUTATE)
		cfg.files = cfg.mode == MODE_CP ? 128 : 8;
	if (cfg.pin_dirs < 0)
		cfg.pin_dirs = cfg.mode == MODE_CP ? 0 : cfg.dirs / 2;
	if (cfg.pin_dirs > cfg.dirs)
		usage_error("--pin-dirs %ld is more than --dirs %ld",
			    cfg.pin_dirs, cfg.dirs);
	if (cfg.pin_dirs && cfg.mode == MODE_CP)
		usage_error("--pin-dirs is for --mode stat or open");
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

void parse_args(int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		if (!parse_long_field(c))
			parse_option(c, argv);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	finish_args();
}
