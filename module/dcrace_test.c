// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dcrace's pure parts: the oracle, the event ring, the
 * knob parser and the call-site decoder. Built as dcrace_kunit.ko; the
 * suites run when it is loaded.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/string.h>
#include <dcrace/dcrace.h>

/* The code under test, compiled into this module as well. */
#include "oracle.c"
#include "ring.c"
#include "knobs.c"
#include "decode.c"

static enum dcrace_verdict classify(bool null, bool changed, bool positive,
				    int result)
{
	struct dcrace_sighting s = {
		.inode_null = null,
		.seq_changed = changed,
		.was_positive = positive,
		.result = result,
	};

	return dcrace_classify(&s);
}

static void oracle_false_enoent(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, classify(true, true, true, -ENOENT),
			DCRACE_FALSE_ENOENT);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_FALSE_ENOENT));
}

static void oracle_caught(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, classify(true, true, true, -ECHILD),
			DCRACE_CAUGHT);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_CAUGHT));
}

static void oracle_caught_late(struct kunit *test)
{
	struct dcrace_sighting s = {
		.inode_null = true, .seq_changed = true, .was_positive = true,
		.late = true, .result = -ECHILD,
	};

	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_CAUGHT_LATE);
	/* A -ENOENT stays false, whichever check returned it. */
	s.result = -ENOENT;
	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_FALSE_ENOENT);
	/* A late negative that was never positive is no race. */
	s.was_positive = false;
	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_PRUNED_NEGATIVE);
	KUNIT_EXPECT_TRUE(test, dcrace_verdict_is_race(DCRACE_CAUGHT_LATE));
}

static void oracle_genuine_negative(struct kunit *test)
{
	/* Unchanged seq: a real negative dentry, whatever it had before. */
	KUNIT_EXPECT_EQ(test, classify(true, false, false, -ENOENT),
			DCRACE_GENUINE_NEGATIVE);
	KUNIT_EXPECT_EQ(test, classify(true, false, true, -ENOENT),
			DCRACE_GENUINE_NEGATIVE);
	KUNIT_EXPECT_FALSE(test,
			   dcrace_verdict_is_race(DCRACE_GENUINE_NEGATIVE));
}

static void oracle_pruned_negative_is_no_race(struct kunit *test)
{
	/* A pruned negative dentry: seq changed, but its ENOENT is true. */
	KUNIT_EXPECT_EQ(test, classify(true, true, false, -ENOENT),
			DCRACE_PRUNED_NEGATIVE);
	KUNIT_EXPECT_EQ(test, classify(true, true, false, -ECHILD),
			DCRACE_PRUNED_NEGATIVE);
	KUNIT_EXPECT_FALSE(test, dcrace_verdict_is_race(DCRACE_PRUNED_NEGATIVE));
}

static void oracle_positive_inode_is_nothing(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, classify(false, true, true, -ENOENT), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, classify(false, false, true, 0), DCRACE_NONE);
	KUNIT_EXPECT_EQ(test, classify(false, true, true, -ECHILD),
			DCRACE_NONE);
}

static void oracle_other_results(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, classify(true, true, true, -ENOTDIR),
			DCRACE_UNEXPECTED);
	KUNIT_EXPECT_EQ(test, classify(true, false, true, -ECHILD),
			DCRACE_NONE);
	KUNIT_EXPECT_STREQ(test, dcrace_verdict_name(DCRACE_FALSE_ENOENT),
			   "false_enoent");
	KUNIT_EXPECT_STREQ(test, dcrace_verdict_name(DCRACE_CAUGHT), "caught");
}

static void oracle_learns_early_test(struct kunit *test)
{
	/* -ENOENT without step_into(): the step tested the inode itself */
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(-1, false, -ENOENT, true), 1);
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(0, false, -ENOENT, false), 1);
	/* a real negative dentry reached step_into(): no early test */
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(-1, true, -ENOENT, false), 0);
	/* a pruned one that reached step_into() proves nothing */
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(-1, true, -ENOENT, true), -1);
	/* -ECHILD can come from lookup_fast() itself: proves nothing */
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(-1, false, -ECHILD, true), -1);
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(1, true, 0, false), 1);
}

