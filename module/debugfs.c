// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: /sys/kernel/debug/dcrace/ (docs/debugfs.md): it shows the
 * counters and the probes, sets the knobs (state.c holds both); and the
 * module parameter ops that share the knobs' parsers. The interface, at
 * the top: it reads and writes the layers below, none calls it.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "internal.h"

static struct dentry *dbg_dir;

void reset_all(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct dcrace_pcpu *pc = per_cpu_ptr(&dcrace_pcpu, cpu);

		memset(pc->c, 0, sizeof(pc->c));
	}
	dcrace_ring_reset(&events);
	report_reset();
	kill_reset();
	open_reset();
}

static int stats_show(struct seq_file *m, void *v)
{
	u64 first, last, lost;
	int i;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	seq_printf(m, "enabled: %lld\n", knob(K_ENABLED));
	for (i = 0; i < C_FIRST_LATE; i++)
		seq_printf(m, "%s: %llu\n", dcrace_counter_names[i],
			   (u64)pcpu_sum(c[i]));
	seq_printf(m, "events: %llu\n", last);
	seq_printf(m, "events_lost: %llu\n", lost);
	seq_printf(m, "early_test: %d\n", early_test_now());
	seq_printf(m, "kprobe_missed: %lu\n", kprobes_missed());
	seq_printf(m, "kretprobe_missed: %d\n", kretprobes_missed());
	/* later additions: the lines above keep their places */
	for (i = C_FIRST_LATE; i < NR_COUNTERS; i++)
		seq_printf(m, "%s: %llu\n", dcrace_counter_names[i],
			   (u64)pcpu_sum(c[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

/* "probes": the callers of lookup_fast() and path_openat()'s return sites. */
static void lookup_callers_show(struct seq_file *m)
{
	const struct dcrace_layout *l = &dcrace_layout;
	/* as armed: the layout's open() lookups are used with a fast rcu_lookup */
	unsigned int nr = probes[P_RCU].fast ? l->nr_open_lookups : 0, i;
	unsigned long caller;
	s64 hits;

	if (l->wc_lookup_ret && probes[P_WALK].fast)
		seq_printf(m, "lookup_caller %pS walk %s %llu\n",
			   (void *)l->wc_lookup_ret, "tracked",
			   (u64)pcpu_sum(c[C_WALKS]));
	for (i = 0; i < nr; i++)
		seq_printf(m, "lookup_caller %pS open %s %llu\n",
			   (void *)l->open_lookup_rets[i],
			   open_covered() ? "tracked" : "missing",
			   open_lookup_hits_sum(i));
	if (!nr)
		seq_puts(m, "lookup_caller open_last_lookups open missing 0\n");
	for (i = 0; i < DCRACE_OTHER_CALLERS; i++) {
		caller = open_other_caller(i, &hits);
		if (caller)
			seq_printf(m, "lookup_caller %pS other untracked %lld\n",
				   (void *)caller, hits);
	}
	for (i = 0; open_site_name(i); i++)
		seq_printf(m, "open_return %s kprobe armed -\n",
			   open_site_name(i));
	for (i = 0; end_site_name(i); i++)
		seq_printf(m, "end_return %s kprobe armed -\n",
			   end_site_name(i));
	for (i = 0; unlazy_site_name(i); i++)
		seq_printf(m, "unlazy_call %s kprobe armed -\n",
			   unlazy_site_name(i));
	/* none: link_path_walk() inlined whole, or not found (loudly) */
	if (READ_ONCE(end_on) && !unlazy_site_name(0))
		seq_puts(m, "unlazy_call link_path_walk kprobe missing -\n");
	if (READ_ONCE(end_on))
		seq_printf(m, "slot_reclaim do_exit kprobe %s -\n",
			   exit_reclaim_armed() ? "armed" : "missing");
	/* the walk functions whose RCU-mode hard errors are judged (end.c) */
	for (i = 0; i < DCRACE_WALK_FNS; i++)
		seq_printf(m, "walk_end %s %s\n", l->walk_fns[i].name,
			   !l->walk_fns[i].start ? "absent" :
			   !end_fn_covered(i) ? "missing" :
			   l->end_refused[i] ? "partial" : "judged");
}

/*
 * "probes": each armed kprobe's form: ftrace (a function's entry),
 * optimized (a jump to a trampoline) or int3 (a trap), with why.
 */
static const char *kprobe_form(const struct kprobe *kp, const char **why)
{
	const struct list_head *pos;
	u8 op = kp->opcode;

	*why = "";
	/* walk_component's entry after the warm-up, in stack mode */
	if (kp->flags & KPROBE_FLAG_DISABLED)
		return "disabled";
	if (kp->flags & KPROBE_FLAG_FTRACE)
		return "ftrace";
	/*
	 * An optimizable probe is put on an aggregate kprobe's list, and the
	 * aggregate carries KPROBE_FLAG_OPTIMIZED once the optimizer ran;
	 * one the architecture refused stays alone (its list empty).
	 */
	rcu_read_lock();
	for (pos = READ_ONCE(kp->list.next); pos && pos != &kp->list;
	     pos = READ_ONCE(pos->next)) {
		if (READ_ONCE(list_entry(pos, struct kprobe, list)->flags) &
		    KPROBE_FLAG_OPTIMIZED) {
			rcu_read_unlock();
			return "optimized";
		}
	}
	rcu_read_unlock();
	if (!IS_ENABLED(CONFIG_OPTPROBES))
		*why = " (no CONFIG_OPTPROBES)";
	else if (kp->post_handler)
		*why = " (a post_handler)";
	else if (!list_empty(&kp->list))
		*why = " (waiting for the optimizer, or it is off: debug.kprobes-optimization)";
	else if (op == 0xe8)
		*why = " (a call: an optimized probe relocates no branch)";
	else if ((op & 0xf0) == 0x70 || op == 0xe9 || op == 0xeb ||
		 op == 0xc3)
		*why = " (a jump or ret: an optimized probe relocates no branch)";
	else
		*why = " (refused by the arch: a branch in its 5 bytes, or a jump into them)";
	return "int3";
}

static void forms_show(struct seq_file *m)
{
	static const char * const kinds[NR_SITE_KINDS] = {
		[SH_WALK_RETURN] = "walk_return", [SH_WALK_EXIT] = "walk_exit",
		[SH_OPEN_RETURN] = "open_return", [SH_END_RETURN] = "end_return",
		[SH_UNLAZY] = "unlazy_call", [SH_RECLAIM] = "slot_reclaim",
	};
	struct kprobe *kps[DCRACE_MAX_KPROBES];
	const char *why;
	int i, n = armed_kprobes(kps), cpu;

	for (i = 0; i < n; i++) {
		const char *form = kprobe_form(kps[i], &why);

		seq_printf(m, "form %pS %s%s\n", kps[i]->addr, form, why);
	}
	/* the hits of the probes at the layout's sites, per kind */
	for (i = 0; i < NR_SITE_KINDS; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(&dcrace_pcpu, cpu)->site_hits[i];
		seq_printf(m, "site_hits %s %llu\n", kinds[i], sum);
	}
}

static int probes_show(struct seq_file *m, void *v)
{
	int i;

	seq_puts(m, "# name symbol kind state(armed|missing|off) hits\n");
	for (i = 0; i < NR_PROBES; i++) {
		const struct dcrace_probe *p = &probes[i];

		seq_printf(m, "%s %s %s %s %llu\n", p->name,
			   p->sym ? p->sym : p->syms[0],
			   i == P_WALK && stack_mode ? "from-rcu_lookup" :
			   p->is_ret && !p->fast ? "kretprobe" : "kprobe",
			   p->sym ? "armed" : probe_wanted(i) ? "missing" : "off",
			   (u64)pcpu_sum(hits[i]));
	}
	/* walk_component's learned return sites (fast mode) */
	for (i = 0; i < DCRACE_RET_SITES; i++) {
		const struct dcrace_site *st = &sites[i];

		/* pairs with site_work_fn(): st->name is written */
		if (!smp_load_acquire(&st->armed) && !st->failed)
			continue;
		/* hits are not counted here: see walk_steps in stats */
		seq_printf(m, "walk_return %s kprobe %s -\n", st->name,
			   st->failed ? "failed" : "armed");
	}
	for (i = 0; exit_name(i); i++)
		seq_printf(m, "walk_exit %s kprobe armed -\n", exit_name(i));
	lookup_callers_show(m);
	callbacks_show(m);
	forms_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(probes);

static void event_show(struct seq_file *m, const struct dcrace_event *e)
{
	char errbuf[16];
	unsigned int i;

	seq_printf(m, "event: %llu\n", e->id);
	seq_printf(m, "type: %s\n", dcrace_verdict_name(e->verdict));
	seq_printf(m, "time_ns: %llu\n", e->time_ns);
	seq_printf(m, "walker: pid=%d comm=%s cpu=%d\n", e->pid, e->comm,
		   e->cpu);
	seq_printf(m, "component: %s%s\n", e->name,
		   e->name_truncated ? "..." : "");
	seq_printf(m, "d_seq: sampled=%u current=%u\n", e->seq_sampled,
		   e->seq_current);
	seq_printf(m, "result: %d\n", e->result);
	seq_printf(m, "errno: %s\n", dcrace_errno_name(e->result, errbuf,
						       sizeof(errbuf)));
	seq_printf(m, "lookup: %s\n", e->lookup == LK_OPEN ? "open" :
		   e->lookup == LK_END ? "end" : "walk");
	seq_printf(m, "end: %s\n", e->end[0] ? e->end : "-");
	seq_printf(m, "seq_state: %s\n", e->seq_sampled == e->seq_current ?
		   "unchanged" : "changed");
	if (e->killer_known)
		seq_printf(m, "killer: pid=%d comm=%s kill_to_read_ns=%lld\n",
			   e->killer_pid, e->killer_comm, e->kill_to_read_ns);
	else
		seq_puts(m, "killer: unknown\n");
	seq_puts(m, "stack:\n");
	for (i = 0; i < e->nr_stack; i++)
		seq_printf(m, "  %pS\n", (void *)e->stack[i]);
	seq_puts(m, "\n");
}

static int events_show(struct seq_file *m, void *v)
{
	struct dcrace_event e;
	u64 first, last, lost, id;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	for (id = first; id && id <= last; id++)
		if (dcrace_ring_get(&events, id, &e))
			event_show(m, &e);
	return 0;
}

static int events_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, events_show, NULL,
				DCRACE_EVENTS * 1024);
}

static const struct file_operations events_fops = {
	.owner = THIS_MODULE,
	.open = events_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Copy one whole, fresh write into @buf; partial writes are refused. */
static int get_write(const char __user *ubuf, size_t len, loff_t *ppos,
		     char *buf, size_t size)
{
	if (*ppos || !len || len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return 0;
}

static ssize_t knob_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	struct dcrace_knob *k = file_inode(file)->i_private;
	char buf[32];
	int ret = get_write(ubuf, len, ppos, buf, sizeof(buf));

	if (ret)
		return ret;
	ret = k == &dcrace_knobs[K_DELAY_US] ? inject_delay_set(buf) :
					       knob_set(k, buf);
	if (ret)
		return ret;
	*ppos += len;
	return len;
}

static ssize_t knob_read(struct file *file, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	struct dcrace_knob *k = file_inode(file)->i_private;
	char buf[32];
	int n = scnprintf(buf, sizeof(buf), "%lld\n",
			  (long long)atomic64_read(&k->val));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations knob_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = knob_read,
	.write = knob_write,
	.llseek = default_llseek,
};

/* A write-only command file's number, @min..@max, strictly parsed. */
static int command_value(const char __user *ubuf, size_t len, loff_t *ppos,
			 s64 min, s64 max, s64 *v)
{
	char buf[8];
	int ret = get_write(ubuf, len, ppos, buf, sizeof(buf));

	if (ret)
		return ret;
	return dcrace_parse_s64(buf, min, max, v) ? -EINVAL : 0;
}

static ssize_t reset_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	s64 v;
	int ret = command_value(ubuf, len, ppos, 1, 1, &v);

	if (ret)
		return ret;
	reset_all();
	*ppos += len;
	return len;
}

static const struct file_operations reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = reset_write,
	.llseek = noop_llseek,
};

/*
 * "synchronize_rcu": writing N (1..100) returns after N full RCU grace
 * periods, so a scenario in the guest can drop a reference one, two or
 * more grace periods after an event (a reaped task's pid, a detached
 * mount's last reference: docs/design.md, "The hunt").
 */
static ssize_t grace_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	s64 v;
	int ret = command_value(ubuf, len, ppos, 1, 100, &v);

	if (ret)
		return ret;
	while (v-- > 0)
		synchronize_rcu();
	cnt_inc(C_GRACE_WAITS);
	*ppos += len;
	return len;
}

static const struct file_operations grace_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = grace_write,
	.llseek = noop_llseek,
};

