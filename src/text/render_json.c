// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_json.c - route objects exactly as `ip -j -6 route show table all` prints them
 * (iproute2 ip/iproute.c print_route): same keys, same order, same value forms, same
 * omissions.
 *
 * Every route's object is rendered once, when its segment is built (segment.c), each with a
 * leading comma: a segment's bytes are ",obj,obj...". Routes that carry an expiry are
 * rendered again per response, because "expires" is the time left at the moment of the
 * response; the response is then the pre-rendered spans of every segment with those few
 * routes spliced in (work proportional to the segments and the expiring routes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/rtnetlink.h>
#include <linux/ila.h>
#include <linux/ioam6.h>
#include <linux/ioam6_iptunnel.h>
#include <linux/lwtunnel.h>
#include <linux/mpls.h>
#include <linux/mpls_iptunnel.h>
#include <linux/rpl.h>
#include <linux/rpl_iptunnel.h>
#include <linux/seg6.h>
#include <linux/seg6_hmac.h>
#include <linux/seg6_iptunnel.h>
#include <linux/seg6_local.h>

#include "rtsnap/names.h"
#include "rtsnap/render_json_int.h"
#include "rtsnap/render_route.h"

static const char *const s_metric_names[ROUTE_METRICS_MAX] = {
	[RTAX_MTU] = "mtu",	      [RTAX_WINDOW] = "window",
	[RTAX_RTT] = "rtt",	      [RTAX_RTTVAR] = "rttvar",
	[RTAX_SSTHRESH] = "ssthresh", [RTAX_CWND] = "cwnd",
	[RTAX_ADVMSS] = "advmss",     [RTAX_REORDERING] = "reordering",
	[RTAX_HOPLIMIT] = "hoplimit", [RTAX_INITCWND] = "initcwnd",
	[RTAX_FEATURES] = "features", [RTAX_RTO_MIN] = "rto_min",
	[RTAX_INITRWND] = "initrwnd", [RTAX_QUICKACK] = "quickack",
	[RTAX_CC_ALGO] = "congctl",   [RTAX_FASTOPEN_NO_COOKIE] = "fastopen_no_cookie",
};

static void put_key_str(struct strbuf *sb, int *first, const char *key, const char *val)
{
	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":\"");
	strbuf_json_escape(sb, val);
	strbuf_putc(sb, '"');
}

/* Decimal digits of v into the end of buf; returns the first digit. */
static char *fmt_u64(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* "key":value, no separator. */
static void put_u32_key(struct strbuf *sb, const char *key, uint32_t v)
{
	char num[24], *p = fmt_u64(num + sizeof(num), v);

	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":");
	strbuf_append(sb, p, (size_t)(num + sizeof(num) - p));
}

static void put_key_num(struct strbuf *sb, int *first, const char *key, long long val)
{
	char num[24], *p;

	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	p = fmt_u64(num + sizeof(num), val < 0 ? 0 - (uint64_t)val : (uint64_t)val);
	if (val < 0)
		*--p = '-';
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":");
	strbuf_append(sb, p, (size_t)(num + sizeof(num) - p));
}

/*
 * An IPv6 address as glibc's inet_ntop() writes it (what ip prints): lowercase hex words
 * without leading zeros, the longest run of two or more zero words (the first one on a tie)
 * as "::", and the last 32 bits as a dotted quad for ::a.b.c.d and ::ffff:a.b.c.d. Without
 * sprintf: this runs twice per route for every snapshot. Returns the length written.
 */
static size_t fmt_in6(const uint8_t *a, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int best = -1, best_len = 0, cur = -1, cur_len = 0;
	unsigned int w[8];
	char *p = out;

	for (int i = 0; i < 8; i++) {
		w[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
		if (w[i] == 0) {
			if (cur < 0)
				cur = i, cur_len = 0;
			cur_len++;
		} else if (cur >= 0) {
			if (best < 0 || cur_len > best_len)
				best = cur, best_len = cur_len;
			cur = -1;
		}
	}
	if (cur >= 0 && (best < 0 || cur_len > best_len))
		best = cur, best_len = cur_len;
	if (best >= 0 && best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				*p++ = ':';
			continue;
		}
		if (i)
			*p++ = ':';
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
			for (int k = 12; k < 16; k++) {
				unsigned int v = a[k];

				if (v >= 100)
					*p++ = (char)('0' + v / 100);
				if (v >= 10)
					*p++ = (char)('0' + v / 10 % 10);
				*p++ = (char)('0' + v % 10);
				if (k < 15)
					*p++ = '.';
			}
			return (size_t)(p - out);
		}
		for (int sh = 12, lead = 1; sh >= 0; sh -= 4) {
			unsigned int d = (w[i] >> sh) & 15;

			if (d || !lead || sh == 0) {
				*p++ = hex[d];
				lead = 0;
			}
		}
	}
	if (best >= 0 && best + best_len == 8)
		*p++ = ':';
	return (size_t)(p - out);
}

/* "key":"ADDR[/LEN]" (no "/LEN" when plen < 0 or plen == host_len); nothing to escape. */
static void put_addr(struct strbuf *sb, int *first, const char *key, const uint8_t *a, int plen,
		     int host_len)
{
	char txt[INET6_ADDRSTRLEN + 8];
	size_t l = fmt_in6(a, txt);

	if (plen >= 0 && plen != host_len) {
		txt[l++] = '/';
		if (plen >= 100)
			txt[l++] = (char)('0' + plen / 100);
		if (plen >= 10)
			txt[l++] = (char)('0' + plen / 10 % 10);
		txt[l++] = (char)('0' + plen % 10);
	}
	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":\"");
	strbuf_append(sb, txt, l);
	strbuf_putc(sb, '"');
}

