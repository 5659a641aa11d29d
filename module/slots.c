// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace: the per-task slots (a step's state from its start to its end,
 * step.c): a fixed table, each task's slot within DCRACE_SLOT_PROBE
 * places from its hash, claimed with a cmpxchg by the task itself.
 *
 * dcrace_slot_last[] keeps each task's last claim by its hash: the task's
 * pointer, with the slot's place in its window in the low bits
 * (task_structs are cache-line aligned; an unaligned pointer is never
 * kept). A task owns at most one slot, the one it claimed last, and only
 * the task claims for itself; so while the word names the task, the
 * task's slot is that one or none (released), and slot_find() and
 * slot_claim() (inline, internal.h) need no scan. Tasks sharing a hash
 * overwrite each other's word: then the window is scanned, here, and the
 * word written anew. The word is a hint that is always checked against
 * the slot's owner, never trusted for ownership.
 */
#include "internal.h"

struct dcrace_slot dcrace_slots[DCRACE_SLOTS];
unsigned long dcrace_slot_last[DCRACE_SLOTS];

static void slot_remember(struct task_struct *t, unsigned int h,
			  unsigned int i)
{
	if (!((unsigned long)t & SLOT_LAST_MASK))
		WRITE_ONCE(dcrace_slot_last[h], (unsigned long)t | i);
}

/* The slot @t owns in its window (@h: its hash), or NULL. */
struct dcrace_slot *slot_find_scan(struct task_struct *t, unsigned int h)
{
	struct dcrace_slot *s;
	unsigned int i;

	for (i = 0; i < DCRACE_SLOT_PROBE; i++) {
		s = slot_at(h, i);
		if (READ_ONCE(s->owner) == t) {
			slot_remember(t, h, i);
			return s;
		}
	}
	return NULL;
}

/*
 * A slot for @t: the one it owns (@find: it may own one), else the first
 * free one of its window; NULL when the window is full.
 */
struct dcrace_slot *slot_claim_scan(struct task_struct *t, unsigned int h,
				    bool find)
{
	struct dcrace_slot *s;
	unsigned int i;

	if (find) {
		s = slot_find_scan(t, h);
		if (s)
			return s;
	}
	for (i = 0; i < DCRACE_SLOT_PROBE; i++) {
		s = slot_at(h, i);
		if (!READ_ONCE(s->owner) && !cmpxchg(&s->owner, NULL, t)) {
			slot_remember(t, h, i);
			return s;
		}
	}
	return NULL;
}
