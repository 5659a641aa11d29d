// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: a walk step's end at its function's returns ("exit mode").
 *
 * walk_component() ends a step that found a dentry either by its own ret
 * (lookup_fast()'s error, the NULL-inode test of patch 0001, ...) or by
 * tail-jumping to step_into(), whose ret then returns to walk_component's
 * caller. So a kprobe on each ret of the two functions sees every end of
 * a step: rax is its result, and the return address, a known number of
 * words above the stack pointer, says whose step it is. The probe is put
 * on the first of the pops before the ret when no jump lands among them,
 * so that x86 can turn it into a jump ("optimized"); the return sites in
 * link_path_walk() (sites.c) are int3 traps, since that function has an
 * exception-table entry. An end in step_into() also says that the step
 * reached it, so step_into() needs no entry probe.
 *
 * Every exit or none: used only when each function's every way out is
 * seen. Candidates (c3, jumps out of the text, conditional ones too,
 * indirect jumps) are found in the bytes and kept only where the kprobe
 * core says an instruction starts; then every ret must get its probe, and
 * every jump out must be a tail call to step_into() or handle_dots()
 * (whose ".." steps are not tracked) from walk_component(), to nothing
 * from step_into() (a .cold part or an indirect jump is not followed);
 * walk_component() must tail-jump to step_into() at least once (inlined,
 * no step would be seen reaching it), and not call it. Else (and with
 * late_sites=1, or without the step_into probe) the return sites and the
 * step_into entry probe are used.
 */
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "internal.h"

struct dcrace_exit {
	struct kprobe kp;
	unsigned int pops;	/* return address at sp + pops words */
	bool in_step;		/* a ret of step_into() */
	char name[KSYM_SYMBOL_LEN];
};

static struct dcrace_exit exits[DCRACE_EXITS];
static unsigned int nr_exits;
bool exit_mode;

static int exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct dcrace_exit *e = container_of(p, struct dcrace_exit, kp);
	const unsigned long *sp = (const unsigned long *)regs->sp;
	struct dcrace_slot *s = slot_find(current);

	if (e->in_step)
		hit(P_STEP);
	if (!s)
		return 0;
	/* open()'s last step calls step_into(); it ends in terminate_walk() */
	if (s->kind == LK_OPEN) {
		if (e->in_step)
			s->stepped = true;
		return 0;
	}
	if (!dcrace_step_returns(READ_ONCE(s->owner), current, s->ret_site,
				 s->ret_sp, sp[e->pops],
				 (unsigned long)&sp[e->pops + 1]))
		return 0;
	if (e->in_step)
		s->stepped = true;
	step_done(s, (long)regs->ax);
	return 0;
}

/* Where exits_of() arms: the function's start, and whose rets they are. */
struct dcrace_exit_ctx {
	unsigned long start;
	bool in_step;
};

/* dcrace_exit_arm()'s callback: a probe @at bytes in, @pops words deep. */
static int exit_arm_at(void *ctx, size_t at, unsigned int pops)
{
	const struct dcrace_exit_ctx *c = ctx;
	struct dcrace_exit *e;
	int err;

	if (nr_exits == DCRACE_EXITS)
		return -ENOSPC;
	e = &exits[nr_exits];
	memset(e, 0, sizeof(*e));
	e->kp.addr = (kprobe_opcode_t *)(c->start + at);
	e->kp.pre_handler = exit_pre;
	/* set before it can run */
	e->pops = pops;
	e->in_step = c->in_step;
	err = register_kprobe(&e->kp);
	if (err)
		return err;
	sprint_symbol(e->name, c->start + at);
	nr_exits++;
	return 0;
}

/*
 * Which candidates start an instruction: the kprobe core decodes the
 * function from its start to tell (-EILSEQ if not), seeing through the
 * bytes of kprobes already there; the opcode it saves is the code's own,
 * so a different byte in @text is a probe's. Another error (a real int3,
 * a static call or jump label site) leaves it unknown. Asked with
 * disabled kprobes, never armed (as func_start() does), unregistered in
 * one batch: one RCU wait.
 */
static int exits_insn_starts(unsigned long start, const u8 *text,
			     struct dcrace_exit_site *ex, unsigned int n)
{
	struct kprobe *kps, **batch;
	unsigned int i, nb = 0;
	int err = 0;

	kps = kcalloc(n, sizeof(*kps), GFP_KERNEL);
	batch = kcalloc(n, sizeof(*batch), GFP_KERNEL);
	if (!kps || !batch) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		kps[i].addr = (kprobe_opcode_t *)(start + ex[i].off);
		kps[i].flags = KPROBE_FLAG_DISABLED;
		err = register_kprobe(&kps[i]);
		ex[i].insn = !err;
		ex[i].patched = !err && kps[i].opcode != text[ex[i].off];
		ex[i].unknown = err && err != -EILSEQ;
		if (!err)
			batch[nb++] = &kps[i];
	}
	err = 0;
	if (nb)
		unregister_kprobes(batch, nb);
out:
	kfree(batch);
	kfree(kps);
	return err;
}

/* A jump's target: step_into(), an allowed function's start, or not. */
static u8 exit_tail(unsigned long to, const char * const *ok)
{
	char sym[KSYM_SYMBOL_LEN];
	size_t l;
	int j;

	sprint_symbol(sym, to);
	if (!strstr(sym, "+0x0/"))
		return DCRACE_TAIL_FOREIGN;
	for (j = 0; ok[j]; j++) {
		l = strlen(ok[j]);
		if (!strncmp(sym, ok[j], l) && sym[l] == '+')
			return strcmp(ok[j], "step_into") ? DCRACE_TAIL_OK :
							    DCRACE_TAIL_STEP;
	}
	return DCRACE_TAIL_FOREIGN;
}