static void put_dev(struct strbuf *sb, int *first, const struct route_ctx *s, uint32_t ifindex)
{
	const char *name = route_ctx_link_name(s, ifindex);
	char buf[16];

	if (!*name) {
		snprintf(buf, sizeof(buf), "if%u",
			 ifindex); /* what ll_index_to_name() falls back to */
		name = buf;
	}
	put_key_str(sb, first, "dev", name);
}

static void put_flags(struct strbuf *sb, int *first, uint32_t flags)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ RTNH_F_DEAD, "dead" },
		{ RTNH_F_ONLINK, "onlink" },
		{ RTNH_F_PERVASIVE, "pervasive" },
		{ RTNH_F_OFFLOAD, "offload" },
		{ RTNH_F_TRAP, "trap" },
		{ RTM_F_NOTIFY, "notify" },
		{ RTNH_F_LINKDOWN, "linkdown" },
		{ RTNH_F_UNRESOLVED, "unresolved" },
		{ RTM_F_OFFLOAD, "rt_offload" },
		{ RTM_F_TRAP, "rt_trap" },
		{ RTM_F_OFFLOAD_FAILED, "rt_offload_failed" },
	};
	int f = 1;

	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_puts(sb, "\"flags\":[");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			if (!f)
				strbuf_putc(sb, ',');
			f = 0;
			strbuf_putc(sb, '"');
			strbuf_puts(sb, names[i].name);
			strbuf_putc(sb, '"');
		}
	}
	strbuf_putc(sb, ']');
}

/*
 * "metrics":[{...}] as print_rta_metrics prints it in JSON: RTAX 2.. in order; a locked
 * metric without a value prints 0 ("lock" itself is not shown in JSON); hoplimit -1 is
 * skipped; rtt and rttvar are scaled (/8, /4); features prints "ecn":null for the ECN bit and
 * "features":"0x.." (the whole value) when other bits are set; the congestion control
 * algorithm is "congestion":"name".
 */
static void put_metrics(struct strbuf *sb, int *first, const struct route_metrics *m)
{
	uint32_t lock = (m->mask & (1u << RTAX_LOCK)) ? m->val[RTAX_LOCK] : 0;
	int f = 1;

	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_puts(sb, "\"metrics\":[{");
	for (unsigned int i = 2; i < ROUTE_METRICS_MAX; i++) {
		uint32_t v;

		if (!(m->mask & (1u << i)) && !(lock & (1u << i)))
			continue;
		v = (m->mask & (1u << i)) ? m->val[i] : 0;
		if (i == RTAX_HOPLIMIT && (int32_t)v == -1)
			continue;
		if (!s_metric_names[i])
			continue;
		if (i == RTAX_FEATURES) {
			if (v & RTAX_FEATURE_ECN) {
				strbuf_puts(sb, f ? "\"ecn\":null" : ",\"ecn\":null");
				f = 0;
			}
			if (v & ~(uint32_t)RTAX_FEATURE_ECN) {
				strbuf_appendf(sb, "%s\"features\":\"0x%x\"", f ? "" : ",", v);
				f = 0;
			}
			continue;
		}
		if (!f)
			strbuf_putc(sb, ',');
		f = 0;
		if (i == RTAX_CC_ALGO) {
			strbuf_puts(sb, "\"congestion\":\"");
			strbuf_json_escape(sb, m->cc_algo);
			strbuf_putc(sb, '"');
			continue;
		}
		if (i == RTAX_RTT)
			v /= 8;
		else if (i == RTAX_RTTVAR)
			v /= 4;
		put_u32_key(sb, s_metric_names[i], v);
	}
	strbuf_puts(sb, "}]");
}

/*
 * ---- encapsulations: lwt_print_encap() of iproute2 ip/iproute_lwtunnel.c ----
 *
 * The keys, their order and value forms are iproute2's, quirks included: encap ip and ip6
 * print their tunnel's "src" and "dst" in the route's object, so a route object can hold
 * "dst" twice; the seg6local packet counters are printed only with -s (never here); a name
 * iproute2 lacks prints as "<unknown>" (seg6 mode, seg6local action: "<invalid>" past the
 * last it knows). nlparse checked every attribute read here.
 */

/* The attributes of [p, p + len) by type, the first of each (as iproute2's parse_rtattr). */
static void enc_index(const struct rtattr **tb, unsigned int max, const void *p, size_t len)
{
	const struct rtattr *a = p;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		unsigned int type = a->rta_type & NLA_TYPE_MASK;

		if (type <= max && !tb[type])
			tb[type] = a;
	}
}

#define ENC_NESTED(tb, max, a) enc_index(tb, max, RTA_DATA(a), RTA_PAYLOAD(a))

static uint8_t enc_u8(const struct rtattr *a)
{
	return *(const uint8_t *)RTA_DATA(a);
}

