// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_proc4.c - IPv4 routes as /proc/net/route prints them (net/ipv4/fib_trie.c
 * fib_route_seq_show, fib_flag_trans; docs/kernel-facts.md 12.3), byte for byte: the header,
 * one line per listed route, every line padded with spaces to 127 characters.
 *
 * Addresses and masks are printed as the kernel does, `%08X` of the 32-bit word as it lies in
 * memory (network order), so the text depends on the host's byte order just as the kernel's.
 * Formatted by hand: this runs for every line of every read of the file.
 */
#include <string.h>
#include <linux/rtnetlink.h>

#include "rtsnap/render4.h"
#include "rtsnap/render_route.h"
#include "rtsnap/route4.h"

/* uapi linux/route.h */
#define RTF_UP 0x0001
#define RTF_GATEWAY 0x0002
#define RTF_HOST 0x0004
#define RTF_REJECT 0x0200

void render_proc4_header_line(char line[RENDER_PROC4_WIDTH + 1])
{
	static const char head[] = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask"
				   "\t\tMTU\tWindow\tIRTT";

	memset(line, ' ', RENDER_PROC4_WIDTH + 1);
	memcpy(line, head, sizeof(head) - 1);
	line[RENDER_PROC4_WIDTH] = '\n';
}

void render_proc4_header(struct strbuf *sb)
{
	char line[RENDER_PROC4_WIDTH + 1];

	render_proc4_header_line(line);
	strbuf_append(sb, line, sizeof(line));
}

int render_proc4_listed(const struct route *r)
{
	return r->table == RT_TABLE_MAIN && r->type != RTN_BROADCAST && r->type != RTN_MULTICAST;
}

static char *hex(char *p, uint32_t v, int digits)
{
	static const char x[] = "0123456789ABCDEF";

	for (int i = digits - 1; i >= 0; i--)
		*p++ = x[(v >> (4 * i)) & 15];
	return p;
}

static char *dec(char *p, uint32_t v)
{
	char tmp[10];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* A 32-bit word in network order (bytes a[0..3]) as the kernel's %08X prints it. */
static char *word(char *p, const uint8_t a[4])
{
	uint32_t v;

	memcpy(&v, a, sizeof(v));
	return hex(p, v, 8);
}

/*
 * The nexthop the kernel prints (fib_info_nhc(fi, 0)): the first hop the message carried, or,
 * for a route over a nexthop object that carried none (nexthop_compat_mode 0), the object's,
 * a group's first member's. NULL: none (reject routes: "*").
 */
static const struct route_nh *first_hop(const struct route_ctx *c, const struct route *r,
					struct route_nh *tmp)
{
	const struct route_nhobj *o;

	if (r->nh_count > 1)
		return &r->nhs[0];
	if (r->nh_count == 1)
		return &r->nh;
	if (!r->nhid || !(o = route_ctx_nhobj(c, r->nhid)))
		return NULL;
	if (o->is_group && !(o = route_ctx_nhobj(c, o->first)))
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	tmp->ifindex = o->ifindex;
	if (o->blackhole) { /* the kernel gives a blackhole object the loopback device */
		for (size_t i = 0; i < c->nlinks; i++)
			if (!strcmp(c->links[i].name, render_proc_loopback(c)))
				tmp->ifindex = c->links[i].ifindex;
	} else if (o->has_gw) {
		memcpy(tmp->gw, o->gw, 16);
		tmp->has_gw = o->family == 10 /* AF_INET6 */ ? ROUTE_GW_VIA6 : 1;
	}
	return tmp;
}

void render_proc4_route(const struct route_ctx *c, const struct route *r, struct strbuf *sb)
{
	static const uint8_t zero[4];
	char line[160], *p = line;
	struct route_nh tmp;
	const struct route_nh *nh;
	const struct route_metrics *m = r->metrics;
	const char *dev = "*";
	uint32_t flags = RTF_UP, mask = r->dst_len ? ~0u << (32 - r->dst_len) : 0;
	uint8_t maskb[4] = { (uint8_t)(mask >> 24), (uint8_t)(mask >> 16), (uint8_t)(mask >> 8),
			     (uint8_t)mask };
	size_t dlen;

	if (!render_proc4_listed(r))
		return;
	nh = first_hop(c, r, &tmp);
	if (r->type == RTN_UNREACHABLE || r->type == RTN_PROHIBIT)
		flags |= RTF_REJECT;
	/* fib_flag_trans tests the first 32 bits of the gateway union, whatever its family */
	if (nh && nh->has_gw && (nh->gw[0] | nh->gw[1] | nh->gw[2] | nh->gw[3]))
		flags |= RTF_GATEWAY;
	if (r->dst_len == 32)
		flags |= RTF_HOST;
	if (nh && nh->ifindex) {
		dev = route_ctx_link_name(c, nh->ifindex);
		if (!*dev)
			dev = "*";
	}
	dlen = strlen(dev); /* the kernel prints at most IFNAMSIZ - 1 */
	if (dlen > 15)
		dlen = 15;
	memcpy(p, dev, dlen);
	p += dlen;
	*p++ = '\t';
	p = word(p, r->dst);
	*p++ = '\t';
	p = word(p, nh && nh->has_gw == 1 ? nh->gw : zero);
	*p++ = '\t';
	p = hex(p, flags, 4);
	memcpy(p, "\t0\t0\t", 5); /* RefCnt, Use */
	p += 5;
	p = dec(p, r->metric);
	*p++ = '\t';
	p = word(p, maskb);
	*p++ = '\t';
	/* MTU is advmss + 40 (fib_advmss), Window the window metric, IRTT the rtt metric / 8 */
	p = dec(p, m && (m->mask & (1u << RTAX_ADVMSS)) && m->val[RTAX_ADVMSS]
		       ? m->val[RTAX_ADVMSS] + 40
		       : 0);
	*p++ = '\t';
	p = dec(p, m && (m->mask & (1u << RTAX_WINDOW)) ? m->val[RTAX_WINDOW] : 0);
	*p++ = '\t';
	p = dec(p, m && (m->mask & (1u << RTAX_RTT)) ? m->val[RTAX_RTT] >> 3 : 0);
	while (p - line < RENDER_PROC4_WIDTH)
		*p++ = ' ';
	*p++ = '\n';
	strbuf_append(sb, line, (size_t)(p - line));
}
