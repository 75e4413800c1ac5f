// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - build, seal, publish and retire snapshots.
 *
 * Threads and ownership:
 *   - Snapshots are published on a chain (struct snapshot_chain): one per collector instance,
 *     holding the current snapshot, the generation count, the retirement accounting and the
 *     hold lists; two chains share nothing. A chain lives as long as its owner and its last
 *     snapshot (each snapshot made for it holds a reference on it).
 *   - The collector thread is the only writer of a chain. It builds a snapshot privately
 *     (snapshot_new, snapshot_add_*, snapshot_seal() or compose.h's snapshot_finish()), then
 *     calls snapshot_publish(), which swaps it into the chain's current pointer with
 *     rcu_xchg_pointer(). After that nobody writes the snapshot again.
 *   - Readers (HTTP workers, the proc-file writer) call snapshot_acquire(chain): inside an RCU
 *     read-side critical section they dereference the current pointer once and take a reference
 *     (refs++). They may then use the snapshot for as long as they like (an HTTP response
 *     being sent asynchronously, say) and drop it with snapshot_release().
 *   - Publication holds one reference of its own. snapshot_publish() swaps the pointer, waits
 *     for an RCU grace period (so no reader can still be between the dereference and its
 *     refs++), then drops the publication reference of the old snapshot; old snapshots
 *     replaced in quick succession share one grace period (RETIRE_WAIT_MS below). Whoever
 *     drops the last reference frees it. Nothing else frees a published snapshot.
 *   - Accounting: publication sets s->bytes (snapshot_bytes_estimate); a snapshot that is
 *     retired while readers still hold it is counted (the chain's retired, retired_bytes) until its
 *     last reader frees it; what it shares with an older live snapshot then moves to that one
 *     (move_held_bytes()). After each retirement the retire hook runs on the collector
 *     thread: the HTTP layer uses it to bound what slow responses pin (http_pin.c).
 *   - Segments are immutable and shared with other snapshots and with the collector's
 *     mirror; who holds references on them, and when they go, is told once in segment.h.
 *     This file keeps the chain's hold list (below) that rule 3 there relies on.
 *   - Builds with RTSNAP_POISON overwrite a snapshot before freeing it, so a reader that
 *     touches a retired snapshot reads garbage that the stress test notices (and ASan/TSan
 *     report the access itself).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "rtsnap/array.h"
#include "rtsnap/log.h"
#include "rtsnap/names.h"
#include "rtsnap/order.h"
#include "rtsnap/render_family.h"
#include "rtsnap/render_route.h"
#include "rtsnap/segment.h"
#include "rtsnap/snapshot_impl.h"

#define MAIN_TABLE 254
#define LOCAL_TABLE 255
#define TABLE_HASHSZ 256 /* FIB6_TABLE_HASHSZ with multiple tables */

/*
 * One chain of snapshots: what one collector instance publishes and its readers acquire.
 * Everything here is the chain's own; two chains in one process share nothing but the
 * process-wide allocation count (s_live).
 */
struct snapshot_chain {
	struct snapshot *current; /* RCU-protected; written only by snapshot_publish() */
	uint64_t generation;	  /* the publishing thread only */
	uint64_t last_composed;	  /* serial of the snapshot composed last (the one builder) */
	size_t last_ngroups;	  /* its groups when it was composed (the next one's arrays) */
	long refs;		  /* atomic: the owner's, and one per snapshot made for it */
	long retired;		  /* retired, not yet freed (atomic) */
	size_t retired_bytes;	  /* their bytes (atomic) */
	size_t current_bytes;	  /* bytes of current (atomic) */
	void (*retire_hook)(uint64_t current_generation);
	/* replaced, awaiting the grace period that retires them together (oldest first); the
	 * publishing thread only */
	struct snapshot *retiring_head, *retiring_tail;
	unsigned int nretiring;
	int64_t last_grace_ms; /* CLOCK_MONOTONIC when the last grace period ended */
	/* segments held for snapshots without references (below), under hold_lock */
	pthread_mutex_t hold_lock;
	struct snapshot *hold_head, *hold_tail;
	long held_back;	 /* entries in the listed snapshots' back lists */
	long held_gback; /* and in their lists of groups */
	long lost;	 /* references kept for ever when a back list could not grow */
};

/*
 * ThreadSanitizer cannot see liburcu's inline-assembly barriers, so under TSan the pointer is
 * published and read with the C11 atomics of the same meaning (release on publish, acquire
 * on read) and TSan checks the ordering for real. The grace period itself stays liburcu's.
 */
#if defined(__SANITIZE_THREAD__)
#define current_xchg(c, v) __atomic_exchange_n(&(c)->current, (v), __ATOMIC_ACQ_REL)
#define current_load(c) __atomic_load_n(&(c)->current, __ATOMIC_ACQUIRE)
#else
#define current_xchg(c, v) rcu_xchg_pointer(&(c)->current, (v))
#define current_load(c) rcu_dereference((c)->current)
#endif
static long s_live; /* snapshots allocated and not freed, in every chain (atomic) */

/*
 * Segments held for snapshots without references. Snapshots that hold segments so are
 * listed from their seal to their destruction, by serial (the oldest first). A segment the
 * mirror gives up (snapshot_defer_put()) is in every listed snapshot composed since it was
 * built (segment.since) and in no later one (the mirror no longer has it): each of those
 * takes a reference on it, kept in its `back` list and dropped when it is freed. Usually
 * that is one snapshot, the current one; a slow reader's old snapshot holds back only the
 * segments it contains. All under the chain's hold_lock, O(snapshots holding it) per
 * segment given up; a destroyed snapshot's references are dropped outside it. The chain is
 * the one whose snapshot first held the segment (segment.holder).
 */
static int grow(void **arr, size_t *cap, size_t n, size_t sz);

long snapshot_deferred_count(struct snapshot_chain *c)
{
	long n;

	pthread_mutex_lock(&c->hold_lock);
	n = c->held_back + c->lost;
	pthread_mutex_unlock(&c->hold_lock);
	return n;
}

/*
 * Hand a given-up segment (seg) or group (grp) to every listed snapshot of c composed since
 * `since`: the first takes the caller's reference, the others one each. How many took it.
 */
static int hold_back(struct snapshot_chain *c, uint64_t since, struct segment *seg,
		     struct seggroup *grp)
{
	struct snapshot *p;
	int holders = 0;

	pthread_mutex_lock(&c->hold_lock);
	for (p = c->hold_tail; since && p && p->serial >= since; p = p->held_prev) {
		int full;

		if (holders++) {
			if (seg)
				segment_get(seg);
			else
				seggroup_get(grp);
		}
		full = seg ? grow((void **)&p->back, &p->back_cap, p->nback, sizeof(*p->back))
			   : grow((void **)&p->gback, &p->gback_cap, p->ngback, sizeof(*p->gback));
		if (full) {
			c->lost++; /* better kept for ever than freed under a reader */
			continue;
		}
		if (seg) {
			p->back[p->nback++] = seg;
			c->held_back++;
		} else {
			p->gback[p->ngback++] = grp;
			c->held_gback++;
		}
	}
	pthread_mutex_unlock(&c->hold_lock);
	return holders;
}

void snapshot_defer_put(struct segment *g)
{
	if (g && !(g->holder && hold_back(g->holder, g->since, g, NULL)))
		segment_put(g); /* no snapshot alive contains it */
}

void snapshot_defer_put_group(struct seggroup *g)
{
	if (g && !(g->holder && hold_back(g->holder, g->since, NULL, g)))
		seggroup_put(g);
}

/* At its seal: list s among the snapshots that given-up segments are held for. */
static void hold_list(struct snapshot *s)
{
	struct snapshot_chain *c = s->chain;
	struct snapshot *p;

	pthread_mutex_lock(&c->hold_lock);
	for (p = c->hold_tail; p && p->serial > s->serial; p = p->held_prev)
		;
	s->held_prev = p;
	s->held_next = p ? p->held_next : c->hold_head;
	if (s->held_next)
		s->held_next->held_prev = s;
	else
		c->hold_tail = s;
	if (p)
		p->held_next = s;
	else
		c->hold_head = s;
	s->listed = 1;
	pthread_mutex_unlock(&c->hold_lock);
}

/*
 * A retired snapshot counts what it did not share with its successor when it was retired. The
 * segments it held back and shares with an older snapshot p still alive stay alive for p once
 * it is freed: they are p's cost from now on, so their bytes move to p (else a slow reader's
 * old snapshot pinned far more than rtsnap_snapshots_pinned_bytes said: 146 MB in use for
 * 80 MB counted). p holds segment g iff p->serial >= g->since (snapshot_defer_put()). Under
 * hold_lock, which p's own destruction takes before it reads p->bytes.
 */
static void move_held_bytes(struct snapshot *s, struct snapshot *p)
{
	size_t t = 0, own = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&s->retired, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&p->retired, __ATOMIC_RELAXED))
		return;
	for (size_t k = 0; k < s->nback; k++)
		if (s->back[k]->since <= p->serial)
			t += s->back[k]->bytes;
	if (t > own)
		t = own;
	__atomic_store_n(&s->bytes, own - t, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->bytes, t, __ATOMIC_RELAXED);
}