/*
 * The parent filter drops a -ECHILD only when the step did not reach
 * step_into(): one that did had passed lookup_fast()'s parent check, and
 * its catch is real even if the parent was killed right after the child.
 */
static void oracle_parent_filter(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, dcrace_parent_filtered(-ECHILD, false, true));
	KUNIT_EXPECT_FALSE(test, dcrace_parent_filtered(-ECHILD, true, true));
	KUNIT_EXPECT_FALSE(test, dcrace_parent_filtered(-ECHILD, false, false));
	KUNIT_EXPECT_FALSE(test, dcrace_parent_filtered(-ENOENT, false, true));
}

/*
 * A return probe closes only the step that is returning: the owner's, at
 * the site and stack pointer recorded when it opened. A stale slot (a ".."
 * step returning through the same site at another depth, or another
 * task's slot) is left alone.
 */
static void oracle_step_returns(struct kunit *test)
{
	static int me, other;
	const unsigned long site = 0xffffffff81000010UL, sp = 0xffffc90000001f00UL;

	KUNIT_EXPECT_TRUE(test, dcrace_step_returns(&me, &me, site, sp, site, sp));
	/* same site, another depth: a step that opened no slot */
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(&me, &me, site, sp, site, sp + 64));
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(&me, &me, site, sp, site, sp - 64));
	/* another return site */
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(&me, &me, site, sp, site + 5, sp));
	/* another task's slot, or a free one */
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(&other, &me, site, sp, site, sp));
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(NULL, &me, 0, 0, 0, 0));
	/* the kretprobe fallback: 0 recorded, 0 seen, owner checked */
	KUNIT_EXPECT_TRUE(test, dcrace_step_returns(&me, &me, 0, 0, 0, 0));
	KUNIT_EXPECT_FALSE(test, dcrace_step_returns(&other, &me, 0, 0, 0, 0));
}

/*
 * A kill record names the killer only of the same dentry: same address
 * and d_seq (small values, 0 or 2 mostly) are not enough.
 */
static void oracle_kill_key(struct kunit *test)
{
	static int d1, d2, p1, p2;
	struct dcrace_kill_key a = { &d1, &p1, 2, 0x1234 }, b = a;

	KUNIT_EXPECT_TRUE(test, dcrace_kill_key_eq(&a, &b));
	b.parent = &p2;		/* an earlier dentry at this address */
	KUNIT_EXPECT_FALSE(test, dcrace_kill_key_eq(&a, &b));
	b = a;
	b.hash = 0x4321;	/* another name */
	KUNIT_EXPECT_FALSE(test, dcrace_kill_key_eq(&a, &b));
	b = a;
	b.seq = 4;
	KUNIT_EXPECT_FALSE(test, dcrace_kill_key_eq(&a, &b));
	b = a;
	b.dentry = &d2;
	KUNIT_EXPECT_FALSE(test, dcrace_kill_key_eq(&a, &b));
}

/*
 * A pruned name looked up again can get its dentry at the same address,
 * with the same parent, name hash and d_seq: the earlier lifetime's kill
 * record (its grace period elapsed: the memory was freed and reused) must
 * not name the killer (nor say the dentry was positive); this lifetime's
 * kill does, whenever it came (before the probe read the sample, too).
 */
/* Stand-ins for poll_state_synchronize_rcu(), counting their calls. */
static unsigned int gp_polls;

static bool gp_elapsed_yes(unsigned long gp)
{
	gp_polls++;
	return true;
}

static bool gp_elapsed_no(unsigned long gp)
{
	gp_polls++;
	return false;
}

static void oracle_kill_lifetime(struct kunit *test)
{
	static int d, p;
	struct dcrace_kill_key rec = { &d, &p, 2, 0x1234 }, want = rec;

	/* the earlier lifetime: a grace period has elapsed since its kill */
	KUNIT_EXPECT_FALSE(test,
			   dcrace_kill_matches(&rec, &want, gp_elapsed_yes, 1));
	/* this lifetime's kill, in the walker's RCU section */
	KUNIT_EXPECT_TRUE(test,
			  dcrace_kill_matches(&rec, &want, gp_elapsed_no, 1));
	/* in the section, but another key: the grace period is not polled */
	want.seq = 4;
	gp_polls = 0;
	KUNIT_EXPECT_FALSE(test,
			   dcrace_kill_matches(&rec, &want, gp_elapsed_no, 1));
	KUNIT_EXPECT_EQ(test, gp_polls, 0U);
}

