// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: a kprobes race detector for the dcache's RCU path walk.
 *
 * It records every case where an RCU walk sees a NULL inode on a dentry
 * whose d_seq changed since __d_lookup_rcu() sampled it, says whether the
 * kernel turned it into a false ENOENT (the 2011 bug) or caught it with
 * -ECHILD (the fix), and who pruned the dentry. See docs/design.md.
 *
 * Probes (fast=1, the default: no return probes on the hot path; in stack
 * mode, after the load's warm-up, the walk_component entry probe is gone
 * and rcu_lookup opens the steps, see rcu_site_claim()):
 *   walk_component  kprobe     one walk step begins; learns its return address
 *   (return sites)  kprobes    one per learned return address of
 *                              walk_component: rax is the step's verdict
 *   lookup_fast+N   kprobe     right after its call of __d_lookup_rcu: rax is
 *                              the dentry found, nd->next_seq the d_seq sampled
 *   step_into       kprobe     where 6.1 reads d_inode after the seq check
 *   __dentry_kill   kprobe     who pruned which dentry, and when
 *   lookup_fast     kprobe     hit counter only (extra_probes=1)
 * With fast=0 (or when a call site cannot be found) walk_component and
 * __d_lookup_rcu are kretprobes instead: same data, about twice the cost.
 *
 * Lifetime rule: a dentry pointer sampled by the rcu_lookup probe is
 * dereferenced only in the walk_component return handler of the same
 * step, and only while the walk is still in RCU mode (LOOKUP_RCU set),
 * i.e. inside the RCU read-side section in which it was found. Pointers
 * from the kill probe are compared, never dereferenced later.
 *
 * Handlers may run in int3 context, which is NMI-like: they take no lock
 * that is not try-locked, and defer everything else (reports) to irq_work.
 */
/* Messages carry their own "dcrace: " so reports can start with "BUG:". */
#define pr_fmt(fmt) fmt

#include <linux/atomic.h>
#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <dcrace/dcrace.h>

/*
 * The leading fields of fs/namei.c's struct nameidata, identical in every
 * 6.1.y (and Debian's 6.1.0-*). Only these are read.
 */
struct dcrace_nd_head {
	struct path path;
	struct qstr last;
	struct path root;
	struct inode *inode;
	unsigned int flags, state;
	unsigned int seq, next_seq, m_seq, r_seq;
};

/* ---- counters ---------------------------------------------------------- */

enum dcrace_counter {
	C_WALKS,
	C_RCU_LOOKUPS,
	C_NULL_INODE,
	C_FALSE_ENOENT,
	C_CAUGHT,
	C_CAUGHT_LATE,
	C_GENUINE_NEG,
	C_PRUNED_NEG,
	C_UNEXPECTED,
	C_PRUNES,
	C_KILLS_DROPPED,
	C_INJECTED,
	C_NOT_RCU,
	C_PARENT_ECHILD,
	C_SLOTS_FULL,
	C_NEW_SITE,
	C_STEP_LOST,
	C_EVENTS_DROPPED,
	NR_COUNTERS
};

static const char * const counter_names[NR_COUNTERS] = {
	[C_WALKS] = "walk_steps",
	[C_RCU_LOOKUPS] = "rcu_lookups",
	[C_NULL_INODE] = "null_inode_seen",
	[C_FALSE_ENOENT] = "false_enoent",
	[C_CAUGHT] = "caught",
	[C_CAUGHT_LATE] = "caught_late",
	[C_GENUINE_NEG] = "genuine_negative",
	[C_PRUNED_NEG] = "pruned_negative",
	[C_UNEXPECTED] = "unexpected",
	[C_PRUNES] = "prunes",
	[C_KILLS_DROPPED] = "kill_records_dropped",
	[C_INJECTED] = "injected_delays",
	[C_NOT_RCU] = "left_rcu_unjudged",
	[C_PARENT_ECHILD] = "parent_changed_echild",
	[C_SLOTS_FULL] = "task_slots_full",
	[C_NEW_SITE] = "steps_unjudged_new_site",
	[C_STEP_LOST] = "steps_return_missed",
	[C_EVENTS_DROPPED] = "events_dropped_busy",
};

enum dcrace_probe_id { P_WALK, P_LOOKUP, P_RCU, P_STEP, P_KILL, NR_PROBES };

struct dcrace_pcpu {
	u64 c[NR_COUNTERS];
	u64 hits[NR_PROBES];
	long inflight[NR_PROBES];	/* hijacked returns not yet back */
};

static DEFINE_PER_CPU(struct dcrace_pcpu, dcrace_pcpu);

static inline void cnt_inc(enum dcrace_counter c)
{
	this_cpu_inc(dcrace_pcpu.c[c]);
}

static inline void hit(enum dcrace_probe_id p)
{
	this_cpu_inc(dcrace_pcpu.hits[p]);
}

/*
 * Sum one per-CPU field (c[], hits[] or inflight[]) over all CPUs; inflight
 * entries may be negative on one CPU (a return that migrated).
 */
#define pcpu_sum(field)						\
({								\
	s64 __s = 0;						\
	int __cpu;						\
								\
	for_each_possible_cpu(__cpu)				\
		__s += per_cpu(dcrace_pcpu, __cpu).field;	\
	__s;							\
})

/* ---- knobs --------------------------------------------------------------- */

struct dcrace_knob {
	const char *name;
	s64 min, max;
	atomic64_t val;
};

enum {
	K_ENABLED,
	K_DELAY_US,
	K_PROBABILITY,
	K_INTERVAL,
	K_TIMES,
	K_VERBOSE,
	NR_KNOBS
};

static struct dcrace_knob knobs[NR_KNOBS] = {
	[K_ENABLED] = { "enabled", 0, 1, ATOMIC64_INIT(1) },
	[K_DELAY_US] = { "delay_us", 0, 10000, ATOMIC64_INIT(0) },
	[K_PROBABILITY] = { "probability", 0, 100, ATOMIC64_INIT(100) },
	[K_INTERVAL] = { "interval", 1, INT_MAX, ATOMIC64_INIT(1) },
	[K_TIMES] = { "times", -1, INT_MAX, ATOMIC64_INIT(-1) },
	[K_VERBOSE] = { "verbose", 0, 1, ATOMIC64_INIT(0) },
};

