// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * order.c - the kernel order key of a route (see order.h for the rule and why it holds).
 */
#include "rtsnap/order.h"
#include "rtsnap/order4.h"
#include "rtsnap/route4.h"

static inline uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void order_span(const uint8_t a[16], unsigned int len, int ones, uint64_t *hi, uint64_t *lo)
{
	uint64_t h = be64(a), l = be64(a + 8);
	uint64_t mh = len >= 64 ? ~0ull : (len ? ~0ull << (64 - len) : 0);
	uint64_t ml = len >= 128 ? ~0ull : (len > 64 ? ~0ull << (128 - len) : 0);

	*hi = ones ? (h | ~mh) : (h & mh);
	*lo = ones ? (l | ~ml) : (l & ml);
}

void order_key_make(const uint8_t dst[16], unsigned int dst_len, const uint8_t src[16],
		    unsigned int src_len, uint32_t metric, struct order_key *k)
{
	if (src_len) {
		order_span(dst, dst_len, 0, &k->a_hi, &k->a_lo);
		k->c = dst_len;
		order_span(src, src_len, 1, &k->s_hi, &k->s_lo);
		k->sl = 255 - src_len;
	} else {
		order_span(dst, dst_len, 1, &k->a_hi, &k->a_lo);
		k->c = 1u << 8 | (255 - dst_len);
		k->s_hi = k->s_lo = 0;
		k->sl = 0;
	}
	k->metric = metric;
}

void order_key_of(const struct route *r, struct order_key *k)
{
	if (route_is4(r)) {
		order4_key_of(r, k);
		return;
	}
	order_key_make(r->dst, r->dst_len, r->src, r->src_len, r->metric, k);
}

void order4_key_of(const struct route *r, struct order_key *k)
{
	k->a_hi = order4_key(r);
	k->a_lo = k->s_hi = k->s_lo = 0;
	k->c = k->sl = 0;
	k->metric = r->metric;
}

#define CMP(x, y)                                  \
	do {                                       \
		if ((x) != (y))                    \
			return (x) < (y) ? -1 : 1; \
	} while (0)

int order_key_cmp(const struct order_key *x, const struct order_key *y)
{
	CMP(x->a_hi, y->a_hi);
	CMP(x->a_lo, y->a_lo);
	CMP(x->c, y->c);
	CMP(x->s_hi, y->s_hi);
	CMP(x->s_lo, y->s_lo);
	CMP(x->sl, y->sl);
	CMP(x->metric, y->metric);
	return 0;
}

int order_route_cmp(const struct route *a, const struct route *b)
{
	struct order_key x, y;

	order_key_of(a, &x);
	order_key_of(b, &y);
	return order_key_cmp(&x, &y);
}
