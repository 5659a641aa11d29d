// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: arming every probe, in order, from the layout (the arm layer's
 * top: probes.c arms one probe of the table, sites.c those at addresses),
 * and the order of unloading: stop learning sites, drain the kretprobes,
 * unregister every kprobe in one batch, wait for the work items.
 *
 * Probes (fast=1, the default: no return probes on the hot path; in stack
 * mode, after the load's warm-up, the walk_component entry probe is gone
 * and rcu_lookup opens the steps, see walk.c):
 *   walk_component  kprobe     one walk step begins; learns its return address
 *   (exits)         kprobes    at each ret of walk_component and step_into:
 *                              rax is the step's result (exits.c)
 *   (return sites)  kprobes    without exits: one per learned return address
 *                              of walk_component, rax is the step's result
 *   lookup_fast+N   kprobe     right after its call of __d_lookup_rcu: rax is
 *                              the dentry found, nd->next_seq the d_seq sampled
 *   step_into       kprobe     where 6.1 reads d_inode after the seq check: at
 *                              its rets (the exits), else at its entry
 *   __dentry_kill   kprobe     who pruned which dentry, and when
 *   terminate_walk  kprobe     the end of open()'s last step (open.c), with
 *                              kprobes after path_openat()'s calls
 *   lookup_fast     kprobe     hit counter only (extra_probes=1)
 * With fast=0 (or when a call site cannot be found) walk_component and
 * __d_lookup_rcu are kretprobes instead: same data, about twice the cost.
 */
#include <linux/delay.h>
#include "internal.h"

/*
 * Arm every wanted probe from the layout, open()'s last. A required one
 * that cannot be armed fails the load (the caller disarms the rest); an
 * optional one is only logged.
 */
int arm_all(void)
{
	int i, err;

	sites_init();
	/* step_into at its rets if it can (the layout's exits), chosen first */
	if (probe_wanted(P_STEP))
		exits_arm();
	for (i = 0; i < NR_PROBES; i++) {
		const struct dcrace_probe *p = &probes[i];

		/* armed by open_arm(), end_arm(), if open()'s lookup is found */
		if (!probe_wanted(i) || i == P_TERM ||
		    (i == P_STEP && exit_mode))
			continue;
		err = probe_arm(i);
		/* no exits with a walk_component kretprobe: step_into's entry */
		if (!err && i == P_WALK && exit_mode && !probes[P_WALK].fast)
			exits_disarm();
		if (!err)
			continue;
		if (p->required) {
			pr_err("dcrace: cannot work: no probe for %s (tried %s%s%s, error %d)\n",
			       p->name, p->syms[0], p->syms[1] ? ", " : "",
			       p->syms[1] ?: "", err);
			return err;
		}
		pr_warn("dcrace: probe %s missing (tried %s%s%s, error %d); continuing without it\n",
			p->name, p->syms[0], p->syms[1] ? ", " : "",
			p->syms[1] ?: "", err);
	}
	/* where walk steps end is chosen: return sites, if not the exits */
	if (!exit_mode)
		sites_open();
	open_arm();
	return end_arm();
}

/*
 * Unregistering a kretprobe while returns it hijacked are still in flight
 * hung or crashed the guest under load (6.1, x86 rethook, TCG). So first
 * stop new entries, then wait (sleeping, bounded) until every hijacked
 * return has come back through our handler, and only then unregister.
 */
static void kretprobe_drain(enum dcrace_probe_id id)
{
	struct dcrace_probe *p = &probes[id];
	long left;
	int i;

	disable_kretprobe(p->rp);
	left = pcpu_sum(inflight[id]);
	for (i = 0; i < 5000 && left > 0; i++) {
		usleep_range(1000, 2000);
		left = pcpu_sum(inflight[id]);
	}
	if (left > 0)
		pr_warn("dcrace: %s: %ld returns still in flight at unload\n",
			p->name, left);
}

/*
 * Every armed kprobe (not the kretprobes, not callbacks=1's) into @kps,
 * which has room for DCRACE_MAX_KPROBES; returns how many.
 */
int armed_kprobes(struct kprobe **kps)
{
	int i, n = 0;

	for (i = NR_PROBES - 1; i >= 0; i--) {
		struct dcrace_probe *p = &probes[i];

		if (!p->sym)
			continue;
		if (p->fast)
			kps[n++] = i == P_RCU ? &rcu_kp : &walk_kp;
		else if (!p->is_ret && (i != P_STEP || !exit_mode))
			kps[n++] = p->kp;
	}
	exits_kprobes(kps, &n);
	for (i = 0; i < DCRACE_RET_SITES; i++)
		if (sites[i].armed)
			kps[n++] = &sites[i].kp;
	open_kprobes(kps, &n);
	end_kprobes(kps, &n);
	return n;
}

/*
 * Unregister everything, the kprobes in one batch: unregister_kprobes()
 * waits for RCU (and the kprobe optimizer) once, not once per probe, which
 * under TCG on the debug kernel is most of what rmmod costs.
 */
void disarm_all(void)
{
	struct kprobe *kps[DCRACE_MAX_KPROBES];
	int i, n;

	sites_close();
	for (i = NR_PROBES - 1; i >= 0; i--) {
		struct dcrace_probe *p = &probes[i];

		if (p->sym && !p->fast && p->is_ret) {
			kretprobe_drain(i);
			unregister_kretprobe(p->rp);
		}
	}
	n = armed_kprobes(kps);
	if (n)
		unregister_kprobes(kps, n);
	sites_sync();
	for (i = 0; i < NR_PROBES; i++) {
		probes[i].sym = NULL;
		probes[i].fast = false;
	}
	WRITE_ONCE(step_probed, false);
	sites_clear();
	open_clear();
	end_clear();
	exits_clear();
}

/* Hits our kprobes lost to recursion (another probe running on the CPU). */
unsigned long kprobes_missed(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < NR_PROBES; i++) {
		const struct dcrace_probe *p = &probes[i];

		if (!p->sym)
			continue;
		if (p->fast)
			n += i == P_WALK ? walk_kp.nmissed : rcu_kp.nmissed;
		else if (!p->is_ret && (i != P_STEP || !exit_mode))
			n += p->kp->nmissed;
	}
	for (i = 0; i < DCRACE_RET_SITES; i++)
		/* pairs with site_work_fn(): the kprobe is registered */
		if (smp_load_acquire(&sites[i].armed))
			n += sites[i].kp.nmissed;
	return n + open_kprobes_missed() + end_kprobes_missed() +
	       exits_kprobes(NULL, NULL) + callbacks_missed();
}

