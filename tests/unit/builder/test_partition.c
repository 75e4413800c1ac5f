// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_partition - snapshot_partition(), the binary search that descends groups, segments
 * and records, against a linear scan.
 *
 * Random mirrors large enough that a table spans several groups of segments, changed at
 * random between snapshots (chunks split and emptied: groups of uneven sizes). For random
 * ranges inside a table and keys taken from its records (and past both ends), the first
 * record whose key is not before the key (or is after it) must be the one a scan finds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/builder.h"
#include "rtsnap/compose.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/order.h"
#include "rtsnap/snapshot.h"

#include "instance.h"
#include "randmirror.h"

static int before(const struct route *r, const void *arg)
{
	struct order_key m;

	order_key_of(r, &m);
	return order_key_cmp(&m, arg) < 0;
}

static int not_after(const struct route *r, const void *arg)
{
	struct order_key m;

	order_key_of(r, &m);
	return order_key_cmp(&m, arg) <= 0;
}

/* The answer by a scan of [lo, hi). */
static size_t scan(const struct snapshot *s, size_t lo, size_t hi,
		   int (*pred)(const struct route *, const void *), const struct order_key *k)
{
	size_t i = lo;

	while (i < hi && pred(snapshot_route(s, i), k))
		i++;
	return i;
}

static void check_range(const struct snapshot *s, size_t lo, size_t hi, const struct order_key *k)
{
	size_t want, got;

	want = scan(s, lo, hi, before, k);
	got = snapshot_partition(s, lo, hi, before, k);
	if (got != want)
		fail_msg("[%zu, %zu) before: %zu, a scan %zu", lo, hi, got, want);
	want = scan(s, lo, hi, not_after, k);
	got = snapshot_partition(s, lo, hi, not_after, k);
	if (got != want)
		fail_msg("[%zu, %zu) not after: %zu, a scan %zu", lo, hi, got, want);
}

static void test_random(void **state)
{
	size_t checks = 0, multi = 0;

	(void)state;
	for (int round = 0; round < 6; round++) {
		struct mirror *m = random_mirror(20000 + rnd(30000));
		struct snapshot *s = NULL;

		for (unsigned int i = 0; i < 2000; i++)
			random_change(m);
		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
		for (size_t t = 0; t < s->ntables; t++) {
			const struct snapshot_table *tb = &s->tables[t];
			struct order_key k, lowest = { 0 }, highest;

			multi += tb->ng > 1;
			memset(&highest, 0xff, sizeof(highest));
			check_range(s, tb->first, tb->first + tb->count, &lowest);
			check_range(s, tb->first, tb->first + tb->count, &highest);
			for (int i = 0; i < 300; i++) {
				size_t lo = tb->first + rnd(tb->count),
				       hi = tb->first + rnd(tb->count + 1);
				size_t x = tb->first + rnd(tb->count);

				if (lo > hi) {
					size_t t2 = lo;

					lo = hi;
					hi = t2;
				}
				order_key_of(snapshot_route(s, x), &k);
				check_range(s, tb->first, tb->first + tb->count, &k);
				check_range(s, lo, hi, &k);
				check_range(s, lo, lo, &k);
				checks += 3;
			}
		}
		snapshot_free(s);
		mirror_free(m);
	}
	/* the search crossed groups, not only segments */
	assert_true(multi > 0);
	printf("# %zu ranges checked, %zu tables of several groups\n", checks, multi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	log_set_level(LOG_LVL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
