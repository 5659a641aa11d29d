// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: widening the race window. The rcu_lookup probe busy-waits after
 * __d_lookup_rcu() sampled d_seq and before the walker reads d_inode, for
 * the tasks and lookups the inject/ knobs select.
 *
 * Without a comm filter every task on the system is delayed, in int3
 * context: then delays above DCRACE_DELAY_ANY_MAX are refused.
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include "internal.h"

/*
 * The comm filter's writers take a raw spinlock, and its seqcount is
 * associated with that: on PREEMPT_RT a reader of a seqcount_spinlock_t
 * that sees an odd count takes the (sleeping) spinlock to let a preempted
 * writer finish, and probe handlers must not sleep (measured on Debian's
 * 6.12-rt with a comm writer in a loop: "BUG: scheduling while atomic" in
 * the rcu_lookup probe, then a kernel BUG in the next int3). A
 * seqcount_raw_spinlock_t reader never takes the lock; a raw spinlock's
 * writer is not preempted.
 */
static char inject_comm[TASK_COMM_LEN];
static DEFINE_RAW_SPINLOCK(comm_lock);	/* writers of inject_comm */
static seqcount_raw_spinlock_t comm_seq =
	SEQCNT_RAW_SPINLOCK_ZERO(comm_seq, &comm_lock);
static DEFINE_PER_CPU(struct rnd_state, inject_rnd);
static atomic64_t inject_count;		/* eligible lookups, for interval */

#define DCRACE_DELAY_ANY_MAX	100	/* us, without a comm filter */

void inject_init(void)
{
	int i;

	for_each_possible_cpu(i)
		prandom_seed_state(per_cpu_ptr(&inject_rnd, i),
				   get_random_u64() + i);
}

/* Set the comm filter from @buf (@len bytes, see dcrace_parse_comm()). */
int inject_comm_set(const char *buf, size_t len)
{
	char val[TASK_COMM_LEN];
	unsigned long flags;
	int ret = dcrace_parse_comm(buf, len, val, sizeof(val));

	if (ret)
		return ret;
	raw_spin_lock_irqsave(&comm_lock, flags);
	if (!val[0] && knob(K_DELAY_US) > DCRACE_DELAY_ANY_MAX) {
		ret = -EINVAL;
	} else {
		write_seqcount_begin(&comm_seq);
		memcpy(inject_comm, val, sizeof(inject_comm));
		write_seqcount_end(&comm_seq);
	}
	raw_spin_unlock_irqrestore(&comm_lock, flags);
	return ret;
}

/* Set delay_us from @buf: above the cap only with a comm filter. */
int inject_delay_set(const char *buf)
{
	struct dcrace_knob *k = &dcrace_knobs[K_DELAY_US];
	unsigned long flags;
	s64 v;
	int ret = dcrace_parse_s64(buf, k->min, k->max, &v);

	if (ret)
		return ret;
	raw_spin_lock_irqsave(&comm_lock, flags);
	if (v > DCRACE_DELAY_ANY_MAX && !inject_comm[0])
		ret = -EINVAL;
	else
		atomic64_set(&k->val, v);
	raw_spin_unlock_irqrestore(&comm_lock, flags);
	return ret;
}

/*
 * At load: the parameters are set in the order given, so delay_us and comm
 * are checked together here.
 */
int inject_check(void)
{
	if (knob(K_DELAY_US) <= DCRACE_DELAY_ANY_MAX || inject_comm[0])
		return 0;
	pr_err("dcrace: delay_us=%lld needs a comm filter (at most %d us for every task)\n",
	       knob(K_DELAY_US), DCRACE_DELAY_ANY_MAX);
	return -EINVAL;
}

/* The comm filter and a newline, into @buf; returns the length. */
int inject_comm_get(char *buf, size_t size)
{
	char val[TASK_COMM_LEN];
	unsigned long flags;

	/* no formatting under a raw lock: copy, then print */
	raw_spin_lock_irqsave(&comm_lock, flags);
	memcpy(val, inject_comm, sizeof(val));
	raw_spin_unlock_irqrestore(&comm_lock, flags);
	return scnprintf(buf, size, "%s\n", val);
}

/*
 * Lockless: this runs in probe handlers, maybe in int3 context. A reader
 * that keeps meeting a writer gives up and does not delay this lookup.
 */
bool inject_comm_matches(void)
{
	char want[TASK_COMM_LEN];
	unsigned int seq, tries;

	for (tries = 0; tries < 4; tries++) {
		seq = raw_read_seqcount(&comm_seq);
		if (seq & 1)
			continue;
		memcpy(want, inject_comm, sizeof(want));
		if (!read_seqcount_retry(&comm_seq, seq))
			return !want[0] ||
			       !strncmp(current->comm, want, TASK_COMM_LEN);
	}
	return false;
}

/* A per-CPU PRNG: get_random_*() takes a local lock, not for int3 context. */
static u32 inject_rand100(void)
{
	return prandom_u32_state(this_cpu_ptr(&inject_rnd)) % 100;
}

/*
 * Delay the current task in @window when the knobs select it. A freeing
 * side's window (DCRACE_WINDOW_FREE) delays the hunt's controller
 * (DCRACE_FREER_COMM), the task that ends the lifetimes, never a walker;
 * every other window the tasks of the comm filter.
 */
void maybe_inject_slow(unsigned int window)
{
	s64 delay = knob(K_DELAY_US), interval, prob;

	if (!delay || !(knob(K_WINDOW) & window) || !knob(K_TIMES))
		return;
	if (window == DCRACE_WINDOW_FREE ?
	    strncmp(current->comm, DCRACE_FREER_COMM, TASK_COMM_LEN) :
	    !inject_comm_matches())
		return;
	interval = knob(K_INTERVAL);
	if (interval > 1 && atomic64_inc_return(&inject_count) % interval)
		return;
	prob = knob(K_PROBABILITY);
	if (prob < 100 && inject_rand100() >= prob)
		return;
	if (knob(K_TIMES) > 0 &&
	    atomic64_dec_if_positive(&dcrace_knobs[K_TIMES].val) < 0)
		return;
	cnt_inc(C_INJECTED);
	/* Busy-wait: probe handlers must not sleep. */
	while (delay > 1000) {
		mdelay(1);
		delay -= 1000;
	}
	udelay(delay);
}