static inline s64 knob(int k)
{
	return atomic64_read(&knobs[k].val);
}

static char inject_comm[TASK_COMM_LEN];
static DEFINE_SPINLOCK(comm_lock);	/* writers of inject_comm */
static seqcount_spinlock_t comm_seq = SEQCNT_SPINLOCK_ZERO(comm_seq, &comm_lock);
static DEFINE_PER_CPU(struct rnd_state, inject_rnd);
static atomic64_t inject_count;		/* eligible lookups, for interval */

static int knob_set(struct dcrace_knob *k, const char *buf)
{
	s64 v;
	int ret = dcrace_parse_s64(buf, k->min, k->max, &v);

	if (ret)
		return ret;
	atomic64_set(&k->val, v);
	return 0;
}

/* ---- per-task walk state -------------------------------------------------- */

#define DCRACE_SLOT_BITS	8
#define DCRACE_SLOTS		BIT(DCRACE_SLOT_BITS)
#define DCRACE_SLOT_PROBE	16

/* Owned by one task between walk_component entry and return. */
struct dcrace_slot {
	struct task_struct *owner;
	struct dcrace_nd_head *nd;	/* the walk's nameidata */
	unsigned long ret_site;	/* where walk_component returns (fast) */
	struct dentry *dentry;	/* see the lifetime rule at the top */
	unsigned int seq;
	bool valid;
	bool positive;
	bool stepped;		/* step_into() ran in this step */
};

static struct dcrace_slot slots[DCRACE_SLOTS];

static struct dcrace_slot *slot_find(struct task_struct *t)
{
	unsigned int h = hash_ptr(t, DCRACE_SLOT_BITS), i;

	for (i = 0; i < DCRACE_SLOT_PROBE; i++) {
		struct dcrace_slot *s = &slots[(h + i) % DCRACE_SLOTS];

		if (READ_ONCE(s->owner) == t)
			return s;
	}
	return NULL;
}

static struct dcrace_slot *slot_claim(struct task_struct *t)
{
	unsigned int h = hash_ptr(t, DCRACE_SLOT_BITS), i;
	struct dcrace_slot *s = slot_find(t);

	if (s)
		return s;
	for (i = 0; i < DCRACE_SLOT_PROBE; i++) {
		s = &slots[(h + i) % DCRACE_SLOTS];
		if (!READ_ONCE(s->owner) && !cmpxchg(&s->owner, NULL, t))
			return s;
	}
	return NULL;
}

static void slot_release(struct dcrace_slot *s)
{
	s->valid = false;
	s->dentry = NULL;
	s->ret_site = 0;
	/* Order the clears above before the slot can be claimed again. */
	smp_store_release(&s->owner, NULL);
}

/* ---- the pruner's record ---------------------------------------------- */

/*
 * Direct-mapped by dentry address: the last kill seen at each address.
 * A record is matched by address *and* by the d_seq value at the kill's
 * entry, which equals the walker's sample exactly when this kill is the
 * one that invalidated it; time is not used (a preempted walker can sit
 * in its window for milliseconds).
 */
#define DCRACE_KILL_BITS	11
#define DCRACE_KILL_WAYS	4

struct dcrace_kill {
	const void *dentry;	/* compared only, never dereferenced */
	u64 time_ns;
	pid_t pid;
	unsigned int seq;	/* d_seq at __dentry_kill() entry */
	char comm[TASK_COMM_LEN];
	bool positive;
};

/*
 * The kill probe runs in int3 context, which lockdep (rightly) treats like
 * NMI: no spinlock may be taken there. Each set has a busy bit instead;
 * the kill probe only ever try-locks it (and drops the record if another
 * CPU's kill holds it), the reader (the walk_component return handler,
 * not in int3 context) waits for it briefly.
 */
struct dcrace_kill_set {
	unsigned long busy;
	struct dcrace_kill way[DCRACE_KILL_WAYS];
};

static struct dcrace_kill_set kills[BIT(DCRACE_KILL_BITS)];

static struct dcrace_kill_set *kill_set(const void *dentry)
{
	return &kills[hash_ptr(dentry, DCRACE_KILL_BITS)];
}

static bool kill_find(const void *dentry, unsigned int seq,
		      struct dcrace_kill *out)
{
	struct dcrace_kill_set *set = kill_set(dentry);
	bool found = false;
	int w, spins = 0;

	while (test_and_set_bit_lock(0, &set->busy)) {
		if (++spins > 100000)
			return false;
		cpu_relax();
	}
	for (w = 0; w < DCRACE_KILL_WAYS; w++) {
		if (set->way[w].dentry == dentry && set->way[w].seq == seq) {
			*out = set->way[w];
			found = true;
			break;
		}
	}
	clear_bit_unlock(0, &set->busy);
	return found;
}

/* With the set's busy bit held: the way to overwrite (same or oldest). */
static struct dcrace_kill *kill_slot(struct dcrace_kill_set *set,
				     const void *dentry)
{
	struct dcrace_kill *old = &set->way[0];
	int w;

	for (w = 0; w < DCRACE_KILL_WAYS; w++) {
		if (set->way[w].dentry == dentry)
			return &set->way[w];
		if (set->way[w].time_ns < old->time_ns)
			old = &set->way[w];
	}
	return old;
}

/* ---- events -------------------------------------------------------------- */

#define DCRACE_EVENTS	64

static struct dcrace_event event_slots[DCRACE_EVENTS];
static struct dcrace_ring events;
static DEFINE_RATELIMIT_STATE(report_rs, 5 * HZ, 10);

