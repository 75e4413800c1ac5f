// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_nlparse4 - the IPv4 route parser (nlparse4.c) on messages recorded from a real kernel:
 * tests/data/inet-kinds (every IPv4 route kind, tests/data/capture_inet.sh) and the
 * notification streams tests/data/inet-notify-* (capture_inet_notify.sh). Each dumped route is
 * checked field by field against the object `ip -j -4 route show table all` printed for it at
 * the same moment (no renderer involved); every message of every stream must parse; truncated
 * and corrupted copies must be parsed or rejected, never read out of bounds (ASan build); and
 * hand-made messages check what the kernel never sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <linux/lwtunnel.h>
#include <linux/rtnetlink.h>

#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/route4.h"

static struct nlparse_route s_pr;

/* Hop i of the route s_pr holds (its hops are in s_pr.nhs, r.nhs is left NULL). */
static const struct route_nh *hop(unsigned int i)
{
	return s_pr.r.nh_count > 1 ? &s_pr.nhs[i] : &s_pr.r.nh;
}

static char *slurp(const char *set, const char *name, size_t *len)
{
	const char *d = getenv("RTSNAP_TESTDATA_DIR");
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s/%s", d ? d : "tests/data", set, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Interface names by index, from a recorded RTM_GETLINK dump. */
static char s_names[4096][16];

static void load_links(const char *set)
{
	size_t len, left;
	char *buf = slurp(set, "links.nl", &len);
	struct route_link l;

	assert_non_null(buf);
	memset(s_names, 0, sizeof(s_names));
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left))
		if (h->nlmsg_type == RTM_NEWLINK && nlparse_link(h, &l) == 1 && l.ifindex < 4096)
			memcpy(s_names[l.ifindex], l.name, sizeof(l.name));
	free(buf);
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void check_addr(const char *want, const uint8_t *a, unsigned int len)
{
	char txt[64];

	inet_ntop(AF_INET, a, txt, sizeof(txt));
	if (len != 32)
		snprintf(txt + strlen(txt), sizeof(txt) - strlen(txt), "/%u", len);
	assert_non_null(want);
	assert_string_equal(txt, want);
}

/* One hop against its JSON (the route object for a single path, a nexthops entry else). */
static void check_hop(json_t *o, const struct route_nh *nh, int top)
{
	json_t *via = json_object_get(o, "via"), *flow = json_object_get(o, "flow");
	char txt[64];

	if (jstr(o, "gateway")) {
		assert_int_equal(nh->has_gw, 1);
		check_addr(jstr(o, "gateway"), nh->gw, 32);
	} else if (via) {
		assert_int_equal(nh->has_gw, ROUTE_GW_VIA6);
		assert_string_equal(jstr(via, "family"), "inet6");
		inet_ntop(AF_INET6, nh->gw, txt, sizeof(txt));
		assert_string_equal(jstr(via, "host"), txt);
	} else {
		assert_int_equal(nh->has_gw, 0);
	}
	if (jstr(o, "dev"))
		assert_string_equal(jstr(o, "dev"), s_names[nh->ifindex]);
	else
		assert_int_equal(nh->ifindex, 0);
	if (flow) { /* names from rt_realms: the recording uses numbers and cosmos (0) only */
		uint32_t realms = route4_nh_realms(nh), to = realms & 0xffff, from = realms >> 16;
		const char *f = jstr(flow, "from"), *t = jstr(flow, "to");

		assert_true(realms != 0);
		if (from)
			assert_int_equal(strtoul(f, NULL, 10), from);
		else
			assert_null(f);
		if (to)
			assert_int_equal(strtoul(t, NULL, 10), to);
		else
			assert_string_equal(t, "cosmos");
	} else {
		assert_int_equal(route4_nh_realms(nh), 0);
	}
	if (!top)
		assert_int_equal(json_integer_value(json_object_get(o, "weight")),
				 nh->weight ? nh->weight : 256);
}

static const char *const s_types[] = { "unspec",   "unicast",	"local",     "broadcast",
				       "anycast",  "multicast", "blackhole", "unreachable",
				       "prohibit", "throw" };

