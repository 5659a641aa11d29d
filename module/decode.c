// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: finding call sites in function text. Pure: works on a copy of
 * the bytes, so that the KUnit tests can feed it synthetic code.
 */
#include <linux/string.h>
#include <dcrace/dcrace.h>

/*
 * @text holds @len bytes of code that starts at address @base. Find the
 * direct near calls (e8 rel32) whose target is @target; *@after gets the
 * address just after the last one found. Returns how many were found.
 * Every byte offset is tried (x86 has no instruction boundaries to go by
 * without a decoder), so an e8 byte inside another instruction can match
 * too; callers want exactly one match.
 */
static bool call_to(const u8 *text, size_t i, unsigned long base,
		    unsigned long target)
{
	s32 rel;

	if (text[i] != 0xe8)
		return false;
	memcpy(&rel, text + i + 1, sizeof(rel));
	return base + i + DCRACE_CALL_LEN + rel == target;
}

unsigned int dcrace_find_calls(const u8 *text, size_t len, unsigned long base,
			       unsigned long target, unsigned long *after)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i + DCRACE_CALL_LEN <= len; i++) {
		if (call_to(text, i, base, target)) {
			*after = base + i + DCRACE_CALL_LEN;
			n++;
		}
	}
	return n;
}

unsigned int dcrace_find_calls_all(const u8 *text, size_t len,
				   unsigned long base, unsigned long target,
				   unsigned long *after, unsigned int max)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i + DCRACE_CALL_LEN <= len; i++) {
		if (!call_to(text, i, base, target))
			continue;
		if (n < max)
			after[n] = base + i + DCRACE_CALL_LEN;
		n++;
	}
	return n;
}

/* ---- a function's returns ------------------------------------------------ */

/* pop %reg (58+r), or pop %r8-%r15 (41 58+r): its length, else 0. */
static size_t pop_len(const u8 *t, size_t i, size_t end)
{
	if (i < end && t[i] >= 0x58 && t[i] <= 0x5f)
		return 1;
	if (i + 1 < end && t[i] == 0x41 && t[i + 1] >= 0x58 && t[i + 1] <= 0x5f)
		return 2;
	return 0;
}

/* The pops from @from to the ret at @ret, decoded forward; -1: not only pops. */
static int pops_to(const u8 *t, size_t from, size_t ret)
{
	int n = 0;
	size_t l;

	while (from < ret) {
		l = pop_len(t, from, ret);
		if (!l)
			return -1;
		from += l;
		n++;
	}
	return n;
}

/* A relative jump's target if one starts at @i (rel8 jmp/jcc, rel32 jmp/jcc). */
static bool jump_at(const u8 *t, size_t len, size_t i, long *to)
{
	s32 r32;

	if (((t[i] >= 0x70 && t[i] <= 0x7f) || t[i] == 0xeb) && i + 2 <= len) {
		*to = (long)i + 2 + (s8)t[i + 1];
		return true;
	}
	if (t[i] == 0xe9 && i + 5 <= len) {
		memcpy(&r32, t + i + 1, sizeof(r32));
		*to = (long)i + 5 + r32;
		return true;
	}
	if (t[i] == 0x0f && i + 6 <= len && (t[i + 1] & 0xf0) == 0x80) {
		memcpy(&r32, t + i + 2, sizeof(r32));
		*to = (long)i + 6 + r32;
		return true;
	}
	return false;
}

/*
 * Could a jump land in (@lo, @hi]? Tried at every byte offset, so a byte
 * inside another instruction can make a false "yes": the answer errs on
 * the safe side.
 */
static bool jump_into(const u8 *t, size_t len, size_t lo, size_t hi)
{
	size_t i;
	long to;

	for (i = 0; i < len; i++)
		if (jump_at(t, len, i, &to) && to > (long)lo && to <= (long)hi)
			return true;
	return false;
}

unsigned int dcrace_exit_points(const u8 *text, size_t len, size_t ret,
				size_t *at, unsigned int *pops,
				unsigned int max)
{
	size_t k = ret > DCRACE_EPILOGUE_MAX ? ret - DCRACE_EPILOGUE_MAX : 0;
	unsigned int n = 0;
	int p;

	if (ret >= len || text[ret] != 0xc3)
		return 0;
	for (; k <= ret && n < max; k++) {
		p = pops_to(text, k, ret);
		if (p < 0 || jump_into(text, len, k, ret))
			continue;
		at[n] = k;
		pops[n++] = p;
	}
	return n;
}

/* ---- every way out of a function ---------------------------------------- */

