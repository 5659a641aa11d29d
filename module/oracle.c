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
#include <linux/kernel.h>
#include <linux/string.h>
#include <dcrace/dcrace.h>

enum dcrace_verdict dcrace_classify(const struct dcrace_sighting *s)
{
	if (!s->inode_null)
		return DCRACE_NONE;
	if (!s->seq_changed) {
		if (s->result != -ENOENT)
			return DCRACE_NONE;
		/* a writer cleared d_inode without moving d_seq */
		return s->killed_positive ? DCRACE_FALSE_ENOENT :
					    DCRACE_GENUINE_NEGATIVE;
	}
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

/*
 * The end of an RCU walk with a hard error. The rule: an RCU-mode walk may
 * return an error other than -ECHILD only from state its seqcounts still
 * vouch for. -ENOENT is the step oracle's (dcrace_classify(): its NULL
 * inode is judged where it was found); 0 and -ECHILD are no hard error.
 *
 * Each errno is judged by the state it was decided on, read at
 * terminate_walk(), which may come after the decision: state that moved
 * in between is not by itself a false error (a rename moves d_seq, and a
 * walk holding no reference can be preempted). It is false only when
 * what the decision used contradicts what that state is now:
 *  - -ENOTDIR: d_can_lookup(nd->path.dentry) said no; false when the
 *    dentry's d_seq moved and it is a directory now.
 *  - -EACCES, -EPERM: may_lookup()'s inode_permission() on nd->inode;
 *    false when nd->inode is no longer the dentry's inode and is no
 *    directory: link_path_walk() asks MAY_EXEC only after d_can_lookup()
 *    said the dentry is a directory, so a file's inode there was read
 *    from a dentry whose inode changed under the walk (the 6.1 bug: a
 *    file replaced by a directory). What the dentry is by the snapshot
 *    (a directory, negative, a file again) does not matter: an inode's
 *    type never changes. A directory inode that was replaced was still a
 *    directory the walk stood on: unvouched.
 * Moved without that contradiction: unvouched, counted, never false. Every
 * other errno (-ELOOP: the link stack; -EXDEV, -EAGAIN: scoped "..",
 * rename_lock; -EISDIR, -ENAMETOOLONG: the name; ...) is decided on state
 * this snapshot does not hold: not judged.
 */
enum dcrace_verdict dcrace_classify_end(const struct dcrace_end_sighting *s)
{
	bool moved = s->dentry_stale || s->inode_stale;

	switch (s->result) {
	case 0:
	case -ECHILD:
	case -ENOENT:
		return DCRACE_NONE;
	case -ENOTDIR:
		if (s->dentry_stale && s->can_lookup)
			return DCRACE_FALSE_ENOTDIR;
		break;
	case -EACCES:
	case -EPERM:
		if (s->inode_stale && !s->inode_dir)
			return s->result == -EACCES ? DCRACE_FALSE_EACCES :
						      DCRACE_FALSE_EPERM;
		break;
	default:
		return DCRACE_END_NOT_JUDGED;
	}
	return moved ? DCRACE_END_UNVOUCHED : DCRACE_END_GENUINE;
}

/*
 * link_path_walk() revalidates (try_to_unlazy()) before it returns a hard
 * error on two decisions: may_lookup()'s permission check on nd->inode
 * (6.12 and the backport; 6.1 only when the check itself needs to block),
 * and d_can_lookup() on nd->path.dentry (-ENOTDIR). On stale state the
 * revalidation fails and the walk restarts in ref-walk mode: a catch.
 * Which error it would have been: a non-directory nd->inode under a
 * dentry that is a directory now is may_lookup()'s MAY_EXEC refusal
 * (-EACCES); a dentry that is no directory now is -ENOTDIR. Anything else
 * (a directory inode under a directory) is no error decision.
 */
int dcrace_unlazy_errno(bool stale, bool inode_dir, bool can_lookup)
{
	if (!stale)
		return 0;
	if (!can_lookup)
		return -ENOTDIR;
	return inode_dir ? 0 : -EACCES;
}

/* Into @buf (and returned): "EACCES", "-" for 0, else "E<n>". */
const char *dcrace_errno_name(int result, char *buf, size_t size)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "-" }, { -ENOENT, "ENOENT" }, { -ENOTDIR, "ENOTDIR" },
		{ -EACCES, "EACCES" }, { -EPERM, "EPERM" }, { -ECHILD, "ECHILD" },
		{ -ELOOP, "ELOOP" }, { -ENAMETOOLONG, "ENAMETOOLONG" },
		{ -EISDIR, "EISDIR" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (names[i].err == result) {
			strscpy(buf, names[i].name, size);
			return buf;
		}
	}
	snprintf(buf, size, "E%d", -result);
	return buf;
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
	case DCRACE_END_GENUINE:
		return "end_genuine";
	case DCRACE_FALSE_ENOTDIR:
		return "false_enotdir";
	case DCRACE_FALSE_EACCES:
		return "false_eacces";
	case DCRACE_FALSE_EPERM:
		return "false_eperm";
	case DCRACE_END_CAUGHT:
		return "end_caught";
	case DCRACE_END_UNVOUCHED:
		return "end_unvouched";
	case DCRACE_END_NOT_JUDGED:
		return "end_not_judged";
	case NR_DCRACE_VERDICTS:
		break;
	}
	return "?";
}

bool dcrace_verdict_is_race(enum dcrace_verdict v)
{
	return v == DCRACE_FALSE_ENOENT || v == DCRACE_CAUGHT ||
	       v == DCRACE_CAUGHT_LATE || v == DCRACE_UNEXPECTED ||
	       dcrace_verdict_is_false_error(v) || v == DCRACE_END_CAUGHT;
}

/* A false hard error at a walk's end (not ENOENT: dcrace_classify()'s). */
bool dcrace_verdict_is_false_error(enum dcrace_verdict v)
{
	return v == DCRACE_FALSE_ENOTDIR || v == DCRACE_FALSE_EACCES ||
	       v == DCRACE_FALSE_EPERM;
}
