// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_snapshot - snapshot construction, publication and lifetime.
 *
 * The stress case follows liburcu's tests/benchmark/test_urcu.c: reader threads take the
 * current snapshot and check that it is internally consistent while one writer publishes new
 * ones as fast as it can. Retired snapshots are poisoned before free in the sanitizer builds
 * (RTSNAP_POISON), so a reader that touches one sees 0x6b bytes and fails its check, and
 * ASan/TSan report the access. Bounded by count and by time.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

/* A snapshot for chain c (NULL: none) of n routes in one table whose metric is seed, with
 * the views rendered. */
static struct snapshot *make(struct snapshot_chain *c, uint32_t seed, unsigned int n)
{
	struct snapshot *s = NULL;
	struct route_link l = { .ifindex = 2, .name = "eth0" };

	assert_int_equal(snapshot_new(c, &s), 0);
	assert_int_equal(snapshot_add_link(s, &l), 0);
	for (unsigned int i = 0; i < n; i++) {
		struct route r = { 0 };

		r.dst[0] = 0x20;
		r.dst[1] = 0x01;
		r.dst[2] = (uint8_t)(i >> 8);
		r.dst[3] = (uint8_t)i;
		r.dst_len = 32;
		r.table = RT_TABLE_MAIN;
		r.metric = seed;
		r.type = RTN_UNICAST;
		r.protocol = RTPROT_STATIC;
		r.pref = ROUTE_PREF_NONE;
		r.nh_count = 1;
		r.nh.ifindex = 2;
		r.nh.weight = 1;
		assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	}
	assert_int_equal(snapshot_finish(s), 0);
	return s;
}

/* Consistent: every route carries the same metric, and the proc text shows it. */
static int consistent(const struct snapshot *s)
{
	uint32_t seed = (*snapshot_route(s, 0)).metric;
	char hex[9];

	for (size_t i = 0; i < s->nroutes; i++)
		if (!(*snapshot_route(s, i)).placeholder && (*snapshot_route(s, i)).metric != seed)
			return 0;
	snprintf(hex, sizeof(hex), "%08x", seed);
	/* the proc view, rendered from the records: every line shows the metric, the text has
	 * the length counted when the segments were built */
	{
		size_t len;
		char *text = render_proc_text(s, &len);
		int ok = text && len == s->proc_len && len >= 149 && text[len - 1] == '\n';

		for (char *l = text; ok && l && *l; l = strchr(l, '\n') + 1)
			ok = strncmp(l + 105, hex, 8) == 0 || strncmp(l + 105, "ffffffff", 8) == 0;
		free(text);
		if (!ok)
			return 0;
	}
	return 1;
}

static void test_build_and_views(void **state)
{
	struct snapshot *s = make(NULL, 7, 10);

	(void)state;
	/* 10 routes + the placeholder row of main (no default) + empty local's placeholder */
	assert_int_equal(s->ntables, 2);
	assert_int_equal(s->tables[0].id, RT_TABLE_MAIN);
	assert_int_equal(s->tables[0].routes, 10);
	assert_int_equal(s->tables[0].count, 11);
	assert_int_equal(s->tables[1].id, RT_TABLE_LOCAL);
	assert_int_equal(s->tables[1].count, 1);
	assert_true(consistent(s));
	snapshot_free(s);
}

static void test_lifetime(void **state)
{
	long base = snapshot_live_count();
	struct snapshot_chain *c = NULL;
	struct snapshot *a, *b, *held;

	(void)state;
	assert_int_equal(snapshot_chain_new(&c), 0);
	a = make(c, 1, 3);
	b = make(c, 2, 3);
	snapshot_publish(a);
	held = snapshot_acquire(c);
	assert_ptr_equal(held, a);
	snapshot_publish(b); /* a is retired, but we still hold it */
	assert_int_equal(snapshot_live_count(), base + 2);
	assert_true(consistent(held));
	assert_int_equal((*snapshot_route(held, 0)).metric, 1);
	snapshot_release(held); /* last reference: a is freed now */
	assert_int_equal(snapshot_live_count(), base + 1);
	held = snapshot_acquire(c);
	assert_ptr_equal(held, b);
	assert_int_equal(b->generation, 2);
	snapshot_release(held);
	snapshot_chain_free(c);
	assert_int_equal(snapshot_live_count(), base);
}

