// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlparse.c - rtnetlink messages to route records.
 *
 * Each message kind has a table of the attributes we read and the exact (or minimum) size
 * each must have. An attribute that is present with the wrong size makes the whole message
 * malformed (-EBADMSG): the caller counts and skips it, so a bad message never reaches a
 * snapshot. Attributes we do not read are ignored, whatever their size.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/rtnetlink.h>
#include <linux/nexthop.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "rtsnap/nlparse.h"

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif

struct attr_rule {
	unsigned short size; /* required size; 0 = no constraint */
	unsigned char exact; /* 1: size must equal; 0: at least */
};

#define RTA_TBL_MAX 31
static const struct attr_rule s_route_rules[RTA_TBL_MAX + 1] = {
	[RTA_DST] = { 16, 1 },
	[RTA_SRC] = { 16, 1 },
	[RTA_OIF] = { 4, 1 },
	[RTA_GATEWAY] = { 16, 1 },
	[RTA_PRIORITY] = { 4, 1 },
	[RTA_PREFSRC] = { 16, 1 },
	[RTA_METRICS] = { 0, 0 },
	[RTA_MULTIPATH] = { 0, 0 },
	[RTA_CACHEINFO] = { sizeof(struct rta_cacheinfo), 0 },
	[RTA_TABLE] = { 4, 1 },
	[RTA_PREF] = { 1, 1 },
	[RTA_NH_ID] = { 4, 1 },
};

#define IFLA_TBL_MAX IFLA_IFNAME
static const struct attr_rule s_link_rules[IFLA_TBL_MAX + 1] = {
	[IFLA_IFNAME] = { 2, 0 }, /* at least one character and its NUL */
};

/*
 * Index the attributes in [buf, buf+len) into tb[0..max]. Returns 0 or -EBADMSG when an
 * attribute header is cut short or a known attribute has the wrong size.
 */
static int attr_parse(const struct rtattr **tb, unsigned int max, const struct attr_rule *rules,
		      const void *buf, size_t len)
{
	const struct rtattr *a = buf;
	size_t left = len;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (left >= sizeof(*a)) {
		unsigned short alen = a->rta_len, type = a->rta_type & NLA_TYPE_MASK;
		size_t plen;

		if (alen < sizeof(*a) || alen > left)
			return -EBADMSG;
		plen = alen - RTA_LENGTH(0);
		if (type <= max && rules) {
			const struct attr_rule *r = &rules[type];

			if (r->size && (r->exact ? plen != r->size : plen < r->size))
				return -EBADMSG;
			tb[type] = a;
		} else if (type <= max) {
			tb[type] = a;
		}
		alen = RTA_ALIGN(alen);
		if (alen >= left)
			break;
		left -= alen;
		a = (const struct rtattr *)((const char *)a + alen);
	}
	return 0;
}

