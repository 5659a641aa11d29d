// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the state the runtime reads and counts: the per-CPU counters
 * and probe hits, the knobs, the load-time parameters, and the modes the
 * load chose (written at load and unload only). Everything above reads
 * it; nothing here calls anything.
 */
#include "internal.h"

DEFINE_PER_CPU(struct dcrace_pcpu, dcrace_pcpu);

/* In the enums' order: both come from tables.h. */
const char * const dcrace_counter_names[NR_COUNTERS] = {
#define DCRACE_COUNTER(id, name) name,
#include "tables.h"
};

struct dcrace_knob dcrace_knobs[NR_KNOBS] = {
#define DCRACE_KNOB(id, n, lo, hi, def) \
	{ .name = n, .min = lo, .max = hi, .val = ATOMIC64_INIT(def) },
#include "tables.h"
};

int knob_set(struct dcrace_knob *k, const char *buf)
{
	s64 v;
	int ret = dcrace_parse_s64(buf, k->min, k->max, &v);

	if (ret)
		return ret;
	atomic64_set(&k->val, v);
	return 0;
}

/*
 * Does walk_component() have its own NULL-inode test before step_into()?
 * -1: learn it (step.c). A load-time parameter only, with the knobs'
 * parser and range check.
 */
struct dcrace_knob early_test = {
	.name = "early_test", .min = -1, .max = 1, .val = ATOMIC64_INIT(-1),
};

/* The load-time parameters: main.c declares them, docs/debugfs.md. */
bool stack_claim = true;
bool fast = true;
bool extra_probes;
bool callbacks;
bool late_sites;
unsigned int selftest_break;
bool skip_open_return;
bool test_miss_returns;
unsigned int test_end_room;
unsigned int skip_probes;

/* The modes (internal.h). */
bool exit_mode;
bool stack_mode;
bool step_probed;
bool open_on;
bool end_on;
bool sites_learning;

int k_lookup = -1;
int k_walk = -1;
int stack_seen;
bool stack_bad;
bool stack_learning;

const struct dcrace_watch *dcrace_watch;
