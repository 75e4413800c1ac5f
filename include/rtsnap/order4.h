/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * order4.h - the kernel's order of IPv4 routes within a table (docs/kernel-facts.md 12.2).
 *
 * The IPv4 fib is a trie of leaves, one per destination address, walked in ascending address
 * order (leaf_walk_rcu) by both the netlink dump and /proc/net/route; a leaf keeps its aliases
 * sorted by prefix length descending, TOS descending, metric ascending (fib_find_alias,
 * fib_insert_alias). Aliases equal in all four are one group, ordered by how they were added
 * (add, prepend, append, replace: the mirror's business, not a key's). Tables come in
 * order_table_bucket() order (order.h), newest first within a bucket, as for IPv6.
 * Pure functions, any thread.
 */
#ifndef RTSNAP_ORDER4_H
#define RTSNAP_ORDER4_H

#include <stdint.h>
#include "rtsnap/route.h"

/* The four parts of the key in one number: sorts as the kernel's leaf walk does. */
uint64_t order4_key(const struct route *r);
/* The key of a route given by its parts (dst in bytes 0..3, network order). */
uint64_t order4_key_make(const uint8_t dst[4], unsigned int dst_len, uint8_t tos);
/* <0, 0, >0 as IPv4 route a sorts before, in the same group as, after b (one table). */
int order4_route_cmp(const struct route *a, const struct route *b);

#endif