/*
 * mount-refetch: __follow_mount_rcu() re-sampled nd->next_seq after the
 * prune, so step_into()'s own check passed and its NULL test returned
 * -ENOENT. "d_seq changed" is against dcrace's own sample (taken after
 * __d_lookup_rcu()), so it is still a false ENOENT, even though step_into()
 * ran after an early test (late) and on any lookup (walk or open).
 */
static void oracle_own_sample(struct kunit *test)
{
	struct dcrace_sighting s = {
		.inode_null = true, .seq_changed = true, .was_positive = true,
		.late = true, .result = -ENOENT,
	};

	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_FALSE_ENOENT);
	s.result = -ECHILD;
	KUNIT_EXPECT_EQ(test, dcrace_classify(&s), DCRACE_CAUGHT_LATE);
}

/* Which results are judged; open()'s: path_openat()'s ERR_PTR value. */
static void oracle_results_judged(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, dcrace_result_judged(-ENOENT));
	KUNIT_EXPECT_TRUE(test, dcrace_result_judged(-ECHILD));
	KUNIT_EXPECT_FALSE(test, dcrace_result_judged(0));
	KUNIT_EXPECT_FALSE(test, dcrace_result_judged(-ENOTDIR));
	KUNIT_EXPECT_FALSE(test, dcrace_result_judged(-ESTALE));
	/* open-last: its early test's -ENOENT without step_into() is one */
	KUNIT_EXPECT_EQ(test, dcrace_learn_early_test(0, false, -ENOENT, true), 1);
}

static struct kunit_case oracle_cases[] = {
	KUNIT_CASE(oracle_false_enoent),
	KUNIT_CASE(oracle_caught),
	KUNIT_CASE(oracle_caught_late),
	KUNIT_CASE(oracle_genuine_negative),
	KUNIT_CASE(oracle_pruned_negative_is_no_race),
	KUNIT_CASE(oracle_positive_inode_is_nothing),
	KUNIT_CASE(oracle_other_results),
	KUNIT_CASE(oracle_learns_early_test),
	KUNIT_CASE(oracle_parent_filter),
	KUNIT_CASE(oracle_kill_key),
	KUNIT_CASE(oracle_kill_lifetime),
	KUNIT_CASE(oracle_step_returns),
	KUNIT_CASE(oracle_own_sample),
	KUNIT_CASE(oracle_results_judged),
	{}
};

static struct kunit_suite oracle_suite = {
	.name = "dcrace_oracle",
	.test_cases = oracle_cases,
};

#define RING_CAP 4

/* Static: events are too big for a test's stack frame. */
static struct dcrace_event slots[RING_CAP];

static void push_n(struct dcrace_ring *r, int n, int base)
{
	struct dcrace_event e;
	int i;

	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		e.pid = base + i;
		dcrace_ring_push(r, &e);
	}
}

static void ring_empty(struct kunit *test)
{
	struct dcrace_event e;
	struct dcrace_ring r;
	u64 first, last, lost;

	dcrace_ring_init(&r, slots, RING_CAP);
	dcrace_ring_bounds(&r, &first, &last, &lost);
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, last, 0ULL);
	KUNIT_EXPECT_EQ(test, lost, 0ULL);
	KUNIT_EXPECT_FALSE(test, dcrace_ring_get(&r, 0, &e));
	KUNIT_EXPECT_FALSE(test, dcrace_ring_get(&r, 1, &e));
}

