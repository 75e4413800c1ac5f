/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mirror_edit.h - the mirror's records edited by key and position, for rules that are not
 * IPv6's: the IPv4 mirror (mirror4.h) places and removes fib aliases with these, and applies
 * the kernel's silent changes with mirror_edit_all(). Every edit keeps what the mirror keeps
 * for IPv6 edits: chunks opened and marked changed, their published segments given up as
 * segment.h says, the delta counted.
 *
 * A run is the records of one table whose order key (order.h) equals a route's: for IPv4
 * records (order4_key_of()) exactly one fib alias group, in the group's own order. Collector
 * thread only, as the rest of the mirror. Errors: 0 or a negative errno (-ENOMEM; then the
 * mirror is whole but may miss the edit: resync).
 */
#ifndef RTSNAP_MIRROR_EDIT_H
#define RTSNAP_MIRROR_EDIT_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/mirror.h"
#include "rtsnap/order.h"
#include "rtsnap/route.h"

/* An empty IPv4 mirror: no table until a route makes it (main and local included), no
 * placeholder rows in its snapshots. *out set only on success. */
int mirror_new4(struct mirror **out) __attribute__((warn_unused_result));
/* AF_INET for a mirror made by mirror_new4(), else 0. */
int mirror_family(const struct mirror *m);

struct mirror_run {
	uint32_t table;
	struct order_key k;
	size_t n; /* records */
};

/* The run of r's table and key; create: make the table if there is none (first in its hash
 * bucket: the kernel just made it), else an absent table is an empty run. */
int mirror_run_find(struct mirror *m, const struct route *r, int create, struct mirror_run *run)
    __attribute__((warn_unused_result));
/* Record i of run (i < run->n), its hops and metrics reachable through it; valid until the
 * next edit. tmp: the caller's, may be used. */
const struct route *mirror_run_get(const struct mirror *m, const struct mirror_run *run, size_t i,
				   struct route *tmp);
/* Insert r (hops nhs when nh_count > 1, metrics met or NULL; all copied) before record i
 * (i == run->n: after the last): delta added. */
int mirror_run_insert(struct mirror *m, struct mirror_run *run, size_t i, const struct route *r,
		      const struct route_nh *nhs, const struct route_metrics *met,
		      struct mirror_delta *d) __attribute__((warn_unused_result));
/* Record i becomes r (copied): delta changed if it differs. */
int mirror_run_set(struct mirror *m, struct mirror_run *run, size_t i, const struct route *r,
		   const struct route_nh *nhs, const struct route_metrics *met,
		   struct mirror_delta *d) __attribute__((warn_unused_result));
/* Remove record i: delta removed. */
int mirror_run_remove(struct mirror *m, struct mirror_run *run, size_t i, struct mirror_delta *d)
    __attribute__((warn_unused_result));

/*
 * Every record of every table in order, offered to fn: r with its hops and metrics reachable
 * through it. fn returns MIRROR_EDIT_KEEP, MIRROR_EDIT_REMOVE, or MIRROR_EDIT_SET with the new
 * record in *out and its hops in hops (room for MIRROR_EDIT_HOPS or r->nh_count if more; used
 * when out->nh_count > 1; out's metrics are ignored: the record keeps its own).
 */
enum { MIRROR_EDIT_KEEP, MIRROR_EDIT_REMOVE, MIRROR_EDIT_SET };
#define MIRROR_EDIT_HOPS 64
typedef int (*mirror_edit_fn)(void *arg, const struct route *r, struct route *out,
			      struct route_nh *hops);
int mirror_edit_all(struct mirror *m, mirror_edit_fn fn, void *arg, struct mirror_delta *d)
    __attribute__((warn_unused_result));

#endif
