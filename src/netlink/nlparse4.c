// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlparse4.c - IPv4 route messages to route records (route4.h says which field holds what).
 *
 * As nlparse.c for IPv6: a table gives the size each attribute we read must have, a known
 * attribute with another size (or twice) makes the message malformed (-EBADMSG), and metrics
 * and encapsulations are checked by the same code as IPv6's (nlparse_int.h). What IPv4 adds:
 * 4-byte addresses, the TOS of the key, IPv6 gateways (RTA_VIA) and realms (RTA_FLOW) per
 * nexthop, kept in the hop's encapsulation blob.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "rtsnap/nlparse4.h"
#include "rtsnap/nlparse_int.h"
#include "rtsnap/route4.h"

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif

struct rule4 {
	unsigned short size; /* required payload size; 0 = no constraint */
	unsigned char exact; /* 1: must equal; 0: at least */
};

#define RTA4_MAX 31
static const struct rule4 s_rules[RTA4_MAX + 1] = {
	[RTA_DST] = { 4, 1 },	  [RTA_SRC] = { 4, 1 },	      [RTA_OIF] = { 4, 1 },
	[RTA_GATEWAY] = { 4, 1 }, [RTA_PRIORITY] = { 4, 1 },  [RTA_PREFSRC] = { 4, 1 },
	[RTA_METRICS] = { 0, 0 }, [RTA_MULTIPATH] = { 0, 0 }, [RTA_FLOW] = { 4, 1 },
	[RTA_TABLE] = { 4, 1 },	  [RTA_VIA] = { 2, 0 },	      [RTA_ENCAP_TYPE] = { 2, 1 },
	[RTA_ENCAP] = { 0, 0 },	  [RTA_NH_ID] = { 4, 1 },
};

