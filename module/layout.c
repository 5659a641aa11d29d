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
 * link_path_walk()'s out-of-line copies, matched by prefix: the name
 * alone and with gcc's clone suffixes (.part.N, .constprop.N, .isra.N,
 * one or two of them, N < 2: "link_path_walk.part.0.constprop.0" on our
 * builds and Debian's). Where the compiler inlined it whole there is
 * none, and the walk's revalidations are not told from path_openat()'s
 * (before a create) or complete_walk()'s: none is probed then.
 */
/* Clone suffix @i (1..6): ".part.0", ".part.1", ".constprop.0", ... */
static const char *link_suffix(unsigned int i, char *buf, size_t size)
{
	static const char * const kinds[] = { "part", "constprop", "isra" };

	if (!i)
		return "";
	snprintf(buf, size, ".%s.%u", kinds[(i - 1) / 2], (i - 1) % 2);
	return buf;
}

static void link_copies_find(struct dcrace_layout *l)
{
	char name[KSYM_NAME_LEN], s1[16], s2[16];
	struct dcrace_walk_fn *f;
	unsigned int a, b;

	for (a = 0; a <= 6; a++) {
		for (b = 0; b <= 6; b++) {
			/* one suffix of a kind, none after no suffix */
			if (b && (!a || (a - 1) / 2 == (b - 1) / 2))
				continue;
			snprintf(name, sizeof(name), "link_path_walk%s%s",
				 link_suffix(a, s1, sizeof(s1)),
				 link_suffix(b, s2, sizeof(s2)));
			f = &l->link_copies[l->nr_link_copies];
			f->start = func_start(name, &f->size);
			if (!f->start)
				continue;
			f->name = "link_path_walk";
			if (++l->nr_link_copies == DCRACE_LINK_COPIES)
				return;
		}
	}
}

/* The walk functions, for "end=", and link_path_walk()'s copies. */
static void walk_fns_find(struct dcrace_layout *l)
{
	static const char * const names[DCRACE_WALK_FNS] = {
		[WF_LOOKUP] = "path_lookupat", [WF_PARENT] = "path_parentat",
		[WF_OPEN] = "path_openat",
	};
	struct dcrace_walk_fn *f = l->walk_fns;
	unsigned int i;

	for (i = 0; i < DCRACE_WALK_FNS; i++) {
		f[i].name = names[i];
		f[i].start = func_start(names[i], &f[i].size);
	}
	link_copies_find(l);
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
	unsigned int max = test_end_room ? min_t(unsigned int, test_end_room,
						 DCRACE_END_SITES) :
					   DCRACE_END_SITES;
	unsigned long after[DCRACE_END_SITES];
	unsigned int i, j, n, room;

	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		room = max - l->nr_end_rets;
		n = call_sites_after(calls[i].caller,
				     l->walk_fns[calls[i].fn].name, after, room);
		/* the others stay judged; this caller's ends are not */
		if (n > room) {
			pr_warn("dcrace: walk ends through %s not judged: %u calls of %s, room for %u more\n",
				calls[i].caller, n,
				l->walk_fns[calls[i].fn].name, room);
			l->end_refused[calls[i].fn] = true;
			continue;
		}
		for (j = 0; j < n; j++) {
			l->end_rets[l->nr_end_rets].addr = after[j];
			l->end_rets[l->nr_end_rets++].fn = calls[i].fn;
		}
	}
}

/*
 * The walk's own calls of try_to_unlazy(), in link_path_walk()'s
 * out-of-line copies only: the revalidations before a hard error. A probe
 * on each call instruction costs only when the walk takes that path (an
 * error, or a decision to revalidate), not on every walk as one at the
 * function's entry would (complete_walk() calls it at the end of every
 * walk); path_openat()'s call before a create is not the walk's.
 */
static void unlazy_calls_find(struct dcrace_layout *l)
{
	unsigned long after[DCRACE_UNLAZY_SITES];
	const struct dcrace_walk_fn *f;
	unsigned int i, j, n, room;

	if (!l->nr_link_copies)
		pr_warn("dcrace: link_path_walk() has no out-of-line copy in this kernel: its revalidations are not counted (end_caught stays 0)\n");
	for (i = 0; i < l->nr_link_copies; i++) {
		f = &l->link_copies[i];
		room = DCRACE_UNLAZY_SITES - l->nr_unlazy_calls;
		n = call_sites_in(f->start, f->size, "try_to_unlazy", after,
				  room);
		if (n > room) {
			pr_warn("dcrace: end_caught not counted in %ps: %u calls of try_to_unlazy, room for %u more\n",
				(void *)f->start, n, room);
			continue;
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
	for (i = 0; i < l->nr_link_copies; i++)
		if (addr - l->link_copies[i].start < l->link_copies[i].size)
			return l->link_copies[i].name;
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
