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
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/lwtunnel.h>
#include <linux/ila.h>
#include <linux/ioam6.h>
#include <linux/ioam6_iptunnel.h>
#include <linux/mpls.h>
#include <linux/mpls_iptunnel.h>
#include <linux/rpl.h>
#include <linux/rpl_iptunnel.h>
#include <linux/seg6.h>
#include <linux/seg6_hmac.h>
#include <linux/seg6_iptunnel.h>
#include <linux/seg6_local.h>
#include <sys/socket.h>

#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse_int.h"

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
	[RTA_ENCAP_TYPE] = { 2, 1 },
	[RTA_ENCAP] = { 0, 0 },
	[RTA_NH_ID] = { 4, 1 },
};

#define IFLA_TBL_MAX IFLA_MASTER
static const struct attr_rule s_link_rules[IFLA_TBL_MAX + 1] = {
	[IFLA_IFNAME] = { 2, 0 }, /* at least one character and its NUL */
	[IFLA_MASTER] = { 4, 1 },
	[IFLA_MTU] = { 4, 1 },
};

/*
 * Index the attributes in [buf, buf+len) into tb[0..max]. Returns 0 or -EBADMSG when an
 * attribute header is cut short or a known attribute has the wrong size (or, with once, comes
 * twice: the kernel never repeats one, and iproute2 would read the first where we read the
 * last).
 */
static int attr_parse_once(const struct rtattr **tb, unsigned int max,
			   const struct attr_rule *rules, const void *buf, size_t len, int once)
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
			if (once && tb[type])
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

