/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace's trace events (docs/debugfs.md, "Trace events"): one
 * dcrace:dcrace_race per race the oracle classifies, one dcrace:dcrace_prune
 * per recorded kill (off unless enabled). The TP_printk format is the
 * contract with the harness: key=value, no spaces inside values.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dcrace

#if !defined(_DCRACE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DCRACE_TRACE_H

#include <linux/tracepoint.h>
#include <dcrace/dcrace.h>

/*
 * The verdict and lookup names ("false_enoent", "walk", ...) in fixed
 * arrays: no __string()/__assign_str(), whose arguments changed in 6.10.
 */
#define DCRACE_TRACE_WORD	20	/* "genuine_negative" and its NUL fit */

TRACE_EVENT(dcrace_race,
	    TP_PROTO(const struct dcrace_event *e, const char *lookup),
	    TP_ARGS(e, lookup),
	    TP_STRUCT__entry(__array(char, verdict, DCRACE_TRACE_WORD)
			     __field(pid_t, pid)
			     __array(char, comm, TASK_COMM_LEN)
			     __array(char, lookup, DCRACE_TRACE_WORD)
			     __array(char, component, DCRACE_NAME_LEN)
			     __field(unsigned int, seq_sampled)
			     __field(unsigned int, seq_current)
			     __field(int, result)
			     __field(pid_t, killer_pid)
			     __array(char, killer_comm, TASK_COMM_LEN)
			     __field(s64, kill_to_read_ns)
			     __field(u64, ns)
			     __array(char, errno_name, 16)
			     __array(char, end, 24)
			     __field(bool, seq_unchanged)),
	    TP_fast_assign(strscpy(__entry->verdict,
				   dcrace_verdict_name(e->verdict),
				   DCRACE_TRACE_WORD);
			   __entry->pid = e->pid;
			   dcrace_trace_word(__entry->comm, e->comm,
					     TASK_COMM_LEN, '_');
			   strscpy(__entry->lookup, lookup, DCRACE_TRACE_WORD);
			   dcrace_trace_word(__entry->component, e->name,
					     DCRACE_NAME_LEN, '?');
			   __entry->seq_sampled = e->seq_sampled;
			   __entry->seq_current = e->seq_current;
			   __entry->result = e->result;
			   __entry->killer_pid = e->killer_known ?
						 e->killer_pid : -1;
			   dcrace_trace_word(__entry->killer_comm,
					     e->killer_known ? e->killer_comm :
					     "unknown", TASK_COMM_LEN, '_');
			   __entry->kill_to_read_ns = e->killer_known ?
						      e->kill_to_read_ns : -1;
			   __entry->ns = e->time_ns;
			   dcrace_errno_name(e->result, __entry->errno_name,
					     16);
			   dcrace_trace_word(__entry->end, e->end, 24, '-');
			   __entry->seq_unchanged =
				e->seq_sampled == e->seq_current;),
	    TP_printk("verdict=%s pid=%d comm=%s lookup=%s component=%s seq=%u/%u result=%d killer=%d/%s kill_to_read_ns=%lld ns=%llu errno=%s end=%s seq_state=%s",
		      __entry->verdict, __entry->pid, __entry->comm,
		      __entry->lookup, __entry->component,
		      __entry->seq_sampled, __entry->seq_current,
		      __entry->result, __entry->killer_pid,
		      __entry->killer_comm, __entry->kill_to_read_ns,
		      __entry->ns, __entry->errno_name, __entry->end,
		      __entry->seq_unchanged ? "unchanged" : "changed")
);

TRACE_EVENT(dcrace_prune,
	    TP_PROTO(pid_t pid, const char *comm, const unsigned char *name,
		     unsigned int seq, u64 ns),
	    TP_ARGS(pid, comm, name, seq, ns),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __array(char, comm, TASK_COMM_LEN)
			     __array(char, component, DCRACE_NAME_LEN)
			     __field(unsigned int, seq)
			     __field(u64, ns)),
	    TP_fast_assign(bool truncated;

			   __entry->pid = pid;
			   dcrace_trace_word(__entry->comm, comm,
					     TASK_COMM_LEN, '_');
			   dcrace_copy_name(__entry->component,
					    DCRACE_NAME_LEN, name, &truncated);
			   dcrace_trace_word(__entry->component,
					     __entry->component,
					     DCRACE_NAME_LEN, '?');
			   __entry->seq = seq;
			   __entry->ns = ns;),
	    TP_printk("pid=%d comm=%s component=%s seq=%u ns=%llu",
		      __entry->pid, __entry->comm, __entry->component,
		      __entry->seq, __entry->ns)
);

#endif /* _DCRACE_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
