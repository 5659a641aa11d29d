// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the layout, the kernel at hand as the probes need it, read once
 * at load before any probe is armed (so no kprobe covers the text read):
 * where walk_component() and open() call lookup_fast(), where lookup_fast()
 * calls __d_lookup_rcu(), the exits (exits.c), where path_openat()'s
 * callers get its result. The arming (probes.c, sites.c) and the handlers
 * read dcrace_layout; nothing here runs after load. The nameidata mirror
 * that the handlers read is in internal.h.
 */
#include "internal.h"

struct dcrace_layout dcrace_layout;

/*
 * open()'s calls of lookup_fast(), wherever they were inlined: 6.1's
 * open_last_lookups(), 6.12's lookup_fast_for_open() (in path_openat() on
 * Debian's 6.12 twice, the O_CREAT case apart). More than fit: none.
 */
static void open_lookups_find(struct dcrace_layout *l)
{
	static const char * const callers[] = {
		"path_openat", "open_last_lookups", "lookup_fast_for_open",
	};
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(callers); i++) {
		n = call_sites_after(callers[i], "lookup_fast",
				     l->open_lookup_rets + l->nr_open_lookups,
				     DCRACE_OPEN_LOOKUPS - l->nr_open_lookups);
		if (n > DCRACE_OPEN_LOOKUPS - l->nr_open_lookups) {
			l->nr_open_lookups = 0;
			return;
		}
		l->nr_open_lookups += n;
	}
}

/*
 * After every call of path_openat() in its callers, or none: an open()
 * returning where no probe is would leave its step unjudged.
 */
static void open_rets_find(struct dcrace_layout *l)
{
	static const char * const callers[] = {
		"do_filp_open", "do_file_open_root",
	};
	unsigned int i, n, room;

	for (i = 0; i < ARRAY_SIZE(callers); i++) {
		room = DCRACE_OPEN_SITES - l->nr_open_rets;
		n = call_sites_after(callers[i], "path_openat",
				     l->open_rets + l->nr_open_rets, room);
		if (!n || n > room) {
			pr_warn("dcrace: open()'s last component is not judged: %u calls of path_openat in %s (room for %u)\n",
				n, callers[i], room);
			l->nr_open_rets = 0;
			return;
		}
		l->nr_open_rets += n;
	}
}

/*
 * The walk functions, for "end=" and for telling try_to_unlazy()'s calls
 * from the walk itself (link_path_walk(), inlined into the other three on
 * some builds) from complete_walk()'s and the rest.
 */
static void walk_fns_find(struct dcrace_layout *l)
{
	static const char * const names[DCRACE_WALK_FNS] = {
		[WF_LOOKUP] = "path_lookupat", [WF_PARENT] = "path_parentat",
		[WF_OPEN] = "path_openat", [WF_LINK] = "link_path_walk",
	};
	/* gcc's clones of link_path_walk() seen on our builds and Debian's */
	static const char * const link_clones[] = {
		"link_path_walk", "link_path_walk.part.0.constprop.0",
		"link_path_walk.part.0", "link_path_walk.constprop.0",
		"link_path_walk.isra.0",
	};
	struct dcrace_walk_fn *f = l->walk_fns;
	unsigned int i;

	for (i = 0; i < DCRACE_WALK_FNS; i++) {
		f[i].name = names[i];
		f[i].start = func_start(names[i], &f[i].size);
	}
	for (i = 0; i < ARRAY_SIZE(link_clones) && !f[WF_LINK].start; i++)
		f[WF_LINK].start = func_start(link_clones[i], &f[WF_LINK].size);
}

/*
 * After the calls of the walk functions that return an int errno:
 * path_lookupat() (stat(), every path lookup; O_PATH opens in
 * path_openat()), path_parentat() (unlink, mkdir, rename, ...). Their
 * callers, wherever found; path_openat()'s are open_rets.
 */
