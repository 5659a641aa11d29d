/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace.ko internals shared by the files in module/. The pure helpers
 * that the KUnit tests use as well are in <dcrace/dcrace.h>.
 *
 * Handlers may run in int3 context, which is NMI-like: they take no lock
 * that is not try-locked, and defer everything else to irq_work.
 */
#ifndef _DCRACE_INTERNAL_H
#define _DCRACE_INTERNAL_H

/* Messages carry their own "dcrace: " so reports can start with "BUG:". */
#define pr_fmt(fmt) fmt

#include <linux/atomic.h>
#include <linux/dcache.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include <dcrace/dcrace.h>

/*
 * The leading fields of fs/namei.c's struct nameidata, identical in every
 * 6.1.y (and Debian's 6.1.0-*). Only these are read. The load's self-check
 * (selftest.c) verifies them on the warm-up walks.
 *
 * struct nameidata is __randomize_layout: with CONFIG_RANDSTRUCT its
 * fields are shuffled per build and this mirror would read garbage.
 */
#ifdef CONFIG_RANDSTRUCT
#error "dcrace: CONFIG_RANDSTRUCT shuffles struct nameidata; the module cannot read it"
#endif

struct dcrace_nd_head {
	struct path path;
	struct qstr last;
	struct path root;
	struct inode *inode;
	unsigned int flags, state;
	unsigned int seq, next_seq, m_seq, r_seq;
	int last_type;		/* LAST_NORM (0): a name, not . or .. */
};

/* ---- counters: the enum from tables.h, as are the "stats" names ------ */

enum dcrace_counter {
#define DCRACE_COUNTER(id, name) id,
#include "tables.h"
	NR_COUNTERS
};

/* Counters added later, printed at the end of "stats" (see tables.h). */
#define C_FIRST_LATE	C_KILL_BUSY

/* The probes, in the order of "probes" (and of skip_probes' bits). */
enum dcrace_probe_id { P_WALK, P_LOOKUP, P_RCU, P_STEP, P_KILL, P_TERM,
		       NR_PROBES };

/* Which caller of lookup_fast() a step is (the trace event's lookup=). */
enum dcrace_lookup_kind { LK_WALK, LK_OPEN, NR_LOOKUP_KINDS };

struct dcrace_pcpu {
	u64 c[NR_COUNTERS];
	u64 hits[NR_PROBES];
	long inflight[NR_PROBES];	/* hijacked returns not yet back */
};

DECLARE_PER_CPU(struct dcrace_pcpu, dcrace_pcpu);
extern const char * const dcrace_counter_names[NR_COUNTERS];

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

/* ---- knobs: debugfs file, module parameter, range, default (tables.h) */

struct dcrace_knob {
	const char *name;
	s64 min, max;
	atomic64_t val;
};

enum dcrace_knob_id {
#define DCRACE_KNOB(id, name, min, max, def) id,
#include "tables.h"
	NR_KNOBS
};

extern struct dcrace_knob dcrace_knobs[NR_KNOBS];

static inline s64 knob(enum dcrace_knob_id k)
{
	return atomic64_read(&dcrace_knobs[k].val);
}

int knob_set(struct dcrace_knob *k, const char *buf);

/* ---- load-time parameters (main.c) ------------------------------------- */

extern struct dcrace_knob early_test;
extern bool stack_claim, fast, extra_probes, late_sites, skip_open_return;
extern unsigned int selftest_break;
extern unsigned int skip_probes;

/* ---- the pruner's record (kill.c) -------------------------------------- */

struct dcrace_kill {
	struct dcrace_kill_key key;	/* pointers compared, never followed */
	u64 time_ns;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool positive;
};

/* ---- per-task walk state (step.c) -------------------------------------- */

/*
 * A step's state at its end, read in the RCU section in which the dentry
 * was found (judge_snapshot()); an open() step is judged from it later,
 * when its result is known (open.c). Kept apart from the slots (one per
 * slot, slot_snap()): slot_find() scans the slots on every step, and
 * under TCG every extra cache line it strides over costs.
 */
