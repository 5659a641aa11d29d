/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace.ko internals shared by the files in module/, in the order of
 * their layers, lowest first (docs/design.md, "Where things are"): a file
 * uses what is declared here for its own layer and the layers before it,
 * never for one after it (tests/06-layers.t). The pure helpers that the
 * KUnit tests use as well are in <dcrace/dcrace.h>.
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
#include <linux/hash.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include <dcrace/dcrace.h>

/*
 * The nameidata mirror (part of the layout: what the core reads of the
 * kernel's walk): the leading fields of fs/namei.c's struct nameidata,
 * identical in every 6.1.y (and Debian's 6.1.0-*). Only these are read.
 * The load's self-check (selftest.c) verifies them on the warm-up walks.
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

/* ---- state: counters, the enum from tables.h, as are the "stats" names */

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

/* skip_probes' bits after the probes': the walk ends' sites (bench) */
enum { SKIP_OPEN_RETURN = NR_PROBES, SKIP_END_RETURN, SKIP_UNLAZY, SKIP_RECLAIM };

/*
 * Which caller of lookup_fast() a step is (the trace event's lookup=);
 * LK_END: no step, the walk's end (end.c).
 */
enum dcrace_lookup_kind { LK_WALK, LK_OPEN, NR_LOOKUP_KINDS, LK_END = NR_LOOKUP_KINDS };

/* The probes at sites the layout found, counted per kind ("probes"). */
enum dcrace_site_kind { SH_WALK_RETURN, SH_WALK_EXIT, SH_OPEN_RETURN,
			SH_END_RETURN, SH_UNLAZY, SH_RECLAIM, NR_SITE_KINDS };

struct dcrace_pcpu {
	u64 c[NR_COUNTERS];
	u64 hits[NR_PROBES];
	long inflight[NR_PROBES];	/* hijacked returns not yet back */
	u64 site_hits[NR_SITE_KINDS];
	unsigned int sample_skip;	/* sample=N: events left to skip */
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

#define site_hit(k)	this_cpu_inc(dcrace_pcpu.site_hits[k])

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

/* ---- state: knobs: debugfs file, module parameter, range, default ---- */

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

/* ---- state (state.c): what the runtime reads, set at load -------------- */

/* Load-time parameters (module_param()s in main.c). */
extern struct dcrace_knob early_test;
extern bool stack_claim, fast, extra_probes, late_sites, skip_open_return;
extern bool test_miss_returns;
extern bool callbacks;
extern unsigned int test_end_room;
extern unsigned int selftest_break;
extern unsigned int skip_probes;

/*
 * The modes the load chose, read by the handlers: written at load (arm,
 * learn) and cleared at unload, never by a handler.
 */
extern bool exit_mode;		/* walk steps end at the exits (sites.c) */
extern bool stack_mode;		/* rcu_lookup opens the walk steps (learn.c) */
extern bool step_probed;	/* step_into is probed (entry or exits) */
extern bool open_on;		/* every piece of open()'s judgement armed */
extern bool end_on;		/* walk ends judged: terminate_walk, returns */
extern bool sites_learning;	/* return sites are learnt (sites.c) */

/*
 * Stack mode's word offsets at the rcu_lookup site (walk.c learns them
 * while stack_learning, learn.c decides): lookup_fast()'s return address
 * and walk_component()'s; -1 unknown.
 */
extern int k_lookup, k_walk;
extern int stack_seen;		/* learning hits that agreed */
extern bool stack_bad;		/* learning hits disagreed */
extern bool stack_learning;

/* Is open()'s last component judged? */
static inline bool open_covered(void)
{
	return READ_ONCE(open_on) && READ_ONCE(k_lookup) >= 0;
}

/* ---- state: the kill record, the slot, the self-check's hooks --------- */

struct dcrace_kill {
	struct dcrace_kill_key key;	/* pointers compared, never followed */
	u64 time_ns;
	unsigned long gp;	/* get_state_synchronize_rcu() at the kill */
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool positive;
};

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
	unsigned int seq;
	bool valid;
	bool positive;
	bool stepped;		/* step_into() ran in this step */
	u8 kind;		/* enum dcrace_lookup_kind */
	bool snapped;		/* its dcrace_snap (slot_snap()) is taken */
	bool end_pending;	/* its dcrace_end_snap waits for the result */
};

/*
 * The end of an RCU walk (terminate_walk() with LOOKUP_RCU set), read in
 * its RCU section (end.c), judged when the walk function's result is
 * known, at its return site.
 */
