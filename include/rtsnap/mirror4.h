/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mirror4.h - the IPv4 mirror: a mirror of IPv4 records (mirror_new4(): chunks, segments and
 * snapshots as for IPv6) changed by the kernel's IPv4 rules for every message and for the
 * events after which the kernel says nothing (docs/kernel-facts.md section 12): the rules of
 * fib4.h, which stays their reference and is tested against the same recordings.
 *
 * What the rules need beside the routes is kept here: each link's flags, each device's IPv4
 * addresses, each nexthop object's flags and group members. The mirror inside holds the
 * routes, links and nexthop objects the snapshots are rendered from (builder_compose() on
 * mirror4_mirror()). Collector thread only. Errors: 0 or a negative errno (-ENOMEM: the
 * mirror may have missed the change; resync).
 */
#ifndef RTSNAP_MIRROR4_H
#define RTSNAP_MIRROR4_H

#include <stdint.h>
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"

struct mirror4;

int mirror4_new(struct mirror4 **out) __attribute__((warn_unused_result));
/* NULL is fine. */
void mirror4_free(struct mirror4 *x);
/* The mirror of x's routes (owned by x). */
struct mirror *mirror4_mirror(struct mirror4 *x);

/* A route of a full dump, in the dump's order (the kernel's). pr as nlparse_route4() fills it. */
int mirror4_dump_route(struct mirror4 *x, const struct nlparse_route *pr)
    __attribute__((warn_unused_result));
/* RTM_NEWROUTE (del 0) or RTM_DELROUTE (del 1) with its nlmsg_flags. */
int mirror4_route(struct mirror4 *x, int del, uint16_t nlflags, const struct nlparse_route *pr,
		  struct mirror_delta *d) __attribute__((warn_unused_result));
/* RTM_NEWLINK (also a dump's: a link seen for the first time is only recorded) and
 * RTM_DELLINK. */
int mirror4_link(struct mirror4 *x, const struct route_link *l, struct mirror_delta *d)
    __attribute__((warn_unused_result));
int mirror4_link_del(struct mirror4 *x, uint32_t ifindex, struct mirror_delta *d)
    __attribute__((warn_unused_result));
/* An IPv4 address (RTM_NEWADDR, or a dump's with dump 1) or its removal (RTM_DELADDR);
 * addr in network order. */
int mirror4_addr(struct mirror4 *x, uint32_t ifindex, const uint8_t addr[4], uint8_t plen, int del,
		 int dump, struct mirror_delta *d) __attribute__((warn_unused_result));
/* RTM_NEWNEXTHOP (also a dump's) or RTM_DELNEXTHOP, as nlparse_nexthop4() fills nh. */
int mirror4_nexthop(struct mirror4 *x, const struct nlparse_nh4 *nh, int del,
		    struct mirror_delta *d) __attribute__((warn_unused_result));

/*
 * A resync: x takes what from (a full dump into a mirror4 of its own) knows beside the
 * routes (links' flags, addresses, nexthop objects and their members) and from is freed;
 * returns from's mirror (the caller's, to merge into mirror4_mirror(x) with
 * mirror_adopt_begin(), which takes it). Only valid when nothing outside the routes changed
 * since from's dump began. from NULL: NULL.
 */
struct mirror *mirror4_take_state(struct mirror4 *x, struct mirror4 *from);

/* What the rules did, beside the delta (fib4_stats' meaning). */
struct mirror4_stats {
	uint64_t unknown_deletes;
	uint64_t silent_removals;
	uint64_t silent_changes;
	uint64_t replace_in_place;
};
void mirror4_get_stats(const struct mirror4 *x, struct mirror4_stats *out);

#endif
