/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * index.h - per-snapshot lookup indexes: longest-prefix match, "routes inside P",
 * "routes covering A", tables by id, expiring routes in kernel order, paging positions.
 *
 * Built once by snapshot_finish() on the collector thread (index_build), in O(tables +
 * segments + expiring routes); read-only
 * afterwards, so any thread holding a snapshot reference may query it without locks.
 *
 * Kernel order key. Within a table the kernel dumps routes in a walk of the fib6 radix tree
 * that is a total order on this key (checked at build time, see index.c):
 *   - a route without a source prefix: (end address of dst, 1, 255 - dst_len, metric)
 *   - a source-specific route:         (first address of dst, 0, dst_len, end of src,
 *                                       255 - src_len, metric)
 * so "routes inside P" is one contiguous run of records and a paging cursor can be found
 * again by binary search in a later snapshot.
 *
 * Memory: a few hundred bytes per table plus 4 bytes per expiring route; every query is a
 * binary search on the key over the snapshot's segments, nothing is hashed per snapshot.
 * index_bytes() reports the exact figure.
 */
#ifndef RTSNAP_INDEX_H
#define RTSNAP_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/snapshot.h"

/* Collector thread, from snapshot_finish(): fill s->lookup. 0 or -ENOMEM. */
int index_build(struct snapshot *s) __attribute__((warn_unused_result));
/* Free an index (NULL is fine). */
void index_free(struct lookup_index *ix);

/* Bytes the index holds, and the seconds index_build() took. */
size_t index_bytes(const struct lookup_index *ix);
double index_build_seconds(const struct lookup_index *ix);

/* Position of table id in s->tables, or -1. */
int index_table_pos(const struct snapshot *s, uint32_t id);

/*
 * The route the kernel's FIB would choose in table for destination dst and source src
 * (NULL = ::): longest dst prefix first; a dst node that has source-specific routes is
 * entered only through a source prefix containing src (as fib6_node_lookup does); within a
 * node the first usable route in kernel order (lowest metric), where usable means not
 * expired at now_ms and not with every nexthop dead. Returns the record index or -ENOENT.
 */
long index_lookup(const struct snapshot *s, uint32_t table, const uint8_t dst[16],
		  const uint8_t *src, int64_t now_ms);

/*
 * The IPv4 route the kernel's FIB would choose in table for destination dst (4 bytes, network
 * order) in an AF_INET snapshot, as fib_table_lookup() does for `ip route get` without tos or
 * oif: the longest prefix containing dst first; among its routes in kernel order the first
 * without a TOS whose nexthops are not all dead, where a reject route (unreachable, blackhole,
 * prohibit, throw) or a route over a blackhole nexthop object is an answer. Returns the record
 * index or -ENOENT (also for an IPv6 snapshot).
 */
long index_lookup4(const struct snapshot *s, uint32_t table, const uint8_t dst[4]);

/*
 * Records of table position tpos whose destination lies inside addr/len, as a range of
 * record indexes [*lo, *hi) in kernel order (IPv4: the addresses of addr/len, which may hold a
 * few routes of its first address shorter than len; query_match() drops them). Returns 1 (a snapshot's tables are always in
 * key order; 0 would ask the caller for index_inside_collect()). Placeholder rows may fall
 * inside the range.
 */
int index_inside_range(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
		       uint32_t *lo, uint32_t *hi);
/* Fallback of index_inside_range(): the record indexes, sorted, in a malloc()ed array (the
 * caller frees it). Returns the count or -ENOMEM. */
long index_inside_collect(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
			  uint32_t **out);

/*
 * Records of table position tpos whose destination contains addr/len (len 128 for an
 * address; in an AF_INET snapshot addr in bytes 0..3 and 32 for an address), sorted by record index (= kernel order), in a malloc()ed array the caller frees.
 * Returns the count or -ENOMEM. At most one hash probe per prefix length present in the table.
 */
long index_covers(const struct snapshot *s, int tpos, const uint8_t addr[16], uint8_t len,
		  uint32_t **out);

/* Expiring routes sorted by record index (kernel order); *n gets their number. */
const uint32_t *index_expiring_by_record(const struct snapshot *s, size_t *n);

/* A paging position: the last route a page returned, by its kernel order key (an IPv4
 * route's TOS in src[0]). */
struct index_cursor {
	uint32_t table;
	uint8_t dst[16], src[16];
	uint8_t dst_len, src_len;
	uint32_t metric;
	uint8_t gw[16]; /* first nexthop: tells routes with an equal key apart */
	uint32_t ifindex;
	uint32_t ordinal; /* how many earlier routes of the table share this exact key */
};

/* The cursor of record i (not a placeholder). */
void index_cursor_of(const struct snapshot *s, size_t i, struct index_cursor *c);
/*
 * First record index strictly after cursor c in s (which may be a later snapshot than the
 * one c came from): exact when the cursor's table still exists, unless the cursor's route
 * was deleted while routes with the very same key (dst, src, metric; they differ only in
 * nexthop) remain, where the ordinal is used as a guess; if the table is gone, the first
 * table of a later hash bucket. Returns s->nroutes when nothing follows.
 */
size_t index_cursor_resume(const struct snapshot *s, const struct index_cursor *c);

#endif
