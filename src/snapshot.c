// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - build, seal, publish and retire snapshots.
 *
 * Threads and ownership:
 *   - The collector thread is the only writer. It builds a snapshot privately (snapshot_new,
 *     snapshot_add_*, snapshot_finish), then calls snapshot_publish(), which swaps it into
 *     s_current with rcu_xchg_pointer(). After that nobody writes the snapshot again.
 *   - Readers (HTTP workers, the proc-file writer) call snapshot_acquire(): inside an RCU
 *     read-side critical section they dereference s_current once and take a reference
 *     (refs++). They may then use the snapshot for as long as they like (an HTTP response
 *     being sent asynchronously, say) and drop it with snapshot_release().
 *   - Publication holds one reference of its own. snapshot_publish() swaps the pointer, waits
 *     for an RCU grace period (so no reader can still be between the dereference and its
 *     refs++), then drops the publication reference of the old snapshot. Whoever drops the
 *     last reference frees it. Nothing else frees a published snapshot.
 *   - Accounting: publication sets s->bytes (snapshot_bytes_estimate); a snapshot that is
 *     retired while readers still hold it is counted (s_retired, s_retired_bytes) until its
 *     last reader frees it. After each retirement the retire hook runs on the collector
 *     thread: the HTTP layer uses it to bound what slow responses pin (http_pin.c).
 *   - Builds with RTSNAP_POISON overwrite a snapshot before freeing it, so a reader that
 *     touches a retired snapshot reads garbage that the stress test notices (and ASan/TSan
 *     report the access itself).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>
#include <linux/rtnetlink.h>

#include "rtsnap/array.h"
#include "rtsnap/log.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/index.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/names.h"

#define MAIN_TABLE 254
#define LOCAL_TABLE 255
#define TABLE_HASHSZ 256 /* FIB6_TABLE_HASHSZ with multiple tables */

static struct snapshot *s_current; /* RCU-protected; written only by snapshot_publish() */

/*
 * ThreadSanitizer cannot see liburcu's inline-assembly barriers, so under TSan the pointer is
 * published and read with the C11 atomics of the same meaning (release on publish, acquire
 * on read) and TSan checks the ordering for real. The grace period itself stays liburcu's.
 */
#if defined(__SANITIZE_THREAD__)
#define current_xchg(v) __atomic_exchange_n(&s_current, (v), __ATOMIC_ACQ_REL)
#define current_load() __atomic_load_n(&s_current, __ATOMIC_ACQUIRE)
#else
#define current_xchg(v) rcu_xchg_pointer(&s_current, (v))
#define current_load() rcu_dereference(s_current)
#endif
static uint64_t s_generation;  /* collector thread only */
static long s_live;	       /* snapshots allocated and not freed */
static long s_retired;	       /* retired, not yet freed (atomic) */
static size_t s_retired_bytes; /* their bytes (atomic) */
static size_t s_current_bytes; /* bytes of s_current (atomic) */
static void (*s_retire_hook)(uint64_t current_generation);

long snapshot_retired_count(void)
{
	return __atomic_load_n(&s_retired, __ATOMIC_RELAXED);
}

size_t snapshot_retired_bytes(void)
{
	return __atomic_load_n(&s_retired_bytes, __ATOMIC_RELAXED);
}

size_t snapshot_current_bytes(void)
{
	return __atomic_load_n(&s_current_bytes, __ATOMIC_RELAXED);
}

void snapshot_set_retire_hook(void (*fn)(uint64_t current_generation))
{
	__atomic_store_n(&s_retire_hook, fn, __ATOMIC_RELEASE); /* the collector may be running */
}

