/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.h - an immutable copy of every IPv6 routing table, and its publication.
 *
 * Life of a snapshot: the collector thread creates one with snapshot_new(), gives it links,
 * nexthop objects and names, then either its segments (snapshot_add_segment(), shared with
 * earlier snapshots where nothing changed) or records one by one (snapshot_add_route(), cut
 * into new segments by finish), seals it with snapshot_finish() (tables, placeholder rows,
 * indexes, aggregates) and hands it to snapshot_publish(). From then on nobody writes it. Readers (any thread) take it with snapshot_acquire() and give it back with
 * snapshot_release(); it is freed when it has been replaced, an RCU grace period has passed,
 * and the last reader has released it.
 */
#ifndef RTSNAP_SNAPSHOT_H
#define RTSNAP_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/segment.h"

struct metrics_view; /* render_metrics.c */
struct lookup_index; /* index.c */

/*
 * One routing table: records [first, first + count) of the snapshot (global record indexes,
 * kernel order), held by segments [seg0, seg0 + nseg) of snapshot.segs.
 */
struct snapshot_table {
	uint32_t id;
	uint32_t first;
	uint32_t count;	 /* records, including a placeholder row */
	uint32_t routes; /* real routes (records minus placeholder) */
	uint32_t lines;	 /* lines in the proc view (a multipath route is one line per nexthop) */
	uint32_t seg0, nseg;
	uint64_t lens0[3], lens1[3]; /* bit L: the table has a route of dst_len L with / without
					a source prefix (the OR of its segments') */
};

struct snapshot_stage; /* snapshot.c: records added one by one, before finish */

struct snapshot {
	/* identity and timing */
	uint64_t generation;	  /* 1, 2, ... in publication order */
	uint64_t serial;	  /* unique per snapshot object (reader-side caches) */
	struct timespec taken_at; /* CLOCK_REALTIME when the dump started */
	int64_t taken_mono_ms;	  /* CLOCK_MONOTONIC, same instant */
	double duration_s;	  /* dump + build, seconds */
	uint32_t trigger;	  /* enum collector_trigger that caused it */

	/* the records, in segments (segment.h): tables in kernel (fib_table_hash) order, each
	 * table's records in kernel order. Record i (a global index) is in the segment k with
	 * seg_first[k] <= i < seg_first[k + 1]; snapshot_route() finds it. */
	struct segment **segs;
	size_t nsegs, segs_cap;
	uint32_t *seg_first; /* nsegs + 1 entries, after finish */
	size_t nroutes;	     /* records */
	size_t proc_len;     /* bytes of the proc view */
	size_t segs_built;   /* segments built for this snapshot rather than shared */
	/* counted by snapshot_add_segment(): the segments with expiring records, those records,
	 * the segments' memory, and how much of it the snapshot composed before
	 * (base_serial) holds too */
	uint32_t *exp_segs;
	size_t nexp_segs, exp_segs_cap, nexp_records;
	size_t seg_bytes, shared_bytes;
	uint64_t base_serial;
	/* the segments it holds a reference on (snapshot_add_segment()); those added with
	 * snapshot_add_held_segment() are held for it by the caller (holds = 1) until the
	 * caller gives them up with snapshot_defer_put(); from its seal it is listed, so that
	 * it takes a reference then on each of them it contains (back, below; snapshot.c) */
	struct segment **own;
	size_t nown, own_cap;
	int holds, listed;
	struct snapshot *held_prev, *held_next;
	/* references on held segments the mirror gave up while s was listed (under the lock) */
	struct segment **back;
	size_t nback, back_cap;
	struct snapshot_table *tables;
	size_t ntables, tables_cap;
	/* interfaces, nexthop objects (sorted after snapshot_prepare) and iproute2 names (loaded
	 * by the collector before finish; owned): what the routes were rendered with */
	struct route_ctx ctx;
	/* set before finish: routes were added grouped by table in kernel table order, every
	 * table included (an empty one as a lone record with .placeholder set) */
	int ordered_tables;
	struct snapshot_stage *stage; /* records added with snapshot_add_route(), until finish */

	/* expiring routes: record indexes, soonest deadline first */
	uint32_t *expiring;
	size_t nexpiring;

