// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: the threads and the run's timeline. */
#include "workload.h"

struct run {
	struct worker **workers;
	struct pruner **pruners;
	long npruners;
	long created_w, created_p, created_m;
	long old_cache_pressure;	/* -1: not changed */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->os_tid = (int)gettid();
	/* before the gate: a walker that cannot run stops the run */
	if (walker_drop_privileges())
		exit(1);
	if (!thread_start(WALK_COMM))
		return NULL;
	if (cfg.mode == MODE_MUTATE)
		mutate_walk_loop(w);
	else
		(cfg.mode == MODE_CP ? copy_loop : walk_loop)(w);
	return NULL;
}

static void alloc_threads(struct run *run)
{
	long i;

	run->workers = xcalloc((size_t)cfg.threads, sizeof(*run->workers));
	for (i = 0; i < cfg.threads; i++) {
		struct worker *w = alloc_aligned(sizeof(*w));

		w->idx = (int)i;
		w->rng = rng_init(cfg.seed, (uint64_t)i);
		w->hist = xcalloc(nbins, sizeof(*w->hist));
		w->first_false_t = -1;
		w->first_enoent_t = -1;
		run->workers[i] = w;
	}
	run->pruners = xcalloc((size_t)(run->npruners ? run->npruners : 1),
			       sizeof(*run->pruners));
	for (i = 0; i < run->npruners; i++) {
		run->pruners[i] = alloc_aligned(sizeof(*run->pruners[i]));
		run->pruners[i]->idx = (int)i;
	}
}

/* Creates the threads (they wait at the gate): 0, or the error. */
static int create_threads(struct run *run)
{
	long i;
	int err;

	for (i = 0; i < cfg.threads; i++) {
		err = pthread_create(&run->workers[i]->tid, NULL, worker_main,
				     run->workers[i]);
		if (err)
			return err;
		run->created_w++;
	}
	for (i = 0; i < run->npruners; i++) {
		err = pthread_create(&run->pruners[i]->tid, NULL, pruner_main,
				     run->pruners[i]);
		if (err)
			return err;
		run->created_p++;
	}
	return mutate_start(&run->created_m);
}

static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* Until the duration is over or the run stopped: a progress line a second. */
static void run_clock(struct run *run)
{
	double end = start_time + cfg.duration;
	double next = start_time + 1.0;

	for (;;) {
		double now = mono_now();

		double until = next < end ? next : end;

		if (now >= end || atomic_load(&stop_flag))
			break;
		if (now >= next) {
			if (!cfg.quiet)
				progress(run->workers, run->pruners,
					 run->npruners);
			next += 1.0;
			continue;
		}
		/*
		 * --stop-at-first, --max-syscalls: notice a walker's stop
		 * within 10 ms
		 */
		if ((cfg.stop_first || cfg.max_syscalls) && until > now + 0.01)
			until = now + 0.01;
		sleep_until(until);
	}
}

static void join_threads(struct run *run, long nworkers, long npruners,
			 struct result *res)
{
	long i;

	for (i = 0; i < nworkers; i++)
		pthread_join(run->workers[i]->tid, NULL);
	if (res)
		res->elapsed = since_start();
	for (i = 0; i < npruners; i++)
		pthread_join(run->pruners[i]->tid, NULL);
	mutate_join(res);
	for (i = 0; res && i < nworkers; i++)
		recheck_false(run->workers[i]);
}

/* After the run: the stderr summary, the result line; the exit status. */
static int report(struct run *run, struct result *res, int status)
{
	long i;

	collect_result(res, run->workers, run->pruners, run->npruners);
	for (i = 0; i < run->npruners; i++) {
		if (run->pruners[i]->errors) {
			fprintf(stderr, PROG ": pruner %ld: %" PRIu64
				" errors, first: %s\n", i,
				run->pruners[i]->errors,
				run->pruners[i]->first_err);
			break;
		}
	}
	if (!cfg.quiet)
		fprintf(stderr, PROG ": done: %.3fs syscalls=%" PRIu64
			" false_enoent=%" PRIu64 " false_errors=%" PRIu64
			" other_errors=%" PRIu64 " prunes=%" PRIu64
			" mutations=%" PRIu64 "\n", res->elapsed, res->syscalls,
			res->false_enoent, res->false_total, res->other_errors,
			res->prunes, res->mutations);
	print_result(res, run->npruners);

	if (run->npruners && res->prunes == 0 && res->prune_errors) {
		fprintf(stderr, PROG ": the %s pruner never succeeded\n",
			pruner_names[cfg.pruner]);
		status = 1;
	}
	return status;
}

static int run_workload(struct run *run, struct result *res)
{
	int err, status = 0;

	alloc_threads(run);
	err = create_threads(run);
	if (err) {
		fprintf(stderr, PROG ": pthread_create: %s\n", strerror(err));
		gate_open(2, 0);
		join_threads(run, run->created_w, run->created_p, NULL);
		if (run->old_cache_pressure >= 0)
			cache_pressure_restore(run->old_cache_pressure, false);
		return 1;
	}
	catch_stop_signals();
	gate_open(1, (int)(run->created_w + run->created_p + run->created_m));
	run_clock(run);
	atomic_store(&stop_flag, 1);
	join_threads(run, cfg.threads, run->npruners, res);
	if (run->old_cache_pressure >= 0 &&
	    cache_pressure_restore(run->old_cache_pressure, true))
		status = 1;
	return report(run, res, status);
}

int main(int argc, char **argv)
{
	struct run run = { .old_cache_pressure = -1 };
	struct result res;
	double t0;

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
	res.first_enoent_t = -1;

	run.npruners = cfg.pruner == PRUNER_NONE ? 0 : cfg.pruners;
	if (!cfg.setup_only && cfg.pruner == PRUNER_DROP &&
	    check_drop_caches())
		return 1;

	t0 = mono_now();
	if (cfg.mode == MODE_MUTATE)
		mutate_prepare();
	else
		prepare_tree();
	if (!cfg.quiet)
		fprintf(stderr, PROG ": %s tree in %s: %.3fs\n",
			cfg.no_setup ? "checked" : "created",
			cfg.dir_arg, mono_now() - t0);
	if (cfg.setup_only) {
		res.elapsed = mono_now() - t0;
		print_result(&res, run.npruners);
		return 0;
	}
	pin_dirs();
	if (cfg.cache_pressure >= 0 &&
	    cache_pressure_set(&run.old_cache_pressure))
		return 1;
	return run_workload(&run, &res);
}
