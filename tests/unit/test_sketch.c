/* Unit tests of the report's space-saving sketch (report/sketch.h): exact
 * counts up to the number of slots, for wakers (weighed by count) and for
 * blocked functions (weighed by off-CPU time), and what happens past it:
 * the lightest slot gives way and the new key inherits its figures. */
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

int main(void)
{
	RUN(test_exact_up_to_slots);
	RUN(test_past_slots);
	RUN(test_weights);
	return unit_finish();
}
