/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * order.h - the kernel's order of routes within a table, as a key.
 *
 * The fib6 tree walk that both the netlink dump and /proc/net/ipv6_route follow (post-order,
 * 0-branch first, the source subtree of a node before its children) is a total order on:
 *   - a route without a source prefix: (end address of dst, 1, 255 - dst_len, metric)
 *   - a source-specific route:         (first address of dst, 0, dst_len, end of src,
 *                                       255 - src_len, metric)
 * Routes with an equal key (same node, same metric) keep the order they were inserted in.
 * Pure functions, any thread.
 */
#ifndef RTSNAP_ORDER_H
#define RTSNAP_ORDER_H

#include <stdint.h>
#include "rtsnap/route.h"

struct order_key {
	uint64_t a_hi, a_lo; /* end of dst (no source) or first address of dst (source routes) */
	uint32_t c;	     /* kind << 8 | (kind ? 255 - dst_len : dst_len) */
	uint32_t sl;	     /* source routes: 255 - src_len */
	uint64_t s_hi, s_lo; /* source routes: end of src */
	uint32_t metric;
};

/* addr as two big-endian halves with the bits after len cleared (ones = 0) or set (ones = 1). */
void order_span(const uint8_t a[16], unsigned int len, int ones, uint64_t *hi, uint64_t *lo);
/* The key of a route given by its parts. */
void order_key_make(const uint8_t dst[16], unsigned int dst_len, const uint8_t src[16],
		    unsigned int src_len, uint32_t metric, struct order_key *k);
/* The key of r: an IPv4 record's (route_is4()) is order4_key_of()'s. */
void order_key_of(const struct route *r, struct order_key *k);
/* The key of IPv4 record r: order4_key() (destination, prefix length descending, TOS
 * descending) in a_hi, the metric in metric, the rest 0, so that order_key_cmp() sorts IPv4
 * records as the kernel's leaf walk does and two keys are equal exactly when the routes are of
 * one fib alias group (table aside). */
void order4_key_of(const struct route *r, struct order_key *k);
/* <0, 0, >0 as x sorts before, with, after y. */
int order_key_cmp(const struct order_key *x, const struct order_key *y);
/* Compare two routes of one table by key (their insertion order is not known here). */
int order_route_cmp(const struct route *a, const struct route *b);
/* Kernel table order: hash bucket (id % 256) ascending. Within a bucket the newest table comes
 * first, which only the owner of the table list knows. */
static inline uint32_t order_table_bucket(uint32_t id)
{
	return id % 256;
}

#endif
