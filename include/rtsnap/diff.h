/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diff.h - the routes that differ between two snapshots, as `/routes` shows them.
 *
 * Consecutive snapshots share every segment that did not change (segment.h), so the diff
 * walks both segment arrays table by table, skips the segments they share (same pointer)
 * and merges only the records of the stretches that differ, by the kernel order key
 * (order.h). Routes of equal key are told apart by their rendered `ip -j` objects. The work
 * is O(segments + records of the segments that differ).
 *
 * Two records are the same route when their objects are byte for byte the same, except
 * "expires", which moves with time: routes with a deadline are the same when everything
 * else is, and the deadline moved by at most a second (a dump recomputes it from whole
 * ticks; mirror.c counts changes the same way). The passage of time is not a change.
 *
 * Pure functions on sealed snapshots: any thread holding both, no allocation but the result.
 */
#ifndef RTSNAP_DIFF_H
#define RTSNAP_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "rtsnap/segment.h"
#include "rtsnap/snapshot.h"

/* A record of a snapshot: g->routes[pos], its object g->json + g->json_off[pos] (+ 1: the
 * leading comma). Valid while the snapshot that holds g is. */
struct diff_ref {
	const struct segment *g;
	uint32_t pos;
};

struct diff {
	/* routes of a that b does not have, and routes of b that a does not have; each in kernel
	 * order within a table, tables in b's order (a table only a has comes after them) */
	struct diff_ref *removed, *added;
	size_t nremoved, nadded;
	size_t cap_removed, cap_added;
	/* the work done: records compared, segments skipped as shared */
	size_t visited, skipped;
};

/*
 * The routes that differ between a and b (either may be NULL: every route of the other one).
 * *d must be zeroed (or diff_free()d) first. 0; -E2BIG when more than max routes differ
 * (the walk stops there; *d holds what was found); -ENOMEM.
 */
int diff_snapshots(const struct snapshot *a, const struct snapshot *b, size_t max, struct diff *d)
    __attribute__((warn_unused_result));
void diff_free(struct diff *d);

/* Whether record ia of ga and record ib of gb are the same route (see above). */
int diff_same_route(const struct segment *ga, uint32_t ia, const struct segment *gb, uint32_t ib);

/* The pre-rendered object of record pos of g (no leading comma); its length. */
size_t diff_object(const struct segment *g, uint32_t pos, const char **p);

/* The span ,"expires":N in the object obj[0..len) ([*off, *off + *elen), *elen 0 if none). */
void diff_expires_span(const char *obj, size_t len, size_t *off, size_t *elen);

#endif
