/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mirror.h - the kernel's IPv6 routing tables as the collector knows them: mutable, owned by
 * the collector thread, kept in kernel order, changed by the kernel's own rules for every
 * notification (docs/kernel-facts.md, "Notifications").
 *
 * Nobody but the collector thread touches a mirror; readers only ever see the immutable
 * snapshots built from it (builder_compose(), builder.h).
 *
 * Storage: per table, a list of chunks of at most MIRROR_CHUNK (SEGMENT_MAX, 64) records in kernel order
 * (order.h), so that finding a route is two binary searches and inserting one moves at most
 * a chunk. A record is one route message as the kernel dumps it: a multipath route is one
 * record with its nexthops.
 */
#ifndef RTSNAP_MIRROR_H
#define RTSNAP_MIRROR_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/nlparse.h"
#include "rtsnap/order.h"
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
 * A dump taken while the tables change can skip routes: an IPv6 route dump that resumes after
 * its table changed restarts its walk from the root and skips as many nodes as it had dumped
 * (fib6_dump_table), so when nodes before its position went, the nodes just after it are
 * never listed. That happens only between two datagrams (each is filled under the table's
 * lock, in one walk). mirror_load_gap(): the next route mirror_load_route() takes starts a new
 * datagram, so the keys from the last route loaded to it (both included) are a gap, where a
 * route the dump lacks may have been skipped (and where it may list a route again, which
 * mirror_load_route() then takes once). mirror_load_end(): the route dump is over (the keys
 * after its last route, in that table, are a gap too); keep: keep the gaps for an adoption
 * (mirror_adopt_rules.untrusted), else they are forgotten. 0 or -ENOMEM.
 */
void mirror_load_gap(struct mirror *m);
int mirror_load_end(struct mirror *m, int keep) __attribute__((warn_unused_result));

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
/*
 * (table, device, why) triples whose routes must be re-read, as a malloc()ed array (*out, NULL
 * when none) the caller frees. why: MIRROR_REREAD_SIBLING, a multipath route lost its first
 * leg (a deleted hop or device) and the survivor's own attributes are not known, a dump having
 * told only the first sibling's; MIRROR_REREAD_PREFSRC, see mirror_prefsrc_gone(). Taken: the
 * mirror forgets them. Count of triples.
 */
#define MIRROR_REREAD_SIBLING 0u
#define MIRROR_REREAD_PREFSRC 1u
long mirror_take_rereads(struct mirror *m, uint32_t **out);
/* Apply an RTM_DELROUTE: a whole (multipath) route, or one hop of a group. 0 or -ENOMEM. */
int mirror_apply_del(struct mirror *m, const struct nlparse_route *pr, struct mirror_delta *d)
    __attribute__((warn_unused_result));

#define MIRROR_LINK_NEW 1u
#define MIRROR_LINK_RENAMED 2u
#define MIRROR_LINK_STATE 4u /* IFF_UP, IFF_RUNNING or IFF_LOWER_UP changed */
#define MIRROR_LINK_MTU 8u   /* IFLA_MTU changed: the kernel rewrote its routes' mtu silently */
/* RTM_NEWLINK. Returns MIRROR_LINK_* bits (0 = nothing changed) or -ENOMEM. */
int mirror_set_link(struct mirror *m, const struct route_link *l);
/* RTM_DELLINK: forget the link and every route and hop that used it (the kernel flushes them,
 * with or without telling: net.ipv6.route.skip_notify_on_dev_down). */
void mirror_del_link(struct mirror *m, uint32_t ifindex, struct mirror_delta *d);
/* The kernel rewrote the metrics of the routes through ifindex (an MTU change): the siblings on
 * it other than a group's first are no longer known (siblings.h) until a message names them. */
void mirror_forget_siblings(struct mirror *m, uint32_t ifindex);
/*
 * The kernel flushed the nexthop objects on ifindex (it went down, lost its carrier or went
 * away: no RTM_DELNEXTHOP, and RTM_DELROUTE for the routes over them only with
 * nexthop_compat_mode=1): forget them and the routes over them, at once, before a later
 * message can name an object of the same id anew. Groups that held them are re-read by the
 * caller.
 */
void mirror_flush_link_nhobjs(struct mirror *m, uint32_t ifindex, struct mirror_delta *d);
/*
 * An IPv6 address went (RTM_DELADDR): the kernel clears it as the preferred source of every
 * route not over a nexthop object, siblings included, without a message (rt6_remove_prefsrc).
 * The siblings the mirror keeps apart lose it here; the routes whose own prefsrc it was are
 * queued for a re-read (mirror_take_rereads()). How many routes used it.
 */
long mirror_prefsrc_gone(struct mirror *m, const uint8_t addr[16]);
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
/* Whether m knows nexthop object id. */
int mirror_knows_nhobj(const struct mirror *m, uint32_t id);
/* Whether m knows any nexthop object. */
int mirror_has_nhobjs(const struct mirror *m);
/* Tables that hold a route over any nexthop object, as mirror_group_tables(). */
long mirror_nhid_tables(const struct mirror *m, uint32_t **out);

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
 * Around a later RTM_F_PREFIX dump: mirror_prefix_begin(), its keys to mirror_mark_prefix(),
 * then mirror_prefix_end(complete): when the dump completed, the routes marked by the dump
 * before and not by this one lose their mark (returns how many changed); otherwise nothing is
 * cleared.
 */
void mirror_prefix_begin(struct mirror *m);
int mirror_prefix_end(struct mirror *m, int complete);

