/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * segment.h - an immutable run of up to SEGMENT_MAX routes of one table, in kernel order, with
 * everything the views need of them: the records (whose hops, metrics and the hops'
 * encapsulations point into the segment), their `ip -j` objects with per-record offsets, the
 * length of their /proc/net/ipv6_route lines (rendered per read: view.c), and the aggregates
 * /metrics and the lookup index sum up.
 *
 * Lifetime, the one story for every segment (snapshot.c and mirror.c follow it and do not
 * tell it again). A segment is reference-counted (refs); the last segment_put() frees it, on
 * whichever thread drops it (a reader releasing an old snapshot, say). Who holds references:
 *   1. segment_build() returns one, the builder's.
 *   2. A snapshot built from records (snapshot_add_route(), snapshot_add_segment(): tests,
 *      --once of a dump, the placeholder rows) holds one on each of its segments until it is
 *      freed.
 *   3. The mirror holds one on the segment of each chunk that has not changed since the last
 *      publication, so the next publication shares it instead of building it again (and the
 *      chunk reads its records from it). The snapshots it composes take none (they hold the
 *      groups of segments, seggroup.h, snapshot_add_group(): a reference per segment per
 *      publication was a cache miss each, the largest cost of a publication at a million
 *      routes). When the chunk changes,
 *      the mirror gives its reference up with snapshot_defer_put(): every snapshot of the
 *      mirror's chain (snapshot.h) composed since the segment was first held (`since`,
 *      `holder`) and still alive then takes one, kept in its back list until it is freed; if
 *      none is alive, the segment goes at once. The mirror holds a reference on that chain
 *      for as long as it may give segments up.
 * A reader may use a segment for as long as it holds a snapshot that contains it. Nothing
 * writes a segment after segment_build() returns, except `mark`, `since` and `holder`, which
 * only the collector thread uses.
 */
#ifndef RTSNAP_SEGMENT_H
#define RTSNAP_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/route.h"

#define SEGMENT_MAX 64

struct route_ctx;

/* A record to build from: r, with its hops (nh_count > 1) and metrics (or NULL); src >= 0:
 * the record is unchanged since it was record src of the segment `prev` given to
 * segment_build(), whose text it reuses; -1: render it. */
struct segment_in {
	const struct route *r;
	const struct route_nh *nhs;
	const struct route_metrics *m;
	int32_t src;
};

/* A count by key: (protocol << 8 | type) for kinds, ifindex for devices. Sorted by key. */
struct segment_count {
	uint32_t key, n;
};

struct snapshot_chain;

struct segment {
	/* what composing a snapshot reads of every segment (snapshot_add_segment()), together
	 * at the start of the block: two cache lines per segment per publication at most */
	long refs;	/* atomic */
	size_t bytes;	/* memory held, approximately */
	uint64_t mark;	/* collector thread only: serial of the newest snapshot composed with it */
	uint64_t since; /* collector thread only (and, once given up, anyone under the chain's
			   hold_lock): serial of the first snapshot that holds it without a
			   reference (snapshot_fresh_segment()), or 0 */
	struct snapshot_chain *holder; /* collector thread only: that snapshot's chain */
	uint32_t table;
	uint32_t n;	   /* records (a placeholder row is a record) */
	uint32_t nreal;	   /* records that are routes (not a placeholder row) */
	uint32_t lines;	   /* proc lines */
	uint32_t nexp;	   /* records with a deadline, their positions in exp */
	uint32_t nra;	   /* records shaped like a route learned from an RA (route_ra_shape()) */
	uint32_t proc_len; /* bytes of the records' proc lines */
	uint64_t lens0[3],
	    lens1[3]; /* bit L: a route of dst_len L with / without a source prefix */

	struct route *routes;
	uint16_t *exp;
	/* the records' JSON objects, each with a leading ',' (none for a placeholder row);
	 * record i's is [json_off[i], json_off[i + 1]). Objects of records with a deadline are
	 * rendered per response instead ("expires" moves). */
	char *json;
	uint32_t *json_off;
	struct segment_count *kinds, *devs;
	uint32_t nkinds, ndevs;
	uint32_t mp_routes; /* routes with more than one hop, and their hops */
	uint64_t mp_nh;
};

/*
 * What composing a snapshot reads of a segment (kept in its group, seggroup.h). Whoever holds a
 * segment for snapshots keeps this beside its pointer, so that composing a snapshot touches
 * no segment: at a million routes a publication would otherwise take a cache miss on each of
 * some four thousand segments.
 */
struct segment_sum {
	uint32_t table, n, nreal, lines, nexp, nra, proc_len;
	size_t bytes;
	uint64_t lens0[3], lens1[3];
};

/* Any thread. The summary of g. */
void segment_sum(const struct segment *g, struct segment_sum *out);

/*
 * Collector thread (or any single builder). Copy n records of table `table` (n <= SEGMENT_MAX,
 * kernel order) and render them in context ctx (sorted, see routectx.h), except those that
 * name their record in prev (rendered in the same context), whose bytes are copied: a
 * segment that changed in one route costs one route's rendering. prev may be NULL. 0 with
 * *out holding one reference, or -ENOMEM.
 */
int segment_build(const struct route_ctx *ctx, uint32_t table, const struct segment_in *in,
		  uint32_t n, const struct segment *prev, struct segment **out)
    __attribute__((warn_unused_result));

/* The lone placeholder row of a table (the kernel's root null entry), rendered in ctx. */
int segment_placeholder(const struct route_ctx *ctx, uint32_t table, struct segment **out)
    __attribute__((warn_unused_result));

/* Any thread. Take / drop a reference; NULL is fine for put. */
void segment_get(struct segment *g);
void segment_put(struct segment *g);

/* Any thread, after dropping segments: give freed heap memory back to the kernel when at
 * least SEGMENT_TRIM_BYTES were freed since the last time, no segment was built in the last
 * second (else the memory is about to be reused), and not more than once a second.
 * segment_reclaim_pending(): whether that much is waiting (the collector then looks again
 * once it has been idle for a second). */
#define SEGMENT_TRIM_BYTES (16u << 20)
void segment_reclaim(void);
int segment_reclaim_pending(void);
/* Ask for the next segment_reclaim() once idle whatever was freed: after a full dump, whose
 * buffers and replaced mirror are freed memory that segments did not count. */
void segment_reclaim_soon(void);

/* Any thread. Segments allocated and not yet freed. */
long segment_live_count(void);

#endif