static void check_route(json_t *o, const struct route *r, const struct route_nh *nhs)
{
	json_t *nexthops = json_object_get(o, "nexthops"), *metric = json_object_get(o, "metric");

	assert_int_equal(r->family, AF_INET);
	if (r->type == RTN_UNICAST)
		assert_null(json_object_get(o, "type"));
	else
		assert_string_equal(jstr(o, "type"), s_types[r->type]);
	if (r->dst_len)
		check_addr(jstr(o, "dst"), r->dst, r->dst_len);
	else
		assert_string_equal(jstr(o, "dst"), "default");
	for (int i = 4; i < 16; i++)
		assert_int_equal(r->dst[i] | r->prefsrc[i] | r->src[i], 0);
	assert_int_equal(r->src_len, 0);
	assert_int_equal(r->pref, ROUTE_PREF_NONE);
	assert_int_equal(r->expires_ms, 0);
	assert_int_equal(r->tos != 0, json_object_get(o, "tos") != NULL);
	if (r->tos == 0x10)
		assert_string_equal(jstr(o, "tos"), "0x10");
	if (r->table == RT_TABLE_MAIN)
		assert_null(json_object_get(o, "table"));
	assert_int_equal(r->metric, metric ? json_integer_value(metric) : 0);
	assert_int_equal(r->nhid, json_integer_value(json_object_get(o, "nhid")));
	if (r->has_prefsrc)
		check_addr(jstr(o, "prefsrc"), r->prefsrc, 32);
	else
		assert_null(json_object_get(o, "prefsrc"));
	assert_int_equal(r->metrics != NULL || s_pr.has_metrics,
			 json_object_get(o, "metrics") != NULL);
	if (nexthops) {
		assert_int_equal(json_array_size(nexthops), r->nh_count);
		assert_true(r->nh_count > 1);
		for (unsigned int i = 0; i < r->nh_count; i++)
			check_hop(json_array_get(nexthops, i), &nhs[i], 0);
	} else if (r->nh_count == 1) {
		check_hop(o, &r->nh, 1);
	} else {
		assert_null(json_object_get(o, "gateway"));
		assert_null(json_object_get(o, "dev"));
	}
}

/* Every route of the recorded dump against ip's object for it, in order. */
static void test_dump_matches_ip(void **state)
{
	const char *set = *state;
	size_t len, jlen, left, i = 0;
	char *buf = slurp(set, "routes.nl", &len), *ip = slurp(set, "ip.json", &jlen);
	json_error_t err;
	json_t *all;
	int kinds[16] = { 0 }, via6 = 0, realms = 0, tos = 0, mpath = 0, nhid = 0;

	assert_non_null(buf);
	assert_non_null(ip);
	all = json_loads(ip, 0, &err);
	assert_non_null(all);
	load_links(set);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE)
			break;
		assert_int_equal(nlparse_route4(h, &s_pr), 1);
		assert_true(i < json_array_size(all));
		check_route(json_array_get(all, i++), &s_pr.r, s_pr.nhs);
		kinds[s_pr.r.type & 15]++;
		for (unsigned int k = 0; k < s_pr.r.nh_count; k++) {
			const struct route_nh *nh = hop(k);

			via6 += nh->has_gw == ROUTE_GW_VIA6;
			realms += route4_nh_realms(nh) != 0;
		}
		tos += s_pr.r.tos != 0;
		mpath += s_pr.r.nh_count > 1;
		nhid += s_pr.r.nhid != 0;
	}
	assert_int_equal(i, json_array_size(all));
	/* the recording holds what it is meant to */
	for (int t = RTN_UNICAST; t <= RTN_THROW; t++)
		assert_true(kinds[t] > 0);
	assert_true(via6 >= 4 && realms >= 5 && tos >= 3 && mpath >= 5 && nhid >= 6);
	print_message("# %zu routes checked\n", i);
	json_decref(all);
	free(buf);
	free(ip);
}

/* Every route message of a notification stream parses (its other messages are not routes). */
static void test_stream_parses(void **state)
{
	const char *set = *state;
	size_t len, left;
	char *buf = slurp(set, "notify.nl", &len);
	int n = 0;

	if (!buf)
		skip();
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type != RTM_NEWROUTE && h->nlmsg_type != RTM_DELROUTE)
			continue;
		assert_int_equal(nlparse_route4(h, &s_pr), 1);
		n++;
	}
	assert_true(n > 0);
	free(buf);
}

/* Truncations and byte flips of every recorded message: parsed or rejected, nothing else. */
static void test_corrupted(void **state)
{
	size_t len, left;
	char *buf = slurp(*state, "routes.nl", &len);
	int rejected = 0, parsed = 0;

	assert_non_null(buf);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		uint32_t mlen = h->nlmsg_len;
		char *copy;

		if (h->nlmsg_type != RTM_NEWROUTE)
			continue;
		for (uint32_t cut = NLMSG_HDRLEN; cut < mlen; cut++) {
			struct nlmsghdr *c =
			    malloc(cut); /* exactly cut bytes: ASan sees overreads */
			int r;

			memcpy(c, h, cut);
			c->nlmsg_len = cut;
			r = nlparse_route4(c, &s_pr);
			assert_true(r == -EBADMSG || r == 0 || r == 1);
			rejected += r == -EBADMSG;
			free(c);
		}
		copy = malloc(mlen);
		for (uint32_t pos = NLMSG_HDRLEN; pos < mlen; pos++) {
			int r;

			memcpy(copy, h, mlen);
			copy[pos] ^= (char)0xa5;
			r = nlparse_route4((struct nlmsghdr *)copy, &s_pr);
			assert_true(r == -EBADMSG || r == 0 || r == 1);
			parsed += r == 1;
			/* a parsed record's hops and blobs are whole */
			for (unsigned int k = 0; r == 1 && k < s_pr.r.nh_count; k++) {
				const struct route_nh *nh = hop(k);
				const uint8_t *attrs;
				size_t alen;

				route4_nh_encap(nh, &attrs, &alen);
				assert_true(!nh->encap ||
					    (const unsigned char *)nh->encap >= s_pr.encap_buf);
				(void)route4_nh_realms(nh);
			}
		}
		free(copy);
	}
	assert_true(rejected > 0 && parsed > 0);
	free(buf);
}