/* Index [buf, buf+len) into tb[0..RTA4_MAX], each known attribute checked and at most once. */
static int attrs4(const struct rtattr **tb, const void *buf, size_t len)
{
	const struct rtattr *a = buf;
	size_t left = len;

	memset(tb, 0, sizeof(*tb) * (RTA4_MAX + 1));
	while (left >= sizeof(*a)) {
		unsigned short alen = a->rta_len, type = a->rta_type & NLA_TYPE_MASK;
		size_t plen;

		if (alen < sizeof(*a) || alen > left)
			return -EBADMSG;
		plen = alen - RTA_LENGTH(0);
		if (type <= RTA4_MAX) {
			const struct rule4 *r = &s_rules[type];

			if (r->size && (r->exact ? plen != r->size : plen < r->size))
				return -EBADMSG;
			if (tb[type])
				return -EBADMSG;
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

static uint32_t u32_of(const struct rtattr *a)
{
	uint32_t v;

	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

/* RTA_GATEWAY gw or RTA_VIA via (either may be NULL) into hop o. 0 or -EBADMSG. */
static int gateway4(const struct rtattr *gw, const struct rtattr *via, struct route_nh *o)
{
	if (gw && via)
		return -EBADMSG;
	if (gw) {
		memcpy(o->gw, RTA_DATA(gw), 4);
		o->has_gw = 1;
	} else if (via) {
		const struct rtvia *v = RTA_DATA(via);
		size_t alen = RTA_PAYLOAD(via) - offsetof(struct rtvia, rtvia_addr);

		if (v->rtvia_family == AF_INET6 && alen == 16) {
			memcpy(o->gw, v->rtvia_addr, 16);
			o->has_gw = ROUTE_GW_VIA6;
		} else if (v->rtvia_family == AF_INET && alen == 4) {
			memcpy(o->gw, v->rtvia_addr, 4);
			o->has_gw = 1;
		} else {
			return -EBADMSG;
		}
	}
	return 0;
}

/*
 * A hop's blob: its encapsulation (ta, ea) and realms (flow, may be NULL), checked and copied
 * into out->encap_buf (route4.h: realms first, flagged in the type). 0 or -EBADMSG.
 */
static int extras4(const struct rtattr *ta, const struct rtattr *ea, const struct rtattr *flow,
		   struct nlparse_route *out, const struct route_encap **res)
{
	size_t at = out->encap_used, len = 0, need;
	const struct route_encap *enc;
	struct route_encap *e;
	uint16_t type = 0;
	uint32_t realms;

	if (nlparse_encap(ta, ea, out, &enc))
		return -EBADMSG;
	*res = enc;
	if (!flow || !(realms = u32_of(flow)))
		return 0;
	if (enc) { /* the copy just made, at `at`: move its attributes up by 4 */
		type = enc->type;
		len = enc->len;
	}
	need = (sizeof(*e) + 4 + len + 3u) & ~(size_t)3u;
	if (need > sizeof(out->encap_buf) - at || len + 4 > UINT16_MAX)
		return -EBADMSG;
	e = (struct route_encap *)(out->encap_buf + at);
	if (len)
		memmove(e->attrs + 4, e->attrs, len);
	e->type = (uint16_t)(type | ROUTE_ENCAP_REALMS);
	e->len = (uint16_t)(len + 4);
	memcpy(e->attrs, &realms, 4);
	out->encap_used = at + need;
	*res = e;
	return 0;
}

static int multipath4(const struct rtattr *a, struct nlparse_route *out)
{
	const struct rtnexthop *nh = RTA_DATA(a);
	size_t left = RTA_PAYLOAD(a);
	unsigned int n = 0;

	while (left >= sizeof(*nh)) {
		const struct rtattr *tb[RTA4_MAX + 1];
		struct route_nh *o;
		size_t nlen = nh->rtnh_len;

		if (nlen < sizeof(*nh) || nlen > left || n >= NLPARSE_MAX_NH)
			return -EBADMSG;
		if (attrs4(tb, RTNH_DATA(nh), nlen - RTNH_LENGTH(0)))
			return -EBADMSG;
		o = &out->nhs[n++];
		memset(o, 0, sizeof(*o));
		o->ifindex = (uint32_t)nh->rtnh_ifindex;
		o->flags = nh->rtnh_flags;
		o->weight = (uint8_t)(nh->rtnh_hops + 1);
		if (gateway4(tb[RTA_GATEWAY], tb[RTA_VIA], o) ||
		    extras4(tb[RTA_ENCAP_TYPE], tb[RTA_ENCAP], tb[RTA_FLOW], out, &o->encap))
			return -EBADMSG;
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
		out->r.mpath_one = 1;
	}
	return 0;
}

int nlparse_route4(const struct nlmsghdr *nlh, struct nlparse_route *out)
{
	const struct rtattr *tb[RTA4_MAX + 1];
	const struct rtmsg *rtm;
	struct route *r = &out->r;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EBADMSG;
	rtm = NLMSG_DATA(nlh);
	if (rtm->rtm_family != AF_INET || (rtm->rtm_flags & RTM_F_CLONED))
		return 0;
	if (rtm->rtm_dst_len > 32 || rtm->rtm_src_len > 32)
		return -EBADMSG;
	if (attrs4(tb, RTM_RTA(rtm), nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm))))
		return -EBADMSG;

	memset(r, 0, sizeof(*r));
	out->has_metrics = 0;
	out->encap_used = 0;
	r->family = AF_INET;
	r->dst_len = rtm->rtm_dst_len;
	r->tos = rtm->rtm_tos;
	r->protocol = rtm->rtm_protocol;
	r->type = rtm->rtm_type;
	r->scope = rtm->rtm_scope;
	r->rtm_flags = rtm->rtm_flags;
	r->pref = ROUTE_PREF_NONE;
	r->table = tb[RTA_TABLE] ? u32_of(tb[RTA_TABLE]) : rtm->rtm_table;
	if (tb[RTA_DST])
		memcpy(r->dst, RTA_DATA(tb[RTA_DST]), 4);
	if (tb[RTA_PREFSRC]) {
		memcpy(r->prefsrc, RTA_DATA(tb[RTA_PREFSRC]), 4);
		r->has_prefsrc = 1;
	}
	if (tb[RTA_PRIORITY])
		r->metric = u32_of(tb[RTA_PRIORITY]);
	if (tb[RTA_NH_ID])
		r->nhid = u32_of(tb[RTA_NH_ID]);
	if (tb[RTA_METRICS]) {
		if (nlparse_metrics(tb[RTA_METRICS], &out->m))
			return -EBADMSG;
		out->has_metrics = out->m.mask != 0;
	}
	if (tb[RTA_MULTIPATH])
		return multipath4(tb[RTA_MULTIPATH], out) ? -EBADMSG : 1;
	if (tb[RTA_OIF] || tb[RTA_GATEWAY] || tb[RTA_VIA] || tb[RTA_FLOW]) {
		r->nh_count = 1;
		r->nh.weight = 1;
		r->nh.flags = (uint8_t)(rtm->rtm_flags & 0xff);
		if (tb[RTA_OIF])
			r->nh.ifindex = u32_of(tb[RTA_OIF]);
		if (gateway4(tb[RTA_GATEWAY], tb[RTA_VIA], &r->nh) ||
		    extras4(tb[RTA_ENCAP_TYPE], tb[RTA_ENCAP], tb[RTA_FLOW], out, &r->nh.encap))
			return -EBADMSG;
	}
	return 1;
}

int nlparse_nexthop4(const struct nlmsghdr *nlh, struct nlparse_nh4 *out)
{
	const struct nhmsg *nhm = NLMSG_DATA(nlh);
	const struct rtattr *a;
	size_t left;
	int ret = nlparse_nexthop(nlh, &out->o);

	if (ret != 1)
		return ret < 0 ? ret : -EBADMSG;
	out->flags = nhm->nh_flags;
	out->nmemb = 0;
	left = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*nhm));
	a = (const struct rtattr *)((const char *)nhm + NLMSG_ALIGN(sizeof(*nhm)));
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		const struct nexthop_grp *g = RTA_DATA(a);
		size_t n = RTA_PAYLOAD(a) / sizeof(*g);

		if ((a->rta_type & NLA_TYPE_MASK) != NHA_GROUP)
			continue;
		if (n > NLPARSE_NH4_MAX_MEMBERS) /* nlparse_nexthop() checked the size */
			return -EBADMSG;
		for (size_t i = 0; i < n; i++) {
			out->memb[i].id = g[i].id;
			out->memb[i].weight = (uint16_t)(g[i].weight + 1u);
		}
		out->nmemb = (unsigned int)n;
	}
	return 1;
}

int nlparse_addr4(const struct nlmsghdr *nlh, uint32_t *ifindex, uint8_t addr[4], uint8_t *plen)
{
	const struct ifaddrmsg *ifa;
	const struct rtattr *a, *local = NULL, *peer = NULL;
	size_t left;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return -EBADMSG;
	ifa = NLMSG_DATA(nlh);
	if (ifa->ifa_family != AF_INET)
		return 0;
	left = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	for (a = IFA_RTA(ifa); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type != IFA_LOCAL && a->rta_type != IFA_ADDRESS)
			continue;
		if (RTA_PAYLOAD(a) != 4)
			return -EBADMSG;
		if (a->rta_type == IFA_LOCAL)
			local = a;
		else
			peer = a;
	}
	if (!local)
		local = peer;
	if (!local || ifa->ifa_prefixlen > 32 || !ifa->ifa_index)
		return -EBADMSG;
	memcpy(addr, RTA_DATA(local), 4);
	*ifindex = ifa->ifa_index;
	*plen = ifa->ifa_prefixlen;
	return 1;
}
