// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * index.c - the per-snapshot indexes behind /routes filters and /routes/lookup.
 *
 * What is built (collector thread, once per snapshot, O(n) plus a hash insert per prefix):
 *   - per table: the prefix lengths present, and whether the records are already sorted by
 *     the kernel order key (index.h). They always have been on the kernels tried; if a table
 *     is not, a sorted permutation of its records is kept instead and the range queries
 *     report it so callers sort their (few) results;
 *   - one open-addressing hash over every (table, dst/len, kind) run of records, kind being
 *     "has a source prefix" or not. A run is the set of routes of one fib6 node (or of its
 *     source subtree), which the key order keeps contiguous. A slot is 8 bytes: the run's
 *     first position and 32 more bits of the hash, so a miss rarely touches a record;
 *   - the expiring routes in record order (s->expiring is in deadline order).
 *
 * Longest-prefix match probes the hash once or twice per prefix length present in the
 * table, longest first; "inside P" and paging cursors are binary searches on the key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/rtnetlink.h>

#include "rtsnap/index.h"
#include "rtsnap/order.h"

struct ix_table {
	uint32_t id, first, count; /* records [first, first + count) incl. a placeholder */
	uint32_t *perm; /* NULL: records are in key order; else positions sorted by key */
	uint64_t has0[3], has1[3]; /* bit L: a run of dst_len L with / without source prefix */
	uint8_t nlens;
	uint8_t lens[129]; /* dst lengths with any run, longest first */
};

struct ix_slot {
	uint32_t pos; /* first + position of the run's first record; UINT32_MAX = empty */
	uint32_t tag;
};

struct ix_tid {
	uint32_t id, pos;
};

struct lookup_index {
	struct ix_table *tables;
	size_t ntables;
	struct ix_tid *tids; /* sorted by id */
	struct ix_slot *slots;
	size_t mask;	   /* slots - 1 */
	uint32_t *exp_rec; /* expiring routes by record index */
	size_t nexp;
	size_t bytes;
	double build_s;
};

/* ---- keys: order.h ---- */

/* ---- hash ---- */

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline uint64_t run_hash(uint32_t table, unsigned int kind, unsigned int len, uint64_t hi,
				uint64_t lo)
{
	uint64_t h = mix((uint64_t)table << 16 ^ kind << 8 ^ len ^ 0x9e3779b97f4a7c15ull);

	h = mix(h ^ hi);
	return mix(h ^ lo);
}

static inline const struct route *pos_route(const struct snapshot *s, const struct ix_table *t,
					    uint32_t rel)
{
	return &s->routes[t->first + (t->perm ? t->perm[rel] : rel)];
}

/* Does r start the run (kind, len, masked dst hi/lo)? */
static inline int run_match(const struct route *r, uint32_t table, unsigned int kind,
			    unsigned int len, uint64_t hi, uint64_t lo)
{
	uint64_t h, l;

	if (r->placeholder || r->table != table || r->dst_len != len || (r->src_len != 0) != !kind)
		return 0;
	order_span(r->dst, len, 0, &h, &l);
	return h == hi && l == lo;
}

/* Table-relative position of the run's first record, or -1. */
static long probe(const struct snapshot *s, const struct ix_table *t, unsigned int kind,
		  unsigned int len, uint64_t hi, uint64_t lo)
{
	const struct lookup_index *ix = s->lookup;
	uint64_t h = run_hash(t->id, kind, len, hi, lo);
	uint32_t tag = (uint32_t)(h >> 32);

	for (size_t i = h & ix->mask;; i = (i + 1) & ix->mask) {
		const struct ix_slot *sl = &ix->slots[i];

		if (sl->pos == UINT32_MAX)
			return -1;
		if (sl->tag == tag && sl->pos >= t->first && sl->pos - t->first < t->count &&
		    run_match(pos_route(s, t, sl->pos - t->first), t->id, kind, len, hi, lo))
			return (long)(sl->pos - t->first);
	}
}

