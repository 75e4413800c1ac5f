// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_diff - diff_snapshots() (the segment walk) against a brute-force diff.
 *
 * Random mirrors: thousands of routes over four tables, with equal-key groups (one prefix
 * and metric over several devices), source-specific routes, multipath groups, reject
 * types and deadlines. A snapshot is taken, random kernel changes are applied with the
 * mirror's own semantics (add, delete, replace, append a hop, a deadline moved by less or
 * more than a second, a link renamed), and a second snapshot is taken. The brute force
 * knows nothing of segments: it sorts every route object of both snapshots (table, object
 * without "expires", deadline) and pairs them. Both must find the same routes removed and
 * added. The walk's work must stay proportional to the segments that changed.
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
#include "rtsnap/diff.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/snapshot.h"

#include "instance.h"
#include "randmirror.h"

/* ---- brute force ---- */

struct bf {
	uint32_t table;
	const char *obj; /* without "expires": [obj, obj + head) + [obj + tail0, obj + len) */
	size_t head, tail0, len;
	int64_t deadline;
	int capped, matched;
};

static int cmp_text(const struct bf *x, const struct bf *y)
{
	size_t xl = x->head + (x->len - x->tail0), yl = y->head + (y->len - y->tail0);
	char *a = malloc(xl + 1), *b = malloc(yl + 1);
	int c;

	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, x->obj, x->head);
	memcpy(a + x->head, x->obj + x->tail0, x->len - x->tail0);
	memcpy(b, y->obj, y->head);
	memcpy(b + y->head, y->obj + y->tail0, y->len - y->tail0);
	c = xl == yl ? memcmp(a, b, xl) : (xl < yl ? memcmp(a, b, xl) ?: -1 : memcmp(a, b, yl) ?: 1);
	free(a);
	free(b);
	return c;
}

static int cmp_bf(const void *pa, const void *pb)
{
	const struct bf *x = pa, *y = pb;
	int c;

	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	c = cmp_text(x, y);
	if (c)
		return c;
	return x->deadline < y->deadline ? -1 : x->deadline > y->deadline;
}

static struct bf *objects(const struct snapshot *s, size_t *n)
{
	struct bf *v = malloc((s->nroutes + 1) * sizeof(*v));
	size_t k = 0;

	assert_non_null(v);
	for (size_t i = 0; i < s->nroutes; i++) {
		uint32_t pos;
		const struct segment *g = snapshot_segment_of(s, i, &pos);
		const struct route *r = &g->routes[pos];
		size_t off, elen;

		if (r->placeholder)
			continue;
		v[k].table = r->table;
		v[k].len = diff_object(g, pos, &v[k].obj);
		diff_expires_span(v[k].obj, v[k].len, &off, &elen);
		v[k].head = elen ? off : v[k].len;
		v[k].tail0 = elen ? off + elen : v[k].len;
		v[k].deadline = r->expires_ms;
		v[k].capped = r->expires_capped;
		v[k].matched = 0;
		k++;
	}
	*n = k;
	return v;
}

/* Pair the routes of a and b that are the same (same text, deadlines within a second); what
 * is left is removed (a) and added (b). */
static void brute(const struct snapshot *a, const struct snapshot *b, struct bf **ra, size_t *nra,
		  struct bf **rb, size_t *nrb)
{
	size_t na, nb, i = 0, j = 0, x = 0, y = 0;
	struct bf *va = objects(a, &na), *vb = objects(b, &nb);

	qsort(va, na, sizeof(*va), cmp_bf);
	qsort(vb, nb, sizeof(*vb), cmp_bf);
	while (i < na && j < nb) {
		int c = va[i].table != vb[j].table ? (va[i].table < vb[j].table ? -1 : 1)
						   : cmp_text(&va[i], &vb[j]);
		int64_t dx = va[i].deadline - vb[j].deadline;

		if (c == 0 && (!va[i].deadline) == (!vb[j].deadline) &&
		    (va[i].capped || (dx <= 1000 && dx >= -1000))) {
			va[i++].matched = 1;
			vb[j++].matched = 1;
		} else if (c < 0 || (c == 0 && va[i].deadline < vb[j].deadline)) {
			i++;
		} else {
			j++;
		}
	}
	for (i = 0; i < na; i++)
		if (!va[i].matched)
			va[x++] = va[i];
	for (j = 0; j < nb; j++)
		if (!vb[j].matched)
			vb[y++] = vb[j];
	*ra = va;
	*nra = x;
	*rb = vb;
	*nrb = y;
}