struct dcrace_end_snap {
	bool dentry_stale;	/* nd->path.dentry's d_seq != nd->seq */
	bool inode_stale;	/* nd->inode != nd->path.dentry->d_inode */
	bool inode_dir;		/* nd->inode is a directory */
	bool can_lookup;	/* d_can_lookup(nd->path.dentry) */
	bool name_truncated;
	unsigned int seq;	/* nd->seq */
	unsigned int cur;	/* nd->path.dentry's d_seq */
	char name[DCRACE_NAME_LEN];	/* nd->path.dentry's name */
};

/*
 * The load's self-check watching the runtime (selftest.c sets it while it
 * walks, NULL otherwise): the runtime calls up only through these.
 */
struct dcrace_watch {
	void (*step_opened)(void);
	void (*sampled)(struct dcrace_slot *s, struct dentry *dentry,
			unsigned int seq);
	void (*step_closed)(const struct dcrace_slot *s);
	void (*judged)(const struct dcrace_slot *s, enum dcrace_verdict v);
};

extern const struct dcrace_watch *dcrace_watch;

static inline const struct dcrace_watch *watching(void)
{
	return READ_ONCE(dcrace_watch);
}

/* test_miss_returns=1 (tests): return probes ignore the walk, after load */
static inline bool miss_return(void)
{
	return unlikely(test_miss_returns) && !watching();
}

#include "layout.h"

/* ---- report (report.c, trace.h) ----------------------------------------- */

#define DCRACE_EVENTS	64

extern struct dcrace_ring events;

void report_init(void);
void report_reset(void);
void report_sync(void);
void report_event(const struct dcrace_slot *s, const struct dcrace_snap *sn,
		  enum dcrace_verdict v, long ret, u64 now);
void report_end_event(const struct dcrace_end_snap *e, enum dcrace_verdict v,
		      long ret, u64 now, const char *end);

/* ---- the pruner's record (kill.c) --------------------------------------- */

bool kill_find(const struct dcrace_kill_key *key, struct dcrace_kill *out);
void kill_reset(void);
int kill_pre(struct kprobe *p, struct pt_regs *regs);

/* ---- injection (inject.c) ---------------------------------------------- */

void inject_init(void);
/*
 * The windows (knob "window", a mask): after the d_seq sample, after a
 * step, and (tests) at a walk's end before its snapshot.
 */
#define DCRACE_WINDOW_SAMPLE	1
#define DCRACE_WINDOW_STEP	2
#define DCRACE_WINDOW_END	4
/* the filesystem callbacks' windows: DCRACE_WINDOW_CB << kind */
#define DCRACE_WINDOW_CB	8
#define DCRACE_WINDOW_FREE	(DCRACE_WINDOW_CB << CB_FREE)
void maybe_inject_slow(unsigned int window);

/* The fast path in the caller: the delay is off in every walk but a test's. */
static inline void maybe_inject(unsigned int window)
{
	if (unlikely(knob(K_DELAY_US)))
		maybe_inject_slow(window);
}

bool inject_comm_matches(void);
int inject_comm_set(const char *buf, size_t len);
int inject_comm_get(char *buf, size_t size);
int inject_delay_set(const char *buf);
int inject_check(void);

/* ---- the filesystem callbacks of an RCU walk (callbacks.c) ------------ */

enum dcrace_cb_kind { CB_PERMISSION, CB_REVALIDATE, CB_HASH, CB_COMPARE,
		      CB_GET_LINK, CB_LOAD, CB_FREE, NR_CB_KINDS };
/* the freeing side's windows delay the hunt's controller only */
#define DCRACE_FREER_COMM	"dcr-ctl"
int callbacks_arm(void);
void callbacks_disarm(void);
void callbacks_show(struct seq_file *m);
unsigned long callbacks_missed(void);

/* ---- the slots (slots.c): a task's slot, found and claimed ----------- */

#define DCRACE_SLOT_BITS	8
#define DCRACE_SLOTS		BIT(DCRACE_SLOT_BITS)
#define DCRACE_SLOT_PROBE	16	/* a power of 2: SLOT_LAST_MASK */
#define SLOT_LAST_MASK		(DCRACE_SLOT_PROBE - 1)
extern struct dcrace_slot dcrace_slots[DCRACE_SLOTS];
extern unsigned long dcrace_slot_last[DCRACE_SLOTS];
struct dcrace_slot *slot_find_scan(struct task_struct *t, unsigned int h);
struct dcrace_slot *slot_claim_scan(struct task_struct *t, unsigned int h,
				    bool find);

