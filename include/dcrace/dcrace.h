/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace: a kprobes race detector for the dcache's RCU path walk.
 *
 * Types and the pure helpers (oracle, event ring, knob parser, call-site
 * decoder) shared by the module and its KUnit tests.
 */
#ifndef _DCRACE_DCRACE_H
#define _DCRACE_DCRACE_H

#include <linux/errno.h>
#include <linux/types.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

/* What an RCU walk made of a dentry it found; see dcrace_classify(). */
enum dcrace_verdict {
	DCRACE_NONE,		/* inode not NULL, or not a verdict we judge */
	DCRACE_GENUINE_NEGATIVE,/* NULL inode, d_seq unchanged: truly absent */
	DCRACE_PRUNED_NEGATIVE,	/* NULL inode, d_seq changed, never positive */
	DCRACE_FALSE_ENOENT,	/* pruned positive dentry reported -ENOENT */
	DCRACE_CAUGHT,		/* pruned positive dentry, walk got -ECHILD */
	DCRACE_CAUGHT_LATE,	/* ... pruned after the step's NULL test */
	DCRACE_UNEXPECTED,	/* pruned positive dentry, other result */
	/* the end of an RCU walk with a hard error (dcrace_classify_end()) */
	DCRACE_END_GENUINE,	/* from state its seqcounts still vouch for */
	DCRACE_FALSE_ENOTDIR,	/* from stale state: a false error */
	DCRACE_FALSE_EACCES,
	DCRACE_FALSE_EPERM,
	DCRACE_END_CAUGHT,	/* stale, revalidated: the walk left RCU mode */
	DCRACE_END_UNVOUCHED,	/* state moved, not in a way that makes the
				 * errno: neither genuine nor false
				 */
	DCRACE_END_NOT_JUDGED,	/* an errno decided on other state */
	NR_DCRACE_VERDICTS
};

/* What the oracle is told about one walk step. */
struct dcrace_sighting {
	bool inode_null;	/* d_inode NULL when the step finished */
	bool seq_changed;	/* d_seq differs from the sampled value */
	bool was_positive;	/* had an inode when sampled or when killed */
	bool late;		/* the step's NULL-inode test let it through
				 * (step_into() ran); a -ECHILD is then
				 * 6.1's step_into() guard, not that test
				 */
	int result;		/* the step's errno: 0, -ENOENT, -ECHILD, ... */
	/*
	 * With d_seq unchanged: the kill record says the dentry was positive
	 * and killed in the walker's RCU section (or the sample saw an inode
	 * that is gone): a writer cleared d_inode without moving d_seq.
	 */
	bool killed_positive;
};

enum dcrace_verdict dcrace_classify(const struct dcrace_sighting *s);

/*
 * What the oracle is told about the end of an RCU walk (terminate_walk()
 * with LOOKUP_RCU set, the walk function's result): whether the state the
 * walk decided on still is what its seqcounts vouch for, and what that
 * state is now.
 */
struct dcrace_end_sighting {
	int result;		/* the walk function's errno */
	bool dentry_stale;	/* nd->path.dentry's d_seq != nd->seq */
	bool inode_stale;	/* nd->inode != nd->path.dentry->d_inode */
	bool inode_dir;		/* nd->inode is a directory */
	bool can_lookup;	/* d_can_lookup(nd->path.dentry) now */
};

enum dcrace_verdict dcrace_classify_end(const struct dcrace_end_sighting *s);

/*
 * A revalidation (try_to_unlazy() from the walk) of a decision made on
 * stale state: would it have been a hard error? @inode_dir: nd->inode is
 * a directory; @can_lookup: d_can_lookup(nd->path.dentry) now. Returns
 * the errno the stale state implies (-EACCES: may_lookup() on a
 * non-directory inode; -ENOTDIR: the dentry is no directory now), or 0.
 */
int dcrace_unlazy_errno(bool stale, bool inode_dir, bool can_lookup);
/* An errno's name ("EACCES"; "-" for 0, else "E<n>") in @buf, returned. */
const char *dcrace_errno_name(int result, char *buf, size_t size);
/* Whether a step that ended with @result is judged at all. */
bool dcrace_result_judged(int result);
int dcrace_learn_early_test(int cur, bool stepped, int result,
			    bool seq_changed);
const char *dcrace_verdict_name(enum dcrace_verdict v);
bool dcrace_verdict_is_race(enum dcrace_verdict v);
bool dcrace_verdict_is_false_error(enum dcrace_verdict v);

#define DCRACE_NAME_LEN		48
#define DCRACE_STACK_DEPTH	8

/* One race, as kept in the ring and shown in debugfs "events". */
struct dcrace_event {
	u64 id;			/* sequence number, from 1 */
	u64 time_ns;		/* ktime_get_mono_fast_ns() when judged */
	enum dcrace_verdict verdict;
	int result;
	pid_t pid;
	int cpu;
	char comm[TASK_COMM_LEN];
	char name[DCRACE_NAME_LEN];	/* component, NUL-terminated */
	bool name_truncated;
	unsigned int seq_sampled;
	unsigned int seq_current;
	bool killer_known;
	pid_t killer_pid;
	char killer_comm[TASK_COMM_LEN];
	s64 kill_to_read_ns;	/* walker's check time - kill time */
	u8 lookup;		/* walk, open, or the walk's end */
	char end[24];		/* the walk function it ended in, or "-" */
	unsigned int nr_stack;
	unsigned long stack[DCRACE_STACK_DEPTH];
};