static uint32_t attr_u32(const struct rtattr *a)
{
	uint32_t v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static int parse_metrics(const struct rtattr *a, struct route_metrics *m)
{
	const struct rtattr *x = RTA_DATA(a);
	size_t left = RTA_PAYLOAD(a);

	memset(m, 0, sizeof(*m));
	while (left >= sizeof(*x)) {
		unsigned short alen = x->rta_len, type = x->rta_type & NLA_TYPE_MASK;

		if (alen < sizeof(*x) || alen > left)
			return -EBADMSG;
		if (type > 0 && type < ROUTE_METRICS_MAX) {
			if (type == RTAX_CC_ALGO) {
				/* a string: the congestion control name (TCP_CA_NAME_MAX 16) */
				size_t n = strnlen(RTA_DATA(x), alen - RTA_LENGTH(0));

				if (n >= sizeof(m->cc_algo))
					n = sizeof(m->cc_algo) - 1;
				memcpy(m->cc_algo, RTA_DATA(x), n);
				m->cc_algo[n] = 0;
				m->val[type] = 0;
			} else {
				if (alen - RTA_LENGTH(0) != sizeof(uint32_t))
					return -EBADMSG;
				m->val[type] = attr_u32(x);
			}
			m->mask |= 1u << type;
		}
		alen = RTA_ALIGN(alen);
		if (alen >= left)
			break;
		left -= alen;
		x = (const struct rtattr *)((const char *)x + alen);
	}
	return 0;
}

static int parse_multipath(const struct rtattr *a, struct nlparse_route *out)
{
	const struct rtnexthop *nh = RTA_DATA(a);
	size_t left = RTA_PAYLOAD(a);
	unsigned int n = 0;

	while (left >= sizeof(*nh)) {
		const struct rtattr *tb[RTA_TBL_MAX + 1];
		struct route_nh *o;
		size_t nlen = nh->rtnh_len;

		if (nlen < sizeof(*nh) || nlen > left)
			return -EBADMSG;
		if (n >= NLPARSE_MAX_NH)
			return -EBADMSG;
		if (attr_parse(tb, RTA_TBL_MAX, s_route_rules, RTNH_DATA(nh),
			       nlen - RTNH_LENGTH(0)))
			return -EBADMSG;
		o = &out->nhs[n++];
		memset(o, 0, sizeof(*o));
		o->ifindex = (uint32_t)nh->rtnh_ifindex;
		o->flags = nh->rtnh_flags;
		o->weight = (uint8_t)(nh->rtnh_hops + 1);
		if (tb[RTA_GATEWAY]) {
			memcpy(o->gw, RTA_DATA(tb[RTA_GATEWAY]), 16);
			o->has_gw = 1;
		}
		nlen = RTNH_ALIGN(nlen);
		if (nlen >= left)
			break;
		left -= nlen;
		nh = (const struct rtnexthop *)((const char *)nh + nlen);
	}
	if (n == 0)
		return -EBADMSG;
	out->r.nh_count = (uint16_t)n;
	if (n == 1) {
		out->r.nh = out->nhs[0];
		out->r.nh_count = 1;
		out->r.mpath_one = 1;
	}
	return 0;
}

static long s_user_hz;

int nlparse_route(const struct nlmsghdr *nlh, int64_t now_ms, struct nlparse_route *out)
{
	const struct rtattr *tb[RTA_TBL_MAX + 1];
	const struct rtmsg *rtm;
	struct route *r = &out->r;
	size_t len;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EBADMSG;
	rtm = NLMSG_DATA(nlh);
	if (rtm->rtm_family != AF_INET6)
		return 0;
	if (rtm->rtm_flags & RTM_F_CLONED)
		return 0;
	if (rtm->rtm_dst_len > 128 || rtm->rtm_src_len > 128)
		return -EBADMSG;
	len = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm));
	if (attr_parse(tb, RTA_TBL_MAX, s_route_rules, RTM_RTA(rtm), len))
		return -EBADMSG;

	memset(r, 0, sizeof(*r));
	out->has_metrics = 0;
	r->dst_len = rtm->rtm_dst_len;
	r->src_len = rtm->rtm_src_len;
	r->protocol = rtm->rtm_protocol;
	r->type = rtm->rtm_type;
	r->scope = rtm->rtm_scope;
	r->rtm_flags = rtm->rtm_flags;
	r->table = tb[RTA_TABLE] ? attr_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	r->pref = tb[RTA_PREF] ? *(const uint8_t *)RTA_DATA(tb[RTA_PREF]) : ROUTE_PREF_NONE;
	r->metrics = NULL;
	if (tb[RTA_DST])
		memcpy(r->dst, RTA_DATA(tb[RTA_DST]), 16);
	if (tb[RTA_SRC])
		memcpy(r->src, RTA_DATA(tb[RTA_SRC]), 16);
	if (tb[RTA_PREFSRC]) {
		memcpy(r->prefsrc, RTA_DATA(tb[RTA_PREFSRC]), 16);
		r->has_prefsrc = 1;
	}
	if (tb[RTA_PRIORITY])
		r->metric = attr_u32(tb[RTA_PRIORITY]);
	if (tb[RTA_NH_ID])
		r->nhid = attr_u32(tb[RTA_NH_ID]);
	if (tb[RTA_CACHEINFO]) {
		const struct rta_cacheinfo *ci = RTA_DATA(tb[RTA_CACHEINFO]);

		if (ci->rta_expires) {
			if (!s_user_hz)
				s_user_hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
			r->expires_ms = now_ms + (int64_t)ci->rta_expires * 1000 / s_user_hz;
			r->expires_capped = ci->rta_expires == INT32_MAX;
			if (r->expires_ms == 0)
				r->expires_ms = -1; /* keep "has a deadline" distinct from none */
		}
	}
	if (tb[RTA_METRICS]) {
		if (parse_metrics(tb[RTA_METRICS], &out->m))
			return -EBADMSG;
		out->has_metrics = out->m.mask != 0;
	}
	if (tb[RTA_MULTIPATH]) {
		if (parse_multipath(tb[RTA_MULTIPATH], out))
			return -EBADMSG;
	} else if (tb[RTA_OIF] || tb[RTA_GATEWAY]) {
		r->nh_count = 1;
		r->nh.weight = 1;
		r->nh.flags = (uint8_t)(rtm->rtm_flags & 0xff);
		if (tb[RTA_OIF])
			r->nh.ifindex = attr_u32(tb[RTA_OIF]);
		if (tb[RTA_GATEWAY]) {
			memcpy(r->nh.gw, RTA_DATA(tb[RTA_GATEWAY]), 16);
			r->nh.has_gw = 1;
		}
	}
	return 1;
}

