// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the rule at the walk's end (dcrace_classify_end(),
 * dcrace_unlazy_errno()) and the seqcount-independent false ENOENT
 * (dcrace_classify() with killed_positive). Included by dcrace_test.c.
 */

/* @state: the dentry's d_seq moved (S), nd->inode is not its inode (I),
 * nd->inode is a directory (D), the dentry is a directory now (L).
 */
#define END_S	1
#define END_I	2
#define END_D	4
#define END_L	8

static enum dcrace_verdict end_classify(int result, unsigned int state)
{
	struct dcrace_end_sighting s = {
		.result = result,
		.dentry_stale = state & END_S,
		.inode_stale = state & END_I,
		.inode_dir = state & END_D,
		.can_lookup = state & END_L,
	};

	return dcrace_classify_end(&s);
}

/* A hard error from state the seqcounts still vouch for is genuine. */
static void end_genuine(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_D | END_L),
			DCRACE_END_GENUINE);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOTDIR, 0), DCRACE_END_GENUINE);
	KUNIT_EXPECT_EQ(test, end_classify(-EPERM, END_D | END_L),
			DCRACE_END_GENUINE);
	KUNIT_EXPECT_FALSE(test, dcrace_verdict_is_race(DCRACE_END_GENUINE));
}

/*
 * False only when what the decision used contradicts the state now:
 * may_lookup() checked a non-directory inode that is no longer the
 * dentry's (EACCES, EPERM: the dentry had passed d_can_lookup() as a
 * directory); d_can_lookup() said no of a dentry whose d_seq moved and
 * that is a directory now (ENOTDIR).
 */
static void end_false_per_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_S | END_I | END_L),
			DCRACE_FALSE_EACCES);
	KUNIT_EXPECT_EQ(test, end_classify(-EPERM, END_S | END_I | END_L),
			DCRACE_FALSE_EPERM);
	/* a writer that forgot d_seq: the inode contradicts all the same */
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_I | END_L),
			DCRACE_FALSE_EACCES);
	/*
	 * The name moved on again before the snapshot (negative, a file
	 * again): the file's inode was checked all the same.
	 */
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_S | END_I),
			DCRACE_FALSE_EACCES);
	KUNIT_EXPECT_EQ(test, end_classify(-EPERM, END_S | END_I),
			DCRACE_FALSE_EPERM);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOTDIR, END_S | END_L),
			DCRACE_FALSE_ENOTDIR);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_FALSE_EACCES));
	KUNIT_EXPECT_TRUE(test,
			  dcrace_verdict_is_false_error(DCRACE_FALSE_ENOTDIR));
	KUNIT_EXPECT_FALSE(test,
			   dcrace_verdict_is_false_error(DCRACE_FALSE_ENOENT));
	KUNIT_EXPECT_STREQ(test, dcrace_verdict_name(DCRACE_FALSE_EACCES),
			   "false_eacces");
}

/*
 * State that moved between the decision and the snapshot without
 * contradicting it: a genuine EACCES on a directory renamed meanwhile
 * (d_seq moved, same inode), a directory replaced by another directory or
 * by a file (the inode checked was a directory the walk stood on), an
 * ENOTDIR on a dentry that is still no directory. Never false.
 */
static void end_unvouched(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_S | END_D | END_L),
			DCRACE_END_UNVOUCHED);
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_S | END_I | END_D |
						    END_L),
			DCRACE_END_UNVOUCHED);
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, END_S | END_I | END_D),
			DCRACE_END_UNVOUCHED);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOTDIR, END_S | END_I),
			DCRACE_END_UNVOUCHED);
	KUNIT_EXPECT_FALSE(test, dcrace_verdict_is_race(DCRACE_END_UNVOUCHED));
	KUNIT_EXPECT_STREQ(test, dcrace_verdict_name(DCRACE_END_UNVOUCHED),
			   "end_unvouched");
}

/*
 * Not the end oracle's: success, -ECHILD (the kernel dropped out of RCU
 * mode) and -ENOENT (the step oracle judges the NULL inode it came from).
 * Errnos decided on state the snapshot does not hold (the link stack, a
 * scoped "..", rename_lock, the name) are not judged, stale or not.
 */
static void end_not_judged(struct kunit *test)
{
	const unsigned int all = END_S | END_I | END_L;

	KUNIT_EXPECT_EQ(test, end_classify(0, all), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, end_classify(-ECHILD, all), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOENT, all), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, end_classify(-ELOOP, all),
			DCRACE_END_NOT_JUDGED);
	KUNIT_EXPECT_EQ(test, end_classify(-ELOOP, 0), DCRACE_END_NOT_JUDGED);
	KUNIT_EXPECT_EQ(test, end_classify(-EXDEV, all),
			DCRACE_END_NOT_JUDGED);
	KUNIT_EXPECT_EQ(test, end_classify(-EAGAIN, all),
			DCRACE_END_NOT_JUDGED);
	KUNIT_EXPECT_EQ(test, end_classify(-EISDIR, all),
			DCRACE_END_NOT_JUDGED);
	KUNIT_EXPECT_FALSE(test,
			   dcrace_verdict_is_race(DCRACE_END_NOT_JUDGED));
}

/*
 * A revalidation of stale state: a non-directory inode under a dentry
 * that is a directory now is may_lookup()'s -EACCES; a dentry that is no
 * directory now, -ENOTDIR; valid state, or a directory inode under a
 * directory, is no error decision.
 */
static void end_unlazy(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(true, false, true), -EACCES);
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(true, true, false), -ENOTDIR);
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(true, false, false),
			-ENOTDIR);
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(true, true, true), 0);
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(false, false, true), 0);
	KUNIT_EXPECT_EQ(test, dcrace_unlazy_errno(false, true, false), 0);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_END_CAUGHT));
}

/*
 * A writer that clears d_inode without moving d_seq: unchanged d_seq, yet
 * the dentry was positive in this lifetime (seen at the sample, or in the
 * kill record): a false ENOENT. Without that truth, a real negative.
 */
static void end_seq_unchanged(struct kunit *test)
{
	struct dcrace_sighting s = {
		.inode_null = true, .seq_changed = false, .result = -ENOENT,
		.killed_positive = true,
	};

	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_FALSE_ENOENT);
	s.killed_positive = false;
	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_GENUINE_NEGATIVE);
	/* -ECHILD on unchanged d_seq is nothing to judge */
	s.killed_positive = true;
	s.result = -ECHILD;
	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_NONE);
}

static void end_errno_names(struct kunit *test)
{
	char buf[16];

	KUNIT_EXPECT_STREQ(test, dcrace_errno_name(-EACCES, buf, sizeof(buf)),
			   "EACCES");
	KUNIT_EXPECT_STREQ(test, dcrace_errno_name(0, buf, sizeof(buf)), "-");
	KUNIT_EXPECT_STREQ(test, dcrace_errno_name(-EXDEV, buf, sizeof(buf)),
			   "E18");
}

static struct kunit_case end_cases[] = {
	KUNIT_CASE(end_genuine),
	KUNIT_CASE(end_false_per_errno),
	KUNIT_CASE(end_unvouched),
	KUNIT_CASE(end_not_judged),
	KUNIT_CASE(end_unlazy),
	KUNIT_CASE(end_seq_unchanged),
	KUNIT_CASE(end_errno_names),
	{}
};

static struct kunit_suite end_suite = {
	.name = "dcrace_end",
	.test_cases = end_cases,
};