static int attr_parse(const struct rtattr **tb, unsigned int max, const struct attr_rule *rules,
		      const void *buf, size_t len)
{
	return attr_parse_once(tb, max, rules, buf, len, 0);
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

/*
 * ---- encapsulations (RTA_ENCAP_TYPE, RTA_ENCAP) ----
 *
 * Each type's nested attributes are checked by a table like the route's, known attributes
 * at most once, plus what iproute2 (ip/iproute_lwtunnel.c, which rtsnapd's JSON copies)
 * reads beyond an attribute's size: the segments an SRH says it has and its HMAC TLV,
 * strings that must end in a NUL, MPLS labels up to the bottom of the stack, the layout of
 * tunnel options. Attributes we do not render are not checked, but they are kept: two
 * encapsulations are compared by their bytes.
 */
static const struct attr_rule s_seg6_rules[SEG6_IPTUNNEL_MAX + 1] = {
	[SEG6_IPTUNNEL_SRH] = { sizeof(struct seg6_iptunnel_encap) + sizeof(struct ipv6_sr_hdr),
				0 },
};

#define SEG6_LOCAL_TBL_MAX SEG6_LOCAL_FLAVORS
static const struct attr_rule s_seg6local_rules[SEG6_LOCAL_TBL_MAX + 1] = {
	[SEG6_LOCAL_ACTION] = { 4, 1 },	  [SEG6_LOCAL_SRH] = { sizeof(struct ipv6_sr_hdr), 0 },
	[SEG6_LOCAL_TABLE] = { 4, 1 },	  [SEG6_LOCAL_NH4] = { 4, 1 },
	[SEG6_LOCAL_NH6] = { 16, 1 },	  [SEG6_LOCAL_IIF] = { 4, 1 },
	[SEG6_LOCAL_OIF] = { 4, 1 },	  [SEG6_LOCAL_BPF] = { 0, 0 },
	[SEG6_LOCAL_VRFTABLE] = { 4, 1 }, [SEG6_LOCAL_COUNTERS] = { 0, 0 },
	[SEG6_LOCAL_FLAVORS] = { 0, 0 },
};

static const struct attr_rule s_seg6local_cnt_rules[SEG6_LOCAL_CNT_MAX + 1] = {
	[SEG6_LOCAL_CNT_PACKETS] = { 8, 1 },
	[SEG6_LOCAL_CNT_BYTES] = { 8, 1 },
	[SEG6_LOCAL_CNT_ERRORS] = { 8, 1 },
};

static const struct attr_rule s_seg6local_flv_rules[SEG6_LOCAL_FLV_MAX + 1] = {
	[SEG6_LOCAL_FLV_OPERATION] = { 4, 1 },
	[SEG6_LOCAL_FLV_LCBLOCK_BITS] = { 1, 1 },
	[SEG6_LOCAL_FLV_LCNODE_FN_BITS] = { 1, 1 },
};

/* LWT_BPF_PROG_* (also the layout of SEG6_LOCAL_BPF) */
static const struct attr_rule s_bpf_prog_rules[LWT_BPF_PROG_MAX + 1] = {
	[LWT_BPF_PROG_NAME] = { 1, 0 },
};

static const struct attr_rule s_bpf_rules[LWT_BPF_MAX + 1] = {
	[LWT_BPF_IN] = { 0, 0 },
	[LWT_BPF_OUT] = { 0, 0 },
	[LWT_BPF_XMIT] = { 0, 0 },
	[LWT_BPF_XMIT_HEADROOM] = { 4, 1 },
};

static const struct attr_rule s_ip6_rules[LWTUNNEL_IP6_MAX + 1] = {
	[LWTUNNEL_IP6_ID] = { 8, 1 },	[LWTUNNEL_IP6_DST] = { 16, 1 },
	[LWTUNNEL_IP6_SRC] = { 16, 1 }, [LWTUNNEL_IP6_HOPLIMIT] = { 1, 1 },
	[LWTUNNEL_IP6_TC] = { 1, 1 },	[LWTUNNEL_IP6_FLAGS] = { 2, 1 },
	[LWTUNNEL_IP6_OPTS] = { 0, 0 },
};

static const struct attr_rule s_ip_rules[LWTUNNEL_IP_MAX + 1] = {
	[LWTUNNEL_IP_ID] = { 8, 1 },   [LWTUNNEL_IP_DST] = { 4, 1 }, [LWTUNNEL_IP_SRC] = { 4, 1 },
	[LWTUNNEL_IP_TTL] = { 1, 1 },  [LWTUNNEL_IP_TOS] = { 1, 1 }, [LWTUNNEL_IP_FLAGS] = { 2, 1 },
	[LWTUNNEL_IP_OPTS] = { 0, 0 },
};

static const struct attr_rule s_ip_opts_rules[LWTUNNEL_IP_OPTS_MAX + 1] = {
	[LWTUNNEL_IP_OPTS_GENEVE] = { 0, 0 },
	[LWTUNNEL_IP_OPTS_VXLAN] = { 0, 0 },
	[LWTUNNEL_IP_OPTS_ERSPAN] = { 0, 0 },
};

static const struct attr_rule s_vxlan_rules[LWTUNNEL_IP_OPT_VXLAN_MAX + 1] = {
	[LWTUNNEL_IP_OPT_VXLAN_GBP] = { 4, 1 },
};

static const struct attr_rule s_erspan_rules[LWTUNNEL_IP_OPT_ERSPAN_MAX + 1] = {
	[LWTUNNEL_IP_OPT_ERSPAN_VER] = { 1, 1 },
	[LWTUNNEL_IP_OPT_ERSPAN_INDEX] = { 4, 1 },
	[LWTUNNEL_IP_OPT_ERSPAN_DIR] = { 1, 1 },
	[LWTUNNEL_IP_OPT_ERSPAN_HWID] = { 1, 1 },
};

static const struct attr_rule s_mpls_rules[MPLS_IPTUNNEL_MAX + 1] = {
	[MPLS_IPTUNNEL_DST] = { 4, 0 },
	[MPLS_IPTUNNEL_TTL] = { 1, 1 },
};

static const struct attr_rule s_rpl_rules[RPL_IPTUNNEL_MAX + 1] = {
	[RPL_IPTUNNEL_SRH] = { sizeof(struct ipv6_rpl_sr_hdr), 0 },
};

static const struct attr_rule s_ioam6_rules[IOAM6_IPTUNNEL_MAX + 1] = {
	[IOAM6_IPTUNNEL_MODE] = { 1, 1 },
	[IOAM6_IPTUNNEL_DST] = { 16, 1 },
	[IOAM6_IPTUNNEL_TRACE] = { sizeof(struct ioam6_trace_hdr), 0 },
	[IOAM6_IPTUNNEL_FREQ_K] = { 4, 1 },
	[IOAM6_IPTUNNEL_FREQ_N] = { 4, 1 },
};

static const struct attr_rule s_xfrm_rules[LWT_XFRM_MAX + 1] = {
	[LWT_XFRM_IF_ID] = { 4, 1 },
	[LWT_XFRM_LINK] = { 4, 1 },
};

static const struct attr_rule s_ila_rules[ILA_ATTR_MAX + 1] = {
	[ILA_ATTR_LOCATOR] = { 8, 1 },
	[ILA_ATTR_CSUM_MODE] = { 1, 1 },
	[ILA_ATTR_IDENT_TYPE] = { 1, 1 },
	[ILA_ATTR_HOOK_TYPE] = { 1, 1 },
};

#define NESTED(tb, max, rules, a) attr_parse_once(tb, max, rules, RTA_DATA(a), RTA_PAYLOAD(a), 1)

/* A NUL-terminated string fills a (iproute2 reads it with rta_getattr_str()). */
static int str_ok(const struct rtattr *a)
{
	return memchr(RTA_DATA(a), 0, RTA_PAYLOAD(a)) != NULL;
}

/* An SRH of len bytes holds the first_segment + 1 segments it lists and, with the HMAC flag,
 * the key id of its HMAC TLV, which ends the header (iproute2 print_srh). */
static int srh_ok(const void *p, size_t len)
{
	const struct ipv6_sr_hdr *h = p;
	long off;

	if (len < sizeof(*h) || sizeof(*h) + 16 * ((size_t)h->first_segment + 1) > len)
		return 0;
	if (!(h->flags & SR6_FLAG1_HMAC))
		return 1;
	off = (((long)h->hdrlen + 1) << 3) - (long)sizeof(struct sr6_tlv_hmac);
	return off >= (long)sizeof(*h) && (size_t)off + offsetof(struct sr6_tlv_hmac, hmac) <= len;
}

/* A LWT_BPF_PROG_* nest: its name, if any, is a string. */
static int bpf_prog_ok(const struct rtattr *a)
{
	const struct rtattr *tb[LWT_BPF_PROG_MAX + 1];

	if (NESTED(tb, LWT_BPF_PROG_MAX, s_bpf_prog_rules, a))
		return 0;
	return !tb[LWT_BPF_PROG_NAME] || str_ok(tb[LWT_BPF_PROG_NAME]);
}

/*
 * Geneve options as the kernel lays them out and iproute2 walks them: CLASS (2 bytes), TYPE
 * (1) and DATA (a multiple of 4) per option, in that order, nothing else (iproute2 steps
 * over an option by DATA's length plus 20).
 */
static int geneve_ok(const struct rtattr *a)
{
	static const unsigned short want[3][2] = { { LWTUNNEL_IP_OPT_GENEVE_CLASS, 2 },
						   { LWTUNNEL_IP_OPT_GENEVE_TYPE, 1 },
						   { LWTUNNEL_IP_OPT_GENEVE_DATA, 0 } };
	const struct rtattr *x = RTA_DATA(a);
	size_t left = RTA_PAYLOAD(a);
	unsigned int k = 0;

	if (!left)
		return 0;
	while (left) {
		size_t plen;

		if (left < sizeof(*x) || x->rta_len < sizeof(*x) || x->rta_len > left)
			return 0;
		plen = x->rta_len - RTA_LENGTH(0);
		if ((x->rta_type & NLA_TYPE_MASK) != want[k][0] ||
		    (want[k][1] ? plen != want[k][1] : plen % 4 != 0))
			return 0;
		k = (k + 1) % 3;
		if (RTA_ALIGN(x->rta_len) >= left) {
			left = 0;
			break;
		}
		left -= RTA_ALIGN(x->rta_len);
		x = (const struct rtattr *)((const char *)x + RTA_ALIGN(x->rta_len));
	}
	return k == 0;
}

/* LWTUNNEL_IP_OPTS / LWTUNNEL_IP6_OPTS: the one kind iproute2 prints is complete. */
static int ip_opts_ok(const struct rtattr *a)
{
	const struct rtattr *tb[LWTUNNEL_IP_OPTS_MAX + 1], *o[LWTUNNEL_IP_OPT_ERSPAN_MAX + 1];

	if (NESTED(tb, LWTUNNEL_IP_OPTS_MAX, s_ip_opts_rules, a))
		return 0;
	if (tb[LWTUNNEL_IP_OPTS_GENEVE])
		return geneve_ok(tb[LWTUNNEL_IP_OPTS_GENEVE]);
	if (tb[LWTUNNEL_IP_OPTS_VXLAN])
		return !NESTED(o, LWTUNNEL_IP_OPT_VXLAN_MAX, s_vxlan_rules,
			       tb[LWTUNNEL_IP_OPTS_VXLAN]) &&
		       o[LWTUNNEL_IP_OPT_VXLAN_GBP];
	if (tb[LWTUNNEL_IP_OPTS_ERSPAN]) {
		if (NESTED(o, LWTUNNEL_IP_OPT_ERSPAN_MAX, s_erspan_rules,
			   tb[LWTUNNEL_IP_OPTS_ERSPAN]) ||
		    !o[LWTUNNEL_IP_OPT_ERSPAN_VER])
			return 0;
		if (*(const uint8_t *)RTA_DATA(o[LWTUNNEL_IP_OPT_ERSPAN_VER]) == 1)
			return o[LWTUNNEL_IP_OPT_ERSPAN_INDEX] != NULL;
		return o[LWTUNNEL_IP_OPT_ERSPAN_DIR] && o[LWTUNNEL_IP_OPT_ERSPAN_HWID];
	}
	return 1;
}

/* MPLS labels: iproute2 reads up to the one with the bottom-of-stack bit. */
static int mpls_labels_ok(const struct rtattr *a)
{
	const unsigned char *p = RTA_DATA(a);
	size_t n = RTA_PAYLOAD(a);

	if (n % 4)
		return 0;
	for (size_t i = 0; i + 4 <= n; i += 4)
		if (p[i + 2] & 0x01) /* MPLS_LS_S_MASK in the big-endian entry */
			return 1;
	return 0;
}

/* The checks of one encapsulation type beyond sizes. 0 or -EBADMSG. */
static int encap_check(uint16_t type, const struct rtattr *ea)
{
	const struct rtattr *tb[SEG6_LOCAL_TBL_MAX + 1], *x[SEG6_LOCAL_CNT_MAX + 1];
	int ok = 1;

	switch (type) {
	case LWTUNNEL_ENCAP_SEG6:
		if (NESTED(tb, SEG6_IPTUNNEL_MAX, s_seg6_rules, ea))
			return -EBADMSG;
		if (tb[SEG6_IPTUNNEL_SRH])
			ok = srh_ok((const char *)RTA_DATA(tb[SEG6_IPTUNNEL_SRH]) +
					sizeof(struct seg6_iptunnel_encap),
				    RTA_PAYLOAD(tb[SEG6_IPTUNNEL_SRH]) -
					sizeof(struct seg6_iptunnel_encap));
		break;
	case LWTUNNEL_ENCAP_SEG6_LOCAL:
		if (NESTED(tb, SEG6_LOCAL_TBL_MAX, s_seg6local_rules, ea))
			return -EBADMSG;
		if (tb[SEG6_LOCAL_SRH])
			ok = srh_ok(RTA_DATA(tb[SEG6_LOCAL_SRH]), RTA_PAYLOAD(tb[SEG6_LOCAL_SRH]));
		if (ok && tb[SEG6_LOCAL_BPF])
			ok = bpf_prog_ok(tb[SEG6_LOCAL_BPF]);
		if (ok && tb[SEG6_LOCAL_COUNTERS])
			ok = !NESTED(x, SEG6_LOCAL_CNT_MAX, s_seg6local_cnt_rules,
				     tb[SEG6_LOCAL_COUNTERS]);
		if (ok && tb[SEG6_LOCAL_FLAVORS])
			ok = !NESTED(x, SEG6_LOCAL_FLV_MAX, s_seg6local_flv_rules,
				     tb[SEG6_LOCAL_FLAVORS]);
		break;
	case LWTUNNEL_ENCAP_IP6:
		if (NESTED(tb, LWTUNNEL_IP6_MAX, s_ip6_rules, ea))
			return -EBADMSG;
		if (tb[LWTUNNEL_IP6_OPTS])
			ok = ip_opts_ok(tb[LWTUNNEL_IP6_OPTS]);
		break;
	case LWTUNNEL_ENCAP_IP:
		if (NESTED(tb, LWTUNNEL_IP_MAX, s_ip_rules, ea))
			return -EBADMSG;
		if (tb[LWTUNNEL_IP_OPTS])
			ok = ip_opts_ok(tb[LWTUNNEL_IP_OPTS]);
		break;
	case LWTUNNEL_ENCAP_BPF:
		if (NESTED(tb, LWT_BPF_MAX, s_bpf_rules, ea))
			return -EBADMSG;
		for (int i = LWT_BPF_IN; ok && i <= LWT_BPF_XMIT; i++)
			if (tb[i])
				ok = bpf_prog_ok(tb[i]);
		break;
	case LWTUNNEL_ENCAP_MPLS:
		if (NESTED(tb, MPLS_IPTUNNEL_MAX, s_mpls_rules, ea))
			return -EBADMSG;
		if (tb[MPLS_IPTUNNEL_DST])
			ok = mpls_labels_ok(tb[MPLS_IPTUNNEL_DST]);
		break;
	case LWTUNNEL_ENCAP_RPL:
		if (NESTED(tb, RPL_IPTUNNEL_MAX, s_rpl_rules, ea))
			return -EBADMSG;
		if (tb[RPL_IPTUNNEL_SRH]) {
			const struct ipv6_rpl_sr_hdr *h = RTA_DATA(tb[RPL_IPTUNNEL_SRH]);

			ok = sizeof(*h) + 16 * (size_t)h->segments_left <=
			     RTA_PAYLOAD(tb[RPL_IPTUNNEL_SRH]);
		}
		break;
	case LWTUNNEL_ENCAP_IOAM6:
		ok = !NESTED(tb, IOAM6_IPTUNNEL_MAX, s_ioam6_rules, ea);
		break;
	case LWTUNNEL_ENCAP_XFRM:
		ok = !NESTED(tb, LWT_XFRM_MAX, s_xfrm_rules, ea);
		break;
	case LWTUNNEL_ENCAP_ILA:
		ok = !NESTED(tb, ILA_ATTR_MAX, s_ila_rules, ea);
		break;
	default: /* a type iproute2 prints only the name of ("unknown" past its list) */
		break;
	}
	return ok ? 0 : -EBADMSG;
}

/* Zero the packet counters of a seg6local copy: they change with every packet, unannounced,
 * and are no part of the route's identity (the kernel compares only whether they are kept). */
static void encap_zero_counters(struct route_encap *e)
{
	const struct rtattr *tb[SEG6_LOCAL_TBL_MAX + 1];
	struct rtattr *c, *x;
	size_t left;

	if (e->type != LWTUNNEL_ENCAP_SEG6_LOCAL ||
	    attr_parse(tb, SEG6_LOCAL_TBL_MAX, NULL, e->attrs, e->len) || !tb[SEG6_LOCAL_COUNTERS])
		return;
	c = (struct rtattr *)tb[SEG6_LOCAL_COUNTERS]; /* in e, which is ours */
	left = RTA_PAYLOAD(c);
	for (x = RTA_DATA(c); RTA_OK(x, left); x = RTA_NEXT(x, left))
		memset(RTA_DATA(x), 0, RTA_PAYLOAD(x));
}

/*
 * The encapsulation of a message or of one of its rtnexthops: RTA_ENCAP_TYPE ta and RTA_ENCAP
 * ea (both needed, as iproute2 prints nothing without either) checked and copied into out's
 * buffer. *res is the copy, or NULL for none. 0 or -EBADMSG.
 */
static int parse_encap(const struct rtattr *ta, const struct rtattr *ea, struct nlparse_route *out,
		       const struct route_encap **res)
{
	struct route_encap *e;
	uint16_t type;
	size_t need;

	*res = NULL;
	if (!ta || !ea)
		return 0;
	memcpy(&type, RTA_DATA(ta), sizeof(type));
	if (encap_check(type, ea))
		return -EBADMSG;
	need = (sizeof(*e) + RTA_PAYLOAD(ea) + 3u) & ~(size_t)3u;
	if (need > sizeof(out->encap_buf) - out->encap_used) /* cannot happen: see the bound */
		return -EBADMSG;
	e = (struct route_encap *)(out->encap_buf + out->encap_used);
	e->type = type;
	e->len = (uint16_t)RTA_PAYLOAD(ea);
	memcpy(e->attrs, RTA_DATA(ea), e->len);
	encap_zero_counters(e);
	out->encap_used += need;
	*res = e;
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
		if (parse_encap(tb[RTA_ENCAP_TYPE], tb[RTA_ENCAP], out, &o->encap))
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
	out->encap_used = 0;
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
		/* a single path's encapsulation is its hop's (the kernel sends none with
		 * RTA_MULTIPATH, nor on a route without a device: reject routes drop theirs) */
		if (parse_encap(tb[RTA_ENCAP_TYPE], tb[RTA_ENCAP], out, &r->nh.encap))
			return -EBADMSG;
	}
	return 1;
}

