/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace.ko internals: the layout's part of internal.h (text.c, exits.c,
 * layout.c), included there in its layer's place.
 */
#ifndef _DCRACE_LAYOUT_H
#define _DCRACE_LAYOUT_H

/* ---- layout (text.c, exits.c, layout.c): the kernel at hand, at load --- */

/* Longer functions are not searched (ours are well under 2 KiB). */
#define DCRACE_TEXT_MAX		16384

unsigned long func_start(const char *name, unsigned long *size);
unsigned long call_site_after(const char *caller, const char *callee);
unsigned int call_sites_after(const char *caller, const char *callee,
			      unsigned long *after, unsigned int max);
unsigned int call_sites_in(unsigned long start, unsigned long size,
			   const char *callee, unsigned long *after,
			   unsigned int max);

#define DCRACE_EXITS		8
#define DCRACE_OPEN_SITES	8
#define DCRACE_OTHER_CALLERS	4
#define DCRACE_OPEN_LOOKUPS	4

/* A walk function's text (layout.walk_fns[]): "end=". */
enum dcrace_walk_fn_id { WF_LOOKUP, WF_PARENT, WF_OPEN, DCRACE_WALK_FNS };

struct dcrace_walk_fn {
	const char *name;
	unsigned long start, size;	/* 0: not in this kernel */
};

/*
 * Room for the return sites of path_lookupat() and path_parentat() (3 + 2
 * on our builds and Debian's) and the walk's calls of try_to_unlazy() (3):
 * a caller whose calls do not fit is refused alone, with one line naming
 * it (its ends unjudged, "walk_end ... partial"); the others are judged.
 */
#define DCRACE_END_SITES	16
#define DCRACE_UNLAZY_SITES	16
#define DCRACE_LINK_COPIES	4

/* After a call of a walk function returning an int errno. */
struct dcrace_end_ret {
	unsigned long addr;
	enum dcrace_walk_fn_id fn;
};

const char *walk_fn_name(unsigned long addr);

/* Where a probe at an exit goes (exit mode, exits.c). */
struct dcrace_exit_at {
	unsigned long addr;
	unsigned int pops;	/* return address at sp + pops words */
	bool in_step;		/* a ret of step_into() */
};

/*
 * What the load found in the kernel's text, for the configuration asked
 * (fast, late_sites, skip_probes): written once by layout_read(), before
 * any probe is armed, read-only after. 0 where nothing was found.
 */
struct dcrace_layout {
	unsigned long wc_lookup_ret;	/* after walk_component's lookup_fast() */
	unsigned long rcu_site;		/* after lookup_fast's __d_lookup_rcu() */
	/* every ret of walk_component and step_into, or none */
	struct dcrace_exit_at exits[DCRACE_EXITS];
	unsigned int nr_exits;
	/* after open()'s calls of lookup_fast(), wherever inlined */
	unsigned long open_lookup_rets[DCRACE_OPEN_LOOKUPS];
	unsigned int nr_open_lookups;
	/* after every call of path_openat(), or none */
	unsigned long open_rets[DCRACE_OPEN_SITES];
	unsigned int nr_open_rets;
	/* the walk functions */
	struct dcrace_walk_fn walk_fns[DCRACE_WALK_FNS];
	/* link_path_walk()'s out-of-line copies (gcc's clones) */
	struct dcrace_walk_fn link_copies[DCRACE_LINK_COPIES];
	unsigned int nr_link_copies;
	/* after the calls of path_lookupat() and path_parentat() */
	struct dcrace_end_ret end_rets[DCRACE_END_SITES];
	unsigned int nr_end_rets;
	/* a caller of the function did not fit: some ends not judged */
	bool end_refused[DCRACE_WALK_FNS];
	/* the walk's own calls of try_to_unlazy() (the call instructions) */
	unsigned long unlazy_calls[DCRACE_UNLAZY_SITES];
	unsigned int nr_unlazy_calls;
};

extern struct dcrace_layout dcrace_layout;

unsigned int exits_read(struct dcrace_exit_at *out);
void layout_read(void);

#endif /* _DCRACE_LAYOUT_H */
