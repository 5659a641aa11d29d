// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the rule at the walk's end (dcrace_classify_end(),
 * dcrace_unlazy_errno()) and the seqcount-independent false ENOENT
 * (dcrace_classify() with killed_positive). Included by dcrace_test.c.
 */

static enum dcrace_verdict end_classify(int result, bool dentry_stale,
					bool inode_stale, bool step_stale)
{
	struct dcrace_end_sighting s = {
		.result = result, .dentry_stale = dentry_stale,
		.inode_stale = inode_stale, .step_stale = step_stale,
	};

	return dcrace_classify_end(&s);
}

/* A hard error from state the seqcounts still vouch for is genuine. */
static void end_genuine(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, false, false, false),
			DCRACE_END_GENUINE);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOTDIR, false, false, false),
			DCRACE_END_GENUINE);
	KUNIT_EXPECT_EQ(test, end_classify(-ELOOP, false, false, false),
			DCRACE_END_GENUINE);
	KUNIT_EXPECT_FALSE(test, dcrace_verdict_is_race(DCRACE_END_GENUINE));
}

/* From stale state: false, per errno, whichever check found it stale. */
static void end_false_per_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, true, false, false),
			DCRACE_FALSE_EACCES);
	KUNIT_EXPECT_EQ(test, end_classify(-EACCES, false, true, false),
			DCRACE_FALSE_EACCES);
	KUNIT_EXPECT_EQ(test, end_classify(-EPERM, true, true, false),
			DCRACE_FALSE_EPERM);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOTDIR, true, false, false),
			DCRACE_FALSE_ENOTDIR);
	KUNIT_EXPECT_EQ(test, end_classify(-ELOOP, false, false, true),
			DCRACE_FALSE_ERROR);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_FALSE_EACCES));
	KUNIT_EXPECT_TRUE(test,
			  dcrace_verdict_is_false_error(DCRACE_FALSE_ENOTDIR));
	KUNIT_EXPECT_FALSE(test,
			   dcrace_verdict_is_false_error(DCRACE_FALSE_ENOENT));
	KUNIT_EXPECT_STREQ(test, dcrace_verdict_name(DCRACE_FALSE_EACCES),
			   "false_eacces");
}

/*
 * Not the end oracle's: success, -ECHILD (the kernel dropped out of RCU
 * mode) and -ENOENT (the step oracle judges the NULL inode it came from).
 */
static void end_not_judged(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, end_classify(0, true, true, true), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, end_classify(-ECHILD, true, true, true),
			DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, end_classify(-ENOENT, true, true, true),
			DCRACE_NONE);
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
