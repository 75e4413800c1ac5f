// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_index - the per-snapshot indexes (index.c) against brute force.
 *
 * Snapshots of random, heavily nested routes (two tables, source-specific routes, equal
 * keys, expired and dead routes) are built in the kernel's dump order (the order rule of
 * index.h, which the integration tests check against the real kernel), and once more in a
 * shuffled order to exercise the fallback permutation. Every index answer is compared with
 * a linear scan that implements the same rule directly: longest-prefix match, covers,
 * inside, and paging cursors, including cursors resumed in a later snapshot from which
 * routes were deleted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/index.h"
#include "rtsnap/snapshot.h"

#define NOW 1000000

static uint64_t s_rng = 0x1234567887654321ull;

static uint32_t rnd(void)
{
	s_rng ^= s_rng << 13;
	s_rng ^= s_rng >> 7;
	s_rng ^= s_rng << 17;
	return (uint32_t)(s_rng >> 16);
}

static void mask(uint8_t a[16], unsigned int len)
{
	for (unsigned int i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		a[i] &= len > 8 * i ? (uint8_t)(0xff << (8 - (len - 8 * i))) : 0;
	}
}

static int contains(const uint8_t *p, unsigned int plen, const uint8_t *a)
{
	uint8_t m[16], q[16];

	memcpy(m, a, 16);
	memcpy(q, p, 16);
	mask(m, plen);
	mask(q, plen);
	return memcmp(m, q, 16) == 0;
}

/* A random address in a small space so that prefixes nest and collide. */
static void rand_addr(uint8_t a[16])
{
	memset(a, 0, 16);
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	a[4] = (uint8_t)(rnd() % 3);
	a[5] = (uint8_t)(rnd() % 2 ? 0 : 0x80);
	a[6] = (uint8_t)(rnd() % 4);
	a[8] = (uint8_t)(rnd() % 2 ? 0 : 0x80);
	a[15] = (uint8_t)(rnd() % 3);
}

static const unsigned int s_lens[] = { 0, 16, 32, 40, 41, 48, 56, 64, 65, 96, 127, 128 };

/* ---- the kernel order rule, written out directly (index.h) ---- */

static void span(const uint8_t a[16], unsigned int len, int ones, uint8_t out[16])
{
	memcpy(out, a, 16);
	mask(out, len);
	if (ones)
		for (unsigned int b = len; b < 128; b++)
			out[b / 8] |= (uint8_t)(0x80 >> (b % 8));
}

static int cmp_kernel(const struct route *x, const struct route *y)
{
	uint8_t ax[16], ay[16];
	int c;

	span(x->dst, x->dst_len, !x->src_len, ax);
	span(y->dst, y->dst_len, !y->src_len, ay);
	c = memcmp(ax, ay, 16);
	if (c)
		return c;
	if (!x->src_len != !y->src_len)
		return x->src_len ? -1 : 1; /* source routes (pre-order) first */
	if (x->dst_len != y->dst_len)
		return x->src_len ? (x->dst_len < y->dst_len ? -1 : 1)
				  : (x->dst_len > y->dst_len ? -1 : 1);
	if (x->src_len) {
		span(x->src, x->src_len, 1, ax);
		span(y->src, y->src_len, 1, ay);
		c = memcmp(ax, ay, 16);
		if (c)
			return c;
		if (x->src_len != y->src_len)
			return x->src_len > y->src_len ? -1 : 1;
	}
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return 0;
}

struct gen {
	struct route *r;
	size_t n;
	uint32_t seq; /* insertion order for equal keys */
};

static int cmp_gen(const void *a, const void *b)
{
	const struct route *x = a, *y = b;
	int c;

	if (x->table != y->table) /* 100 before 254: bucket order */
		return x->table < y->table ? -1 : 1;
	c = cmp_kernel(x, y);
	if (c)
		return c;
	return memcmp(x->nh.gw, y->nh.gw, 16);
}