/* At its destruction: unlist s, hand what it counted of the segments an older snapshot still
 * holds to that one, and drop the references it held back. */
static void hold_unlist(struct snapshot *s)
{
	struct snapshot_chain *c = s->chain;

	pthread_mutex_lock(&c->hold_lock);
	if (s->held_prev)
		move_held_bytes(s, s->held_prev);
	if (s->held_prev)
		s->held_prev->held_next = s->held_next;
	else
		c->hold_head = s->held_next;
	if (s->held_next)
		s->held_next->held_prev = s->held_prev;
	else
		c->hold_tail = s->held_prev;
	c->held_back -= (long)s->nback;
	c->held_gback -= (long)s->ngback;
	pthread_mutex_unlock(&c->hold_lock);
	for (size_t k = 0; k < s->ngback; k++)
		seggroup_put(s->gback[k]);
	free(s->gback);
	for (size_t k = 0; k < s->nback; k++)
		segment_put(s->back[k]);
	if (s->nback)
		segment_reclaim();
	free(s->back);
}

long snapshot_retired_count(struct snapshot_chain *c)
{
	return __atomic_load_n(&c->retired, __ATOMIC_RELAXED);
}

size_t snapshot_retired_bytes(struct snapshot_chain *c)
{
	return __atomic_load_n(&c->retired_bytes, __ATOMIC_RELAXED);
}

size_t snapshot_current_bytes(struct snapshot_chain *c)
{
	return __atomic_load_n(&c->current_bytes, __ATOMIC_RELAXED);
}

void snapshot_set_retire_hook(struct snapshot_chain *c, void (*fn)(uint64_t current_generation))
{
	__atomic_store_n(&c->retire_hook, fn, __ATOMIC_RELEASE); /* the collector may be running */
}

int snapshot_chain_new(struct snapshot_chain **out)
{
	struct snapshot_chain *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->hold_lock, NULL)) {
		free(c);
		return -ENOMEM;
	}
	c->refs = 1;
	*out = c;
	return 0;
}

struct snapshot_chain *snapshot_chain_get(struct snapshot_chain *c)
{
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void snapshot_chain_put(struct snapshot_chain *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		pthread_mutex_destroy(&c->hold_lock);
		free(c);
	}
}