/* step_into() on the debug kernel (KASAN): 7 KiB, about 200 of them */
#define DCRACE_EXIT_CANDS	512

/*
 * Whether exit mode can use @fn, from its @text (at @start): every
 * instruction that leaves it is a ret or a tail call to a function in
 * @ok; without @in_step (walk_component) one of them to step_into().
 */
static enum dcrace_exits_why exits_judge(const u8 *text, size_t size,
					 unsigned long start, bool in_step,
					 const char * const *ok,
					 struct dcrace_exit_site *ex,
					 unsigned int *n, unsigned int *bad)
{
	unsigned int i;

	*bad = 0;
	*n = dcrace_exit_candidates(text, size, start, ex, DCRACE_EXIT_CANDS);
	if (*n > DCRACE_EXIT_CANDS)
		return DCRACE_EXITS_TOO_MANY;
	if (exits_insn_starts(start, text, ex, *n))
		return DCRACE_EXITS_OTHER;
	for (i = 0; i < *n; i++)
		if (ex[i].insn && (ex[i].kind == DCRACE_EXIT_JMP ||
				   ex[i].kind == DCRACE_EXIT_JCC))
			ex[i].tail = exit_tail(ex[i].to, ok);
	return dcrace_exits_check(ex, *n, !in_step, bad);
}

/*
 * @fn's text and its judgement. Kprobes of an earlier load may still
 * cover it (the kprobe optimizer removes its jumps a few jiffies after
 * they are unregistered): wait for them, a while.
 */
static enum dcrace_exits_why exits_read(const char *fn, u8 *text,
					size_t size, unsigned long start,
					bool in_step, const char * const *ok,
					struct dcrace_exit_site *ex,
					unsigned int *n)
{
	enum dcrace_exits_why why = DCRACE_EXITS_OTHER;
	unsigned int bad = 0;
	int tries;

	for (tries = 0; tries < 10; tries++) {
		if (tries)
			msleep(20);
		*n = 0;
		if (copy_from_kernel_nofault(text, (void *)start, size))
			break;
		why = exits_judge(text, size, start, in_step, ok, ex, n, &bad);
		if (why != DCRACE_EXITS_PATCHED)
			break;
	}
	if (why != DCRACE_EXITS_OK)
		pr_info("dcrace: %s: %s (at %pS); walk steps end at return sites\n",
			fn, dcrace_exits_why_name(why),
			(void *)(start + (bad < *n ? ex[bad].off : 0)));
	return why;
}

/* Arm a probe at every ret of @fn, or fail (exits_arm() disarms). */
static int exits_of(const char *fn, bool in_step, const char * const *ok)
{
	struct dcrace_exit_ctx ctx = { .in_step = in_step };
	struct dcrace_exit_site *ex = NULL;
	unsigned long size;
	unsigned int n, i;
	int err = -ENOMEM;
	u8 *text;

	ctx.start = func_start(fn, &size);
	if (!ctx.start || size > DCRACE_TEXT_MAX)
		return -ENOENT;
	text = kmalloc(size, GFP_KERNEL);
	ex = kcalloc(DCRACE_EXIT_CANDS, sizeof(*ex), GFP_KERNEL);
	if (!text || !ex)
		goto out;
	err = -EOPNOTSUPP;
	if (exits_read(fn, text, size, ctx.start, in_step, ok, ex, &n))
		goto out;
	/* every ret that starts an instruction, or none */
	for (i = 0, err = 0; i < n && !err; i++) {
		if (!ex[i].insn || ex[i].kind != DCRACE_EXIT_RET)
			continue;
		err = dcrace_exit_arm(text, size, ex[i].off, exit_arm_at, &ctx);
		if (err)
			pr_info("dcrace: cannot probe the ret at %pS: %d; walk steps end at return sites\n",
				(void *)(ctx.start + ex[i].off), err);
	}
out:
	kfree(ex);
	kfree(text);
	return err;
}

/*
 * At load, before the walk probes (their kprobes would cover the code
 * read here, and no walk may learn a return site before the choice): arm
 * the exits, or nothing (the caller then arms the step_into entry probe
 * and return sites are used).
 */
int exits_arm(void)
{
	static const char * const wc_tails[] = { "step_into", "handle_dots",
						 NULL };
	static const char * const si_tails[] = { NULL };
	unsigned long after;
	int err;

	/* a kretprobe on walk_component (fast=0) sees the returns itself */
	if (!fast || late_sites ||
	    call_sites_after("walk_component", "step_into", &after, 1))
		return -EOPNOTSUPP;
	err = exits_of("walk_component", false, wc_tails);
	if (!err)
		err = exits_of("step_into", true, si_tails);
	if (err) {
		exits_disarm();
		return err;
	}
	WRITE_ONCE(exit_mode, true);
	probes[P_STEP].sym = probes[P_STEP].syms[0];
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
}

/* After disarm_all(): forget them. */
void exits_clear(void)
{
	memset(exits, 0, sizeof(exits));
	nr_exits = 0;
	WRITE_ONCE(exit_mode, false);
}

/* "probes": one line per exit. */
void exits_probes_show(struct seq_file *m)
{
	unsigned int i;

	for (i = 0; i < nr_exits; i++)
		seq_printf(m, "walk_exit %s kprobe armed -\n", exits[i].name);
}
