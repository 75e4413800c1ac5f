// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * events.c - the change history: one change per publication, rendered once, shared by
 * every stream (events.h).
 *
 * Who does what:
 *   - The collector thread calls events_record() after each publication. It diffs the new
 *     snapshot against the previous one (diff.c: O(segments + changed routes)), renders the
 *     event text (route objects copied from the segments' pre-rendered bytes; routes with a
 *     deadline rendered now, for their "expires"), copies what filters need of each route,
 *     and appends the change to the ring under the history's lock, evicting the oldest
 *     changes beyond --history generations or bytes. Evicted changes are released outside
 *     the lock.
 *   - Readers take a reference on a change under the history's lock (events_next) and use
 *     it without any lock: a change is never written after it is appended. The last reference frees
 *     it, on whichever thread drops it.
 *   - The lock is held only for O(1) work (plus the evictions' list), never across a diff,
 *     a rendering or an allocation of a reader, so a slow reader cannot delay the
 *     collector.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtsnap/diff.h"
#include "rtsnap/events.h"
#include "rtsnap/log.h"
#include "rtsnap/render.h"

#define OBJ_MIN 48 /* bytes of the smallest route object: bounds the diff by the event size */

/* One instance's history; nothing is shared between two. */
struct events_history {
	pthread_mutex_t lock;
	struct {
		int on;
		struct events_change **ring; /* change g at ring[g % cap], for base < g <= head */
		/* slots in ring: doubled as generations accumulate, up to max_cap (a quiet
		 * instance, one of a thousand namespaces, keeps a small ring) */
		unsigned int cap, max_cap;
		uint64_t base, head;
		uint64_t cum,
		    cum_base; /* event bytes so far; up to and including generation base */
		size_t bytes, max_bytes, max_event;
		unsigned int table_share;
		char taken_at[32]; /* of generation head */
	} h;
	void (*notify)(void);
	struct {
		uint64_t recorded, resyncs, added, removed; /* atomic */
		uint64_t diff_ns;			    /* collector thread writes, atomic */
	} st;
};

void events_iso8601(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	int ms = (int)(ts->tv_nsec / 1000000);

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When s was taken, as events_iso8601() writes it. */
static void taken_at(const struct snapshot *s, char *buf, size_t len)
{
	struct timespec ts = snapshot_taken_at(s);

	events_iso8601(&ts, buf, len);
}

static void change_free(struct events_change *c)
{
	free(c->text);
	free(c->routes);
	free(c->hops);
	free(c->links);
	free(c);
}

void events_put(struct events_change *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		change_free(c);
}

int events_new(const struct events_opts *o, struct events_history **out)
{
	unsigned int n = o->generations < EVENTS_HISTORY_MIN ? EVENTS_HISTORY_MIN : o->generations;
	struct events_history *eh = calloc(1, sizeof(*eh));

	if (!eh)
		return -ENOMEM;
	if (pthread_mutex_init(&eh->lock, NULL)) {
		free(eh);
		return -ENOMEM;
	}
	*out = eh;
	eh->h.max_cap = n;
	eh->h.cap = n < EVENTS_RING_START ? n : EVENTS_RING_START;
	eh->h.ring = calloc(eh->h.cap, sizeof(*eh->h.ring));
	if (!eh->h.ring) {
		log_err("no memory for a change history of %u generations: /events disabled", n);
		return 0;
	}
	eh->h.max_bytes = o->bytes < EVENTS_HISTORY_BYTES_MIN ? EVENTS_HISTORY_BYTES_MIN : o->bytes;
	eh->h.table_share = o->table_share;
	eh->h.max_event = o->max_event ? o->max_event : eh->h.max_bytes / 4;
	if (eh->h.max_event > eh->h.max_bytes)
		eh->h.max_event = eh->h.max_bytes;
	__atomic_store_n(&eh->h.on, 1, __ATOMIC_RELEASE);
	return 0;
}

void events_set_notify(struct events_history *eh, void (*fn)(void))
{
	__atomic_store_n(&eh->notify, fn, __ATOMIC_RELEASE);
}

void events_free(struct events_history *eh)
{
	if (!eh)
		return;
	pthread_mutex_lock(&eh->lock);
	for (uint64_t g = eh->h.base + 1; eh->h.ring && g <= eh->h.head; g++) {
		events_put(eh->h.ring[g % eh->h.cap]);
		eh->h.ring[g % eh->h.cap] = NULL;
	}
	free(eh->h.ring);
	eh->h.ring = NULL;
	eh->h.base = eh->h.head = 0;
	eh->h.bytes = 0;
	__atomic_store_n(&eh->h.on, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&eh->lock);
	pthread_mutex_destroy(&eh->lock);
	free(eh);
}

/* ---- rendering (collector thread) ---- */

static void put_head(struct strbuf *sb, const struct events_change *c)
{
	strbuf_appendf(sb,
		       "id: %llu\ndata: {\"generation\":%llu,\"previous\":%llu,\"taken_at\":\"%s\","
		       "\"added\":[",
		       (unsigned long long)c->generation, (unsigned long long)c->generation,
		       (unsigned long long)c->previous, c->taken_at);
}

void events_render_resync(uint64_t gen, const char *reason, struct strbuf *sb)
{
	strbuf_appendf(sb, "event: resync\ndata: {\"generation\":%llu,\"reason\":\"%s\"}\n\n",
		       (unsigned long long)gen, reason);
}

/* Append the object of ref (from snapshot s) as the event shows it, and describe it in *er. */
static void put_route(struct strbuf *sb, const struct snapshot *s, const struct diff_ref *ref,
		      int64_t now_ms, struct events_route *er, int first)
{
	const struct route *r = &ref->g->routes[ref->pos];
	size_t start, off, elen;

	if (!first)
		strbuf_putc(sb, ',');
	start = sb->len;
	if (r->expires_ms) {
		render_json_route(snapshot_ctx(s), r, now_ms,
				  sb); /* "expires": the time left now */
	} else {
		const char *p;
		size_t len = diff_object(ref->g, ref->pos, &p);

		strbuf_append(sb, p, len);
	}
	er->r = *r;
	er->off = (uint32_t)start;
	er->len = (uint32_t)(sb->len - start);
	er->exp_off = er->exp_len = 0;
	if (r->expires_ms && !sb->failed) {
		diff_expires_span(sb->buf + start, sb->len - start, &off, &elen);
		er->exp_off = (uint32_t)off;
		er->exp_len = (uint32_t)elen;
	}
}

/* The links of s that the routes use, sorted by ifindex, into *out. Count or -ENOMEM. */
static long collect_links(const struct snapshot *s, const struct events_route *v, size_t n,
			  struct route_link **out)
{
	size_t cap = 0, k = 0;
	uint32_t *ids = NULL;
	struct route_link *l;

	*out = NULL;
	for (size_t i = 0; i < n; i++)
		cap += v[i].r.nh_count > 1 ? v[i].r.nh_count : 1;
	if (!cap)
		return 0;
	ids = malloc(cap * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct route *r = &v[i].r;

		for (unsigned int j = 0; j < r->nh_count; j++) {
			uint32_t id = r->nh_count > 1 ? r->nhs[j].ifindex : r->nh.ifindex;
			size_t m;

			for (m = 0; m < k && ids[m] != id; m++)
				;
			if (id && m == k)
				ids[k++] = id; /* few distinct devices per change: a linear check */
		}
	}
	l = k ? malloc(k * sizeof(*l)) : NULL;
	if (k && !l) {
		free(ids);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < k; i++) {
		const struct route_link *x = snapshot_link(s, ids[i]);

		if (x)
			l[n++] = *x;
	}
	free(ids);
	*out = l;
	return (long)n;
}

/* The routes of ref[0..n) from s into v (hops copied to *hp), objects appended to sb. */
static void put_routes(struct strbuf *sb, const struct snapshot *s, const struct diff_ref *ref,
		       size_t n, int64_t now_ms, struct events_route *v, struct route_nh **hp)
{
	for (size_t i = 0; i < n; i++) {
		put_route(sb, s, &ref[i], now_ms, &v[i], i == 0);
		if (v[i].r.nh_count > 1) {
			memcpy(*hp, v[i].r.nhs, v[i].r.nh_count * sizeof(**hp));
			v[i].r.nhs = *hp;
			for (unsigned int k = 0; k < v[i].r.nh_count; k++)
				(*hp)[k].encap = NULL; /* it points into the segment */
			*hp += v[i].r.nh_count;
		} else {
			v[i].r.nhs = NULL;
		}
		v[i].r.nh.encap = NULL;
		v[i].r.metrics = NULL; /* filters read the record and its hops only */
	}
}

static struct events_change *resync_change(uint64_t gen, uint64_t prev, const char *reason)
{
	struct events_change *c = calloc(1, sizeof(*c));
	struct strbuf sb = { 0 };

	if (!c)
		return NULL;
	c->refs = 1;
	c->generation = gen;
	c->previous = prev;
	c->kind = EVENTS_RESYNC;
	c->reason = reason;
	events_render_resync(gen, reason, &sb);
	if (sb.failed) {
		strbuf_free(&sb);
		free(c);
		return NULL;
	}
	c->text = strbuf_detach(&sb, &c->len);
	c->bytes = sizeof(*c) + c->len;
	return c;
}

/* The change from a to b: a diff, or a resync when it cannot be one. NULL: no memory. */
static struct events_change *build(struct events_history *eh, const struct snapshot *a,
				   const struct snapshot *b)
{
	struct diff d = { 0 };
	struct events_change *c = NULL;
	struct strbuf sb = { 0 };
	struct route_nh *hp;
	struct route_link *lo = NULL, *ln = NULL;
	const char *why = "no_memory";
	size_t nhops = 0;
	int64_t now_ms = snapshot_now_ms();
	long nl, nn;
	int ret;

	ret = diff_snapshots(a, b, eh->h.max_event / OBJ_MIN, &d);
	if (ret == -E2BIG)
		why = "too_large";
	if (ret)
		goto resync;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto resync;
	c->refs = 1;
	c->generation = snapshot_generation(b);
	c->previous = snapshot_generation(a);
	c->kind = EVENTS_DIFF;
	c->visited = d.visited;
	taken_at(b, c->taken_at, sizeof(c->taken_at));
	c->nremoved = (uint32_t)d.nremoved;
	c->nadded = (uint32_t)d.nadded;
	for (size_t i = 0; i < d.nremoved; i++)
		if (d.removed[i].g->routes[d.removed[i].pos].nh_count > 1)
			nhops += d.removed[i].g->routes[d.removed[i].pos].nh_count;
	for (size_t i = 0; i < d.nadded; i++)
		if (d.added[i].g->routes[d.added[i].pos].nh_count > 1)
			nhops += d.added[i].g->routes[d.added[i].pos].nh_count;
	c->routes = malloc((d.nremoved + d.nadded + 1) * sizeof(*c->routes));
	c->hops = nhops ? malloc(nhops * sizeof(*c->hops)) : NULL;
	if (!c->routes || (nhops && !c->hops))
		goto resync;
	hp = c->hops;
	strbuf_reserve(&sb, 160 + (d.nremoved + d.nadded) * 200);
	put_head(&sb, c);
	put_routes(&sb, b, d.added, d.nadded, now_ms, c->routes + d.nremoved, &hp);
	strbuf_puts(&sb, "],\"removed\":[");
	put_routes(&sb, a, d.removed, d.nremoved, now_ms, c->routes, &hp);
	strbuf_puts(&sb, "]}\n\n");
	if (sb.failed)
		goto resync;
	if (sb.len > eh->h.max_event) {
		why = "too_large";
		goto resync;
	}
	nl = collect_links(a, c->routes, d.nremoved, &lo);
	nn = nl < 0 ? -ENOMEM : collect_links(b, c->routes + d.nremoved, d.nadded, &ln);
	c->links = nn < 0 ? NULL : malloc((size_t)(nl + nn + 1) * sizeof(*c->links));
	if (c->links) {
		if (nl)
			memcpy(c->links, lo, (size_t)nl * sizeof(*lo));
		if (nn)
			memcpy(c->links + nl, ln, (size_t)nn * sizeof(*ln));
		c->nlinks_old = (uint32_t)nl;
		c->nlinks_new = (uint32_t)nn;
	}
	free(lo);
	free(ln);
	if (!c->links)
		goto resync;
	c->text = strbuf_detach(&sb, &c->len);
	c->bytes = sizeof(*c) + c->len + (d.nremoved + d.nadded) * sizeof(*c->routes) +
		   nhops * sizeof(*c->hops) + (c->nlinks_old + c->nlinks_new) * sizeof(*c->links);
	diff_free(&d);
	return c;
resync:
	strbuf_free(&sb);
	diff_free(&d);
	if (c)
		change_free(c);
	log_debug("generation %llu: change recorded as a resync (%s)",
		  (unsigned long long)snapshot_generation(b), why);
	c = resync_change(snapshot_generation(b), snapshot_generation(a), why);
	if (c)
		taken_at(b, c->taken_at, sizeof(c->taken_at));
	return c;
}

/* ---- the ring ---- */

/* Under eh->lock: take the oldest change out (returned, for release outside the lock). */
static struct events_change *evict_locked(struct events_history *eh)
{
	uint64_t g = eh->h.base + 1;
	struct events_change *c = eh->h.ring[g % eh->h.cap];

	eh->h.ring[g % eh->h.cap] = NULL;
	eh->h.base = g;
	eh->h.bytes -= c->bytes;
	eh->h.cum_base = c->cum;
	return c;
}

void events_record(struct events_history *eh, const struct snapshot *prev, const struct snapshot *s)
{
	struct events_change *c = NULL, *gone = NULL, **tail = &gone, **grown = NULL, **old = NULL;
	unsigned int gcap = 0;
	struct timespec t0, t1;
	size_t limit;
	void (*fn)(void);

	if (!__atomic_load_n(&eh->h.on, __ATOMIC_ACQUIRE))
		return;
	/* the ring is full and may grow: the bigger one is allocated outside the lock (head,
	 * base and cap change on this thread only) */
	if (eh->h.head - eh->h.base == eh->h.cap && eh->h.cap < eh->h.max_cap) {
		gcap = eh->h.cap * 2 < eh->h.max_cap ? eh->h.cap * 2 : eh->h.max_cap;
		grown = calloc(gcap, sizeof(*grown)); /* without memory: the old one evicts */
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (prev)
		c = build(eh, prev, s); /* NULL only without memory */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (c)
		c->diff_s =
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* the bytes kept: --history-bytes, and (by default) a share of the table's memory, so
	 * that under heavy churn the history does not grow a large table's RSS by a fixed 64 MiB
	 * nor a small one's many times over */
	limit = eh->h.max_bytes;
	if (eh->h.table_share) {
		size_t p = snapshot_seg_bytes(s) / eh->h.table_share;

		if (p < EVENTS_HISTORY_BYTES_MIN)
			p = EVENTS_HISTORY_BYTES_MIN;
		if (p < limit)
			limit = p;
	}
	pthread_mutex_lock(&eh->lock);
	taken_at(s, eh->h.taken_at, sizeof(eh->h.taken_at));
	if (!c || c->previous != eh->h.head) {
		/* the first publication, or nothing recorded for this one: the history starts
		 * afresh, and streams behind it are told to resync (never a silent gap) */
		while (eh->h.head > eh->h.base) {
			*tail = evict_locked(eh);
			tail = &(*tail)->gone;
		}
		eh->h.base = eh->h.head = c ? c->previous : snapshot_generation(s);
		eh->h.cum_base = eh->h.cum;
	}
	if (grown) {
		for (uint64_t g = eh->h.base + 1; g <= eh->h.head; g++)
			grown[g % gcap] = eh->h.ring[g % eh->h.cap];
		old = eh->h.ring;
		eh->h.ring = grown;
		eh->h.cap = gcap;
	}
	if (c) {
		if (eh->h.head - eh->h.base == eh->h.cap) {
			*tail = evict_locked(eh);
			tail = &(*tail)->gone;
		}
		eh->h.cum += c->len;
		c->cum = eh->h.cum;
		c->recorded_ns = now_ns(); /* under the lock: a reader sees it with c */
		eh->h.ring[c->generation % eh->h.cap] = c;
		eh->h.head = c->generation;
		eh->h.bytes += c->bytes;
		while (eh->h.bytes > limit && eh->h.head - eh->h.base > 1) {
			*tail = evict_locked(eh);
			tail = &(*tail)->gone;
		}
	}
	*tail = NULL;
	pthread_mutex_unlock(&eh->lock);
	free(old);
	while (gone) {
		struct events_change *next = gone->gone;

		events_put(gone);
		gone = next;
	}
	if (c) {
		__atomic_add_fetch(&eh->st.recorded, 1, __ATOMIC_RELAXED);
		if (c->kind == EVENTS_RESYNC)
			__atomic_add_fetch(&eh->st.resyncs, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&eh->st.added, c->nadded, __ATOMIC_RELAXED);
		__atomic_add_fetch(&eh->st.removed, c->nremoved, __ATOMIC_RELAXED);
		__atomic_store_n(&eh->st.diff_ns,
				 __atomic_load_n(&eh->st.diff_ns, __ATOMIC_RELAXED) +
				     (uint64_t)(c->diff_s * 1e9),
				 __ATOMIC_RELAXED);
	}
	fn = __atomic_load_n(&eh->notify, __ATOMIC_ACQUIRE);
	if (fn)
		fn();
}

/* ---- readers ---- */

int events_next(struct events_history *eh, uint64_t after, struct events_change **out)
{
	struct events_change *c;
	int ret = 0;

	pthread_mutex_lock(&eh->lock);
	if (!eh->h.on || after < eh->h.base) {
		ret = -ERANGE;
	} else if (after >= eh->h.head) {
		ret = -EAGAIN;
	} else {
		c = eh->h.ring[(after + 1) % eh->h.cap];
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
		*out = c;
	}
	pthread_mutex_unlock(&eh->lock);
	return ret;
}

void events_window(struct events_history *eh, struct events_window *w)
{
	pthread_mutex_lock(&eh->lock);
	w->enabled = eh->h.on;
	w->base = eh->h.base;
	w->head = eh->h.head;
	w->cum_head = eh->h.cum;
	w->cum_base = eh->h.cum_base;
	w->bytes = eh->h.bytes;
	w->count = (unsigned int)(eh->h.head - eh->h.base);
	pthread_mutex_unlock(&eh->lock);
}

uint64_t events_cum_at(struct events_history *eh, uint64_t gen)
{
	uint64_t v;

	pthread_mutex_lock(&eh->lock);
	if (gen <= eh->h.base)
		v = eh->h.cum_base;
	else if (gen >= eh->h.head)
		v = eh->h.cum;
	else
		v = eh->h.ring[gen % eh->h.cap]->cum;
	pthread_mutex_unlock(&eh->lock);
	return v;
}

static void put_matching(struct strbuf *sb, const struct events_change *c,
			 const struct events_route *v, uint32_t n, const struct query *q,
			 uint32_t dev)
{
	int first = 1;

	for (uint32_t i = 0; i < n; i++) {
		if (!query_match(q, &v[i].r, dev))
			continue;
		if (!first)
			strbuf_putc(sb, ',');
		first = 0;
		strbuf_append(sb, c->text + v[i].off, v[i].len);
	}
}

/* q->dev in the links of the removed (old) or added (new) routes. */
static uint32_t dev_of(const struct events_change *c, const struct query *q, int added)
{
	if (!(q->set & QF_DEV))
		return 0;
	if (added)
		return query_find_ifindex(c->links + c->nlinks_old, c->nlinks_new, q->dev);
	return query_find_ifindex(c->links, c->nlinks_old, q->dev);
}

void events_render(const struct events_change *c, const struct query *q, struct strbuf *sb)
{
	if (c->kind == EVENTS_RESYNC || !q || !q->set) {
		strbuf_append(sb, c->text, c->len);
		return;
	}
	put_head(sb, c);
	put_matching(sb, c, c->routes + c->nremoved, c->nadded, q, dev_of(c, q, 1));
	strbuf_puts(sb, "],\"removed\":[");
	put_matching(sb, c, c->routes, c->nremoved, q, dev_of(c, q, 0));
	strbuf_puts(sb, "]}\n\n");
}

void events_render_resync_family(uint64_t gen, const char *family, const char *reason,
				 struct strbuf *sb)
{
	strbuf_appendf(sb,
		       "event: resync\ndata: {\"family\":\"%s\",\"generation\":%llu,"
		       "\"reason\":\"%s\"}\n\n",
		       family, (unsigned long long)gen, reason);
}

void events_render_family(const struct events_change *c, const struct query *q, int none,
			  const char *family, const char *id, struct strbuf *sb)
{
	static const char added[] = "\"added\":[";
	const char *body;

	if (c->kind == EVENTS_RESYNC) {
		events_render_resync_family(c->generation, family, c->reason, sb);
		return;
	}
	strbuf_appendf(sb,
		       "id: %s\ndata: {\"family\":\"%s\",\"generation\":%llu,\"previous\":%llu,"
		       "\"taken_at\":\"%s\",\"added\":[",
		       id, family, (unsigned long long)c->generation,
		       (unsigned long long)c->previous, c->taken_at);
	if (none) {
		strbuf_puts(sb, "],\"removed\":[]}\n\n");
		return;
	}
	if (!q || !q->set) {
		/* the recorded text from its first route on: the head (put_head()) holds no
		 * such key, so the first match is the head's own */
		body = strstr(c->text, added);
		if (body) {
			body += sizeof(added) - 1;
			strbuf_append(sb, body, c->len - (size_t)(body - c->text));
		} else {
			sb->failed = 1; /* cannot happen: put_head() wrote it */
		}
		return;
	}
	put_matching(sb, c, c->routes + c->nremoved, c->nadded, q, dev_of(c, q, 1));
	strbuf_puts(sb, "],\"removed\":[");
	put_matching(sb, c, c->routes, c->nremoved, q, dev_of(c, q, 0));
	strbuf_puts(sb, "]}\n\n");
}

/* ---- /changes: the net change over several generations ---- */

/* A route object, by what identifies it: every byte but its "expires". */
struct net_ent {
	uint64_t h;
	const struct events_change *c; /* the object that represents it */
	const struct events_route *r;
	const struct events_change *ac; /* the last added version */
	const struct events_route *ar;
	long count;		   /* added - removed */
	uint64_t rem_seq, add_seq; /* when first removed, last added */
	int used;
};

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t key_hash(const struct events_change *c, const struct events_route *r)
{
	const char *p = c->text + r->off;
	uint64_t h = fnv(0xcbf29ce484222325ULL, p, r->exp_off ? r->exp_off : r->len);

	if (r->exp_len)
		h = fnv(h, p + r->exp_off + r->exp_len, r->len - r->exp_off - r->exp_len);
	return h;
}

static int key_eq(const struct events_change *c1, const struct events_route *r1,
		  const struct events_change *c2, const struct events_route *r2)
{
	const char *a = c1->text + r1->off, *b = c2->text + r2->off;
	size_t ha = r1->exp_len ? r1->exp_off : r1->len, hb = r2->exp_len ? r2->exp_off : r2->len;
	size_t ta = r1->len - ha - r1->exp_len, tb = r2->len - hb - r2->exp_len;

	return ha == hb && ta == tb && memcmp(a, b, ha) == 0 &&
	       memcmp(a + ha + r1->exp_len, b + hb + r2->exp_len, ta) == 0;
}

struct net {
	struct net_ent *t;
	size_t cap; /* power of two */
	uint64_t seq;
};

static struct net_ent *net_find(struct net *n, const struct events_change *c,
				const struct events_route *r)
{
	uint64_t h = key_hash(c, r);

	for (size_t i = h & (n->cap - 1);; i = (i + 1) & (n->cap - 1)) {
		struct net_ent *e = &n->t[i];

		if (!e->used) {
			e->used = 1;
			e->h = h;
			e->c = c;
			e->r = r;
			return e;
		}
		if (e->h == h && key_eq(e->c, e->r, c, r))
			return e;
	}
}

static int cmp_rem(const void *a, const void *b)
{
	const struct net_ent *x = *(struct net_ent *const *)a, *y = *(struct net_ent *const *)b;

	return x->rem_seq < y->rem_seq ? -1 : x->rem_seq > y->rem_seq;
}

static int cmp_add(const void *a, const void *b)
{
	const struct net_ent *x = *(struct net_ent *const *)a, *y = *(struct net_ent *const *)b;

	return x->add_seq < y->add_seq ? -1 : x->add_seq > y->add_seq;
}

/* Append the objects of the entries v[0..n) with count of sign sign, each |count| times. */
static void put_net(struct strbuf *sb, struct net_ent **v, size_t n, int added)
{
	int first = 1;

	for (size_t i = 0; i < n; i++) {
		const struct events_change *c = added ? v[i]->ac : v[i]->c;
		const struct events_route *r = added ? v[i]->ar : v[i]->r;
		long k = v[i]->count < 0 ? -v[i]->count : v[i]->count;

		while (k-- > 0) {
			if (!first)
				strbuf_putc(sb, ',');
			first = 0;
			strbuf_append(sb, c->text + r->off, r->len);
		}
	}
}

static int compose(struct events_change **v, size_t nv, uint64_t since, uint64_t head,
		   const char *taken_at, const struct query *q, int none, const char *family,
		   struct strbuf *sb)
{
	struct net n = { 0 };
	struct net_ent **rem = NULL, **add = NULL;
	size_t items = 0, nrem = 0, nadd = 0;
	int ret = -ENOMEM;

	for (size_t i = 0; i < nv && !none; i++)
		items += v[i]->nremoved + v[i]->nadded;
	for (n.cap = 16; n.cap < 2 * items + 1; n.cap *= 2)
		;
	n.t = calloc(n.cap, sizeof(*n.t));
	if (!n.t)
		goto out;
	for (size_t i = 0; i < nv && !none; i++) {
		const struct events_change *c = v[i];
		uint32_t dev_old = q ? dev_of(c, q, 0) : 0, dev_new = q ? dev_of(c, q, 1) : 0;

		for (uint32_t j = 0; j < c->nremoved + c->nadded; j++) {
			const struct events_route *r = &c->routes[j];
			int added = j >= c->nremoved;
			struct net_ent *e;

			if (q && !query_match(q, &r->r, added ? dev_new : dev_old))
				continue;
			e = net_find(&n, c, r);
			if (added) {
				e->count++;
				e->ac = c;
				e->ar = r;
				e->add_seq = ++n.seq;
			} else {
				if (!e->rem_seq) {
					e->rem_seq = ++n.seq;
					e->c =
					    c; /* the first removal: the version the poller has */
					e->r = r;
				}
				e->count--;
			}
		}
	}
	rem = malloc(n.cap * sizeof(*rem));
	add = malloc(n.cap * sizeof(*add));
	if (!rem || !add)
		goto out;
	for (size_t i = 0; i < n.cap; i++) {
		if (n.t[i].used && n.t[i].count < 0)
			rem[nrem++] = &n.t[i];
		else if (n.t[i].used && n.t[i].count > 0)
			add[nadd++] = &n.t[i];
	}
	qsort(rem, nrem, sizeof(*rem), cmp_rem);
	qsort(add, nadd, sizeof(*add), cmp_add);
	strbuf_putc(sb, '{');
	if (family)
		strbuf_appendf(sb, "\"family\":\"%s\",", family);
	strbuf_appendf(sb, "\"generation\":%llu,\"previous\":%llu,\"taken_at\":\"%s\",\"added\":[",
		       (unsigned long long)head, (unsigned long long)since, taken_at);
	put_net(sb, add, nadd, 1);
	strbuf_puts(sb, "],\"removed\":[");
	put_net(sb, rem, nrem, 0);
	strbuf_puts(sb, family ? "]}" : "]}\n");
	ret = sb->failed ? -ENOMEM : 0;
out:
	free(n.t);
	free(rem);
	free(add);
	return ret;
}

int events_changes(struct events_history *eh, uint64_t since, const struct query *q,
		   struct strbuf *sb, uint64_t *gen)
{
	return events_changes_family(eh, since, q, 0, NULL, sb, gen);
}

int events_changes_family(struct events_history *eh, uint64_t since, const struct query *q,
			  int none, const char *family, struct strbuf *sb, uint64_t *gen)
{
	struct events_change **v = NULL;
	char taken_at[32];
	uint64_t head;
	size_t nv = 0;
	int ret = 0;

	if (q && !q->set)
		q = NULL;
	for (;;) {
		size_t want;

		pthread_mutex_lock(&eh->lock);
		if (!eh->h.on || since < eh->h.base || since > eh->h.head) {
			pthread_mutex_unlock(&eh->lock);
			free(v);
			return -ERANGE;
		}
		want = (size_t)(eh->h.head - since);
		if (want <= nv || !want)
			break;
		pthread_mutex_unlock(&eh->lock); /* never allocate under the lock */
		free(v);
		nv = want + 16;
		v = malloc(nv * sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	head = eh->h.head;
	nv = (size_t)(head - since);
	memcpy(taken_at, eh->h.taken_at, sizeof(taken_at));
	for (size_t i = 0; i < nv; i++) {
		v[i] = eh->h.ring[(since + 1 + i) % eh->h.cap];
		__atomic_add_fetch(&v[i]->refs, 1, __ATOMIC_RELAXED);
		if (v[i]->kind == EVENTS_RESYNC)
			ret = -ERANGE; /* the routes of that one are not known */
	}
	pthread_mutex_unlock(&eh->lock);
	if (!ret)
		ret = compose(v, nv, since, head, taken_at, q, none, family, sb);
	for (size_t i = 0; i < nv; i++)
		events_put(v[i]);
	free(v);
	if (!ret)
		*gen = head;
	return ret;
}

void events_stats(struct events_history *eh, struct events_stats *st)
{
	st->recorded = __atomic_load_n(&eh->st.recorded, __ATOMIC_RELAXED);
	st->resyncs = __atomic_load_n(&eh->st.resyncs, __ATOMIC_RELAXED);
	st->routes_added = __atomic_load_n(&eh->st.added, __ATOMIC_RELAXED);
	st->routes_removed = __atomic_load_n(&eh->st.removed, __ATOMIC_RELAXED);
	st->diff_seconds = (double)__atomic_load_n(&eh->st.diff_ns, __ATOMIC_RELAXED) / 1e9;
}
