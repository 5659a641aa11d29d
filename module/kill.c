// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the pruner's record. The kill probe notes who entered
 * __dentry_kill() on which dentry, and when; judging a step looks the
 * dentry up to name its killer.
 *
 * Direct-mapped by dentry address: the last kills seen at each address.
 * A record is matched by address, parent and name hash *and* by the d_seq
 * value at the kill's entry, which equals the walker's sample exactly when
 * this kill is the one that invalidated it (d_seq values are small, mostly
 * 0 or 2: address and d_seq alone could match an earlier dentry at the
 * same address), and only if it was made after the walker's sample (when
 * the sample saw d_seq unchanged): a pruned name looked up again can get
 * the same address, parent, hash and d_seq, and the earlier lifetime's
 * record must not answer for it. No upper bound (a preempted walker can
 * sit in its window for milliseconds).
 */
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include "internal.h"
#include "trace.h"

#define DCRACE_KILL_BITS	11
#define DCRACE_KILL_WAYS	4

/*
 * The kill probe runs in int3 context, which lockdep (rightly) treats like
 * NMI: no spinlock may be taken there. Each set has a busy bit instead;
 * the kill probe only ever try-locks it (and drops the record if another
 * CPU's kill holds it); the reader (judging a step, maybe in int3 context
 * too) tries it once and, if busy, counts kill_lookups_busy and names no
 * killer.
 */
struct dcrace_kill_set {
	unsigned long busy;
	struct dcrace_kill way[DCRACE_KILL_WAYS];
};

static struct dcrace_kill_set kills[BIT(DCRACE_KILL_BITS)];

static struct dcrace_kill_set *kill_set(const void *dentry)
{
	return &kills[hash_ptr(dentry, DCRACE_KILL_BITS)];
}

/*
 * The record of the kill of the dentry a walker found (@key: its sample),
 * called in the walker's RCU section: a record whose grace period has
 * elapsed is an earlier lifetime's at the same address
 * (dcrace_kill_matches()).
 */
bool kill_find(const struct dcrace_kill_key *key, struct dcrace_kill *out)
{
	struct dcrace_kill_set *set = kill_set(key->dentry);
	bool found = false;
	int w;

	/* never wait: reset_all() may hold the bit, preempted */
	if (test_and_set_bit_lock(0, &set->busy)) {
		cnt_inc(C_KILL_BUSY);
		return false;
	}
	for (w = 0; w < DCRACE_KILL_WAYS; w++) {
		const struct dcrace_kill *k = &set->way[w];

		if (dcrace_kill_matches(&k->key, key,
					poll_state_synchronize_rcu, k->gp)) {
			*out = set->way[w];
			found = true;
			break;
		}
	}
	clear_bit_unlock(0, &set->busy);
	return found;
}

/* With the set's busy bit held: the way to overwrite (same or oldest). */
static struct dcrace_kill *kill_slot(struct dcrace_kill_set *set,
				     const void *dentry)
{
	struct dcrace_kill *old = &set->way[0];
	int w;

	for (w = 0; w < DCRACE_KILL_WAYS; w++) {
		if (set->way[w].key.dentry == dentry)
			return &set->way[w];
		if (set->way[w].time_ns < old->time_ns)
			old = &set->way[w];
	}
	return old;
}

int kill_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dentry *dentry = (struct dentry *)regs_get_kernel_argument(regs, 0);
	struct dcrace_kill_set *set = kill_set(dentry);
	struct dcrace_kill *k;

	hit(P_KILL);
	if (!knob(K_ENABLED))
		return 0;
	cnt_inc(C_PRUNES);
	if (test_and_set_bit_lock(0, &set->busy)) {
		cnt_inc(C_KILLS_DROPPED);
		return 0;
	}
	k = kill_slot(set, dentry);
	k->time_ns = ktime_get_mono_fast_ns();
	/* the dentry is freed a grace period after this, not before */
	k->gp = get_state_synchronize_rcu();
	k->pid = task_pid_nr(current);
	memcpy(k->comm, current->comm, sizeof(k->comm));
	/* The caller holds dentry->d_lock: the dentry is alive here. */
	k->key.dentry = dentry;
	k->key.parent = dentry->d_parent;
	k->key.hash = dentry->d_name.hash;
	k->key.seq = raw_read_seqcount(&dentry->d_seq);
	k->positive = !!READ_ONCE(dentry->d_inode);
	clear_bit_unlock(0, &set->busy);
	/* off unless enabled in tracefs: a static key, no cost here */
	trace_dcrace_prune(k->pid, k->comm, dentry->d_name.name, k->key.seq,
			   k->time_ns);
	return 0;
}

/* Racing kill records may survive a reset; they only name killers. */
void kill_reset(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kills); i++) {
		if (test_and_set_bit_lock(0, &kills[i].busy))
			continue;
		memset(kills[i].way, 0, sizeof(kills[i].way));
		clear_bit_unlock(0, &kills[i].busy);
	}
}
