/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seggroup.h - an immutable run of up to SEGGROUP_MAX consecutive segments of one table, with
 * each member's summary and record offset and the members' sums: the unit a snapshot shares
 * with the one before when none of its segments changed (docs/design.md, "Groups of
 * segments"). A snapshot is, table by table, an array of groups.
 *
 * Lifetime: seggroup_new() returns a group with one reference (the builder's). Whoever keeps
 * it takes one (the mirror for its current group of chunks, each snapshot that contains it),
 * and the last seggroup_put() frees it, on whichever thread drops it. A group holds no
 * reference on its segments: whoever holds the group keeps them alive (the mirror's chunks and
 * the snapshots' back lists, snapshot.c; or a snapshot's own references, for snapshots built
 * from records). Nothing writes a group once it is sealed, except `mark`, which only the
 * collector thread uses.
 */
#ifndef RTSNAP_SEGGROUP_H
#define RTSNAP_SEGGROUP_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/segment.h"

#define SEGGROUP_MAX 128

struct seggroup {
	long refs;	/* atomic */
	uint64_t mark;	/* collector thread only: serial of the newest snapshot composed with it */
	uint32_t table; /* every member's */
	uint32_t nsegs, cap;
	struct segment_sum sum; /* the members' summed (prefix lengths: OR); sum.table = table */
	uint32_t *first;	/* nsegs + 1 record offsets inside the group */
	struct segment **segs;
	struct segment_sum *sums; /* the members' summaries */
};

/* Collector thread (any single builder). An empty group of table `table` with room for cap
 * members (1..SEGGROUP_MAX); one reference held by the caller. *out set only on success. */
int seggroup_new(uint32_t table, uint32_t cap, struct seggroup **out)
    __attribute__((warn_unused_result));
/* A copy of g's members in a new group with room for cap (at least g's): to patch some. */
int seggroup_copy(const struct seggroup *g, uint32_t cap, struct seggroup **out)
    __attribute__((warn_unused_result));
/* Before seal: set member j (j < cap; members past nsegs grow nsegs) to segment seg, whose
 * summary is sum. */
void seggroup_set(struct seggroup *g, uint32_t j, struct segment *seg,
		  const struct segment_sum *sum);
/* Before seal: keep only the first n members. */
void seggroup_truncate(struct seggroup *g, uint32_t n);
/* Sum the members and fill the record offsets. After it nothing changes the group. */
void seggroup_seal(struct seggroup *g);

/* Any thread. NULL is fine for put. */
void seggroup_get(struct seggroup *g);
void seggroup_put(struct seggroup *g);

/* Any thread. The member holding record i of the group (i < sum.n): O(log members). */
uint32_t seggroup_member_of(const struct seggroup *g, uint32_t i);

/* Any thread. Groups allocated and not yet freed. */
long seggroup_live_count(void);

#endif