static void end_rets_find(struct dcrace_layout *l)
{
	static const struct {
		const char *caller;
		enum dcrace_walk_fn_id fn;
	} calls[] = {
		{ "filename_lookup", WF_LOOKUP }, { "path_openat", WF_LOOKUP },
		{ "do_o_path", WF_LOOKUP }, { "__filename_parentat", WF_PARENT },
		{ "filename_parentat", WF_PARENT },
	};
	unsigned long after[DCRACE_END_SITES];
	unsigned int i, j, n, room;

	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		room = DCRACE_END_SITES - l->nr_end_rets;
		n = call_sites_after(calls[i].caller,
				     l->walk_fns[calls[i].fn].name, after, room);
		if (n > room) {
			pr_warn("dcrace: walk ends not judged: %u calls of %s in %s (room for %u)\n",
				n, l->walk_fns[calls[i].fn].name,
				calls[i].caller, room);
			l->nr_end_rets = 0;
			return;
		}
		for (j = 0; j < n; j++) {
			l->end_rets[l->nr_end_rets].addr = after[j];
			l->end_rets[l->nr_end_rets++].fn = calls[i].fn;
		}
	}
}

/*
 * The walk's own calls of try_to_unlazy() (in link_path_walk(), wherever
 * inlined): the revalidations before a hard error. A probe on each call
 * instruction costs only when the walk takes that path (an error, or a
 * decision to revalidate), not on every walk as one at the function's
 * entry would (complete_walk() calls it at the end of every walk).
 */
static void unlazy_calls_find(struct dcrace_layout *l)
{
	unsigned long after[DCRACE_UNLAZY_SITES];
	unsigned int i, j, n, room;

	for (i = 0; i < DCRACE_WALK_FNS; i++) {
		if (!l->walk_fns[i].start)
			continue;
		room = DCRACE_UNLAZY_SITES - l->nr_unlazy_calls;
		n = call_sites_in(l->walk_fns[i].start, l->walk_fns[i].size,
				  "try_to_unlazy", after, room);
		if (n > room) {
			pr_warn("dcrace: end_caught not counted: more than %u calls of try_to_unlazy in the walk\n",
				DCRACE_UNLAZY_SITES);
			l->nr_unlazy_calls = 0;
			return;
		}
		for (j = 0; j < n; j++)
			l->unlazy_calls[l->nr_unlazy_calls++] =
				after[j] - DCRACE_CALL_LEN;
	}
}

/* "end=": the walk function @addr is in, or "-". */
const char *walk_fn_name(unsigned long addr)
{
	const struct dcrace_layout *l = &dcrace_layout;
	unsigned int i;

	for (i = 0; i < DCRACE_WALK_FNS; i++)
		if (addr - l->walk_fns[i].start < l->walk_fns[i].size)
			return l->walk_fns[i].name;
	return "-";
}

/*
 * Read what this load's configuration uses: with fast=0 (kretprobes)
 * nothing; exits only where they can be used (not with late_sites=1, nor
 * without the step_into probe, nor when walk_component() calls step_into()
 * instead of tail-jumping to it); open()'s pieces only with the rcu_lookup
 * site (path_openat()'s returns only with terminate_walk's probe).
 */
void layout_read(void)
{
	struct dcrace_layout *l = &dcrace_layout;
	unsigned long after;

	walk_fns_find(l);
	if (!fast)
		return;
	if (!(skip_probes & BIT(P_TERM))) {
		end_rets_find(l);
		unlazy_calls_find(l);
	}
	if (!late_sites && !(skip_probes & BIT(P_STEP)) &&
	    !call_sites_after("walk_component", "step_into", &after, 1))
		l->nr_exits = exits_read(l->exits);
	l->wc_lookup_ret = call_site_after("walk_component", "lookup_fast");
	l->rcu_site = call_site_after("lookup_fast", "__d_lookup_rcu");
	if (!l->rcu_site)
		return;
	open_lookups_find(l);
	if (l->nr_open_lookups && !(skip_probes & BIT(P_TERM)))
		open_rets_find(l);
}
