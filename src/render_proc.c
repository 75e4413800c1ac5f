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

static const char s_hex[] = "0123456789abcdef";

static char *put_hex_bytes(char *p, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*p++ = s_hex[b[i] >> 4];
		*p++ = s_hex[b[i] & 15];
	}
	return p;
}

static char *put_hex32(char *p, uint32_t v)
{
	for (int sh = 28; sh >= 0; sh -= 4)
		*p++ = s_hex[(v >> sh) & 15];
	return p;
}

/*
 * The kernel turns these into RTF_REJECT|RTF_NONEXTHOP routes through the loopback device.
 * A route that uses a nexthop object never is one: its fib6_info keeps its own flags, and a
 * blackhole nexthop object only lends it the loopback device.
 */
static int is_reject(const struct route_ctx *s, const struct route *r)
{
	const struct route_link *l;

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
		l = route_ctx_link(s, r->nh.ifindex);
		if (!l || !(l->flags & IFF_LOOPBACK_FLAG))
			return 0;
		{
			static const uint8_t lo6[16] = { [15] = 1 };

			return memcmp(r->dst, lo6, 16) != 0;
		}
	}
}

uint32_t render_proc_flags(const struct route_ctx *s, const struct route *r,
			   const struct route_nh *nh)
{
	uint32_t f;

	if (r->placeholder || is_reject(s, r))
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
	if (r->expires_ms)
		f |= RTF_EXPIRES;
	if (r->pref != ROUTE_PREF_NONE)
		f |= RTF_PREF(r->pref & 3);
	if (route_ra_candidate(r, r->nh_count == 1 ? route_ctx_link(s, r->nh.ifindex) : NULL)) {
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

/* One line; p has room for LINE_MAX_LEN bytes. Returns the end. */
#define LINE_MAX_LEN 160
/* The loopback device's name while segments are rendered (collector thread only): the
 * kernel prints it, renamed or not, for reject routes and placeholder rows. */
static const char *s_lo = "lo";
static const char *loopback_name(const struct route_ctx *s);

static char *put_line(char *p, const struct route_ctx *s, const struct route *r,
		      const struct route_nh *nh)
{
	static const uint8_t zero[16];
	const char *dev;
	size_t dl;
	int reject = r->placeholder || is_reject(s, r);

	p = put_hex_bytes(p, r->dst, 16);
	*p++ = ' ';
	p = put_hex_bytes(p, &r->dst_len, 1);
	*p++ = ' ';
	p = put_hex_bytes(p, r->src, 16);
	*p++ = ' ';
	p = put_hex_bytes(p, &r->src_len, 1);
	*p++ = ' ';
	p = put_hex_bytes(p, (!reject && nh && nh->has_gw) ? nh->gw : zero, 16);
	*p++ = ' ';
	p = put_hex32(p, r->metric);
	*p++ = ' ';
	p = put_hex32(p, 1); /* refcnt: not exposed by netlink */
	*p++ = ' ';
	p = put_hex32(p, 0); /* use: always 0 */
	*p++ = ' ';
	p = put_hex32(p, render_proc_flags(s, r, nh));
	*p++ = ' ';
	dev = reject ? s_lo : (nh ? route_ctx_link_name(s, nh->ifindex) : "");
	dl = strnlen(dev, 15);
	for (size_t i = dl; i < 8; i++)
		*p++ = ' ';
	memcpy(p, dev, dl);
	p += dl;
	*p++ = '\n';
	return p;
}

/* The loopback device's name (the kernel uses it for reject routes and blackhole nexthops). */
static const char *loopback_name(const struct route_ctx *s)
{
	for (size_t i = 0; i < s->nlinks; i++)
		if (s->links[i].flags & IFF_LOOPBACK_FLAG)
			return s->links[i].name;
	return "lo";
}

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

/* A line for a route that uses a nexthop object. */
static char *put_nhobj_line(char *p, const struct route_ctx *s, const struct route *r)
{
	struct route_nh nh;
	int bh = resolve_nhobj(s, r, &nh);
	char *start = p;

	if (bh < 0)
		return put_line(p, s, r, r->nh_count ? route_nh(r, 0) : NULL);
	p = put_line(p, s, r, &nh);
	if (bh == 1) {
		/* rewrite the device column: the blackhole object's device is the loopback */
		const char *lo = loopback_name(s);
		size_t dl = strnlen(lo, 15);
		char *dev = start + 141; /* 32+1+2+1+32+1+2+1+32+1+8+1+8+1+8+1+8+1 */

		p = dev;
		for (size_t i = dl; i < 8; i++)
			*p++ = ' ';
		memcpy(p, lo, dl);
		p += dl;
		*p++ = '\n';
	}
	return p;
}

void render_proc_prepare(const struct route_ctx *s)
{
	s_lo = loopback_name(s);
}

void render_proc_route(const struct route_ctx *s, const struct route *r, struct strbuf *sb)
{
	unsigned int lines = r->nh_count > 1 && !r->nhid ? r->nh_count : 1;
	char *p;

	if (!strbuf_reserve(sb, (size_t)lines * LINE_MAX_LEN))
		return;
	p = sb->buf + sb->len;
	if (r->nhid) {
		/* one fib6_info, shown with its nexthop object's (first) nexthop */
		p = put_nhobj_line(p, s, r);
	} else if (r->nh_count > 1) {
		for (unsigned int k = 0; k < r->nh_count; k++)
			p = put_line(p, s, r, route_nh(r, k));
	} else {
		p = put_line(p, s, r, r->nh_count ? &r->nh : NULL);
	}
	sb->len = (size_t)(p - sb->buf);
}