static void insert(struct lookup_index *ix, const struct ix_table *t, uint32_t rel,
		   const struct route *r)
{
	unsigned int kind = r->src_len ? 0 : 1;
	uint64_t hi, lo, h;

	order_span(r->dst, r->dst_len, 0, &hi, &lo);
	h = run_hash(t->id, kind, r->dst_len, hi, lo);
	for (size_t i = h & ix->mask;; i = (i + 1) & ix->mask) {
		if (ix->slots[i].pos == UINT32_MAX) {
			ix->slots[i].pos = t->first + rel;
			ix->slots[i].tag = (uint32_t)(h >> 32);
			return;
		}
	}
}

/* ---- build ---- */

struct keyed {
	struct order_key k;
	uint32_t rel;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = order_key_cmp(&x->k, &y->k);

	return c ? c : (x->rel < y->rel ? -1 : x->rel > y->rel);
}

/* Records of t not in key order: keep a sorted permutation. */
static int build_perm(const struct snapshot *s, struct ix_table *t)
{
	struct keyed *tmp = malloc((size_t)t->count * sizeof(*tmp));

	t->perm = malloc((size_t)t->count * sizeof(*t->perm));
	if (!tmp || !t->perm) {
		free(tmp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->count; i++) {
		order_key_of(&s->routes[t->first + i], &tmp[i].k);
		tmp[i].rel = i;
	}
	qsort(tmp, t->count, sizeof(*tmp), cmp_keyed);
	for (uint32_t i = 0; i < t->count; i++)
		t->perm[i] = tmp[i].rel;
	free(tmp);
	return 0;
}

static int same_run(const struct route *a, const struct route *b)
{
	uint64_t h1, l1, h2, l2;

	if (a->dst_len != b->dst_len || (a->src_len != 0) != (b->src_len != 0) ||
	    a->placeholder != b->placeholder)
		return 0;
	order_span(a->dst, a->dst_len, 0, &h1, &l1);
	order_span(b->dst, b->dst_len, 0, &h2, &l2);
	return h1 == h2 && l1 == l2;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct ix_tid *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void set_bit(uint64_t *bm, unsigned int b)
{
	bm[b / 64] |= 1ull << (b % 64);
}

static int has_bit(const uint64_t *bm, unsigned int b)
{
	return (bm[b / 64] >> (b % 64)) & 1;
}

int index_build(struct snapshot *s)
{
	struct lookup_index *ix = calloc(1, sizeof(*ix));
	struct timespec t0, t1;
	size_t runs = 0, nslots = 16;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ix)
		return -ENOMEM;
	ix->ntables = s->ntables;
	ix->tables = calloc(s->ntables ? s->ntables : 1, sizeof(*ix->tables));
	ix->tids = calloc(s->ntables ? s->ntables : 1, sizeof(*ix->tids));
	if (!ix->tables || !ix->tids)
		goto fail;
	ix->bytes = sizeof(*ix) + s->ntables * (sizeof(*ix->tables) + sizeof(*ix->tids));

	/* pass 1: order check, lengths, runs */
	for (size_t ti = 0; ti < s->ntables; ti++) {
		struct ix_table *t = &ix->tables[ti];
		struct order_key prev, cur;
		int sorted = 1;

		t->id = s->tables[ti].id;
		t->first = s->tables[ti].first;
		t->count = s->tables[ti].count;
		ix->tids[ti].id = t->id;
		ix->tids[ti].pos = (uint32_t)ti;
		for (uint32_t i = 0; i < t->count && sorted; i++) {
			order_key_of(&s->routes[t->first + i], &cur);
			if (i && order_key_cmp(&prev, &cur) > 0)
				sorted = 0;
			prev = cur;
		}
		if (!sorted) {
			if (build_perm(s, t))
				goto fail;
			ix->bytes += (size_t)t->count * sizeof(*t->perm);
		}
		for (uint32_t i = 0; i < t->count; i++) {
			const struct route *r = pos_route(s, t, i);

			if (r->placeholder)
				continue;
			set_bit(r->src_len ? t->has0 : t->has1, r->dst_len);
			if (!i || !same_run(pos_route(s, t, i - 1), r))
				runs++;
		}
		for (int l = 128; l >= 0; l--)
			if (has_bit(t->has0, (unsigned int)l) || has_bit(t->has1, (unsigned int)l))
				t->lens[t->nlens++] = (uint8_t)l;
	}
	qsort(ix->tids, ix->ntables, sizeof(*ix->tids), cmp_tid);

	/* pass 2: the run hash, load factor <= 1/2 */
	while (nslots < 2 * runs)
		nslots *= 2;
	ix->slots = malloc(nslots * sizeof(*ix->slots));
	if (!ix->slots)
		goto fail;
	memset(ix->slots, 0xff, nslots * sizeof(*ix->slots));
	ix->mask = nslots - 1;
	ix->bytes += nslots * sizeof(*ix->slots);
	for (size_t ti = 0; ti < s->ntables; ti++) {
		const struct ix_table *t = &ix->tables[ti];

		for (uint32_t i = 0; i < t->count; i++) {
			const struct route *r = pos_route(s, t, i);

			if (!r->placeholder && (!i || !same_run(pos_route(s, t, i - 1), r)))
				insert(ix, t, i, r);
		}
	}

	/* expiring routes in kernel order */
	if (s->nexpiring) {
		ix->exp_rec = malloc(s->nexpiring * sizeof(*ix->exp_rec));
		if (!ix->exp_rec)
			goto fail;
		memcpy(ix->exp_rec, s->expiring, s->nexpiring * sizeof(*ix->exp_rec));
		qsort(ix->exp_rec, s->nexpiring, sizeof(*ix->exp_rec), cmp_u32);
		ix->nexp = s->nexpiring;
		ix->bytes += s->nexpiring * sizeof(*ix->exp_rec);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ix->build_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	s->lookup = ix;
	return 0;
fail:
	index_free(ix);
	return -ENOMEM;
}

void index_free(struct lookup_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; ix->tables && i < ix->ntables; i++)
		free(ix->tables[i].perm);
	free(ix->tables);
	free(ix->tids);
	free(ix->slots);
	free(ix->exp_rec);
	free(ix);
}

size_t index_bytes(const struct lookup_index *ix)
{
	return ix ? ix->bytes : 0;
}

double index_build_seconds(const struct lookup_index *ix)
{
	return ix ? ix->build_s : 0;
}

/* ---- queries ---- */

int index_table_pos(const struct snapshot *s, uint32_t id)
{
	const struct lookup_index *ix = s->lookup;
	struct ix_tid key = { .id = id };
	const struct ix_tid *p;

	if (!ix || !ix->ntables)
		return -1;
	p = bsearch(&key, ix->tids, ix->ntables, sizeof(*ix->tids), cmp_tid);
	return p ? (int)p->pos : -1;
}

static int route_usable(const struct snapshot *s, const struct route *r, int64_t now_ms)
{
	if (r->expires_ms && r->expires_ms <= now_ms)
		return 0; /* fib6_check_expired */
	if (r->rtm_flags & RTNH_F_DEAD)
		return 0;
	if (r->nh_count > 1) {
		for (unsigned int i = 0; i < r->nh_count; i++)
			if (!(snapshot_route_nh(s, r, i)->flags & RTNH_F_DEAD))
				return 1;
		return 0;
	}
	return !(r->nh_count == 1 && (r->nh.flags & RTNH_F_DEAD));
}

/* Does the source prefix of r contain address src? */
static int src_contains(const struct route *r, const uint8_t src[16])
{
	uint64_t h, l, ah, al;

	order_span(r->src, r->src_len, 0, &h, &l);
	order_span(src, r->src_len, 0, &ah, &al);
	return ah == h && al == l;
}

long index_lookup(const struct snapshot *s, uint32_t table, const uint8_t dst[16],
		  const uint8_t *src, int64_t now_ms)
{
	static const uint8_t any[16];
	const struct ix_table *t;
	int tpos = index_table_pos(s, table);

	if (tpos < 0)
		return -ENOENT;
	t = &s->lookup->tables[tpos];
	if (!src)
		src = any;
	for (unsigned int k = 0; k < t->nlens; k++) {
		unsigned int len = t->lens[k];
		uint64_t hi, lo;
		long p;

		order_span(dst, len, 0, &hi, &lo);
		if (has_bit(t->has0, len)) {
			p = probe(s, t, 0, len, hi, lo);
			if (p >= 0) {
				int matched = 0;

				for (uint32_t i = (uint32_t)p; i < t->count; i++) {
					const struct route *r = pos_route(s, t, i);

					if (!run_match(r, t->id, 0, len, hi, lo))
						break;
					if (!src_contains(r, src))
						continue;
					matched = 1;
					if (route_usable(s, r, now_ms))
						return r - s->routes;
				}
				/* a node with a source subtree is entered only through it */
				if (!matched)
					continue;
			}
		}
		if (!has_bit(t->has1, len))
			continue;
		p = probe(s, t, 1, len, hi, lo);
		if (p < 0)
			continue;
		for (uint32_t i = (uint32_t)p; i < t->count; i++) {
			const struct route *r = pos_route(s, t, i);

			if (!run_match(r, t->id, 1, len, hi, lo))
				break;
			if (route_usable(s, r, now_ms))
				return r - s->routes;
		}
	}
	return -ENOENT;
}

/* First table-relative position whose key is >= k (after = 0) or > k (after = 1). */
static uint32_t bound(const struct snapshot *s, const struct ix_table *t, const struct order_key *k,
		      int after)
{
	uint32_t lo = 0, hi = t->count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct order_key m;
		int c;

		order_key_of(pos_route(s, t, mid), &m);
		c = order_key_cmp(&m, k);
		if (c < 0 || (after && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void inside_bounds(const struct snapshot *s, const struct ix_table *t,
			  const uint8_t addr[16], uint8_t len, uint32_t *lo, uint32_t *hi)
{
	struct order_key klo = { 0 }, khi;

	order_span(addr, len, 0, &klo.a_hi, &klo.a_lo);
	klo.c = len;
	order_span(addr, len, 1, &khi.a_hi, &khi.a_lo);
	khi.c = 1u << 8 | (255u - len);
	khi.s_hi = khi.s_lo = ~0ull;
	khi.sl = khi.metric = UINT32_MAX;
	*lo = bound(s, t, &klo, 0);
	*hi = bound(s, t, &khi, 1);
	if (*hi < *lo)
		*hi = *lo;
}

int index_inside_range(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
		       uint32_t *lo, uint32_t *hi)
{
	const struct ix_table *t = &s->lookup->tables[tpos];

	if (t->perm)
		return 0;
	inside_bounds(s, t, addr, len, lo, hi);
	*lo += t->first;
	*hi += t->first;
	return 1;
}

long index_inside_collect(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
			  uint32_t **out)
{
	const struct ix_table *t = &s->lookup->tables[tpos];
	uint32_t lo, hi, *v;

	inside_bounds(s, t, addr, len, &lo, &hi);
	v = malloc(((size_t)(hi - lo) + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = lo; i < hi; i++)
		v[i - lo] = (uint32_t)(pos_route(s, t, i) - s->routes);
	qsort(v, hi - lo, sizeof(*v), cmp_u32);
	*out = v;
	return (long)(hi - lo);
}

long index_covers(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
		  uint32_t **out)
{
	const struct ix_table *t = &s->lookup->tables[tpos];
	size_t n = 0, cap = 16;
	uint32_t *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (unsigned int k = 0; k < t->nlens; k++) {
		unsigned int l = t->lens[k];
		uint64_t hi, lo;

		if (l > len)
			continue;
		order_span(addr, l, 0, &hi, &lo);
		for (unsigned int kind = 0; kind < 2; kind++) {
			long p;

			if (!has_bit(kind ? t->has1 : t->has0, l))
				continue;
			p = probe(s, t, kind, l, hi, lo);
			for (uint32_t i = p < 0 ? t->count : (uint32_t)p; i < t->count; i++) {
				const struct route *r = pos_route(s, t, i);

				if (!run_match(r, t->id, kind, l, hi, lo))
					break;
				if (n == cap) {
					uint32_t *nv = realloc(v, 2 * cap * sizeof(*v));

					if (!nv) {
						free(v);
						return -ENOMEM;
					}
					v = nv;
					cap *= 2;
				}
				v[n++] = (uint32_t)(r - s->routes);
			}
		}
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	*out = v;
	return (long)n;
}

const uint32_t *index_expiring_by_record(const struct snapshot *s, size_t *n)
{
	*n = s->lookup ? s->lookup->nexp : 0;
	return s->lookup ? s->lookup->exp_rec : NULL;
}

void index_cursor_of(const struct snapshot *s, size_t i, struct index_cursor *c)
{
	const struct route *r = &s->routes[i];
	struct order_key k, p;
	int tpos = index_table_pos(s, r->table);
	size_t first = tpos >= 0 ? s->lookup->tables[tpos].first : i;

	memset(c, 0, sizeof(*c));
	c->table = r->table;
	memcpy(c->dst, r->dst, 16);
	memcpy(c->src, r->src, 16);
	c->dst_len = r->dst_len;
	c->src_len = r->src_len;
	c->metric = r->metric;
	if (r->nh_count) {
		const struct route_nh *nh = snapshot_route_nh(s, r, 0);

		memcpy(c->gw, nh->gw, 16);
		c->ifindex = nh->ifindex;
	}
	order_key_of(r, &k);
	while (i > first) {
		order_key_of(&s->routes[--i], &p);
		if (order_key_cmp(&p, &k))
			break;
		c->ordinal++;
	}
}

/* Record index of table-relative position pos (the table's end when pos is past it). */
static size_t resume_at(const struct snapshot *s, const struct ix_table *t, uint32_t pos)
{
	if (pos >= t->count)
		return (size_t)t->first + t->count;
	return (size_t)(pos_route(s, t, pos) - s->routes);
}

/* Is r the route cursor c was taken from (same first nexthop)? */
static int cursor_route(const struct snapshot *s, const struct route *r,
			const struct index_cursor *c)
{
	const struct route_nh *nh;

	if (!r->nh_count)
		return c->ifindex == 0;
	nh = snapshot_route_nh(s, r, 0);
	return nh->ifindex == c->ifindex && memcmp(nh->gw, c->gw, 16) == 0;
}

size_t index_cursor_resume(const struct snapshot *s, const struct index_cursor *c)
{
	const struct ix_table *t;
	struct order_key k, m;
	uint32_t pos, end;
	int tpos = index_table_pos(s, c->table);

	if (tpos < 0) {
		/* the table is gone: continue with the next hash bucket */
		for (size_t i = 0; i < s->ntables; i++)
			if (s->tables[i].id % 256 > c->table % 256)
				return s->tables[i].first;
		return s->nroutes;
	}
	t = &s->lookup->tables[tpos];
	order_key_make(c->dst, c->dst_len, c->src, c->src_len, c->metric, &k);
	pos = bound(s, t, &k, 0);
	/* [pos, end): the routes with the cursor's key; usually one */
	for (end = pos; end < t->count; end++) {
		order_key_of(pos_route(s, t, end), &m);
		if (order_key_cmp(&m, &k))
			break;
	}
	for (uint32_t i = pos; i < end; i++)
		if (cursor_route(s, pos_route(s, t, i), c))
			return resume_at(s, t, i + 1);
	return resume_at(s, t, end - pos > c->ordinal ? pos + c->ordinal : end);
}