/*
 * Routes of old that a dump cannot carry (their message would not fit one dump buffer, while
 * the notification that announced them did) and that dump d does not have: copied into d, so
 * that a resync does not lose them. Returns how many, or -ENOMEM.
 */
long mirror_keep_oversized(const struct mirror *old, struct mirror *d);
/*
 * Routes of old that sit after a multipath group of their key and that dump d, which has the
 * group, lacks: copied into d, as mirror_keep_oversized() does. A route that cannot join the
 * group and was added between two of its siblings is in the kernel's table and file, yet no
 * dump shows it (docs/kernel-facts.md §7.1): the notification that announced it is all there
 * is, and a resync must not drop it. (A route after the group's last sibling is in the dump,
 * and stays the dump's.) Returns how many, or -ENOMEM.
 */
long mirror_keep_hidden(const struct mirror *old, struct mirror *d);
/* Whether m holds a route a dump may not carry. Such a route also ends a dump early: the
 * kernel stops the table's walk there without an error (seen with 2 200 hops), so a dump taken
 * then is incomplete. */
int mirror_has_oversized(const struct mirror *m);

/* Whether a and b know the same links, nexthop objects and tables (in the same order):
 * with no route differing either (mirror_diff), a resync can keep a and the segments it
 * shares with the published snapshot. */
int mirror_same_outside_routes(const struct mirror *a, const struct mirror *b);

/*
 * What the collector knows of a dump it adopts while it goes on following notifications (the
 * dump ran beside them; mirror_adopt_begin() with rules):
 *   - touched(arg, table, k): whether the mirror's routes of key k (a node and metric) of that
 *     table changed since the dump began (a notification or a targeted dump): they are newer
 *     than what the dump says and stay as they are; k NULL: whether any route of the table did.
 *   - untrusted: notifications arrived while the dump ran, so it may have skipped routes at its
 *     gaps (mirror_load_gap()): the mirror's routes that the dump lacks there stay; its prefix
 *     marks (a second dump) are not compared either.
 *   - max_log: how many differing routes to log as drift.
 */
struct mirror_adopt_rules {
	int (*touched)(void *arg, uint32_t table, const struct order_key *k);
	void *arg;
	int untrusted;
	unsigned int max_log;
};

/* What an adoption found (mirror_adopt_counts()). */
struct mirror_adopt_count {
	uint32_t only_m, only_k; /* routes changed: the mirror's that the dump lacked, and back */
	uint32_t kept_touched;	 /* runs of one key that differed, kept: newer in the mirror */
	uint32_t kept_gap;	 /* routes only the mirror has, kept: at a gap of the dump */
};

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
 * step, unless rules say they were touched); rules may be NULL (m changes only through the
 * adoption). 0 or -ENOMEM. mirror_adopt_step(): 1 while there is more, 0 when m is d (as
 * the rules allow), -ENOMEM (then m holds part of both and must be resynced). Between steps m
 * may be published, and changed by notifications and targeted dumps when rules say which
 * keys they touched; not by link or nexthop object changes (end the adoption first: the rest
 * of m is then as it was). mirror_adopt_counts(): what was found so far.
 */
struct mirror_adoption;
int mirror_adopt_begin(struct mirror *m, struct mirror *d, const struct mirror_adopt_rules *rules,
		       struct mirror_adoption **out) __attribute__((warn_unused_result));
int mirror_adopt_step(struct mirror_adoption *a, size_t max_routes, struct mirror_delta *delta)
    __attribute__((warn_unused_result));
void mirror_adopt_counts(const struct mirror_adoption *a, struct mirror_adopt_count *out);
void mirror_adopt_end(struct mirror_adoption *a);

/* Routes (records) held, and bytes of memory the mirror holds (approximate, from sizes);
 * of those, the bytes of the tables' search guides (16 a chunk, for tables large enough). */
size_t mirror_routes(const struct mirror *m);
size_t mirror_bytes(const struct mirror *m);
size_t mirror_guide_bytes(const struct mirror *m);

/*
 * What a builder (builder.h) composes a snapshot of m from, in this order, on the thread that
 * owns m:
 * mirror_add_context(): m's links and nexthop objects into s (before snapshot_prepare()).
 * mirror_add_segments(): every table's groups of segments into s, with the table's placeholder
 *   row: a group none of whose chunks changed since the last publication is shared as it is,
 *   one with changed chunks is copied with those chunks' segments built again (the segments
 *   are held for s without references, snapshot_add_group()), so only what changed costs
 *   anything (docs/design.md, "Groups of segments"). When what routes print depends on
 *   changed since the last publication (links, nexthop objects, the names in s->ctx), every
 *   chunk is built. Every snapshot of m must be made for the same chain.
 * mirror_published(): s, composed so, was finished: what it was rendered with is now the
 *   reference for the next one.
 * 0 or a negative errno; after an error s is only fit for snapshot_free() and m is unharmed.
 */
int mirror_add_context(const struct mirror *m, struct snapshot *s)
    __attribute__((warn_unused_result));
int mirror_add_segments(struct mirror *m, struct snapshot *s) __attribute__((warn_unused_result));
void mirror_published(struct mirror *m, const struct snapshot *s);

/*
 * Compare two mirrors route by route (everything but expiry deadlines, which move with every
 * dump): *only_a routes are in a and not in b, *only_b the reverse. Up to max_log differing
 * routes are logged at level warn with prefix what. 0 or -ENOMEM.
 */
int mirror_diff(const struct mirror *a, const struct mirror *b, const char *what,
		unsigned int max_log, uint32_t *only_a, uint32_t *only_b)
    __attribute__((warn_unused_result));

#endif