size_t snapshot_bytes_estimate(const struct snapshot *s)
{
	size_t b = sizeof(*s);

	b += s->ngroups * (sizeof(*s->groups) + sizeof(*s->group_first) + sizeof(*s->group_seg0)) +
	     s->ntables * sizeof(*s->tables);
	b += s->ctx.nlinks * sizeof(*s->ctx.links) + s->ctx.nnhobjs * sizeof(*s->ctx.nhobjs);
	b += s->nexpiring * sizeof(*s->expiring) + s->nexp_groups * sizeof(*s->exp_groups);
	return b + s->views.bytes + s->seg_bytes;
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

int snapshot_new(struct snapshot_chain *c, struct snapshot **out)
{
	static uint64_t serial; /* atomic */
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->serial = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
	s->chain = snapshot_chain_get(c);
	__atomic_add_fetch(&s_live, 1, __ATOMIC_RELAXED);
	*out = s;
	return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	return array_grow(arr, cap, n, sz, 64);
}

/* ---- records added one by one (snapshot_add_route), cut into segments by finish ---- */

/* Staged records own their hops and metrics (malloc()ed copies, freed by stage_free); their
 * hops' encapsulations are copied into blocks of the stage that never move (stage_encaps). */
struct stage_encaps {
	struct stage_encaps *next;
	size_t used, cap;
	unsigned char b[] __attribute__((aligned(8)));
};

struct snapshot_stage {
	struct route *routes;
	size_t n, cap;
	struct stage_encaps *enc;
	uint32_t *empty; /* tables that exist without routes (see build_tables) */
	size_t nempty, empty_cap;
	struct prefix_key *pk; /* RTF_PREFIX_RT routes seen in the second dump */
	size_t npk, pk_cap;
};

static struct snapshot_stage *stage_of(struct snapshot *s)
{
	if (!s->stage)
		s->stage = calloc(1, sizeof(*s->stage));
	return s->stage;
}

#define STAGE_ENCAPS_BLOCK 65536

/* Copy the encapsulations of record d (its hops nhs, for multipath) into the stage and point
 * d's hops at them. 0 or -ENOMEM. */
static int stage_encaps(struct snapshot_stage *st, struct route *d, struct route_nh *nhs)
{
	size_t n = route_encaps_size(d, nhs);
	struct stage_encaps *b = st->enc;

	if (n && (!b || b->cap - b->used < n)) {
		size_t cap = n > STAGE_ENCAPS_BLOCK ? n : STAGE_ENCAPS_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return -ENOMEM;
		b->next = st->enc;
		b->used = 0;
		b->cap = cap;
		st->enc = b;
	}
	route_encaps_copy(d, nhs, n ? b->b + b->used : NULL);
	if (n)
		b->used += n;
	return 0;
}

static void stage_free(struct snapshot_stage *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free((void *)st->routes[i].nhs);
		free((void *)st->routes[i].metrics);
	}
	while (st->enc) {
		struct stage_encaps *b = st->enc;

		st->enc = b->next;
		free(b);
	}
	free(st->routes);
	free(st->empty);
	free(st->pk);
	free(st);
}

