/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fib4.h - the IPv4 routing tables of one namespace kept as the kernel keeps them, changed by
 * the kernel's own rules for every message it sends and for the events after which it sends
 * none (docs/kernel-facts.md section 12; docs/design.md "IPv4").
 *
 * This is the model the IPv4 mirror follows: a route message is placed by the fib alias
 * rules (a group per table, destination, prefix length, TOS and metric; add, prepend, append,
 * replace of the group's first alias, whole-route deletes), and link, address and nexthop
 * object events apply the flushes and flag changes the kernel makes silently (fib_sync_down_dev,
 * fib_sync_up, fib_disable_ip, nexthop_flush_dev). Records are route4.h's, with their hops,
 * metrics and blobs owned here. Tables are kept in the kernel's order (order_table_bucket(),
 * newest first within a bucket), routes in each table in the kernel's order (order4.h).
 *
 * Plain arrays: a reference implementation of the rules, checked against recorded kernel
 * streams (test_fib4), for the IPv4 mirror to follow; an insert moves the rest of its table.
 * One writer; no locking. Errors: 0 or a negative errno (-ENOMEM).
 */
#ifndef RTSNAP_FIB4_H
#define RTSNAP_FIB4_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/route4.h"

struct fib4;

int fib4_new(struct fib4 **out) __attribute__((warn_unused_result));
void fib4_free(struct fib4 *f);

/*
 * A route of a dump (in the dump's order, which is the kernel's): appended to its table. r as
 * nlparse_route4() leaves it, its hops in nhs (nh_count > 1) and metrics in m (or NULL).
 */
int fib4_dump_route(struct fib4 *f, const struct route *r, const struct route_nh *nhs,
		    const struct route_metrics *m) __attribute__((warn_unused_result));

/*
 * An RTM_NEWROUTE (del == 0) or RTM_DELROUTE (del == 1) notification with its nlmsg_flags.
 * A delete that matches nothing is counted (fib4_stats) and otherwise ignored.
 */
int fib4_route(struct fib4 *f, int del, uint16_t nlmsg_flags, const struct route *r,
	       const struct route_nh *nhs, const struct route_metrics *m)
    __attribute__((warn_unused_result));

/* RTM_NEWLINK (ifi_flags) and RTM_DELLINK: the state changes they stand for. A link seen for
 * the first time (a dump, a new device) is only recorded. */
int fib4_link(struct fib4 *f, uint32_t ifindex, uint32_t ifi_flags)
    __attribute__((warn_unused_result));
int fib4_link_del(struct fib4 *f, uint32_t ifindex) __attribute__((warn_unused_result));

/*
 * The device events the kernel's FIB handled before it sent an RTM_NEWLINK that took a
 * device's ifi_flags from old to new (fib_netdev_event), to be applied in this order:
 * FIB4_LINK_DOWN (NETDEV_DOWN: fib_disable_ip), FIB4_LINK_UP (NETDEV_UP: fib_sync_up(dead)),
 * FIB4_LINK_CARRIER_ON / FIB4_LINK_CARRIER_OFF (NETDEV_CHANGE with or without IFF_RUNNING or
 * IFF_LOWER_UP: fib_sync_up(linkdown) / fib_sync_down_dev(CHANGE) and nexthop_flush_dev).
 * A NEWLINK of a device that stays up is a NETDEV_CHANGE even when its flags did not change
 * (the linkwatch sends one per run, after its NETDEV_CHANGE, also when the carrier went off
 * and on again in between), unless only IFF_PROMISC / IFF_ALLMULTI changed (no NETDEV_CHANGE
 * for those): the kernel then evaluates the device's routes again (docs/kernel-facts.md 12.6).
 * The rule of both IPv4 models (fib4_link, mirror4_link).
 */
enum {
	FIB4_LINK_DOWN = 1,
	FIB4_LINK_UP = 2,
	FIB4_LINK_CARRIER_ON = 4,
	FIB4_LINK_CARRIER_OFF = 8,
};
unsigned int fib4_link_events(uint32_t old, uint32_t new_flags);

/* An IPv4 address added (RTM_NEWADDR, or a dump's) or removed (RTM_DELADDR) on ifindex;
 * addr in network order. dump: 1 for a dump's address (recorded, no event). */
int fib4_addr(struct fib4 *f, uint32_t ifindex, const uint8_t addr[4], uint8_t prefixlen, int del,
	      int dump) __attribute__((warn_unused_result));

/* A nexthop object added or replaced (RTM_NEWNEXTHOP, or a dump's) or deleted
 * (RTM_DELNEXTHOP): o as nlparse_nexthop() fills it, its nh_flags, a group's members. */
int fib4_nexthop(struct fib4 *f, const struct route_nhobj *o, uint32_t nh_flags,
		 const struct route_nhmember *memb, unsigned int nmemb, int del)
    __attribute__((warn_unused_result));

/* Tables in the kernel's order, empty ones included (the kernel keeps them). */
size_t fib4_ntables(const struct fib4 *f);
/* Table i: its id and its routes (r.nhs and r.metrics set), valid until the next change. */
uint32_t fib4_table(const struct fib4 *f, size_t i, const struct route *const **routes, size_t *n);

/*
 * Whether a and b (their hops and metrics reachable through them) are the same fib alias for
 * the kernel: type and fib_info (protocol, scope, prefsrc, metrics, nexthop object or hops with
 * gateway, device, weight, onlink, encapsulation and realms); not the flags the kernel changes
 * on its own (dead, linkdown, offload). The identity a delete or an in-place update names.
 */
int fib4_same_alias(const struct route *a, const struct route *b);

struct fib4_stats {
	uint64_t unknown_deletes;  /* RTM_DELROUTE for a route not held (also: already flushed) */
	uint64_t silent_removals;  /* routes removed without an RTM_DELROUTE */
	uint64_t silent_changes;   /* routes whose flags or hops changed without a message */
	uint64_t replace_in_place; /* NLM_F_REPLACE for an alias other than its group's first */
};
void fib4_get_stats(const struct fib4 *f, struct fib4_stats *out);

#endif
