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

/* Put a rel32 jump (e9, or 0f 8x with @cc) at @off to @to (a text offset). */
static size_t put_jmp32(u8 *text, size_t off, int cc, long to)
{
	size_t len = cc < 0 ? 5 : 6;
	s32 rel = (s32)(to - (long)(off + len));

	if (cc < 0) {
		text[off] = 0xe9;
	} else {
		text[off] = 0x0f;
		text[off + 1] = 0x80 | cc;
	}
	memcpy(text + off + len - 4, &rel, sizeof(rel));
	return len;
}

/* Every byte offset where an exit could start, of each kind. */
static void decode_exit_candidates(struct kunit *test)
{
	struct dcrace_exit_site ex[8];
	u8 text[64];

	memset(text, 0x90, sizeof(text));
	text[2] = 0xb8;				/* mov $0xc3, %eax: a c3 inside */
	text[3] = 0xc3;
	put_jmp32(text, 10, 5, -0x1000);	/* jne out (a .cold part) */
	put_jmp32(text, 20, -1, 30);		/* jmp inside: no exit */
	text[30] = 0x74;			/* je rel8 past the end */
	text[31] = 0x60;
	text[40] = 0x41;			/* jmp *%r8 */
	text[41] = 0xff;
	text[42] = 0xe0;
	text[63] = 0xc3;			/* ret */
	KUNIT_ASSERT_EQ(test, dcrace_exit_candidates(text, sizeof(text),
						     TEXT_BASE, ex, 8), 6U);
	KUNIT_EXPECT_EQ(test, ex[0].off, (size_t)3);
	KUNIT_EXPECT_EQ(test, ex[0].kind, (u8)DCRACE_EXIT_RET);
	KUNIT_EXPECT_EQ(test, ex[1].off, (size_t)10);
	KUNIT_EXPECT_EQ(test, ex[1].kind, (u8)DCRACE_EXIT_JCC);
	KUNIT_EXPECT_EQ(test, ex[1].to, TEXT_BASE - 0x1000);
	KUNIT_EXPECT_EQ(test, ex[2].off, (size_t)30);
	KUNIT_EXPECT_EQ(test, ex[2].kind, (u8)DCRACE_EXIT_JCC);
	KUNIT_EXPECT_EQ(test, ex[2].to, TEXT_BASE + 32 + 0x60);
	/* the prefix and the ff: whichever starts the instruction */
	KUNIT_EXPECT_EQ(test, ex[3].off, (size_t)40);
	KUNIT_EXPECT_EQ(test, ex[3].kind, (u8)DCRACE_EXIT_OTHER);
	KUNIT_EXPECT_EQ(test, ex[4].off, (size_t)41);
	KUNIT_EXPECT_EQ(test, ex[5].off, (size_t)63);
	KUNIT_EXPECT_EQ(test, ex[5].kind, (u8)DCRACE_EXIT_RET);
	/* more than @max: counted, not written */
	KUNIT_EXPECT_EQ(test, dcrace_exit_candidates(text, sizeof(text),
						     TEXT_BASE, ex, 2), 6U);
}

/* One site of a synthetic function's exits, as exits.c makes them. */
static struct dcrace_exit_site site(u8 kind, bool insn, u8 tail)
{
	struct dcrace_exit_site e = { .kind = kind, .insn = insn,
				      .tail = tail };

	return e;
}

#define RET(insn)	site(DCRACE_EXIT_RET, insn, 0)
#define JMP(tail)	site(DCRACE_EXIT_JMP, true, DCRACE_TAIL_##tail)
#define JCC(tail)	site(DCRACE_EXIT_JCC, true, DCRACE_TAIL_##tail)

/* dcrace_exits_check(), and the site it blames must be a refusal's */
static enum dcrace_exits_why check(const struct dcrace_exit_site *ex,
				   unsigned int n, bool need_step_tail)
{
	unsigned int bad = 99;
	enum dcrace_exits_why why = dcrace_exits_check(ex, n, need_step_tail,
						       &bad);

	if (why == DCRACE_EXITS_UNKNOWN)
		return bad < n && ex[bad].unknown ? why : DCRACE_EXITS_TOO_MANY;
	if (why == DCRACE_EXITS_OTHER || why == DCRACE_EXITS_FOREIGN ||
	    why == DCRACE_EXITS_PATCHED)
		return bad < n && ex[bad].insn ? why : DCRACE_EXITS_TOO_MANY;
	return bad == n ? why : DCRACE_EXITS_TOO_MANY;
}

/* walk_component()'s usual shape: a ret, jmp step_into, jmp handle_dots. */
static void decode_exits_usual(struct kunit *test)
{
	struct dcrace_exit_site ex[] = { JMP(STEP), JMP(OK), RET(true) };

	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_OK);
	/* a c3 or a jump byte inside an instruction is no exit */
	ex[1] = site(DCRACE_EXIT_JMP, false, DCRACE_TAIL_FOREIGN);
	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_OK);
	ex[2] = RET(false);
	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_NO_RET);
}

/* A conditional jump out: a tail call if to step_into, else not seen. */
static void decode_exits_conditional(struct kunit *test)
{
	struct dcrace_exit_site ex[] = { JCC(STEP), RET(true) };

	KUNIT_EXPECT_EQ(test, check(ex, 2, true),
			DCRACE_EXITS_OK);
	/* jne walk_component.cold: a .cold part, whose exits are not seen */
	ex[0] = JCC(FOREIGN);
	KUNIT_EXPECT_EQ(test, check(ex, 2, false),
			DCRACE_EXITS_FOREIGN);
	ex[0] = JMP(FOREIGN);
	KUNIT_EXPECT_EQ(test, check(ex, 2, false),
			DCRACE_EXITS_FOREIGN);
}

