// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: open()'s last component, and the other callers of lookup_fast().
 *
 * open_last_lookups() (inlined into path_openat() on our builds) calls
 * lookup_fast() and step_into() itself, not through walk_component() (in
 * 6.12 through lookup_fast_for_open(), which the compiler may inline twice,
 * once for O_CREAT). Its step is opened at the rcu_lookup site when
 * lookup_fast()'s return address (at the stack word k_lookup learnt at
 * load, sites.c) is one after a call of it in path_openat(),
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

/* After open()'s calls of lookup_fast(), and the steps each opened. */
static unsigned long open_lookup_rets[DCRACE_OPEN_LOOKUPS];
static unsigned int nr_open_lookups;
static DEFINE_PER_CPU(u64 [DCRACE_OPEN_LOOKUPS], open_lookup_hits);

struct dcrace_open_site {
	struct kprobe kp;
	char name[KSYM_SYMBOL_LEN];
};

static struct dcrace_open_site open_sites[DCRACE_OPEN_SITES];
static unsigned int nr_open_sites;

/* Callers of lookup_fast() that are neither walk_component() nor open. */
static unsigned long other_callers[DCRACE_OTHER_CALLERS];
static atomic64_t other_hits[DCRACE_OTHER_CALLERS];

/* Every piece armed: path_openat()'s every return, terminate_walk(). */
static bool open_on;

bool open_covered(void)
{
	return READ_ONCE(open_on) && READ_ONCE(k_lookup) >= 0;
}

/*
 * At the rcu_lookup site, with no walk_component() step of ours open:
 * open the step of open()'s last lookup, or count another caller.
 */
void lookup_other(struct pt_regs *regs, struct dentry *dentry)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	int k = READ_ONCE(k_lookup), i;
	unsigned long caller;

	if (!dentry || k < 0 || stack_learning_now())
		return;
	caller = sp[k];
	for (i = 0; i < nr_open_lookups; i++) {
		if (caller != open_lookup_rets[i])
			continue;
		if (!READ_ONCE(open_on))
			return;
		this_cpu_inc(open_lookup_hits[i]);
		step_open_sampled(0, 0, LK_OPEN, dentry);
		return;
	}
	/* walk_component's, not tracked (a site not armed yet) */
	if (caller == wc_lookup_ret)
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
	struct dcrace_slot *s;

	hit(P_TERM);
	s = slot_find(current);
	if (!s)
		return 0;
	if (s->kind == LK_OPEN) {
		if (unlikely(READ_ONCE(selftest_on)))
			selftest_step_closed(s);
		if (s->valid && s->nd == nd && !s->snapped &&
		    (READ_ONCE(nd->flags) & LOOKUP_RCU)) {
			judge_snapshot(s, nd);
			if (slot_snap(s)->inode_null)
				return 0;
		}
	}
	slot_release(s);
	return 0;
}

/* After a call of path_openat(): rax is its file or ERR_PTR. */
static int open_ret_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s = slot_find(current);
	void *file = (void *)regs->ax;
	long ret = IS_ERR(file) ? PTR_ERR(file) : 0;

	if (!s || s->kind != LK_OPEN)
		return 0;
	if (s->snapped && slot_snap(s)->inode_null) {
		if (dcrace_result_judged((int)ret))
			judge_verdict(s, ret, ktime_get_mono_fast_ns());
		else
			cnt_inc(C_OPEN_UNJUDGED);
	}
	slot_release(s);
	return 0;
}

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

/*
 * A probe after every call of path_openat() in its callers, or none: an
 * open() returning where no probe is would leave its step unjudged.
 */
