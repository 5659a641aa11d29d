// SPDX-License-Identifier: GPL-2.0
/* dcrace-workload: progress lines, summing up, the DCRACE-RESULT line. */
#include "workload.h"

/* JSON's two-character escapes. */
static const char *const json_escapes[128] = {
	['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\r'] = "\\r",
	['\t'] = "\\t",
};

static void json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p < 128 && json_escapes[*p])
			fputs(json_escapes[*p], f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static int cmp_path_rec(const void *a, const void *b)
{
	const struct path_rec *x = a, *y = b;

	if (x->start_ns < y->start_ns)
		return -1;
	return x->start_ns > y->start_ns;
}

static void print_paths(FILE *f, const struct result *r, uint64_t *listed)
{
	size_t i;

	char buf[16];

	for (i = 0; i < r->npaths && i < (size_t)cfg.max_paths; i++) {
		const struct path_rec *p = &r->paths[i];

		fputs(i ? ",{\"path\":" : "{\"path\":", f);
		json_string(f, p->path);
		fprintf(f, ",\"t\":%.3f,\"tid\":%d,\"start_ns\":%" PRIu64
			",\"end_ns\":%" PRIu64 ",\"op\":\"%s\",\"errno\":\"%s\"}",
			p->t, p->tid, p->start_ns, p->end_ns, p->op,
			errno_name(p->err, buf, sizeof(buf)));
		(*listed)++;
	}
}

/*
 * "tids": the walkers' (copiers') thread ids, the only threads whose false
 * ENOENTs the result lists: the harness matches the module's events of
 * these threads to "paths" and counts the others' as outside the workload.
 */
static void print_tids(FILE *f, const struct result *r)
{
	size_t i;

	fputs("\"tids\":[", f);
	for (i = 0; i < r->ntids; i++)
		fprintf(f, "%s%d", i ? "," : "", r->tids[i]);
	fputc(']', f);
}

/* ,"NAME":T with T seconds, or null when T < 0 (none). */
static void first_json(FILE *f, const char *name, double t)
{
	fprintf(f, ",\"%s\":", name);
	if (t >= 0)
		fprintf(f, "%.3f", t);
	else
		fputs("null", f);
}

static void print_json(FILE *f, const struct result *r, long npruners)
{
	uint64_t listed = 0;
	size_t i;

	fprintf(f, RESULT_PREFIX "{\"version\":1,\"mode\":\"%s\",\"pruner\":\"%s\",",
		mode_names[cfg.mode], pruner_names[cfg.pruner]);
	fputs("\"dir\":", f);
	json_string(f, cfg.dir_arg);
	fprintf(f, ",\"seed\":%" PRIu64 ",\"threads\":%ld,\"pruners\":%ld,"
		"\"dirs\":%ld,\"files\":%ld,\"pinned_dirs\":%ld,"
		"\"cache_pressure\":%ld,"	/* -1: left as it was */
		"\"duration_s\":%.3f,\"elapsed_s\":%.3f,\"syscalls\":%" PRIu64
		",\"false_enoent\":%" PRIu64 ",\"other_errors\":%" PRIu64
		",",
		cfg.seed, cfg.threads, npruners, cfg.dirs, cfg.files, cfg.pin_dirs,
		cfg.cache_pressure, cfg.duration, r->elapsed, r->syscalls,
		r->false_enoent, r->other_errors);
	/*
	 * truth: how a false error is known; lstat: an ENOENT on a path found
	 * right after; construction: mode mutate's errno no state allows
	 */
	fprintf(f, "\"truth\":\"%s\",\"false_errors\":",
		cfg.mode == MODE_MUTATE ? "construction" : "lstat");
	errno_counts_json(f, r->false_errs);
	fputc(',', f);
	if (cfg.mode == MODE_MUTATE)
		mutate_json(f, r);
	print_tids(f, r);
	fputs(",\"first_error\":", f);
	if (r->first_err)
		json_string(f, r->first_err);
	else
		fputs("null", f);
	/* the identity oracle (cp mode checks none: its checks are 0) */
	fprintf(f, ",\"identity_checks\":%" PRIu64 ",\"wrong_objects\":%" PRIu64
		",\"first_wrong_object\":", r->ident_checks, r->wrong_objects);
	if (r->first_wrong)
		json_string(f, r->first_wrong);
	else
		fputs("null", f);
	first_json(f, "first_false_enoent_s", cfg.mode == MODE_MUTATE ?
		   r->first_enoent_t : r->first_false_t);
	first_json(f, "first_false_error_s", r->first_false_t);
	fprintf(f, ",\"prunes\":%" PRIu64 ",\"prune_errors\":%" PRIu64
		",\"per_second\":[", r->prunes, r->prune_errors);
	for (i = 0; i < nbins; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", r->hist ? r->hist[i] : 0);
	fputs("],\"paths\":[", f);
	print_paths(f, r, &listed);
	fprintf(f, "],\"paths_dropped\":%" PRIu64 ",\"copies\":%" PRIu64
		",\"gone\":%" PRIu64 ",\"mix\":",
		r->false_total - listed, r->copies, r->gone);
	if (cfg.mode == MODE_CP) {
		fputs("null", f);
	} else {
		char mix[128];

		mix_string(mix, sizeof(mix));
		json_string(f, mix);
	}
	fputs("}\n", f);
}

/*
 * The result line, in one write(): with every false ENOENT listed it can
 * be a megabyte, and the guest's other writers to the console (the
 * harness's per-second ticks) must not land inside it.
 */
void print_result(const struct result *r, long npruners)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		print_json(stdout, r, npruners);
		fflush(stdout);
		return;
	}
	print_json(f, r, npruners);
	if (fclose(f) == 0) {
		fflush(stdout);
		if (write_all(STDOUT_FILENO, buf, len) < 0)
			fprintf(stderr, PROG ": writing the result: %s\n",
				strerror(errno));
	}
	free(buf);
}

