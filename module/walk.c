// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the walk's probe handlers (the core, with step.c and open.c):
 * walk_component()'s entry and return sites, the exits, the rcu_lookup
 * site (stack mode), step_into(), the kretprobes of fast=0. They open,
 * sample and end steps (step.c); nothing here runs at load but what the
 * load's own walks make the handlers do. layout.c finds the places,
 * probes.c and sites.c arm them.
 *
 * fast=1 probes no return: walk_component's return addresses are learned
 * from its entry probe, and each gets a kprobe on the instruction there
 * (armed from a work item, in process context, sites.c) whose handler sees
 * the step's return value in rax. A step whose return address has no armed
 * probe yet is not tracked (counted in steps_unjudged_new_site).
 *
 * Stack mode: the rcu_lookup probe also opens the step, so that
 * walk_component() needs no entry probe (one probe less per component).
 * At the rcu_lookup site the stack holds, at fixed word offsets for this
 * build, lookup_fast()'s return address (into walk_component(), when that
 * is the caller) and walk_component()'s own return address (a return
 * site). Both offsets are learnt at load from the warm-up walks (learn.c),
 * while the entry probe still runs, by finding those known values on the
 * stack (stack_learn()).
 */
#include <linux/irq_work.h>
#include "internal.h"

#define DCRACE_STACK_SCAN	48

struct dcrace_site sites[DCRACE_RET_SITES];
struct irq_work site_irq_work;

static bool site_armed(unsigned long ra)
{
	int i;

	for (i = 0; i < DCRACE_RET_SITES; i++) {
		unsigned long a = READ_ONCE(sites[i].addr);

		if (!a)
			return false;
		if (a != ra)
			continue;
		/* pairs with the release in site_work_fn(): kp is set up */
		return smp_load_acquire(&sites[i].armed);
	}
	return false;
}

/* At a learnt return site of walk_component(): rax is the step's result. */
int site_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s;

	site_hit(SH_WALK_RETURN);
	s = slot_find(current);

	/*
	 * Only the step that is returning here: the stack pointer recorded
	 * when it opened must be the one at its return (a step that opened
	 * no slot, e.g. "..", may return here too, and must not close a
	 * stale one).
	 */
	if (!s || !dcrace_step_returns(READ_ONCE(s->owner), current,
				       s->ret_site, s->ret_sp,
				       (unsigned long)p->addr, regs->sp))
		return 0;
	step_done(s, (long)regs->ax);
	return 0;
}

static void site_learn(unsigned long ra)
{
	int i;

	/* pairs with sites_open(): site_irq_work is set up */
	if (!smp_load_acquire(&sites_learning))
		return;
	for (i = 0; i < DCRACE_RET_SITES; i++) {
		unsigned long a = READ_ONCE(sites[i].addr);

		if (a == ra)
			return;
		if (!a && !cmpxchg(&sites[i].addr, 0, ra)) {
			irq_work_queue(&site_irq_work);
			return;
		}
		if (READ_ONCE(sites[i].addr) == ra)
			return;
	}
}

/* Is return site @ra probed? If not, have it learnt; the step is not tracked. */
static bool site_ready(unsigned long ra)
{
	if (site_armed(ra))
		return true;
	site_learn(ra);
	cnt_inc(C_NEW_SITE);
	return false;
}

/* The fast walk_component entry probe: opens a step, learns return sites. */
int walk_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long ra = regs_get_kernel_stack_nth(regs, 0);

	hit(P_WALK);
	if (!knob(K_ENABLED) || READ_ONCE(stack_mode))
		return 0;
	if (READ_ONCE(exit_mode)) {
		/* "." and "..": handle_dots(), whose rets are not probed */
		if (READ_ONCE(((struct dcrace_nd_head *)
			       regs_get_kernel_argument(regs, 0))->last_type))
			return 0;
	} else if (!site_ready(ra)) {
		return 0;
	}
	/* at the return, the return address is popped */
	step_open(ra, regs->sp + sizeof(long),
		  (struct dcrace_nd_head *)regs_get_kernel_argument(regs, 0),
		  LK_WALK);
	return 0;
}

/*
 * At a ret of walk_component() or step_into() (exit mode): rax is the
 * step's result, the return address @e->pops words up says whose step.
 */
int exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct dcrace_exit_at *e = &container_of(p, struct dcrace_exit,
						       kp)->at;
	const unsigned long *sp = (const unsigned long *)regs->sp;
	struct dcrace_slot *s;

	site_hit(SH_WALK_EXIT);
	if (e->in_step)
		hit(P_STEP);
	s = slot_find(current);
	if (!s)
		return 0;
	/* open()'s last step calls step_into(); it ends in terminate_walk() */
	if (s->kind == LK_OPEN) {
		if (e->in_step)
			s->stepped = true;
		return 0;
	}
	if (!dcrace_step_returns(READ_ONCE(s->owner), current, s->ret_site,
				 s->ret_sp, sp[e->pops],
				 (unsigned long)&sp[e->pops + 1]))
		return 0;
	if (e->in_step)
		s->stepped = true;
	step_done(s, (long)regs->ax);
	return 0;
}

