/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.h - an immutable copy of every routing table of one family (IPv6, or IPv4: see
 * snapshot_family()), and its publication.
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
#include "rtsnap/seggroup.h"
#include "rtsnap/segment.h"

struct metrics_view; /* render_metrics.c */
struct lookup_index; /* index.c */

/*
 * One routing table: records [first, first + count) of the snapshot (global record indexes,
 * kernel order), held by segments [seg0, seg0 + nseg) (global segment indexes,
 * snapshot_seg()), in groups [g0, g0 + ng) (snapshot_group()).
 */
struct snapshot_table {
	uint32_t id;
	uint32_t first;
	uint32_t count;	 /* records, including a placeholder row */
	uint32_t routes; /* real routes (records minus placeholder) */
	uint32_t lines;	 /* lines in the proc view (a multipath route is one line per nexthop) */
	uint32_t seg0, nseg;
	uint32_t g0, ng;
	uint64_t lens0[3], lens1[3]; /* bit L: the table has a route of dst_len L with / without
					a source prefix (the OR of its segments') */
};

struct snapshot_chain; /* snapshot.c: where one instance publishes its snapshots */

/*
 * A snapshot's fields are private to the modules that build and free it (src/model,
 * src/builder, src/mirror: snapshot_impl.h); everyone else reads it through the calls below.
 */
struct snapshot;

/*
 * The views the layers above build on a sealed snapshot (compose.h): the lookup index, built
 * with the snapshot before publication, and /metrics' view, built by render_metrics.c at the
 * first scrape, once, under its own lock (the one thing written after publication). They are
 * freed with the snapshot through free(), so that this module depends on none of them.
 */
struct snapshot_views {
	struct lookup_index *lookup;
	struct metrics_view *metrics;
	struct watch_view *watch; /* watched routes' answers (watch.h), set before publication */
	void (*free)(struct snapshot_views *v);
	size_t bytes; /* of the lookup index, counted in the snapshot's bytes */
};

/* A route the RTM_F_PREFIX dump returned; snapshot_finish() marks the matching record. */
struct prefix_key {
	uint8_t dst[16];
	uint8_t src[16];
	uint32_t table, metric, ifindex;
	uint8_t dst_len, src_len;
};

/*
 * Main thread, before the collector starts. A chain publishes one instance's snapshots: its
 * collector publishes on it, its readers acquire from it. *out set only on success.
 */
int snapshot_chain_new(struct snapshot_chain **out) __attribute__((warn_unused_result));
/*
 * Main thread at exit, after the chain's readers and collector have stopped (NULL is fine):
 * retire its current snapshot and drop the owner's reference. The memory goes with the last
 * snapshot made for the chain.
 */
void snapshot_chain_free(struct snapshot_chain *c);
/* Any thread holding a reference: another one on c (NULL is fine; returns c), and drop one
 * (the last frees c). Whoever may give up segments held for c's snapshots
 * (snapshot_defer_put()) holds one: the mirror that composes them. */
struct snapshot_chain *snapshot_chain_get(struct snapshot_chain *c);
void snapshot_chain_put(struct snapshot_chain *c);

/* Collector thread. Empty snapshot made for chain c (NULL: one that is never published and
 * holds no segment without a reference, as in --once or tests); *out set only on success. */
int snapshot_new(struct snapshot_chain *c, struct snapshot **out)
    __attribute__((warn_unused_result));

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
/* Collector thread, before finish: an IPv4 instance's snapshot (family AF_INET; records as
 * route4.h says, no placeholder rows, no empty tables) and whether its main table exists
 * (then the proc text starts with /proc/net/route's header: kernel-facts.md 12.3). An IPv6
 * snapshot is left as snapshot_new() made it. */
void snapshot_set_family(struct snapshot *s, uint8_t family, int has_main);
/* Collector thread, before snapshot_prepare(): the iproute2 names to render with (s takes
 * over the caller's reference; NULL is fine). */
