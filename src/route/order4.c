// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * order4.c - the kernel's order of IPv4 routes in a table, as a key (order4.h).
 *
 * (destination, prefix length descending, TOS descending) fits one 64-bit number: the address
 * in the top 32 bits, 32 - prefix length next (a /24 before a /8 of the same address), then
 * 255 - TOS; the metric, ascending, breaks ties.
 */
#include "rtsnap/order4.h"
#include "rtsnap/route4.h"

uint64_t order4_key_make(const uint8_t dst[4], unsigned int dst_len, uint8_t tos)
{
	uint32_t addr =
	    (uint32_t)dst[0] << 24 | (uint32_t)dst[1] << 16 | (uint32_t)dst[2] << 8 | dst[3];

	return (uint64_t)addr << 32 | (uint64_t)(32u - (dst_len & 63u)) << 8 |
	       (uint64_t)(255u - tos);
}

uint64_t order4_key(const struct route *r)
{
	return order4_key_make(r->dst, r->dst_len, r->tos);
}

int order4_route_cmp(const struct route *a, const struct route *b)
{
	uint64_t x = order4_key(a), y = order4_key(b);

	if (x != y)
		return x < y ? -1 : 1;
	if (a->metric != b->metric)
		return a->metric < b->metric ? -1 : 1;
	return 0;
}