/* At the rcu_lookup site during the warm-up: where are the two addresses? */
static void stack_learn(const struct dcrace_slot *s, struct pt_regs *regs)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	int k, kl = -1, kw = -1;

	for (k = 0; k < DCRACE_STACK_SCAN; k++) {
		if (kl < 0 && sp[k] == dcrace_layout.wc_lookup_ret) {
			kl = k;
		} else if (kl >= 0 && sp[k] == s->ret_site) {
			kw = k;
			break;
		}
	}
	if (kl < 0 || kw < 0) {
		stack_bad = true;
		return;
	}
	if (stack_seen && (kl != k_lookup || kw != k_walk))
		stack_bad = true;
	k_lookup = kl;
	k_walk = kw;
	stack_seen++;
}

/* Stack mode, at the rcu_lookup site: open the step and sample it. */
static int stack_mode_claim(struct pt_regs *regs)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	struct dentry *dentry = (struct dentry *)regs->ax;
	unsigned long ra;

	/* no dentry: the step leaves RCU mode or fails, nothing to judge */
	if (!dentry)
		return 0;
	if (sp[k_lookup] != dcrace_layout.wc_lookup_ret) {
		lookup_other(regs, dentry);
		return 0;
	}
	ra = sp[k_walk];
	if (!READ_ONCE(exit_mode) && !site_ready(ra))
		return 0;
	if (sample_out())
		return 0;
	step_open_sampled(ra, (unsigned long)&sp[k_walk + 1], LK_WALK, dentry);
	return 0;
}

/* lookup_fast's entry (extra_probes=1): a hit counter only. */
int lookup_pre(struct kprobe *p, struct pt_regs *regs)
{
	hit(P_LOOKUP);
	return 0;
}

/* ---- kretprobe handlers (fast=0) ----------------------------------------- */

int walk_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct dcrace_slot **slot = (struct dcrace_slot **)ri->data;

	hit(P_WALK);
	if (!knob(K_ENABLED))
		return 1;
	*slot = step_open(0, 0, (struct dcrace_nd_head *)
			  regs_get_kernel_argument(regs, 0), LK_WALK);
	if (!*slot)
		return 1;
	this_cpu_inc(dcrace_pcpu.inflight[P_WALK]);
	return 0;
}

int walk_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct dcrace_slot **slot = (struct dcrace_slot **)ri->data;

	/* the slot is this step's only while current owns it */
	if (dcrace_step_returns(READ_ONCE((*slot)->owner), current,
				(*slot)->ret_site, (*slot)->ret_sp, 0, 0))
		step_done(*slot, (long)regs_return_value(regs));
	this_cpu_dec(dcrace_pcpu.inflight[P_WALK]);
	return 0;
}

int rcu_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct dcrace_rcu_data *d = (struct dcrace_rcu_data *)ri->data;

	hit(P_RCU);
	if (!knob(K_ENABLED))
		return 1;
	d->slot = slot_find(current);
	if (!d->slot)
		return 1;
	d->seqp = (unsigned int *)regs_get_kernel_argument(regs, 2);
	this_cpu_inc(dcrace_pcpu.inflight[P_RCU]);
	return 0;
}

int rcu_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct dcrace_rcu_data *d = (struct dcrace_rcu_data *)ri->data;
	struct dentry *dentry = (struct dentry *)regs_return_value(regs);
	struct dcrace_slot *s = d->slot;

	this_cpu_dec(dcrace_pcpu.inflight[P_RCU]);
	if (READ_ONCE(s->owner) != current)
		return 0;
	rcu_sample(s, dentry, READ_ONCE(*d->seqp));
	return 0;
}

/* ---- kprobe handlers (fast=1) -------------------------------------------- */

/*
 * Right after lookup_fast()'s call of __d_lookup_rcu(): rax is the dentry
 * found, and the d_seq it sampled is in nd->next_seq (its seqp argument).
 */
int rcu_site_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s;

	hit(P_RCU);
	if (!knob(K_ENABLED))
		return 0;
	if (READ_ONCE(stack_mode))
		return stack_mode_claim(regs);
	s = slot_find(current);
	/* no walk step of ours: open()'s last lookup, or another caller */
	if (!s || s->kind != LK_WALK) {
		lookup_other(regs, (struct dentry *)regs->ax);
		return 0;
	}
	if (READ_ONCE(stack_learning) && s->ret_site)
		stack_learn(s, regs);
	rcu_sample(s, (struct dentry *)regs->ax, READ_ONCE(s->nd->next_seq));
	return 0;
}

/*
 * step_into() runs only when the step's own NULL-inode test (if the kernel
 * has one before it) let the dentry through; its -ECHILD then comes from
 * 6.1's guard in step_into(), not from that test.
 */
int step_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s;

	hit(P_STEP);
	if (!knob(K_ENABLED))
		return 0;
	s = slot_find(current);
	if (s)
		s->stepped = true;
	return 0;
}
