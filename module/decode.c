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
