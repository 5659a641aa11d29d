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
 * LOOKUP_RCU is set. And error-returning steps are judged end to end: a
 * lookup of a name whose negative dentry is cached must come out
 * genuine_negative. Otherwise insmod fails with -ENODEV and one line
 * saying what failed. The runtime reports to it through dcrace_watch, set
 * only while it walks (no call from the core up to here).
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include "internal.h"

static struct task_struct *selftest_task;
static unsigned int st_opened, st_sampled, st_closed;
static unsigned int st_ok, st_bad_name, st_bad_seq, st_bad_rcu;
static unsigned int st_open_sampled, st_open_closed;	/* open()'s last */
static bool st_neg_on;		/* the negative lookups are being walked */
static unsigned int st_neg_judged[NR_LOOKUP_KINDS], st_neg_genuine;
static enum dcrace_verdict st_neg_last;	/* their last verdict */

static bool mine(void)
{
	return current == READ_ONCE(selftest_task);
}

static void selftest_step_opened(void)
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

static void selftest_sample(struct dcrace_slot *s, struct dentry *dentry,
			    unsigned int seq)
{
	const struct dcrace_nd_head *nd = s->nd;
	bool bad = false;

	if (!mine())
		return;
	/* selftest_break=2: a sample 2 off, as if read from elsewhere */
	if (selftest_break == 2)
		s->seq += 2;
	/* selftest_break=1: read the mirror one word off, as if shuffled */
	if (selftest_break == 1)
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

static void selftest_step_closed(const struct dcrace_slot *s)
{
	if (mine() && s->valid) {
		st_closed++;
		if (s->kind == LK_OPEN)
			st_open_closed++;
	}
}

/* A step of ours judged (judge_verdict()): a negative lookup's? */
static void selftest_judged(const struct dcrace_slot *s, enum dcrace_verdict v)
{
	if (!mine() || !READ_ONCE(st_neg_on) || s->kind >= NR_LOOKUP_KINDS)
		return;
	st_neg_judged[s->kind]++;
	st_neg_genuine += v == DCRACE_GENUINE_NEGATIVE;
	st_neg_last = v;
}

/* What the runtime tells the self-check while it walks. */
static const struct dcrace_watch selftest_watch = {
	.step_opened = selftest_step_opened,
	.sampled = selftest_sample,
	.step_closed = selftest_step_closed,
	.judged = selftest_judged,
};

/*
 * Lookups of a name whose negative dentry is cached: a walk step (an
 * intermediate component) and, when covered, open()'s last component
 * return -ENOENT in RCU mode and must be judged genuine_negative. Where:
 * a private ramfs mount (ramfs caches no negative dentry by itself, the
 * d_op its lookups get deletes them; this one, made by hand, has none and
 * is held, so no pruner takes it away).
 */
static void selftest_negative(void)
{
	struct file_system_type *type = get_fs_type("ramfs");
	struct vfsmount *mnt;
	struct dentry *neg;
	struct file *f;

	if (!type)
		return;
	mnt = kern_mount(type);
	module_put(type->owner);
	if (IS_ERR(mnt))
		return;
	inode_lock(d_inode(mnt->mnt_root));
	neg = d_alloc_name(mnt->mnt_root, "dcrace-absent");
	if (neg)
		d_add(neg, NULL);
	inode_unlock(d_inode(mnt->mnt_root));
	if (neg) {
		WRITE_ONCE(st_neg_on, true);
		f = file_open_root_mnt(mnt, "dcrace-absent/x", O_RDONLY, 0);
		if (!IS_ERR(f))
			filp_close(f, NULL);
		f = file_open_root_mnt(mnt, "dcrace-absent", O_RDONLY, 0);
		if (!IS_ERR(f))
			filp_close(f, NULL);
		WRITE_ONCE(st_neg_on, false);
		dput(neg);
	}
	kern_unmount(mnt);
}

/* Each negative lookup was judged, every verdict genuine_negative. */
static bool neg_judged(void)
{
	return st_neg_judged[LK_WALK] &&
	       (!open_covered() || st_neg_judged[LK_OPEN]);
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
	else if (!neg_judged())
		what = "a lookup of a cached negative dentry: its -ENOENT step was not judged";
	else if (st_neg_genuine != st_neg_judged[LK_WALK] + st_neg_judged[LK_OPEN])
		what = "a lookup of a cached negative dentry: not judged genuine_negative";
	if (!what)
		return 0;
	pr_err("dcrace: self-check failed: %s (steps opened %u, sampled %u, closed %u, open sampled %u, closed %u; mirror ok %u, bad name %u, next_seq %u, flags %u; negatives judged walk %u, open %u, genuine %u, last %s); not loading\n",
	       what, st_opened, st_sampled, st_closed, st_open_sampled,
	       st_open_closed, st_ok, st_bad_name, st_bad_seq, st_bad_rcu,
	       st_neg_judged[LK_WALK], st_neg_judged[LK_OPEN], st_neg_genuine,
	       dcrace_verdict_name(st_neg_last));
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
		WRITE_ONCE(dcrace_watch, &selftest_watch);
		warm_up_walks();
		selftest_negative();
		WRITE_ONCE(dcrace_watch, NULL);
		if (st_ok && st_closed && neg_judged() &&
		    (!open_covered() || (st_open_sampled && st_open_closed)))
			break;
	}
	WRITE_ONCE(selftest_task, NULL);
	return selftest_check();
}
