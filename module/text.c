// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: reading the kernel's text at load (the layout's lowest part): a
 * function's start and size, and the direct calls in it (found by
 * decode.c's pure functions).
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "internal.h"

/*
 * The start and size of the function @name, looked up by registering a
 * disabled kprobe: the kprobe core resolves the symbol and checks that it
 * can be probed, but a disabled probe is never armed (no int3 written into
 * code other CPUs may be running; see design.md, "TCG threading").
 */
noinline unsigned long func_start(const char *name, unsigned long *size)
{
	struct kprobe kp = { .symbol_name = name,
			     .flags = KPROBE_FLAG_DISABLED };
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
 * The addresses just after the direct calls of @callee in @caller: up to
 * @max of them in *@after; returns how many there are (0 if the text is
 * not readable).
 */
unsigned int call_sites_after(const char *caller, const char *callee,
			      unsigned long *after, unsigned int max)
{
	unsigned long start, size;

	start = func_start(caller, &size);
	return start ? call_sites_in(start, size, callee, after, max) : 0;
}

/* The same, in the text at @start (@size bytes) of a function found. */
unsigned int call_sites_in(unsigned long start, unsigned long size,
			   const char *callee, unsigned long *after,
			   unsigned int max)
{
	unsigned long target, tsize;
	unsigned int n = 0;
	u8 *text;

	target = func_start(callee, &tsize);
	if (!target || !start || size > DCRACE_TEXT_MAX)
		return 0;
	text = kmalloc(size, GFP_KERNEL);
	if (!text)
		return 0;
	if (!copy_from_kernel_nofault(text, (void *)start, size))
		n = dcrace_find_calls_all(text, size, start, target, after,
					  max);
	kfree(text);
	return n;
}

/*
 * The address just after the one direct call of @callee in @caller, or 0
 * (no such call, or more than one, or not readable).
 */
unsigned long call_site_after(const char *caller, const char *callee)
{
	unsigned long after;

	return call_sites_after(caller, callee, &after, 1) == 1 ? after : 0;
}