/* The walk's result as the brute force's records, sorted the same way. */
static struct bf *refs_bf(const struct diff_ref *v, size_t n)
{
	struct bf *o = malloc((n + 1) * sizeof(*o));

	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		const struct route *r = &v[i].g->routes[v[i].pos];
		size_t off, elen;

		o[i].table = r->table;
		o[i].len = diff_object(v[i].g, v[i].pos, &o[i].obj);
		diff_expires_span(o[i].obj, o[i].len, &off, &elen);
		o[i].head = elen ? off : o[i].len;
		o[i].tail0 = elen ? off + elen : o[i].len;
		o[i].deadline = r->expires_ms;
		o[i].capped = r->expires_capped;
	}
	qsort(o, n, sizeof(*o), cmp_bf);
	return o;
}

/* Same routes on both sides (deadlines may pair differently: compare the texts). */
static void same_sets(const struct bf *x, size_t nx, const struct bf *y, size_t ny,
		      const char *what)
{
	if (nx != ny)
		fail_msg("%s: walk %zu, brute force %zu", what, nx, ny);
	for (size_t i = 0; i < nx; i++)
		if (x[i].table != y[i].table || cmp_text(&x[i], &y[i]))
			fail_msg("%s: route %zu differs: %.*s / %.*s", what, i, (int)x[i].len,
				 x[i].obj, (int)y[i].len, y[i].obj);
}

/* The walk and the brute force agree on a -> b; returns the walk's routes. */
static size_t check(const struct snapshot *a, const struct snapshot *b, struct diff *d)
{
	struct bf *ra, *rb, *wa, *wb;
	size_t nra, nrb;

	memset(d, 0, sizeof(*d));
	assert_int_equal(diff_snapshots(a, b, SIZE_MAX, d), 0);
	brute(a, b, &ra, &nra, &rb, &nrb);
	wa = refs_bf(d->removed, d->nremoved);
	wb = refs_bf(d->added, d->nadded);
	same_sets(wa, d->nremoved, ra, nra, "removed");
	same_sets(wb, d->nadded, rb, nrb, "added");
	free(ra);
	free(rb);
	free(wa);
	free(wb);
	return d->nremoved + d->nadded;
}

/* Segments of b not in a, plus segments of a not in b: what the walk may have to read. */
static size_t unshared(const struct snapshot *a, const struct snapshot *b)
{
	size_t n = 0;

	for (size_t k = 0; k < b->nsegs; k++) {
		int in = 0;

		for (size_t j = 0; j < a->nsegs && !in; j++)
			in = snapshot_seg(a, j, NULL) == snapshot_seg(b, k, NULL);
		n += !in;
	}
	for (size_t k = 0; k < a->nsegs; k++) {
		int in = 0;

		for (size_t j = 0; j < b->nsegs && !in; j++)
			in = snapshot_seg(b, j, NULL) == snapshot_seg(a, k, NULL);
		n += !in;
	}
	return n;
}

/* ---- tests ---- */

static void test_random_mirrors(void **state)
{
	(void)state;
	for (int round = 0; round < 40; round++) {
		struct mirror *m = random_mirror(500 + rnd(4000));
		struct snapshot *a = NULL, *b = NULL;
		unsigned int changes = round % 4 == 0 ? 1 : 1 + rnd(round % 4 == 1 ? 400 : 30);
		struct diff d;
		size_t found, work;

		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &a), 0);
		for (unsigned int i = 0; i < changes; i++)
			random_change(m);
		if (round % 10 == 9) { /* a rename: every route on eth3 prints differently */
			struct route_link l = { .ifindex = 3, .flags = 0x11043 };

			snprintf(l.name, sizeof(l.name), "renamed%d", round);
			assert_true(mirror_set_link(m, &l) >= 0);
		}
		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &b), 0);
		found = check(a, b, &d);
		if (getenv("TEST_DIFF_VERBOSE"))
			printf("# round %d: %u changes, %zu routes, %zu removed %zu added, %zu "
			       "compared, %zu segments skipped, %zu unshared\n",
			       round, changes, b->nroutes, d.nremoved, d.nadded, d.visited,
			       d.skipped, unshared(a, b));
		/* every record of a segment that differs, read at most twice (a key's records
		 * can lead into a shared segment), plus one step per segment */
		work = 2 * SEGMENT_MAX * unshared(a, b) + a->nsegs + b->nsegs + 4 * found;
		if (d.visited > work)
			fail_msg("round %d: %zu records compared for %zu unshared segments", round,
				 d.visited, unshared(a, b));
		diff_free(&d);
		/* the other way round is the same diff, swapped */
		found = check(b, a, &d);
		diff_free(&d);
		/* nothing changed: nothing found, nothing read */
		assert_int_equal(check(b, b, &d), 0);
		assert_int_equal(d.visited, 0);
		diff_free(&d);
		snapshot_free(a);
		snapshot_free(b);
		mirror_free(m);
	}
}