struct dcrace_snap {
	bool inode_null;
	bool parent_changed;
	bool killed;
	bool name_truncated;
	unsigned int cur;	/* d_seq at the snapshot */
	u64 now;		/* when it was taken */
	struct dcrace_kill k;
	char name[DCRACE_NAME_LEN];
};

/*
 * Owned by one task for one step: walk_component() from its start to its
 * return, or open()'s last lookup from rcu_lookup to path_openat()'s
 * return (open.c).
 */
struct dcrace_slot {
	struct task_struct *owner;
	struct dcrace_nd_head *nd;	/* the walk's nameidata */
	unsigned long ret_site;	/* where walk_component returns (fast) */
	unsigned long ret_sp;	/* the stack pointer there (fast) */
	struct dentry *dentry;	/* see the lifetime rule in step.c */
	u64 sample_ns;		/* kill records older are another lifetime's */
	unsigned int seq;
	bool valid;
	bool positive;
	bool stepped;		/* step_into() ran in this step */
	u8 kind;		/* enum dcrace_lookup_kind */
	bool snapped;		/* its dcrace_snap (slot_snap()) is taken */
};

struct dcrace_slot *slot_find(struct task_struct *t);
struct dcrace_slot *step_open(unsigned long ret_site, unsigned long ret_sp,
			      struct dcrace_nd_head *nd, enum dcrace_lookup_kind kind);
void step_open_sampled(unsigned long ret_site, unsigned long ret_sp,
		       enum dcrace_lookup_kind kind, struct dentry *dentry);
void step_done(struct dcrace_slot *s, long ret);
void slot_release(struct dcrace_slot *s);
struct dcrace_snap *slot_snap(const struct dcrace_slot *s);
void judge_snapshot(struct dcrace_slot *s, struct dcrace_nd_head *nd);
void judge_verdict(struct dcrace_slot *s, long ret, u64 now);
const char *lookup_kind_name(enum dcrace_lookup_kind kind);
void rcu_sample(struct dcrace_slot *s, struct dentry *dentry,
		unsigned int seq);
int early_test_now(void);

/* Probe handlers. */
int walk_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int walk_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
int rcu_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int rcu_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
int rcu_site_pre(struct kprobe *p, struct pt_regs *regs);
int step_pre(struct kprobe *p, struct pt_regs *regs);
int walk_pre(struct kprobe *p, struct pt_regs *regs);
int kill_pre(struct kprobe *p, struct pt_regs *regs);
int term_pre(struct kprobe *p, struct pt_regs *regs);

/* What the rcu_lookup kretprobe keeps between entry and return. */
struct dcrace_rcu_data {
	struct dcrace_slot *slot;
	unsigned int *seqp;
};

bool kill_find(const struct dcrace_kill_key *key, u64 since,
	       struct dcrace_kill *out);
void kill_reset(void);

/* ---- injection (inject.c) ---------------------------------------------- */

void inject_init(void);
void maybe_inject(void);
int inject_comm_set(const char *buf, size_t len);
int inject_comm_get(char *buf, size_t size);
int inject_delay_set(const char *buf);
int inject_check(void);

/* ---- return sites and stack mode (sites.c) ----------------------------- */

#define DCRACE_RET_SITES	8

struct dcrace_site {
	unsigned long addr;	/* 0: free; set once, by cmpxchg */
	bool armed;		/* its kprobe is registered */
	bool failed;
	struct kprobe kp;
	char name[KSYM_SYMBOL_LEN];
};

extern struct dcrace_site sites[DCRACE_RET_SITES];
extern unsigned long wc_lookup_ret;
extern int k_lookup;
extern bool stack_mode;

bool site_ready(unsigned long ra);
void sites_warm_up(void);
void sites_open(void);
void sites_close(void);
void sites_sync(void);
void warm_up_walks(void);
void sites_clear(void);
int stack_mode_claim(struct pt_regs *regs);
void stack_learn(const struct dcrace_slot *s, struct pt_regs *regs);
bool stack_learning_now(void);

