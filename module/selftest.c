// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the load's self-check. The detector reads a mirror of struct
 * nameidata and relies on walk_component() and __d_lookup_rcu() being
 * probed where it expects them; an inlined function, a return-address
 * rewriter or a shuffled layout would make it load and silently count
 * nothing. So insmod walks a few paths of its own with the probes armed
 * and checks, on its own steps only, that steps were opened, sampled and
 * closed (walk_component()'s steps and, when covered, open()'s last
 * lookup), and that the mirror reads what the kernel itself used: nd->last
 * is the found dentry's name, nd->next_seq its d_seq as sampled, and
 * LOOKUP_RCU is set. Otherwise insmod fails with -ENODEV and one line
 * saying what failed.
 */
#include <linux/namei.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include "internal.h"

bool selftest_on;
static struct task_struct *selftest_task;
static unsigned int st_opened, st_sampled, st_closed;
static unsigned int st_ok, st_bad_name, st_bad_seq, st_bad_rcu;
static unsigned int st_open_sampled, st_open_closed;	/* open()'s last */

static bool mine(void)
{
	return current == READ_ONCE(selftest_task);
}

void selftest_step_opened(void)
{
	if (mine())
		st_opened++;
}

/* In the walker's RCU section, as rcu_sample() runs. */
static bool name_matches(const struct dcrace_nd_head *nd,
			 const struct dentry *dentry)
{
	u64 hl = READ_ONCE(nd->last.hash_len);
	const unsigned char *want = READ_ONCE(nd->last.name);
	const unsigned char *have = READ_ONCE(dentry->d_name.name);

	if (hl != READ_ONCE(dentry->d_name.hash_len) || !want || !have ||
	    hashlen_len(hl) > NAME_MAX)
		return false;
	return !memcmp(want, have, hashlen_len(hl));
}

void selftest_sample(const struct dcrace_slot *s, struct dentry *dentry,
		     unsigned int seq)
{
	const struct dcrace_nd_head *nd = s->nd;
	bool bad = false;

	if (!mine())
		return;
	/* selftest_break=1: read the mirror one word off, as if shuffled */
	if (selftest_break)
		nd = (const void *)nd + sizeof(long);
	st_sampled++;
	if (s->kind == LK_OPEN)
		st_open_sampled++;
	if (!name_matches(nd, dentry)) {
		st_bad_name++;
		bad = true;
	}
	if (READ_ONCE(nd->next_seq) !=
	    (raw_read_seqcount(&dentry->d_seq) & ~1U)) {
		st_bad_seq++;
		bad = true;
	}
	if (!(READ_ONCE(nd->flags) & LOOKUP_RCU)) {
		st_bad_rcu++;
		bad = true;
	}
	if (!bad)
		st_ok++;
}

void selftest_step_closed(const struct dcrace_slot *s)
{
	if (mine() && s->valid) {
		st_closed++;
		if (s->kind == LK_OPEN)
			st_open_closed++;
	}
}

/* 0, or -ENODEV after one line naming what failed. */
static int selftest_check(void)
{
	const char *what = NULL;

	if (!st_opened)
		what = "no walk step was opened (walk_component/rcu_lookup probes not reached)";
	else if (!st_sampled)
		what = "no step was sampled after __d_lookup_rcu()";
	else if (!st_ok || st_bad_name + st_bad_seq + st_bad_rcu > st_ok)
		what = st_bad_name ? "nameidata mirror: nd->last is not the dentry's d_name" :
		       st_bad_seq ? "nameidata mirror: nd->next_seq is not the dentry's d_seq" :
		       "nameidata mirror: LOOKUP_RCU not set in nd->flags";
	else if (!st_closed)
		what = "no sampled step was closed at walk_component's return";
	else if (open_covered() && !st_open_sampled)
		what = "open()'s last component: no lookup sampled (lookup_fast in path_openat)";
	else if (open_covered() && !st_open_closed)
		what = "open()'s last component: no step closed at terminate_walk()";
	if (!what)
		return 0;
	pr_err("dcrace: self-check failed: %s (steps opened %u, sampled %u, closed %u, open sampled %u, closed %u; mirror ok %u, bad name %u, next_seq %u, flags %u); not loading\n",
	       what, st_opened, st_sampled, st_closed, st_open_sampled,
	       st_open_closed, st_ok, st_bad_name, st_bad_seq, st_bad_rcu);
	return -ENODEV;
}

/*
 * Walk our paths with the probes armed, as they will stay. A few rounds:
 * a pruner (drop_caches) may empty the dcache between two, and a walk
 * that misses the dcache leaves RCU mode without a sample.
 */
int selftest_verdict(void)
{
	int round;

	WRITE_ONCE(selftest_task, current);
	for (round = 0; round < 3; round++) {
		WRITE_ONCE(selftest_on, true);
		warm_up_walks();
		WRITE_ONCE(selftest_on, false);
		if (st_ok && st_closed &&
		    (!open_covered() || (st_open_sampled && st_open_closed)))
			break;
	}
	WRITE_ONCE(selftest_task, NULL);
	return selftest_check();
}
