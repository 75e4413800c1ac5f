/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nlparse4.h - IPv4 route messages (AF_INET RTM_NEWROUTE / RTM_DELROUTE) into route records
 * (route4.h). No I/O, no allocation; any thread. Every attribute is checked by a {type, size}
 * table as for IPv6 (nlparse.h); a malformed message is -EBADMSG, to be counted and skipped.
 */
#ifndef RTSNAP_NLPARSE4_H
#define RTSNAP_NLPARSE4_H

#include <linux/netlink.h>
#include "rtsnap/nlparse.h"
#include "rtsnap/route4.h"

/*
 * Parse an IPv4 route message into out (the caller's, reused; the encapsulation and realms
 * blobs its hops point to live in out->encap_buf until the next parse). Returns 1 when out
 * holds an IPv4 route, 0 when the message is valid but not one (another family, a cached
 * RTM_F_CLONED entry), -EBADMSG when malformed.
 */
int nlparse_route4(const struct nlmsghdr *nlh, struct nlparse_route *out)
    __attribute__((warn_unused_result));

/* A nexthop object with its group's members, as the IPv4 model (fib4.h) needs it. */
#define NLPARSE_NH4_MAX_MEMBERS 1024
struct nlparse_nh4 {
	struct route_nhobj o; /* as nlparse_nexthop() fills it */
	uint32_t flags;	      /* nh_flags (RTNH_F_ONLINK, ...) */
	unsigned int nmemb;   /* group members, in the group's order */
	struct route_nhmember memb[NLPARSE_NH4_MAX_MEMBERS];
};

/* Parse an RTM_NEWNEXTHOP / RTM_DELNEXTHOP message into out (the caller's, large: reuse it).
 * Returns 1, or -EBADMSG (also for a group larger than NLPARSE_NH4_MAX_MEMBERS). */
int nlparse_nexthop4(const struct nlmsghdr *nlh, struct nlparse_nh4 *out)
    __attribute__((warn_unused_result));

/*
 * An IPv4 address message (RTM_NEWADDR / RTM_DELADDR): its device, prefix length and local
 * address (IFA_LOCAL; IFA_ADDRESS is the peer's on a point-to-point address, and the only one
 * on others), in network order. Returns 1, 0 for another family, or -EBADMSG.
 */
int nlparse_addr4(const struct nlmsghdr *nlh, uint32_t *ifindex, uint8_t addr[4], uint8_t *plen)
    __attribute__((warn_unused_result));

#endif
