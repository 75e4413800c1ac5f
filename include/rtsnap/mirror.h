/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mirror.h - the kernel's IPv6 routing tables as the collector knows them: mutable, owned by
 * the collector thread, kept in kernel order, changed by the kernel's own rules for every
 * notification (docs/kernel-facts.md, "Notifications").
 *
 * Nobody but the collector thread touches a mirror; readers only ever see the immutable
 * snapshots built from it (mirror_snapshot()).
 *
 * Storage: per table, a list of chunks of at most MIRROR_CHUNK records in kernel order
 * (order.h), so that finding a route is two binary searches and inserting one moves at most
 * a chunk. A record is one route message as the kernel dumps it: a multipath route is one
 * record with its nexthops.
 */
#ifndef RTSNAP_MIRROR_H
#define RTSNAP_MIRROR_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/nlparse.h"
#include "rtsnap/route.h"
#include "rtsnap/snapshot.h"

struct mirror;

/* What a change did, for counters and publication. */
struct mirror_delta {
	uint32_t added, removed, changed; /* routes */
	uint32_t unknown;		  /* deletes of routes the mirror did not have */
};

/* Empty mirror; *out set only on success. */
int mirror_new(struct mirror **out) __attribute__((warn_unused_result));
/* NULL is fine. */
void mirror_free(struct mirror *m);

/*
 * Append a route from a full dump (dump order is kernel order; a route that arrives out of
 * order is inserted where the key puts it). 0 or -ENOMEM.
 */
int mirror_load_route(struct mirror *m, const struct nlparse_route *pr)
    __attribute__((warn_unused_result));

/*
 * Apply an RTM_NEWROUTE notification with its nlmsg_flags (NLM_F_REPLACE, NLM_F_APPEND) as
 * the kernel applied it: a replace takes the place of the first route of the same node and
 * metric of the same kind (ECMP-able or not) and drops its siblings; an add of an ECMP-able
 * route joins the group of its node and metric (the message lists the whole group); any other
 * add goes after the routes of equal key; a message for a route the mirror already has
 * updates it. 0 or -ENOMEM.
 */
int mirror_apply_new(struct mirror *m, const struct nlparse_route *pr, uint16_t nlflags,
		     struct mirror_delta *d) __attribute__((warn_unused_result));
/*
 * A route from a targeted dump: update the mirror's route of the same identity (or its group),
 * never add one. A route the mirror lacks is either announced by a notification still queued
 * (which puts it where the kernel's insertion order does) or found by the next resync.
 * 0 or -ENOMEM.
 */
int mirror_apply_update(struct mirror *m, const struct nlparse_route *pr, struct mirror_delta *d)
    __attribute__((warn_unused_result));
/* Apply an RTM_DELROUTE: a whole (multipath) route, or one hop of a group. 0 or -ENOMEM. */
int mirror_apply_del(struct mirror *m, const struct nlparse_route *pr, struct mirror_delta *d)
    __attribute__((warn_unused_result));

#define MIRROR_LINK_NEW 1u
#define MIRROR_LINK_RENAMED 2u
#define MIRROR_LINK_STATE 4u /* IFF_UP, IFF_RUNNING or IFF_LOWER_UP changed */
/* RTM_NEWLINK. Returns MIRROR_LINK_* bits (0 = nothing changed) or -ENOMEM. */
int mirror_set_link(struct mirror *m, const struct route_link *l);
/* RTM_DELLINK: forget the link and every route and hop that used it (the kernel flushes them,
 * with or without telling: net.ipv6.route.skip_notify_on_dev_down). */
void mirror_del_link(struct mirror *m, uint32_t ifindex, struct mirror_delta *d);
/* Whether any nexthop object uses ifindex. */
int mirror_link_has_nhobj(const struct mirror *m, uint32_t ifindex);

/* RTM_NEWNEXTHOP. 1 if it was new or changed, 0 if identical, -ENOMEM. */
int mirror_set_nhobj(struct mirror *m, const struct route_nhobj *o);
/* RTM_DELNEXTHOP: forget the object and every route that used it. */
void mirror_del_nhobj(struct mirror *m, uint32_t id, struct mirror_delta *d);
/* Forget every nexthop object (before a nexthop re-dump). */
void mirror_clear_nhobjs(struct mirror *m);
/* Drop the routes over nexthop objects the mirror no longer has (after a nexthop re-dump:
 * the kernel flushed objects and their routes silently). */
void mirror_prune_nhid_routes(struct mirror *m, struct mirror_delta *d);
/* Whether any nexthop object is a group. */
int mirror_has_groups(const struct mirror *m);
/* Tables that hold a route using a nexthop group (ids into *out, malloc()ed). Count or
 * -ENOMEM. */