static void ring_keeps_in_order(struct kunit *test)
{
	struct dcrace_event e;
	struct dcrace_ring r;
	u64 first, last, lost;

	dcrace_ring_init(&r, slots, RING_CAP);
	push_n(&r, 3, 100);
	dcrace_ring_bounds(&r, &first, &last, &lost);
	KUNIT_EXPECT_EQ(test, first, 1ULL);
	KUNIT_EXPECT_EQ(test, last, 3ULL);
	KUNIT_EXPECT_EQ(test, lost, 0ULL);
	KUNIT_ASSERT_TRUE(test, dcrace_ring_get(&r, 2, &e));
	KUNIT_EXPECT_EQ(test, e.pid, 101);
	KUNIT_EXPECT_EQ(test, e.id, 2ULL);
}

static void ring_overflow_keeps_newest(struct kunit *test)
{
	struct dcrace_event e;
	struct dcrace_ring r;
	u64 first, last, lost;

	dcrace_ring_init(&r, slots, RING_CAP);
	push_n(&r, RING_CAP + 3, 0);
	dcrace_ring_bounds(&r, &first, &last, &lost);
	KUNIT_EXPECT_EQ(test, last, (u64)RING_CAP + 3);
	KUNIT_EXPECT_EQ(test, first, 4ULL);
	KUNIT_EXPECT_EQ(test, lost, 3ULL);
	KUNIT_EXPECT_FALSE(test, dcrace_ring_get(&r, 3, &e));
	KUNIT_ASSERT_TRUE(test, dcrace_ring_get(&r, 4, &e));
	KUNIT_EXPECT_EQ(test, e.pid, 3);
	KUNIT_ASSERT_TRUE(test, dcrace_ring_get(&r, RING_CAP + 3, &e));
	KUNIT_EXPECT_EQ(test, e.pid, RING_CAP + 2);
	KUNIT_EXPECT_FALSE(test, dcrace_ring_get(&r, RING_CAP + 4, &e));
}

static void ring_reset(struct kunit *test)
{
	struct dcrace_event e;
	struct dcrace_ring r;
	u64 first, last, lost;

	dcrace_ring_init(&r, slots, RING_CAP);
	push_n(&r, RING_CAP * 2, 0);
	dcrace_ring_reset(&r);
	dcrace_ring_bounds(&r, &first, &last, &lost);
	KUNIT_EXPECT_EQ(test, last, 0ULL);
	KUNIT_EXPECT_EQ(test, lost, 0ULL);
	KUNIT_EXPECT_FALSE(test, dcrace_ring_get(&r, 1, &e));
	push_n(&r, 1, 7);
	KUNIT_ASSERT_TRUE(test, dcrace_ring_get(&r, 1, &e));
	KUNIT_EXPECT_EQ(test, e.pid, 7);
}

static void copy_name_cases(struct kunit *test)
{
	/* a name with a byte after its NUL that must not be copied */
	static const unsigned char src[] = "ab\tc\0zz";
	static const unsigned char five[] = "abcde";
	char dst[8];
	bool trunc = true;

	memset(dst, 'X', sizeof(dst));
	dcrace_copy_name(dst, sizeof(dst), src, &trunc);
	KUNIT_EXPECT_STREQ(test, dst, "ab?c");
	KUNIT_EXPECT_FALSE(test, trunc);
	/* exactly fills the buffer: not truncated */
	dcrace_copy_name(dst, 6, five, &trunc);
	KUNIT_EXPECT_STREQ(test, dst, "abcde");
	KUNIT_EXPECT_FALSE(test, trunc);
	/* one byte short */
	dcrace_copy_name(dst, 5, five, &trunc);
	KUNIT_EXPECT_STREQ(test, dst, "abcd");
	KUNIT_EXPECT_TRUE(test, trunc);
	/* empty name, and a 1-byte buffer */
	dcrace_copy_name(dst, sizeof(dst), (const unsigned char *)"", &trunc);
	KUNIT_EXPECT_STREQ(test, dst, "");
	KUNIT_EXPECT_FALSE(test, trunc);
	dcrace_copy_name(dst, 1, five, &trunc);
	KUNIT_EXPECT_STREQ(test, dst, "");
	KUNIT_EXPECT_TRUE(test, trunc);
}

