/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seggroup.h - an immutable run of up to SEGGROUP_MAX consecutive segments of one table, with
 * each member's summary and record offset and the members' sums: the unit a snapshot shares
 * with the one before when none of its segments changed (docs/design.md, "Groups of
 * segments"). A snapshot is, table by table, an array of groups.
 *
 * Lifetime: seggroup_new() returns a group with one reference (the builder's); the last
 * seggroup_put() frees it, on whichever thread drops it. The mirror keeps one on its current
 * group of each run of chunks; the snapshots it composes take none (snapshot_add_group(),
 * as for the segments: a reference taken and dropped per group and publication was a write
 * to every group's header, the part of a publication that grew with the table). When the
 * mirror replaces or drops a group it gives its reference up with snapshot_defer_put_group():
 * every snapshot composed since the group was first published (`since`, `holder`) and still
 * alive takes one then, kept until it is freed. A snapshot built from records holds one on
 * each of its own groups. A group holds no reference on its segments: whoever holds the
 * group keeps them alive (the mirror's chunks and the snapshots' back lists, snapshot.c; or a
 * snapshot's own references). Nothing writes a group once it is sealed, except `since` and
 * `holder`, set by the collector thread before any snapshot that contains it is sealed.
 */
#ifndef RTSNAP_SEGGROUP_H
#define RTSNAP_SEGGROUP_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/segment.h"

#define SEGGROUP_MAX 128

struct snapshot_chain;

struct seggroup {
	long refs;	/* atomic */
	uint64_t since; /* serial of the first snapshot composed with it (0: none yet) */
	struct snapshot_chain *holder; /* that snapshot's chain */
	uint32_t table;		       /* every member's */
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
