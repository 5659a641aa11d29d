// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: walk_component()'s return sites, the load's warm-up walks, and
 * stack mode.
 *
 * fast=1 probes no return: walk_component's return addresses are learned
 * from its entry probe, and each gets a kprobe on the instruction there
 * (armed from a work item, in process context) whose handler sees the
 * step's return value in rax. A step whose return address has no armed
 * probe yet is not tracked (counted in steps_unjudged_new_site).
 *
 * Stack mode: the rcu_lookup probe also opens the step, so that
 * walk_component() needs no entry probe (one probe less per component).
 * At the rcu_lookup site the stack holds, at fixed word offsets for this
 * build, lookup_fast()'s return address (into walk_component(), when that
 * is the caller) and walk_component()'s own return address (a return
 * site). Both offsets are learnt at load from the warm-up walks, while
 * the entry probe still runs, by finding those known values on the stack.
 */
#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/namei.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "internal.h"

struct dcrace_site sites[DCRACE_RET_SITES];
/*
 * Return sites are learnt only once the load chose them for the walk
 * steps' ends (sites_open(), no exit mode), until unloading: a walk
 * between the walk_component probe's arming and that choice would
 * otherwise arm a site next to the exits, an int3 trap for nothing.
 */
static bool sites_learning;

#define DCRACE_STACK_SCAN	48

unsigned long wc_lookup_ret;	/* after walk_component's call of lookup_fast */
int k_lookup = -1;		/* lookup_fast's return address at the site */
static int k_walk = -1;		/* walk_component's, when it is the caller */
static int stack_seen;			/* learning hits that agreed */
static bool stack_bad;			/* learning hits disagreed */
static bool stack_learning;
bool stack_mode;

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

static int site_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s = slot_find(current);

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

static void site_work_fn(struct work_struct *w)
{
	int i, err;

	/* late_sites=1 (tests): arm late, while the workload runs */
	if (late_sites)
		msleep(100);
	for (i = 0; i < DCRACE_RET_SITES; i++) {
		struct dcrace_site *st = &sites[i];

		if (!READ_ONCE(st->addr) || st->armed || st->failed)
			continue;
		if (!READ_ONCE(sites_learning))
			return;
		memset(&st->kp, 0, sizeof(st->kp));
		st->kp.addr = (kprobe_opcode_t *)st->addr;
		st->kp.pre_handler = site_pre;
		err = register_kprobe(&st->kp);
		sprint_symbol(st->name, st->addr);
		if (err) {
			st->failed = true;
			pr_warn("dcrace: cannot probe walk_component's return to %s: %d\n",
				st->name, err);
			continue;
		}
		/* publish only a fully registered probe (site_armed()) */
		smp_store_release(&st->armed, true);
	}
}

static DECLARE_WORK(site_work, site_work_fn);

static void site_irq_fn(struct irq_work *w)
{
	schedule_work(&site_work);
}

static DEFINE_IRQ_WORK(site_irq_work, site_irq_fn);

static void site_learn(unsigned long ra)
{
	int i;

	if (!READ_ONCE(sites_learning))
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
bool site_ready(unsigned long ra)
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
 * Learn walk_component's usual return sites at load, before the workload
 * runs: a few walks of our own (a multi-component path, a symlink in the
 * middle, a last component), then arm what they taught synchronously.
 * Arming later, while other vCPUs run the walk, is what can go wrong under
 * multi-threaded TCG (a patched instruction not seen by a vCPU that keeps
 * executing its old translation; see docs/design.md).
 */
void warm_up_walks(void)
{
	static const char * const paths[] = {
		"/proc/self/status", "/sys/kernel", "/dev/null", "/",
	};
	struct path path;
	int i;

	for (i = 0; i < ARRAY_SIZE(paths); i++)
		if (!kern_path(paths[i], LOOKUP_FOLLOW, &path))
			path_put(&path);
	/* and an open(): its last component is open_last_lookups()' */
	open_warm_up();
}

void sites_warm_up(void)
{
	if (late_sites)
		return;
	warm_up_walks();
	irq_work_sync(&site_irq_work);
	flush_work(&site_work);
	if (!wc_lookup_ret)
		return;
	/*
	 * The sites are armed now: steps are tracked, offsets can be learnt
	 * (k_lookup also serves open() and the other callers of lookup_fast,
	 * with or without stack mode).
	 */
	WRITE_ONCE(stack_learning, true);
	warm_up_walks();
	WRITE_ONCE(stack_learning, false);
	if (stack_seen < 2 || stack_bad || k_lookup < 0 || k_walk < 0) {
		WRITE_ONCE(k_lookup, -1);
		return;
	}
	if (!stack_claim)
		return;
	/*
	 * From now on rcu_lookup claims the steps: disable the entry probe
	 * (no RCU wait here; disarm_all() unregisters it with the rest).
	 */
	WRITE_ONCE(stack_mode, true);
	disable_kprobe(&walk_kp);
}

/* At load, without exit mode: walk steps end at return sites, learn them. */
void sites_open(void)
{
	WRITE_ONCE(sites_learning, true);
}

/* Learn no more sites; the armed ones are unregistered by disarm_all(). */
void sites_close(void)
{
	WRITE_ONCE(sites_learning, false);
	irq_work_sync(&site_irq_work);
	cancel_work_sync(&site_work);
}

/*
 * After the probes are unregistered: a return-site handler may have read
 * sites_learning as true and queued the irq_work after sites_close()
 * synced it. No handler runs any more: wait for what is left.
 */
void sites_sync(void)
{
	irq_work_sync(&site_irq_work);
	cancel_work_sync(&site_work);
}

/* After disarm_all(): forget the sites. */
void sites_clear(void)
{
	memset(sites, 0, sizeof(sites));
}

bool stack_learning_now(void)
{
	return READ_ONCE(stack_learning);
}

/* At the rcu_lookup site during the warm-up: where are the two addresses? */
void stack_learn(const struct dcrace_slot *s, struct pt_regs *regs)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	int k, kl = -1, kw = -1;

	for (k = 0; k < DCRACE_STACK_SCAN; k++) {
		if (kl < 0 && sp[k] == wc_lookup_ret) {
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
int stack_mode_claim(struct pt_regs *regs)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	struct dentry *dentry = (struct dentry *)regs->ax;
	unsigned long ra;

	/* no dentry: the step leaves RCU mode or fails, nothing to judge */
	if (!dentry)
		return 0;
	if (sp[k_lookup] != wc_lookup_ret) {
		lookup_other(regs, dentry);
		return 0;
	}
	ra = sp[k_walk];
	if (!READ_ONCE(exit_mode) && !site_ready(ra))
		return 0;
	step_open_sampled(ra, (unsigned long)&sp[k_walk + 1], LK_WALK, dentry);
	return 0;
}
