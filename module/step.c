// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: one walk step, from its start to its judgment (the core: the
 * probe handlers in walk.c and open.c open, sample and end steps here;
 * judging calls down to kill.c, inject.c and report.c only).
 *
 * A step is walk_component() on one path component, or open()'s last
 * lookup (open.c). Its task owns a slot from the step's start
 * (walk_component entry, or the rcu_lookup probe in stack mode) to its
 * end, where it is judged.
 *
 * Lifetime rule: a dentry pointer sampled by the rcu_lookup probe is
 * dereferenced only at the end of the same step (judge_snapshot(): the
 * walk_component return handler, or terminate_walk() for open()), and
 * only while the walk is still in RCU mode (LOOKUP_RCU set), i.e. inside
 * the RCU read-side section in which it was found. Pointers
 * from the kill probe are compared, never dereferenced later.
 */
#include <linux/hash.h>
#include <linux/ktime.h>
#include <linux/namei.h>
#include <linux/seqlock.h>
#include "internal.h"

/* ---- per-slot snapshots (the slots: slots.c) ----------------------------- */

static struct dcrace_snap snaps[DCRACE_SLOTS];
static struct dcrace_end_snap end_snaps[DCRACE_SLOTS];

struct dcrace_snap *slot_snap(const struct dcrace_slot *s)
{
	return &snaps[s - dcrace_slots];
}

struct dcrace_end_snap *slot_end(const struct dcrace_slot *s)
{
	return &end_snaps[s - dcrace_slots];
}

/*
 * Walk ends waiting for their result, over all slots: the return sites
 * of the walk functions (end_ret_pre()) return at once while it is 0,
 * which it is for every walk that left RCU mode (a successful one).
 * Only the slot's owner sets or clears its end_pending.
 */
static atomic_t ends_pending = ATOMIC_INIT(0);

bool ends_none_pending(void)
{
	return !atomic_read(&ends_pending);
}

void slot_end_set(struct dcrace_slot *s)
{
	if (!s->end_pending) {
		s->end_pending = true;
		atomic_inc(&ends_pending);
	}
}

void slot_end_clear(struct dcrace_slot *s)
{
	if (s->end_pending) {
		s->end_pending = false;
		atomic_dec(&ends_pending);
	}
}

void slot_release(struct dcrace_slot *s)
{
	slot_reset_step(s);
	slot_end_clear(s);
	/* Order the clears above before the slot can be claimed again. */
	smp_store_release(&s->owner, NULL);
}

/*
 * Open a step of current's walk @nd that returns to @ret_site with the
 * stack pointer at @ret_sp (both 0: the kretprobe sees the return): claim
 * the task's slot and reset it.
 */
static __always_inline struct dcrace_slot *
step_open_inline(unsigned long ret_site, unsigned long ret_sp,
		 struct dcrace_nd_head *nd, enum dcrace_lookup_kind kind)
{
	struct dcrace_slot *s = slot_claim(current);
	const struct dcrace_watch *w;

	if (!s) {
		cnt_inc(C_SLOTS_FULL);
		return NULL;
	}
	/* still set: the last step's return probe did not run (missed) */
	if (s->ret_site)
		cnt_inc(C_STEP_LOST);
	/* a walk end whose return was not probed (a caller not found) */
	if (s->end_pending)
		cnt_inc(C_END_UNJUDGED);
	s->valid = false;
	s->stepped = false;
	s->snapped = false;
	slot_end_clear(s);
	s->kind = kind;
	s->ret_site = ret_site;
	s->ret_sp = ret_sp;
	s->nd = nd;
	cnt_inc(kind == LK_OPEN ? C_OPEN_LOOKUPS : C_WALKS);
	w = watching();
	if (unlikely(w))
		w->step_opened();
	return s;
}

struct dcrace_slot *step_open(unsigned long ret_site, unsigned long ret_sp,
			      struct dcrace_nd_head *nd, enum dcrace_lookup_kind kind)
{
	return step_open_inline(ret_site, ret_sp, nd, kind);
}

/*
 * sample=N: true for N - 1 of every N calls on this CPU (a countdown, as
 * KCSAN's skip_watch): the step or walk end is left alone, counted in
 * sampled_out. Never during the load's self-check.
 */
bool sample_out_slow(void)
{
	s64 n = knob(K_SAMPLE);

	/* n > 1 was tested inline (sample_out()); read again, it may fall */
	if (n <= 1 || unlikely(watching()))
		return false;
	if (this_cpu_read(dcrace_pcpu.sample_skip)) {
		this_cpu_dec(dcrace_pcpu.sample_skip);
		cnt_inc(C_SAMPLED_OUT);
		return true;
	}
	this_cpu_write(dcrace_pcpu.sample_skip, (unsigned int)(n - 1));
	return false;
}

/* ---- where the NULL-inode test is --------------------------------------- */

