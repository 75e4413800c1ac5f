// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_proc.c - the /proc/net/ipv6_route text of a snapshot.
 *
 * The kernel prints one line per fib6_info (ipv6_route_native_seq_show() in
 * net/ipv6/ip6_fib.c):
 *   dst plen src splen gateway metric refcnt use flags dev
 * with "%pi6 %02x %pi6 %02x %pi6 %08x %08x %08x %08x %8s\n". We rebuild every column from
 * netlink except refcnt, which netlink does not expose: we print 00000001 (the value of an
 * idle route). use is always 0 in the kernel too. A multipath route is one netlink message
 * but one fib6_info (one line) per sibling; a route using a nexthop object is one line that
 * shows the object's first nexthop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>
#include <linux/ipv6_route.h>
#include <linux/route.h>

#include "rtsnap/render_route.h"

#ifndef RTPROT_RA
#define RTPROT_RA 9
#endif

#define IFF_LOOPBACK_FLAG 0x8 /* IFF_LOOPBACK; <net/if.h> clashes with <linux/if.h> */

/* The eight hex digits of 4 bytes b (b[0]'s first), in one 64-bit store: lines are rendered
 * per read, and a digit at a time was a third of a read's time. */
static char *put_hex4(char *p, const uint8_t *b)
{
	uint64_t x = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	uint64_t ten;

	/* nibble i of the value into byte i, then the most significant one first in memory */
	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	ten = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull; /* nibble > 9 */
	x += 0x3030303030303030ull + ten * ('a' - '0' - 10);
	memcpy(p, &x, 8);
	return p + 8;
}

static char *put_hex_bytes(char *p, const uint8_t *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		p = put_hex4(p, b + i);
	for (; i < n; i++) {
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 15];
	}
	return p;
}

static char *put_hex32(char *p, uint32_t v)
{
	const uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
			       (uint8_t)v };

	return put_hex4(p, b);
}

/*
 * The kernel turns these into RTF_REJECT|RTF_NONEXTHOP routes through the loopback device.
 * A route that uses a nexthop object never is one: its fib6_info keeps its own flags, and a
 * blackhole nexthop object only lends it the loopback device.
 */
static int is_reject(const struct route *r, const struct route_link *l)
{
	if (r->nhid)
		return 0;
	switch (r->type) {
	case RTN_UNREACHABLE:
	case RTN_BLACKHOLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
		return 1;
	case RTN_LOCAL:
		return 0; /* RTF_LOCAL routes are exempt */
	default:
		/* any other route through a loopback device is promoted to a reject route
		 * (ip6_route_info_create), unless its destination is the loopback address or
		 * it is one of the kernel's own anycast routes (RTF_ANYCAST) */
		if (r->nh_count != 1)
			return 0;
		if (r->type == RTN_ANYCAST && r->protocol == RTPROT_KERNEL)
			return 0;
		if (!l || !(l->flags & IFF_LOOPBACK_FLAG))
			return 0;
		{
			static const uint8_t lo6[16] = { [15] = 1 };

			return memcmp(r->dst, lo6, 16) != 0;
		}
	}
}

/* The single-path route's device (the one the checks below look at), or NULL. */
static const struct route_link *dev0(const struct route_ctx *s, const struct route *r)
{
	return r->nh_count == 1 ? route_ctx_link(s, r->nh.ifindex) : NULL;
}

/* render_proc_flags() with l = dev0(s, r). */
static uint32_t flags_of(const struct route *r, const struct route_nh *nh,
			 const struct route_link *l)
{
	uint32_t f;

	if (r->placeholder || is_reject(r, l))
		return RTF_REJECT | RTF_NONEXTHOP;
	f = RTF_UP;
	if (nh && nh->has_gw)
		f |= RTF_GATEWAY;
	/* rtm_to_fib6_config() copies RTNH_F_ONLINK (4, the value of RTF_HOST) into the route's
	 * flags; with a nexthop object, onlink belongs to the object instead */
	if (nh && !r->nhid && (nh->flags & RTNH_F_ONLINK))
		f |= RTF_HOST;
	/* addresses' own routes (addrconf_f6i_alloc) also carry RTF_NONEXTHOP; a local route
	 * added by hand carries RTF_LOCAL only */
	if (r->type == RTN_LOCAL)
		f |= RTF_LOCAL | (r->protocol == RTPROT_KERNEL ? RTF_NONEXTHOP : 0);
	else if (r->type == RTN_ANYCAST && r->protocol == RTPROT_KERNEL)
		f |= RTF_ANYCAST | RTF_NONEXTHOP; /* an anycast route added by hand has neither */
	if (nh && (nh->sib & ROUTE_SIB_SET)) {
		/* a sibling with attributes of its own (route.h) */
		if (nh->sib & ROUTE_SIB_EXPIRES)
			f |= RTF_EXPIRES;
		f |= RTF_PREF(nh->sib & ROUTE_SIB_PREF);
	} else {
		if (r->expires_ms)
			f |= RTF_EXPIRES;
		if (r->pref != ROUTE_PREF_NONE)
			f |= RTF_PREF(r->pref & 3);
	}
	if (route_ra_candidate(r, l)) {
		f |= RTF_ADDRCONF;
		if (r->dst_len == 0)
			f |= RTF_DEFAULT;
		else if (!r->prefix_rt)
			f |= RTF_ROUTEINFO;
	}
	if (r->prefix_rt)
		f |= RTF_PREFIX_RT | RTF_ADDRCONF; /* only RA prefix processing makes these */
	return f;
}

