// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: arming the kprobes at addresses rather than symbols: the return
 * sites of walk_component() the walks teach (from a work item), the exits
 * and path_openat()'s return sites that the layout found. The handlers
 * are walk.c's and open.c's.
 */
#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "internal.h"

/* ---- walk_component's return sites --------------------------------------- */

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

/* walk.c's site_irq_work, queued where a site is learnt (site_learn()) */
static void site_irq_fn(struct irq_work *w)
{
	schedule_work(&site_work);
}

/* At load, before any probe: set up the irq_work the handlers queue. */
void sites_init(void)
{
	init_irq_work(&site_irq_work, site_irq_fn);
}

/*
 * At load, without exit mode: walk steps end at return sites, learn them
 * (return sites are learnt only once the load chose them, until
 * unloading: a walk between the walk_component probe's arming and that
 * choice would otherwise arm a site next to the exits, an int3 trap for
 * nothing).
 */
void sites_open(void)
{
	/* pairs with site_learn(): site_irq_work is set up */
	smp_store_release(&sites_learning, true);
}

/* The warm-up's sites: armed when this returns. */
void sites_flush(void)
{
	irq_work_sync(&site_irq_work);
	flush_work(&site_work);
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

/* ---- the exits (exit mode) ----------------------------------------------- */

static struct dcrace_exit exits[DCRACE_EXITS];
static unsigned int nr_exits;

/*
 * At load, before the walk probes: a probe at every exit the layout found
 * (exits.c), or none (the caller then arms the step_into entry probe and
 * return sites are used).
 */
int exits_arm(void)
{
	const struct dcrace_layout *l = &dcrace_layout;
	struct dcrace_exit *e;
	int err;

	if (!l->nr_exits)
		return -EOPNOTSUPP;
	for (nr_exits = 0; nr_exits < l->nr_exits; nr_exits++) {
		e = &exits[nr_exits];
		memset(e, 0, sizeof(*e));
		e->kp.addr = (kprobe_opcode_t *)l->exits[nr_exits].addr;
		e->kp.pre_handler = exit_pre;
		/* set before it can run */
		e->at = l->exits[nr_exits];
		err = register_kprobe(&e->kp);
		if (err) {
			pr_info("dcrace: cannot probe the ret at %pS: %d; walk steps end at return sites\n",
				e->kp.addr, err);
			exits_disarm();
			return err;
		}
		sprint_symbol(e->name, e->at.addr);
	}
	WRITE_ONCE(exit_mode, true);
	probes[P_STEP].sym = probes[P_STEP].syms[0];
	WRITE_ONCE(step_probed, true);
	return 0;
}

/*
 * The exits' kprobes: added to the unregistering batch @kps of *@n (for
 * disarm_all()) when @kps is given; returns their nmissed, summed.
 */
unsigned long exits_kprobes(struct kprobe **kps, int *n)
{
	if (kps)
		kps_add(kps, n, exits, nr_exits);
	return kps_missed(exits, nr_exits);
}

/* Unregister the exits armed so far (a failed exits_arm()). */
void exits_disarm(void)
{
	struct kprobe *kps[DCRACE_EXITS];
	int n = 0;

	exits_kprobes(kps, &n);
	if (n)
		unregister_kprobes(kps, n);
	exits_clear();
	probes[P_STEP].sym = NULL;
	WRITE_ONCE(step_probed, false);
}

/* After disarm_all(): forget them. */
void exits_clear(void)
{
	memset(exits, 0, sizeof(exits));
	nr_exits = 0;
	WRITE_ONCE(exit_mode, false);
}

/* "probes": exit @i's place, NULL past the last. */
const char *exit_name(unsigned int i)
{
	return i < nr_exits ? exits[i].name : NULL;
}

/* ---- path_openat()'s return sites, terminate_walk() ---------------------- */

struct dcrace_open_site {
	struct kprobe kp;
	char name[KSYM_SYMBOL_LEN];
};

static struct dcrace_open_site open_sites[DCRACE_OPEN_SITES];
static unsigned int nr_open_sites;

static int open_site_arm(unsigned long addr)
{
	struct dcrace_open_site *st = &open_sites[nr_open_sites];
	int err;

	memset(&st->kp, 0, sizeof(st->kp));
	st->kp.addr = (kprobe_opcode_t *)addr;
	st->kp.pre_handler = open_ret_pre;
	sprint_symbol(st->name, addr);
	/* skip_open_return=1 (tests): the first site is not probed */
	err = skip_open_return && !nr_open_sites ? -ECANCELED :
						   register_kprobe(&st->kp);
	if (err) {
		pr_warn("dcrace: open()'s last component is not judged: path_openat's return to %s not probed (%d%s)\n",
			st->name, err, err == -ECANCELED ? ", skip_open_return" : "");
		return err;
	}
	nr_open_sites++;
	return 0;
}

/* Unregister what open_arm() armed (it found a piece missing). */
static void open_disarm(void)
{
	struct kprobe *kps[DCRACE_OPEN_SITES + 1];
	int n = 0;

	open_kprobes(kps, &n);
	if (probes[P_TERM].sym)
		kps[n++] = probes[P_TERM].kp;
	if (n)
		unregister_kprobes(kps, n);
	probes[P_TERM].sym = NULL;
	memset(open_sites, 0, sizeof(open_sites));
	nr_open_sites = 0;
}

/*
 * open()'s last component: terminate_walk() and a probe after every call
 * of path_openat() (the layout found them all, or none), or nothing.
 */
int open_arm(void)
{
	const struct dcrace_layout *l = &dcrace_layout;
	unsigned int i;

	/* kretprobes (fast=0): no walk ends; rcu_lookup in skip_probes: no open() */
	if (!probes[P_RCU].fast && probe_wanted(P_RCU))
		return 0;
	if (!l->nr_open_lookups) {
		pr_warn("dcrace: no call of lookup_fast() found for open(); its last component is not judged\n");
		return 0;
	}
	if (!probe_wanted(P_TERM) || probe_arm(P_TERM)) {
		pr_warn("dcrace: probe terminate_walk missing; open()'s last component is not judged\n");
		return 0;
	}
	if (!probes[P_RCU].fast || (skip_probes & BIT(SKIP_OPEN_RETURN)))
		return 0;
	for (i = 0; i < l->nr_open_rets; i++) {
		if (open_site_arm(l->open_rets[i])) {
			open_disarm();
			return 0;
		}
	}
	if (!l->nr_open_rets) {
		open_disarm();
		return 0;
	}
	WRITE_ONCE(open_on, true);
	return 0;
}

/* Add the armed kprobes to the unregistering batch @kps (disarm_all()). */
void open_kprobes(struct kprobe **kps, int *n)
{
	kps_add(kps, n, open_sites, nr_open_sites);
}

unsigned long open_kprobes_missed(void)
{
	return kps_missed(open_sites, nr_open_sites);
}

/* After disarm_all(): forget everything. */
void open_clear(void)
{
	WRITE_ONCE(open_on, false);
	memset(open_sites, 0, sizeof(open_sites));
	nr_open_sites = 0;
}

/* "probes": path_openat()'s return site @i, NULL past the last. */
const char *open_site_name(unsigned int i)
{
	return i < nr_open_sites ? open_sites[i].name : NULL;
}

/* ---- the walk functions' return sites, try_to_unlazy() (end.c) ---------- */

static struct dcrace_end_site end_sites[DCRACE_END_SITES];
static unsigned int nr_end_sites;
static struct dcrace_end_site unlazy_sites[DCRACE_UNLAZY_SITES];
static unsigned int nr_unlazy_sites;
/* do_exit(): the slots of exiting tasks reclaimed (end.c) */
static struct kprobe exit_kp;
static bool exit_armed;

/* A kprobe at @addr, its handler @pre, named; false if refused. */
static bool end_site_arm(struct dcrace_end_site *st, unsigned long addr,
			 kprobe_pre_handler_t pre)
{
	int err;

	memset(&st->kp, 0, sizeof(st->kp));
	st->kp.addr = (kprobe_opcode_t *)addr;
	st->kp.pre_handler = pre;
	sprint_symbol(st->name, addr);
	err = register_kprobe(&st->kp);
	if (err)
		pr_warn("dcrace: no probe at %s (%d): %s\n", st->name, err,
			pre == unlazy_pre ? "its revalidations are not counted" :
			"the walk ends returning there are not judged");
	return !err;
}

/*
 * The ends of RCU walks: terminate_walk() (open_arm() armed it) and a
 * probe after every call of path_lookupat() and path_parentat() the layout
 * found (path_openat()'s are open()'s); try_to_unlazy() for the catches.
 * A site that cannot be probed leaves its function's ends unjudged
 * ("probes": walk_end ... missing), not the others.
 */
int end_arm(void)
{
	const struct dcrace_layout *l = &dcrace_layout;
	unsigned int i;

	if (!probes[P_TERM].sym || !l->nr_end_rets)
		return 0;
	for (i = 0; i < l->nr_end_rets && !(skip_probes & BIT(SKIP_END_RETURN));
	     i++) {
		struct dcrace_end_site *st = &end_sites[nr_end_sites];

		st->at = l->end_rets[i];
		if (end_site_arm(st, st->at.addr, end_ret_pre))
			nr_end_sites++;
	}
	for (i = 0; i < l->nr_unlazy_calls && !(skip_probes & BIT(SKIP_UNLAZY));
	     i++) {
		struct dcrace_end_site *st = &unlazy_sites[nr_unlazy_sites];

		if (end_site_arm(st, l->unlazy_calls[i], unlazy_pre))
			nr_unlazy_sites++;
	}
	if (!nr_unlazy_sites && !(skip_probes & BIT(SKIP_UNLAZY)))
		pr_warn("dcrace: no call of try_to_unlazy() probed in link_path_walk(); end_caught stays 0\n");
	if (!(skip_probes & BIT(SKIP_RECLAIM))) {
		exit_kp.symbol_name = "do_exit";
		exit_kp.pre_handler = task_exit_pre;
		exit_armed = !register_kprobe(&exit_kp);
		if (!exit_armed)
			pr_warn("dcrace: no probe on do_exit(): slots of exiting tasks are not reclaimed\n");
	}
	WRITE_ONCE(end_on, true);
	return 0;
}

/* "probes": are @fn's RCU-mode ends judged? */
bool end_fn_covered(enum dcrace_walk_fn_id fn)
{
	unsigned int i;

	if (!READ_ONCE(end_on))
		return false;
	if (fn == WF_OPEN)
		return open_covered();
	for (i = 0; i < nr_end_sites; i++)
		if (end_sites[i].at.fn == fn)
			return true;
	return false;
}

void end_kprobes(struct kprobe **kps, int *n)
{
	kps_add(kps, n, end_sites, nr_end_sites);
	kps_add(kps, n, unlazy_sites, nr_unlazy_sites);
	if (exit_armed)
		kps[(*n)++] = &exit_kp;
}

unsigned long end_kprobes_missed(void)
{
	return kps_missed(end_sites, nr_end_sites) +
	       kps_missed(unlazy_sites, nr_unlazy_sites) +
	       (exit_armed ? exit_kp.nmissed : 0);
}

/* After disarm_all(): forget everything. */
void end_clear(void)
{
	WRITE_ONCE(end_on, false);
	memset(end_sites, 0, sizeof(end_sites));
	nr_end_sites = 0;
	memset(unlazy_sites, 0, sizeof(unlazy_sites));
	nr_unlazy_sites = 0;
	memset(&exit_kp, 0, sizeof(exit_kp));
	exit_armed = false;
}

/* "probes": is do_exit() probed (the slots of exiting tasks reclaimed)? */
bool exit_reclaim_armed(void)
{
	return exit_armed;
}

/* "probes": the walk functions' return site @i, NULL past the last. */
const char *end_site_name(unsigned int i)
{
	return i < nr_end_sites ? end_sites[i].name : NULL;
}

/* "probes": the walk's call @i of try_to_unlazy(), NULL past the last. */
const char *unlazy_site_name(unsigned int i)
{
	return i < nr_unlazy_sites ? unlazy_sites[i].name : NULL;
}
