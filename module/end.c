// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the end of an RCU walk (the core: the handlers for
 * terminate_walk()'s entry, the return sites of the walk functions and
 * try_to_unlazy()'s entry; their probes are found by layout.c and armed
 * by sites.c).
 *
 * The rule: an RCU-mode walk may return a hard error (anything but
 * -ECHILD) only from state its seqcounts still vouch for. At
 * terminate_walk() with LOOKUP_RCU still set (the walk gives up in RCU
 * mode: a successful walk left it in complete_walk()) the state the walk
 * stands on is read in its RCU section: nd->path.dentry's d_seq against
 * nd->seq and its type, nd->inode against that dentry's d_inode and its
 * type. The result is known
 * after the walk function returned (path_lookupat(), path_parentat():
 * end_ret_pre(); path_openat(): open.c), where it is judged
 * (dcrace_classify_end()), each errno by the state it was decided on:
 * false, genuine, unvouched (moved, not contradicting the decision) or
 * not judged. -ENOENT stays the step oracle's (step.c).
 *
 * A catch: the walk's own try_to_unlazy() (link_path_walk()'s and its
 * clones' only, not path_openat()'s before a create; before
 * -ENOTDIR and, on 6.12 and the backport, before may_lookup()'s error)
 * on stale state fails, and the walk restarts in ref-walk mode: probed at
 * the call instructions the layout found (error paths only).
 *
 * Lifetime: nd->path.dentry and nd->inode are read only with LOOKUP_RCU
 * set, inside the walk's RCU section; nothing is read at the return site.
 */
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/namei.h>
#include <linux/seqlock.h>
#include "internal.h"

static bool nd_dentry_stale(struct dcrace_nd_head *nd, struct dentry *d,
			    unsigned int *cur)
{
	*cur = raw_read_seqcount(&d->d_seq);
	return *cur != READ_ONCE(nd->seq);
}

/*
 * The state walk @nd stands on, into @e: nd->path.dentry (its d_seq, its
 * type) and nd->inode (its type), the only state the judged errnos are
 * decided on (dcrace_classify_end()). Nothing a step sampled is read: a
 * slot can outlive its walk (a return no probe saw), its dentry freed.
 */
static void end_read(struct dcrace_end_snap *e, struct dcrace_nd_head *nd)
{
	struct dentry *d = READ_ONCE(nd->path.dentry);
	struct inode *inode = READ_ONCE(nd->inode);

	memset(e, 0, offsetof(struct dcrace_end_snap, name));
	e->name[0] = '\0';
	e->seq = READ_ONCE(nd->seq);
	e->inode_dir = inode && S_ISDIR(READ_ONCE(inode->i_mode));
	if (d) {
		e->dentry_stale = nd_dentry_stale(nd, d, &e->cur);
		e->inode_stale = READ_ONCE(d->d_inode) != inode;
		e->can_lookup = d_can_lookup(d);
		/* the name is only reported, and only a stale end is */
		if (e->dentry_stale || e->inode_stale)
			dcrace_copy_name(e->name, sizeof(e->name),
					 READ_ONCE(d->d_name.name),
					 &e->name_truncated);
	}
}

/*
 * terminate_walk(nd) with LOOKUP_RCU set, the task's slot @s held: the
 * state behind whatever the walk returns.
 */
void end_snapshot(struct dcrace_slot *s, struct dcrace_nd_head *nd)
{
	/* the last end never reached a probed return */
	if (s->end_pending)
		cnt_inc(C_END_UNJUDGED);
	/* window 4 (tests): between the error decision and this snapshot */
	maybe_inject(DCRACE_WINDOW_END);
	end_read(slot_end(s), nd);
	slot_end_set(s);
}

/* unlazy_pre()'s snapshot: per CPU (handlers run with preemption off). */
static DEFINE_PER_CPU(struct dcrace_end_snap, unlazy_scratch);

