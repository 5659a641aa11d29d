/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace.ko is one source for the 6.1 and the 6.12 kernel lines
 * (docs/design.md, "Kernel lines"). Where the kernel's API differs
 * between them the difference is settled here, by version, and the rest
 * of module/ uses these names. (What differs in the kernel's code, not
 * its API, is found at load: call sites, stack offsets, early_test.)
 *
 * checkpatch's LINUX_VERSION_CODE rule is for code merged into one
 * kernel; tests/05-lint.t lets this file, and only it, use the macro.
 */
#ifndef _DCRACE_COMPAT_H
#define _DCRACE_COMPAT_H

#include <linux/version.h>

/* Is the kernel built against A.B or later? */
#define DCRACE_KERNEL_AT_LEAST(a, b) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

/*
 * Trace events: since 6.10 __assign_str() takes the source from the
 * field's __string() and has one argument.
 */
#if DCRACE_KERNEL_AT_LEAST(6, 10)
#define dcrace_assign_str(dst, src) __assign_str(dst)
#else
#define dcrace_assign_str(dst, src) __assign_str(dst, src)
#endif

#endif /* _DCRACE_COMPAT_H */
