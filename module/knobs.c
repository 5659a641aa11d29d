// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace knob parsing: strict, in the manner of kstrto*(). Bad input gets
 * -EINVAL and leaves the destination untouched.
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <dcrace/dcrace.h>

/*
 * A signed decimal number, optionally followed by one newline (as echo
 * writes it), within [min, max].
 */
int dcrace_parse_s64(const char *buf, s64 min, s64 max, s64 *out)
{
	s64 v;

	if (!buf || kstrtos64(buf, 10, &v))
		return -EINVAL;
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * A task name filter: printable characters, no spaces, shorter than
 * @size, one trailing newline allowed. An empty write (or just "\n")
 * clears the filter.
 */
int dcrace_parse_comm(const char *buf, size_t len, char *out, size_t size)
{
	size_t i;

	if (!buf || !size)
		return -EINVAL;
	if (len && buf[len - 1] == '\n')
		len--;
	if (len >= size)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isgraph(buf[i]))
			return -EINVAL;
	memcpy(out, buf, len);
	memset(out + len, 0, size - len);
	return 0;
}
