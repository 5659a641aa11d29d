// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: a race, as an event in the ring ("events" in debugfs) and, with
 * verbose=1, as a report in dmesg.
 */
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/ratelimit.h>
#include <linux/smp.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "internal.h"

/* the trace events are defined here, once */
#define CREATE_TRACE_POINTS
#include "trace.h"

static struct dcrace_event event_slots[DCRACE_EVENTS];
struct dcrace_ring events;
static DEFINE_RATELIMIT_STATE(report_rs, 5 * HZ, 10);

static void report(const struct dcrace_event *e)
{
	char errbuf[16];
	unsigned int i;

	pr_err("==================================================================\n");
	if (e->verdict == DCRACE_FALSE_ENOENT)
		pr_err("BUG: dcrace: false ENOENT in rcu-walk\n");
	else if (dcrace_verdict_is_false_error(e->verdict))
		pr_err("BUG: dcrace: false %s in rcu-walk\n",
		       dcrace_errno_name(e->result, errbuf, sizeof(errbuf)));
	else
		pr_err("dcrace: race caught (%s)\n", dcrace_verdict_name(e->verdict));
	pr_err("walker: pid=%d comm=%s cpu=%d component=\"%s\"%s\n", e->pid,
	       e->comm, e->cpu, e->name, e->name_truncated ? "..." : "");
	if (e->lookup == LK_END)
		pr_err("d_seq: nd->seq=%u current=%u, %s returned %d\n",
		       e->seq_sampled, e->seq_current, e->end, e->result);
	else
		pr_err("d_seq: sampled=%u current=%u, d_inode NULL, step returned %d\n",
		       e->seq_sampled, e->seq_current, e->result);
	if (e->killer_known)
		pr_err("pruned by: pid=%d comm=%s, %lld ns before the walker's check\n",
		       e->killer_pid, e->killer_comm, e->kill_to_read_ns);
	else
		pr_err("pruned by: unknown (no __dentry_kill record)\n");
	for (i = 0; i < e->nr_stack; i++)
		pr_err(" %pS\n", (void *)e->stack[i]);
	pr_err("==================================================================\n");
}

/*
 * verbose reports are printed from a work item, not from the probe
 * handler: a console write under TCG takes milliseconds, far too long for
 * a handler that runs with preemption off in the middle of a path walk.
 */
static atomic64_t reported;	/* newest event id already considered */

static void report_work_fn(struct work_struct *w)
{
	struct dcrace_event e;
	u64 first, last, lost, id;

	dcrace_ring_bounds(&events, &first, &last, &lost);
	id = atomic64_read(&reported);
	atomic64_set(&reported, last);
	if (id < first)
		id = first ? first - 1 : 0;
	for (id++; id && id <= last; id++) {
		if (!__ratelimit(&report_rs))
			break;
		if (dcrace_ring_get(&events, id, &e))
			report(&e);
	}
}

static DECLARE_WORK(report_work, report_work_fn);

/* Queued from probe handlers (NMI-safe); schedules the report work. */
static void report_irq_fn(struct irq_work *w)
{
	schedule_work(&report_work);
}

static DEFINE_IRQ_WORK(report_irq_work, report_irq_fn);

void report_init(void)
{
	dcrace_ring_init(&events, event_slots, DCRACE_EVENTS);
}

/* After a reset ids restart at 1: report from there again. */
void report_reset(void)
{
	atomic64_set(&reported, 0);
}

/* Unloading: no report work left behind. */
void report_sync(void)
{
	irq_work_sync(&report_irq_work);
	cancel_work_sync(&report_work);
}

/* ---- the walker's stack -------------------------------------------------- */

/*
 * report_event()'s event and stack buffers: per CPU, not on the stack (a
 * probe handler's frame must stay small, KASAN builds make it larger).
 * Safe: handlers run with preemption off and do not nest on a CPU (a probe
 * hit inside a handler is counted as missed, not run).
 */
#define DCRACE_STACK_RAW	(DCRACE_STACK_DEPTH + 16)

struct dcrace_report_scratch {
	struct dcrace_event event;
	unsigned long raw[DCRACE_STACK_RAW];
};

static DEFINE_PER_CPU(struct dcrace_report_scratch, report_scratch);