int nlparse_prefix_key(const struct nlmsghdr *nlh, struct prefix_key *out)
{
	static __thread struct nlparse_route tmp;
	int ret = nlparse_route(nlh, 0, &tmp);

	if (ret <= 0)
		return ret;
	memset(out, 0, sizeof(*out));
	memcpy(out->dst, tmp.r.dst, 16);
	memcpy(out->src, tmp.r.src, 16);
	out->dst_len = tmp.r.dst_len;
	out->src_len = tmp.r.src_len;
	out->table = tmp.r.table;
	out->metric = tmp.r.metric;
	out->ifindex = tmp.r.nh_count == 1 ? tmp.r.nh.ifindex : 0;
	return 1;
}

#define NHA_TBL_MAX NHA_GATEWAY
static const struct attr_rule s_nh_rules[NHA_TBL_MAX + 1] = {
	[NHA_ID] = { 4, 1 },
	[NHA_GROUP] = { sizeof(struct nexthop_grp), 0 },
	[NHA_OIF] = { 4, 1 },
	[NHA_GATEWAY] = { 4, 0 }, /* 4 (IPv4) or 16 (IPv6), checked below */
};

int nlparse_nexthop(const struct nlmsghdr *nlh, struct route_nhobj *out)
{
	const struct rtattr *tb[NHA_TBL_MAX + 1];
	const struct nhmsg *nhm;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*nhm)))
		return -EBADMSG;
	nhm = NLMSG_DATA(nlh);
	if (attr_parse(tb, NHA_TBL_MAX, s_nh_rules, (const char *)nhm + NLMSG_ALIGN(sizeof(*nhm)),
		       nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*nhm))))
		return -EBADMSG;
	if (!tb[NHA_ID])
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	out->id = attr_u32(tb[NHA_ID]);
	if (tb[NHA_GROUP]) {
		const struct nexthop_grp *g = RTA_DATA(tb[NHA_GROUP]);

		if (RTA_PAYLOAD(tb[NHA_GROUP]) % sizeof(*g))
			return -EBADMSG;
		out->is_group = 1;
		out->first = g[0].id;
		return 1;
	}
	out->blackhole = tb[NHA_BLACKHOLE] != NULL;
	if (tb[NHA_OIF])
		out->ifindex = attr_u32(tb[NHA_OIF]);
	if (tb[NHA_GATEWAY]) {
		if (RTA_PAYLOAD(tb[NHA_GATEWAY]) == 16) {
			memcpy(out->gw, RTA_DATA(tb[NHA_GATEWAY]), 16);
			out->has_gw = 1;
		} else if (RTA_PAYLOAD(tb[NHA_GATEWAY]) != 4) {
			return -EBADMSG;
		}
	}
	return 1;
}

int nlparse_link(const struct nlmsghdr *nlh, struct route_link *out)
{
	const struct rtattr *tb[IFLA_TBL_MAX + 1];
	const struct ifinfomsg *ifi;
	const char *name;
	size_t nlen;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return -EBADMSG;
	ifi = NLMSG_DATA(nlh);
	if (attr_parse(tb, IFLA_TBL_MAX, s_link_rules, IFLA_RTA(ifi),
		       nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi))))
		return -EBADMSG;
	if (!tb[IFLA_IFNAME] || ifi->ifi_index <= 0)
		return -EBADMSG;
	name = RTA_DATA(tb[IFLA_IFNAME]);
	nlen = strnlen(name, RTA_PAYLOAD(tb[IFLA_IFNAME]));
	if (nlen == RTA_PAYLOAD(tb[IFLA_IFNAME]) || nlen == 0 || nlen >= IFNAMSIZ)
		return -EBADMSG; /* not NUL-terminated, empty or too long */
	memset(out, 0, sizeof(*out));
	out->ifindex = (uint32_t)ifi->ifi_index;
	out->flags = ifi->ifi_flags;
	memcpy(out->name, name, nlen);
	return 1;
}