static void report(const struct dcrace_event *e)
{
	unsigned int i;

	pr_err("==================================================================\n");
	if (e->verdict == DCRACE_FALSE_ENOENT)
		pr_err("BUG: dcrace: false ENOENT in rcu-walk\n");
	else
		pr_err("dcrace: race caught (%s)\n", dcrace_verdict_name(e->verdict));
	pr_err("walker: pid=%d comm=%s cpu=%d component=\"%s\"%s\n", e->pid,
	       e->comm, e->cpu, e->name, e->name_truncated ? "..." : "");
	pr_err("d_seq: sampled=%u current=%u, d_inode NULL, step returned %d\n",
	       e->seq_sampled, e->seq_current, e->result);
	if (e->killer_known)
		pr_err("pruned by: pid=%d comm=%s, %lld ns before the walker's check\n",
		       e->killer_pid, e->killer_comm, e->kill_to_read_ns);
	else
		pr_err("pruned by: unknown (no __dentry_kill record)\n");
	for (i = 0; i < e->nr_stack; i++)
		pr_err(" %pS\n", (void *)e->stack[i]);
	pr_err("==================================================================\n");
}

/*
 * verbose reports are printed from a work item, not from the probe
 * handler: a console write under TCG takes milliseconds, far too long for
 * a handler that runs with preemption off in the middle of a path walk.
 */
static atomic64_t reported;	/* newest event id already considered */

static void report_work_fn(struct work_struct *w)
{
	struct dcrace_event e;
	u64 first, last, lost, id;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	id = atomic64_read(&reported);
	atomic64_set(&reported, last);
	if (id < first)
		id = first ? first - 1 : 0;
	for (id++; id && id <= last; id++) {
		if (!__ratelimit(&report_rs))
			break;
		if (dcrace_ring_get(&events, id, &e))
			report(&e);
	}
}

static DECLARE_WORK(report_work, report_work_fn);

/* Queued from probe handlers (NMI-safe); schedules the report work. */
static void report_irq_fn(struct irq_work *w)
{
	schedule_work(&report_work);
}

static DEFINE_IRQ_WORK(report_irq_work, report_irq_fn);

/* ---- injection ----------------------------------------------------------- */

/*
 * Lockless: this runs in probe handlers, maybe in int3 context. A reader
 * that keeps meeting a writer gives up and does not delay this lookup.
 */
static bool comm_matches(void)
{
	char want[TASK_COMM_LEN];
	unsigned int seq, tries;

	for (tries = 0; tries < 4; tries++) {
		seq = raw_read_seqcount(&comm_seq);
		if (seq & 1)
			continue;
		memcpy(want, inject_comm, sizeof(want));
		if (!read_seqcount_retry(&comm_seq, seq))
			return !want[0] ||
			       !strncmp(current->comm, want, TASK_COMM_LEN);
	}
	return false;
}

/* A per-CPU PRNG: get_random_*() takes a local lock, not for int3 context. */
static u32 inject_rand100(void)
{
	return prandom_u32_state(this_cpu_ptr(&inject_rnd)) % 100;
}

static void maybe_inject(void)
{
	s64 delay = knob(K_DELAY_US), interval, prob;

	if (!delay || !knob(K_TIMES) || !comm_matches())
		return;
	interval = knob(K_INTERVAL);
	if (interval > 1 && atomic64_inc_return(&inject_count) % interval)
		return;
	prob = knob(K_PROBABILITY);
	if (prob < 100 && inject_rand100() >= prob)
		return;
	if (knob(K_TIMES) > 0 &&
	    atomic64_dec_if_positive(&knobs[K_TIMES].val) < 0)
		return;
	cnt_inc(C_INJECTED);
	/* Busy-wait: probe handlers must not sleep. */
	while (delay > 1000) {
		mdelay(1);
		delay -= 1000;
	}
	udelay(delay);
}

/* ---- probes ---------------------------------------------------------------- */

struct walk_data {
	struct dcrace_slot *slot;
};

struct rcu_data {
	struct dcrace_slot *slot;
	unsigned int *seqp;
};

/*
 * Open a step of current's walk @nd that returns to @ret_site (0: the
 * kretprobe sees the return): claim the task's slot and reset it.
 */
static struct dcrace_slot *step_open(unsigned long ret_site,
				     struct dcrace_nd_head *nd)
{
	struct dcrace_slot *s = slot_claim(current);

	if (!s) {
		cnt_inc(C_SLOTS_FULL);
		return NULL;
	}
	/* still set: the last step's return probe did not run (missed) */
	if (s->ret_site)
		cnt_inc(C_STEP_LOST);
	s->valid = false;
	s->stepped = false;
	s->ret_site = ret_site;
	s->nd = nd;
	cnt_inc(C_WALKS);
	return s;
}

static int walk_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct walk_data *d = (struct walk_data *)ri->data;

	hit(P_WALK);
	if (!knob(K_ENABLED))
		return 1;
	d->slot = step_open(0, (struct dcrace_nd_head *)
				   regs_get_kernel_argument(regs, 0));
	if (!d->slot)
		return 1;
	this_cpu_inc(dcrace_pcpu.inflight[P_WALK]);
	return 0;
}

/*
 * judge()'s event and stack buffers: per CPU, not on the stack (a probe
 * handler's frame must stay small, KASAN builds make it larger). Safe:
 * handlers run with preemption off and do not nest on a CPU (a probe hit
 * inside a handler is counted as missed, not run).
 */
#define DCRACE_STACK_RAW	(DCRACE_STACK_DEPTH + 16)

struct dcrace_judge_scratch {
	struct dcrace_event event;
	unsigned long raw[DCRACE_STACK_RAW];
};

static DEFINE_PER_CPU(struct dcrace_judge_scratch, judge_scratch);

static bool probe_frame(unsigned long addr)
{
	char sym[KSYM_SYMBOL_LEN];

	if (within_module(addr, THIS_MODULE))
		return true;
	sprint_symbol_no_offset(sym, addr);
	/* an optimized probe's detour buffer has no symbol: "0x..." */
	return strstr(sym, "rethook") || strstr(sym, "kretprobe") ||
	       strstr(sym, "kprobe") || strstr(sym, "opt_pre_handler") ||
	       strstr(sym, "optimized_callback") || strstr(sym, "exc_int3") ||
	       !strncmp(sym, "0x", 2);
}

/*
 * The walker's stack, without dcrace's and the probe machinery's frames.
 * Only on the rare race path: symbol lookups are not cheap.
 */