static bool probe_frame(unsigned long addr)
{
	char sym[KSYM_SYMBOL_LEN];

	if (within_module(addr, THIS_MODULE))
		return true;
	sprint_symbol_no_offset(sym, addr);
	/* an optimized probe's detour buffer has no symbol: "0x..." */
	return strstr(sym, "rethook") || strstr(sym, "kretprobe") ||
	       strstr(sym, "kprobe") || strstr(sym, "opt_pre_handler") ||
	       strstr(sym, "optimized_callback") || strstr(sym, "exc_int3") ||
	       !strncmp(sym, "0x", 2);
}

/*
 * The walker's stack, without dcrace's and the probe machinery's frames.
 * Only on the rare race path: symbol lookups are not cheap.
 */
static unsigned int walker_stack(unsigned long *out, unsigned int size,
				 unsigned long where)
{
	unsigned long *raw = this_cpu_ptr(report_scratch.raw);
	unsigned int n, i, j = 0;

	/* fast probes: the walker is at walk_component's return site */
	if (where && size)
		out[j++] = where;

	n = stack_trace_save(raw, DCRACE_STACK_RAW, 0);
	for (i = 0; i < n && j < size; i++) {
		/* an int3 probe's frame: its address + 1, already out[0] */
		if (probe_frame(raw[i]) || (where && raw[i] == where + 1))
			continue;
		if (j && raw[i] == out[j - 1])
			continue;
		out[j++] = raw[i];
	}
	return j;
}

static const char *lookup_kind_name(unsigned int kind)
{
	return kind == LK_OPEN ? "open" : kind == LK_END ? "end" : "walk";
}

/* The event @ep filled in: its stack, the ring, the trace, the report. */
static void report_push(struct dcrace_event *ep, unsigned long where)
{
	ep->nr_stack = walker_stack(ep->stack, DCRACE_STACK_DEPTH, where);
	trace_dcrace_race(ep, lookup_kind_name(ep->lookup));
	if (!dcrace_ring_push(&events, ep))
		cnt_inc(C_EVENTS_DROPPED);
	if (knob(K_VERBOSE))
		irq_work_queue(&report_irq_work);
}

static struct dcrace_event *report_start(enum dcrace_verdict v, long ret,
					 u64 now, unsigned int lookup,
					 const char *end)
{
	struct dcrace_event *ep = this_cpu_ptr(&report_scratch.event);

	memset(ep, 0, sizeof(*ep));
	ep->time_ns = now;
	ep->verdict = v;
	ep->result = (int)ret;
	ep->pid = task_pid_nr(current);
	ep->cpu = raw_smp_processor_id();
	/* current's own comm: no task_lock (not in int3 context) */
	strscpy(ep->comm, current->comm, sizeof(ep->comm));
	ep->lookup = lookup;
	strscpy(ep->end, end, sizeof(ep->end));
	return ep;
}

/*
 * Record race @v of step @s (judged at @now, with result @ret; @sn, the
 * dentry as judge_snapshot() saw it) in the ring and as a
 * dcrace:dcrace_race trace event; report it when verbose. Reads only
 * what it is given.
 */
void report_event(const struct dcrace_slot *s, const struct dcrace_snap *sn,
		  enum dcrace_verdict v, long ret, u64 now)
{
	struct dcrace_event *ep;

	ep = report_start(v, ret, now, s->kind, s->kind == LK_OPEN ?
			  dcrace_layout.walk_fns[WF_OPEN].name :
			  walk_fn_name(s->ret_site));
	memcpy(ep->name, sn->name, sizeof(ep->name));
	ep->name_truncated = sn->name_truncated;
	ep->seq_sampled = s->seq;
	ep->seq_current = sn->cur;
	if (sn->killed) {
		ep->killer_known = true;
		ep->killer_pid = sn->k.pid;
		memcpy(ep->killer_comm, sn->k.comm, sizeof(ep->killer_comm));
		/* to the walker's read: the snapshot */
		ep->kill_to_read_ns = (s64)(sn->now - sn->k.time_ns);
	}
	report_push(ep, s->ret_site);
}

/*
 * Record the end of a walk @e (verdict @v, the walk function @end returned
 * @ret, judged at @now): the component is the dentry the walk stood on,
 * d_seq "sampled" is nd->seq. No killer: nothing was pruned.
 */
void report_end_event(const struct dcrace_end_snap *e, enum dcrace_verdict v,
		      long ret, u64 now, const char *end)
{
	struct dcrace_event *ep = report_start(v, ret, now, LK_END, end);

	memcpy(ep->name, e->name, sizeof(ep->name));
	ep->name_truncated = e->name_truncated;
	ep->seq_sampled = e->seq;
	ep->seq_current = e->cur;
	report_push(ep, 0);
}