uint32_t render_proc_flags(const struct route_ctx *s, const struct route *r,
			   const struct route_nh *nh)
{
	return flags_of(r, nh, dev0(s, r));
}

/* One line; p has room for LINE_MAX_LEN bytes. */
#define LINE_MAX_LEN 160
#define LINE_DEV_COL 141 /* 32+1+2+1+32+1+2+1+32+1+8+1+8+1+8+1+8+1 */

/* What one line of a record shows: the nexthop (or NULL) and the device column. */
struct pline {
	const struct route_nh *nh;
	const char *dev;
	const struct route_link *l0; /* dev0() of the record */
	int reject;
	struct route_nh obj; /* a nexthop object's hop, when nh points here */
};

/*
 * The nexthop /proc shows for a route using nexthop object r->nhid: the object's, or for a
 * group its first member's (nexthop_fib6_nh()). Filled into *out; returns 1 when the object
 * is a blackhole (device: loopback), 0 when resolved, -1 when the object is unknown (then
 * the caller uses what the route message carried).
 */
static int resolve_nhobj(const struct route_ctx *s, const struct route *r, struct route_nh *out)
{
	const struct route_nhobj *o = route_ctx_nhobj(s, r->nhid);

	if (o && o->is_group)
		o = route_ctx_nhobj(s, o->first);
	if (!o)
		return -1;
	memset(out, 0, sizeof(*out));
	out->weight = 1;
	if (o->blackhole)
		return 1;
	out->ifindex = o->ifindex;
	if (o->has_gw) {
		memcpy(out->gw, o->gw, 16);
		out->has_gw = 1;
	}
	return 0;
}

static unsigned int line_count(const struct route *r)
{
	return r->nh_count > 1 && !r->nhid ? r->nh_count : 1;
}

/* Line k of record r; l->l0 and l->reject are the record's, set by the caller. */
static void line_at(const struct route_ctx *s, const char *lo, const struct route *r,
		    unsigned int k, struct pline *l)
{
	const struct route_link *dev = NULL;
	int bh = -1;

	if (r->nhid) {
		/* one fib6_info, shown with its nexthop object's (first) nexthop; a blackhole
		 * object lends the route the loopback device */
		bh = resolve_nhobj(s, r, &l->obj);
		l->nh = bh >= 0 ? &l->obj : r->nh_count ? route_nh(r, 0) : NULL;
	} else if (r->nh_count > 1) {
		l->nh = route_nh(r, k);
	} else {
		l->nh = r->nh_count ? &r->nh : NULL;
	}
	if (l->reject || bh == 1) {
		l->dev = lo;
		return;
	}
	if (l->nh == &r->nh)
		dev = l->l0;
	else if (l->nh)
		dev = route_ctx_link(s, l->nh->ifindex);
	l->dev = dev ? dev->name : "";
}

static void line_start(const struct route_ctx *s, const struct route *r, struct pline *l)
{
	l->l0 = dev0(s, r);
	l->reject = r->placeholder || is_reject(r, l->l0);
}

static size_t line_len(const struct pline *l)
{
	size_t dl = strnlen(l->dev, 15);

	return LINE_DEV_COL + (dl < 8 ? 8 : dl) + 1;
}

static char *put_line(char *p, const struct route_ctx *s, const struct route *r,
		      const struct pline *l)
{
	static const uint8_t zero[16];
	const struct route_nh *nh = l->nh;
	size_t dl;

	p = put_hex_bytes(p, r->dst, 16);
	*p++ = ' ';
	p = put_hex_bytes(p, &r->dst_len, 1);
	*p++ = ' ';
	p = put_hex_bytes(p, r->src, 16);
	*p++ = ' ';
	p = put_hex_bytes(p, &r->src_len, 1);
	*p++ = ' ';
	p = put_hex_bytes(p, (!l->reject && nh && nh->has_gw) ? nh->gw : zero, 16);
	*p++ = ' ';
	p = put_hex32(p, r->metric);
	*p++ = ' ';
	p = put_hex32(p, 1); /* refcnt: not exposed by netlink */
	*p++ = ' ';
	p = put_hex32(p, 0); /* use: always 0 */
	*p++ = ' ';
	p = put_hex32(p, flags_of(r, nh, l->l0));
	*p++ = ' ';
	dl = strnlen(l->dev, 15);
	for (size_t i = dl; i < 8; i++)
		*p++ = ' ';
	memcpy(p, l->dev, dl);
	p += dl;
	*p++ = '\n';
	return p;
}

const char *render_proc_loopback(const struct route_ctx *s)
{
	for (size_t i = 0; i < s->nlinks; i++)
		if (s->links[i].flags & IFF_LOOPBACK_FLAG)
			return s->links[i].name;
	return "lo";
}

size_t render_proc_route_len(const struct route_ctx *s, const char *lo, const struct route *r)
{
	unsigned int lines = line_count(r);
	struct pline l;
	size_t n = 0;

	line_start(s, r, &l);
	for (unsigned int k = 0; k < lines; k++) {
		line_at(s, lo, r, k, &l);
		n += line_len(&l);
	}
	return n;
}

void render_proc_route(const struct route_ctx *s, const char *lo, const struct route *r,
		       struct strbuf *sb)
{
	unsigned int lines = line_count(r);
	struct pline l;
	char *p;

	if (!strbuf_reserve(sb, (size_t)lines * LINE_MAX_LEN))
		return;
	p = sb->buf + sb->len;
	line_start(s, r, &l);
	for (unsigned int k = 0; k < lines; k++) {
		line_at(s, lo, r, k, &l);
		p = put_line(p, s, r, &l);
	}
	sb->len = (size_t)(p - sb->buf);
}
