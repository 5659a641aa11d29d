// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: open()'s last component, and the other callers of lookup_fast()
 * (the core: the handlers; their probes are found by layout.c and armed by
 * sites.c).
 *
 * open_last_lookups() (inlined into path_openat() on our builds) calls
 * lookup_fast() and step_into() itself, not through walk_component() (in
 * 6.12 through lookup_fast_for_open(), which the compiler may inline twice,
 * once for O_CREAT). Its step is opened at the rcu_lookup site when
 * lookup_fast()'s return address (at the stack word k_lookup learnt at
 * load, learn.c) is one after a call of it in path_openat(),
 * open_last_lookups() or lookup_fast_for_open(). The step ends in
 * terminate_walk(), which path_openat() always calls (probed at its entry,
 * an optimized kprobe: on its call instructions, int3 traps since a call
 * cannot be moved into a jump's detour buffer, an open() paid more than
 * what the entry costs a stat(): a successful walk has left RCU mode by
 * then, and the handler only releases the slot): while LOOKUP_RCU is set
 * there, the RCU section in which the dentry was found is still open and
 * judge_snapshot() reads the dentry. The step's result is known only at
 * path_openat()'s return (its ERR_PTR), after terminate_walk() left RCU:
 * kprobes on the instructions after each call of path_openat()
 * (do_filp_open(), do_file_open_root()), armed at load, judge the snapshot
 * there (judge_verdict(), no dentry read). Every one of them, or open() is
 * not judged at all (a step whose return is not probed would never be).
 * terminate_walk() releases whatever else the task's slot holds. Any other
 * caller of lookup_fast() seen at the rcu_lookup site is counted
 * (other_lookups) and listed in "probes".
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/namei.h>
#include "internal.h"

/* The steps opened after each of open()'s calls of lookup_fast(). */
static DEFINE_PER_CPU(u64 [DCRACE_OPEN_LOOKUPS], open_lookup_hits);

/* Callers of lookup_fast() that are neither walk_component() nor open. */
static unsigned long other_callers[DCRACE_OTHER_CALLERS];
static atomic64_t other_hits[DCRACE_OTHER_CALLERS];

/*
 * At the rcu_lookup site, with no walk_component() step of ours open:
 * open the step of open()'s last lookup, or count another caller.
 */
void lookup_other(struct pt_regs *regs, struct dentry *dentry)
{
	const struct dcrace_layout *l = &dcrace_layout;
	const unsigned long *sp = (const unsigned long *)regs->sp;
	int k = READ_ONCE(k_lookup), i;
	unsigned long caller;

	if (!dentry || k < 0 || READ_ONCE(stack_learning))
		return;
	caller = sp[k];
	for (i = 0; i < l->nr_open_lookups; i++) {
		if (caller != l->open_lookup_rets[i])
			continue;
		if (!READ_ONCE(open_on))
			return;
		this_cpu_inc(open_lookup_hits[i]);
		if (!sample_out())
			step_open_sampled(0, 0, LK_OPEN, dentry);
		return;
	}
	/* walk_component's, not tracked (a site not armed yet) */
	if (caller == l->wc_lookup_ret)
		return;
	cnt_inc(C_OTHER_LOOKUPS);
	for (i = 0; i < DCRACE_OTHER_CALLERS; i++) {
		unsigned long c = READ_ONCE(other_callers[i]);

		if (!c && !cmpxchg(&other_callers[i], 0, caller))
			c = caller;
		if (c == caller) {
			atomic64_inc(&other_hits[i]);
			return;
		}
	}
}

/*
 * terminate_walk(nd), at its entry: the end of the walk. The step of
 * open()'s last component, still in RCU mode (the section in which its
 * dentry was found), is snapshot here; a NULL inode waits for
 * path_openat()'s return, where the result is known. Whatever else the
 * task's slot holds is released: a walk that left RCU mode (every
 * successful one, after complete_walk()) has nothing to read, and a slot
 * left over from an earlier walk must never be judged here (its dentry
 * may be long freed; the nameidata's address repeats).
 */
int term_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_nd_head *nd = (struct dcrace_nd_head *)
				    regs_get_kernel_argument(regs, 0);
	bool rcu = READ_ONCE(nd->flags) & LOOKUP_RCU;
	const struct dcrace_watch *w;
	struct dcrace_slot *s;
	bool keep = false, end;

	hit(P_TERM);
	s = slot_find(current);
	end = rcu && READ_ONCE(end_on) && knob(K_ENABLED) && !sample_out();
	if (!s && !end)
		return 0;
	if (s && s->kind == LK_OPEN) {
		w = watching();
		if (unlikely(w))
			w->step_closed(s);
		if (s->valid && s->nd == nd && !s->snapped && rcu) {
			judge_snapshot(s, nd);
			keep = slot_snap(s)->inode_null;
		}
	}
	/* the walk gives up in RCU mode: its end is judged at the return */
	if (end) {
		if (!s)
			s = slot_claim(current);
		if (!s) {
			cnt_inc(C_SLOTS_FULL);
			return 0;
		}
		end_snapshot(s, nd);
		if (!keep)
			slot_reset_step(s);
		return 0;
	}
	if (!keep)
		slot_release(s);
	return 0;
}

/* After a call of path_openat(): rax is its file or ERR_PTR. */
int open_ret_pre(struct kprobe *p, struct pt_regs *regs)
{
	void *file = (void *)regs->ax;
	long ret = IS_ERR(file) ? PTR_ERR(file) : 0;
	struct dcrace_slot *s;

	site_hit(SH_OPEN_RETURN);
	s = slot_find(current);

	/* test_miss_returns=1: as if this return were not probed (not in
	 * the load's self-check, which needs its judged steps)
	 */
	if (!s || miss_return())
		return 0;
	end_judge(s, ret, WF_OPEN);
	if (s->kind != LK_OPEN) {
		slot_release(s);
		return 0;
	}
	if (s->snapped && slot_snap(s)->inode_null) {
		if (dcrace_result_judged((int)ret))
			judge_verdict(s, ret, ktime_get_mono_fast_ns());
		else
			cnt_inc(C_OPEN_UNJUDGED);
	}
	slot_release(s);
	return 0;
}

/* "reset": the open steps counted per call site. */
void open_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu(open_lookup_hits, cpu), 0,
		       sizeof(open_lookup_hits));
}

/* "probes": the steps opened after open()'s call of lookup_fast() @i. */
u64 open_lookup_hits_sum(unsigned int i)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu(open_lookup_hits, cpu)[i];
	return n;
}

/* "probes": other caller @i of lookup_fast() (0: none) and its *@hits. */
unsigned long open_other_caller(unsigned int i, s64 *hits)
{
	*hits = atomic64_read(&other_hits[i]);
	return READ_ONCE(other_callers[i]);
}