static unsigned int walker_stack(unsigned long *out, unsigned int size,
				 unsigned long where)
{
	unsigned long *raw = this_cpu_ptr(judge_scratch.raw);
	unsigned int n, i, j = 0;

	/* fast probes: the walker is at walk_component's return site */
	if (where && size)
		out[j++] = where;

	n = stack_trace_save(raw, DCRACE_STACK_RAW, 0);
	for (i = 0; i < n && j < size; i++) {
		/* an int3 probe's frame: its address + 1, already out[0] */
		if (probe_frame(raw[i]) || (where && raw[i] == where + 1))
			continue;
		if (j && raw[i] == out[j - 1])
			continue;
		out[j++] = raw[i];
	}
	return j;
}

/*
 * Does walk_component() test the inode for NULL before step_into()? Our
 * patched kernels do (patch 0001 puts the 3.0-era test back); stock 6.1
 * does not: its only NULL-inode test is in step_into(), after the d_seq
 * check that is the 2011 fix. -1 (auto) learns it from what the walks do.
 */
static int early_test = -1;
module_param(early_test, int, 0444);
MODULE_PARM_DESC(early_test, "walk_component() has its own NULL-inode test: 1 (our patched kernels), 0 (stock 6.1), -1 learn it (default)");
static atomic_t early_test_seen = ATOMIC_INIT(-1);

static int early_test_now(void)
{
	return early_test >= 0 ? early_test : atomic_read(&early_test_seen);
}

static void early_test_learn(const struct dcrace_slot *s, long ret,
			     bool seq_changed)
{
	int cur, now;

	if (early_test >= 0)
		return;
	cur = atomic_read(&early_test_seen);
	now = dcrace_learn_early_test(cur, s->stepped, (int)ret, seq_changed);
	if (now != cur)
		atomic_set(&early_test_seen, now);
}

static void judge(struct dcrace_slot *s, struct dcrace_nd_head *nd, long ret)
{
	struct dentry *dentry = s->dentry;
	struct dcrace_sighting sg = { .result = (int)ret };
	struct dcrace_kill k;
	struct dcrace_event *ep = this_cpu_ptr(&judge_scratch.event);
	enum dcrace_verdict v;
	unsigned int cur;
	bool killed;
	u64 now;

	/* Still in the RCU read-side section in which @dentry was found. */
	sg.inode_null = !READ_ONCE(dentry->d_inode);
	if (!sg.inode_null)
		return;
	/*
	 * -ECHILD with the parent's d_seq changed: lookup_fast() may have
	 * bailed out on the parent before the step looked at the child's
	 * inode at all, so this is no NULL-inode sighting of the child.
	 * nd->path is still the parent: the failed step did not move it.
	 */
	if (ret == -ECHILD &&
	    raw_read_seqcount(&nd->path.dentry->d_seq) != nd->seq) {
		cnt_inc(C_PARENT_ECHILD);
		return;
	}
	cnt_inc(C_NULL_INODE);
	cur = raw_read_seqcount(&dentry->d_seq);
	sg.seq_changed = cur != s->seq;
	now = ktime_get_mono_fast_ns();
	killed = kill_find(dentry, s->seq, &k);
	sg.was_positive = s->positive || (killed && k.positive);
	early_test_learn(s, ret, sg.seq_changed);
	/*
	 * Caught by step_into(): late if an early test looked first (or we
	 * do not know yet); else step_into() holds the step's only test.
	 */
	sg.late = s->stepped && early_test_now() != 0;
	v = dcrace_classify(&sg);
	switch (v) {
	case DCRACE_GENUINE_NEGATIVE:
		cnt_inc(C_GENUINE_NEG);
		return;
	case DCRACE_PRUNED_NEGATIVE:
		cnt_inc(C_PRUNED_NEG);
		return;
	case DCRACE_FALSE_ENOENT:
		cnt_inc(C_FALSE_ENOENT);
		break;
	case DCRACE_CAUGHT:
		cnt_inc(C_CAUGHT);
		break;
	case DCRACE_CAUGHT_LATE:
		cnt_inc(C_CAUGHT_LATE);
		break;
	case DCRACE_UNEXPECTED:
		cnt_inc(C_UNEXPECTED);
		break;
	case DCRACE_NONE:
		return;
	}

	memset(ep, 0, sizeof(*ep));
	ep->time_ns = now;
	ep->verdict = v;
	ep->result = (int)ret;
	ep->pid = task_pid_nr(current);
	ep->cpu = raw_smp_processor_id();
	/* current's own comm: no task_lock (not in int3 context) */
	strscpy(ep->comm, current->comm, sizeof(ep->comm));
	/*
	 * The dentry's own name, not nd->last: that may point into a symlink
	 * body that walk_component() released before step_into() (put_link()
	 * of a link's last component; KASAN caught it in the soak). The
	 * dentry and its name (freed after a grace period, NUL-terminated)
	 * stay valid in this RCU section; a rename may switch the name, so
	 * its length is not trusted.
	 */
	dcrace_copy_name(ep->name, sizeof(ep->name),
			 READ_ONCE(dentry->d_name.name), &ep->name_truncated);
	ep->seq_sampled = s->seq;
	ep->seq_current = cur;
	if (killed) {
		ep->killer_known = true;
		ep->killer_pid = k.pid;
		memcpy(ep->killer_comm, k.comm, sizeof(ep->killer_comm));
		ep->kill_to_read_ns = (s64)(now - k.time_ns);
	}
	ep->nr_stack = walker_stack(ep->stack, DCRACE_STACK_DEPTH, s->ret_site);
	if (!dcrace_ring_push(&events, ep))
		cnt_inc(C_EVENTS_DROPPED);
	if (knob(K_VERBOSE))
		irq_work_queue(&report_irq_work);
}

/* The end of a step: judge it (if it ended in an error) and free the slot. */
static void step_done(struct dcrace_slot *s, long ret)
{
	if (s->valid && (ret == -ENOENT || ret == -ECHILD)) {
		if (READ_ONCE(s->nd->flags) & LOOKUP_RCU)
			judge(s, s->nd, ret);
		else
			cnt_inc(C_NOT_RCU);
	}
	slot_release(s);
}

