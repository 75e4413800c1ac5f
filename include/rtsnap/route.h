/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route.h - the compact route record held by a snapshot.
 *
 * One record per route message as the kernel's netlink dump lists it (a multipath route is one
 * record with nh_count > 1; /proc/net/ipv6_route prints one line per nexthop). A record in a
 * snapshot points only into the segment that holds it (its hops and metrics, segment.h); the
 * mirror keeps its own copies of both beside the record and leaves the pointers NULL.
 */
#ifndef RTSNAP_ROUTE_H
#define RTSNAP_ROUTE_H

#include <stdint.h>
#include <stdbool.h>

#define ROUTE_PREF_NONE 0xff /* no RTA_PREF attribute */

/* One nexthop: inline for single-path routes, in the holder's hop array for multipath. */
struct route_nh {
	uint8_t gw[16];
	uint32_t ifindex;
	uint8_t has_gw; /* RTA_GATEWAY / rtnh gateway present */
	uint8_t flags; /* RTNH_F_* (rtm_flags low byte for single path, rtnh_flags for multipath) */
	uint8_t weight; /* rtnh_hops + 1; 1 for single path */
	uint8_t pad;
};

/* RTAX_* metrics present on a route (route.metrics). */
#define ROUTE_METRICS_MAX \
	18 /* > RTAX_MAX on current kernels; unknown ids are counted and dropped */
struct route_metrics {
	uint32_t mask; /* bit i set: val[i] holds RTAX i */
	uint32_t val[ROUTE_METRICS_MAX];
	char cc_algo[16]; /* RTAX_CC_ALGO: congestion control name (NUL-terminated), else "" */
};

struct route {
	uint8_t dst[16];
	uint8_t src[16];
	uint8_t prefsrc[16];
	uint32_t table;	    /* RTA_TABLE, else rtm_table */
	uint32_t metric;    /* RTA_PRIORITY */
	uint32_t nhid;	    /* RTA_NH_ID, 0 = none */
	uint32_t rtm_flags; /* rtmsg.rtm_flags as sent (RTM_F_*, RTNH_F_* for single path) */
	int64_t expires_ms; /* absolute CLOCK_MONOTONIC deadline in ms; 0 = does not expire */
	const struct route_nh *nhs;	     /* multipath: its nh_count hops; else NULL */
	const struct route_metrics *metrics; /* or NULL */
	struct route_nh nh;		     /* single path (nh_count == 1) */
	uint16_t nh_count; /* 1 = single path (in .nh), >1 = multipath, 0 = no nexthop */
	uint8_t dst_len;
	uint8_t src_len;
	uint8_t protocol; /* RTPROT_* */
	uint8_t type;	  /* RTN_* */
	uint8_t scope;	  /* RT_SCOPE_* */
	uint8_t pref;	  /* ICMPV6_ROUTER_PREF_* or ROUTE_PREF_NONE */
	uint8_t has_prefsrc;
	uint8_t prefix_rt;	/* kernel flag RTF_PREFIX_RT (learned from an RTM_F_PREFIX dump) */
	uint8_t placeholder;	/* synthesized: the table's root null entry (no ::/0 route) */
	uint8_t mpath_one;	/* RTA_MULTIPATH with one nexthop (a group of one); kept in .nh */
	uint8_t expires_capped; /* rta_expires was INT_MAX: the kernel reports that cap (about 248
				   days) until less is left, so the time left is shown as the cap */
};

/* A nexthop object (RTM_NEWNEXTHOP), for routes that name one with RTA_NH_ID. */
struct route_nhobj {
	uint32_t id;
	uint32_t ifindex; /* NHA_OIF */
	uint32_t first;	  /* group: id of its first member (the one /proc shows); else 0 */
	uint8_t gw[16];
	uint8_t has_gw;
	uint8_t blackhole; /* NHA_BLACKHOLE: the kernel uses the loopback device */
	uint8_t is_group;
	uint8_t pad;
};

/* An interface as captured at snapshot time (RTM_NEWLINK). */
struct route_link {
	uint32_t ifindex;
	uint32_t flags; /* IFF_* */
	char name[16];
};

/* Nexthop i (0-based) of r. */
static inline const struct route_nh *route_nh(const struct route *r, unsigned int i)
{
	return r->nh_count > 1 ? &r->nhs[i] : &r->nh;
}

/*
 * Whether r can be a route the kernel learned from a router advertisement (RTF_ADDRCONF, which
 * netlink does not report): protocol ra, one nexthop, no nexthop object, and a link-local
 * gateway (routers advertise from their link-local address). A route that user space adds
 * with proto ra (systemd-networkd, NetworkManager) and a link-local gateway looks the same and
 * is taken for one; with a global gateway, several nexthops or none, it is not.
 */
static inline int route_ra_candidate(const struct route *r)
{
	return r->protocol == 9 /* RTPROT_RA */ && !r->nhid && r->nh_count == 1 && r->nh.has_gw &&
	       r->nh.gw[0] == 0xfe && (r->nh.gw[1] & 0xc0) == 0x80;
}

#endif
