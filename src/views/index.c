// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * index.c - the per-snapshot indexes behind /routes filters and /routes/lookup.
 *
 * Nothing here is proportional to the table: a snapshot's records are already in the
 * kernel's order key (index.h) table by table, in segments that are shared between
 * snapshots, so every query is a binary search on that key. What is built per snapshot
 * (collector thread) is O(tables + segments + expiring routes):
 *   - per table: the prefix lengths present (the union of its segments' bitmaps);
 *   - the tables by id;
 *   - the expiring routes in record order (s->expiring is in deadline order).
 *
 * A "run" is the set of routes of one fib6 node (or of its source subtree): one (dst/len,
 * has-a-source-prefix) pair, contiguous in key order. Longest-prefix match finds the run of
 * each prefix length present in the table, longest first; "inside P" and paging cursors are
 * binary searches on the key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "rtsnap/index.h"
#include "rtsnap/order.h"
#include "rtsnap/order4.h"
#include "rtsnap/route4.h"

struct ix_table {
	uint32_t id, first, count; /* records [first, first + count) incl. a placeholder */
	uint64_t has0[3], has1[3]; /* bit L: a run of dst_len L with / without source prefix */
	uint8_t nlens;
	uint8_t lens[129]; /* dst lengths with any run, longest first */
};

struct ix_tid {
	uint32_t id, pos;
};

struct lookup_index {
	struct ix_table *tables;
	size_t ntables;
	struct ix_tid *tids; /* sorted by id */
	uint32_t *exp_rec;   /* expiring routes by record index */
	size_t nexp;
	size_t bytes;
	double build_s;
};

static inline const struct route *pos_route(const struct snapshot *s, const struct ix_table *t,
					    uint32_t rel)
{
	return snapshot_route(s, (size_t)t->first + rel);
}

/* Does r belong to the run (kind, len, masked dst hi/lo)? */
static inline int run_match(const struct route *r, uint32_t table, unsigned int kind,
			    unsigned int len, uint64_t hi, uint64_t lo)
{
	uint64_t h, l;

	if (r->placeholder || r->table != table || r->dst_len != len || (r->src_len != 0) != !kind)
		return 0;
	order_span(r->dst, len, 0, &h, &l);
	return h == hi && l == lo;
}

static uint32_t bound(const struct snapshot *s, const struct ix_table *t, const struct order_key *k,
		      int after);

/* Table-relative position of the run's first record, or -1. The run's first key: a route
 * without a source prefix sorts by (end of dst, 1, 255 - len, metric), a source-specific one
 * by (first address of dst, 0, len, ...); metric and source 0 come first. */
static long probe(const struct snapshot *s, const struct ix_table *t, unsigned int kind,
		  unsigned int len, uint64_t hi, uint64_t lo)
{
	struct order_key k = { 0 };
	uint8_t a[16];
	uint32_t p;

	for (int i = 0; i < 8; i++) {
		a[i] = (uint8_t)(hi >> (56 - 8 * i));
		a[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	order_span(a, len, kind, &k.a_hi, &k.a_lo);
	k.c = kind ? 1u << 8 | (255u - len) : len;
	p = bound(s, t, &k, 0);
	if (p < t->count && run_match(pos_route(s, t, p), t->id, kind, len, hi, lo))
		return (long)p;
	return -1;
}

/* ---- build ---- */

static int cmp_tid(const void *a, const void *b)
{
	const struct ix_tid *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int has_bit(const uint64_t *bm, unsigned int b)
{
	return (bm[b / 64] >> (b % 64)) & 1;
}

int index_build(struct snapshot *s)
{
	struct lookup_index *ix = calloc(1, sizeof(*ix));
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ix)
		return -ENOMEM;
	ix->ntables = snapshot_ntables(s);
	ix->tables = calloc(snapshot_ntables(s) ? snapshot_ntables(s) : 1, sizeof(*ix->tables));
	ix->tids = calloc(snapshot_ntables(s) ? snapshot_ntables(s) : 1, sizeof(*ix->tids));
	if (!ix->tables || !ix->tids)
		goto fail;
	ix->bytes = sizeof(*ix) + snapshot_ntables(s) * (sizeof(*ix->tables) + sizeof(*ix->tids));
	for (size_t ti = 0; ti < snapshot_ntables(s); ti++) {
		const struct snapshot_table *st = snapshot_table_at(s, ti);
		struct ix_table *t = &ix->tables[ti];

		t->id = st->id;
		t->first = st->first;
		t->count = st->count;
		ix->tids[ti].id = t->id;
		ix->tids[ti].pos = (uint32_t)ti;
		for (int w = 0; w < 3; w++) {
			t->has0[w] = st->lens0[w];
			t->has1[w] = st->lens1[w];
		}
		for (int l = 128; l >= 0; l--)
			if (has_bit(t->has0, (unsigned int)l) || has_bit(t->has1, (unsigned int)l))
				t->lens[t->nlens++] = (uint8_t)l;
	}
	qsort(ix->tids, ix->ntables, sizeof(*ix->tids), cmp_tid);

	/* expiring routes in kernel order: segment by segment, each in record order */
	if (snapshot_nexpiring(s)) {
		ix->exp_rec = malloc(snapshot_nexpiring(s) * sizeof(*ix->exp_rec));
		if (!ix->exp_rec)
			goto fail;
		size_t nexp_groups;
		const uint32_t *exp_groups = snapshot_expiring_groups(s, &nexp_groups);

		for (size_t e = 0; e < nexp_groups; e++) {
			uint32_t first;
			const struct seggroup *grp = snapshot_group(s, exp_groups[e], &first);

			for (uint32_t m = 0; m < grp->nsegs; m++) {
				const struct segment *g = grp->segs[m];
				uint32_t base = first + grp->first[m];

				if (!grp->sums[m].nexp)
					continue;
				for (uint32_t j = 0; j < g->nexp; j++)
					ix->exp_rec[ix->nexp++] = base + g->exp[j];
			}
		}
		ix->bytes += snapshot_nexpiring(s) * sizeof(*ix->exp_rec);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ix->build_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	snapshot_views(s)->lookup = ix;
	return 0;
fail:
	index_free(ix);
	return -ENOMEM;
}

void index_free(struct lookup_index *ix)
{
	if (!ix)
		return;
	free(ix->tables);
	free(ix->tids);
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
	const struct lookup_index *ix = snapshot_views(s)->lookup;
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

/* ---- IPv4 records (an AF_INET snapshot: route4.h, order4.h) ----
 *
 * A table's IPv4 records are in the kernel's leaf order: destination address ascending, then
 * prefix length descending, TOS descending, metric ascending (order4_key()), so the aliases of
 * one (destination, length) are one run, found by a binary search on the key with the highest
 * TOS and metric 0.
 */

static int snap_is4(const struct snapshot *s)
{
	return snapshot_family(s) == AF_INET;
}

static uint32_t mask4(uint32_t a, unsigned int len)
{
	return len ? a & ~(uint32_t)0 << (32 - len) : 0;
}

/* order4_key() of destination a/len (a masked) with TOS tos. */
static uint64_t key4(uint32_t a, unsigned int len, uint8_t tos)
{
	uint8_t b[4] = { (uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a };

	return order4_key_make(b, len, tos);
}

/* The record's key without its TOS byte: equal exactly for one (destination, length). */
static inline uint64_t dstlen4(const struct route *r)
{
	return order4_key(r) >> 8;
}

/* First table-relative position of the records of destination a/len (a masked), or t->count. */
static uint32_t run4(const struct snapshot *s, const struct ix_table *t, uint32_t a,
		     unsigned int len)
{
	struct order_key k = { .a_hi = key4(a, len, 255) };

	return bound(s, t, &k, 0);
}

/*
 * What fib_table_lookup() does with alias r of the leaf that covers the address, for a lookup
 * with TOS 0 and scope universe (ip route get without tos or oif): 1 r is the answer, 0 go on
 * with the next alias, -1 leave the leaf (the rest of its aliases, every prefix length of this
 * destination, is not looked at).
 */
static int alias4_verdict(const struct snapshot *s, const struct route *r)
{
	const struct route_nhobj *o;

	if (r->tos)
		return 0; /* fa_tos && fa_tos != flowi4_tos */
	switch (r->type) {
	case RTN_BLACKHOLE:
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
	case RTN_NAT:
	case RTN_XRESOLVE:
		return 1; /* fib_props[type].error: the lookup ends with the error */
	default:
		break;
	}
	if (r->rtm_flags & RTNH_F_DEAD)
		return 0; /* fi->fib_flags & RTNH_F_DEAD */
	if (r->nhid) {
		/* nexthop_is_blackhole(): an error too. Otherwise nexthop_get_nhc_lookup() picks a
		 * member that is not dead, and with none goes to miss; the kernel removes an
		 * object whose device goes down, so what is left is usable (a route shown
		 * without hops, nexthop_compat_mode 0, is taken as usable). */
		o = snapshot_nhobj(s, r->nhid);
		if ((o && o->blackhole) || !r->nh_count)
			return 1;
		for (unsigned int i = 0; i < r->nh_count; i++)
			if (!(snapshot_route_nh(s, r, i)->flags & RTNH_F_DEAD))
				return 1;
		return -1;
	}
	/* fib_lookup_good_nhc(): a hop that is not dead (linkdown hops count unless
	 * ignore_routes_with_linkdown, which rtsnapd does not follow) */
	for (unsigned int i = 0; i < r->nh_count; i++)
		if (!(snapshot_route_nh(s, r, i)->flags & RTNH_F_DEAD))
			return 1;
	return 0;
}

long index_lookup4(const struct snapshot *s, uint32_t table, const uint8_t dst[4])
{
	const struct ix_table *t;
	uint32_t a =
	    (uint32_t)dst[0] << 24 | (uint32_t)dst[1] << 16 | (uint32_t)dst[2] << 8 | dst[3];
	uint32_t left = 0; /* a destination whose leaf was left (goto miss) */
	int left_set = 0;
	int tpos = index_table_pos(s, table);

	if (tpos < 0 || !snap_is4(s))
		return -ENOENT;
	t = &snapshot_views(s)->lookup->tables[tpos];
	for (unsigned int k = 0; k < t->nlens; k++) {
		unsigned int len = t->lens[k];
		uint32_t m = mask4(a, len);
		uint64_t want;

		if (len > 32 || (left_set && m == left))
			continue;
		want = key4(m, len, 0) >> 8;
		for (uint32_t i = run4(s, t, m, len); i < t->count; i++) {
			const struct route *r = pos_route(s, t, i);
			int v;

			if (dstlen4(r) != want)
				break;
			v = alias4_verdict(s, r);
			if (v > 0)
				return (long)(t->first + i);
			if (v < 0) {
				left = m;
				left_set = 1;
				break;
			}
		}
	}
	return -ENOENT;
}

long index_lookup(const struct snapshot *s, uint32_t table, const uint8_t dst[16],
		  const uint8_t *src, int64_t now_ms)
{
	static const uint8_t any[16];
	const struct ix_table *t;
	int tpos = index_table_pos(s, table);

	if (tpos < 0)
		return -ENOENT;
	t = &snapshot_views(s)->lookup->tables[tpos];
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
						return (long)(t->first + i);
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
				return (long)(t->first + i);
		}
	}
	return -ENOENT;
}

/* Is r's key before k (< k), or not after it (<= k)? */
static int key_before(const struct route *r, const void *arg)
{
	struct order_key m;

	order_key_of(r, &m);
	return order_key_cmp(&m, arg) < 0;
}

static int key_not_after(const struct route *r, const void *arg)
{
	struct order_key m;

	order_key_of(r, &m);
	return order_key_cmp(&m, arg) <= 0;
}

/* First table-relative position whose key is >= k (after = 0) or > k (after = 1). */
static uint32_t bound(const struct snapshot *s, const struct ix_table *t, const struct order_key *k,
		      int after)
{
	size_t i = snapshot_partition(s, t->first, (size_t)t->first + t->count,
				      after ? key_not_after : key_before, k);

	return (uint32_t)(i - t->first);
}

/*
 * IPv4: the records whose destination address lies in addr/len, [*lo, *hi). Inside P is not
 * quite one run in the IPv4 order: the routes of P's first address shorter than P (a /8 of
 * the same address) sort after P's own; they are few and query_match() drops them.
 */
static void inside_bounds4(const struct snapshot *s, const struct ix_table *t,
			   const uint8_t addr[16], uint8_t len, uint32_t *lo, uint32_t *hi)
{
	uint32_t a = mask4(route4_key(addr), len);
	uint32_t last = len ? a | ~(~(uint32_t)0 << (32 - len)) : ~(uint32_t)0;
	struct order_key klo = { .a_hi = key4(a, 32, 255) };
	struct order_key khi = { .a_hi = key4(last, 0, 0), .metric = UINT32_MAX };

	*lo = bound(s, t, &klo, 0);
	*hi = bound(s, t, &khi, 1);
	if (*hi < *lo)
		*hi = *lo;
}

static void inside_bounds(const struct snapshot *s, const struct ix_table *t,
			  const uint8_t addr[16], uint8_t len, uint32_t *lo, uint32_t *hi)
{
	struct order_key klo = { 0 }, khi;

	if (snap_is4(s)) {
		inside_bounds4(s, t, addr, len, lo, hi);
		return;
	}

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
	const struct ix_table *t = &snapshot_views(s)->lookup->tables[tpos];

	inside_bounds(s, t, addr, len, lo, hi);
	*lo += t->first;
	*hi += t->first;
	return 1;
}

long index_inside_collect(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
			  uint32_t **out)
{
	const struct ix_table *t = &snapshot_views(s)->lookup->tables[tpos];
	uint32_t lo, hi, *v;

	inside_bounds(s, t, addr, len, &lo, &hi);
	v = malloc(((size_t)(hi - lo) + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = lo; i < hi; i++)
		v[i - lo] = t->first + i;
	*out = v;
	return (long)(hi - lo);
}

/* Append table-relative record i of t to v (n used, cap allocated). 0 or -ENOMEM (v freed). */
static int push_rec(uint32_t **v, size_t *n, size_t *cap, uint32_t rec)
{
	if (*n == *cap) {
		uint32_t *nv = realloc(*v, 2 * *cap * sizeof(**v));

		if (!nv) {
			free(*v);
			return -ENOMEM;
		}
		*v = nv;
		*cap *= 2;
	}
	(*v)[(*n)++] = rec;
	return 0;
}

/* IPv4: every (destination, length) run containing addr/len, longest first. */
static long covers4(const struct snapshot *s, const struct ix_table *t, const uint8_t addr[16],
		    uint8_t len, uint32_t **out)
{
	size_t n = 0, cap = 16;
	uint32_t *v = malloc(cap * sizeof(*v));
	uint32_t a = route4_key(addr);

	if (!v)
		return -ENOMEM;
	for (unsigned int k = 0; k < t->nlens; k++) {
		unsigned int l = t->lens[k];
		uint32_t m = mask4(a, l);
		uint64_t want = key4(m, l, 0) >> 8;

		if (l > len || l > 32)
			continue;
		for (uint32_t i = run4(s, t, m, l); i < t->count; i++) {
			if (dstlen4(pos_route(s, t, i)) != want)
				break;
			if (push_rec(&v, &n, &cap, t->first + i))
				return -ENOMEM;
		}
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	*out = v;
	return (long)n;
}

long index_covers(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
		  uint32_t **out)
{
	const struct ix_table *t = &snapshot_views(s)->lookup->tables[tpos];
	size_t n = 0, cap = 16;
	uint32_t *v;

	if (snap_is4(s))
		return covers4(s, t, addr, len, out);
	v = malloc(cap * sizeof(*v));
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
				v[n++] = t->first + i;
			}
		}
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	*out = v;
	return (long)n;
}

const uint32_t *index_expiring_by_record(const struct snapshot *s, size_t *n)
{
	*n = snapshot_views(s)->lookup ? snapshot_views(s)->lookup->nexp : 0;
	return snapshot_views(s)->lookup ? snapshot_views(s)->lookup->exp_rec : NULL;
}

void index_cursor_of(const struct snapshot *s, size_t i, struct index_cursor *c)
{
	const struct route *r = snapshot_route(s, i);
	struct order_key k, p;
	int tpos = index_table_pos(s, r->table);
	size_t first = tpos >= 0 ? snapshot_views(s)->lookup->tables[tpos].first : i;

	memset(c, 0, sizeof(*c));
	c->table = r->table;
	memcpy(c->dst, r->dst, 16);
	memcpy(c->src, r->src, 16);
	c->dst_len = r->dst_len;
	c->src_len = r->src_len;
	c->metric = r->metric;
	if (route_is4(r))
		c->src[0] = r->tos; /* IPv4 records have no source prefix; their key has a TOS */
	if (r->nh_count) {
		const struct route_nh *nh = snapshot_route_nh(s, r, 0);

		memcpy(c->gw, nh->gw, 16);
		c->ifindex = nh->ifindex;
	}
	order_key_of(r, &k);
	while (i > first) {
		order_key_of(snapshot_route(s, --i), &p);
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
	return (size_t)t->first + pos;
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
		for (size_t i = 0; i < snapshot_ntables(s); i++)
			if (snapshot_table_at(s, i)->id % 256 > c->table % 256)
				return snapshot_table_at(s, i)->first;
		return snapshot_nroutes(s);
	}
	t = &snapshot_views(s)->lookup->tables[tpos];
	if (snap_is4(s)) {
		memset(&k, 0, sizeof(k));
		k.a_hi = order4_key_make(c->dst, c->dst_len > 32 ? 32 : c->dst_len, c->src[0]);
		k.metric = c->metric;
	} else {
		order_key_make(c->dst, c->dst_len, c->src, c->src_len, c->metric, &k);
	}
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