	/* views built on the sealed snapshot by the layers above (compose.c: index.c;
	 * render_metrics.c builds metrics_view at the first scrape, once, under its own lock:
	 * the one field written after publication), freed through free_views so that this
	 * module depends on none */
	struct metrics_view *metrics_view;
	struct lookup_index *lookup;
	void (*free_views)(struct snapshot *s);
	size_t views_bytes;

	/* lifetime; see snapshot.c */
	long refs;
	/* accounting (see snapshot_bytes_estimate): set by snapshot_publish(), read by anyone */
	size_t bytes; /* resident bytes this snapshot holds that no newer snapshot shares */
	int retired;  /* replaced, still referenced: counted in snapshot_retired_*() */
};

/* A route the RTM_F_PREFIX dump returned; snapshot_finish() marks the matching record. */
struct prefix_key {
	uint8_t dst[16];
	uint8_t src[16];
	uint32_t table, metric, ifindex;
	uint8_t dst_len, src_len;
};

/* Collector thread. Empty snapshot; *out set only on success. */
int snapshot_new(struct snapshot **out) __attribute__((warn_unused_result));

/*
 * Collector thread, before finish. Append one route in dump order. nhs/nnh are the nexthops
 * of a multipath route (copied; ignored when r->nh_count <= 1), m its metrics or NULL; the
 * hops' encapsulations are copied too. Returns 0 or -ENOMEM.
 */
int snapshot_add_route(struct snapshot *s, const struct route *r, const struct route_nh *nhs,
		       size_t nnh, const struct route_metrics *m)
    __attribute__((warn_unused_result));
/* Collector thread, before finish. Record an interface (name, flags). */
int snapshot_add_link(struct snapshot *s, const struct route_link *l)
    __attribute__((warn_unused_result));
/* Collector thread, before finish. Record a nexthop object. */
int snapshot_add_nhobj(struct snapshot *s, const struct route_nhobj *o)
    __attribute__((warn_unused_result));
/* Collector thread, before finish. Record a table the kernel has but the dump showed no
 * route of (it gets its lone placeholder row). */
int snapshot_add_empty_table(struct snapshot *s, uint32_t id) __attribute__((warn_unused_result));
/* Collector thread, before finish. Record a route that carries RTF_PREFIX_RT. */
int snapshot_add_prefix_key(struct snapshot *s, const struct prefix_key *k)
    __attribute__((warn_unused_result));

/*
 * Collector thread, before finish, after the links and nexthop objects are added and names
 * set: sort them, so that segments can be rendered in this snapshot's context. 0.
 */
int snapshot_prepare(struct snapshot *s);
/* Collector thread, after snapshot_prepare(). Append segment g (a reference is taken): the
 * segments come table by table in kernel order. Not mixed with snapshot_add_route().
 * 0 or -ENOMEM. */
int snapshot_add_segment(struct snapshot *s, struct segment *g) __attribute__((warn_unused_result));

/*
 * Collector thread, after snapshot_prepare(). Append segment g as snapshot_add_segment() does,
 * but take no reference: the caller holds one on g until it gives it up with
 * snapshot_defer_put(), which keeps g for as long as s lives. sum is g's (segment_sum()), kept
 * by the caller beside g so that composing reads no segment. fresh: g was built for s (else
 * it was in the snapshot composed before; memory accounting only). 0 or -ENOMEM.
 */
int snapshot_add_held_segment(struct snapshot *s, struct segment *g, const struct segment_sum *sum,
			      int fresh) __attribute__((warn_unused_result));

/*
 * Collector thread. Give up a reference on g (NULL is fine) that snapshots composed with
 * snapshot_add_held_segment() may rely on: every sealed snapshot composed since g was built
 * keeps a reference on it until it is freed (none alive: g is dropped at once). A snapshot
 * counts from its seal, so while one is being composed, a segment given up must not be one
 * added to it.
 */
void snapshot_defer_put(struct segment *g);
/* Any thread. References snapshots hold on segments given up with snapshot_defer_put(). */
long snapshot_deferred_count(void);

/* Any thread holding s. Record i (0 <= i < s->nroutes). O(log segments), O(1) when the
 * previous call of this thread was in the same segment. */
