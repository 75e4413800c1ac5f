/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route.h - the compact route record held by a snapshot.
 *
 * One record per route message as the kernel's netlink dump lists it (a multipath route is one
 * record with nh_count > 1; /proc/net/ipv6_route prints one line per nexthop). A record in a
 * snapshot points only into the segment that holds it (its hops, metrics and its hops'
 * encapsulations, segment.h); the mirror keeps its own copies of the hops and metrics beside
 * the record and leaves those pointers NULL, and its own copies of the encapsulations, which
 * the hops point to (route_encaps_copy()).
 */
#ifndef RTSNAP_ROUTE_H
#define RTSNAP_ROUTE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ROUTE_PREF_NONE 0xff /* no RTA_PREF attribute */

/*
 * A lightweight tunnel encapsulation (RTA_ENCAP_TYPE and the nested attributes of RTA_ENCAP)
 * as the kernel sent it, checked by nlparse (every attribute that is rendered has its size
 * checked) and with the values the kernel changes without a message (seg6local packet
 * counters) zeroed. Two nexthops have the same encapsulation for the kernel
 * (lwtunnel_cmp_encap) when their blobs are byte for byte equal. Immutable once made.
 */
struct route_encap {
	uint16_t type;	 /* LWTUNNEL_ENCAP_* */
	uint16_t len;	 /* bytes in attrs */
	uint8_t attrs[]; /* netlink attributes (struct rtattr), 4-byte aligned */
};

/* One nexthop: inline for single-path routes, in the holder's hop array for multipath. */
struct route_nh {
	uint8_t gw[16];
	uint32_t ifindex;
	uint8_t has_gw; /* RTA_GATEWAY / rtnh gateway present; ROUTE_GW_VIA6 (route4.h): an IPv6
			   gateway (RTA_VIA) of an IPv4 route */
	uint8_t flags; /* RTNH_F_* (rtm_flags low byte for single path, rtnh_flags for multipath) */
	uint8_t weight; /* rtnh_hops + 1; 1 for single path */
	uint8_t sib; /* ROUTE_SIB_*: a multipath hop's own attributes, as the mirror knows them */
	/* Its encapsulation, NULL = none. The kernel keeps one per nexthop (fib6_nh); a
	 * single-path route's message carries it at the top (RTA_ENCAP), a multipath route's in
	 * each rtnexthop, and it is kept here in both cases, so a hop keeps its own when its
	 * group grows or shrinks. Points into storage of the record's owner. */
	const struct route_encap *encap;
};

/*
 * route_nh.sib. In the kernel each sibling of a multipath route is a route of its own, with
 * its own protocol, preference, expiry, metrics and preferred source; a route message (and a
 * dump) carries the first sibling's for the whole group, and a record keeps those. The mirror
 * keeps the others where it learned them (siblings.h) and marks the hops:
 *   ROUTE_SIB_OWN  the hop's own attributes are known (from a message that named it, or from
 *                  one that added the group whole); the first hop's always are, the record's
 *   ROUTE_SIB_SET  the hops differ: this hop's proc line takes ROUTE_SIB_EXPIRES and the
 *                  preference in ROUTE_SIB_PREF instead of the record's (RTF_EXPIRES, RTF_PREF)
 * Two hops are the same hop whatever these bits say; comparisons with a dump ignore them.
 */
#define ROUTE_SIB_OWN 0x80u
#define ROUTE_SIB_SET 0x40u
#define ROUTE_SIB_EXPIRES 0x04u
#define ROUTE_SIB_PREF 0x03u

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
	uint8_t family; /* AF_INET for an IPv4 record (route4.h says how its fields are used);
			   0 for IPv6, which every IPv6 path leaves */
	uint8_t tos;	/* IPv4: rtm_tos (part of the route's key); 0 for IPv6 */
};

/* A record is held by the million: keep it at 136 bytes (two cache lines and change). */
#if defined(__LP64__)
_Static_assert(sizeof(struct route) == 136, "struct route grew");
#endif

/* A nexthop object (RTM_NEWNEXTHOP), for routes that name one with RTA_NH_ID. */
struct route_nhobj {
	uint32_t id;
	uint32_t ifindex; /* NHA_OIF */
	uint32_t first;	  /* group: id of its first member (the one /proc shows); else 0 */
	uint8_t gw[16];
	uint8_t has_gw;
	uint8_t blackhole; /* NHA_BLACKHOLE: the kernel uses the loopback device */
	uint8_t is_group;
	uint8_t family; /* nh_family: AF_INET (gw in gw[0..3]), AF_INET6, AF_UNSPEC for groups */
};

/* An interface as captured at snapshot time (RTM_NEWLINK). */
struct route_link {
	uint32_t ifindex;
	uint32_t flags;	 /* IFF_* */
	uint32_t master; /* IFLA_MASTER (a VRF, bridge or bond it is enslaved to), 0 = none */
	uint32_t mtu;	 /* IFLA_MTU, 0 = not sent */
	char name[16];
};

/* Nexthop i (0-based) of r. */
static inline const struct route_nh *route_nh(const struct route *r, unsigned int i)
{
	return r->nh_count > 1 ? &r->nhs[i] : &r->nh;
}

/*
 * Whether r has the shape of a route the kernel learned from a router advertisement
 * (RTF_ADDRCONF, which netlink does not report): protocol ra, one nexthop, no nexthop object,
 * a link-local gateway (routers advertise from their link-local address). A superset of
 * route_ra_candidate(), for when the device is not known.
 */
static inline int route_ra_shape(const struct route *r)
{
	return r->family != 2 /* AF_INET: never */ && r->protocol == 9 /* RTPROT_RA */ &&
	       !r->nhid && r->nh_count == 1 && r->nh.has_gw && r->nh.gw[0] == 0xfe &&
	       (r->nh.gw[1] & 0xc0) == 0x80;
}

/*
 * Whether r can be a route the kernel learned from a router advertisement: its shape, and in
 * the table the kernel puts them in (rt6_add_dflt_router, rt6_add_route_info): main, or the
 * table of the VRF its device dev (NULL: unknown) is enslaved to (taken to be any table when
 * the device has a master). A route that user space adds with proto ra (systemd-networkd,
 * NetworkManager) and a link-local gateway in main looks the same and is taken for one (a
 * known gap, README); with a global gateway, several nexthops or none, or in another table,
 * it is not.
 */
static inline int route_ra_candidate(const struct route *r, const struct route_link *dev)
{
	return route_ra_shape(r) && (r->table == 254 /* main */ || (dev && dev->master));
}

/* Bytes a copy of e takes (header, attributes, padding to 4); 0 for NULL. */
static inline size_t route_encap_size(const struct route_encap *e)
{
	return e ? (sizeof(*e) + e->len + 3u) & ~(size_t)3u : 0;
}

/* Whether a and b are the same encapsulation (both none, or the same bytes). */
int route_encap_equal(const struct route_encap *a, const struct route_encap *b);

/*
 * The encapsulations of record r (r->nh, and nhs[0..nh_count) for multipath) are owned by
 * whoever owns r. route_encaps_size(): bytes they take together (0: none). route_encaps_copy():
 * copy them into dst (route_encaps_size() bytes, 4-byte aligned) and point r's hops at the
 * copies; the old blobs are untouched. Both take nhs == NULL for a single-path route.
 */
size_t route_encaps_size(const struct route *r, const struct route_nh *nhs);
void route_encaps_copy(struct route *r, struct route_nh *nhs, void *dst);

#endif