static void gen_routes(struct gen *g, size_t n)
{
	g->r = calloc(n, sizeof(*g->r));
	assert_non_null(g->r);
	g->n = n;
	for (size_t i = 0; i < n; i++) {
		struct route *r = &g->r[i];

		rand_addr(r->dst);
		r->dst_len = (uint8_t)s_lens[rnd() % (sizeof(s_lens) / sizeof(s_lens[0]))];
		mask(r->dst, r->dst_len);
		if (rnd() % 6 == 0) {
			rand_addr(r->src);
			r->src[4] = 0xaa;
			r->src_len = (uint8_t)(40 + 8 * (rnd() % 4));
			if (rnd() % 8 == 0)
				r->src_len = 128;
			mask(r->src, r->src_len);
		}
		r->table = rnd() % 3 ? RT_TABLE_MAIN : 100;
		r->metric = (uint32_t[]){ 1, 100, 1024, 1024 }[rnd() % 4];
		r->type = RTN_UNICAST;
		r->protocol = RTPROT_STATIC;
		r->pref = ROUTE_PREF_NONE;
		r->nh_count = 1;
		r->nh.ifindex = 2;
		r->nh.weight = 1;
		r->nh.has_gw = 1;
		r->nh.gw[0] = 0xfe;
		r->nh.gw[1] = 0x80;
		r->nh.gw[14] = (uint8_t)(i >> 8); /* tells every route apart */
		r->nh.gw[15] = (uint8_t)i;
		if (rnd() % 17 == 0)
			r->expires_ms = NOW - 500; /* expired, still listed */
		else if (rnd() % 13 == 0)
			r->expires_ms = NOW + 60000;
		if (rnd() % 19 == 0)
			r->nh.flags = RTNH_F_DEAD;
	}
	qsort(g->r, n, sizeof(*g->r), cmp_gen);
}

static struct snapshot *build(const struct route *r, size_t n)
{
	struct route_link l = { .ifindex = 2, .name = "eth0" };
	struct snapshot *s = NULL;

	assert_int_equal(snapshot_new(NULL, &s), 0);
	s->taken_mono_ms = NOW;
	assert_int_equal(snapshot_add_link(s, &l), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(snapshot_add_route(s, &r[i], NULL, 0, NULL), 0);
	assert_int_equal(snapshot_finish(s), 0);
	assert_non_null(s->views.lookup);
	return s;
}

/* ---- brute force ---- */

static int usable(const struct route *r)
{
	return !(r->expires_ms && r->expires_ms <= NOW) && !(r->nh.flags & RTNH_F_DEAD);
}

static long ref_lookup(const struct snapshot *s, uint32_t table, const uint8_t *a,
		       const uint8_t *src)
{
	for (int len = 128; len >= 0; len--) {
		long best = -1;
		int have_src = 0, matched = 0;

		for (size_t i = 0; i < s->nroutes; i++) {
			const struct route *r = snapshot_route(s, i);

			if (r->placeholder || r->table != table || r->dst_len != len ||
			    !contains(r->dst, (unsigned int)len, a) || !r->src_len)
				continue;
			have_src = 1;
			if (!contains(r->src, r->src_len, src))
				continue;
			matched = 1;
			if (!usable(r))
				continue;
			if (best < 0 || r->src_len > (*snapshot_route(s, best)).src_len ||
			    (r->src_len == (*snapshot_route(s, best)).src_len &&
			     r->metric < (*snapshot_route(s, best)).metric))
				best = (long)i;
		}
		if (best >= 0)
			return best;
		if (have_src && !matched)
			continue;
		for (size_t i = 0; i < s->nroutes; i++) {
			const struct route *r = snapshot_route(s, i);

			if (r->placeholder || r->table != table || r->dst_len != len ||
			    r->src_len || !contains(r->dst, (unsigned int)len, a) || !usable(r))
				continue;
			if (best < 0 || r->metric < (*snapshot_route(s, best)).metric)
				best = (long)i;
		}
		if (best >= 0)
			return best;
	}
	return -ENOENT;
}

static void check_lookups(const struct snapshot *s, unsigned int n)
{
	static const uint8_t any[16];

	for (unsigned int k = 0; k < n; k++) {
		uint8_t a[16], src[16];
		uint32_t table = k % 3 ? RT_TABLE_MAIN : 100;
		const uint8_t *sp = any;

		rand_addr(a);
		a[9] = (uint8_t)rnd();
		a[15] = (uint8_t)rnd() % 4;
		if (k % 2) {
			rand_addr(src);
			src[4] = 0xaa;
			sp = src;
		}
		assert_int_equal(index_lookup(s, table, a, sp, NOW), ref_lookup(s, table, a, sp));
	}
}

static void check_ranges(const struct snapshot *s, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		uint8_t a[16];
		unsigned int len = s_lens[rnd() % (sizeof(s_lens) / sizeof(s_lens[0]))];
		int tpos = index_table_pos(s, k % 2 ? RT_TABLE_MAIN : 100);
		const struct snapshot_table *t;
		uint32_t *v = NULL, lo, hi;
		long cnt;
		size_t m = 0;

		assert_true(tpos >= 0);
		t = &s->tables[tpos];
		rand_addr(a);
		if (k % 3 == 0)
			a[9] = (uint8_t)rnd();
		mask(a, len);

		/* covers */
		cnt = index_covers(s, tpos, a, (uint8_t)len, &v);
		assert_true(cnt >= 0);
		for (size_t i = t->first; i < (size_t)t->first + t->count; i++) {
			const struct route *r = snapshot_route(s, i);

			if (r->placeholder || r->dst_len > len || !contains(r->dst, r->dst_len, a))
				continue;
			assert_true(m < (size_t)cnt);
			assert_int_equal(v[m], i);
			m++;
		}
		assert_int_equal(m, cnt);
		free(v);

		/* inside */
		if (index_inside_range(s, tpos, a, (uint8_t)len, &lo, &hi)) {
			cnt = 0;
			for (uint32_t i = lo; i < hi; i++)
				if (!(*snapshot_route(s, i)).placeholder)
					cnt++;
			v = malloc(((size_t)cnt + 1) * sizeof(*v));
			cnt = 0;
			for (uint32_t i = lo; i < hi; i++)
				if (!(*snapshot_route(s, i)).placeholder)
					v[cnt++] = i;
		} else {
			cnt = index_inside_collect(s, tpos, a, (uint8_t)len, &v);
			assert_true(cnt >= 0);
			/* drop placeholders */
			m = 0;
			for (long i = 0; i < cnt; i++)
				if (!(*snapshot_route(s, v[i])).placeholder)
					v[m++] = v[i];
			cnt = (long)m;
		}
		m = 0;
		for (size_t i = t->first; i < (size_t)t->first + t->count; i++) {
			const struct route *r = snapshot_route(s, i);

			if (r->placeholder || r->dst_len < len || !contains(a, len, r->dst))
				continue;
			assert_true(m < (size_t)cnt);
			assert_int_equal(v[m], i);
			m++;
		}
		assert_int_equal(m, cnt);
		free(v);
	}
}

