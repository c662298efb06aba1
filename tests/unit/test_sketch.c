/* Unit tests of the report's space-saving sketch (report/sketch.h): exact
 * counts up to the number of slots, for wakers (weighed by count) and for
 * blocked functions (weighed by off-CPU time), and what happens past it:
 * the lightest slot gives way and the new key inherits its figures; the
 * wakers' 16-slot layout (sketch16, SSE2 on x86-64) gives what the
 * general sketch gives on the same streams. */
#include "report/model.h"
#include "report/sketch.h"
#include "unit.h"

/* 16 distinct wakers, each k woke the thread k + 1 times, interleaved:
 * every count is exact. */
static void test_exact_up_to_slots(void)
{
	struct sketch_slot s[WAKER_SLOTS] = { { 0, 0 } };
	uint32_t k, round;

	CHECK_EQ_I64(WAKER_SLOTS, 16);
	for (round = 0; round < WAKER_SLOTS; round++)
		for (k = round; k < WAKER_SLOTS; k++)
			sketch_note(s, NULL, WAKER_SLOTS, 1000 + k, 1);
	for (k = 0; k < WAKER_SLOTS; k++) {
		CHECK_EQ_I64(s[k].key, 1000 + k);
		CHECK_EQ_I64(s[k].count, k + 1);
	}
}

/* A 17th waker takes the slot of the least counted (the first of
 * equals), with its count plus one; a heavy waker stays. */
static void test_past_slots(void)
{
	struct sketch_slot s[WAKER_SLOTS] = { { 0, 0 } };
	uint32_t k;

	for (k = 0; k < WAKER_SLOTS; k++)
		sketch_note(s, NULL, WAKER_SLOTS, k, 1);
	sketch_note(s, NULL, WAKER_SLOTS, 5, 1);  /* 5 now counts 2 */
	sketch_note(s, NULL, WAKER_SLOTS, 99, 1); /* takes slot 0 */
	CHECK_EQ_I64(s[0].key, 99);
	CHECK_EQ_I64(s[0].count, 2);
	CHECK_EQ_I64(s[5].key, 5);
	CHECK_EQ_I64(s[5].count, 2);
	sketch_note(s, NULL, WAKER_SLOTS, 100, 1); /* takes slot 1 */
	CHECK_EQ_I64(s[1].key, 100);
	CHECK_EQ_I64(s[1].count, 2);
}

/* Weighed slots: the lightest by weight gives way, not by count. */
static void test_weights(void)
{
	struct sketch_slot s[BLOCKED_SLOTS] = { { 0, 0 } };
	uint64_t w[BLOCKED_SLOTS] = { 0 };
	uint32_t k;

	for (k = 0; k < BLOCKED_SLOTS; k++)
		sketch_note(s, w, BLOCKED_SLOTS, 10 + k, 100 * (k + 1));
	sketch_note(s, w, BLOCKED_SLOTS, 10, 1);  /* 10: count 2, 101 ns */
	sketch_note(s, w, BLOCKED_SLOTS, 11, 50); /* 11: count 2, 250 ns */
	CHECK_EQ_I64(s[0].count, 2);
	CHECK_EQ_I64(w[0], 101);
	CHECK_EQ_I64(w[1], 250);
	sketch_note(s, w, BLOCKED_SLOTS, 77, 7);  /* the lightest: slot 0 */
	CHECK_EQ_I64(s[0].key, 77);
	CHECK_EQ_I64(s[0].count, 3);
	CHECK_EQ_I64(w[0], 108);
	CHECK_EQ_I64(s[1].key, 11);
}

/* sketch16_note and its scalar slot choice against sketch_note: random
 * streams over 4 to 200 distinct keys (key 0 among them: a free slot's
 * key is 0 too), skewed or flat, slot for slot after every note. */
static void test_sketch16_same(void)
{
	uint32_t round, i, diff = 0, hits = 0;

	for (round = 0; round < 200; round++) {
		struct sketch_slot ref[SKETCH16_SLOTS] = { { 0, 0 } }, got[SKETCH16_SLOTS];
		struct sketch16 s = { { 0 }, { 0 } };
		uint32_t keys = 4 + round % 197, k;

		for (i = 0; i < 3000; i++) {
			k = (uint32_t)unit_rand() % keys;
			if (round % 2)
				k = k % (1 + (uint32_t)unit_rand() % keys); /* skewed */
			diff += sketch16_slot(&s, k) != sketch16_slot_scalar(&s, k);
			sketch16_note(&s, k);
			sketch_note(ref, NULL, SKETCH16_SLOTS, k, 1);
			sketch16_slots(&s, got);
			for (k = 0; k < SKETCH16_SLOTS; k++)
				diff += got[k].key != ref[k].key ||
					got[k].count != ref[k].count;
		}
		hits += ref[SKETCH16_SLOTS - 1].count > 0;
	}
	CHECK_EQ_I64(diff, 0);
	CHECK(hits > 100); /* most streams filled every slot */
}

/* Counts past 2^31 compare as unsigned: the least still gives way. */
static void test_sketch16_big_counts(void)
{
	struct sketch16 s;
	uint32_t k;

	for (k = 0; k < SKETCH16_SLOTS; k++) {
		s.key[k] = 100 + k;
		s.count[k] = 0x80000000u + 10 - k;
	}
	s.count[3] = 5;
	CHECK_EQ_I64(sketch16_slot(&s, 7), 3);
	CHECK_EQ_I64(sketch16_slot(&s, 109), 9);
	sketch16_note(&s, 7);
	CHECK_EQ_I64(s.key[3], 7);
	CHECK_EQ_I64(s.count[3], 6);
}

int main(void)
{
	RUN(test_exact_up_to_slots);
	RUN(test_past_slots);
	RUN(test_weights);
	RUN(test_sketch16_same);
	RUN(test_sketch16_big_counts);
	return unit_finish();
}