static inline struct dcrace_slot *slot_at(unsigned int h, unsigned int i)
{
	return &dcrace_slots[(h + i) % DCRACE_SLOTS];
}

/* Is the word @w task @t's? Then its last claim is slot_at(h, w & mask). */
static inline bool slot_last_is(unsigned long w, struct task_struct *t)
{
	return (w & ~(unsigned long)SLOT_LAST_MASK) == (unsigned long)t;
}

/* The slot task @t owns, or NULL. */
static inline struct dcrace_slot *slot_find(struct task_struct *t)
{
	unsigned int h = hash_ptr(t, DCRACE_SLOT_BITS);
	unsigned long w = READ_ONCE(dcrace_slot_last[h]);
	struct dcrace_slot *s;

	if (slot_last_is(w, t)) {
		s = slot_at(h, w & SLOT_LAST_MASK);
		return READ_ONCE(s->owner) == t ? s : NULL;
	}
	return slot_find_scan(t, h);
}

/* The slot task @t owns, else a free one it now owns; NULL: none free. */
static inline struct dcrace_slot *slot_claim(struct task_struct *t)
{
	unsigned int h = hash_ptr(t, DCRACE_SLOT_BITS);
	unsigned long w = READ_ONCE(dcrace_slot_last[h]);
	struct dcrace_slot *s;
	struct task_struct *o;

	if (!slot_last_is(w, t))
		return slot_claim_scan(t, h, true);
	/* its last claim: still its own, or free again, or taken (it owns none) */
	s = slot_at(h, w & SLOT_LAST_MASK);
	o = READ_ONCE(s->owner);
	if (o == t || (!o && !cmpxchg(&s->owner, NULL, t)))
		return s;
	return slot_claim_scan(t, h, false);
}

/* ---- core: a step from its start to its judgement (step.c) ------------- */

struct dcrace_slot *step_open(unsigned long ret_site, unsigned long ret_sp,
			      struct dcrace_nd_head *nd, enum dcrace_lookup_kind kind);
void step_open_sampled(unsigned long ret_site, unsigned long ret_sp,
		       enum dcrace_lookup_kind kind, struct dentry *dentry);
void step_done_slow(struct dcrace_slot *s, long ret);
void slot_release(struct dcrace_slot *s);
void slot_end_set(struct dcrace_slot *s);
void slot_end_clear(struct dcrace_slot *s);
bool ends_none_pending(void);
bool sample_out_slow(void);

/* sample=N with N > 1 only: the default (every step judged) is one load */
static inline bool sample_out(void)
{
	return unlikely(knob(K_SAMPLE) > 1) && sample_out_slow();
}

/* The step's part of the slot cleared; the task keeps the slot. */
static inline void slot_reset_step(struct dcrace_slot *s)
{
	s->valid = false;
	s->snapped = false;
	s->dentry = NULL;
	s->ret_site = 0;
}

/*
 * The end of a step. Inline: a step that succeeded in stack mode (nearly
 * every one) has nothing to judge, keeps its slot and may be delayed.
 */
static inline void step_done(struct dcrace_slot *s, long ret)
{
	if (likely(!ret && READ_ONCE(stack_mode) && !watching())) {
		bool rcu = READ_ONCE(s->nd->flags) & LOOKUP_RCU;

		slot_reset_step(s);
		if (rcu)
			maybe_inject(DCRACE_WINDOW_STEP);
		return;
	}
	step_done_slow(s, ret);
}

struct dcrace_snap *slot_snap(const struct dcrace_slot *s);
struct dcrace_end_snap *slot_end(const struct dcrace_slot *s);
void judge_snapshot(struct dcrace_slot *s, struct dcrace_nd_head *nd);
void judge_verdict(struct dcrace_slot *s, long ret, u64 now);
void rcu_sample(struct dcrace_slot *s, struct dentry *dentry,
		unsigned int seq);
int early_test_now(void);

/* ---- core: the end of an RCU walk (end.c) ------------------------------ */

/* A probe after a call of a walk function (armed by sites.c). */
struct dcrace_end_site {
	struct kprobe kp;
	struct dcrace_end_ret at;
	char name[KSYM_SYMBOL_LEN];
};

