/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dcrace-hunt's identity oracle (docs/design.md, "The hunt"): a lookup
 * that succeeds on the wrong object is invisible to an errno check and to
 * KASAN. The controller registers every object it makes (st_dev, st_ino,
 * file type, the name it made it under) with the logical-clock interval
 * in which it existed; a walker's successful stat() or open() (fstat() of
 * the fd) must have met an object registered under a name its path can
 * resolve to, alive during the call. Checked when the run is over (the
 * controller registers an object right after making it), so a walker
 * only records what it could not match at once.
 */
#ifndef DCRACE_HUNT_IDENT_H
#define DCRACE_HUNT_IDENT_H

#include <stdio.h>
#include <sys/stat.h>

/* the controller: made/removed @name (an lstat() of it is registered) */
void ident_made(const char *name, const char *path);
void ident_removed(const char *name);
/* the walker: the clock before a call */
unsigned long ident_clock(void);
/*
 * the walker: a successful call on path @pidx whose names (comma
 * separated, "" for a path not checked) it may resolve to met @st,
 * between clocks @c0 and now
 */
void ident_check(int pidx, const char *names, const struct stat *st,
		 unsigned long c0);
/* after the run: the JSON fields "identity_checks", "wrong_objects" */
unsigned long ident_finish(FILE *out, const char *const *path_names,
			   const char *const *names);

#endif