const struct route *snapshot_route(const struct snapshot *s, size_t i);
/* Any thread holding s. The segment holding record i, and i's position in it. */
const struct segment *snapshot_segment_of(const struct snapshot *s, size_t i, uint32_t *pos);

/*
 * Collector thread. Seal: cut the records added one by one into segments (tables and
 * placeholder rows), then the record offsets, tables and expiring index. The views (lookup
 * index, /metrics) are built on top by snapshot_finish() (compose.h). On error the snapshot
 * is only fit for snapshot_free().
 */
int snapshot_seal(struct snapshot *s) __attribute__((warn_unused_result));

/* Free a snapshot that was never published (half-built is fine, NULL is fine). */
void snapshot_free(struct snapshot *s);

/*
 * Collector thread only (the one writer). Make s the current snapshot, assign its generation,
 * and retire the previous one (freed after a grace period and its last reader). May block
 * for an RCU grace period.
 */
void snapshot_publish(struct snapshot *s);

/* Any thread. Current snapshot with a reference held, or NULL if none published yet. */
struct snapshot *snapshot_acquire(void);
/* Any thread. Drop a reference from snapshot_acquire(); NULL is fine. */
void snapshot_release(struct snapshot *s);

/* Main thread at exit, after readers and the collector have stopped: retire the current one. */
void snapshot_shutdown(void);

/* Interface name for ifindex in s ("" when unknown). Never NULL. */
static inline const char *snapshot_link_name(const struct snapshot *s, uint32_t ifindex)
{
	return route_ctx_link_name(&s->ctx, ifindex);
}
/* Interface record for ifindex, or NULL. */
static inline const struct route_link *snapshot_link(const struct snapshot *s, uint32_t ifindex)
{
	return route_ctx_link(&s->ctx, ifindex);
}
/* Any thread. Position in s->expiring of the first route whose deadline is after t_ms (so
 * the routes before it are due at t_ms); s->nexpiring if none. O(log expiring). */
size_t snapshot_expiring_after(const struct snapshot *s, int64_t t_ms);

/* Nexthop object id, or NULL. */
static inline const struct route_nhobj *snapshot_nhobj(const struct snapshot *s, uint32_t id)
{
	return route_ctx_nhobj(&s->ctx, id);
}
/* Nexthop i (0-based) of route r. */
static inline const struct route_nh *snapshot_route_nh(const struct snapshot *s,
						       const struct route *r, unsigned int i)
{
	(void)s;
	return route_nh(r, i);
}
/* The metrics of r, or NULL. */
static inline const struct route_metrics *snapshot_route_metrics(const struct snapshot *s,
								 const struct route *r)
{
	(void)s;
	return r->metrics;
}

/* Any thread. Snapshots allocated and not yet freed (published, retired-but-referenced and
 * under construction). */
long snapshot_live_count(void);

/*
 * Accounting of retired snapshots that readers still hold (issue 13 item 4).
 *
 * snapshot_bytes_estimate(): collector thread, on a finished snapshot. The resident bytes of
 * own arrays and views plus all of its segments (element counts times sizes, not
 * capacities). snapshot_publish() replaces the bytes of the snapshot it retires with those
 * of its segments that the new one does not share.
 *
 * snapshot_retired_count()/snapshot_retired_bytes(): any thread. Snapshots replaced by a
 * newer one (and past their grace period) that a reader still holds, and the sum of their
 * bytes; both drop when the last reader releases one.
 *
 * snapshot_current_bytes(): any thread. Bytes of the current snapshot (0 before the first).
 *
 * snapshot_set_retire_hook(): main thread, before the collector starts. fn is called on the
 * collector thread by snapshot_publish() each time a snapshot has been retired (after its
 * grace period and the drop of the publication's reference), with the current generation.
 * It must not block and must not call snapshot_publish().
 */
size_t snapshot_bytes_estimate(const struct snapshot *s);
long snapshot_retired_count(void);
size_t snapshot_retired_bytes(void);
size_t snapshot_current_bytes(void);
void snapshot_set_retire_hook(void (*fn)(uint64_t current_generation));

/* CLOCK_MONOTONIC now in milliseconds. */
int64_t snapshot_now_ms(void);

#endif
