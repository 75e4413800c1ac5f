/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route4.h - how an IPv4 route (a kernel fib alias) is held in struct route.
 *
 * A record with family == AF_INET uses the IPv6 record's fields as follows, so both families
 * share every container (mirror chunks, segments, snapshots) and the record stays 136 bytes:
 *   - dst, prefsrc, and an IPv4 gateway: the address in bytes 0..3 (network order), the rest 0;
 *   - tos: rtm_tos, part of the key (table, dst/len, tos, metric), as the kernel's alias;
 *   - src, src_len, pref, prefix_rt, placeholder, expires_ms, expires_capped: unused (0, and
 *     pref ROUTE_PREF_NONE): IPv4 routes have no source prefix, preference or expiry;
 *   - a hop's has_gw is 1 for an IPv4 gateway (RTA_GATEWAY), ROUTE_GW_VIA6 for an IPv6 one
 *     (RTA_VIA, `via inet6`), then in gw[0..15];
 *   - a hop's realms (RTA_FLOW, kept per nexthop by the kernel) ride in its encapsulation blob:
 *     a blob whose type has ROUTE_ENCAP_REALMS set starts with the realms (4 bytes, host
 *     order), followed by the RTA_ENCAP attributes of encapsulation type (type &
 *     ~ROUTE_ENCAP_REALMS; LWTUNNEL_ENCAP_NONE for none). Owners copy and compare blobs by
 *     their bytes (route.c), which is what the kernel's identity needs (realms are part of a
 *     nexthop's);
 *   - nh_count: 1 when the message names a device, a gateway or realms (the kernel's fib_info
 *     always has a nexthop; a blackhole with realms has one without device), >1 for
 *     RTA_MULTIPATH, 0 otherwise (reject routes; nexthop objects with compat mode 0).
 * Pure inline helpers, any thread.
 */
#ifndef RTSNAP_ROUTE4_H
#define RTSNAP_ROUTE4_H

#include <stdint.h>
#include <string.h>
#include "rtsnap/route.h"

#define ROUTE_GW_VIA6 2
#define ROUTE_ENCAP_REALMS 0x8000

/* A member of a nexthop group (NHA_GROUP), as the IPv4 routes over the group use it. */
struct route_nhmember {
	uint32_t id;
	uint16_t weight; /* 1..256: the message's weight + 1, a route's rtnh_hops + 1 */
};

/* Whether r is an IPv4 record. */
static inline int route_is4(const struct route *r)
{
	return r->family == 2 /* AF_INET */;
}

/* An IPv4 address held in a[0..3], as a host-order number (the kernel's trie key). */
static inline uint32_t route4_key(const uint8_t a[16])
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

/* The realms of hop nh (RTA_FLOW: from << 16 | to), 0 for none. */
static inline uint32_t route4_nh_realms(const struct route_nh *nh)
{
	uint32_t v = 0;

	if (nh->encap && (nh->encap->type & ROUTE_ENCAP_REALMS))
		memcpy(&v, nh->encap->attrs, sizeof(v));
	return v;
}

/*
 * The encapsulation proper of hop nh: its type (LWTUNNEL_ENCAP_NONE = 0: none), its RTA_ENCAP
 * attributes in *attrs and their length in *len.
 */
static inline uint16_t route4_nh_encap(const struct route_nh *nh, const uint8_t **attrs,
				       size_t *len)
{
	const struct route_encap *e = nh->encap;

	*attrs = NULL;
	*len = 0;
	if (!e)
		return 0;
	if (!(e->type & ROUTE_ENCAP_REALMS)) {
		*attrs = e->attrs;
		*len = e->len;
		return e->type;
	}
	*attrs = e->attrs + 4;
	*len = e->len - 4u;
	return (uint16_t)(e->type & ~ROUTE_ENCAP_REALMS);
}

#endif