/*
 * Does the step test the inode for NULL before step_into()? Per lookup:
 * walk_component() has such a test on our patched kernels (patch 0001
 * puts the 3.0-era test back); stock 6.1 does not: its only NULL-inode
 * test is in step_into(), after the d_seq check that is the 2011 fix.
 * -1 (auto, parameter early_test) learns it from what the walks do; only
 * with the step_into probe armed, since without it no step looks
 * "stepped" and stock 6.1 would learn 1. open_last_lookups() has none in
 * 6.1 (only the open-last variant adds one): its value starts at 0 and is
 * learnt the same way (no parameter).
 */
static atomic_t early_test_seen[NR_LOOKUP_KINDS] = {
	[LK_WALK] = ATOMIC_INIT(-1),
	[LK_OPEN] = ATOMIC_INIT(0),
};

static int early_test_kind(enum dcrace_lookup_kind kind)
{
	s64 e = atomic64_read(&early_test.val);

	if (kind == LK_WALK && e >= 0)
		return (int)e;
	return atomic_read(&early_test_seen[kind]);
}

int early_test_now(void)
{
	return early_test_kind(LK_WALK);
}

static void early_test_learn(const struct dcrace_slot *s, long ret,
			     bool seq_changed)
{
	atomic_t *seen = &early_test_seen[s->kind];
	int cur, now;

	if ((s->kind == LK_WALK && atomic64_read(&early_test.val) >= 0) ||
	    !READ_ONCE(step_probed))
		return;
	cur = atomic_read(seen);
	now = dcrace_learn_early_test(cur, s->stepped, (int)ret, seq_changed);
	if (now != cur)
		atomic_set(seen, now);
}

/* ---- judging ------------------------------------------------------------- */

static void count_verdict(enum dcrace_verdict v, enum dcrace_lookup_kind kind)
{
	static const enum dcrace_counter c[] = {
		[DCRACE_GENUINE_NEGATIVE] = C_GENUINE_NEG,
		[DCRACE_PRUNED_NEGATIVE] = C_PRUNED_NEG,
		[DCRACE_FALSE_ENOENT] = C_FALSE_ENOENT,
		[DCRACE_CAUGHT] = C_CAUGHT,
		[DCRACE_CAUGHT_LATE] = C_CAUGHT_LATE,
		[DCRACE_UNEXPECTED] = C_UNEXPECTED,
	};
	/* the same verdicts per lookup (0: no per-lookup counter) */
	static const enum dcrace_counter per[NR_LOOKUP_KINDS][DCRACE_UNEXPECTED] = {
		[LK_WALK] = {
			[DCRACE_GENUINE_NEGATIVE] = C_WALK_GENUINE_NEG,
			[DCRACE_FALSE_ENOENT] = C_WALK_FALSE_ENOENT,
			[DCRACE_CAUGHT] = C_WALK_CAUGHT,
			[DCRACE_CAUGHT_LATE] = C_WALK_CAUGHT_LATE,
		},
		[LK_OPEN] = {
			[DCRACE_GENUINE_NEGATIVE] = C_OPEN_GENUINE_NEG,
			[DCRACE_PRUNED_NEGATIVE] = C_OPEN_PRUNED_NEG,
			[DCRACE_FALSE_ENOENT] = C_OPEN_FALSE_ENOENT,
			[DCRACE_CAUGHT] = C_OPEN_CAUGHT,
			[DCRACE_CAUGHT_LATE] = C_OPEN_CAUGHT_LATE,
		},
	};

	if (v == DCRACE_NONE || v >= ARRAY_SIZE(c))
		return;
	cnt_inc(c[v]);
	if (kind < NR_LOOKUP_KINDS && v < DCRACE_UNEXPECTED && per[kind][v])
		cnt_inc(per[kind][v]);
}

/*
 * The step's state at its end, read while the walk is still in RCU mode
 * (the caller checked LOOKUP_RCU), i.e. inside the RCU read-side section
 * in which s->dentry was found: the dentry is not dereferenced after
 * this. Only a NULL inode needs more than one read.
 */
void judge_snapshot(struct dcrace_slot *s, struct dcrace_nd_head *nd)
{
	struct dcrace_snap *sn = slot_snap(s);
	struct dentry *dentry = s->dentry;
	struct dentry *parent = READ_ONCE(nd->path.dentry);
	struct dcrace_kill_key key;

	s->snapped = true;
	sn->inode_null = !READ_ONCE(dentry->d_inode);
	if (!sn->inode_null)
		return;
	/* d_seq read after d_inode: a writer moves it before clearing */
	smp_rmb();
	/*
	 * For the parent filter (dcrace_parent_filtered()): nd->path is
	 * still the parent, a failed step does not move it.
	 */
	sn->parent_changed = parent &&
		raw_read_seqcount(&parent->d_seq) != nd->seq;
	sn->cur = raw_read_seqcount(&dentry->d_seq);
	sn->now = ktime_get_mono_fast_ns();
	/* the kill record's key: killing keeps d_parent and d_name */
	key.dentry = dentry;
	key.parent = READ_ONCE(dentry->d_parent);
	key.hash = READ_ONCE(dentry->d_name.hash);
	key.seq = s->seq;
	sn->killed = kill_find(&key, &sn->k);
	/*
	 * The dentry's own name, not nd->last: that may point into a symlink
	 * body that walk_component() released before step_into() (put_link()
	 * of a link's last component; KASAN caught it in the soak). The name
	 * (freed after a grace period, NUL-terminated) is valid in this RCU
	 * section; a rename may switch it, so its length is not trusted.
	 */
	dcrace_copy_name(sn->name, sizeof(sn->name),
			 READ_ONCE(dentry->d_name.name), &sn->name_truncated);
}