void snapshot_set_names(struct snapshot *s, struct names *n);
/* Collector thread, before finish. Record a route that carries RTF_PREFIX_RT. */
int snapshot_add_prefix_key(struct snapshot *s, const struct prefix_key *k)
    __attribute__((warn_unused_result));

/*
 * Collector thread, before finish, after the links and nexthop objects are added and names
 * set: sort them, so that segments can be rendered in this snapshot's context. 0.
 */
int snapshot_prepare(struct snapshot *s);
/* Collector thread, after snapshot_prepare(). Append segment g (a reference is taken): the
 * segments come table by table in kernel order. Not mixed with snapshot_add_route() nor with
 * snapshot_add_group(). 0 or -ENOMEM. */
int snapshot_add_segment(struct snapshot *s, struct segment *g) __attribute__((warn_unused_result));

/*
 * Collector thread, after snapshot_prepare(). Append group g (sealed): groups come table by
 * table in kernel order. The caller holds g and its segments until it gives them up with
 * snapshot_defer_put_group() and snapshot_defer_put(), which keep them for as long as s lives
 * (s must be made for a chain, and is not mixed with snapshot_add_segment(): else -EINVAL).
 * sum and nsegs are g's (the caller's copy: nothing of g is read). shared: the bytes of g's
 * segments that the snapshot composed before also holds (memory accounting). 0, -ENOMEM,
 * -E2BIG or -EINVAL.
 */
int snapshot_add_group(struct snapshot *s, struct seggroup *g, const struct segment_sum *sum,
		       uint32_t nsegs, size_t shared) __attribute__((warn_unused_result));
/* Collector thread. seg or g, held by the caller, was built for s (a segment in a group added
 * to s, or a group added to s): it is kept for s and the later snapshots from now on
 * (snapshot_defer_put(), snapshot_defer_put_group()). */
void snapshot_fresh_segment(struct snapshot *s, struct segment *seg);
void snapshot_fresh_group(struct snapshot *s, struct seggroup *g);

/*
 * Collector thread. Give up a reference on g (NULL is fine) that snapshots composed with
 * snapshot_add_group() may rely on: every sealed snapshot composed since g was built
 * keeps a reference on it until it is freed (none alive: g is dropped at once). A snapshot
 * counts from its seal, so while one is being composed, a segment given up must not be one
 * added to it. The snapshots are those of the chain whose snapshot first held g.
 */
void snapshot_defer_put(struct segment *g);
/* The same for a group (seggroup.h). */
void snapshot_defer_put_group(struct seggroup *g);
/* Any thread. References the chain's snapshots hold on segments given up with
 * snapshot_defer_put(). */
long snapshot_deferred_count(struct snapshot_chain *c);

/* Any thread holding s. Record i (0 <= i < snapshot_nroutes(s)). O(log segments), O(1) when the
 * previous call of this thread was in the same segment. */
const struct route *snapshot_route(const struct snapshot *s, size_t i);
/*
 * Any thread holding s. The first record i of [lo, hi) for which before(route i, arg) is 0,
 * or hi: before() must be 1 for a prefix of [lo, hi) and 0 for the rest (a binary search on
 * records in key order). It descends groups, then a group's segments, then a segment's
 * records, reading each level's first record directly: O(log records) calls of before() and
 * no search for where a record lies (snapshot_route() would add one per probe).
 */
size_t snapshot_partition(const struct snapshot *s, size_t lo, size_t hi,
			  int (*before)(const struct route *r, const void *arg), const void *arg);
/* Any thread holding s. The segment holding record i, and i's position in it. */
const struct segment *snapshot_segment_of(const struct snapshot *s, size_t i, uint32_t *pos);
/* Any thread holding s. Segment k (0 <= k < snapshot_nsegs(s), global index) and, if first is not
 * NULL, the global index of its first record. O(log groups), O(1) when the previous call of
 * this thread was in the same group (a walk in order). */