static int walk_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct walk_data *d = (struct walk_data *)ri->data;

	step_done(d->slot, (long)regs_return_value(regs));
	this_cpu_dec(dcrace_pcpu.inflight[P_WALK]);
	return 0;
}

/* What the rcu_lookup probe records: the dentry and the d_seq it sampled. */
static void rcu_sample(struct dcrace_slot *s, struct dentry *dentry,
		       unsigned int seq)
{
	cnt_inc(C_RCU_LOOKUPS);
	if (!dentry)
		return;
	s->seq = seq;
	s->positive = !!READ_ONCE(dentry->d_inode);
	s->dentry = dentry;
	s->valid = true;
	/* The window: d_seq sampled, d_inode not yet read by the walker. */
	maybe_inject();
}

static int rcu_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct rcu_data *d = (struct rcu_data *)ri->data;

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

static int rcu_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct rcu_data *d = (struct rcu_data *)ri->data;
	struct dentry *dentry = (struct dentry *)regs_return_value(regs);
	struct dcrace_slot *s = d->slot;

	this_cpu_dec(dcrace_pcpu.inflight[P_RCU]);
	if (READ_ONCE(s->owner) != current)
		return 0;
	rcu_sample(s, dentry, READ_ONCE(*d->seqp));
	return 0;
}

/* ---- fast probes: entry-only, no return hijacking ---------------------- */

/* Stack mode (see rcu_site_claim()): what the warm-up learns. */
#define DCRACE_STACK_SCAN	48

static unsigned long wc_lookup_ret;	/* after walk_component's call of lookup_fast */
static int k_lookup = -1, k_walk = -1;	/* their word offsets at the site */
static int stack_seen;			/* learning hits that agreed */
static bool stack_bad;			/* learning hits disagreed */
static bool stack_learning, stack_mode, walk_kp_armed;

static bool stack_claim = true;
module_param(stack_claim, bool, 0444);
MODULE_PARM_DESC(stack_claim, "open steps from the rcu_lookup probe, no walk_component entry probe (default 1)");

static struct kprobe walk_kp, rcu_kp;	/* the fast walk_component, rcu_lookup */

/*
 * walk_component's return addresses, learned from its entry probe: each
 * gets a kprobe (armed from a work item, in process context) whose handler
 * sees the step's return value in rax. A step whose return address has no
 * armed probe yet is not tracked (counted in steps_unjudged_new_site).
 */
#define DCRACE_RET_SITES	8

struct dcrace_site {
	unsigned long addr;	/* 0: free; set once, by cmpxchg */
	bool armed;		/* its kprobe is registered */
	bool failed;
	struct kprobe kp;
	char name[KSYM_SYMBOL_LEN];
};

static struct dcrace_site sites[DCRACE_RET_SITES];
static bool sites_closed;	/* unloading: learn nothing more */

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

static void site_work_fn(struct work_struct *w);
static DECLARE_WORK(site_work, site_work_fn);

static void site_irq_fn(struct irq_work *w)
{
	schedule_work(&site_work);
}

static DEFINE_IRQ_WORK(site_irq_work, site_irq_fn);

static void site_learn(unsigned long ra)
{
	int i;

	if (READ_ONCE(sites_closed))
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

static int site_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s = slot_find(current);

	if (!s || s->ret_site != (unsigned long)p->addr)
		return 0;
	step_done(s, (long)regs->ax);
	return 0;
}