/*
 * Judge step @s from its snapshot, now that its result @ret is known
 * (judged at @now). Reads nothing but the slot.
 */
void judge_verdict(struct dcrace_slot *s, long ret, u64 now)
{
	const struct dcrace_snap *sn = slot_snap(s);
	struct dcrace_sighting sg = { .result = (int)ret, .inode_null = true };
	const struct dcrace_watch *w;
	enum dcrace_verdict v;

	if (!s->snapped || !sn->inode_null)
		return;
	/*
	 * -ECHILD with the parent's d_seq changed, before step_into():
	 * lookup_fast() may have bailed out on the parent before the step
	 * looked at the child's inode at all, so this is no NULL-inode
	 * sighting of the child. See dcrace_parent_filtered().
	 */
	if (dcrace_parent_filtered((int)ret, s->stepped, sn->parent_changed)) {
		cnt_inc(C_PARENT_ECHILD);
		return;
	}
	cnt_inc(C_NULL_INODE);
	sg.seq_changed = sn->cur != s->seq;
	sg.was_positive = s->positive || (sn->killed && sn->k.positive);
	/*
	 * d_seq unchanged, yet the sample saw an inode, or this lifetime's
	 * kill record says the dentry was positive when killed: a writer
	 * cleared d_inode without moving d_seq (kill_find() matched the
	 * record by key and an unelapsed grace period, no clock or d_seq).
	 */
	sg.killed_positive = sg.was_positive;
	early_test_learn(s, ret, sg.seq_changed);
	/*
	 * Caught by step_into(): late if an early test looked first (or we
	 * do not know yet); else step_into() holds the step's only test.
	 */
	sg.late = s->stepped && early_test_kind(s->kind) != 0;
	v = dcrace_classify(&sg);
	w = watching();
	if (unlikely(w))
		w->judged(s, v);
	count_verdict(v, s->kind);
	if (v == DCRACE_FALSE_ENOENT && !sg.seq_changed)
		cnt_inc(C_FALSE_ENOENT_SEQ);
	if (dcrace_verdict_is_race(v))
		report_event(s, sn, v, ret, now);
}

/*
 * The end of a step: judge it (if it ended in an error) and end it. In
 * stack mode the task keeps its slot for the walk's next step (no
 * cmpxchg per step): terminate_walk() releases it (term_pre()), or the
 * task's exit.
 */
void step_done_slow(struct dcrace_slot *s, long ret)
{
	const struct dcrace_watch *w = watching();
	bool rcu = READ_ONCE(s->nd->flags) & LOOKUP_RCU;

	if (unlikely(w))
		w->step_closed(s);
	if (s->valid && dcrace_result_judged((int)ret)) {
		if (rcu) {
			judge_snapshot(s, s->nd);
			judge_verdict(s, ret, slot_snap(s)->now);
		} else {
			cnt_inc(C_NOT_RCU);
		}
	}
	if (READ_ONCE(stack_mode))
		slot_reset_step(s);
	else
		slot_release(s);
	/*
	 * The second window: the step is done, the walker holds nd->inode,
	 * and link_path_walk() is about to run d_can_lookup() and the next
	 * may_lookup() on it.
	 */
	if (!ret && rcu)
		maybe_inject(DCRACE_WINDOW_STEP);
}

/* What the rcu_lookup probe records: the dentry and the d_seq it sampled. */
static __always_inline void rcu_sample_inline(struct dcrace_slot *s,
					      struct dentry *dentry,
					      unsigned int seq)
{
	const struct dcrace_watch *w;

	cnt_inc(C_RCU_LOOKUPS);
	if (!dentry)
		return;
	s->seq = seq;
	s->positive = !!READ_ONCE(dentry->d_inode);
	s->dentry = dentry;
	s->valid = true;
	w = watching();
	if (unlikely(w))
		w->sampled(s, dentry, seq);
	/* The window: d_seq sampled, d_inode not yet read by the walker. */
	maybe_inject(DCRACE_WINDOW_SAMPLE);
}

void rcu_sample(struct dcrace_slot *s, struct dentry *dentry,
		unsigned int seq)
{
	rcu_sample_inline(s, dentry, seq);
}

/*
 * A step opened at the rcu_lookup site itself (stack mode, open()'s last
 * lookup): the walk is current->nameidata's, and the sample is taken at
 * once from the d_seq __d_lookup_rcu() just stored in nd->next_seq.
 */
void step_open_sampled(unsigned long ret_site, unsigned long ret_sp,
		       enum dcrace_lookup_kind kind, struct dentry *dentry)
{
	struct dcrace_slot *s;

	s = step_open_inline(ret_site, ret_sp,
			     (struct dcrace_nd_head *)current->nameidata, kind);
	if (s)
		rcu_sample_inline(s, dentry, READ_ONCE(s->nd->next_seq));
}