const struct segment *snapshot_seg(const struct snapshot *s, size_t k, uint32_t *first);
/* Any thread holding s. The group holding segment k, and k's position in it. */
const struct seggroup *snapshot_group_of(const struct snapshot *s, size_t k, uint32_t *pos);

/*
 * Collector thread. Seal: cut the records added one by one into segments (tables and
 * placeholder rows), then the record offsets, tables and expiring index. The views (lookup
 * index, /metrics) are built on top by snapshot_finish() (compose.h). On error the snapshot
 * is only fit for snapshot_free().
 */
int snapshot_seal(struct snapshot *s) __attribute__((warn_unused_result));

/* Collector thread, before publication: when its collection started (CLOCK_MONOTONIC ms;
 * taken_at is stamped with CLOCK_REALTIME now), how long collection and build took, and the
 * enum collector_trigger that caused it. */
void snapshot_set_taken(struct snapshot *s, int64_t taken_mono_ms, double duration_s,
			uint32_t trigger);

/* Free a snapshot that was never published (half-built is fine, NULL is fine). */
void snapshot_free(struct snapshot *s);

/*
 * Collector thread only (the one writer). Make s the current snapshot, assign its generation,
 * and retire the previous one (freed after a grace period and its last reader). May block
 * for an RCU grace period. Snapshots replaced within a few milliseconds of a grace period
 * share the next one: they are retired by a later publication or snapshot_chain_retire().
 */
void snapshot_publish(struct snapshot *s);
/* The publishing thread. When replaced snapshots await their grace period: the
 * snapshot_now_ms() at which snapshot_chain_retire() should run, or INT64_MAX if none do. */
int64_t snapshot_chain_retire_at(const struct snapshot_chain *c);
/* The publishing thread. Retire the replaced snapshots now (one grace period for them all). */
void snapshot_chain_retire(struct snapshot_chain *c);

/* Any thread. The chain's current snapshot with a reference held, or NULL if none published
 * yet. */
struct snapshot *snapshot_acquire(struct snapshot_chain *c);
/* Any thread. Drop a reference from snapshot_acquire(); NULL is fine. */
void snapshot_release(struct snapshot *s);

/*
 * Any thread holding s (after its seal, or the collector thread building it): what it is.
 * generation: 1, 2, ... in publication order (0 before); serial: unique per snapshot object
 * (reader-side caches); taken_at: CLOCK_REALTIME when its collection started, and the same
 * instant in CLOCK_MONOTONIC milliseconds; duration_s: collection and build; trigger: the
 * enum collector_trigger that caused it; family: AF_INET for an IPv4 instance's snapshot, 0
 * for IPv6; has_main: an IPv4 snapshot's main table exists (its proc text then starts with
 * the header, snapshot_proc_head()).
 */
uint64_t snapshot_generation(const struct snapshot *s);
/* The publishing thread, on a snapshot not yet published: the generation
 * snapshot_publish() will give it. */
uint64_t snapshot_next_generation(const struct snapshot *s);
uint64_t snapshot_serial(const struct snapshot *s);
struct timespec snapshot_taken_at(const struct snapshot *s);
int64_t snapshot_taken_mono_ms(const struct snapshot *s);
double snapshot_duration_s(const struct snapshot *s);
uint32_t snapshot_trigger(const struct snapshot *s);
uint8_t snapshot_family(const struct snapshot *s);
int snapshot_has_main(const struct snapshot *s);
/* Any thread holding s: interfaces, nexthop objects and names the routes were rendered with. */
const struct route_ctx *snapshot_ctx(const struct snapshot *s);

/* Any thread holding s: its records, segments (shared with other snapshots where nothing
 * changed: segs_built were built for it), the bytes of its proc view (the header included)
 * and its segments' bytes. */