/*
 * Fixed-size ring of events: the newest are kept, overwritten ones are
 * counted as lost. Safe from any context (raw spinlock, irqs off).
 */
struct dcrace_ring {
	raw_spinlock_t lock;
	struct dcrace_event *slots;
	unsigned int cap;
	u64 head;		/* events ever pushed; next id is head + 1 */
	u64 lost;		/* events overwritten before being reset */
};

void dcrace_ring_init(struct dcrace_ring *r, struct dcrace_event *slots,
		      unsigned int cap);
u64 dcrace_ring_push(struct dcrace_ring *r, struct dcrace_event *e);
void dcrace_ring_reset(struct dcrace_ring *r);
/* Oldest id still held (0 when empty) and the newest id. */
void dcrace_ring_bounds(struct dcrace_ring *r, u64 *first, u64 *last,
			u64 *lost);
/* Copy event @id out; false if it is no longer (or not yet) held. */
bool dcrace_ring_get(struct dcrace_ring *r, u64 id, struct dcrace_event *out);

/*
 * Copy a NUL-terminated name into @dst (@size > 0) for an event: stops at
 * the NUL, never reads past it (no length trusted: a rename may change
 * name and length apart), '?' for what is not printable ASCII.
 * *@truncated: @dst could not hold it all.
 */
void dcrace_copy_name(char *dst, size_t size, const unsigned char *src,
		      bool *truncated);

/*
 * A trace event's value: @src (NUL-terminated, at most @size - 1 bytes
 * taken) into @dst with every space or non-printable byte replaced by
 * @repl, so that "key=value" stays one word; an empty @src gives "@repl".
 * @dst may be @src.
 */
void dcrace_trace_word(char *dst, const char *src, size_t size, char repl);

/*
 * What identifies a kill record: the dentry's address, its d_seq at
 * __dentry_kill() entry (the walker's sample, when this kill is the one
 * that invalidated it), its parent and its name hash. The pointers are
 * compared, never followed.
 */
struct dcrace_kill_key {
	const void *dentry;
	const void *parent;
	unsigned int seq;
	unsigned int hash;
};

static inline bool dcrace_kill_key_eq(const struct dcrace_kill_key *a,
				      const struct dcrace_kill_key *b)
{
	return a->dentry == b->dentry && a->seq == b->seq &&
	       a->parent == b->parent && a->hash == b->hash;
}

/*
 * Whether the kill record @rec names the kill of the dentry a walker
 * found (@want: its address, parent, name hash, and the d_seq it sampled,
 * which a kill that invalidated the sample saw at its entry). The key
 * repeats across lifetimes at a recycled address (a pruned name looked up
 * again can get the same address, parent, hash and d_seq); a dentry is
 * freed only after an RCU grace period, so a record whose grace period
 * has elapsed (@gp_elapsed: poll_state_synchronize_rcu(), on the cookie
 * @gp the kill took, checked inside the walker's RCU section) is an earlier
 * lifetime's. A kill in this lifetime cannot have a grace period elapsed
 * while the walker, which found the dentry in a hash chain before or
 * while it was unhashed, is still in its section. No clock, no d_seq
 * needed beyond the key: exact also for a writer that does not move it.
 */
static inline bool dcrace_kill_matches(const struct dcrace_kill_key *rec,
				       const struct dcrace_kill_key *want,
				       bool (*gp_elapsed)(unsigned long),
				       unsigned long gp)
{
	/* the key first: the grace period is polled for a match only */
	return dcrace_kill_key_eq(rec, want) && !gp_elapsed(gp);
}

/*
 * The parent filter: a -ECHILD step is no sighting of the child when the
 * parent's d_seq changed and the step did not reach step_into() (then
 * lookup_fast() may have bailed out on the parent before looking at the
 * child). A step that reached step_into() had passed lookup_fast()'s
 * parent check: its -ECHILD is about the child, whatever the parent did
 * afterwards.
 */
static inline bool dcrace_parent_filtered(int result, bool stepped,
					  bool parent_changed)
{
	return result == -ECHILD && !stepped && parent_changed;
}

/*
 * Whether a return probe may close a slot's step: the slot must belong to
 * the task that is returning, and the return must be the one the step
 * recorded when it opened, site and stack pointer (a ".." step opens no
 * slot but returns through the same instruction, deeper or shallower on
 * the stack). The kretprobe fallback records and sees 0 for both.
 */
static inline bool dcrace_step_returns(const void *owner, const void *task,
				       unsigned long want_site,
				       unsigned long want_sp,
				       unsigned long site, unsigned long sp)
{
	return owner && owner == task && want_site == site && want_sp == sp;
}

