/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nlparse.h - turn rtnetlink messages into route records. No I/O, no allocation.
 *
 * Every attribute is validated by a {type, minimum size} table before use; a message that
 * fails validation is reported as -EBADMSG and must be counted and skipped by the caller.
 */
#ifndef RTSNAP_NLPARSE_H
#define RTSNAP_NLPARSE_H

#include <stdint.h>
#include <linux/netlink.h>
#include "rtsnap/route.h"
#include "rtsnap/snapshot.h"

/* Nexthops per multipath route we accept: as many as an RTA_MULTIPATH attribute can hold
 * (65535 bytes, 8 per rtnexthop at the least). The kernel sends what it can fit; it builds a
 * notification to the route's size, but a dump message must fit one dump buffer (about 32 KiB,
 * so about 1 000 hops with gateways): see mirror_keep_oversized(). */
#define NLPARSE_MAX_NH 8192

/* Bytes of encapsulations one message can carry: an RTA_ENCAP at the top and the ones in
 * RTA_MULTIPATH (each attribute at most 64 KiB), each copy no larger than its attribute. */
#define NLPARSE_ENCAP_BYTES (2 * 65536)

/* One parsed route; the caller owns it (it is large: keep one and reuse it). */
struct nlparse_route {
	struct route r;
	struct route_nh nhs[NLPARSE_MAX_NH]; /* multipath nexthops when r.nh_count > 1 */
	struct route_metrics m;
	int has_metrics;
	/* the encapsulations r.nh.encap and nhs[].encap point to, valid until the next parse
	 * into this struct: whoever keeps the route copies them (route_encaps_copy()) */
	size_t encap_used;
	unsigned char encap_buf[NLPARSE_ENCAP_BYTES] __attribute__((aligned(8)));
};

/*
 * Parse an RTM_NEWROUTE message. now_ms is CLOCK_MONOTONIC ms used to turn the relative
 * rta_expires into an absolute deadline. Returns 1 when out holds an IPv6 route, 0 when the
 * message is valid but not for us (other family, RTM_F_CLONED exception), -EBADMSG when
 * malformed.
 */
int nlparse_route(const struct nlmsghdr *nlh, int64_t now_ms, struct nlparse_route *out)
    __attribute__((warn_unused_result));

/* Parse an RTM_NEWLINK message into out. Returns 1, 0 (ignored) or -EBADMSG. */
int nlparse_link(const struct nlmsghdr *nlh, struct route_link *out)
    __attribute__((warn_unused_result));

/* The IPv6 address of an RTM_NEWADDR/RTM_DELADDR message (IFA_ADDRESS) into addr. Returns 1,
 * 0 (another family, or none) or -EBADMSG. */
int nlparse_addr6(const struct nlmsghdr *nlh, uint8_t addr[16]) __attribute__((warn_unused_result));

/* Parse an RTM_NEWNEXTHOP message into out. Returns 1, 0 (ignored) or -EBADMSG. An object's
 * encapsulation (NHA_ENCAP) is checked but not kept: with nexthop_compat_mode 1 the messages of
 * the routes over it carry it, and with 0 neither ip nor rtsnapd shows it on a route. */
int nlparse_nexthop(const struct nlmsghdr *nlh, struct route_nhobj *out)
    __attribute__((warn_unused_result));

/* Parse an RTM_NEWROUTE from an RTM_F_PREFIX dump into a key, checked as nlparse_route()
 * checks it (into scratch, the caller's, which is left undefined). Returns 1, 0 or -EBADMSG. */
int nlparse_prefix_key(const struct nlmsghdr *nlh, struct nlparse_route *scratch,
		       struct prefix_key *out) __attribute__((warn_unused_result));

#endif