static void test_ordered(void **state)
{
	struct gen g;
	struct snapshot *s;

	(void)state;
	gen_routes(&g, 3000);
	s = build(g.r, g.n);
	check_lookups(s, 4000);
	check_ranges(s, 600);
	assert_true(index_bytes(s->views.lookup) > 0);
	/* no permutation needed: at most 32 bytes of hash per route plus fixed parts */
	assert_true(index_bytes(s->views.lookup) < 32 * s->nroutes + 4096 + 4 * s->nexpiring);
	snapshot_free(s);
	free(g.r);
}

/* Records not in key order: the fallback permutation gives the same answers. */
static void test_shuffled(void **state)
{
	struct gen g;
	struct snapshot *s;

	(void)state;
	gen_routes(&g, 2000);
	for (size_t i = g.n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		struct route t = g.r[i];

		g.r[i] = g.r[j];
		g.r[j] = t;
	}
	/* keep tables contiguous (snapshot.c splits by runs of one table id) */
	{
		struct route *o = malloc(g.n * sizeof(*o));
		size_t m = 0;

		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < g.n; i++)
				if ((g.r[i].table == 100) == (pass == 0))
					o[m++] = g.r[i];
		free(g.r);
		g.r = o;
	}
	s = build(g.r, g.n);
	check_lookups(s, 3000);
	check_ranges(s, 400);
	snapshot_free(s);
	free(g.r);
}

static int equal_key_in(const struct snapshot *s, const struct route *r)
{
	for (size_t k = 0; k < s->nroutes; k++) {
		const struct route *x = snapshot_route(s, k);

		if (!x->placeholder && x->table == r->table && x->dst_len == r->dst_len &&
		    x->src_len == r->src_len && x->metric == r->metric &&
		    memcmp(x->dst, r->dst, 16) == 0 && memcmp(x->src, r->src, 16) == 0)
			return 1;
	}
	return 0;
}

/* Every cursor resumes right after its route; in a later snapshot with routes deleted, at
 * the first survivor after it. */
