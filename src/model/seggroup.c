// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seggroup.c - immutable groups of segments (seggroup.h).
 *
 * A group is one block: the header, then the members' segment pointers, summaries and record
 * offsets. It is built on the collector thread, sealed, and from then on only read (its
 * reference count and `mark` aside); the last seggroup_put() frees the block and nothing
 * else (the group holds no reference on its segments).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/seggroup.h"

static long s_live; /* groups allocated and not freed (atomic) */

int seggroup_new(uint32_t table, uint32_t cap, struct seggroup **out)
{
	struct seggroup *g;
	size_t sz;

	if (!cap || cap > SEGGROUP_MAX)
		return -EINVAL;
	sz = sizeof(*g) + cap * (sizeof(*g->segs) + sizeof(*g->sums)) +
	     (cap + 1) * sizeof(*g->first);
	g = malloc(sz);
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	g->refs = 1;
	g->table = table;
	g->cap = cap;
	g->segs = (struct segment **)(g + 1);
	g->sums = (struct segment_sum *)(g->segs + cap);
	g->first = (uint32_t *)(g->sums + cap);
	__atomic_add_fetch(&s_live, 1, __ATOMIC_RELAXED);
	*out = g;
	return 0;
}

int seggroup_copy(const struct seggroup *g, uint32_t cap, struct seggroup **out)
{
	struct seggroup *c;
	int ret;

	if (cap < g->nsegs)
		cap = g->nsegs;
	ret = seggroup_new(g->table, cap, &c);
	if (ret)
		return ret;
	c->nsegs = g->nsegs;
	memcpy(c->segs, g->segs, g->nsegs * sizeof(*g->segs));
	memcpy(c->sums, g->sums, g->nsegs * sizeof(*g->sums));
	*out = c;
	return 0;
}

void seggroup_set(struct seggroup *g, uint32_t j, struct segment *seg,
		  const struct segment_sum *sum)
{
	g->segs[j] = seg;
	g->sums[j] = *sum;
	if (j >= g->nsegs)
		g->nsegs = j + 1;
}

void seggroup_truncate(struct seggroup *g, uint32_t n)
{
	if (n < g->nsegs)
		g->nsegs = n;
}

void seggroup_seal(struct seggroup *g)
{
	struct segment_sum *t = &g->sum;
	uint32_t n = 0;

	memset(t, 0, sizeof(*t));
	t->table = g->table;
	for (uint32_t j = 0; j < g->nsegs; j++) {
		const struct segment_sum *m = &g->sums[j];

		g->first[j] = n;
		n += m->n;
		t->nreal += m->nreal;
		t->lines += m->lines;
		t->nexp += m->nexp;
		t->nra += m->nra;
		t->proc_len += m->proc_len;
		t->bytes += m->bytes;
		for (int w = 0; w < 3; w++) {
			t->lens0[w] |= m->lens0[w];
			t->lens1[w] |= m->lens1[w];
		}
	}
	g->first[g->nsegs] = n;
	t->n = n;
}

void seggroup_get(struct seggroup *g)
{
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
}

void seggroup_put(struct seggroup *g)
{
	if (!g || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
#ifdef RTSNAP_POISON
	memset(g->segs, 0x6b, g->cap * sizeof(*g->segs));
#endif
	free(g);
	__atomic_sub_fetch(&s_live, 1, __ATOMIC_RELAXED);
}

uint32_t seggroup_member_of(const struct seggroup *g, uint32_t i)
{
	uint32_t lo = 0, hi = g->nsegs;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (g->first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

long seggroup_live_count(void)
{
	return __atomic_load_n(&s_live, __ATOMIC_RELAXED);
}
