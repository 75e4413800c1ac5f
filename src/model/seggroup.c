// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seggroup.c - immutable groups of segments (seggroup.h).
 *
 * A group is two blocks: the header, and the members' segment pointers, summaries and record
 * offsets. It is built on the collector thread, sealed, and from then on only read (its
 * reference count, `since` and `holder` aside); the last seggroup_put() frees both and nothing
 * else (the group holds no reference on its segments).
 *
 * Headers are packed in slabs of their own. Readers walking a snapshot read the headers of
 * the groups they pass (with each header at the head of its own 13 KiB block, every one was
 * a TLB walk and a miss: when composing read them all, that was 30 % of the collector's CPU
 * at 1 000 000 routes and 20 changes/s). Packed, a few hundred headers fit in a few pages.
 * The sanitizer builds allocate each header by itself, so that a use after free is caught.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/seggroup.h"

static long s_live; /* groups allocated and not freed (atomic) */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HDR_SLABS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HDR_SLABS 0
#endif
#endif
#ifndef HDR_SLABS
#define HDR_SLABS 1
#endif

#define SLAB_HEADERS 256 /* about 37 KiB a slab */

/* A slab of headers; slabs are kept for the process's life (headers are few: one per group
 * alive, a few hundred at 1 000 000 routes), listed so that they stay reachable. */
struct slab {
	struct slab *next;
	struct seggroup g[SLAB_HEADERS];
};

union free_hdr {
	union free_hdr *next;
	struct seggroup g;
};

static pthread_mutex_t s_hdr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slab *s_slabs;	    /* under s_hdr_lock */
static union free_hdr *s_free_hdrs; /* under s_hdr_lock */

static struct seggroup *hdr_alloc(void)
{
	union free_hdr *h;

	if (!HDR_SLABS)
		return malloc(sizeof(struct seggroup));
	pthread_mutex_lock(&s_hdr_lock);
	if (!s_free_hdrs) {
		struct slab *sl = malloc(sizeof(*sl));

		if (sl) {
			sl->next = s_slabs;
			s_slabs = sl;
			for (size_t i = SLAB_HEADERS; i-- > 0;) {
				h = (union free_hdr *)&sl->g[i];
				h->next = s_free_hdrs;
				s_free_hdrs = h;
			}
		}
	}
	h = s_free_hdrs;
	if (h)
		s_free_hdrs = h->next;
	pthread_mutex_unlock(&s_hdr_lock);
	return h ? &h->g : NULL;
}

static void hdr_free(struct seggroup *g)
{
	union free_hdr *h = (union free_hdr *)g;

	if (!HDR_SLABS) {
		free(g);
		return;
	}
	pthread_mutex_lock(&s_hdr_lock);
	h->next = s_free_hdrs;
	s_free_hdrs = h;
	pthread_mutex_unlock(&s_hdr_lock);
}

int seggroup_new(uint32_t table, uint32_t cap, struct seggroup **out)
{
	struct seggroup *g;
	size_t sz;

	if (!cap || cap > SEGGROUP_MAX)
		return -EINVAL;
	sz = cap * (sizeof(*g->segs) + sizeof(*g->sums)) + (cap + 1) * sizeof(*g->first);
	g = hdr_alloc();
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	g->segs = malloc(sz);
	if (!g->segs) {
		hdr_free(g);
		return -ENOMEM;
	}
	g->refs = 1;
	g->table = table;
	g->cap = cap;
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
	free(g->segs);
	hdr_free(g);
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