static void test_cursors(void **state)
{
	struct gen g;
	struct snapshot *a, *b;
	struct route *keep;
	uint8_t *alive;
	size_t nk = 0;

	(void)state;
	gen_routes(&g, 2500);
	a = build(g.r, g.n);
	keep = malloc(g.n * sizeof(*keep));
	alive = calloc(a->nroutes, 1);
	for (size_t i = 0; i < a->nroutes; i++) {
		struct index_cursor c;

		if ((*snapshot_route(a, i)).placeholder)
			continue;
		index_cursor_of(a, i, &c);
		assert_int_equal(index_cursor_resume(a, &c), i + 1);
		if (rnd() % 3) {
			alive[i] = 1;
			keep[nk] = (*snapshot_route(a, i));
			keep[nk].placeholder = 0;
			nk++;
		}
	}
	b = build(keep, nk);
	for (size_t i = 0; i < a->nroutes; i++) {
		struct index_cursor c;
		size_t want = b->nroutes, j;

		if ((*snapshot_route(a, i)).placeholder)
			continue;
		/* the first surviving route after i, located in b by its (unique) gateway */
		for (j = i + 1; j < a->nroutes; j++) {
			if (!alive[j])
				continue;
			for (size_t k = 0; k < b->nroutes; k++)
				if (!(*snapshot_route(b, k)).placeholder &&
				    (*snapshot_route(b, k)).table ==
					(*snapshot_route(a, j)).table &&
				    memcmp((*snapshot_route(b, k)).nh.gw,
					   (*snapshot_route(a, j)).nh.gw, 16) == 0) {
					want = k;
					break;
				}
			break;
		}
		/* a deleted route whose equal-key siblings (same dst, src, metric) survive: the
		 * cursor can only guess its place among them (documented) */
		if (!alive[i] && equal_key_in(b, snapshot_route(a, i)))
			continue;
		index_cursor_of(a, i, &c);
		{
			size_t got = index_cursor_resume(b, &c);

			/* placeholders between the cursor and the survivor are fine to land on */
			while (got < want && (*snapshot_route(b, got)).placeholder)
				got++;
			if (j == a->nroutes)
				while (got < b->nroutes && (*snapshot_route(b, got)).placeholder)
					got++;
			assert_int_equal(got, want);
		}
	}
	snapshot_free(a);
	snapshot_free(b);
	free(keep);
	free(alive);
	free(g.r);
}

/* Hand-made cases from the kernel: a node with a source subtree is entered only through
 * a matching source prefix (ip -6 route get skips its source-less routes otherwise). */
static void test_subtree_rule(void **state)
{
	struct route r[4] = { 0 };
	struct snapshot *s;
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5 };
	uint8_t src_in[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xaa, 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
	uint8_t src_out[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xcc, 0xcc };

	(void)state;
	for (int i = 0; i < 4; i++) {
		r[i].table = RT_TABLE_MAIN;
		r[i].metric = 1024;
		r[i].type = RTN_UNICAST;
		r[i].pref = ROUTE_PREF_NONE;
		r[i].nh_count = 1;
		r[i].nh.ifindex = 2;
		memcpy(r[i].dst, a, 6);
	}
	/* kernel order: 2001:db8:9::/64 from 2001:db8:aaaa::/48, then its source-less route,
	 * then 2001:db8::/32 */
	r[0].dst_len = 64;
	memcpy(r[0].src, src_in, 6);
	r[0].src_len = 48;
	r[1].dst_len = 64;
	r[1].metric = 1;
	r[2].dst_len = 32;
	memset(r[2].dst + 4, 0, 12);
	r[2].metric = 77;
	r[3].dst_len = 0;
	memset(r[3].dst, 0, 16);
	s = build(r, 4);
	assert_int_equal(index_lookup(s, RT_TABLE_MAIN, a, NULL, NOW), 2);
	assert_int_equal(index_lookup(s, RT_TABLE_MAIN, a, src_out, NOW), 2);
	assert_int_equal(index_lookup(s, RT_TABLE_MAIN, a, src_in, NOW), 0);
	assert_int_equal(index_lookup(s, 100, a, NULL, NOW), -ENOENT);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordered),
		cmocka_unit_test(test_shuffled),
		cmocka_unit_test(test_cursors),
		cmocka_unit_test(test_subtree_rule),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