int snapshot_add_route(struct snapshot *s, const struct route *r, const struct route_nh *nhs,
		       size_t nnh, const struct route_metrics *m)
{
	struct snapshot_stage *st = stage_of(s);
	struct route_nh *n = NULL;
	struct route_metrics *mm = NULL;
	struct route *d;

	if (!st || grow((void **)&st->routes, &st->cap, st->n, sizeof(*st->routes)))
		return -ENOMEM;
	if (r->nh_count > 1) {
		if (nnh != r->nh_count)
			return -EINVAL;
		n = malloc(nnh * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memcpy(n, nhs, nnh * sizeof(*n));
	}
	if (m && m->mask) {
		mm = malloc(sizeof(*mm));
		if (!mm) {
			free(n);
			return -ENOMEM;
		}
		*mm = *m;
	}
	d = &st->routes[st->n];
	*d = *r;
	if (stage_encaps(st, d, n)) {
		free(n);
		free(mm);
		return -ENOMEM;
	}
	st->n++;
	d->nhs = n;
	d->metrics = mm;
	return 0;
}

int snapshot_add_link(struct snapshot *s, const struct route_link *l)
{
	return route_ctx_add_link(&s->ctx, l);
}

int snapshot_add_nhobj(struct snapshot *s, const struct route_nhobj *o)
{
	return route_ctx_add_nhobj(&s->ctx, o);
}

int snapshot_add_empty_table(struct snapshot *s, uint32_t id)
{
	struct snapshot_stage *st = stage_of(s);

	if (!st || grow((void **)&st->empty, &st->empty_cap, st->nempty, sizeof(*st->empty)))
		return -ENOMEM;
	st->empty[st->nempty++] = id;
	return 0;
}

int snapshot_add_prefix_key(struct snapshot *s, const struct prefix_key *k)
{
	struct snapshot_stage *st = stage_of(s);

	if (!st || grow((void **)&st->pk, &st->pk_cap, st->npk, sizeof(*st->pk)))
		return -ENOMEM;
	st->pk[st->npk++] = *k;
	return 0;
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
static void mark_prefix_routes(struct snapshot_stage *st)
{
	if (!st->npk)
		return;
	qsort(st->pk, st->npk, sizeof(*st->pk), cmp_prefix_key);
	for (size_t i = 0; i < st->n; i++) {
		struct route *r = &st->routes[i];
		struct prefix_key k = { .table = r->table,
					.metric = r->metric,
					.dst_len = r->dst_len,
					.src_len = r->src_len,
					.ifindex = r->nh_count == 1 ? r->nh.ifindex : 0 };

		memcpy(k.dst, r->dst, 16);
		memcpy(k.src, r->src, 16);
		if (bsearch(&k, st->pk, st->npk, sizeof(k), cmp_prefix_key))
			r->prefix_rt = 1;
	}
}

/* A table of the staged records: [first, first + count) of the rebuilt array. */
struct stage_table {
	uint32_t id, first, count;
};

struct stage_out {
	struct route *r;
	size_t n, cap;
	struct stage_table *t;
	size_t nt, tcap;
	int ipv4; /* an IPv4 snapshot: no placeholder rows, no tables without routes */
};

/* Append one record to out (grown as needed); it takes over r's hops and metrics. */
static int push(struct stage_out *o, const struct route *r)
{
	if (grow((void **)&o->r, &o->cap, o->n, sizeof(*o->r)))
		return -ENOMEM;
	o->r[o->n++] = *r;
	return 0;
}

static struct stage_table *open_table(struct stage_out *o, uint32_t id)
{
	struct stage_table *t;

	if (grow((void **)&o->t, &o->tcap, o->nt, sizeof(*o->t)))
		return NULL;
	t = &o->t[o->nt++];
	t->id = id;
	t->first = (uint32_t)o->n;
	t->count = 0;
	return t;
}

/* Close table t: its placeholder row if it has no ::/0 (from ::/0) route. */
static int close_table(struct stage_out *o, struct stage_table *t, int has_default)
{
	if (!has_default && !o->ipv4) {
		struct route p;

		memset(&p, 0, sizeof(p));
		p.table = t->id;
		p.placeholder = 1;
		p.metric = 0xffffffff;
		p.type = RTN_UNREACHABLE;
		p.pref = ROUTE_PREF_NONE;
		if (push(o, &p))
			return -ENOMEM;
	}
	t->count = (uint32_t)(o->n - t->first);
	return 0;
}

static int cmp_bucket(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a % TABLE_HASHSZ, y = *(const uint32_t *)b % TABLE_HASHSZ;

	return x < y ? -1 : x > y;
}

/* Whether the dump listed table id: routes come grouped by table, so compare run heads. */
static int in_dump(const struct snapshot_stage *st, const uint32_t *heads, size_t nheads,
		   uint32_t id)
{
	for (size_t k = 0; k < nheads; k++)
		if (st->routes[heads[k]].table == id)
			return 1;
	return 0;
}

/*
 * The tables as the caller added them (snapshot.ordered_tables): routes grouped by table in
 * kernel table order, an empty table as one placeholder record of its own. Only the
 * placeholder rows of tables without a ::/0 route are added here.
 */
static int build_tables_ordered(struct snapshot_stage *st, struct stage_out *o)
{
	size_t i = 0;

	while (i < st->n) {
		uint32_t id = st->routes[i].table;
		struct stage_table *t = open_table(o, id);
		int has_default = 0;

		if (!t)
			return -ENOMEM;
		while (i < st->n && st->routes[i].table == id) {
			struct route *r = &st->routes[i++];

			if (r->placeholder)
				continue; /* an empty table: close_table adds its row */
			if (r->dst_len == 0 && r->src_len == 0)
				has_default = 1;
			if (push(o, r))
				return -ENOMEM;
			r->nhs = NULL; /* moved */
			r->metrics = NULL;
		}
		if (close_table(o, t, has_default))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Split the records (in dump order, which is the kernel's table order) into tables, add the
 * kernel's placeholder row to every table whose root has no route (no ::/0 from ::/0), and
 * add the tables that exist without routes (main and local always; others the collector
 * found with snapshot_add_empty_table()) as lone placeholder rows. An empty table goes
 * where the kernel keeps it: its bucket (id % 256) in order; within the bucket we cannot
 * know its age, and put it after the tables that have routes (main and local, which the
 * kernel creates first, are the oldest of theirs).
 */
static int build_tables(struct snapshot_stage *st, struct stage_out *o)
{
	size_t i = 0, e = 0, ne = 0, nheads = 0;
	uint32_t *empty, *heads = NULL;
	int ret = -ENOMEM;

	empty = malloc((st->nempty + 2) * sizeof(*empty));
	if (!empty)
		goto out;
	if (!o->ipv4) {
		empty[ne++] = MAIN_TABLE;
		empty[ne++] = LOCAL_TABLE;
	}
	for (size_t k = 0; k < st->nempty; k++) {
		int dup = 0;

		for (size_t j = 0; j < ne; j++)
			dup |= empty[j] == st->empty[k];
		if (!dup)
			empty[ne++] = st->empty[k];
	}
	/* keep only those the dump did not list: one pass finds where each table's run starts */
	for (size_t k = 0; k < st->n; k++) {
		if (k && st->routes[k].table == st->routes[k - 1].table)
			continue;
		if (!(nheads & (nheads + 1))) { /* 0, 1, 3, 7, ...: grow to the next power of two */
			uint32_t *p = realloc(heads, (2 * nheads + 2) * sizeof(*heads));

			if (!p)
				goto out;
			heads = p;
		}
		heads[nheads++] = (uint32_t)k;
	}
	for (size_t k = 0; k < ne;) {
		if (in_dump(st, heads, nheads, empty[k]))
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
	while (i < st->n || e < ne) {
		struct stage_table *t;
		int has_default = 0;
		uint32_t id;

		/* empty tables of an earlier bucket come first */
		if (e < ne &&
		    (i == st->n || empty[e] % TABLE_HASHSZ < st->routes[i].table % TABLE_HASHSZ)) {
			t = open_table(o, empty[e++]);
			if (!t || close_table(o, t, 0))
				goto out;
			continue;
		}
		id = st->routes[i].table;
		t = open_table(o, id);
		if (!t)
			goto out;
		while (i < st->n && st->routes[i].table == id) {
			struct route *r = &st->routes[i++];

			if (r->dst_len == 0 && r->src_len == 0)
				has_default = 1;
			if (push(o, r))
				goto out;
			r->nhs = NULL; /* moved */
			r->metrics = NULL;
		}
		if (close_table(o, t, has_default))
			goto out;
		/* same-bucket empty tables go after this bucket's tables that have routes */
		while (e < ne && empty[e] % TABLE_HASHSZ == id % TABLE_HASHSZ &&
		       (i == st->n || st->routes[i].table % TABLE_HASHSZ != id % TABLE_HASHSZ)) {
			t = open_table(o, empty[e++]);
			if (!t || close_table(o, t, 0))
				goto out;
		}
	}
	ret = 0;
out:
	free(empty);
	free(heads);
	return ret;
}

/* Stable insertion-order tie break for sorting a table's records by kernel order key. */
struct keyed {
	struct order_key k;
	uint32_t pos;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = order_key_cmp(&x->k, &y->k);

	return c ? c : (x->pos < y->pos ? -1 : x->pos > y->pos);
}

/* Records [first, first + n) in kernel key order (the placeholder row, if any, stays last):
 * a dump always lists them so, the check is for records added by hand. */
static int sort_table(struct route *r, uint32_t n)
{
	struct keyed *k;
	struct route *tmp;
	int sorted = 1;

	if (n && r[n - 1].placeholder)
		n--;
	for (uint32_t i = 1; i < n && sorted; i++)
		sorted = order_route_cmp(&r[i - 1], &r[i]) <= 0;
	if (sorted)
		return 0;
	k = malloc(n * sizeof(*k));
	tmp = malloc(n * sizeof(*tmp));
	if (!k || !tmp) {
		free(k);
		free(tmp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		order_key_of(&r[i], &k[i].k);
		k[i].pos = i;
	}
	qsort(k, n, sizeof(*k), cmp_keyed);
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = r[k[i].pos];
	memcpy(r, tmp, n * sizeof(*r));
	free(k);
	free(tmp);
	return 0;
}

/* Cut the staged records into segments of at most SEGMENT_MAX records per table. */
static int stage_segments(struct snapshot *s)
{
	struct snapshot_stage *st = s->stage;
	struct stage_out o = { .ipv4 = s->family == AF_INET };
	struct segment_in *in = NULL;
	int ret;

	mark_prefix_routes(st);
	ret = s->ordered_tables ? build_tables_ordered(st, &o) : build_tables(st, &o);
	if (!ret)
		in = malloc(SEGMENT_MAX * sizeof(*in));
	if (!ret && !in)
		ret = -ENOMEM;
	for (size_t t = 0; !ret && t < o.nt; t++) {
		const struct stage_table *tb = &o.t[t];

		ret = sort_table(&o.r[tb->first], tb->count);
		for (uint32_t i = 0; !ret && i < tb->count; i += SEGMENT_MAX) {
			uint32_t n = tb->count - i < SEGMENT_MAX ? tb->count - i : SEGMENT_MAX;
			struct segment *g;

			for (uint32_t k = 0; k < n; k++) {
				const struct route *r = &o.r[tb->first + i + k];

				in[k].r = r;
				in[k].nhs = r->nhs;
				in[k].m = r->metrics;
				in[k].src = -1;
			}
			ret = segment_build(&s->ctx, tb->id, in, n, NULL, &g);
			if (!ret) {
				ret = snapshot_add_segment(s, g);
				segment_put(g);
			}
		}
	}
	for (size_t i = 0; i < o.n; i++) {
		free((void *)o.r[i].nhs);
		free((void *)o.r[i].metrics);
	}
	free(o.r);
	free(o.t);
	free(in);
	return ret;
}

/* ---- composition ---- */

int snapshot_prepare(struct snapshot *s)
{
	route_ctx_sort(&s->ctx);
	return 0;
}

/*
 * Append group g and count it in one go, from its sums (sum and nsegs: g's, as the caller
 * knows them; g itself is not read): record and segment offsets, tables, prefix lengths,
 * expiring records, proc bytes, memory. Nothing after this walks its segments. No reference
 * is taken.
 */
static int add_group(struct snapshot *s, struct seggroup *g, const struct segment_sum *sum,
		     uint32_t nsegs)
{
	struct snapshot_table *t = s->ntables ? &s->tables[s->ntables - 1] : NULL;
	size_t k = s->ngroups, cap = s->groups_cap;

#ifdef RTSNAP_POISON
	if (memcmp(sum, &g->sum, sizeof(*sum)) || nsegs != g->nsegs) {
		log_err("snapshot: a group added with sums that are not its own");
		abort();
	}
#endif
	if (s->nroutes + sum->n > UINT32_MAX || s->nsegs + nsegs > UINT32_MAX)
		return -E2BIG;
	/* as many groups as the last composition had, at once: not three reallocations of
	 * three arrays per publication */
	if (!k && s->chain && s->chain->last_ngroups &&
	    grow((void **)&s->groups, &s->groups_cap, s->chain->last_ngroups, sizeof(*s->groups)))
		return -ENOMEM;
	if (grow((void **)&s->groups, &s->groups_cap, k, sizeof(*s->groups)))
		return -ENOMEM;
	if (s->groups_cap != cap || !s->group_first) {
		uint32_t *p = realloc(s->group_first, (s->groups_cap + 1) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->group_first = p;
		p = realloc(s->group_seg0, (s->groups_cap + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->group_seg0 = p;
	}
	if (!t || t->id != sum->table) {
		if (grow((void **)&s->tables, &s->tables_cap, s->ntables, sizeof(*s->tables)))
			return -ENOMEM;
		t = &s->tables[s->ntables++];
		memset(t, 0, sizeof(*t));
		t->id = sum->table;
		t->first = (uint32_t)s->nroutes;
		t->seg0 = (uint32_t)s->nsegs;
		t->g0 = (uint32_t)k;
	}
	if (sum->nexp && grow((void **)&s->exp_groups, &s->exp_groups_cap, s->nexp_groups,
			      sizeof(*s->exp_groups)))
		return -ENOMEM;
	s->groups[k] = g;
	s->group_first[k] = (uint32_t)s->nroutes;
	s->group_seg0[k] = (uint32_t)s->nsegs;
	t->count += sum->n;
	t->lines += sum->lines;
	t->nseg += nsegs;
	t->ng++;
	t->routes += sum->nreal;
	for (int w = 0; w < 3; w++) {
		t->lens0[w] |= sum->lens0[w];
		t->lens1[w] |= sum->lens1[w];
	}
	if (sum->nexp) {
		s->exp_groups[s->nexp_groups++] = (uint32_t)k;
		s->nexp_records += sum->nexp;
	}
	s->proc_len += sum->proc_len;
	s->seg_bytes += sum->bytes;
	if (!k && s->chain) {
		s->base_serial = s->chain->last_composed;
		s->chain->last_composed = s->serial;
	}
	s->nroutes += sum->n;
	s->nsegs += nsegs;
	s->ngroups++;
	return 0;
}

/* The group being filled by snapshot_add_segment() goes into s. */
static int flush_pend(struct snapshot *s)
{
	struct seggroup *g = s->pend;
	int ret;

	if (!g)
		return 0;
	s->pend = NULL;
	seggroup_seal(g);
	ret = add_group(s, g, &g->sum, g->nsegs);
	if (ret)
		seggroup_put(g); /* else s holds its reference now */
	return ret;
}

int snapshot_add_segment(struct snapshot *s, struct segment *g)
{
	struct segment_sum sum;
	int ret;

	if (grow((void **)&s->own, &s->own_cap, s->nown, sizeof(*s->own)))
		return -ENOMEM;
	if (s->pend && (s->pend->table != g->table || s->pend->nsegs == s->pend->cap)) {
		ret = flush_pend(s);
		if (ret)
			return ret;
	}
	if (!s->pend) {
		ret = seggroup_new(g->table, SEGGROUP_MAX, &s->pend);
		if (ret)
			return ret;
	}
	segment_sum(g, &sum);
	segment_get(g);
	s->own[s->nown++] = g;
	seggroup_set(s->pend, s->pend->nsegs, g, &sum);
	return 0;
}

int snapshot_add_group(struct snapshot *s, struct seggroup *g, const struct segment_sum *sum,
		       uint32_t nsegs, size_t shared)
{
	int ret;

	if (!s->chain || s->nown || s->pend)
		return -EINVAL; /* not mixed with segments of its own */
	ret = add_group(s, g, sum, nsegs);
	if (ret)
		return ret;
	s->holds = 1;
	if (s->base_serial)
		s->shared_bytes += shared;
	return 0;
}

void snapshot_fresh_segment(struct snapshot *s, struct segment *seg)
{
	seg->since = s->serial;
	seg->holder = s->chain;
}

void snapshot_fresh_group(struct snapshot *s, struct seggroup *g)
{
	g->since = s->serial;
	g->holder = s->chain;
}

/* The last group and segment a thread found a record or a segment in: most accesses walk
 * records in order. */
static __thread struct {
	uint64_t serial;
	size_t q;	 /* group */
	uint32_t j;	 /* member of group q */
	uint32_t r0, r1; /* its records (global indexes) */
} t_last;

static size_t group_of_record(const struct snapshot *s, size_t i)
{
	size_t lo = 0, hi = s->ngroups;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->group_first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

const struct segment *snapshot_segment_of(const struct snapshot *s, size_t i, uint32_t *pos)
{
	const struct seggroup *g;

	if (t_last.serial != s->serial || i < t_last.r0 || i >= t_last.r1) {
		size_t q = t_last.serial == s->serial && t_last.q < s->ngroups &&
				   s->group_first[t_last.q] <= i && i < s->group_first[t_last.q + 1]
			       ? t_last.q
			       : group_of_record(s, i);
		uint32_t j;

		g = s->groups[q];
		j = seggroup_member_of(g, (uint32_t)(i - s->group_first[q]));
		t_last.serial = s->serial;
		t_last.q = q;
		t_last.j = j;
		t_last.r0 = s->group_first[q] + g->first[j];
		t_last.r1 = s->group_first[q] + g->first[j + 1];
	}
	g = s->groups[t_last.q];
	*pos = (uint32_t)(i - t_last.r0);
	return g->segs[t_last.j];
}

/* The route of record i, the first of group q (or of a later group, when q is empty). */
static const struct route *group_head(const struct snapshot *s, size_t q)
{
	const struct seggroup *g = s->groups[q];

	if (g->nsegs && g->first[1] > 0)
		return &g->segs[0]->routes[0];
	return snapshot_route(s, s->group_first[q]);
}

size_t snapshot_partition(const struct snapshot *s, size_t lo, size_t hi,
			  int (*before)(const struct route *r, const void *arg), const void *arg)
{
	const struct seggroup *g;
	const struct segment *seg;
	size_t qa, qb, base;
	uint32_t ja, jb, a, b;

	/* the answer is in [lo, hi]; [lo, hi) is narrowed to one group, then one segment */
	if (lo >= hi)
		return lo;
	qa = group_of_record(s, lo);
	qb = group_of_record(s, hi - 1);
	while (qa < qb) {
		size_t qm = qa + (qb - qa + 1) / 2, i = s->group_first[qm]; /* lo < i < hi */

		if (before(group_head(s, qm), arg)) {
			lo = i + 1;
			qa = lo < s->group_first[qm + 1] ? qm : group_of_record(s, lo);
		} else {
			hi = i;
			qb = s->group_first[qm - 1] < hi ? qm - 1 : group_of_record(s, hi - 1);
		}
		if (lo >= hi)
			return lo;
	}
	g = s->groups[qa];
	base = s->group_first[qa];
	ja = seggroup_member_of(g, (uint32_t)(lo - base));
	jb = seggroup_member_of(g, (uint32_t)(hi - 1 - base));
	while (ja < jb) {
		uint32_t jm = ja + (jb - ja + 1) / 2;
		size_t i = base + g->first[jm];

		if (g->first[jm + 1] > g->first[jm] ? before(&g->segs[jm]->routes[0], arg)
						    : before(snapshot_route(s, i), arg)) {
			lo = i + 1;
			ja = lo < base + g->first[jm + 1]
				 ? jm
				 : seggroup_member_of(g, (uint32_t)(lo - base));
		} else {
			hi = i;
			jb = base + g->first[jm - 1] < hi
				 ? jm - 1
				 : seggroup_member_of(g, (uint32_t)(hi - 1 - base));
		}
		if (lo >= hi)
			return lo;
	}
	seg = g->segs[ja];
	base += g->first[ja];
	a = (uint32_t)(lo - base);
	b = (uint32_t)(hi - base);
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;

		if (before(&seg->routes[mid], arg))
			a = mid + 1;
		else
			b = mid;
	}
	return base + a;
}

const struct seggroup *snapshot_group_of(const struct snapshot *s, size_t k, uint32_t *pos)
{
	size_t lo = 0, hi = s->ngroups;

	if (t_last.serial == s->serial && t_last.q < s->ngroups && s->group_seg0[t_last.q] <= k &&
	    k < s->group_seg0[t_last.q + 1]) {
		lo = t_last.q;
	} else {
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->group_seg0[mid] <= k)
				lo = mid;
			else
				hi = mid;
		}
		t_last.serial = s->serial;
		t_last.q = lo;
		t_last.r0 = t_last.r1 = 0; /* no member known */
	}
	*pos = (uint32_t)(k - s->group_seg0[lo]);
	return s->groups[lo];
}

const struct segment *snapshot_seg(const struct snapshot *s, size_t k, uint32_t *first)
{
	uint32_t j;
	const struct seggroup *g = snapshot_group_of(s, k, &j);

	if (first)
		*first = s->group_first[t_last.q] + g->first[j];
	return g->segs[j];
}

const struct route *snapshot_route(const struct snapshot *s, size_t i)
{
	uint32_t pos;
	const struct segment *g = snapshot_segment_of(s, i, &pos);

	return &g->routes[pos];
}

size_t snapshot_expiring_after(const struct snapshot *s, int64_t t_ms)
{
	size_t lo = 0, hi = s->nexpiring;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (snapshot_route(s, s->expiring[mid])->expires_ms <= t_ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct exp_key {
	int64_t at;
	uint32_t i;
};

static int cmp_exp(const void *a, const void *b)
{
	const struct exp_key *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The end of the record offsets, and the expiring-route index: O(expiring records, and the
 * members of the groups that have some). */
static int seal(struct snapshot *s)
{
	struct exp_key *ek = NULL;
	int ret = flush_pend(s);

	if (ret)
		return ret;
	if (s->holds && s->chain)
		s->chain->last_ngroups = s->ngroups;
	if (!s->group_first) {
		s->group_first = malloc(sizeof(*s->group_first));
		s->group_seg0 = malloc(sizeof(*s->group_seg0));
		if (!s->group_first || !s->group_seg0)
			return -ENOMEM;
	}
	s->group_first[s->ngroups] = (uint32_t)s->nroutes;
	s->group_seg0[s->ngroups] = (uint32_t)s->nsegs;
	if (!s->nexp_records)
		return 0;
	ek = malloc(s->nexp_records * sizeof(*ek));
	s->expiring = malloc(s->nexp_records * sizeof(*s->expiring));
	if (!ek || !s->expiring) {
		free(ek);
		return -ENOMEM;
	}
	for (size_t e = 0; e < s->nexp_groups; e++) {
		size_t q = s->exp_groups[e];
		const struct seggroup *grp = s->groups[q];

		for (uint32_t m = 0; m < grp->nsegs; m++) {
			const struct segment *g = grp->segs[m];
			uint32_t base = s->group_first[q] + grp->first[m];

			if (!grp->sums[m].nexp)
				continue;
			for (uint32_t j = 0; j < g->nexp; j++) {
				ek[s->nexpiring].i = base + g->exp[j];
				ek[s->nexpiring++].at = g->routes[g->exp[j]].expires_ms;
			}
		}
	}
	qsort(ek, s->nexpiring, sizeof(*ek), cmp_exp);
	for (size_t k = 0; k < s->nexpiring; k++)
		s->expiring[k] = ek[k].i;
	free(ek);
	return 0;
}

int snapshot_seal(struct snapshot *s)
{
	int ret = 0;

	if (s->holds && !s->listed)
		hold_list(s); /* first: segments given up from now on may be in s */

	if (s->stage) {
		snapshot_prepare(s);
		ret = stage_segments(s);
		stage_free(s->stage);
		s->stage = NULL;
		if (!ret)
			ret = flush_pend(s);
		if (!ret)
			s->segs_built = s->nsegs;
	}
	if (!ret)
		ret = seal(s);
	if (!ret && s->family == AF_INET && s->has_main) {
		size_t len;

		s->proc_head = render_family_proc_head(1, &len);
		s->proc_head_len = (uint32_t)len;
		s->proc_len += len;
	}
	return ret;
}

static void snapshot_destroy(struct snapshot *s)
{
	struct snapshot_chain *c = s->chain;

	for (size_t q = 0; !s->holds && q < s->ngroups; q++) {
		if (q + 8 < s->ngroups)
			__builtin_prefetch(s->groups[q + 8],
					   1); /* its header: a miss each otherwise */
		seggroup_put(s->groups[q]);
	}
	seggroup_put(s->pend);
	for (size_t k = 0; k < s->nown; k++) {
		if (k + 8 < s->nown)
			__builtin_prefetch(s->own[k + 8], 1); /* a cache miss each otherwise */
		segment_put(s->own[k]);
	}
	if (s->nown)
		segment_reclaim();
	if (s->listed)
		hold_unlist(s);
	free(s->own);
	free(s->groups);
	free(s->group_first);
	free(s->group_seg0);
	free(s->exp_groups);
	free(s->tables);
	free(s->expiring);
	stage_free(s->stage);
	if (s->views.free)
		s->views.free(&s->views);
	route_ctx_release(&s->ctx);
	if (__atomic_load_n(&s->retired, __ATOMIC_RELAXED)) {
		__atomic_sub_fetch(&c->retired_bytes, __atomic_load_n(&s->bytes, __ATOMIC_RELAXED),
				   __ATOMIC_RELAXED);
		__atomic_sub_fetch(&c->retired, 1, __ATOMIC_RELAXED);
	}
#ifdef RTSNAP_POISON
	memset(s, 0x6b, sizeof(*s));
#endif
	free(s);
	snapshot_chain_put(c);
	__atomic_sub_fetch(&s_live, 1, __ATOMIC_RELAXED);
}

void snapshot_free(struct snapshot *s)
{
	if (s)
		snapshot_destroy(s);
}

/*
 * Grace periods are shared by the snapshots replaced within RETIRE_WAIT_MS of each other: under
 * churn a publication every few milliseconds paid one each (two membarrier() and two
 * rt_sigprocmask() calls, and an interrupt on the other core), for nothing but freeing the
 * previous snapshot's own arrays a few milliseconds sooner. A publication after a quiet
 * moment still retires at once; the ones in between wait for the next publication past the
 * wait, or for snapshot_chain_retire() (the collector's loop wakes for it).
 */
#define RETIRE_WAIT_MS 10
#define RETIRE_BATCH_MAX 16

/* Count old as retired (it may still have readers), then drop the publication's reference. */
static void retire(struct snapshot *old)
{
	/* before the release: the last reader reads it in snapshot_destroy, a newer snapshot's
	 * destruction in move_held_bytes() */
	__atomic_store_n(&old->retired, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&old->chain->retired, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&old->chain->retired_bytes,
			   __atomic_load_n(&old->bytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	snapshot_release(old);
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

/* The bytes of the groups old shares with s, when s was not composed right after old (a
 * composition failed between them): O(groups log groups), or 0 without the memory. */
static size_t shared_groups_bytes(const struct snapshot *s, const struct snapshot *old)
{
	struct seggroup **v = malloc(s->ngroups * sizeof(*v) + 1);
	size_t bytes = 0;

	if (!v)
		return 0;
	memcpy(v, s->groups, s->ngroups * sizeof(*v));
	qsort(v, s->ngroups, sizeof(*v), ptr_cmp);
	for (size_t q = 0; q < old->ngroups; q++)
		if (bsearch(&old->groups[q], v, s->ngroups, sizeof(*v), ptr_cmp))
			bytes += old->groups[q]->sum.bytes;
	free(v);
	return bytes;
}

void snapshot_publish(struct snapshot *s)
{
	struct snapshot_chain *c = s->chain;
	struct snapshot *old;

	s->generation = ++c->generation;
	s->refs = 1; /* the publication's own reference */
	s->bytes = snapshot_bytes_estimate(s);
	__atomic_store_n(&c->current_bytes, s->bytes, __ATOMIC_RELAXED);
	old = current_xchg(c, s);
	if (old) {
		/* what keeping old costs from now on: its own parts and the segments it does not
		 * share with s (before anyone can count it as retired). Composed right after
		 * old, s counted that while composing; else compare the marks. */
		size_t own = snapshot_bytes_estimate(old);

		if (s->base_serial == old->serial)
			own -= s->shared_bytes;
		else
			own -= shared_groups_bytes(s, old);
		__atomic_store_n(&old->bytes, own, __ATOMIC_RELAXED);
		old->retire_next = NULL;
		if (c->retiring_tail)
			c->retiring_tail->retire_next = old;
		else
			c->retiring_head = old;
		c->retiring_tail = old;
		if (++c->nretiring >= RETIRE_BATCH_MAX ||
		    snapshot_now_ms() - c->last_grace_ms >= RETIRE_WAIT_MS)
			snapshot_chain_retire(c);
	}
}

int64_t snapshot_chain_retire_at(const struct snapshot_chain *c)
{
	return c->retiring_head ? c->last_grace_ms + RETIRE_WAIT_MS : INT64_MAX;
}

void snapshot_chain_retire(struct snapshot_chain *c)
{
	struct snapshot *old = c->retiring_head, *next;
	void (*hook)(uint64_t);

	if (!old)
		return;
	urcu_bp_synchronize_rcu();
	c->last_grace_ms = snapshot_now_ms();
	c->retiring_head = c->retiring_tail = NULL;
	c->nretiring = 0;
	for (; old; old = next) {
		next = old->retire_next;
		retire(old);
	}
	hook = __atomic_load_n(&c->retire_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(c->generation);
}

struct snapshot *snapshot_acquire(struct snapshot_chain *c)
{
	struct snapshot *s;

	urcu_bp_read_lock();
	s = current_load(c);
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

void snapshot_chain_free(struct snapshot_chain *c)
{
	struct snapshot *old;

	if (!c)
		return;
	snapshot_chain_retire(c);
	old = current_xchg(c, NULL);
	__atomic_store_n(&c->current_bytes, 0, __ATOMIC_RELAXED);
	if (old) {
		urcu_bp_synchronize_rcu();
		retire(old);
	}
	snapshot_chain_put(c);
}

void snapshot_set_family(struct snapshot *s, uint8_t family, int has_main)
{
	s->family = family;
	s->has_main = has_main != 0;
}

void snapshot_set_names(struct snapshot *s, struct names *n)
{
	names_free(s->ctx.names);
	s->ctx.names = n;
}

void snapshot_set_taken(struct snapshot *s, int64_t taken_mono_ms, double duration_s,
			uint32_t trigger)
{
	clock_gettime(CLOCK_REALTIME, &s->taken_at);
	s->taken_mono_ms = taken_mono_ms;
	s->duration_s = duration_s;
	s->trigger = trigger;
}

/* ---- what readers see (snapshot.h) ---- */

uint64_t snapshot_next_generation(const struct snapshot *s)
{
	/* read on the publishing thread, the chain's generation's one writer */
	return s->chain->generation + 1;
}

uint64_t snapshot_generation(const struct snapshot *s)
{
	return s->generation;
}

uint64_t snapshot_serial(const struct snapshot *s)
{
	return s->serial;
}

struct timespec snapshot_taken_at(const struct snapshot *s)
{
	return s->taken_at;
}

int64_t snapshot_taken_mono_ms(const struct snapshot *s)
{
	return s->taken_mono_ms;
}

double snapshot_duration_s(const struct snapshot *s)
{
	return s->duration_s;
}

uint32_t snapshot_trigger(const struct snapshot *s)
{
	return s->trigger;
}

uint8_t snapshot_family(const struct snapshot *s)
{
	return s->family;
}

int snapshot_has_main(const struct snapshot *s)
{
	return s->has_main;
}

const struct route_ctx *snapshot_ctx(const struct snapshot *s)
{
	return &s->ctx;
}

size_t snapshot_nroutes(const struct snapshot *s)
{
	return s->nroutes;
}

size_t snapshot_nsegs(const struct snapshot *s)
{
	return s->nsegs;
}

size_t snapshot_segs_built(const struct snapshot *s)
{
	return s->segs_built;
}

size_t snapshot_proc_len(const struct snapshot *s)
{
	return s->proc_len;
}

size_t snapshot_bytes(const struct snapshot *s)
{
	return __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
}

size_t snapshot_seg_bytes(const struct snapshot *s)
{
	return s->seg_bytes;
}

const char *snapshot_proc_head(const struct snapshot *s, size_t *len)
{
	*len = s->proc_head ? s->proc_head_len : 0;
	return s->proc_head;
}

size_t snapshot_ntables(const struct snapshot *s)
{
	return s->ntables;
}

const struct snapshot_table *snapshot_table_at(const struct snapshot *s, size_t i)
{
	return &s->tables[i];
}

size_t snapshot_ngroups(const struct snapshot *s)
{
	return s->ngroups;
}

const struct seggroup *snapshot_group(const struct snapshot *s, size_t q, uint32_t *first)
{
	if (first)
		*first = s->group_first[q];
	return s->groups[q];
}

size_t snapshot_same_groups(const struct snapshot *a, size_t qa, const struct snapshot *b,
			    size_t qb, size_t n, size_t *nsegs)
{
	struct seggroup *const *ga = a->groups + qa, *const *gb = b->groups + qb;
	size_t k = 0;

	while (k < n && ga[k] == gb[k])
		k++;
	*nsegs = a->group_seg0[qa + k] - a->group_seg0[qa];
	return k;
}

const uint32_t *snapshot_expiring_groups(const struct snapshot *s, size_t *n)
{
	*n = s->nexp_groups;
	return s->exp_groups;
}

size_t snapshot_nexpiring(const struct snapshot *s)
{
	return s->nexpiring;
}

const uint32_t *snapshot_expiring(const struct snapshot *s)
{
	return s->expiring;
}

struct snapshot_views *snapshot_views(const struct snapshot *s)
{
	/* the views are built on the sealed, otherwise immutable snapshot (snapshot.h) */
	return (struct snapshot_views *)&s->views;
}
