// SPDX-License-Identifier: GPL-2.0
/*
 * dcrace event ring: fixed size, newest kept, overwrites counted.
 */
#include <linux/compiler.h>
#include <linux/string.h>
#include <dcrace/dcrace.h>

void dcrace_ring_init(struct dcrace_ring *r, struct dcrace_event *slots,
		      unsigned int cap)
{
	raw_spin_lock_init(&r->lock);
	r->slots = slots;
	r->cap = cap;
	r->head = 0;
	r->lost = 0;
}

u64 dcrace_ring_push(struct dcrace_ring *r, struct dcrace_event *e)
{
	unsigned long flags;
	u64 id;

	/*
	 * Pushed from probe handlers, some in int3 (NMI-like) context: never
	 * wait for the lock there. A busy ring drops the event (returns 0).
	 */
	if (!raw_spin_trylock_irqsave(&r->lock, flags))
		return 0;
	if (r->head >= r->cap)
		r->lost++;
	id = ++r->head;
	e->id = id;
	r->slots[(id - 1) % r->cap] = *e;
	raw_spin_unlock_irqrestore(&r->lock, flags);
	return id;
}

void dcrace_ring_reset(struct dcrace_ring *r)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&r->lock, flags);
	r->head = 0;
	r->lost = 0;
	raw_spin_unlock_irqrestore(&r->lock, flags);
}

static u64 ring_first(const struct dcrace_ring *r)
{
	if (!r->head)
		return 0;
	return r->head > r->cap ? r->head - r->cap + 1 : 1;
}

void dcrace_ring_bounds(struct dcrace_ring *r, u64 *first, u64 *last,
			u64 *lost)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&r->lock, flags);
	*first = ring_first(r);
	*last = r->head;
	*lost = r->lost;
	raw_spin_unlock_irqrestore(&r->lock, flags);
}

bool dcrace_ring_get(struct dcrace_ring *r, u64 id, struct dcrace_event *out)
{
	unsigned long flags;
	bool ok;

	raw_spin_lock_irqsave(&r->lock, flags);
	ok = id && id >= ring_first(r) && id <= r->head;
	if (ok)
		*out = r->slots[(id - 1) % r->cap];
	raw_spin_unlock_irqrestore(&r->lock, flags);
	return ok;
}

void dcrace_copy_name(char *dst, size_t size, const unsigned char *src,
		      bool *truncated)
{
	size_t i;

	for (i = 0; i + 1 < size; i++) {
		unsigned char c = READ_ONCE(src[i]);

		if (!c)
			break;
		dst[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	dst[i] = '\0';
	/* src[i] exists: src[0..i-1] are not its NUL */
	*truncated = i + 1 == size && READ_ONCE(src[i]) != '\0';
}

void dcrace_trace_word(char *dst, const char *src, size_t size, char repl)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = (src[i] > 0x20 && src[i] < 0x7f) ? src[i] : repl;
	if (!i && size > 1)
		dst[i++] = repl;
	dst[i] = '\0';
}