size_t snapshot_bytes_estimate(const struct snapshot *s)
{
	size_t b = sizeof(*s);

	b += s->nroutes * sizeof(*s->routes) + s->nnexthops * sizeof(*s->nexthops);
	b += s->nmetrics * sizeof(*s->metrics) + s->ntables * sizeof(*s->tables);
	b += s->nlinks * sizeof(*s->links) + s->nnhobjs * sizeof(*s->nhobjs);
	b += s->nempty * sizeof(*s->empty_tables) + s->nprefix_keys * sizeof(*s->prefix_keys);
	b += s->nexpiring * sizeof(*s->expiring) + s->proc_len + s->encaps_bytes;
	if (s->json && s->nroutes) {
		const char *p0, *pn;
		size_t l0, ln;

		/* the pre-rendered array is contiguous: first object to the end of the last */
		render_json_span(s, 0, &p0, &l0);
		render_json_span(s, s->nroutes - 1, &pn, &ln);
		b += (size_t)(pn + ln - p0) + 3 + (s->nroutes + 1) * sizeof(size_t);
	}
	if (s->lookup)
		b += index_bytes(s->lookup);
	if (s->metrics_view) {
		size_t ml;

		render_metrics_snapshot_text(s, &ml);
		b += ml + ml / 2; /* plain text and its gzip (a bound: it compresses better) */
	}
	return b;
}

long snapshot_live_count(void)
{
	return __atomic_load_n(&s_live, __ATOMIC_RELAXED);
}

int64_t snapshot_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int snapshot_new(struct snapshot **out)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	__atomic_add_fetch(&s_live, 1, __ATOMIC_RELAXED);
	*out = s;
	return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	return array_grow(arr, cap, n, sz, 64);
}

/* Storage of a snapshot's encapsulations: blocks that never move, freed with the snapshot. */
struct snapshot_encaps {
	struct snapshot_encaps *next;
	size_t used, cap;
	unsigned char b[] __attribute__((aligned(8)));
};

#define ENCAPS_BLOCK 65536

/* Copy the encapsulations of record d (its hops nhs, for multipath) into s and point d at
 * them. 0 or -ENOMEM. */
static int copy_encaps(struct snapshot *s, struct route *d, struct route_nh *nhs)
{
	size_t n = route_encaps_size(d, nhs);
	struct snapshot_encaps *b = s->encaps;

	if (n && (!b || b->cap - b->used < n)) {
		size_t cap = n > ENCAPS_BLOCK ? n : ENCAPS_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return -ENOMEM;
		b->next = s->encaps;
		b->used = 0;
		b->cap = cap;
		s->encaps = b;
	}
	route_encaps_copy(d, nhs, n ? b->b + b->used : NULL);
	if (n) {
		b->used += n;
		s->encaps_bytes += n;
	}
	return 0;
}

static void free_encaps(struct snapshot *s)
{
	while (s->encaps) {
		struct snapshot_encaps *b = s->encaps;

		s->encaps = b->next;
#ifdef RTSNAP_POISON
		memset(b->b, 0x6b, b->used);
#endif
		free(b);
	}
}

int snapshot_add_route(struct snapshot *s, const struct route *r, const struct route_nh *nhs,
		       size_t nnh, const struct route_metrics *m)
{
	struct route *d;

	if (grow((void **)&s->routes, &s->routes_cap, s->nroutes, sizeof(*s->routes)))
		return -ENOMEM;
	d = &s->routes[s->nroutes];
	*d = *r;
	d->metrics_idx = UINT32_MAX;
	if (r->nh_count > 1) {
		if (nnh != r->nh_count || s->nnexthops + nnh > UINT32_MAX)
			return -EINVAL;
		while (s->nnexthops + nnh > s->nexthops_cap) {
			if (grow((void **)&s->nexthops, &s->nexthops_cap, s->nexthops_cap,
				 sizeof(*s->nexthops)))
				return -ENOMEM;
		}
		d->nh_idx = (uint32_t)s->nnexthops;
		memcpy(&s->nexthops[s->nnexthops], nhs, nnh * sizeof(*nhs));
		s->nnexthops += nnh;
	}
	if (copy_encaps(s, d, r->nh_count > 1 ? &s->nexthops[d->nh_idx] : NULL))
		return -ENOMEM;
	if (m && m->mask) {
		if (grow((void **)&s->metrics, &s->metrics_cap, s->nmetrics, sizeof(*s->metrics)))
			return -ENOMEM;
		s->metrics[s->nmetrics] = *m;
		d->metrics_idx = (uint32_t)s->nmetrics++;
	}
	s->nroutes++;
	return 0;
}