/* Two chains in one process: each has its own current snapshot, generations and accounting;
 * a reader of one never sees the other's snapshots, and each goes with its last snapshot. */
static void test_two_chains(void **state)
{
	long base = snapshot_live_count();
	struct snapshot_chain *c1 = NULL, *c2 = NULL;
	struct snapshot *a, *b, *held;

	(void)state;
	assert_int_equal(snapshot_chain_new(&c1), 0);
	assert_int_equal(snapshot_chain_new(&c2), 0);
	assert_null(snapshot_acquire(c1));
	snapshot_publish(make(c1, 1, 3));
	assert_null(snapshot_acquire(c2));
	snapshot_publish(make(c2, 2, 5));
	snapshot_publish(make(c2, 3, 5));
	a = snapshot_acquire(c1);
	b = snapshot_acquire(c2);
	assert_int_equal(a->generation, 1);
	assert_int_equal(b->generation, 2);
	assert_int_equal(snapshot_route(a, 0)->metric, 1);
	assert_int_equal(snapshot_route(b, 0)->metric, 3);
	assert_int_equal(snapshot_current_bytes(c1), a->bytes);
	assert_int_equal(snapshot_current_bytes(c2), b->bytes);
	held = a;
	snapshot_publish(make(c1, 4, 3)); /* a is replaced while held: counted on c1 only */
	assert_int_equal(snapshot_retired_count(c1), 1);
	assert_int_equal(snapshot_retired_count(c2), 0);
	snapshot_release(b);
	snapshot_chain_free(c1); /* held keeps c1's memory alive */
	assert_int_equal(snapshot_route(held, 0)->metric, 1);
	snapshot_release(held);
	snapshot_chain_free(c2);
	assert_int_equal(snapshot_live_count(), base);
}

#define READERS 4
#define PUBLISHES 3000
#define MAX_SECONDS 10

static int s_stop;
static long s_reads[READERS], s_bad[READERS];
static struct snapshot_chain *s_chain;

static void *reader(void *arg)
{
	long id = (long)arg;

	while (!__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE)) {
		struct snapshot *s = snapshot_acquire(s_chain);

		if (!s)
			continue;
		if (!consistent(s))
			s_bad[id]++;
		s_reads[id]++;
		snapshot_release(s);
	}
	return NULL;
}

static void test_stress_publish_while_reading(void **state)
{
	pthread_t th[READERS];
	long base = snapshot_live_count(), reads = 0, bad = 0;
	time_t t0 = time(NULL);
	int published = 0;

	(void)state;
	assert_int_equal(snapshot_chain_new(&s_chain), 0);
	snapshot_publish(make(s_chain, 1000, 50));
	for (long i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, (void *)i), 0);
	for (uint32_t k = 1; k <= PUBLISHES && time(NULL) - t0 < MAX_SECONDS; k++, published++)
		snapshot_publish(make(s_chain, 1000 + k, 50 + (k % 7)));
	__atomic_store_n(&s_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		reads += s_reads[i];
		bad += s_bad[i];
	}
	snapshot_chain_free(s_chain);
	printf("# %d publications, %ld reads, %ld inconsistent\n", published, reads, bad);
	assert_int_equal(bad, 0);
	assert_true(reads > 0);
	assert_true(published > 100);
	assert_int_equal(snapshot_live_count(), base); /* every retired snapshot was freed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_and_views),
		cmocka_unit_test(test_lifetime),
		cmocka_unit_test(test_two_chains),
		cmocka_unit_test(test_stress_publish_while_reading),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
