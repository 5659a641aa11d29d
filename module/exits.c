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
 * Used when both functions' code is as expected: no call of step_into()
 * in walk_component(), no tail call out of them other than to step_into()
 * and handle_dots() (whose ".." steps are not tracked), at least one ret
 * each. Else (and with late_sites=1, or without the step_into probe) the
 * return sites and the step_into entry probe are used.
 */
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

/* A probe for the ret at @ret of @fn's text (@text, at @start). */
static int exit_arm_ret(const u8 *text, size_t size, unsigned long start,
			size_t ret, bool in_step)
{
	size_t at[DCRACE_EPILOGUE_MAX + 1];
	unsigned int pops[DCRACE_EPILOGUE_MAX + 1], n, i;
	struct dcrace_exit *e;
	int err;

	n = dcrace_exit_points(text, size, ret, at, pops, ARRAY_SIZE(at));
	for (i = 0; i < n; i++) {
		if (nr_exits == DCRACE_EXITS)
			return -ENOSPC;
		e = &exits[nr_exits];
		memset(e, 0, sizeof(*e));
		e->kp.addr = (kprobe_opcode_t *)(start + at[i]);
		e->kp.pre_handler = exit_pre;
		err = register_kprobe(&e->kp);
		/* not an instruction's start: try the next pop, or no ret */
		if (err == -EILSEQ)
			continue;
		if (err)
			return err;
		e->pops = pops[i];
		e->in_step = in_step;
		sprint_symbol(e->name, start + at[i]);
		nr_exits++;
		return 0;
	}
	return 0;
}

/* Is every tail call of @text (at @start) one to a function in @ok? */
static bool tails_ok(const u8 *text, size_t size, unsigned long start,
		     const char * const *ok)
{
	unsigned long to[16];
	char sym[KSYM_SYMBOL_LEN];
	unsigned int n, i, j;
	size_t l;

	n = dcrace_jumps_out(text, size, start, to, ARRAY_SIZE(to));
	if (n > ARRAY_SIZE(to))
		return false;
	for (i = 0; i < n; i++) {
		sprint_symbol(sym, to[i]);
		/* a jump into another function's middle is no tail call */
		if (!strstr(sym, "+0x0/"))
			continue;
		for (j = 0; ok[j]; j++) {
			l = strlen(ok[j]);
			if (!strncmp(sym, ok[j], l) && sym[l] == '+')
				break;
		}
		if (!ok[j])
			return false;
	}
	return true;
}

/* Arm a probe at every ret of @fn; 0 if there is at least one. */
static int exits_of(const char *fn, bool in_step, const char * const *ok)
{
	unsigned long start, size;
	unsigned int before = nr_exits;
	int err = -EOPNOTSUPP;
	size_t i;
	u8 *text;

	start = func_start(fn, &size);
	if (!start || size > DCRACE_TEXT_MAX)
		return -ENOENT;
	text = kmalloc(size, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	if (copy_from_kernel_nofault(text, (void *)start, size) ||
	    !tails_ok(text, size, start, ok))
		goto out;
	for (i = 0, err = 0; i < size && !err; i++)
		if (text[i] == 0xc3)
			err = exit_arm_ret(text, size, start, i, in_step);
	if (!err && nr_exits == before)
		err = -ENOENT;
out:
	kfree(text);
	return err;
}

/*
 * At load, after the walk_component probe: arm the exits, or nothing (the
 * caller then arms the step_into entry probe and return sites are used).
 */
int exits_arm(void)
{
	static const char * const wc_tails[] = { "step_into", "handle_dots",
						 NULL };
	static const char * const si_tails[] = { NULL };
	unsigned long after;
	int err;

	/* a kretprobe on walk_component (fast=0) sees the returns itself */
	if (!fast || late_sites || (probes[P_WALK].sym && !probes[P_WALK].fast) ||
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