static void trace_word_cases(struct kunit *test)
{
	char dst[8];

	dcrace_trace_word(dst, "dcr-walk", sizeof(dst), '_');
	KUNIT_EXPECT_STREQ(test, dst, "dcr-wal");	/* @size - 1 taken */
	dcrace_trace_word(dst, "a b\tc", sizeof(dst), '_');
	KUNIT_EXPECT_STREQ(test, dst, "a_b_c");
	dcrace_trace_word(dst, "", sizeof(dst), '?');
	KUNIT_EXPECT_STREQ(test, dst, "?");		/* never an empty value */
	strscpy(dst, "x y", sizeof(dst));
	dcrace_trace_word(dst, dst, sizeof(dst), '?');	/* in place */
	KUNIT_EXPECT_STREQ(test, dst, "x?y");
	dcrace_trace_word(dst, "abc", 1, '?');
	KUNIT_EXPECT_STREQ(test, dst, "");
}

static struct kunit_case ring_cases[] = {
	KUNIT_CASE(ring_empty),
	KUNIT_CASE(ring_keeps_in_order),
	KUNIT_CASE(ring_overflow_keeps_newest),
	KUNIT_CASE(ring_reset),
	KUNIT_CASE(copy_name_cases),
	KUNIT_CASE(trace_word_cases),
	{}
};

static struct kunit_suite ring_suite = {
	.name = "dcrace_ring",
	.test_cases = ring_cases,
};

static void knob_accepts_valid(struct kunit *test)
{
	s64 v = 42;

	KUNIT_EXPECT_EQ(test, dcrace_parse_s64("7", 0, 10, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 7LL);
	KUNIT_EXPECT_EQ(test, dcrace_parse_s64("10\n", 0, 10, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 10LL);
	KUNIT_EXPECT_EQ(test, dcrace_parse_s64("-1", -1, 5, &v), 0);
	KUNIT_EXPECT_EQ(test, v, -1LL);
}

static void knob_rejects_bad(struct kunit *test)
{
	static const char * const bad[] = {
		"", "\n", " 1", "1 ", "1\n\n", "x", "0x10", "1.5", "11", "-2",
		"18446744073709551616", "9223372036854775808", "--1", "1x",
	};
	unsigned int i;
	s64 v = 42;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, dcrace_parse_s64(bad[i], -1, 10, &v),
				    -EINVAL, "input \"%s\"", bad[i]);
		KUNIT_EXPECT_EQ(test, v, 42LL);
	}
	KUNIT_EXPECT_EQ(test, dcrace_parse_s64(NULL, 0, 1, &v), -EINVAL);
}

static void knob_comm(struct kunit *test)
{
	char out[16] = "keep";

	KUNIT_EXPECT_EQ(test, dcrace_parse_comm("dcr-walk\n", 9, out,
						sizeof(out)), 0);
	KUNIT_EXPECT_STREQ(test, out, "dcr-walk");
	KUNIT_EXPECT_EQ(test, dcrace_parse_comm("\n", 1, out, sizeof(out)), 0);
	KUNIT_EXPECT_STREQ(test, out, "");
	strscpy(out, "keep", sizeof(out));
	KUNIT_EXPECT_EQ(test, dcrace_parse_comm("a b", 3, out, sizeof(out)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dcrace_parse_comm("0123456789abcdef", 16, out,
						sizeof(out)), -EINVAL);
	KUNIT_EXPECT_EQ(test, dcrace_parse_comm("a\tb", 3, out, sizeof(out)),
			-EINVAL);
	KUNIT_EXPECT_STREQ(test, out, "keep");
}

static struct kunit_case knob_cases[] = {
	KUNIT_CASE(knob_accepts_valid),
	KUNIT_CASE(knob_rejects_bad),
	KUNIT_CASE(knob_comm),
	{}
};

static struct kunit_suite knob_suite = {
	.name = "dcrace_knobs",
	.test_cases = knob_cases,
};

#include "dcrace_test_decode.c"
#include "dcrace_test_end.c"
#include "dcrace_test_slots.c"

kunit_test_suites(&oracle_suite, &ring_suite, &knob_suite, &decode_suite,
		  &end_suite, &slot_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for dcrace");
