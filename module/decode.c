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

unsigned int dcrace_jumps_out(const u8 *text, size_t len, unsigned long base,
			      unsigned long *to, unsigned int max)
{
	unsigned int n = 0;
	size_t i;
	long t;

	for (i = 0; i < len; i++) {
		if (text[i] != 0xe9 || !jump_at(text, len, i, &t) ||
		    (t >= 0 && t < (long)len))
			continue;
		if (n < max)
			to[n] = base + t;
		n++;
	}
	return n;
}
