// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the per-task slots (slots.c, the inline halves in internal.h).
 * Tasks are stand-in pointers, never dereferenced: cache-line aligned as
 * task_structs are, and one that is not.
 */
#include "slots.c"

static struct task_struct *fake_task(unsigned long k)
{
	return (struct task_struct *)(0xffff888000000000UL + k * 64);
}

static unsigned int fake_hash(struct task_struct *t)
{
	return hash_ptr(t, DCRACE_SLOT_BITS);
}

/* The @n-th stand-in task after @from with @t's hash. */
static struct task_struct *same_hash(struct task_struct *t, unsigned long from)
{
	unsigned long k;

	for (k = from; k < from + 100000; k++)
		if (fake_task(k) != t && fake_hash(fake_task(k)) == fake_hash(t))
			return fake_task(k);
	return NULL;
}

static void slots_clear(void)
{
	memset(dcrace_slots, 0, sizeof(dcrace_slots));
	memset(dcrace_slot_last, 0, sizeof(dcrace_slot_last));
}

static int owned_by(struct task_struct *t)
{
	int i, n = 0;

	for (i = 0; i < DCRACE_SLOTS; i++)
		n += dcrace_slots[i].owner == t;
	return n;
}

/* claim, find, claim again; released: found no more, claimed back */
static void slot_claim_find(struct kunit *test)
{
	struct task_struct *t = fake_task(1);
	struct dcrace_slot *s;

	slots_clear();
	KUNIT_EXPECT_NULL(test, slot_find(t));
	s = slot_claim(t);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_EXPECT_PTR_EQ(test, slot_find(t), s);
	KUNIT_EXPECT_PTR_EQ(test, slot_claim(t), s);
	KUNIT_EXPECT_EQ(test, owned_by(t), 1);
	KUNIT_EXPECT_TRUE(test, slot_last_is(dcrace_slot_last[fake_hash(t)], t));
	WRITE_ONCE(s->owner, NULL);
	KUNIT_EXPECT_NULL(test, slot_find(t));
	KUNIT_EXPECT_PTR_EQ(test, slot_claim(t), s);
	KUNIT_EXPECT_EQ(test, owned_by(t), 1);
}

/* two tasks of one hash: two slots, each found whoever wrote the word */
static void slot_shared_hash(struct kunit *test)
{
	struct task_struct *t1 = fake_task(1), *t2 = same_hash(t1, 2);
	struct dcrace_slot *s1, *s2;
	unsigned int h = fake_hash(t1);

	KUNIT_ASSERT_NOT_NULL(test, t2);
	slots_clear();
	s1 = slot_claim(t1);
	s2 = slot_claim(t2);
	KUNIT_ASSERT_NOT_NULL(test, s1);
	KUNIT_ASSERT_NOT_NULL(test, s2);
	KUNIT_EXPECT_PTR_NE(test, s1, s2);
	KUNIT_EXPECT_TRUE(test, slot_last_is(dcrace_slot_last[h], t2));
	/* t1's word overwritten: the scan finds its slot and takes the word */
	KUNIT_EXPECT_PTR_EQ(test, slot_find(t1), s1);
	KUNIT_EXPECT_TRUE(test, slot_last_is(dcrace_slot_last[h], t1));
	KUNIT_EXPECT_PTR_EQ(test, slot_claim(t2), s2);
	KUNIT_EXPECT_EQ(test, owned_by(t1), 1);
	KUNIT_EXPECT_EQ(test, owned_by(t2), 1);
}

/* the word names t, its last slot taken by another: t gets another one */
static void slot_last_taken(struct kunit *test)
{
	struct task_struct *t = fake_task(1), *u = fake_task(7);
	struct dcrace_slot *s, *s2;

	slots_clear();
	s = slot_claim(t);
	KUNIT_ASSERT_NOT_NULL(test, s);
	WRITE_ONCE(s->owner, u);
	KUNIT_EXPECT_NULL(test, slot_find(t));
	s2 = slot_claim(t);
	KUNIT_ASSERT_NOT_NULL(test, s2);
	KUNIT_EXPECT_PTR_NE(test, s2, s);
	KUNIT_EXPECT_PTR_EQ(test, s->owner, u);
	KUNIT_EXPECT_EQ(test, owned_by(t), 1);
	KUNIT_EXPECT_PTR_EQ(test, slot_find(t), s2);
}

/* a pointer with its low bits set is never kept: the scan still works */
static void slot_unaligned(struct kunit *test)
{
	struct task_struct *t = (struct task_struct *)
				((unsigned long)fake_task(3) + 8);
	struct dcrace_slot *s;

	slots_clear();
	s = slot_claim(t);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_EXPECT_EQ(test, dcrace_slot_last[fake_hash(t)], 0UL);
	KUNIT_EXPECT_PTR_EQ(test, slot_find(t), s);
	KUNIT_EXPECT_PTR_EQ(test, slot_claim(t), s);
	KUNIT_EXPECT_EQ(test, owned_by(t), 1);
}

/* DCRACE_SLOT_PROBE tasks of one hash fill its window: one more gets none */
static void slot_window_full(struct kunit *test)
{
	struct task_struct *t = fake_task(1), *u = t;
	unsigned long from = 2;
	int i;

	slots_clear();
	KUNIT_ASSERT_NOT_NULL(test, slot_claim(t));
	for (i = 1; i < DCRACE_SLOT_PROBE; i++) {
		u = same_hash(t, from);
		KUNIT_ASSERT_NOT_NULL(test, u);
		from = ((unsigned long)u - 0xffff888000000000UL) / 64 + 1;
		KUNIT_ASSERT_NOT_NULL(test, slot_claim(u));
	}
	u = same_hash(t, from);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_EXPECT_NULL(test, slot_claim(u));
	KUNIT_EXPECT_EQ(test, owned_by(u), 0);
	/* every earlier task still finds its own */
	KUNIT_EXPECT_NOT_NULL(test, slot_find(t));
}

static struct kunit_case slot_cases[] = {
	KUNIT_CASE(slot_claim_find),
	KUNIT_CASE(slot_shared_hash),
	KUNIT_CASE(slot_last_taken),
	KUNIT_CASE(slot_unaligned),
	KUNIT_CASE(slot_window_full),
	{}
};

static struct kunit_suite slot_suite = {
	.name = "dcrace_slots",
	.test_cases = slot_cases,
};