static uint16_t enc_u16(const struct rtattr *a)
{
	uint16_t v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static uint32_t enc_u32(const struct rtattr *a)
{
	uint32_t v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static uint64_t enc_be64(const struct rtattr *a)
{
	const unsigned char *p = RTA_DATA(a);
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* "key":N for an unsigned 64-bit N */
static void put_key_u64(struct strbuf *sb, int *first, const char *key, uint64_t v)
{
	char num[24], *p = fmt_u64(num + sizeof(num), v);

	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":");
	strbuf_append(sb, p, (size_t)(num + sizeof(num) - p));
}

static void put_key_raw(struct strbuf *sb, int *first, const char *key, const char *json)
{
	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_putc(sb, '"');
	strbuf_puts(sb, key);
	strbuf_puts(sb, "\":");
	strbuf_puts(sb, json);
}

static void put_in4(struct strbuf *sb, int *first, const char *key, const struct rtattr *a)
{
	char txt[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, RTA_DATA(a), txt, sizeof(txt));
	put_key_str(sb, first, key, txt);
}

static void put_ifname(struct strbuf *sb, int *first, const struct route_ctx *s, const char *key,
		       uint32_t ifindex)
{
	const char *name = route_ctx_link_name(s, ifindex);
	char buf[16];

	if (!*name) {
		snprintf(buf, sizeof(buf), "if%u", ifindex); /* ll_index_to_name() */
		name = buf;
	}
	put_key_str(sb, first, key, name);
}

/* print_srh(): "segs" from the last segment to the first, then "hmac" with the HMAC flag */
static void put_srh(struct strbuf *sb, int *first, const void *p)
{
	const struct ipv6_sr_hdr *h = p;
	const unsigned char *seg = (const unsigned char *)p + sizeof(*h);
	int f = 1;

	if (!*first)
		strbuf_putc(sb, ',');
	*first = 0;
	strbuf_puts(sb, "\"segs\":[");
	for (int i = h->first_segment; i >= 0; i--) {
		char txt[INET6_ADDRSTRLEN];
		size_t l = fmt_in6(seg + 16 * i, txt);

		strbuf_puts(sb, f ? "\"" : ",\"");
		f = 0;
		strbuf_append(sb, txt, l);
		strbuf_putc(sb, '"');
	}
	strbuf_putc(sb, ']');
	if (h->flags & SR6_FLAG1_HMAC) {
		const unsigned char *t = (const unsigned char *)p + ((h->hdrlen + 1) << 3) -
					 sizeof(struct sr6_tlv_hmac) +
					 offsetof(struct sr6_tlv_hmac, hmackeyid);
		uint32_t id =
		    (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3];
		char txt[16];

		snprintf(txt, sizeof(txt), "%#llx", (unsigned long long)id);
		put_key_str(sb, first, "hmac", txt);
	}
}

static void put_seg6(struct strbuf *sb, int *first, const struct route_encap *e)
{
	static const char *const modes[] = { "inline", "encap", "l2encap", "encap.red",
					     "l2encap.red" };
	const struct rtattr *tb[SEG6_IPTUNNEL_SRH + 1];
	int mode;

	enc_index(tb, SEG6_IPTUNNEL_SRH, e->attrs, e->len);
	if (!tb[SEG6_IPTUNNEL_SRH])
		return;
	memcpy(&mode, RTA_DATA(tb[SEG6_IPTUNNEL_SRH]), sizeof(mode));
	/* iproute2 6.1 reads one past its table for mode 5; the kernel refuses anything past 4 */
	put_key_str(sb, first, "mode",
		    mode >= 0 && mode < (int)(sizeof(modes) / sizeof(modes[0])) ? modes[mode]
										: "<unknown>");
	put_srh(sb, first,
		(const char *)RTA_DATA(tb[SEG6_IPTUNNEL_SRH]) + sizeof(struct seg6_iptunnel_encap));
}

/* print_encap_bpf_prog(): "key":"name" ("<unknown>" without one) */
static void put_bpf_prog(struct strbuf *sb, int *first, const char *key, const struct rtattr *a)
{
	const struct rtattr *tb[LWT_BPF_PROG_NAME + 1];

	ENC_NESTED(tb, LWT_BPF_PROG_NAME, a);
	put_key_str(sb, first, key,
		    tb[LWT_BPF_PROG_NAME] ? (const char *)RTA_DATA(tb[LWT_BPF_PROG_NAME])
					  : "<unknown>");
}

static void put_seg6local(struct strbuf *sb, int *first, const struct route_ctx *s,
			  const struct route_encap *e)
{
	static const char *const actions[SEG6_LOCAL_ACTION_END_DT46 + 1] = {
		[SEG6_LOCAL_ACTION_END] = "End",
		[SEG6_LOCAL_ACTION_END_X] = "End.X",
		[SEG6_LOCAL_ACTION_END_T] = "End.T",
		[SEG6_LOCAL_ACTION_END_DX2] = "End.DX2",
		[SEG6_LOCAL_ACTION_END_DX6] = "End.DX6",
		[SEG6_LOCAL_ACTION_END_DX4] = "End.DX4",
		[SEG6_LOCAL_ACTION_END_DT6] = "End.DT6",
		[SEG6_LOCAL_ACTION_END_DT4] = "End.DT4",
		[SEG6_LOCAL_ACTION_END_B6] = "End.B6",
		[SEG6_LOCAL_ACTION_END_B6_ENCAP] = "End.B6.Encaps",
		[SEG6_LOCAL_ACTION_END_BM] = "End.BM",
		[SEG6_LOCAL_ACTION_END_S] = "End.S",
		[SEG6_LOCAL_ACTION_END_AS] = "End.AS",
		[SEG6_LOCAL_ACTION_END_AM] = "End.AM",
		[SEG6_LOCAL_ACTION_END_BPF] = "End.BPF",
		[SEG6_LOCAL_ACTION_END_DT46] = "End.DT46",
	};
	static const char *const flavors[SEG6_LOCAL_FLV_OP_NEXT_CSID + 1] = {
		[SEG6_LOCAL_FLV_OP_PSP] = "psp",
		[SEG6_LOCAL_FLV_OP_USP] = "usp",
		[SEG6_LOCAL_FLV_OP_USD] = "usd",
		[SEG6_LOCAL_FLV_OP_NEXT_CSID] = "next-csid",
	};
	const struct rtattr *tb[SEG6_LOCAL_FLAVORS + 1];
	char buf[12];
	uint32_t action;

	enc_index(tb, SEG6_LOCAL_FLAVORS, e->attrs, e->len);
	if (!tb[SEG6_LOCAL_ACTION])
		return;
	action = enc_u32(tb[SEG6_LOCAL_ACTION]);
	put_key_str(sb, first, "action",
		    action > SEG6_LOCAL_ACTION_END_DT46 ? "<invalid>"
		    : actions[action]			? actions[action]
							: "<unknown>");
	if (tb[SEG6_LOCAL_SRH]) {
		int f = 1;

		put_key_raw(sb, first, "srh", "{");
		put_srh(sb, &f, RTA_DATA(tb[SEG6_LOCAL_SRH]));
		strbuf_putc(sb, '}');
	}
	if (tb[SEG6_LOCAL_TABLE])
		put_key_str(sb, first, "table",
			    names_table(s->names, enc_u32(tb[SEG6_LOCAL_TABLE]), buf));
	if (tb[SEG6_LOCAL_VRFTABLE])
		put_key_str(sb, first, "vrftable",
			    names_table(s->names, enc_u32(tb[SEG6_LOCAL_VRFTABLE]), buf));
	if (tb[SEG6_LOCAL_NH4])
		put_in4(sb, first, "nh4", tb[SEG6_LOCAL_NH4]);
	if (tb[SEG6_LOCAL_NH6])
		put_addr(sb, first, "nh6", RTA_DATA(tb[SEG6_LOCAL_NH6]), -1, 128);
	if (tb[SEG6_LOCAL_IIF])
		put_ifname(sb, first, s, "iif", enc_u32(tb[SEG6_LOCAL_IIF]));
	if (tb[SEG6_LOCAL_OIF])
		put_ifname(sb, first, s, "oif", enc_u32(tb[SEG6_LOCAL_OIF]));
	if (tb[SEG6_LOCAL_BPF])
		put_bpf_prog(sb, first, "endpoint", tb[SEG6_LOCAL_BPF]);
	if (tb[SEG6_LOCAL_FLAVORS]) {
		const struct rtattr *fl[SEG6_LOCAL_FLV_MAX + 1];

		ENC_NESTED(fl, SEG6_LOCAL_FLV_MAX, tb[SEG6_LOCAL_FLAVORS]);
		if (fl[SEG6_LOCAL_FLV_OPERATION]) {
			uint32_t ops = enc_u32(fl[SEG6_LOCAL_FLV_OPERATION]);
			int f = 1;

			put_key_raw(sb, first, "flavors", "[");
			for (unsigned int i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++) {
				if (!(ops & (1u << i)) || !flavors[i])
					continue;
				strbuf_puts(sb, f ? "\"" : ",\"");
				f = 0;
				strbuf_puts(sb, flavors[i]);
				strbuf_putc(sb, '"');
			}
			strbuf_putc(sb, ']');
		}
		if (fl[SEG6_LOCAL_FLV_LCBLOCK_BITS])
			put_key_u64(sb, first, "lblen", enc_u8(fl[SEG6_LOCAL_FLV_LCBLOCK_BITS]));
		if (fl[SEG6_LOCAL_FLV_LCNODE_FN_BITS])
			put_key_u64(sb, first, "nflen", enc_u8(fl[SEG6_LOCAL_FLV_LCNODE_FN_BITS]));
	}
}

/* lwtunnel_print_opts(): the geneve, else the vxlan, else the erspan options */
static void put_ip_opts(struct strbuf *sb, int *first, const struct rtattr *a)
{
	const struct rtattr *tb[LWTUNNEL_IP_OPTS_MAX + 1], *o[LWTUNNEL_IP_OPT_ERSPAN_MAX + 1];
	static const char hex[] = "0123456789abcdef";
	int f = 1;

	ENC_NESTED(tb, LWTUNNEL_IP_OPTS_MAX, a);
	if (tb[LWTUNNEL_IP_OPTS_GENEVE]) {
		const struct rtattr *x = RTA_DATA(tb[LWTUNNEL_IP_OPTS_GENEVE]);
		size_t left = RTA_PAYLOAD(tb[LWTUNNEL_IP_OPTS_GENEVE]);

		/* nlparse checked the layout: CLASS, TYPE, DATA per option. An option without data
		 * prints the last data before it: iproute2 reuses its text buffer, which an empty
		 * option leaves as it was (before any, it is uninitialized: "" here) */
		const struct rtattr *shown = NULL;

		put_key_raw(sb, first, "geneve_opts", "[");
		while (left) {
			const struct rtattr *cls = x, *typ, *data, *text;
			const unsigned char *d;
			int g = 1;

			typ = (const struct rtattr *)((const char *)cls + RTA_ALIGN(cls->rta_len));
			data = (const struct rtattr *)((const char *)typ + RTA_ALIGN(typ->rta_len));
			strbuf_puts(sb, f ? "{" : ",{");
			f = 0;
			put_key_u64(sb, &g, "class", (uint16_t)ntohs(enc_u16(cls)));
			put_key_u64(sb, &g, "type", enc_u8(typ));
			put_key_raw(sb, &g, "data", "\"");
			if (RTA_PAYLOAD(data))
				shown = data;
			text = RTA_PAYLOAD(data) ? data : shown;
			d = text ? RTA_DATA(text) : NULL;
			for (size_t i = 0; text && i < RTA_PAYLOAD(text); i++) {
				strbuf_putc(sb, hex[d[i] >> 4]);
				strbuf_putc(sb, hex[d[i] & 15]);
			}
			strbuf_puts(sb, "\"}");
			left -= RTA_PAYLOAD(data) + 20;
			x = (const struct rtattr *)((const char *)data + RTA_ALIGN(data->rta_len));
		}
		strbuf_putc(sb, ']');
	} else if (tb[LWTUNNEL_IP_OPTS_VXLAN]) {
		ENC_NESTED(o, LWTUNNEL_IP_OPT_VXLAN_MAX, tb[LWTUNNEL_IP_OPTS_VXLAN]);
		put_key_raw(sb, first, "vxlan_opts", "[{");
		put_key_u64(sb, &f, "gbp", enc_u32(o[LWTUNNEL_IP_OPT_VXLAN_GBP]));
		strbuf_puts(sb, "}]");
	} else if (tb[LWTUNNEL_IP_OPTS_ERSPAN]) {
		uint8_t ver;

		ENC_NESTED(o, LWTUNNEL_IP_OPT_ERSPAN_MAX, tb[LWTUNNEL_IP_OPTS_ERSPAN]);
		ver = enc_u8(o[LWTUNNEL_IP_OPT_ERSPAN_VER]);
		put_key_raw(sb, first, "erspan_opts", "[{");
		put_key_u64(sb, &f, "ver", ver);
		put_key_u64(sb, &f, "index",
			    ver == 1 ? ntohl(enc_u32(o[LWTUNNEL_IP_OPT_ERSPAN_INDEX])) : 0);
		put_key_u64(sb, &f, "dir", ver == 1 ? 0 : enc_u8(o[LWTUNNEL_IP_OPT_ERSPAN_DIR]));
		put_key_u64(sb, &f, "hwid", ver == 1 ? 0 : enc_u8(o[LWTUNNEL_IP_OPT_ERSPAN_HWID]));
		strbuf_puts(sb, "}]");
	}
}

/* TUNNEL_KEY, TUNNEL_CSUM, TUNNEL_SEQ of LWTUNNEL_IP(6)_FLAGS (big-endian bits) */
static void put_tunnel_flags(struct strbuf *sb, int *first, const struct rtattr *a)
{
	uint16_t flags = ntohs(enc_u16(a));

	if (flags & 0x04)
		put_key_raw(sb, first, "key", "true");
	if (flags & 0x01)
		put_key_raw(sb, first, "csum", "true");
	if (flags & 0x08)
		put_key_raw(sb, first, "seq", "true");
}

/* print_encap_ip() and print_encap_ip6(): the same attributes, one address family each */
static void put_ip_tunnel(struct strbuf *sb, int *first, const struct route_encap *e, int v6)
{
	const struct rtattr *tb[LWTUNNEL_IP6_OPTS + 1];

	/* LWTUNNEL_IP_* and LWTUNNEL_IP6_* share numbers, except that the v4 TTL and TOS are
	 * the v6 HOPLIMIT and TC */
	enc_index(tb, LWTUNNEL_IP6_OPTS, e->attrs, e->len);
	if (tb[LWTUNNEL_IP6_ID])
		put_key_u64(sb, first, "id", enc_be64(tb[LWTUNNEL_IP6_ID]));
	if (tb[LWTUNNEL_IP6_SRC]) {
		if (v6)
			put_addr(sb, first, "src", RTA_DATA(tb[LWTUNNEL_IP6_SRC]), -1, 128);
		else
			put_in4(sb, first, "src", tb[LWTUNNEL_IP_SRC]);
	}
	if (tb[LWTUNNEL_IP6_DST]) {
		if (v6)
			put_addr(sb, first, "dst", RTA_DATA(tb[LWTUNNEL_IP6_DST]), -1, 128);
		else
			put_in4(sb, first, "dst", tb[LWTUNNEL_IP_DST]);
	}
	if (v6) {
		if (tb[LWTUNNEL_IP6_HOPLIMIT])
			put_key_u64(sb, first, "hoplimit", enc_u8(tb[LWTUNNEL_IP6_HOPLIMIT]));
		if (tb[LWTUNNEL_IP6_TC])
			put_key_u64(sb, first, "tc", enc_u8(tb[LWTUNNEL_IP6_TC]));
	} else {
		if (tb[LWTUNNEL_IP_TTL])
			put_key_u64(sb, first, "ttl", enc_u8(tb[LWTUNNEL_IP_TTL]));
		if (tb[LWTUNNEL_IP_TOS])
			put_key_u64(sb, first, "tos", enc_u8(tb[LWTUNNEL_IP_TOS]));
	}
	if (tb[LWTUNNEL_IP6_FLAGS])
		put_tunnel_flags(sb, first, tb[LWTUNNEL_IP6_FLAGS]);
	if (tb[LWTUNNEL_IP6_OPTS])
		put_ip_opts(sb, first, tb[LWTUNNEL_IP6_OPTS]);
}

static void put_bpf(struct strbuf *sb, int *first, const struct route_encap *e)
{
	const struct rtattr *tb[LWT_BPF_MAX + 1];

	enc_index(tb, LWT_BPF_MAX, e->attrs, e->len);
	if (tb[LWT_BPF_IN])
		put_bpf_prog(sb, first, "in", tb[LWT_BPF_IN]);
	if (tb[LWT_BPF_OUT])
		put_bpf_prog(sb, first, "out", tb[LWT_BPF_OUT]);
	if (tb[LWT_BPF_XMIT])
		put_bpf_prog(sb, first, "xmit", tb[LWT_BPF_XMIT]);
	if (tb[LWT_BPF_XMIT_HEADROOM])
		put_key_u64(sb, first, "headroom", enc_u32(tb[LWT_BPF_XMIT_HEADROOM]));
}

/* print_encap_mpls(): "dst" the label stack as mpls_ntop() writes it, "ttl" */
static void put_mpls(struct strbuf *sb, int *first, const struct route_encap *e)
{
	const struct rtattr *tb[MPLS_IPTUNNEL_MAX + 1];

	enc_index(tb, MPLS_IPTUNNEL_MAX, e->attrs, e->len);
	if (tb[MPLS_IPTUNNEL_DST]) {
		const unsigned char *p = RTA_DATA(tb[MPLS_IPTUNNEL_DST]);
		struct strbuf lab = { 0 };

		for (size_t i = 0; i + 4 <= RTA_PAYLOAD(tb[MPLS_IPTUNNEL_DST]); i += 4) {
			uint32_t ent = (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 |
				       (uint32_t)p[i + 2] << 8 | p[i + 3];

			strbuf_appendf(&lab, "%s%u", i ? "/" : "",
				       (ent & MPLS_LS_LABEL_MASK) >> MPLS_LS_LABEL_SHIFT);
			if (ent & MPLS_LS_S_MASK)
				break;
		}
		strbuf_putc(&lab, 0);
		put_key_str(sb, first, "dst", lab.failed ? "" : lab.buf);
		if (lab.failed)
			sb->failed = true;
		strbuf_free(&lab);
	}
	if (tb[MPLS_IPTUNNEL_TTL])
		put_key_u64(sb, first, "ttl", enc_u8(tb[MPLS_IPTUNNEL_TTL]));
}

/* print_encap_rpl(): "segs" from the last to the first */
static void put_rpl(struct strbuf *sb, int *first, const struct route_encap *e)
{
	const struct rtattr *tb[RPL_IPTUNNEL_MAX + 1];
	const struct ipv6_rpl_sr_hdr *h;
	const unsigned char *seg;
	int f = 1;

	enc_index(tb, RPL_IPTUNNEL_MAX, e->attrs, e->len);
	if (!tb[RPL_IPTUNNEL_SRH])
		return;
	h = RTA_DATA(tb[RPL_IPTUNNEL_SRH]);
	seg = (const unsigned char *)h + sizeof(*h);
	put_key_raw(sb, first, "segs", "[");
	for (int i = h->segments_left - 1; i >= 0; i--) {
		char txt[INET6_ADDRSTRLEN];
		size_t l = fmt_in6(seg + 16 * i, txt);

		strbuf_puts(sb, f ? "\"" : ",\"");
		f = 0;
		strbuf_append(sb, txt, l);
		strbuf_putc(sb, '"');
	}
	strbuf_putc(sb, ']');
}

static void put_ioam6(struct strbuf *sb, int *first, const struct route_encap *e)
{
	static const char *const modes[] = { [IOAM6_IPTUNNEL_MODE_INLINE] = "inline",
					     [IOAM6_IPTUNNEL_MODE_ENCAP] = "encap",
					     [IOAM6_IPTUNNEL_MODE_AUTO] = "auto" };
	const struct rtattr *tb[IOAM6_IPTUNNEL_MAX + 1];
	struct ioam6_trace_hdr t;
	char txt[16];
	uint8_t mode;

	enc_index(tb, IOAM6_IPTUNNEL_MAX, e->attrs, e->len);
	if (!tb[IOAM6_IPTUNNEL_MODE] || !tb[IOAM6_IPTUNNEL_TRACE] || !tb[IOAM6_IPTUNNEL_FREQ_K] ||
	    !tb[IOAM6_IPTUNNEL_FREQ_N])
		return;
	put_key_u64(sb, first, "freqk", enc_u32(tb[IOAM6_IPTUNNEL_FREQ_K]));
	put_key_u64(sb, first, "freqn", enc_u32(tb[IOAM6_IPTUNNEL_FREQ_N]));
	mode = enc_u8(tb[IOAM6_IPTUNNEL_MODE]);
	if (!tb[IOAM6_IPTUNNEL_DST] && mode != IOAM6_IPTUNNEL_MODE_INLINE)
		return;
	put_key_str(sb, first, "mode",
		    mode >= IOAM6_IPTUNNEL_MODE_MIN && mode <= IOAM6_IPTUNNEL_MODE_MAX
			? modes[mode]
			: "<unknown>");
	if (mode != IOAM6_IPTUNNEL_MODE_INLINE)
		put_addr(sb, first, "tundst", RTA_DATA(tb[IOAM6_IPTUNNEL_DST]), -1, 128);
	memcpy(&t, RTA_DATA(tb[IOAM6_IPTUNNEL_TRACE]), sizeof(t));
	put_key_raw(sb, first, "trace", "null");
	put_key_raw(sb, first, "prealloc", "null");
	snprintf(txt, sizeof(txt), "%x", ntohl(t.type_be32) >> 8);
	put_key_str(sb, first, "type", txt);
	put_key_u64(sb, first, "ns", ntohs(t.namespace_id));
	put_key_u64(sb, first, "size", (unsigned int)t.remlen * 4);
}

static void put_xfrm(struct strbuf *sb, int *first, const struct route_ctx *s,
		     const struct route_encap *e)
{
	const struct rtattr *tb[LWT_XFRM_MAX + 1];

	enc_index(tb, LWT_XFRM_MAX, e->attrs, e->len);
	if (tb[LWT_XFRM_IF_ID])
		put_key_u64(sb, first, "if_id", enc_u32(tb[LWT_XFRM_IF_ID]));
	if (tb[LWT_XFRM_LINK])
		put_ifname(sb, first, s, "link_dev", enc_u32(tb[LWT_XFRM_LINK]));
}

static const char *ila_name(int what, uint8_t v)
{
	switch (what * 256 + v) {
	case ILA_ATTR_CSUM_MODE * 256 + ILA_CSUM_ADJUST_TRANSPORT:
		return "adj-transport";
	case ILA_ATTR_CSUM_MODE * 256 + ILA_CSUM_NEUTRAL_MAP:
		return "neutral-map";
	case ILA_ATTR_CSUM_MODE * 256 + ILA_CSUM_NO_ACTION:
		return "no-action";
	case ILA_ATTR_CSUM_MODE * 256 + ILA_CSUM_NEUTRAL_MAP_AUTO:
		return "neutral-map-auto";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_IID:
		return "iid";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_LUID:
		return "luid";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_VIRT_V4:
		return "virt-v4";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_VIRT_UNI_V6:
		return "virt-uni-v6";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_VIRT_MULTI_V6:
		return "virt-multi-v6";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_NONLOCAL_ADDR:
		return "nonlocal-addr";
	case ILA_ATTR_IDENT_TYPE * 256 + ILA_ATYPE_USE_FORMAT:
		return "use-format";
	case ILA_ATTR_HOOK_TYPE * 256 + ILA_HOOK_ROUTE_OUTPUT:
		return "output";
	case ILA_ATTR_HOOK_TYPE * 256 + ILA_HOOK_ROUTE_INPUT:
		return "input";
	default:
		return "unknown";
	}
}

static void put_ila(struct strbuf *sb, int *first, const struct route_encap *e)
{
	const struct rtattr *tb[ILA_ATTR_MAX + 1];

	enc_index(tb, ILA_ATTR_MAX, e->attrs, e->len);
	if (tb[ILA_ATTR_LOCATOR]) {
		const unsigned char *p = RTA_DATA(tb[ILA_ATTR_LOCATOR]);
		char txt[24];

		/* addr64_n2a(): four 16-bit words in hex */
		snprintf(txt, sizeof(txt), "%x:%x:%x:%x", p[0] << 8 | p[1], p[2] << 8 | p[3],
			 p[4] << 8 | p[5], p[6] << 8 | p[7]);
		put_key_str(sb, first, "locator", txt);
	}
	if (tb[ILA_ATTR_CSUM_MODE])
		put_key_str(sb, first, "csum_mode",
			    ila_name(ILA_ATTR_CSUM_MODE, enc_u8(tb[ILA_ATTR_CSUM_MODE])));
	if (tb[ILA_ATTR_IDENT_TYPE])
		put_key_str(sb, first, "ident_type",
			    ila_name(ILA_ATTR_IDENT_TYPE, enc_u8(tb[ILA_ATTR_IDENT_TYPE])));
	if (tb[ILA_ATTR_HOOK_TYPE])
		put_key_str(sb, first, "hook_type",
			    ila_name(ILA_ATTR_HOOK_TYPE, enc_u8(tb[ILA_ATTR_HOOK_TYPE])));
}

/* lwt_print_encap(): "encap":"TYPE" and the type's keys, in the object being written. */
static void put_encap(struct strbuf *sb, int *first, const struct route_ctx *s,
		      const struct route_encap *e)
{
	static const char *const types[] = {
		[LWTUNNEL_ENCAP_MPLS] = "mpls",
		[LWTUNNEL_ENCAP_IP] = "ip",
		[LWTUNNEL_ENCAP_ILA] = "ila",
		[LWTUNNEL_ENCAP_IP6] = "ip6",
		[LWTUNNEL_ENCAP_SEG6] = "seg6",
		[LWTUNNEL_ENCAP_BPF] = "bpf",
		[LWTUNNEL_ENCAP_SEG6_LOCAL] = "seg6local",
		[LWTUNNEL_ENCAP_RPL] = "rpl",
		[LWTUNNEL_ENCAP_IOAM6] = "ioam6",
		[LWTUNNEL_ENCAP_XFRM] = "xfrm",
	};
	put_key_str(sb, first, "encap",
		    e->type < sizeof(types) / sizeof(types[0]) && types[e->type] ? types[e->type]
										 : "unknown");
	switch (e->type) {
	case LWTUNNEL_ENCAP_MPLS:
		put_mpls(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_IP:
		put_ip_tunnel(sb, first, e, 0);
		break;
	case LWTUNNEL_ENCAP_ILA:
		put_ila(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_IP6:
		put_ip_tunnel(sb, first, e, 1);
		break;
	case LWTUNNEL_ENCAP_BPF:
		put_bpf(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_SEG6:
		put_seg6(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_SEG6_LOCAL:
		put_seg6local(sb, first, s, e);
		break;
	case LWTUNNEL_ENCAP_RPL:
		put_rpl(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_IOAM6:
		put_ioam6(sb, first, e);
		break;
	case LWTUNNEL_ENCAP_XFRM:
		put_xfrm(sb, first, s, e);
		break;
	}
}

static long s_hz;

void render_json_route(const struct route_ctx *s, const struct route *r, int64_t now_ms,
		       struct strbuf *sb)
{
	const struct route_metrics *m;
	char buf[12];
	int first = 1;

	strbuf_putc(sb, '{');
	if (r->type != RTN_UNICAST)
		put_key_str(sb, &first, "type", names_type(r->type, buf));
	if (r->dst_len)
		put_addr(sb, &first, "dst", r->dst, r->dst_len, 128);
	else
		put_key_str(sb, &first, "dst", "default");
	if (r->src_len)
		put_addr(sb, &first, "from", r->src, r->src_len, 128);
	if (r->nhid)
		put_key_num(sb, &first, "nhid", r->nhid);
	if (r->nh_count == 1 && !r->mpath_one && r->nh.encap)
		put_encap(sb, &first, s, r->nh.encap);
	if (r->nh_count == 1 && !r->mpath_one && r->nh.has_gw)
		put_addr(sb, &first, "gateway", r->nh.gw, -1, 128);
	if (r->nh_count == 1 && !r->mpath_one && r->nh.ifindex)
		put_dev(sb, &first, s, r->nh.ifindex);
	if (r->table != RT_TABLE_MAIN)
		put_key_str(sb, &first, "table", names_table(s->names, r->table, buf));
	if (r->protocol != RTPROT_BOOT)
		put_key_str(sb, &first, "protocol", names_protocol(s->names, r->protocol, buf));
	if (r->scope != RT_SCOPE_UNIVERSE)
		put_key_str(sb, &first, "scope", names_scope(s->names, r->scope, buf));
	if (r->has_prefsrc)
		put_addr(sb, &first, "prefsrc", r->prefsrc, -1, 128);
	put_key_num(sb, &first, "metric", r->metric);
	put_flags(sb, &first, r->rtm_flags);
	if (r->expires_ms) {
		/* iproute2 prints rta_expires / hz: whole seconds, truncated toward zero */
		int64_t left = r->expires_ms - now_ms;

		long hz = __atomic_load_n(&s_hz, __ATOMIC_RELAXED); /* HTTP threads render too */

		if (!hz) {
			hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
			__atomic_store_n(&s_hz, hz, __ATOMIC_RELAXED);
		}
		if (r->expires_capped) /* the kernel keeps reporting its cap, not a countdown */
			put_key_num(sb, &first, "expires", INT32_MAX / hz);
		else if (left / (1000 / hz) != 0)
			put_key_num(sb, &first, "expires", left / 1000);
	}
	m = r->metrics;
	if (m)
		put_metrics(sb, &first, m);
	if (r->pref != ROUTE_PREF_NONE) {
		static const char *const prefs[] = { "medium", "high", "3", "low" };

		if (r->pref == 0 || r->pref == 1 || r->pref == 3) {
			put_key_str(sb, &first, "pref", prefs[r->pref]);
		} else {
			snprintf(buf, sizeof(buf), "%u", r->pref);
			put_key_str(sb, &first, "pref", buf);
		}
	}
	if (r->nh_count > 1 || (r->nh_count == 1 && r->mpath_one)) {
		strbuf_puts(sb, ",\"nexthops\":[");
		for (unsigned int i = 0; i < r->nh_count; i++) {
			const struct route_nh *nh = route_nh(r, i);
			int f = 1;

			strbuf_puts(sb, i ? ",{" : "{");
			if (nh->encap)
				put_encap(sb, &f, s, nh->encap);
			if (nh->has_gw)
				put_addr(sb, &f, "gateway", nh->gw, -1, 128);
			put_dev(sb, &f, s, nh->ifindex);
			/* rtnh_hops + 1 in a byte: 256 wraps to 0 */
			put_key_num(sb, &f, "weight", nh->weight ? nh->weight : 256);
			put_flags(sb, &f, nh->flags);
			strbuf_putc(sb, '}');
		}
		strbuf_putc(sb, ']');
	}
	strbuf_putc(sb, '}');
}

/* ---- for render_json4.c (render_json_int.h): what both families print alike ---- */

void render_json_put_str(struct strbuf *sb, int *first, const char *key, const char *val)
{
	put_key_str(sb, first, key, val);
}

void render_json_put_flags(struct strbuf *sb, int *first, uint32_t flags)
{
	put_flags(sb, first, flags);
}

void render_json_put_metrics(struct strbuf *sb, int *first, const struct route_metrics *m)
{
	put_metrics(sb, first, m);
}

void render_json_put_encap(struct strbuf *sb, int *first, const struct route_ctx *c,
			   const struct route_encap *e)
{
	put_encap(sb, first, c, e);
}