static void decode_exits_indirect(struct kunit *test)
{
	struct dcrace_exit_site ex[] = {
		site(DCRACE_EXIT_OTHER, true, 0), RET(true),
	};

	KUNIT_EXPECT_EQ(test, check(ex, 2, false),
			DCRACE_EXITS_OTHER);
	ex[0].insn = false;
	KUNIT_EXPECT_EQ(test, check(ex, 2, false),
			DCRACE_EXITS_OK);
}

/* Bytes a kprobe wrote (its int3, its jump) hide what is under them. */
static void decode_exits_patched(struct kunit *test)
{
	struct dcrace_exit_site ex[] = {
		site(DCRACE_EXIT_INT3, true, 0), JMP(STEP), RET(true),
	};

	/* an int3 of the code's own (after a ret, as the kernel pads) */
	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_OK);
	/* a probe's: a ret or a jump may be under it */
	ex[0].patched = true;
	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_PATCHED);
	/* a probe's jump (an optimized one) where a pop was */
	ex[0] = JMP(FOREIGN);
	ex[0].patched = true;
	KUNIT_EXPECT_EQ(test, check(ex, 3, true),
			DCRACE_EXITS_PATCHED);
	/*
	 * The kprobe core will not probe a real int3 (Debian's patched
	 * return thunks leave "ret; int3 x4"): no exit. Any other byte it
	 * refuses might be one that no probe can see.
	 */
	ex[0] = site(DCRACE_EXIT_INT3, false, 0);
	ex[0].unknown = true;
	KUNIT_EXPECT_EQ(test, check(ex, 3, true), DCRACE_EXITS_OK);
	ex[0] = RET(false);
	ex[0].unknown = true;
	KUNIT_EXPECT_EQ(test, check(ex, 3, true), DCRACE_EXITS_UNKNOWN);
}

/* step_into() inlined into walk_component(): no step seen reaching it. */
static void decode_exits_step_tail(struct kunit *test)
{
	struct dcrace_exit_site ex[] = { JMP(OK), RET(true) };

	KUNIT_EXPECT_EQ(test, check(ex, 2, true),
			DCRACE_EXITS_NO_STEP_TAIL);
	/* step_into()'s own rets need no such tail */
	KUNIT_EXPECT_EQ(test, check(ex, 2, false),
			DCRACE_EXITS_OK);
	KUNIT_EXPECT_STREQ(test, dcrace_exits_why_name(DCRACE_EXITS_NO_STEP_TAIL),
			   "no jump to step_into (inlined?)");
}

/* What the fake kprobe core answers, and what it was asked. */
struct fake_arm {
	int answers[DCRACE_EPILOGUE_MAX + 1];
	unsigned int asked;
	size_t at;
	unsigned int pops;
};

static int fake_arm_cb(void *ctx, size_t at, unsigned int pops)
{
	struct fake_arm *f = ctx;
	int err = f->answers[f->asked++];

	if (!err) {
		f->at = at;
		f->pops = pops;
	}
	return err;
}

/* A real ret that cannot be probed is an error, never a stray byte. */
static void decode_exit_arm(struct kunit *test)
{
	size_t ret = 20 + sizeof(epilogue) - 1;
	struct fake_arm f = { };
	unsigned int i;
	u8 text[48];

	memset(text, 0x90, sizeof(text));
	memcpy(text + 20, epilogue, sizeof(epilogue));
	/* the first pop is no instruction start here: the second one */
	f.answers[0] = -EILSEQ;
	KUNIT_EXPECT_EQ(test, dcrace_exit_arm(text, sizeof(text), ret,
					      fake_arm_cb, &f), 0);
	KUNIT_EXPECT_EQ(test, f.asked, 2U);
	KUNIT_EXPECT_EQ(test, f.at, (size_t)21);
	KUNIT_EXPECT_EQ(test, f.pops, 3U);
	/* every candidate refused: an error */
	memset(&f, 0, sizeof(f));
	for (i = 0; i < ARRAY_SIZE(f.answers); i++)
		f.answers[i] = -EILSEQ;
	KUNIT_EXPECT_EQ(test, dcrace_exit_arm(text, sizeof(text), ret,
					      fake_arm_cb, &f), -EILSEQ);
	KUNIT_EXPECT_EQ(test, f.asked, 8U);
	/* another error stops at once */
	memset(&f, 0, sizeof(f));
	f.answers[0] = -ENOMEM;
	KUNIT_EXPECT_EQ(test, dcrace_exit_arm(text, sizeof(text), ret,
					      fake_arm_cb, &f), -ENOMEM);
	KUNIT_EXPECT_EQ(test, f.asked, 1U);
	/* no ret there */
	KUNIT_EXPECT_EQ(test, dcrace_exit_arm(text, sizeof(text), ret - 1,
					      fake_arm_cb, &f), -ENOENT);
}

static struct kunit_case decode_cases[] = {
	KUNIT_CASE(decode_one_call),
	KUNIT_CASE(decode_all_calls),
	KUNIT_CASE(decode_no_or_many_calls),
	KUNIT_CASE(decode_exit_points),
	KUNIT_CASE(decode_exit_candidates),
	KUNIT_CASE(decode_exits_usual),
	KUNIT_CASE(decode_exits_conditional),
	KUNIT_CASE(decode_exits_indirect),
	KUNIT_CASE(decode_exits_patched),
	KUNIT_CASE(decode_exits_step_tail),
	KUNIT_CASE(decode_exit_arm),
	{}
};

static struct kunit_suite decode_suite = {
	.name = "dcrace_decode",
	.test_cases = decode_cases,
};
