// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite dcrace_decode: the call-site decoder on synthetic code.
 * Included by dcrace_test.c (one KUnit module), not built on its own.
 */

/* ---- call-site decoder, on synthetic code ------------------------------ */

#define TEXT_BASE	0xffffffff81000000UL

/* Put "call TARGET" at @off of @text, as if @text were at TEXT_BASE. */
static void put_call(u8 *text, size_t off, unsigned long target)
{
	s32 rel = (s32)(target - (TEXT_BASE + off + DCRACE_CALL_LEN));

	text[off] = 0xe8;
	memcpy(text + off + 1, &rel, sizeof(rel));
}

static void decode_one_call(struct kunit *test)
{
	u8 text[64];
	unsigned long after = 0, target = TEXT_BASE - 0x1234;

	memset(text, 0x90, sizeof(text));	/* nops */
	put_call(text, 10, target);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, sizeof(text), TEXT_BASE,
						target, &after), 1U);
	KUNIT_EXPECT_EQ(test, after, TEXT_BASE + 10 + DCRACE_CALL_LEN);
	/* a forward target, at the very end of the text */
	target = TEXT_BASE + 0x5000;
	memset(text, 0x90, sizeof(text));
	put_call(text, sizeof(text) - DCRACE_CALL_LEN, target);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, sizeof(text), TEXT_BASE,
						target, &after), 1U);
	KUNIT_EXPECT_EQ(test, after, TEXT_BASE + sizeof(text));
}

static void decode_no_or_many_calls(struct kunit *test)
{
	u8 text[64];
	unsigned long after = 0, target = TEXT_BASE + 0x100;

	memset(text, 0x90, sizeof(text));
	put_call(text, 0, target + 1);		/* another function */
	text[20] = 0xe8;			/* e8 with a wrong offset */
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, sizeof(text), TEXT_BASE,
						target, &after), 0U);
	KUNIT_EXPECT_EQ(test, after, 0UL);
	put_call(text, 30, target);
	put_call(text, 40, target);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, sizeof(text), TEXT_BASE,
						target, &after), 2U);
	/* a call cut by the end of the text is not read past it */
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, 44, TEXT_BASE, target,
						&after), 1U);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls(text, 0, TEXT_BASE, target,
						&after), 0U);
}

/* path_openat() is called three times in do_filp_open(): every site. */
static void decode_all_calls(struct kunit *test)
{
	u8 text[64];
	unsigned long after[2] = { 0, 0 }, target = TEXT_BASE + 0x100;

	memset(text, 0x90, sizeof(text));
	put_call(text, 5, target);
	put_call(text, 20, target + 1);		/* another function */
	put_call(text, 30, target);
	put_call(text, 50, target);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls_all(text, sizeof(text),
						    TEXT_BASE, target, after,
						    2), 3U);
	/* the first @max, in address order */
	KUNIT_EXPECT_EQ(test, after[0], TEXT_BASE + 5 + DCRACE_CALL_LEN);
	KUNIT_EXPECT_EQ(test, after[1], TEXT_BASE + 30 + DCRACE_CALL_LEN);
	KUNIT_EXPECT_EQ(test, dcrace_find_calls_all(text, 20, TEXT_BASE,
						    target, after, 0), 1U);
	KUNIT_EXPECT_EQ(test, after[0], TEXT_BASE + 5 + DCRACE_CALL_LEN);
}

/* ---- returns: the pops before a ret, tail calls ------------------------ */

/* pop rbx; pop r12; pop r13; pop r14; ret, at @off of @text */
static const u8 epilogue[] = { 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5e, 0xc3 };

static void decode_exit_points(struct kunit *test)
{
	size_t at[DCRACE_EPILOGUE_MAX + 1], ret = 20 + sizeof(epilogue) - 1;
	unsigned int pops[DCRACE_EPILOGUE_MAX + 1];
	u8 text[48];

	memset(text, 0x90, sizeof(text));
	memcpy(text + 20, epilogue, sizeof(epilogue));
	/* every offset from which only pops lead to the ret, the ret last */
	KUNIT_ASSERT_EQ(test, dcrace_exit_points(text, sizeof(text), ret, at,
						 pops, ARRAY_SIZE(at)), 8U);
	KUNIT_EXPECT_EQ(test, at[0], (size_t)20);
	KUNIT_EXPECT_EQ(test, pops[0], 4U);
	KUNIT_EXPECT_EQ(test, at[1], (size_t)21);
	KUNIT_EXPECT_EQ(test, pops[1], 3U);
	KUNIT_EXPECT_EQ(test, at[7], ret);
	KUNIT_EXPECT_EQ(test, pops[7], 0U);
	/* a jump (jmp rel8 at 2) to the fourth pop: nothing before it */
	text[2] = 0xeb;
	text[3] = 25 - 4;
	KUNIT_ASSERT_EQ(test, dcrace_exit_points(text, sizeof(text), ret, at,
						 pops, ARRAY_SIZE(at)), 3U);
	KUNIT_EXPECT_EQ(test, at[0], (size_t)25);
	KUNIT_EXPECT_EQ(test, pops[0], 1U);
	/* no ret there */
	KUNIT_EXPECT_EQ(test, dcrace_exit_points(text, sizeof(text), ret - 1,
						 at, pops, ARRAY_SIZE(at)), 0U);
	KUNIT_EXPECT_EQ(test, dcrace_exit_points(text, sizeof(text), 100, at,
						 pops, ARRAY_SIZE(at)), 0U);
}

static void decode_jumps_out(struct kunit *test)
{
	unsigned long to[4];
	s32 rel;
	u8 text[32];

	memset(text, 0x90, sizeof(text));
	/* jmp inside the text: not a tail call */
	text[4] = 0xe9;
	rel = 10;
	memcpy(text + 5, &rel, sizeof(rel));
	KUNIT_EXPECT_EQ(test, dcrace_jumps_out(text, sizeof(text), TEXT_BASE,
					       to, ARRAY_SIZE(to)), 0U);
	/* jmp to before the text */
	rel = -0x100;
	memcpy(text + 5, &rel, sizeof(rel));
	KUNIT_ASSERT_EQ(test, dcrace_jumps_out(text, sizeof(text), TEXT_BASE,
					       to, ARRAY_SIZE(to)), 1U);
	KUNIT_EXPECT_EQ(test, to[0], TEXT_BASE + 9 - 0x100);
}

static struct kunit_case decode_cases[] = {
	KUNIT_CASE(decode_one_call),
	KUNIT_CASE(decode_all_calls),
	KUNIT_CASE(decode_no_or_many_calls),
	KUNIT_CASE(decode_exit_points),
	KUNIT_CASE(decode_jumps_out),
	{}
};

static struct kunit_suite decode_suite = {
	.name = "dcrace_decode",
	.test_cases = decode_cases,
};
