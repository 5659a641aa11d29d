// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace oracle: classify what an RCU walk step made of a NULL inode.
 *
 * A NULL d_inode seen in RCU mode means one of two things: the dentry is
 * a real negative dentry, or it was pruned (__dentry_kill() unhashes it,
 * then clears d_inode, each bumping d_seq) after __d_lookup_rcu() sampled
 * its d_seq. Only the second, on a dentry that had an inode, is a race:
 * pruned negative dentries also show a changed d_seq, yet their ENOENT is
 * true.
 *
 * A -ECHILD is "caught" when the step's own NULL-inode test (the one the
 * 2011 fix guards) saw the pruned dentry and the seqcount check saved it;
 * "caught_late" when that test let a still-live inode through and the
 * dentry was pruned before step_into()'s d_seq check, which caught it.
 * On a kernel without a test before step_into() (stock 6.1) step_into()'s
 * is the step's only NULL-inode test: nothing there is late.
 * A -ENOENT on a pruned positive dentry is false whoever returned it.
 */
#include <linux/errno.h>
#include <dcrace/dcrace.h>

enum dcrace_verdict dcrace_classify(const struct dcrace_sighting *s)
{
	if (!s->inode_null)
		return DCRACE_NONE;
	if (!s->seq_changed)
		return s->result == -ENOENT ? DCRACE_GENUINE_NEGATIVE :
					      DCRACE_NONE;
	if (!s->was_positive)
		return DCRACE_PRUNED_NEGATIVE;
	switch (s->result) {
	case -ENOENT:
		return DCRACE_FALSE_ENOENT;
	case -ECHILD:
		return s->late ? DCRACE_CAUGHT_LATE : DCRACE_CAUGHT;
	default:
		return DCRACE_UNEXPECTED;
	}
}

/*
 * Only -ENOENT and -ECHILD are judged: the one the 2011 bug returns and the
 * one its fix returns. Whatever else a step (or path_openat(), for open()'s
 * last step) ended with says nothing about a NULL inode.
 */
bool dcrace_result_judged(int result)
{
	return result == -ENOENT || result == -ECHILD;
}

/*
 * What one judged step says about walk_component() testing the inode
 * before step_into(): @cur is what is known (-1 nothing, 0 no, 1 yes).
 * In RCU mode only a NULL-inode test makes the step return -ENOENT (a
 * dcache miss leaves RCU mode first): without step_into() that test was an
 * early one; a real negative dentry that reached step_into() proves there
 * is none.
 */
int dcrace_learn_early_test(int cur, bool stepped, int result,
			    bool seq_changed)
{
	if (result != -ENOENT)
		return cur;
	if (!stepped)
		return 1;
	return seq_changed ? cur : 0;
}

const char *dcrace_verdict_name(enum dcrace_verdict v)
{
	switch (v) {
	case DCRACE_NONE:
		return "none";
	case DCRACE_GENUINE_NEGATIVE:
		return "genuine_negative";
	case DCRACE_PRUNED_NEGATIVE:
		return "pruned_negative";
	case DCRACE_FALSE_ENOENT:
		return "false_enoent";
	case DCRACE_CAUGHT:
		return "caught";
	case DCRACE_CAUGHT_LATE:
		return "caught_late";
	case DCRACE_UNEXPECTED:
		return "unexpected";
	}
	return "?";
}

bool dcrace_verdict_is_race(enum dcrace_verdict v)
{
	return v == DCRACE_FALSE_ENOENT || v == DCRACE_CAUGHT ||
	       v == DCRACE_CAUGHT_LATE || v == DCRACE_UNEXPECTED;
}