static void site_work_fn(struct work_struct *w)
{
	int i, err;

	for (i = 0; i < DCRACE_RET_SITES; i++) {
		struct dcrace_site *st = &sites[i];

		if (!READ_ONCE(st->addr) || st->armed || st->failed)
			continue;
		if (READ_ONCE(sites_closed))
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

/*
 * Learn walk_component's usual return sites at load, before the workload
 * runs: a few walks of our own (a multi-component path, a symlink in the
 * middle, a last component), then arm what they taught synchronously.
 * Arming later, while other vCPUs run the walk, is what can go wrong under
 * multi-threaded TCG (a patched instruction not seen by a vCPU that keeps
 * executing its old translation; see docs/design.md).
 */
static void warm_up_walks(void)
{
	static const char * const paths[] = {
		"/proc/self/status", "/sys/kernel", "/dev/null", "/",
	};
	struct path path;
	int i;

	for (i = 0; i < ARRAY_SIZE(paths); i++)
		if (!kern_path(paths[i], LOOKUP_FOLLOW, &path))
			path_put(&path);
}

static void sites_warm_up(void)
{
	warm_up_walks();
	irq_work_sync(&site_irq_work);
	flush_work(&site_work);
	if (!stack_claim || !wc_lookup_ret)
		return;
	/* the sites are armed now: steps are tracked, offsets can be learnt */
	WRITE_ONCE(stack_learning, true);
	warm_up_walks();
	WRITE_ONCE(stack_learning, false);
	if (stack_seen < 2 || stack_bad || k_lookup < 0 || k_walk < 0)
		return;
	/*
	 * From now on rcu_lookup claims the steps: disable the entry probe
	 * (no RCU wait here; disarm_all() unregisters it with the rest).
	 */
	WRITE_ONCE(stack_mode, true);
	disable_kprobe(&walk_kp);
}

/* Learn no more sites; the armed ones are unregistered by disarm_all(). */
static void sites_close(void)
{
	WRITE_ONCE(sites_closed, true);
	irq_work_sync(&site_irq_work);
	cancel_work_sync(&site_work);
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

static int walk_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long ra = regs_get_kernel_stack_nth(regs, 0);

	hit(P_WALK);
	if (!knob(K_ENABLED) || READ_ONCE(stack_mode) || !site_ready(ra))
		return 0;
	step_open(ra, (struct dcrace_nd_head *)regs_get_kernel_argument(regs, 0));
	return 0;
}

/*
 * Stack mode: the rcu_lookup probe also opens the step, so that
 * walk_component() needs no entry probe (one probe less per component).
 * At the rcu_lookup site the stack holds, at fixed word offsets for this
 * build, lookup_fast()'s return address (into walk_component(), when that
 * is the caller) and walk_component()'s own return address (a return
 * site). Both offsets are learnt at load from the warm-up walks, while
 * the entry probe still runs, by finding those known values on the stack.
 */

static void stack_learn(const struct dcrace_slot *s, struct pt_regs *regs)
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

static int rcu_site_claim(struct pt_regs *regs)
{
	const unsigned long *sp = (const unsigned long *)regs->sp;
	struct dentry *dentry = (struct dentry *)regs->ax;
	struct dcrace_slot *s;
	unsigned long ra;

	/* no dentry: the step leaves RCU mode or fails, nothing to judge */
	if (!dentry || sp[k_lookup] != wc_lookup_ret)
		return 0;
	ra = sp[k_walk];
	if (!site_ready(ra))
		return 0;
	/* the walk's nameidata: set by set_nameidata() for this walk */
	s = step_open(ra, (struct dcrace_nd_head *)current->nameidata);
	if (s)
		rcu_sample(s, dentry, READ_ONCE(s->nd->next_seq));
	return 0;
}

/*
 * Right after lookup_fast()'s call of __d_lookup_rcu(): rax is the dentry
 * found, and the d_seq it sampled is in nd->next_seq (its seqp argument).
 */
static int rcu_site_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dcrace_slot *s;

	hit(P_RCU);
	if (!knob(K_ENABLED))
		return 0;
	if (READ_ONCE(stack_mode))
		return rcu_site_claim(regs);
	s = slot_find(current);
	if (!s)
		return 0;
	if (READ_ONCE(stack_learning) && s->ret_site)
		stack_learn(s, regs);
	rcu_sample(s, (struct dentry *)regs->ax, READ_ONCE(s->nd->next_seq));
	return 0;
}

/* The start and size of the function @name (looked up by a kprobe). */
static noinline unsigned long func_start(const char *name, unsigned long *size)
{
	struct kprobe kp = { .symbol_name = name };
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
 * The address just after the one direct call of @callee in @caller, or 0
 * (no such call, or more than one, or not readable).
 */
static unsigned long call_site_after(const char *caller, const char *callee)
{
	unsigned long start, size, target, a, found = 0;
	u8 insn[5];
	int n = 0;

	target = func_start(callee, &size);
	start = func_start(caller, &size);
	if (!target || !start)
		return 0;
	for (a = start; a + sizeof(insn) <= start + size; a++) {
		s32 rel;

		if (copy_from_kernel_nofault(insn, (void *)a, sizeof(insn)))
			return 0;
		if (insn[0] != 0xe8)
			continue;
		memcpy(&rel, insn + 1, sizeof(rel));
		if (a + sizeof(insn) + rel == target) {
			found = a + sizeof(insn);
			n++;
		}
	}
	return n == 1 ? found : 0;
}

static int lookup_pre(struct kprobe *p, struct pt_regs *regs)
{
	hit(P_LOOKUP);
	return 0;
}

/*
 * step_into() runs only when the step's own NULL-inode test (if the kernel
 * has one before it) let the dentry through; its -ECHILD then comes from
 * 6.1's guard in step_into(), not from that test.
 */
static int step_pre(struct kprobe *p, struct pt_regs *regs)
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

static int kill_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct dentry *dentry = (struct dentry *)regs_get_kernel_argument(regs, 0);
	struct dcrace_kill_set *set = kill_set(dentry);
	struct dcrace_kill *k;

	hit(P_KILL);
	if (!knob(K_ENABLED))
		return 0;
	cnt_inc(C_PRUNES);
	if (test_and_set_bit_lock(0, &set->busy)) {
		cnt_inc(C_KILLS_DROPPED);
		return 0;
	}
	k = kill_slot(set, dentry);
	k->dentry = dentry;
	k->time_ns = ktime_get_mono_fast_ns();
	k->pid = task_pid_nr(current);
	memcpy(k->comm, current->comm, sizeof(k->comm));
	/* The caller holds dentry->d_lock: the dentry is alive here. */
	k->seq = raw_read_seqcount(&dentry->d_seq);
	k->positive = !!READ_ONCE(dentry->d_inode);
	clear_bit_unlock(0, &set->busy);
	return 0;
}

static struct kretprobe walk_rp, rcu_rp;
static struct kprobe lookup_kp, step_kp, kill_kp;

struct dcrace_probe {
	const char *name;
	const char * const syms[3];
	bool is_ret;
	bool required;
	struct kretprobe *rp;
	struct kprobe *kp;
	bool extra;		/* armed only with extra_probes=1 */
	const char *sym;	/* the symbol armed, NULL when missing */
	int err;
	bool fast;		/* armed as an entry-only kprobe (see top) */
	char where[KSYM_SYMBOL_LEN];	/* fast rcu_lookup: the call site */
};

static struct dcrace_probe probes[NR_PROBES] = {
	[P_WALK] = { "walk_component", { "walk_component" }, true, true,
		     &walk_rp, NULL },
	[P_LOOKUP] = { "do_lookup", { "lookup_fast", "do_lookup" }, false,
		       false, NULL, &lookup_kp, true },
	[P_RCU] = { "rcu_lookup", { "__d_lookup_rcu" }, true, true, &rcu_rp,
		    NULL },
	[P_STEP] = { "step_into", { "step_into" }, false, false, NULL,
		     &step_kp },
	[P_KILL] = { "dentry_kill", { "dentry_kill", "__dentry_kill" }, false,
		     false, NULL, &kill_kp },
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
			p->rp->data_size = sizeof(struct walk_data);
		} else {
			p->rp->entry_handler = rcu_entry;
			p->rp->handler = rcu_ret;
			p->rp->data_size = sizeof(struct rcu_data);
		}
		return;
	}
	memset(p->kp, 0, sizeof(*p->kp));
	p->kp->symbol_name = sym;
	p->kp->pre_handler = id == P_LOOKUP ? lookup_pre :
			     id == P_STEP ? step_pre : kill_pre;
}

static bool fast = true;
module_param(fast, bool, 0444);
MODULE_PARM_DESC(fast, "entry-only probes, no kretprobes on the hot path (default 1)");

