// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the probe table, arming and disarming.
 *
 * Probes (fast=1, the default: no return probes on the hot path; in stack
 * mode, after the load's warm-up, the walk_component entry probe is gone
 * and rcu_lookup opens the steps, see sites.c):
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
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "internal.h"

static struct kretprobe walk_rp, rcu_rp;
static struct kprobe lookup_kp, step_kp, kill_kp, term_kp;
static struct kprobe rcu_kp;	/* fast: after lookup_fast's call */
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

static int lookup_pre(struct kprobe *p, struct pt_regs *regs)
{
	hit(P_LOOKUP);
	return 0;
}

/*
 * The start and size of the function @name, looked up by registering a
 * disabled kprobe: the kprobe core resolves the symbol and checks that it
 * can be probed, but a disabled probe is never armed (no int3 written into
 * code other CPUs may be running; see design.md, "TCG threading").
 */
noinline unsigned long func_start(const char *name, unsigned long *size)
{
	struct kprobe kp = { .symbol_name = name,
			     .flags = KPROBE_FLAG_DISABLED };
	char sym[KSYM_SYMBOL_LEN], *plus;
	unsigned long addr, off;

	if (register_kprobe(&kp))
		return 0;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/* "name+0xoff/0xsize": back to the start (past an endbr64) */
	sprint_symbol(sym, addr);
	plus = strchr(sym, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &off, size) != 2)
		return 0;
	return addr - off;
}

/*
 * The addresses just after the direct calls of @callee in @caller: up to
 * @max of them in *@after; returns how many there are (0 if the text is
 * not readable).
 */
unsigned int call_sites_after(const char *caller, const char *callee,
			      unsigned long *after, unsigned int max)
{
	unsigned long start, size, target;
	unsigned int n = 0;
	u8 *text;

	target = func_start(callee, &size);
	start = func_start(caller, &size);
	if (!target || !start || size > DCRACE_TEXT_MAX)
		return 0;
	text = kmalloc(size, GFP_KERNEL);
	if (!text)
		return 0;
	if (!copy_from_kernel_nofault(text, (void *)start, size))
		n = dcrace_find_calls_all(text, size, start, target, after,
					  max);
	kfree(text);
	return n;
}

/*
 * The address just after the one direct call of @callee in @caller, or 0
 * (no such call, or more than one, or not readable).
 */
unsigned long call_site_after(const char *caller, const char *callee)
{
	unsigned long after;

	return call_sites_after(caller, callee, &after, 1) == 1 ? after : 0;
}

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
		wc_lookup_ret = call_site_after("walk_component", "lookup_fast");
		p->sym = "walk_component";
	} else {
		site = call_site_after("lookup_fast", "__d_lookup_rcu");
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

/*
 * Arm every wanted probe. A required one that cannot be armed fails the
 * load (the caller disarms the rest); an optional one is only logged.
 */
int probes_arm_all(void)
{
	int i, err;

	/* step_into at its rets if it can (exits.c), chosen first */
	if (probe_wanted(P_STEP))
		exits_arm();
	for (i = 0; i < NR_PROBES; i++) {
		const struct dcrace_probe *p = &probes[i];

		/* armed by open_arm(), if open()'s lookup is found */
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
	return 0;
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
 * Unregister everything, the kprobes in one batch: unregister_kprobes()
 * waits for RCU (and the kprobe optimizer) once, not once per probe, which
 * under TCG on the debug kernel is most of what rmmod costs.
 */
void disarm_all(void)
{
	struct kprobe *kps[NR_PROBES + DCRACE_RET_SITES + DCRACE_OPEN_SITES +
			  DCRACE_EXITS];
	int i, n = 0;

	sites_close();
	for (i = NR_PROBES - 1; i >= 0; i--) {
		struct dcrace_probe *p = &probes[i];

		if (!p->sym)
			continue;
		if (p->fast) {
			kps[n++] = i == P_RCU ? &rcu_kp : &walk_kp;
		} else if (p->is_ret) {
			kretprobe_drain(i);
			unregister_kretprobe(p->rp);
		} else if (i != P_STEP || !exit_mode) {
			kps[n++] = p->kp;
		}
	}
	exits_kprobes(kps, &n);
	for (i = 0; i < DCRACE_RET_SITES; i++)
		if (sites[i].armed)
			kps[n++] = &sites[i].kp;
	open_kprobes(kps, &n);
	if (n)
		unregister_kprobes(kps, n);
	sites_sync();
	for (i = 0; i < NR_PROBES; i++) {
		probes[i].sym = NULL;
		probes[i].fast = false;
	}
	sites_clear();
	open_clear();
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
	return n + open_kprobes_missed() + exits_kprobes(NULL, NULL);
}

/* Returns the kretprobes (fast=0) could not probe. */
int kretprobes_missed(void)
{
	return (probes[P_WALK].sym ? walk_rp.nmissed : 0) +
	       (probes[P_RCU].sym ? rcu_rp.nmissed : 0);
}