static void end_count(enum dcrace_verdict v)
{
	static const enum dcrace_counter c[NR_DCRACE_VERDICTS] = {
		[DCRACE_END_GENUINE] = C_END_GENUINE,
		[DCRACE_FALSE_ENOTDIR] = C_FALSE_ENOTDIR,
		[DCRACE_FALSE_EACCES] = C_FALSE_EACCES,
		[DCRACE_FALSE_EPERM] = C_FALSE_EPERM,
		[DCRACE_END_UNVOUCHED] = C_END_UNVOUCHED,
		[DCRACE_END_NOT_JUDGED] = C_END_NOT_JUDGED,
	};

	cnt_inc(C_END_JUDGED);
	if (c[v])
		cnt_inc(c[v]);
}

/* The walk function @fn returned @ret: judge the end snapshot of @s. */
void end_judge(struct dcrace_slot *s, long ret, enum dcrace_walk_fn_id fn)
{
	const struct dcrace_end_snap *e = slot_end(s);
	struct dcrace_end_sighting sg = {
		.result = (int)ret,
		.dentry_stale = e->dentry_stale,
		.inode_stale = e->inode_stale,
		.inode_dir = e->inode_dir,
		.can_lookup = e->can_lookup,
	};
	enum dcrace_verdict v;

	if (!s->end_pending)
		return;
	slot_end_clear(s);
	/* disabled since the snapshot: nothing counted */
	if (!knob(K_ENABLED))
		return;
	v = dcrace_classify_end(&sg);
	if (v == DCRACE_NONE)
		return;
	end_count(v);
	if (dcrace_verdict_is_race(v))
		report_end_event(e, v, ret, ktime_get_mono_fast_ns(),
				 dcrace_layout.walk_fns[fn].name);
}

/* After a call of path_lookupat() or path_parentat(): eax is its errno. */
int end_ret_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct dcrace_end_ret *r = &container_of(p, struct dcrace_end_site,
						      kp)->at;
	struct dcrace_slot *s;

	site_hit(SH_END_RETURN);
	/* no walk waits for its result: every walk that left RCU mode */
	if (ends_none_pending())
		return 0;
	s = slot_find(current);
	/* test_miss_returns=1: as if this return were not probed (not in
	 * the load's self-check, which needs its judged steps)
	 */
	if (!s || !s->end_pending || miss_return())
		return 0;
	end_judge(s, (int)regs->ax, r->fn);
	slot_release(s);
	return 0;
}

/*
 * do_exit(), at its entry: a slot the exiting task still holds is
 * reclaimed (an end whose walk function returned where no probe is, a
 * step whose return was missed). Nothing else would free it: its owner
 * pointer names a task that is about to be freed.
 */
int task_exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s;

	site_hit(SH_RECLAIM);
	s = slot_find(current);
	if (!s)
		return 0;
	if (s->end_pending)
		cnt_inc(C_END_UNJUDGED);
	cnt_inc(C_SLOTS_RECLAIMED);
	slot_release(s);
	return 0;
}

/*
 * At a call of try_to_unlazy(nd) in the walk itself (LOOKUP_RCU is set:
 * it BUG()s otherwise; the argument is in place): a revalidation before a
 * hard error. On stale state it fails: a catch, with the errno the stale
 * state implied (dcrace_unlazy_errno()).
 */
int unlazy_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_nd_head *nd = (struct dcrace_nd_head *)
				    regs_get_kernel_argument(regs, 0);
	unsigned long caller = (unsigned long)p->addr;
	struct dcrace_end_snap *e = this_cpu_ptr(&unlazy_scratch);
	int err;

	site_hit(SH_UNLAZY);
	if (!knob(K_ENABLED) || !(READ_ONCE(nd->flags) & LOOKUP_RCU))
		return 0;
	if (!READ_ONCE(nd->path.dentry))
		return 0;
	end_read(e, nd);
	err = dcrace_unlazy_errno(e->dentry_stale || e->inode_stale,
				  e->inode_dir, e->can_lookup);
	if (err) {
		cnt_inc(C_END_CAUGHT);
		report_end_event(e, DCRACE_END_CAUGHT, err,
				 ktime_get_mono_fast_ns(),
				 walk_fn_name(caller));
	}
	return 0;
}
