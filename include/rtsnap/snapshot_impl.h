/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot_impl.h - the fields of a snapshot, for the modules that build, compose and free
 * snapshots (src/model, src/builder, src/mirror) and for their unit tests. Readers use the
 * calls of snapshot.h; the Makefile's layer check keeps this header out of the other layers.
 */
#ifndef RTSNAP_SNAPSHOT_IMPL_H
#define RTSNAP_SNAPSHOT_IMPL_H

#include "rtsnap/snapshot.h"

struct snapshot_stage; /* snapshot.c: records added one by one, before finish */
struct snapshot {
	/* identity and timing */
	uint64_t generation;	      /* 1, 2, ... in publication order */
	uint64_t serial;	      /* unique per snapshot object (reader-side caches) */
	struct snapshot_chain *chain; /* the chain it was made for, or NULL (never published) */
	struct timespec taken_at;     /* CLOCK_REALTIME when the dump started */
	int64_t taken_mono_ms;	      /* CLOCK_MONOTONIC, same instant */
	double duration_s;	      /* dump + build, seconds */
	uint32_t trigger;	      /* enum collector_trigger that caused it */
	struct snapshot *retire_next; /* replaced, awaiting its grace period (snapshot.c) */

	/* the records, in segments (segment.h) in groups (seggroup.h): tables in kernel
	 * (fib_table_hash) order, each table's records in kernel order. Group q holds records
	 * [group_first[q], group_first[q + 1]) and segments [group_seg0[q], group_seg0[q + 1])
	 * (global indexes); snapshot_route() and snapshot_seg() find them. Per snapshot this is
	 * O(groups): a group none of whose segments changed is shared with the snapshot
	 * before (docs/design.md, "Groups of segments"). */
	struct seggroup **groups;
	size_t ngroups, groups_cap;
	uint32_t *group_first, *group_seg0; /* ngroups + 1 entries each, after seal */
	size_t nsegs;			    /* segments, in all groups */
	size_t nroutes;			    /* records */
	size_t proc_len;		    /* bytes of the proc view */
	size_t segs_built; /* segments built for this snapshot rather than shared */
	/* counted by snapshot_add_group(): the groups with expiring records, those records,
	 * the segments' memory, and how much of it the snapshot composed before
	 * (base_serial) holds too */
	uint32_t *exp_groups;
	size_t nexp_groups, exp_groups_cap, nexp_records;
	size_t seg_bytes, shared_bytes;
	uint64_t base_serial;
	/* the segments it holds a reference on (snapshot_add_segment(), in groups of its own:
	 * pend is the one being filled); those of groups added with snapshot_add_group()
	 * are held for it by the caller (holds = 1) until the caller gives them up with
	 * snapshot_defer_put(); from its seal it is listed, so that it takes a reference then on
	 * each of them it contains (back, below; snapshot.c). It holds one reference on each of
	 * its groups unless holds: then the groups are held like the segments (seggroup.h). */
	struct segment **own;
	size_t nown, own_cap;
	struct seggroup *pend;
	int holds, listed;
	struct snapshot *held_prev, *held_next;
	/* references on held segments and groups the mirror gave up while s was listed (under
	 * the lock) */
	struct segment **back;
	size_t nback, back_cap;
	struct seggroup **gback;
	size_t ngback, gback_cap;
	struct snapshot_table *tables;
	size_t ntables, tables_cap;
	/* interfaces, nexthop objects (sorted after snapshot_prepare) and iproute2 names (loaded
	 * by the collector before finish; owned): what the routes were rendered with */
	struct route_ctx ctx;
	/* set before finish: routes were added grouped by table in kernel table order, every
	 * table included (an empty one as a lone record with .placeholder set) */
	int ordered_tables;
	/* set before finish: AF_INET for an IPv4 instance's snapshot (records as route4.h says,
	 * no placeholder rows, no empty tables), 0 for IPv6; for IPv4, whether the main table
	 * exists: then the proc text starts with /proc/net/route's header (proc_head, a static
	 * string, counted in proc_len), else it is empty (kernel-facts.md 12.3) */
	uint8_t family, has_main;
	uint32_t proc_head_len;
	const char *proc_head;
	struct snapshot_stage *stage; /* records added with snapshot_add_route(), until finish */

	/* expiring routes: record indexes, soonest deadline first */
	uint32_t *expiring;
	size_t nexpiring;

	/* views built on the sealed snapshot by the layers above (snapshot.h) */
	struct snapshot_views views;

	/* lifetime; see snapshot.c */
	long refs;
	/* accounting (see snapshot_bytes_estimate): set by snapshot_publish(), grown when a newer
	 * retired snapshot is freed (move_held_bytes()), read by anyone; both atomic */
	size_t bytes; /* resident bytes this snapshot holds that no newer live snapshot shares */
	int retired;  /* replaced, still referenced: counted in snapshot_retired_*() */
};

#endif