int nlparse_prefix_key(const struct nlmsghdr *nlh, struct nlparse_route *scratch,
		       struct prefix_key *out)
{
	const struct route *r = &scratch->r;
	int ret = nlparse_route(nlh, 0, scratch);

	if (ret <= 0)
		return ret;
	memset(out, 0, sizeof(*out));
	memcpy(out->dst, r->dst, 16);
	memcpy(out->src, r->src, 16);
	out->dst_len = r->dst_len;
	out->src_len = r->src_len;
	out->table = r->table;
	out->metric = r->metric;
	out->ifindex = r->nh_count == 1 ? r->nh.ifindex : 0;
	return 1;
}

#define NHA_TBL_MAX NHA_ENCAP
static const struct attr_rule s_nh_rules[NHA_TBL_MAX + 1] = {
	[NHA_ID] = { 4, 1 },
	[NHA_GROUP] = { sizeof(struct nexthop_grp), 0 },
	[NHA_OIF] = { 4, 1 },
	[NHA_GATEWAY] = { 4, 0 }, /* 4 (IPv4) or 16 (IPv6), checked below */
	[NHA_ENCAP_TYPE] = { 2, 1 },
	[NHA_ENCAP] = { 0, 0 },
};

int nlparse_addr6(const struct nlmsghdr *nlh, uint8_t addr[16])
{
	const struct ifaddrmsg *ifa;
	const struct rtattr *a;
	size_t left;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return -EBADMSG;
	ifa = NLMSG_DATA(nlh);
	if (ifa->ifa_family != AF_INET6)
		return 0;
	left = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	for (a = IFA_RTA(ifa); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type != IFA_ADDRESS)
			continue;
		if (RTA_PAYLOAD(a) != 16)
			return -EBADMSG;
		memcpy(addr, RTA_DATA(a), 16);
		return 1;
	}
	return 0;
}

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
	if (tb[NHA_ENCAP_TYPE] && tb[NHA_ENCAP]) {
		uint16_t type;

		memcpy(&type, RTA_DATA(tb[NHA_ENCAP_TYPE]), sizeof(type));
		if (encap_check(type, tb[NHA_ENCAP]))
			return -EBADMSG;
	}
	out->blackhole = tb[NHA_BLACKHOLE] != NULL;
	out->family = nhm->nh_family;
	if (tb[NHA_OIF])
		out->ifindex = attr_u32(tb[NHA_OIF]);
	if (tb[NHA_GATEWAY]) {
		size_t glen = RTA_PAYLOAD(tb[NHA_GATEWAY]);

		if (glen != 16 && glen != 4)
			return -EBADMSG;
		memcpy(out->gw, RTA_DATA(tb[NHA_GATEWAY]), glen); /* IPv4: gw[0..3] */
		out->has_gw = 1;
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
	if (tb[IFLA_MASTER])
		out->master = attr_u32(tb[IFLA_MASTER]);
	if (tb[IFLA_MTU])
		out->mtu = attr_u32(tb[IFLA_MTU]);
	memcpy(out->name, name, nlen);
	return 1;
}

/* ---- for nlparse4.c (nlparse_int.h): the checks both families share ---- */

int nlparse_metrics(const struct rtattr *a, struct route_metrics *m)
{
	return parse_metrics(a, m);
}

int nlparse_encap(const struct rtattr *ta, const struct rtattr *ea, struct nlparse_route *out,
		  const struct route_encap **res)
{
	return parse_encap(ta, ea, out, res);
}