/*
 * fast=1: walk_component as an entry kprobe (its returns are probed where
 * they land), rcu_lookup as a kprobe just after lookup_fast()'s call of
 * __d_lookup_rcu(). 0 when that is not possible here: use kretprobes.
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
		walk_kp_armed = true;
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

static int probe_arm(enum dcrace_probe_id id)
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
	p->err = err;
	return err;
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
static void disarm_all(void)
{
	struct kprobe *kps[NR_PROBES + DCRACE_RET_SITES];
	int i, n = 0;

	sites_close();
	for (i = NR_PROBES - 1; i >= 0; i--) {
		struct dcrace_probe *p = &probes[i];

		if (!p->sym)
			continue;
		if (p->fast) {
			if (i == P_RCU)
				kps[n++] = &rcu_kp;
			else if (walk_kp_armed)
				kps[n++] = &walk_kp;
		} else if (p->is_ret) {
			kretprobe_drain(i);
			unregister_kretprobe(p->rp);
		} else {
			kps[n++] = p->kp;
		}
	}
	for (i = 0; i < DCRACE_RET_SITES; i++)
		if (sites[i].armed)
			kps[n++] = &sites[i].kp;
	if (n)
		unregister_kprobes(kps, n);
	for (i = 0; i < NR_PROBES; i++) {
		probes[i].sym = NULL;
		probes[i].fast = false;
	}
	memset(sites, 0, sizeof(sites));
	walk_kp_armed = false;
}

/*
 * lookup_fast only counts hits: its probe costs time on every path
 * component and tells the oracle nothing.
 */
static bool extra_probes;
module_param(extra_probes, bool, 0444);
MODULE_PARM_DESC(extra_probes, "also arm the lookup_fast hit counter (default 0)");
static unsigned int skip_probes;
module_param(skip_probes, uint, 0444);
MODULE_PARM_DESC(skip_probes, "bitmask of probes not to arm (bit = order in \"probes\"; for measuring their cost)");

/* Whether probe @i is to be armed at all ("off" in "probes" if not). */
static bool probe_wanted(int i)
{
	return !(probes[i].extra && !extra_probes) && !(skip_probes & BIT(i));
}

/* ---- debugfs ------------------------------------------------------------- */

static struct dentry *dbg_dir;

static void reset_all(void)
{
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct dcrace_pcpu *pc = per_cpu_ptr(&dcrace_pcpu, cpu);

		memset(pc->c, 0, sizeof(pc->c));
	}
	dcrace_ring_reset(&events);
	/* Racing kill records may survive a reset; they only name killers. */
	for (i = 0; i < ARRAY_SIZE(kills); i++) {
		if (test_and_set_bit_lock(0, &kills[i].busy))
			continue;
		memset(kills[i].way, 0, sizeof(kills[i].way));
		clear_bit_unlock(0, &kills[i].busy);
	}
}

/* Hits our kprobes lost to recursion (another probe running on the CPU). */
static unsigned long kprobes_missed(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < NR_PROBES; i++) {
		const struct dcrace_probe *p = &probes[i];

		if (!p->sym)
			continue;
		if (p->fast)
			n += i == P_WALK ? walk_kp.nmissed : rcu_kp.nmissed;
		else if (!p->is_ret)
			n += p->kp->nmissed;
	}
	for (i = 0; i < DCRACE_RET_SITES; i++)
		/* pairs with site_work_fn(): the kprobe is registered */
		if (smp_load_acquire(&sites[i].armed))
			n += sites[i].kp.nmissed;
	return n;
}