/* One change among 50 000 routes reads one or two segments, not the table. */
static void test_work_is_the_change(void **state)
{
	struct mirror *m = random_mirror(50000);
	struct snapshot *a = NULL, *b = NULL;
	struct spec sp;
	struct diff d;

	(void)state;
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &a), 0);
	random_spec(&sp);
	sp.expires_ms = 0;
	sp.dst[4] = 0xee; /* a prefix nothing else has: one route added, no group joined */
	to_pr(&sp);
	apply_new(m, NLM_F_CREATE | NLM_F_EXCL);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &b), 0);
	assert_int_equal(check(a, b, &d), 1);
	assert_int_equal(d.nadded, 1);
	assert_true(d.visited <= 3 * SEGMENT_MAX);
	assert_true(d.skipped + 4 >= b->nsegs - b->ntables);
	diff_free(&d);
	/* nothing but a route's deadline re-read within a second, in a rebuilt segment */
	snapshot_free(a);
	a = b;
	b = NULL;
	for (size_t i = 0; i < s_nspecs; i++) {
		if (!s_specs[i].expires_ms)
			continue;
		sp = s_specs[i];
		sp.expires_ms += 400;
		to_pr(&sp);
		apply_new(m, NLM_F_CREATE | NLM_F_REPLACE);
		break;
	}
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &b), 0);
	assert_true(b->segs_built >= 1);
	assert_int_equal(check(a, b, &d), 0);
	diff_free(&d);
	snapshot_free(a);
	snapshot_free(b);
	mirror_free(m);
}

/* Snapshots that share nothing (records added one by one) and tables that come and go. */
static void test_unshared_snapshots(void **state)
{
	struct snapshot *a = NULL, *b = NULL;
	struct route_link l = { .ifindex = 2, .flags = 0x11043, .name = "eth2" };
	struct diff d;

	(void)state;
	for (int round = 0; round < 10; round++) {
		assert_int_equal(snapshot_new(NULL, &a), 0);
		assert_int_equal(snapshot_new(NULL, &b), 0);
		assert_int_equal(snapshot_add_link(a, &l), 0);
		assert_int_equal(snapshot_add_link(b, &l), 0);
		/* as a dump lists them: grouped by table, in the kernel's table order (records
		 * within a table are sorted by finish) */
		for (int t = 0; t < 4; t++) {
			static const uint32_t order[] = { 100, 70000, 1000, RT_TABLE_MAIN };

			for (int i = 0; i < 800; i++) {
				struct spec sp;

				random_spec(&sp);
				sp.ifindex = 2;
				sp.table = order[t];
				to_pr(&sp);
				if (rnd(3))
					assert_int_equal(
					    snapshot_add_route(a, &s_pr.r, NULL, 0, NULL), 0);
				if (rnd(3) && (t != 1 || round % 3))
					assert_int_equal(
					    snapshot_add_route(b, &s_pr.r, NULL, 0, NULL), 0);
			}
		}
		assert_int_equal(snapshot_finish(a), 0);
		assert_int_equal(snapshot_finish(b), 0);
		check(a, b, &d);
		diff_free(&d);
		memset(&d, 0, sizeof(d)); /* against nothing: every route removed */
		assert_int_equal(diff_snapshots(a, NULL, SIZE_MAX, &d), 0);
		assert_int_equal(d.nadded, 0);
		{
			size_t real = 0;

			for (size_t t = 0; t < a->ntables; t++)
				real += a->tables[t].routes;
			assert_int_equal(d.nremoved, real);
		}
		diff_free(&d);
		snapshot_free(a);
		snapshot_free(b);
	}
}

/* The bound on the size of a diff. */
static void test_max(void **state)
{
	struct mirror *m = random_mirror(1000);
	struct snapshot *a = NULL, *b = NULL;
	struct diff d = { 0 };

	(void)state;
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &a), 0);
	for (int i = 0; i < 200; i++)
		random_change(m);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &b), 0);
	assert_int_equal(diff_snapshots(a, b, 5, &d), -E2BIG);
	assert_int_equal(d.nremoved + d.nadded, 5);
	diff_free(&d);
	snapshot_free(a);
	snapshot_free(b);
	mirror_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_mirrors),
		cmocka_unit_test(test_work_is_the_change),
		cmocka_unit_test(test_unshared_snapshots),
		cmocka_unit_test(test_max),
	};

	log_set_level(LOG_LVL_WARN);
	s_now = snapshot_now_ms();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