/* A direct near call: e8 and a 32-bit displacement. */
#define DCRACE_CALL_LEN		5

unsigned int dcrace_find_calls(const u8 *text, size_t len, unsigned long base,
			       unsigned long target, unsigned long *after);
/* The same, the first @max call sites in *@after, in address order. */
unsigned int dcrace_find_calls_all(const u8 *text, size_t len,
				   unsigned long base, unsigned long target,
				   unsigned long *after, unsigned int max);

/*
 * A function's returns, for probes that see its result (rax) and its
 * return address: for the ret (c3) at offset @ret of @text, the offsets
 * from which only pops lead to it (decoded forward) and into whose run no
 * jump can land (so a probe there runs on every path to the ret), in
 * *@at, with the number of pops in *@pops (the return address is that
 * many words above the stack pointer there); earliest first, the ret
 * itself last. Returns how many. A c3 byte inside another instruction
 * gives candidates too: registering a kprobe there fails (-EILSEQ).
 */
#define DCRACE_EPILOGUE_MAX	16
unsigned int dcrace_exit_points(const u8 *text, size_t len, size_t ret,
				size_t *at, unsigned int *pops,
				unsigned int max);
/*
 * Every way out of a function, for exit mode (exits.c): the places in
 * @text (at address @base) where an exit could start, tried at every byte
 * offset (dcrace_exit_candidates()); the caller then asks the kprobe core
 * which of them start an instruction (insn) and names the targets of
 * jumps (tail), and dcrace_exits_check() says whether every exit is a
 * ret it can probe or an allowed tail call.
 */
enum dcrace_exit_kind {
	DCRACE_EXIT_RET,	/* c3 */
	DCRACE_EXIT_JMP,	/* e9 rel32, eb rel8 out of the text */
	DCRACE_EXIT_JCC,	/* 0f 8x rel32, 7x rel8 out of the text */
	DCRACE_EXIT_OTHER,	/* ff /4, /5 (jmp through a register or
				 * memory), c2 (ret imm16): not followed
				 */
	DCRACE_EXIT_INT3,	/* cc: no exit, unless it is a kprobe's
				 * int3 over one (patched); the code's own
				 * (padding) is unknown to the kprobe core
				 */
};

/* A jump's target, as the caller names it. */
enum dcrace_tail {
	DCRACE_TAIL_FOREIGN,	/* not a function allowed (a .cold part,
				 * another function's middle, ...)
				 */
	DCRACE_TAIL_STEP,	/* step_into(), whose rets end the step */
	DCRACE_TAIL_OK,		/* another allowed function's start */
};

struct dcrace_exit_site {
	size_t off;
	unsigned long to;	/* JMP, JCC: the target address */
	u8 kind;		/* enum dcrace_exit_kind */
	u8 tail;		/* JMP, JCC: enum dcrace_tail */
	bool insn;		/* an instruction starts at off */
	bool patched;		/* its first byte is not the code's own (a
				 * kprobe's int3 or jump is there)
				 */
	bool unknown;		/* the kprobe core would not say (a real
				 * int3, a reserved site: no probe there)
				 */
};

/* Why exit mode cannot use a function (0: it can). */
enum dcrace_exits_why {
	DCRACE_EXITS_OK,
	DCRACE_EXITS_OTHER,	/* an indirect jump or a ret imm16 */
	DCRACE_EXITS_FOREIGN,	/* a jump out, not to an allowed function */
	DCRACE_EXITS_NO_RET,	/* no ret */
	DCRACE_EXITS_NO_STEP_TAIL, /* no jump to step_into() (inlined) */
	DCRACE_EXITS_TOO_MANY,	/* more candidates than the caller holds */
	DCRACE_EXITS_PATCHED,	/* a probe's bytes hide the code */
	DCRACE_EXITS_UNKNOWN,	/* a candidate no probe can be put on */
};

unsigned int dcrace_exit_candidates(const u8 *text, size_t len,
				    unsigned long base,
				    struct dcrace_exit_site *out,
				    unsigned int max);
/* *@bad: the site that decided a refusal, else @n */
enum dcrace_exits_why dcrace_exits_check(const struct dcrace_exit_site *ex,
					 unsigned int n, bool need_step_tail,
					 unsigned int *bad);
const char *dcrace_exits_why_name(enum dcrace_exits_why why);
/*
 * Probe the ret at @ret of @text: @arm(@ctx, offset, pops) on each of its
 * exit points (dcrace_exit_points()), earliest first, until one returns 0;
 * -EILSEQ (not an instruction's start) tries the next. Returns 0 or the
 * error that stopped it: a ret that none could probe is an error.
 */
int dcrace_exit_arm(const u8 *text, size_t len, size_t ret,
		    int (*arm)(void *ctx, size_t at, unsigned int pops),
		    void *ctx);

/* Strict knob parsing; 0 or -EINVAL, *out untouched on error. */
int dcrace_parse_s64(const char *buf, s64 min, s64 max, s64 *out);
int dcrace_parse_comm(const char *buf, size_t len, char *out, size_t size);

#endif /* _DCRACE_DCRACE_H */
