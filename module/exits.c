// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the layout of a walk step's ends at its functions' returns
 * ("exit mode"): where the probes at the exits go, found at load (the
 * handler is walk.c's exit_pre(), the arming sites.c's exits_arm()).
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
 *
 * Each probe's place is tried with a disabled kprobe (as func_start()
 * does: never armed), all unregistered in one batch at the end: the kprobe
 * core says where an instruction starts; the arming then uses those.
 */
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "internal.h"

/* Where exits_of() looks: the function's start, whose rets they are. */
struct dcrace_exits_ctx {
	unsigned long start;
	bool in_step;
	struct dcrace_exit_at *out;	/* the places found, DCRACE_EXITS */
	struct kprobe *kps;		/* their disabled kprobes */
	unsigned int n;
};

/*
 * dcrace_exit_arm()'s callback: a probe @at bytes in, @pops words deep,
 * if the kprobe core takes one there (a disabled one, kept until
 * exits_read() ends).
 */
static int exit_place(void *ctx, size_t at, unsigned int pops)
{
	struct dcrace_exits_ctx *c = ctx;
	struct kprobe *kp;
	int err;

	if (c->n == DCRACE_EXITS)
		return -ENOSPC;
	kp = &c->kps[c->n];
	memset(kp, 0, sizeof(*kp));
	kp->addr = (kprobe_opcode_t *)(c->start + at);
	kp->flags = KPROBE_FLAG_DISABLED;
	err = register_kprobe(kp);
	if (err)
		return err;
	c->out[c->n].addr = c->start + at;
	c->out[c->n].pops = pops;
	c->out[c->n].in_step = c->in_step;
	c->n++;
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
static enum dcrace_exits_why exits_read_fn(const char *fn, u8 *text,
					   size_t size, unsigned long start,
					   bool in_step,
					   const char * const *ok,
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

/* A place for a probe at every ret of @fn, or fail. */
static int exits_of(const char *fn, bool in_step, const char * const *ok,
		    struct dcrace_exits_ctx *c)
{
	struct dcrace_exit_site *ex = NULL;
	unsigned long size;
	unsigned int n, i;
	int err = -ENOMEM;
	u8 *text;

	c->start = func_start(fn, &size);
	c->in_step = in_step;
	if (!c->start || size > DCRACE_TEXT_MAX)
		return -ENOENT;
	text = kmalloc(size, GFP_KERNEL);
	ex = kcalloc(DCRACE_EXIT_CANDS, sizeof(*ex), GFP_KERNEL);
	if (!text || !ex)
		goto out;
	err = -EOPNOTSUPP;
	if (exits_read_fn(fn, text, size, c->start, in_step, ok, ex, &n))
		goto out;
	/* every ret that starts an instruction, or none */
	for (i = 0, err = 0; i < n && !err; i++) {
		if (!ex[i].insn || ex[i].kind != DCRACE_EXIT_RET)
			continue;
		err = dcrace_exit_arm(text, size, ex[i].off, exit_place, c);
		if (err)
			pr_info("dcrace: cannot probe the ret at %pS: %d; walk steps end at return sites\n",
				(void *)(c->start + ex[i].off), err);
	}
out:
	kfree(ex);
	kfree(text);
	return err;
}

/*
 * At load, before any probe is armed (a kprobe would cover the code read
 * here): the places of the probes at every exit of walk_component() and
 * step_into(), in *@out (DCRACE_EXITS of them at most); returns how many,
 * 0 if exit mode cannot be used.
 */
unsigned int exits_read(struct dcrace_exit_at *out)
{
	static const char * const wc_tails[] = { "step_into", "handle_dots",
						 NULL };
	static const char * const si_tails[] = { NULL };
	struct dcrace_exits_ctx c = { .out = out };
	struct kprobe *batch[DCRACE_EXITS];
	unsigned int i;
	int err;

	c.kps = kcalloc(DCRACE_EXITS, sizeof(*c.kps), GFP_KERNEL);
	if (!c.kps)
		return 0;
	err = exits_of("walk_component", false, wc_tails, &c);
	if (!err)
		err = exits_of("step_into", true, si_tails, &c);
	for (i = 0; i < c.n; i++)
		batch[i] = &c.kps[i];
	if (c.n)
		unregister_kprobes(batch, c.n);
	kfree(c.kps);
	if (err) {
		memset(out, 0, DCRACE_EXITS * sizeof(*out));
		return 0;
	}
	return c.n;
}