void progress(struct worker **workers, struct pruner **pruners, long npruners)
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
	fprintf(stderr, PROG ": %.1fs syscalls=%" PRIu64 " false=%"
		PRIu64 " prunes=%" PRIu64 "\n", since_start(), sys, fe, pr);
}

/* W's counts per errno added to R's. */
static void sum_counts(struct result *r, const struct worker *w)
{
	size_t e;
	int k;

	for (e = 0; e < ERRNO_SLOTS; e++) {
		r->false_errs[e] += w->false_errs[e];
		for (k = 0; k < NOPS; k++)
			r->outcomes[k][e] += w->outcomes[k][e];
		for (k = 0; k < NKINDS; k++)
			r->kind_outcomes[k][e] += w->kind_outcomes[k][e];
	}
}

/* Sums the joined threads' counts into R (whose elapsed is set). */
void collect_result(struct result *r, struct worker **workers,
		    struct pruner **pruners, long npruners)
{
	double first_err_t = 0;
	size_t total_paths = 0;
	long i;

	r->hist = xcalloc(nbins, sizeof(*r->hist));
	r->tids = xcalloc((size_t)cfg.threads, sizeof(*r->tids));
	for (i = 0; i < cfg.threads; i++) {
		const struct worker *w = workers[i];
		size_t b;

		if (w->os_tid > 0)
			r->tids[r->ntids++] = w->os_tid;

		r->syscalls += w->syscalls;
		r->false_enoent += w->false_enoent;
		r->false_total += w->false_total;
		sum_counts(r, w);
		r->other_errors += w->other_errors;
		r->ident_checks += w->ident_checks;
		r->wrong_objects += w->wrong_objects;
		if (w->wrong_objects && !r->first_wrong)
			r->first_wrong = w->first_wrong;
		r->copies += w->copies;
		for (b = 0; b < nbins; b++)
			r->hist[b] += w->hist[b];
		r->gone += w->gone;
		if (w->false_total &&
		    (r->first_false_t < 0 ||
		     w->first_false_t < r->first_false_t))
			r->first_false_t = w->first_false_t;
		if (w->first_enoent_t >= 0 &&
		    (r->first_enoent_t < 0 ||
		     w->first_enoent_t < r->first_enoent_t))
			r->first_enoent_t = w->first_enoent_t;
		if (w->first_err &&
		    (!r->first_err || w->first_err_t < first_err_t)) {
			r->first_err = w->first_err;
			first_err_t = w->first_err_t;
		}
		total_paths += w->npaths;
	}
	r->paths = xcalloc(total_paths, sizeof(*r->paths));
	for (i = 0; i < cfg.threads; i++) {
		size_t k;

		for (k = 0; k < workers[i]->npaths; k++)
			if (!workers[i]->paths[k].gone)
				r->paths[r->npaths++] = workers[i]->paths[k];
	}
	qsort(r->paths, r->npaths, sizeof(*r->paths), cmp_path_rec);

	for (i = 0; i < npruners; i++) {
		r->prunes += pruners[i]->prunes;
		r->prune_errors += pruners[i]->errors;
	}
}