static int open_sites_arm(void)
{
	static const char * const callers[] = {
		"do_filp_open", "do_file_open_root",
	};
	unsigned long after[DCRACE_OPEN_SITES];
	unsigned int i, j, n, room;
	int err;

	for (i = 0; i < ARRAY_SIZE(callers); i++) {
		room = DCRACE_OPEN_SITES - nr_open_sites;
		n = call_sites_after(callers[i], "path_openat", after, room);
		if (!n || n > room) {
			pr_warn("dcrace: open()'s last component is not judged: %u calls of path_openat in %s (room for %u)\n",
				n, callers[i], room);
			return -ENOENT;
		}
		for (j = 0; j < n; j++) {
			err = open_site_arm(after[j]);
			if (err)
				return err;
		}
	}
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
 * open()'s calls of lookup_fast(), wherever they were inlined: 6.1's
 * open_last_lookups(), 6.12's lookup_fast_for_open() (in path_openat() on
 * Debian's 6.12 twice, the O_CREAT case apart). More than fit: none.
 */
static void open_lookups_find(void)
{
	static const char * const callers[] = {
		"path_openat", "open_last_lookups", "lookup_fast_for_open",
	};
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(callers); i++) {
		n = call_sites_after(callers[i], "lookup_fast",
				     open_lookup_rets + nr_open_lookups,
				     DCRACE_OPEN_LOOKUPS - nr_open_lookups);
		if (n > DCRACE_OPEN_LOOKUPS - nr_open_lookups) {
			nr_open_lookups = 0;
			return;
		}
		nr_open_lookups += n;
	}
}

int open_arm(void)
{
	if (!probes[P_RCU].fast)
		return 0;
	open_lookups_find();
	if (!nr_open_lookups) {
		pr_warn("dcrace: no call of lookup_fast() found for open(); its last component is not judged\n");
		return 0;
	}
	if (!probe_wanted(P_TERM) || probe_arm(P_TERM)) {
		pr_warn("dcrace: probe terminate_walk missing; open()'s last component is not judged\n");
		return 0;
	}
	if (open_sites_arm()) {
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

/* "reset": the open steps counted per call site. */
void open_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu(open_lookup_hits, cpu), 0,
		       sizeof(open_lookup_hits));
}

/* After disarm_all(): forget everything. */
void open_clear(void)
{
	WRITE_ONCE(open_on, false);
	memset(open_sites, 0, sizeof(open_sites));
	nr_open_sites = 0;
	memset(open_lookup_rets, 0, sizeof(open_lookup_rets));
	nr_open_lookups = 0;
}

/* The load's warm-up: one open() of our own (its last component). */
void open_warm_up(void)
{
	struct file *f = filp_open("/proc/self/status", O_RDONLY, 0);

	if (!IS_ERR(f))
		filp_close(f, NULL);
}

/* "probes": the callers of lookup_fast() and path_openat()'s return sites. */
void open_probes_show(struct seq_file *m)
{
	unsigned int i;

	if (wc_lookup_ret)
		seq_printf(m, "lookup_caller %pS walk %s %llu\n",
			   (void *)wc_lookup_ret, "tracked",
			   (u64)pcpu_sum(c[C_WALKS]));
	for (i = 0; i < nr_open_lookups; i++) {
		u64 n = 0;
		int cpu;

		for_each_possible_cpu(cpu)
			n += per_cpu(open_lookup_hits, cpu)[i];
		seq_printf(m, "lookup_caller %pS open %s %llu\n",
			   (void *)open_lookup_rets[i],
			   open_covered() ? "tracked" : "missing", n);
	}
	if (!nr_open_lookups)
		seq_puts(m, "lookup_caller open_last_lookups open missing 0\n");
	for (i = 0; i < DCRACE_OTHER_CALLERS; i++) {
		unsigned long c = READ_ONCE(other_callers[i]);

		if (c)
			seq_printf(m, "lookup_caller %pS other untracked %lld\n",
				   (void *)c, atomic64_read(&other_hits[i]));
	}
	for (i = 0; i < nr_open_sites; i++)
		seq_printf(m, "open_return %s kprobe armed -\n",
			   open_sites[i].name);
}
