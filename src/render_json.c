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

#include "rtsnap/names.h"
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