long mirror_group_tables(const struct mirror *m, uint32_t **out);

/* A table that exists, maybe without routes. newest: it was just created, so it goes first in
 * its hash bucket (else last: a table found by probing, of unknown age). 0 or -ENOMEM. */
int mirror_add_table(struct mirror *m, uint32_t id, int newest) __attribute__((warn_unused_result));
/* The ids of every table known, in kernel order, in a malloc()ed array. Count or -ENOMEM. */
long mirror_table_ids(const struct mirror *m, uint32_t **out);
/* Whether table id is known. */
int mirror_has_table(const struct mirror *m, uint32_t id);

/*
 * Where routes learned from router advertisements are (route_ra_candidate(): the default
 * routers and route information the kernel adds, which an RA refreshes without a message):
 * *out is a malloc()ed array of (table, ifindex) pairs, each pair once. Pairs or -ENOMEM.
 */
long mirror_ra_links(const struct mirror *m, uint32_t **out);

/* Mark the route of key k RTF_PREFIX_RT (from an RTM_F_PREFIX dump). 1 if it changed. */
int mirror_mark_prefix(struct mirror *m, const struct prefix_key *k);

/*
 * Routes of old that a dump cannot carry (their message would not fit one dump buffer, while
 * the notification that announced them did) and that dump d does not have: copied into d, so
 * that a resync does not lose them. Returns how many, or -ENOMEM.
 */
long mirror_keep_oversized(const struct mirror *old, struct mirror *d);
/* Whether m holds a route a dump may not carry. Such a route also ends a dump early: the
 * kernel stops the table's walk there without an error (seen with 2 200 hops), so a dump taken
 * then is incomplete. */
int mirror_has_oversized(const struct mirror *m);

/* Whether a and b know the same links, nexthop objects and tables (in the same order):
 * with no route differing either (mirror_diff), a resync can keep a and the segments it
 * shares with the published snapshot. */
int mirror_same_outside_routes(const struct mirror *a, const struct mirror *b);

/*
 * Adopting a full dump d into m, in steps (a resync that found differences, or a mirror known
 * to be incomplete): m ends with d's routes, tables, links and nexthop objects, in d's order,
 * while every run of routes of one key that is the same in both keeps its record, so the chunks
 * the dump did not change keep their segments. Each step takes about max_routes of d's routes
 * (in key order, table by table), so that a publication between steps can let the replaced
 * segments go before the next ones are built: a dump that changes every chunk then costs the
 * memory of one step more than the table, not of a second table.
 *
 * mirror_adopt_begin() takes d (freed by mirror_adopt_end(), whatever happens) and adopts the
 * links and nexthop objects and the list of tables (tables the dump lacks go at the last
 * step); 0 or -ENOMEM. mirror_adopt_step(): 1 while there is more, 0 when m is d, -ENOMEM
 * (then m holds part of both and must be resynced). Between steps m may be published, not
 * changed otherwise.
 */
struct mirror_adoption;
int mirror_adopt_begin(struct mirror *m, struct mirror *d, struct mirror_adoption **out)
    __attribute__((warn_unused_result));
int mirror_adopt_step(struct mirror_adoption *a, size_t max_routes, struct mirror_delta *delta)
    __attribute__((warn_unused_result));
void mirror_adopt_end(struct mirror_adoption *a);

/* Routes (records) held, and bytes of memory the mirror holds (approximate, from sizes). */
size_t mirror_routes(const struct mirror *m);
size_t mirror_bytes(const struct mirror *m);

/*
 * Build an immutable snapshot of m (links, nexthop objects, every table with its placeholder
 * rows, names loaded from /etc/iproute2) ready for snapshot_publish(). It shares the
 * segment of every chunk that has not changed since the last call, builds the others and
 * keeps them for the next call (so only the changed chunks cost anything); when what
 * routes print depends on changed (links, nexthop objects, names) every chunk is built.
 * *out set only on success; 0 or a negative errno.
 */
int mirror_snapshot(struct mirror *m, struct snapshot **out) __attribute__((warn_unused_result));

/*
 * Compare two mirrors route by route (everything but expiry deadlines, which move with every
 * dump): *only_a routes are in a and not in b, *only_b the reverse. Up to max_log differing
 * routes are logged at level warn with prefix what. 0 or -ENOMEM.
 */
int mirror_diff(const struct mirror *a, const struct mirror *b, const char *what,
		unsigned int max_log, uint32_t *only_a, uint32_t *only_b)
    __attribute__((warn_unused_result));

#endif