size_t snapshot_nroutes(const struct snapshot *s);
size_t snapshot_nsegs(const struct snapshot *s);
size_t snapshot_segs_built(const struct snapshot *s);
size_t snapshot_proc_len(const struct snapshot *s);
size_t snapshot_seg_bytes(const struct snapshot *s);
/* Any thread holding s, after its publication: the resident bytes it holds that no newer
 * live snapshot shares (snapshot_bytes_estimate() below; grows as newer ones are freed). */
size_t snapshot_bytes(const struct snapshot *s);
/* Any thread holding s: the proc view's header (/proc/net/route's first line), NULL and 0
 * when it has none. */
const char *snapshot_proc_head(const struct snapshot *s, size_t *len);

/* Any thread holding s: its tables in kernel order (struct snapshot_table above), i <
 * snapshot_ntables(s). */
size_t snapshot_ntables(const struct snapshot *s);
const struct snapshot_table *snapshot_table_at(const struct snapshot *s, size_t i);

/* Any thread holding s: its groups of segments (seggroup.h) in order, q <
 * snapshot_ngroups(s), with the global index of group q's first record in *first (if not
 * NULL); the groups holding expiring records (indexes into the groups, ascending). */
size_t snapshot_ngroups(const struct snapshot *s);
const struct seggroup *snapshot_group(const struct snapshot *s, size_t q, uint32_t *first);
/* Any thread holding a and b: how many of the groups from a's qa and b's qb on (at most n)
 * are the same groups, pairwise; their segments' count in *nsegs. Reads the two snapshots'
 * own arrays, not the groups. */
size_t snapshot_same_groups(const struct snapshot *a, size_t qa, const struct snapshot *b,
			    size_t qb, size_t n, size_t *nsegs);
const uint32_t *snapshot_expiring_groups(const struct snapshot *s, size_t *n);

/* Any thread holding s: the expiring routes, as record indexes, soonest deadline first. */
size_t snapshot_nexpiring(const struct snapshot *s);
const uint32_t *snapshot_expiring(const struct snapshot *s);

/* The views built on s (above): the collector thread fills them before publication (and
 * render_metrics.c its own at the first scrape, under its lock); readers holding s read
 * them. */
struct snapshot_views *snapshot_views(const struct snapshot *s);

/* Interface name for ifindex in s ("" when unknown). Never NULL. */
static inline const char *snapshot_link_name(const struct snapshot *s, uint32_t ifindex)
{
	return route_ctx_link_name(snapshot_ctx(s), ifindex);
}
/* Interface record for ifindex, or NULL. */
static inline const struct route_link *snapshot_link(const struct snapshot *s, uint32_t ifindex)
{
	return route_ctx_link(snapshot_ctx(s), ifindex);
}
/* Any thread. Position in snapshot_expiring(s) of the first route whose deadline is after t_ms (so
 * the routes before it are due at t_ms); snapshot_nexpiring(s) if none. O(log expiring). */
size_t snapshot_expiring_after(const struct snapshot *s, int64_t t_ms);

/* Nexthop object id, or NULL. */
static inline const struct route_nhobj *snapshot_nhobj(const struct snapshot *s, uint32_t id)
{
	return route_ctx_nhobj(snapshot_ctx(s), id);
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
 * Accounting of retired snapshots that readers still hold.
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
 * collector thread each time snapshots have been retired (after their grace period and the
 * drop of the publication's references), with the current generation.
 * It must not block and must not call snapshot_publish().
 */
size_t snapshot_bytes_estimate(const struct snapshot *s);
long snapshot_retired_count(struct snapshot_chain *c);
size_t snapshot_retired_bytes(struct snapshot_chain *c);
size_t snapshot_current_bytes(struct snapshot_chain *c);
void snapshot_set_retire_hook(struct snapshot_chain *c, void (*fn)(uint64_t current_generation));

/* CLOCK_MONOTONIC now in milliseconds. */
int64_t snapshot_now_ms(void);

#endif
