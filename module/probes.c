// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the probe table, and arming one of its probes (the arm layer's
 * lowest file: sites.c arms the probes at the layout's addresses, arm.c
 * all of them in order and disarms them; the list of probes is there).
 */
#include <linux/string.h>
#include "internal.h"

static struct kretprobe walk_rp, rcu_rp;
static struct kprobe lookup_kp, step_kp, kill_kp, term_kp;
struct kprobe rcu_kp;		/* fast: after lookup_fast's call */
struct kprobe walk_kp;		/* fast: walk_component's entry */

struct dcrace_probe probes[NR_PROBES] = {
	[P_WALK] = { "walk_component", { "walk_component" }, true, true,
		     &walk_rp, NULL },
	[P_LOOKUP] = { "do_lookup", { "lookup_fast", "do_lookup" }, false,
		       false, NULL, &lookup_kp, true },
	[P_RCU] = { "rcu_lookup", { "__d_lookup_rcu" }, true, true, &rcu_rp,
		    NULL },
	[P_STEP] = { "step_into", { "step_into" }, false, true, NULL,
		     &step_kp },
	/*
	 * __dentry_kill only: every kill passes through it, and an
	 * out-of-line dentry_kill() would miss shrink_dentry_list()'s
	 * direct calls (the pruning path of the bug).
	 */
	[P_KILL] = { "dentry_kill", { "__dentry_kill" }, false, false, NULL,
		     &kill_kp },
	/* open()'s last step ends there (open.c) */
	[P_TERM] = { "terminate_walk", { "terminate_walk" }, false, false,
		     NULL, &term_kp },
};

static void probe_setup(enum dcrace_probe_id id, const char *sym)
{
	struct dcrace_probe *p = &probes[id];

	if (p->is_ret) {
		memset(p->rp, 0, sizeof(*p->rp));
		p->rp->kp.symbol_name = sym;
		p->rp->maxactive = 512;
		if (id == P_WALK) {
			p->rp->entry_handler = walk_entry;
			p->rp->handler = walk_ret;
			p->rp->data_size = sizeof(struct dcrace_slot *);
		} else {
			p->rp->entry_handler = rcu_entry;
			p->rp->handler = rcu_ret;
			p->rp->data_size = sizeof(struct dcrace_rcu_data);
		}
		return;
	}
	memset(p->kp, 0, sizeof(*p->kp));
	p->kp->symbol_name = sym;
	p->kp->pre_handler = id == P_LOOKUP ? lookup_pre :
			     id == P_STEP ? step_pre :
			     id == P_TERM ? term_pre : kill_pre;
}

/*
 * fast=1: walk_component as an entry kprobe (its returns are probed where
 * they land), rcu_lookup as a kprobe just after lookup_fast()'s call of
 * __d_lookup_rcu(). An error when that is not possible here: use
 * kretprobes.
 */
static int probe_arm_fast(enum dcrace_probe_id id)
{
	struct dcrace_probe *p = &probes[id];
	unsigned long site;
	int err;

	if (id == P_WALK) {
		memset(&walk_kp, 0, sizeof(walk_kp));
		walk_kp.symbol_name = "walk_component";
		walk_kp.pre_handler = walk_pre;
		err = register_kprobe(&walk_kp);
		if (err)
			return err;
		p->sym = "walk_component";
	} else {
		site = dcrace_layout.rcu_site;
		if (!site)
			return -ENOENT;
		memset(&rcu_kp, 0, sizeof(rcu_kp));
		rcu_kp.addr = (kprobe_opcode_t *)site;
		rcu_kp.pre_handler = rcu_site_pre;
		err = register_kprobe(&rcu_kp);
		if (err)
			return err;
		sprint_symbol(p->where, site);
		p->sym = p->where;
	}
	p->fast = true;
	return 0;
}

int probe_arm(enum dcrace_probe_id id)
{
	struct dcrace_probe *p = &probes[id];
	unsigned int i;
	int err = -ENOENT;

	if (fast && (id == P_WALK || id == P_RCU) && !probe_arm_fast(id))
		return 0;
	for (i = 0; i < ARRAY_SIZE(p->syms) && p->syms[i]; i++) {
		probe_setup(id, p->syms[i]);
		err = p->is_ret ? register_kretprobe(p->rp) :
				  register_kprobe(p->kp);
		if (!err) {
			p->sym = p->syms[i];
			if (id == P_STEP)
				WRITE_ONCE(step_probed, true);
			return 0;
		}
	}
	return err;
}

/* Whether probe @i is to be armed at all ("off" in "probes" if not). */
bool probe_wanted(int i)
{
	return !(probes[i].extra && !extra_probes) && !(skip_probes & BIT(i));
}

/* Returns the kretprobes (fast=0) could not probe. */
int kretprobes_missed(void)
{
	return (probes[P_WALK].sym ? walk_rp.nmissed : 0) +
	       (probes[P_RCU].sym ? rcu_rp.nmissed : 0);
}