/* ---- hand-made messages: what the kernel never sends ---- */

struct msg {
	struct nlmsghdr h;
	struct rtmsg r;
	unsigned char a[512];
};

static void msg_init(struct msg *m, unsigned char family)
{
	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = RTM_NEWROUTE;
	m->h.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	m->r.rtm_family = family;
	m->r.rtm_dst_len = 24;
	m->r.rtm_table = RT_TABLE_MAIN;
	m->r.rtm_type = RTN_UNICAST;
}

static void msg_put(struct msg *m, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)&m->h + NLMSG_ALIGN(m->h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static void test_handmade(void **state)
{
	struct msg m;
	uint8_t dst[4] = { 10, 1, 2, 0 }, six[16] = { 0xfe, 0x80 };
	uint32_t oif = 3, flow = 0x00030004;
	struct {
		uint16_t family;
		uint8_t addr[16];
	} __attribute__((packed)) via = { AF_INET6, { 0xfe, 0x80, [15] = 1 } };

	msg_init(&m, AF_INET6);
	assert_int_equal(nlparse_route4(&m.h, &s_pr), 0); /* not ours */
	msg_init(&m, AF_INET);
	m.r.rtm_flags = RTM_F_CLONED;
	assert_int_equal(nlparse_route4(&m.h, &s_pr), 0); /* a cached entry */
	msg_init(&m, AF_INET);
	m.r.rtm_dst_len = 33;
	assert_int_equal(nlparse_route4(&m.h, &s_pr), -EBADMSG);
	msg_init(&m, AF_INET);
	msg_put(&m, RTA_DST, six, 16); /* an IPv6-sized destination */
	assert_int_equal(nlparse_route4(&m.h, &s_pr), -EBADMSG);
	msg_init(&m, AF_INET);
	msg_put(&m, RTA_DST, dst, 4);
	msg_put(&m, RTA_DST, dst, 4); /* twice */
	assert_int_equal(nlparse_route4(&m.h, &s_pr), -EBADMSG);
	msg_init(&m, AF_INET);
	msg_put(&m, RTA_DST, dst, 4);
	msg_put(&m, RTA_OIF, &oif, 4);
	msg_put(&m, RTA_VIA, &via, sizeof(via));
	msg_put(&m, RTA_FLOW, &flow, 4);
	assert_int_equal(nlparse_route4(&m.h, &s_pr), 1);
	assert_int_equal(s_pr.r.nh_count, 1);
	assert_int_equal(s_pr.r.nh.has_gw, ROUTE_GW_VIA6);
	assert_memory_equal(s_pr.r.nh.gw, via.addr, 16);
	assert_int_equal(route4_nh_realms(&s_pr.r.nh), flow);
	msg_put(&m, RTA_GATEWAY, dst, 4); /* a gateway beside RTA_VIA */
	assert_int_equal(nlparse_route4(&m.h, &s_pr), -EBADMSG);
	msg_init(&m, AF_INET);
	via.family = 28; /* AF_MPLS: not an IPv4 route's */
	msg_put(&m, RTA_VIA, &via, sizeof(via));
	assert_int_equal(nlparse_route4(&m.h, &s_pr), -EBADMSG);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "inet-kinds: every route as ip -j shows it", test_dump_matches_ip, NULL, NULL,
		  "inet-kinds" },
		{ "inet-kinds: corrupted messages parsed or rejected", test_corrupted, NULL, NULL,
		  "inet-kinds" },
		{ "inet-notify-routes: every route message parses", test_stream_parses, NULL, NULL,
		  "inet-notify-routes" },
		{ "inet-notify-links: every route message parses", test_stream_parses, NULL, NULL,
		  "inet-notify-links" },
		{ "inet-notify-random: every route message parses", test_stream_parses, NULL, NULL,
		  "inet-notify-random" },
		cmocka_unit_test(test_handmade),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
