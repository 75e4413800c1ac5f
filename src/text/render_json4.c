// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_json4.c - IPv4 route objects exactly as `ip -j -4 route show table all` prints them
 * (iproute2 6.1 ip/iproute.c print_route, print_rta_multipath, print_rta_via, print_rta_flow;
 * docs/kernel-facts.md 12.4): same keys, same order, same value forms, same omissions. The
 * pieces both families print alike (flags, metrics, encapsulations) are render_json.c's.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/lwtunnel.h>
#include <linux/rtnetlink.h>

#include "rtsnap/names.h"
#include "rtsnap/render4.h"
#include "rtsnap/render_json_int.h"
#include "rtsnap/route4.h"

/* a.b.c.d[/len] into out (no "/len" when len < 0); returns the length. */
static size_t fmt_in4(const uint8_t *a, int len, char *out)
{
	char *p = out;

	for (int i = 0; i < 4; i++) {
		unsigned int v = a[i];

		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		if (i < 3)
			*p++ = '.';
	}
	if (len >= 0) {
		*p++ = '/';
		if (len >= 10)
			*p++ = (char)('0' + len / 10);
		*p++ = (char)('0' + len % 10);
	}
	return (size_t)(p - out);
}

static void sep(struct strbuf *sb, int *first)
{
	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
}

static void put_in4(struct strbuf *sb, int *first, const char *key, const uint8_t *a, int len)
{
	char txt[24];
	size_t l = fmt_in4(a, len, txt);

	sep(sb, first);
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":\"");
	strbuf_append(sb, txt, l);
	strbuf_putc(sb, '"');
}

static void put_u32(struct strbuf *sb, int *first, const char *key, uint32_t v)
{
	sep(sb, first);
	strbuf_appendf(sb, "\"%s\":%u", key, v);
}

static void put_dev(struct strbuf *sb, int *first, const struct route_ctx *c, uint32_t ifindex)
{
	const char *name = route_ctx_link_name(c, ifindex);
	char buf[16];

	if (!*name) {
		snprintf(buf, sizeof(buf), "if%u",
			 ifindex); /* what ll_index_to_name() falls back to */
		name = buf;
	}
	render_json_put_str(sb, first, "dev", name);
}

/* "via":{"family":"inet6","host":ADDR} (print_rta_via) */
static void put_via6(struct strbuf *sb, int *first, const uint8_t *gw)
{
	char txt[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, gw, txt, sizeof(txt));
	sep(sb, first);
	strbuf_puts(sb, "\"via\":{\"family\":\"inet6\",\"host\":\"");
	strbuf_puts(sb, txt);
	strbuf_puts(sb, "\"}");
}

/* "flow":{"from":NAME,"to":NAME} (print_rta_flow: "from" only when not 0) */
static void put_flow(struct strbuf *sb, int *first, const struct route_ctx *c, uint32_t realms)
{
	char buf[12];
	int f = 1;

	sep(sb, first);
	strbuf_puts(sb, "\"flow\":{");
	if (realms >> 16)
		render_json_put_str(sb, &f, "from", names_realm(c->names, realms >> 16, buf));
	render_json_put_str(sb, &f, "to", names_realm(c->names, realms & 0xffff, buf));
	strbuf_putc(sb, '}');
}

/* The hop's encapsulation, when it has one (route4.h: after its realms, if any). */
static void put_encap4(struct strbuf *sb, int *first, const struct route_ctx *c,
		       const struct route_nh *nh)
{
	const uint8_t *attrs;
	size_t len;
	uint16_t type = route4_nh_encap(nh, &attrs, &len);
	struct route_encap *e;

	if (!nh->encap || type == LWTUNNEL_ENCAP_NONE)
		return;
	if (!(nh->encap->type & ROUTE_ENCAP_REALMS)) {
		render_json_put_encap(sb, first, c, nh->encap);
		return;
	}
	/* realms and an encapsulation on one hop: rare; render from a plain copy */
	e = malloc(sizeof(*e) + len);
	if (!e) {
		sb->failed = 1;
		return;
	}
	e->type = type;
	e->len = (uint16_t)len;
	memcpy(e->attrs, attrs, len);
	render_json_put_encap(sb, first, c, e);
	free(e);
}

static void put_gateway(struct strbuf *sb, int *first, const struct route_nh *nh)
{
	if (nh->has_gw == ROUTE_GW_VIA6)
		put_via6(sb, first, nh->gw);
	else if (nh->has_gw)
		put_in4(sb, first, "gateway", nh->gw, -1);
}

void render_json4_route(const struct route_ctx *c, const struct route *r, struct strbuf *sb)
{
	int first = 1, single = r->nh_count == 1 && !r->mpath_one;
	char buf[12];

	strbuf_putc(sb, '{');
	if (r->type != RTN_UNICAST)
		render_json_put_str(sb, &first, "type", names_type(r->type, buf));
	if (r->dst_len)
		put_in4(sb, &first, "dst", r->dst, r->dst_len == 32 ? -1 : r->dst_len);
	else
		render_json_put_str(sb, &first, "dst", "default");
	if (r->nhid)
		put_u32(sb, &first, "nhid", r->nhid);
	if (single)
		put_encap4(sb, &first, c, &r->nh);
	if (r->tos)
		render_json_put_str(sb, &first, "tos", names_dsfield(c->names, r->tos, buf));
	if (single)
		put_gateway(sb, &first, &r->nh);
	if (single && r->nh.ifindex)
		put_dev(sb, &first, c, r->nh.ifindex);
	if (r->table != RT_TABLE_MAIN)
		render_json_put_str(sb, &first, "table", names_table(c->names, r->table, buf));
	if (r->protocol != RTPROT_BOOT)
		render_json_put_str(sb, &first, "protocol",
				    names_protocol(c->names, r->protocol, buf));
	if (r->scope != RT_SCOPE_UNIVERSE)
		render_json_put_str(sb, &first, "scope", names_scope(c->names, r->scope, buf));
	if (r->has_prefsrc)
		put_in4(sb, &first, "prefsrc", r->prefsrc, -1);
	if (r->metric) /* RTA_PRIORITY is sent only when not 0 */
		put_u32(sb, &first, "metric", r->metric);
	render_json_put_flags(sb, &first, r->rtm_flags);
	if (single && route4_nh_realms(&r->nh))
		put_flow(sb, &first, c, route4_nh_realms(&r->nh));
	if (r->metrics)
		render_json_put_metrics(sb, &first, r->metrics);
	if (r->nh_count > 1 || (r->nh_count == 1 && r->mpath_one)) {
		strbuf_puts(sb, ",\"nexthops\":[");
		for (unsigned int i = 0; i < r->nh_count; i++) {
			const struct route_nh *nh = route_nh(r, i);
			int f = 1;

			strbuf_puts(sb, i ? ",{" : "{");
			put_encap4(sb, &f, c, nh);
			put_gateway(sb, &f, nh);
			if (route4_nh_realms(nh))
				put_flow(sb, &f, c, route4_nh_realms(nh));
			put_dev(sb, &f, c, nh->ifindex);
			/* rtnh_hops + 1 in a byte: 256 wraps to 0 */
			put_u32(sb, &f, "weight", nh->weight ? nh->weight : 256);
			render_json_put_flags(sb, &f, nh->flags);
			strbuf_putc(sb, '}');
		}
		strbuf_putc(sb, ']');
	}
	strbuf_putc(sb, '}');
}