int snapshot_add_link(struct snapshot *s, const struct route_link *l)
{
	if (grow((void **)&s->links, &s->links_cap, s->nlinks, sizeof(*s->links)))
		return -ENOMEM;
	s->links[s->nlinks++] = *l;
	return 0;
}

int snapshot_add_nhobj(struct snapshot *s, const struct route_nhobj *o)
{
	if (grow((void **)&s->nhobjs, &s->nhobjs_cap, s->nnhobjs, sizeof(*s->nhobjs)))
		return -ENOMEM;
	s->nhobjs[s->nnhobjs++] = *o;
	return 0;
}

static int cmp_nhobj(const void *a, const void *b)
{
	const struct route_nhobj *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

const struct route_nhobj *snapshot_nhobj(const struct snapshot *s, uint32_t id)
{
	struct route_nhobj key = { .id = id };

	if (!s->nnhobjs)
		return NULL;
	return bsearch(&key, s->nhobjs, s->nnhobjs, sizeof(*s->nhobjs), cmp_nhobj);
}

int snapshot_add_empty_table(struct snapshot *s, uint32_t id)
{
	if (grow((void **)&s->empty_tables, &s->empty_cap, s->nempty, sizeof(*s->empty_tables)))
		return -ENOMEM;
	s->empty_tables[s->nempty++] = id;
	return 0;
}

int snapshot_add_prefix_key(struct snapshot *s, const struct prefix_key *k)
{
	if (grow((void **)&s->prefix_keys, &s->prefix_keys_cap, s->nprefix_keys,
		 sizeof(*s->prefix_keys)))
		return -ENOMEM;
	s->prefix_keys[s->nprefix_keys++] = *k;
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct route_link *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

const struct route_link *snapshot_link(const struct snapshot *s, uint32_t ifindex)
{
	struct route_link key = { .ifindex = ifindex };

	if (!s->nlinks)
		return NULL;
	return bsearch(&key, s->links, s->nlinks, sizeof(*s->links), cmp_link);
}

const char *snapshot_link_name(const struct snapshot *s, uint32_t ifindex)
{
	const struct route_link *l = snapshot_link(s, ifindex);

	return l ? l->name : "";
}

const struct route_nh *snapshot_route_nh(const struct snapshot *s, const struct route *r,
					 unsigned int i)
{
	if (r->nh_count > 1)
		return &s->nexthops[r->nh_idx + i];
	return &r->nh;
}

const struct route_metrics *snapshot_route_metrics(const struct snapshot *s, const struct route *r)
{
	return r->metrics_idx == UINT32_MAX ? NULL : &s->metrics[r->metrics_idx];
}

static int cmp_prefix_key(const void *a, const void *b)
{
	const struct prefix_key *x = a, *y = b;
	int c;

	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->dst_len != y->dst_len)
		return x->dst_len < y->dst_len ? -1 : 1;
	c = memcmp(x->dst, y->dst, 16);
	if (c)
		return c;
	if (x->src_len != y->src_len)
		return x->src_len < y->src_len ? -1 : 1;
	c = memcmp(x->src, y->src, 16);
	if (c)
		return c;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

/* Set route.prefix_rt on the routes the RTM_F_PREFIX dump returned. */
static void mark_prefix_routes(struct snapshot *s)
{
	if (!s->nprefix_keys)
		return;
	qsort(s->prefix_keys, s->nprefix_keys, sizeof(*s->prefix_keys), cmp_prefix_key);
	for (size_t i = 0; i < s->nroutes; i++) {
		struct route *r = &s->routes[i];
		struct prefix_key k = { .table = r->table,
					.metric = r->metric,
					.dst_len = r->dst_len,
					.src_len = r->src_len,
					.ifindex = r->nh_count == 1 ? r->nh.ifindex : 0 };

		memcpy(k.dst, r->dst, 16);
		memcpy(k.src, r->src, 16);
		if (bsearch(&k, s->prefix_keys, s->nprefix_keys, sizeof(k), cmp_prefix_key))
			r->prefix_rt = 1;
	}
}

/* Append one record to out (grown as needed). */
static int push(struct route **out, size_t *n, size_t *cap, const struct route *r)
{
	if (*n == *cap) {
		struct route *p = realloc(*out, *cap * 2 * sizeof(**out));

		if (!p)
			return -ENOMEM;
		*out = p;
		*cap *= 2;
	}
	(*out)[(*n)++] = *r;
	return 0;
}

/* Open table id at the end of s->tables, starting at record first. */
static struct snapshot_table *open_table(struct snapshot *s, uint32_t id, size_t first)
{
	struct snapshot_table *t;

	if (grow((void **)&s->tables, &s->tables_cap, s->ntables, sizeof(*s->tables)))
		return NULL;
	t = &s->tables[s->ntables++];
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->first = (uint32_t)first;
	return t;
}

/* Close table t: its placeholder row if it has no ::/0 (from ::/0) route. */
static int close_table(struct route **out, size_t *n, size_t *cap, struct snapshot_table *t,
		       int has_default)
{
	t->routes = (uint32_t)(*n - t->first);
	if (!has_default) {
		struct route p;

		memset(&p, 0, sizeof(p));
		p.table = t->id;
		p.placeholder = 1;
		p.metric = 0xffffffff;
		p.type = RTN_UNREACHABLE;
		p.pref = ROUTE_PREF_NONE;
		p.metrics_idx = UINT32_MAX;
		if (push(out, n, cap, &p))
			return -ENOMEM;
		t->lines++;
	}
	t->count = (uint32_t)(*n - t->first);
	return 0;
}

static int cmp_bucket(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a % TABLE_HASHSZ, y = *(const uint32_t *)b % TABLE_HASHSZ;

	return x < y ? -1 : x > y;
}

/* Whether the dump listed table id: routes come grouped by table, so compare run heads. */
static int in_dump(const struct snapshot *s, const uint32_t *heads, size_t nheads, uint32_t id)
{
	for (size_t k = 0; k < nheads; k++)
		if (s->routes[heads[k]].table == id)
			return 1;
	return 0;
}

/*
 * Split the records (in dump order, which is the kernel's table order) into tables, add the
 * kernel's placeholder row to every table whose root has no route (no ::/0 from ::/0), and
 * add the tables that exist without routes (main and local always; others the collector
 * found with snapshot_add_empty_table()) as lone placeholder rows. An empty table goes
 * where the kernel keeps it: its bucket (id % 256) in order; within the bucket we cannot
 * know its age, and put it after the tables that have routes (main and local, which the
 * kernel creates first, are the oldest of theirs). Rebuilds s->routes.
 */
/*
 * The tables as the caller added them (snapshot.ordered_tables): routes grouped by table in
 * kernel table order, an empty table as one placeholder record of its own. Only the
 * placeholder rows of tables without a ::/0 route are added here.
 */
static int build_tables_ordered(struct snapshot *s)
{
	size_t nout = 0, cap = s->nroutes + 64, i = 0;
	struct route *out = malloc(cap * sizeof(*out));

	if (!out)
		return -ENOMEM;
	while (i < s->nroutes) {
		uint32_t id = s->routes[i].table;
		struct snapshot_table *t = open_table(s, id, nout);
		int has_default = 0;

		if (!t)
			goto nomem;
		while (i < s->nroutes && s->routes[i].table == id) {
			const struct route *r = &s->routes[i++];

			if (r->placeholder)
				continue; /* an empty table: close_table adds its row */
			if (r->dst_len == 0 && r->src_len == 0)
				has_default = 1;
			if (push(&out, &nout, &cap, r))
				goto nomem;
			t->lines += r->nh_count > 1 ? r->nh_count : 1;
		}
		if (close_table(&out, &nout, &cap, t, has_default))
			goto nomem;
	}
	free(s->routes);
	s->routes = out;
	s->nroutes = nout;
	s->routes_cap = cap;
	return 0;
nomem:
	free(out);
	return -ENOMEM;
}

static int build_tables(struct snapshot *s)
{
	struct route *out = NULL;
	size_t nout = 0, cap = s->nroutes + 64, i = 0, e = 0, ne = 0, nheads = 0;
	uint32_t *empty, *heads = NULL;

	empty = malloc((s->nempty + 2) * sizeof(*empty));
	out = malloc(cap * sizeof(*out));
	if (!out || !empty)
		goto nomem;
	empty[ne++] = MAIN_TABLE;
	empty[ne++] = LOCAL_TABLE;
	for (size_t k = 0; k < s->nempty; k++) {
		int dup = 0;

		for (size_t j = 0; j < ne; j++)
			dup |= empty[j] == s->empty_tables[k];
		if (!dup)
			empty[ne++] = s->empty_tables[k];
	}
	/* keep only those the dump did not list: one pass finds where each table's run starts */
	for (size_t k = 0; k < s->nroutes; k++) {
		if (k && s->routes[k].table == s->routes[k - 1].table)
			continue;
		if (!(nheads & (nheads + 1))) { /* 0, 1, 3, 7, ...: grow to the next power of two */
			uint32_t *p = realloc(heads, (2 * nheads + 2) * sizeof(*heads));

			if (!p)
				goto nomem;
			heads = p;
		}
		heads[nheads++] = (uint32_t)k;
	}
	for (size_t k = 0; k < ne;) {
		if (in_dump(s, heads, nheads, empty[k]))
			empty[k] = empty[--ne];
		else
			k++;
	}
	/* by bucket, stable: same-bucket tables keep the (kernel) order they were seen in */
	for (size_t k = 1; k < ne; k++) {
		uint32_t x = empty[k];
		size_t j = k;

		while (j > 0 && cmp_bucket(&empty[j - 1], &x) > 0) {
			empty[j] = empty[j - 1];
			j--;
		}
		empty[j] = x;
	}
	while (i < s->nroutes || e < ne) {
		struct snapshot_table *t;
		int has_default = 0;
		uint32_t id;

		/* empty tables of an earlier bucket come first */
		if (e < ne && (i == s->nroutes ||
			       empty[e] % TABLE_HASHSZ < s->routes[i].table % TABLE_HASHSZ)) {
			t = open_table(s, empty[e++], nout);
			if (!t || close_table(&out, &nout, &cap, t, 0))
				goto nomem;
			continue;
		}
		id = s->routes[i].table;
		t = open_table(s, id, nout);
		if (!t)
			goto nomem;
		while (i < s->nroutes && s->routes[i].table == id) {
			const struct route *r = &s->routes[i++];

			if (r->dst_len == 0 && r->src_len == 0)
				has_default = 1;
			if (push(&out, &nout, &cap, r))
				goto nomem;
			t->lines += r->nh_count > 1 ? r->nh_count : 1;
		}
		if (close_table(&out, &nout, &cap, t, has_default))
			goto nomem;
		/* same-bucket empty tables go after this bucket's tables that have routes */
		while (
		    e < ne && empty[e] % TABLE_HASHSZ == id % TABLE_HASHSZ &&
		    (i == s->nroutes || s->routes[i].table % TABLE_HASHSZ != id % TABLE_HASHSZ)) {
			t = open_table(s, empty[e++], nout);
			if (!t || close_table(&out, &nout, &cap, t, 0))
				goto nomem;
		}
	}
	free(empty);
	free(heads);
	free(s->routes);
	s->routes = out;
	s->nroutes = nout;
	s->routes_cap = cap;
	return 0;
nomem:
	free(empty);
	free(heads);
	free(out);
	return -ENOMEM;
}

size_t snapshot_expiring_after(const struct snapshot *s, int64_t t_ms)
{
	size_t lo = 0, hi = s->nexpiring;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->routes[s->expiring[mid]].expires_ms <= t_ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct snapshot *s_sort_ctx;
static int cmp_expiry(const void *a, const void *b)
{
	int64_t x = s_sort_ctx->routes[*(const uint32_t *)a].expires_ms;
	int64_t y = s_sort_ctx->routes[*(const uint32_t *)b].expires_ms;

	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The expiring-route index: only routes with a deadline, soonest first. */
static int build_expiring(struct snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nroutes; i++)
		n += s->routes[i].expires_ms != 0;
	if (!n)
		return 0;
	s->expiring = malloc(n * sizeof(*s->expiring));
	if (!s->expiring)
		return -ENOMEM;
	for (size_t i = 0; i < s->nroutes; i++)
		if (s->routes[i].expires_ms != 0)
			s->expiring[s->nexpiring++] = (uint32_t)i;
	s_sort_ctx = s; /* collector thread only */
	qsort(s->expiring, s->nexpiring, sizeof(*s->expiring), cmp_expiry);
	s_sort_ctx = NULL;
	return 0;
}

int snapshot_finish(struct snapshot *s)
{
	int ret;

	if (s->nlinks)
		qsort(s->links, s->nlinks, sizeof(*s->links), cmp_link);
	if (s->nnhobjs)
		qsort(s->nhobjs, s->nnhobjs, sizeof(*s->nhobjs), cmp_nhobj);
	mark_prefix_routes(s);
	ret = s->ordered_tables ? build_tables_ordered(s) : build_tables(s);
	if (!ret)
		ret = build_expiring(s);
	if (!ret)
		ret = render_proc_build(s);
	if (!ret)
		ret = render_json_build(s);
	if (!ret)
		ret = index_build(s);
	if (!ret)
		ret = render_metrics_build(s);
	return ret;
}

static void snapshot_destroy(struct snapshot *s)
{
#ifdef RTSNAP_POISON
	if (s->routes)
		memset(s->routes, 0x6b, s->nroutes * sizeof(*s->routes));
	if (s->proc_text)
		memset(s->proc_text, 0x6b, s->proc_len);
#endif
	free(s->routes);
	free(s->nexthops);
	free(s->metrics);
	free_encaps(s);
	free(s->tables);
	free(s->links);
	free(s->prefix_keys);
	free(s->nhobjs);
	free(s->empty_tables);
	free(s->expiring);
	free(s->proc_text);
	render_json_free(s->json);
	render_metrics_free(s->metrics_view);
	index_free(s->lookup);
	names_free(s->names);
	if (s->retired) {
		__atomic_sub_fetch(&s_retired_bytes, s->bytes, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&s_retired, 1, __ATOMIC_RELAXED);
	}
#ifdef RTSNAP_POISON
	memset(s, 0x6b, sizeof(*s));
#endif
	free(s);
	__atomic_sub_fetch(&s_live, 1, __ATOMIC_RELAXED);
}

void snapshot_free(struct snapshot *s)
{
	if (s)
		snapshot_destroy(s);
}

/* Count old as retired (it may still have readers), then drop the publication's reference. */
static void retire(struct snapshot *old)
{
	old->retired = 1; /* before the release: the last reader reads it in snapshot_destroy */
	__atomic_add_fetch(&s_retired, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s_retired_bytes, old->bytes, __ATOMIC_RELAXED);
	snapshot_release(old);
}

void snapshot_publish(struct snapshot *s)
{
	struct snapshot *old;

	s->generation = ++s_generation;
	s->refs = 1; /* the publication's own reference */
	s->bytes = snapshot_bytes_estimate(s);
	__atomic_store_n(&s_current_bytes, s->bytes, __ATOMIC_RELAXED);
	old = current_xchg(s);
	if (old) {
		urcu_bp_synchronize_rcu();
		void (*hook)(uint64_t) = __atomic_load_n(&s_retire_hook, __ATOMIC_ACQUIRE);

		retire(old);
		if (hook)
			hook(s->generation);
	}
}

struct snapshot *snapshot_acquire(void)
{
	struct snapshot *s;

	urcu_bp_read_lock();
	s = current_load();
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	urcu_bp_read_unlock();
	return s;
}

void snapshot_release(struct snapshot *s)
{
	if (!s)
		return;
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		snapshot_destroy(s);
}

void snapshot_shutdown(void)
{
	struct snapshot *old = current_xchg(NULL);

	__atomic_store_n(&s_current_bytes, 0, __ATOMIC_RELAXED);
	if (old) {
		urcu_bp_synchronize_rcu();
		retire(old);
	}
}