static ssize_t comm_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	char buf[TASK_COMM_LEN + 2];
	int ret;

	if (*ppos || len >= sizeof(buf))
		return -EINVAL;
	if (len && copy_from_user(buf, ubuf, len))
		return -EFAULT;
	ret = inject_comm_set(buf, len);
	if (ret)
		return ret;
	*ppos += len;
	return len;
}

static ssize_t comm_read(struct file *file, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char buf[TASK_COMM_LEN + 1];
	int n = inject_comm_get(buf, sizeof(buf));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations comm_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = comm_read,
	.write = comm_write,
	.llseek = default_llseek,
};

void debugfs_setup(void)
{
	struct dentry *inj;
	int i;

	dbg_dir = debugfs_create_dir("dcrace", NULL);
	debugfs_create_file("stats", 0400, dbg_dir, NULL, &stats_fops);
	debugfs_create_file("events", 0400, dbg_dir, NULL, &events_fops);
	debugfs_create_file("probes", 0400, dbg_dir, NULL, &probes_fops);
	debugfs_create_file("enabled", 0600, dbg_dir, &dcrace_knobs[K_ENABLED],
			    &knob_fops);
	debugfs_create_file("sample", 0600, dbg_dir, &dcrace_knobs[K_SAMPLE],
			    &knob_fops);
	debugfs_create_file("reset", 0200, dbg_dir, NULL, &reset_fops);
	debugfs_create_file("synchronize_rcu", 0200, dbg_dir, NULL, &grace_fops);
	inj = debugfs_create_dir("inject", dbg_dir);
	/* the injection knobs are in inject/, under their own names */
	for (i = K_ENABLED + 1; i < K_SAMPLE; i++)
		debugfs_create_file(dcrace_knobs[i].name, 0600, inj,
				    &dcrace_knobs[i], &knob_fops);
	debugfs_create_file("comm", 0600, inj, NULL, &comm_fops);
}

void debugfs_teardown(void)
{
	debugfs_remove(dbg_dir);
}

/* ---- module parameters (same strict parsers) ------------------------------ */

static int param_knob_set(const char *val, const struct kernel_param *kp)
{
	return knob_set(kp->arg, val);
}

static int param_knob_get(char *buf, const struct kernel_param *kp)
{
	struct dcrace_knob *k = kp->arg;

	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(&k->val));
}

const struct kernel_param_ops knob_param_ops = {
	.set = param_knob_set,
	.get = param_knob_get,
};

static int param_comm_set(const char *val, const struct kernel_param *kp)
{
	return inject_comm_set(val, strlen(val));
}

static int param_comm_get(char *buf, const struct kernel_param *kp)
{
	return inject_comm_get(buf, PAGE_SIZE);
}

const struct kernel_param_ops comm_param_ops = {
	.set = param_comm_set,
	.get = param_comm_get,
};