static int stats_show(struct seq_file *m, void *v)
{
	u64 first, last, lost;
	int i;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	seq_printf(m, "enabled: %lld\n", knob(K_ENABLED));
	for (i = 0; i < NR_COUNTERS; i++)
		seq_printf(m, "%s: %llu\n", counter_names[i], (u64)pcpu_sum(c[i]));
	seq_printf(m, "events: %llu\n", last);
	seq_printf(m, "events_lost: %llu\n", lost);
	seq_printf(m, "early_test: %d\n", early_test_now());
	seq_printf(m, "kprobe_missed: %lu\n", kprobes_missed());
	seq_printf(m, "kretprobe_missed: %d\n",
		   (probes[P_WALK].sym ? walk_rp.nmissed : 0) +
		   (probes[P_RCU].sym ? rcu_rp.nmissed : 0));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

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
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(probes);

static int events_show(struct seq_file *m, void *v)
{
	struct dcrace_event e;
	u64 first, last, lost, id;
	unsigned int i;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	for (id = first; id && id <= last; id++) {
		if (!dcrace_ring_get(&events, id, &e))
			continue;
		seq_printf(m, "event: %llu\n", e.id);
		seq_printf(m, "type: %s\n", dcrace_verdict_name(e.verdict));
		seq_printf(m, "time_ns: %llu\n", e.time_ns);
		seq_printf(m, "walker: pid=%d comm=%s cpu=%d\n", e.pid, e.comm,
			   e.cpu);
		seq_printf(m, "component: %s%s\n", e.name,
			   e.name_truncated ? "..." : "");
		seq_printf(m, "d_seq: sampled=%u current=%u\n", e.seq_sampled,
			   e.seq_current);
		seq_printf(m, "result: %d\n", e.result);
		if (e.killer_known)
			seq_printf(m, "killer: pid=%d comm=%s kill_to_read_ns=%lld\n",
				   e.killer_pid, e.killer_comm,
				   e.kill_to_read_ns);
		else
			seq_puts(m, "killer: unknown\n");
		seq_puts(m, "stack:\n");
		for (i = 0; i < e.nr_stack; i++)
			seq_printf(m, "  %pS\n", (void *)e.stack[i]);
		seq_puts(m, "\n");
	}
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
	ret = knob_set(k, buf);
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

static ssize_t reset_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	char buf[8];
	s64 v;
	int ret = get_write(ubuf, len, ppos, buf, sizeof(buf));

	if (ret)
		return ret;
	if (dcrace_parse_s64(buf, 1, 1, &v))
		return -EINVAL;
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

static ssize_t comm_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	char buf[TASK_COMM_LEN + 2], val[TASK_COMM_LEN];
	unsigned long flags;
	int ret;

	if (*ppos || len >= sizeof(buf))
		return -EINVAL;
	if (len && copy_from_user(buf, ubuf, len))
		return -EFAULT;
	ret = dcrace_parse_comm(buf, len, val, sizeof(val));
	if (ret)
		return ret;
	spin_lock_irqsave(&comm_lock, flags);
	write_seqcount_begin(&comm_seq);
	memcpy(inject_comm, val, sizeof(inject_comm));
	write_seqcount_end(&comm_seq);
	spin_unlock_irqrestore(&comm_lock, flags);
	*ppos += len;
	return len;
}

static ssize_t comm_read(struct file *file, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char buf[TASK_COMM_LEN + 1];
	unsigned long flags;
	int n;

	spin_lock_irqsave(&comm_lock, flags);
	n = scnprintf(buf, sizeof(buf), "%s\n", inject_comm);
	spin_unlock_irqrestore(&comm_lock, flags);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations comm_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = comm_read,
	.write = comm_write,
	.llseek = default_llseek,
};

static void debugfs_setup(void)
{
	struct dentry *inj;

	dbg_dir = debugfs_create_dir("dcrace", NULL);
	debugfs_create_file("stats", 0400, dbg_dir, NULL, &stats_fops);
	debugfs_create_file("events", 0400, dbg_dir, NULL, &events_fops);
	debugfs_create_file("probes", 0400, dbg_dir, NULL, &probes_fops);
	debugfs_create_file("enabled", 0600, dbg_dir, &knobs[K_ENABLED],
			    &knob_fops);
	debugfs_create_file("reset", 0200, dbg_dir, NULL, &reset_fops);
	inj = debugfs_create_dir("inject", dbg_dir);
	debugfs_create_file("delay_us", 0600, inj, &knobs[K_DELAY_US],
			    &knob_fops);
	debugfs_create_file("probability", 0600, inj, &knobs[K_PROBABILITY],
			    &knob_fops);
	debugfs_create_file("interval", 0600, inj, &knobs[K_INTERVAL],
			    &knob_fops);
	debugfs_create_file("times", 0600, inj, &knobs[K_TIMES], &knob_fops);
	debugfs_create_file("verbose", 0600, inj, &knobs[K_VERBOSE],
			    &knob_fops);
	debugfs_create_file("comm", 0600, inj, NULL, &comm_fops);
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

static const struct kernel_param_ops knob_param_ops = {
	.set = param_knob_set,
	.get = param_knob_get,
};

static int param_comm_set(const char *val, const struct kernel_param *kp)
{
	return dcrace_parse_comm(val, strlen(val), inject_comm,
				 sizeof(inject_comm));
}

static int param_comm_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", inject_comm);
}

static const struct kernel_param_ops comm_param_ops = {
	.set = param_comm_set,
	.get = param_comm_get,
};

module_param_cb(enabled, &knob_param_ops, &knobs[K_ENABLED], 0444);
MODULE_PARM_DESC(enabled, "record races (0/1, default 1)");
module_param_cb(delay_us, &knob_param_ops, &knobs[K_DELAY_US], 0444);
MODULE_PARM_DESC(delay_us, "busy-wait in the race window, us (0-10000, default 0)");
module_param_cb(probability, &knob_param_ops, &knobs[K_PROBABILITY], 0444);
MODULE_PARM_DESC(probability, "percent of eligible lookups delayed (0-100, default 100)");
module_param_cb(interval, &knob_param_ops, &knobs[K_INTERVAL], 0444);
MODULE_PARM_DESC(interval, "delay only every Nth eligible lookup (default 1)");
module_param_cb(times, &knob_param_ops, &knobs[K_TIMES], 0444);
MODULE_PARM_DESC(times, "delays left, -1 unlimited (default -1)");
module_param_cb(verbose, &knob_param_ops, &knobs[K_VERBOSE], 0444);
MODULE_PARM_DESC(verbose, "print a report to dmesg per race (0/1, default 0)");
module_param_cb(comm, &comm_param_ops, NULL, 0444);
MODULE_PARM_DESC(comm, "delay only tasks with this comm (default: all)");

/* ---- init/exit ----------------------------------------------------------- */

static int __init dcrace_init(void)
{
	int i, err;

	dcrace_ring_init(&events, event_slots, DCRACE_EVENTS);
	for_each_possible_cpu(i)
		prandom_seed_state(per_cpu_ptr(&inject_rnd, i),
				   get_random_u64() + i);
	for (i = 0; i < NR_PROBES; i++) {
		if (!probe_wanted(i))
			continue;
		err = probe_arm(i);
		if (!err)
			continue;
		if (probes[i].required) {
			pr_err("dcrace: cannot work: no probe for %s (tried %s%s%s, error %d)\n",
			       probes[i].name, probes[i].syms[0],
			       probes[i].syms[1] ? ", " : "",
			       probes[i].syms[1] ? probes[i].syms[1] : "", err);
			disarm_all();
			return err;
		}
		pr_warn("dcrace: probe %s missing (tried %s%s%s, error %d); continuing without it\n",
			probes[i].name, probes[i].syms[0],
			probes[i].syms[1] ? ", " : "",
			probes[i].syms[1] ? probes[i].syms[1] : "", err);
	}
	if (probes[P_WALK].fast)
		sites_warm_up();
	debugfs_setup();
	pr_info("dcrace: loaded: walk_component=%s lookup=%s rcu=%s step=%s kill=%s\n",
		probes[P_WALK].sym ?: "-", probes[P_LOOKUP].sym ?: "-",
		probes[P_RCU].sym ?: "-", probes[P_STEP].sym ?: "-",
		probes[P_KILL].sym ?: "-");
	return 0;
}

static void __exit dcrace_exit(void)
{
	debugfs_remove(dbg_dir);
	disarm_all();
	irq_work_sync(&report_irq_work);
	cancel_work_sync(&report_work);
	pr_info("dcrace: unloaded\n");
}

module_init(dcrace_init);
module_exit(dcrace_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dcrace: race detector for the dcache RCU path walk");
MODULE_AUTHOR("dcrace developers");