void end_snapshot(struct dcrace_slot *s, struct dcrace_nd_head *nd);
void end_judge(struct dcrace_slot *s, long ret, enum dcrace_walk_fn_id fn);
int end_ret_pre(struct kprobe *p, struct pt_regs *regs);
int unlazy_pre(struct kprobe *p, struct pt_regs *regs);
int task_exit_pre(struct kprobe *p, struct pt_regs *regs);

/* ---- core: open()'s last component, other lookups (open.c) ------------- */

void lookup_other(struct pt_regs *regs, struct dentry *dentry);
int term_pre(struct kprobe *p, struct pt_regs *regs);
int open_ret_pre(struct kprobe *p, struct pt_regs *regs);
void open_reset(void);
u64 open_lookup_hits_sum(unsigned int i);
unsigned long open_other_caller(unsigned int i, s64 *hits);

/* ---- core: the walk's probe handlers (walk.c) -------------------------- */

#define DCRACE_RET_SITES	8

/* A learnt return site of walk_component(); armed by sites.c. */
struct dcrace_site {
	unsigned long addr;	/* 0: free; set once, by cmpxchg */
	bool armed;		/* its kprobe is registered */
	bool failed;
	struct kprobe kp;
	char name[KSYM_SYMBOL_LEN];
};

extern struct dcrace_site sites[DCRACE_RET_SITES];
/* Queued when a site is learnt; sites.c sets it up (sites_init()). */
extern struct irq_work site_irq_work;

/* A probe at one of walk_component's or step_into's rets (exit mode). */
struct dcrace_exit {
	struct kprobe kp;
	struct dcrace_exit_at at;
	char name[KSYM_SYMBOL_LEN];
};

int walk_pre(struct kprobe *p, struct pt_regs *regs);
int site_pre(struct kprobe *p, struct pt_regs *regs);
int exit_pre(struct kprobe *p, struct pt_regs *regs);
int rcu_site_pre(struct kprobe *p, struct pt_regs *regs);
int step_pre(struct kprobe *p, struct pt_regs *regs);
int lookup_pre(struct kprobe *p, struct pt_regs *regs);
int walk_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int walk_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
int rcu_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int rcu_ret(struct kretprobe_instance *ri, struct pt_regs *regs);

/* What the rcu_lookup kretprobe keeps between entry and return. */
struct dcrace_rcu_data {
	struct dcrace_slot *slot;
	unsigned int *seqp;
};

/* ---- arm: one probe (probes.c) ----------------------------------------- */

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
extern struct kprobe walk_kp, rcu_kp;

int probe_arm(enum dcrace_probe_id id);
bool probe_wanted(int i);
int kretprobes_missed(void);

/* ---- arm: kprobes at the addresses the layout found (sites.c) ---------- */

void sites_init(void);
void sites_open(void);
void sites_flush(void);
void sites_close(void);
void sites_sync(void);
void sites_clear(void);
int exits_arm(void);
unsigned long exits_kprobes(struct kprobe **kps, int *n);
#define DCRACE_MAX_KPROBES (NR_PROBES + DCRACE_RET_SITES + DCRACE_OPEN_SITES + \
			    DCRACE_EXITS + DCRACE_END_SITES + DCRACE_UNLAZY_SITES + 1)
int armed_kprobes(struct kprobe **kps);
void exits_disarm(void);
void exits_clear(void);
const char *exit_name(unsigned int i);
int open_arm(void);
int end_arm(void);
bool end_fn_covered(enum dcrace_walk_fn_id fn);
void end_kprobes(struct kprobe **kps, int *n);
unsigned long end_kprobes_missed(void);
void end_clear(void);
const char *end_site_name(unsigned int i);
const char *unlazy_site_name(unsigned int i);
bool exit_reclaim_armed(void);
void open_kprobes(struct kprobe **kps, int *n);
unsigned long open_kprobes_missed(void);
void open_clear(void);
const char *open_site_name(unsigned int i);

/* ---- arm: every probe, in order; unload (arm.c) ------------------------- */

int arm_all(void);
void disarm_all(void);
unsigned long kprobes_missed(void);

/* ---- learn: warm-up walks, stack offsets (learn.c); self-check --------- */

void warm_up_walks(void);
void learn_walks(void);
int selftest_verdict(void);

/* ---- debugfs (debugfs.c) ----------------------------------------------- */

extern const struct kernel_param_ops knob_param_ops, comm_param_ops;

void debugfs_setup(void);
void debugfs_teardown(void);
void reset_all(void);

#endif /* _DCRACE_INTERNAL_H */