/* ff /4 or /5 (jmp through a register or memory), after a prefix or not. */
static bool indirect_jmp_at(const u8 *t, size_t len, size_t i)
{
	unsigned int reg;

	if (i + 1 < len && ((t[i] >= 0x40 && t[i] <= 0x4f) || t[i] == 0x2e ||
			    t[i] == 0x3e))
		i++;
	if (i + 1 >= len || t[i] != 0xff)
		return false;
	reg = (t[i + 1] >> 3) & 7;
	return reg == 4 || reg == 5;
}

unsigned int dcrace_exit_candidates(const u8 *text, size_t len,
				    unsigned long base,
				    struct dcrace_exit_site *out,
				    unsigned int max)
{
	unsigned int n = 0;
	size_t i;
	long to;

	for (i = 0; i < len; i++) {
		struct dcrace_exit_site e = { .off = i };

		if (text[i] == 0xc3) {
			e.kind = DCRACE_EXIT_RET;
		} else if (text[i] == 0xcc) {
			e.kind = DCRACE_EXIT_INT3;
		} else if (text[i] == 0xc2 || indirect_jmp_at(text, len, i)) {
			e.kind = DCRACE_EXIT_OTHER;
		} else if (jump_at(text, len, i, &to) &&
			   (to < 0 || to >= (long)len)) {
			e.kind = text[i] == 0xe9 || text[i] == 0xeb ?
				 DCRACE_EXIT_JMP : DCRACE_EXIT_JCC;
			e.to = base + to;
		} else {
			continue;
		}
		if (n < max)
			out[n] = e;
		n++;
	}
	return n;
}

/*
 * Only what starts an instruction counts (a c3 or an e9 inside another
 * instruction is no exit): a ret, to be probed; a jump, conditional or
 * not, to step_into() or another allowed function's start, a tail call.
 * Anything else leaves the function where no probe sees it.
 */
enum dcrace_exits_why dcrace_exits_check(const struct dcrace_exit_site *ex,
					 unsigned int n, bool need_step_tail,
					 unsigned int *bad)
{
	unsigned int i, rets = 0, step_tails = 0;

	for (i = 0; i < n; i++) {
		*bad = i;
		/* an int3 of the code's own is no exit; else it might be */
		if (ex[i].unknown && ex[i].kind != DCRACE_EXIT_INT3)
			return DCRACE_EXITS_UNKNOWN;
		if (!ex[i].insn)
			continue;
		/* the bytes seen are a kprobe's: what is under them is not */
		if (ex[i].patched)
			return DCRACE_EXITS_PATCHED;
		switch (ex[i].kind) {
		case DCRACE_EXIT_RET:
			rets++;
			break;
		case DCRACE_EXIT_JMP:
		case DCRACE_EXIT_JCC:
			if (ex[i].tail == DCRACE_TAIL_FOREIGN)
				return DCRACE_EXITS_FOREIGN;
			step_tails += ex[i].tail == DCRACE_TAIL_STEP;
			break;
		case DCRACE_EXIT_INT3:
			break;
		default:
			return DCRACE_EXITS_OTHER;
		}
	}
	*bad = n;
	if (!rets)
		return DCRACE_EXITS_NO_RET;
	if (need_step_tail && !step_tails)
		return DCRACE_EXITS_NO_STEP_TAIL;
	return DCRACE_EXITS_OK;
}

const char *dcrace_exits_why_name(enum dcrace_exits_why why)
{
	static const char * const names[] = {
		[DCRACE_EXITS_OK] = "every exit probed",
		[DCRACE_EXITS_OTHER] = "an indirect jump or ret imm16",
		[DCRACE_EXITS_FOREIGN] = "a jump out to no allowed function (a .cold part?)",
		[DCRACE_EXITS_NO_RET] = "no ret",
		[DCRACE_EXITS_NO_STEP_TAIL] = "no jump to step_into (inlined?)",
		[DCRACE_EXITS_TOO_MANY] = "too many candidate bytes",
		[DCRACE_EXITS_PATCHED] = "code under another kprobe",
		[DCRACE_EXITS_UNKNOWN] = "a byte that cannot be probed",
	};

	return why < ARRAY_SIZE(names) && names[why] ? names[why] : "?";
}

int dcrace_exit_arm(const u8 *text, size_t len, size_t ret,
		    int (*arm)(void *ctx, size_t at, unsigned int pops),
		    void *ctx)
{
	size_t at[DCRACE_EPILOGUE_MAX + 1];
	unsigned int pops[DCRACE_EPILOGUE_MAX + 1], n, i;
	int err = -ENOENT;

	n = dcrace_exit_points(text, len, ret, at, pops, ARRAY_SIZE(at));
	for (i = 0; i < n; i++) {
		err = arm(ctx, at[i], pops[i]);
		if (err != -EILSEQ)
			return err;
	}
	return err;
}