/* ---- a step's end at walk_component's and step_into's rets (exits.c) - */

#define DCRACE_EXITS	8

extern bool exit_mode;

int exits_arm(void);
unsigned long exits_kprobes(struct kprobe **kps, int *n);
void exits_disarm(void);
void exits_clear(void);
void exits_probes_show(struct seq_file *m);

/* ---- open()'s last component, other callers of lookup_fast (open.c) --- */

#define DCRACE_OPEN_SITES	8
#define DCRACE_OTHER_CALLERS	4
#define DCRACE_OPEN_LOOKUPS	4

int open_arm(void);
void open_kprobes(struct kprobe **kps, int *n);
unsigned long open_kprobes_missed(void);
void open_clear(void);
void open_reset(void);
bool open_covered(void);
void lookup_other(struct pt_regs *regs, struct dentry *dentry);
void open_warm_up(void);
void open_probes_show(struct seq_file *m);

/* ---- probes (probes.c) ------------------------------------------------- */

/* Of the first @nr of an array of structs with a kprobe "kp": */
/* add their kprobes to the unregistering batch @kps of *@n, */
#define kps_add(kps, n, arr, nr)					\
do {									\
	unsigned int __i;						\
									\
	for (__i = 0; __i < (nr); __i++)				\
		(kps)[(*(n))++] = &(arr)[__i].kp;			\
} while (0)

/* and their nmissed, summed. */
#define kps_missed(arr, nr)						\
({									\
	unsigned long __m = 0;						\
	unsigned int __i;						\
									\
	for (__i = 0; __i < (nr); __i++)				\
		__m += (arr)[__i].kp.nmissed;				\
	__m;								\
})

struct dcrace_probe {
	const char *name;
	const char * const syms[3];
	bool is_ret;
	bool required;
	struct kretprobe *rp;
	struct kprobe *kp;
	bool extra;		/* armed only with extra_probes=1 */
	const char *sym;	/* the symbol armed, NULL when missing */
	bool fast;		/* armed as an entry-only kprobe (see probes.c) */
	char where[KSYM_SYMBOL_LEN];	/* fast rcu_lookup: the call site */
};

extern struct dcrace_probe probes[NR_PROBES];
extern struct kprobe walk_kp;

/* Longer functions are not searched (ours are well under 2 KiB). */
#define DCRACE_TEXT_MAX		16384

unsigned long func_start(const char *name, unsigned long *size);
int probes_arm_all(void);
int probe_arm(enum dcrace_probe_id id);
unsigned long call_site_after(const char *caller, const char *callee);
unsigned int call_sites_after(const char *caller, const char *callee,
			      unsigned long *after, unsigned int max);
void disarm_all(void);
bool probe_wanted(int i);
unsigned long kprobes_missed(void);
int kretprobes_missed(void);

/* ---- events and reports (report.c) ------------------------------------- */

#define DCRACE_EVENTS	64

extern struct dcrace_ring events;

void report_init(void);
void report_reset(void);
void report_sync(void);
void report_event(const struct dcrace_slot *s, enum dcrace_verdict v,
		  long ret, u64 now);

/* ---- the load's self-check (selftest.c) --------------------------------- */

extern bool selftest_on;

void selftest_step_opened(void);
void selftest_sample(struct dcrace_slot *s, struct dentry *dentry,
		     unsigned int seq);
void selftest_step_closed(const struct dcrace_slot *s);
void selftest_judged(const struct dcrace_slot *s, enum dcrace_verdict v);
int selftest_verdict(void);

/* ---- debugfs (debugfs.c) ----------------------------------------------- */

extern const struct kernel_param_ops knob_param_ops, comm_param_ops;

void debugfs_setup(void);
void debugfs_teardown(void);
void reset_all(void);

#endif /* _DCRACE_INTERNAL_H */
