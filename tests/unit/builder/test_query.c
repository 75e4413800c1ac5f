// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_query - /routes filter parsing and evaluation, paging, /expiring (query.c).
 *
 * Parsing: every parameter with good values and with the malformed ones an HTTP client can
 * send (signs, hex, overflow, empty, overlong, bad prefixes, IPv4, zones, cursors). Evaluation:
 * the body of each query parses as a JSON array whose objects are exactly the routes a
 * linear scan selects, in kernel order; pages concatenate to the unpaged answer; routes with
 * an expiry show the time left at the query's instant, not at the snapshot's.
 */
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
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/names.h"
#include "rtsnap/query.h"

#define T0 5000000 /* snapshot time, ms */

static struct names *s_names;

static int parse1(struct query *q, const char *k, const char *v)
{
	char err[256];
	int ret = query_parse_arg(q, s_names, k, v, err, sizeof(err));

	if (ret)
		assert_non_null(strstr(err, k)); /* the message names the parameter */
	return ret;
}

static void test_parse_good(void **state)
{
	struct query q = { 0 };

	(void)state;
	assert_int_equal(parse1(&q, "table", "main"), 0);
	assert_int_equal(q.table, RT_TABLE_MAIN);
	assert_true(q.set & QF_TABLE);
	assert_int_equal(parse1(&q, "table", "local"), 0);
	assert_int_equal(q.table, RT_TABLE_LOCAL);
	assert_int_equal(parse1(&q, "table", "100"), 0);
	assert_int_equal(q.table, 100);
	assert_int_equal(parse1(&q, "table", "4294967295"), 0);
	assert_int_equal(q.table, 4294967295u);
	q.set = 0;
	assert_int_equal(parse1(&q, "table", "all"), 0);
	assert_false(q.set & QF_TABLE);
	assert_int_equal(parse1(&q, "prefix", "2001:db8::/32"), 0);
	assert_int_equal(q.prefix_len, 32);
	assert_int_equal(parse1(&q, "prefix", "2001:db8:1:2::7/33"), 0); /* host bits cleared */
	assert_int_equal(q.prefix[4], 0);
	assert_int_equal(q.prefix[15], 0);
	assert_int_equal(parse1(&q, "prefix", "default"), 0);
	assert_int_equal(q.prefix_len, 0);
	assert_int_equal(parse1(&q, "prefix", "::/0"), 0);
	assert_int_equal(parse1(&q, "covers", "2001:db8::1"), 0);
	assert_int_equal(q.covers_len, 128);
	assert_int_equal(parse1(&q, "covers", "::ffff:1.2.3.4/96"), 0);
	assert_int_equal(parse1(&q, "dev", "eth0"), 0);
	assert_string_equal(q.dev, "eth0");
	assert_int_equal(parse1(&q, "dev", "abcdefghijklmno"), 0);
	assert_int_equal(parse1(&q, "protocol", "kernel"), 0);
	assert_int_equal(q.protocol, RTPROT_KERNEL);
	assert_int_equal(parse1(&q, "protocol", "ra"), 0);
	assert_int_equal(parse1(&q, "protocol", "99"), 0);
	assert_int_equal(q.protocol, 99);
	assert_int_equal(parse1(&q, "type", "unreachable"), 0);
	assert_int_equal(q.type, RTN_UNREACHABLE);
	assert_int_equal(parse1(&q, "type", "1"), 0);
	assert_int_equal(parse1(&q, "gateway", "fe80::1"), 0);
	assert_int_equal(parse1(&q, "metric", "0"), 0);
	assert_int_equal(parse1(&q, "metric", "4294967295"), 0);
	assert_int_equal(q.metric, 4294967295u);
	assert_int_equal(parse1(&q, "expiring", "1"), 0);
	assert_int_equal(q.expiring, 1);
	assert_int_equal(parse1(&q, "expiring", "0"), 0);
	assert_int_equal(q.expiring, 0);
	assert_int_equal(parse1(&q, "limit", "1"), 0);
	assert_int_equal(parse1(&q, "limit", "4294967295"), 0);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[][2] = {
		{ "table", "" },
		{ "table", "0" },
		{ "table", "-1" },
		{ "table", "+1" },
		{ "table", "4294967296" },
		{ "table", "nosuchname" },
		{ "table", " 1" },
		{ "prefix", "" },
		{ "prefix", "/" },
		{ "prefix", "/64" },
		{ "prefix", "2001:db8::/" },
		{ "prefix", "2001:db8::/129" },
		{ "prefix", "2001:db8::/-1" },
		{ "prefix", "2001:db8::/+1" },
		{ "prefix", "2001:db8::/0032" },
		{ "prefix", "2001:db8::/3a" },
		{ "prefix", "2001:db8::/32/1" },
		{ "prefix", "2001:db8::/ 32" },
		{ "prefix", " 2001:db8::/32" },
		{ "prefix", "2001:db8:::/32" },
		{ "prefix", "2001:db8::g/32" },
		{ "prefix", "1.2.3.4/8" },
		{ "prefix", "10.0.0.0" },
		{ "prefix", "fe80::1%eth0/64" },
		{ "prefix", "[2001:db8::]/32" },
		{ "prefix", "2001:db8:0:0:0:0:0:0:0/64" },
		{ "covers", "" },
		{ "covers", "x" },
		{ "covers", "2001:db8::1/200" },
		{ "gateway", "" },
		{ "gateway", "2001:db8::/64" },
		{ "gateway", "fe80::1%lo" },
		{ "gateway", "1.2.3.4" },
		{ "dev", "" },
		{ "dev", "a/b" },
		{ "dev", "a:b" },
		{ "dev", "a b" },
		{ "dev", "." },
		{ "dev", ".." },
		{ "dev", "abcdefghijklmnop" },
		{ "protocol", "" },
		{ "protocol", "nosuch" },
		{ "protocol", "256" },
		{ "protocol", "-1" },
		{ "type", "" },
		{ "type", "nosuch" },
		{ "type", "256" },
		{ "metric", "" },
		{ "metric", "-1" },
		{ "metric", "+1" },
		{ "metric", "0x10" },
		{ "metric", "1 " },
		{ "metric", "4294967296" },
		{ "metric", "99999999999999999999" },
		{ "metric", "1e3" },
		{ "expiring", "" },
		{ "expiring", "2" },
		{ "expiring", "true" },
		{ "expiring", "01" },
		{ "limit", "0" },
		{ "limit", "" },
		{ "limit", "-5" },
		{ "after", "" },
		{ "after", "zz" },
		{ "nosuch", "1" },
	};
	char longv[QUERY_VALUE_MAX + 2];
	struct query q = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse1(&q, bad[i][0], bad[i][1]) != -EINVAL)
			fail_msg("accepted %s=%s", bad[i][0], bad[i][1]);
	}
	memset(longv, '1', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = 0;
	assert_int_equal(parse1(&q, "metric", longv), -EINVAL);
	assert_int_equal(parse1(&q, "prefix", longv), -EINVAL);
	assert_int_equal(q.set, 0);
}

static void test_cursor_codec(void **state)
{
	struct index_cursor c = { .table = 0xfedcba98,
				  .dst = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0xff },
				  .src = { 0xfe, 0x80, [15] = 1 },
				  .dst_len = 128,
				  .src_len = 64,
				  .metric = 0xffffffff,
				  .gw = { 0xfe, 0x80, [15] = 9 },
				  .ifindex = 77,
				  .ordinal = 3 },
			    d;
	char txt[QUERY_CURSOR_LEN + 1], bad[QUERY_CURSOR_LEN + 2];

	(void)state;
	query_cursor_encode(&c, txt);
	assert_int_equal(strlen(txt), QUERY_CURSOR_LEN);
	assert_int_equal(query_cursor_decode(txt, &d), 0);
	assert_memory_equal(&c, &d, sizeof(c));
	memcpy(bad, txt, sizeof(txt));
	bad[5] = 'g';
	assert_int_equal(query_cursor_decode(bad, &d), -EINVAL);
	bad[5] = 'A'; /* lower case only */
	assert_int_equal(query_cursor_decode(bad, &d), -EINVAL);
	memcpy(bad, txt, sizeof(txt));
	bad[QUERY_CURSOR_LEN - 1] = 0;
	assert_int_equal(query_cursor_decode(bad, &d), -EINVAL);
	memcpy(bad, txt, sizeof(txt));
	strcat(bad, "0");
	assert_int_equal(query_cursor_decode(bad, &d), -EINVAL);
	memcpy(bad, txt, sizeof(txt));
	bad[40] = '8'; /* dst_len 0x8? > 128 */
	bad[41] = '1';
	assert_int_equal(query_cursor_decode(bad, &d), -EINVAL);
}

/* ---- evaluation ---- */

static void addr(uint8_t a[16], const char *txt)
{
	assert_int_equal(inet_pton(AF_INET6, txt, a), 1);
}

static struct route mk(const char *dst, unsigned int len, uint32_t table, uint32_t metric,
		       uint32_t ifindex)
{
	struct route r = { 0 };

	addr(r.dst, dst);
	r.dst_len = (uint8_t)len;
	r.table = table;
	r.metric = metric;
	r.type = RTN_UNICAST;
	r.protocol = RTPROT_BOOT;
	r.pref = 0;
	r.nh_count = 1;
	r.nh.ifindex = ifindex;
	r.nh.weight = 1;
	return r;
}

/* A snapshot in kernel order: table 100 (bucket 100) then main, then local. */
static struct snapshot *sample(void)
{
	struct route_link l1 = { .ifindex = 1, .name = "lo" },
			  l2 = { .ifindex = 2, .name = "eth0" },
			  l3 = { .ifindex = 3, .name = "eth1" };
	struct route_nh mp[2] = { { .ifindex = 2, .has_gw = 1, .weight = 1 },
				  { .ifindex = 3, .has_gw = 1, .weight = 2 } };
	struct snapshot *s = NULL;
	struct route r;

	assert_int_equal(snapshot_new(NULL, &s), 0);
	s->taken_mono_ms = T0;
	assert_int_equal(names_load("/nonexistent", &s->ctx.names), 0);
	assert_int_equal(snapshot_add_link(s, &l1), 0);
	assert_int_equal(snapshot_add_link(s, &l2), 0);
	assert_int_equal(snapshot_add_link(s, &l3), 0);

	r = mk("2001:db8:100::", 48, 100, 1024, 2);
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("::", 0, 100, 1024, 2);
	addr(r.nh.gw, "fe80::1");
	r.nh.has_gw = 1;
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);

	/* main */
	r = mk("2001:db8:1::5", 128, RT_TABLE_MAIN, 1024, 3);
	r.expires_ms = T0 + 100000; /* 100 s at T0 */
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("2001:db8:1::", 64, RT_TABLE_MAIN, 256, 2);
	r.protocol = RTPROT_KERNEL;
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("2001:db8:1::", 48, RT_TABLE_MAIN, 1024, 0);
	r.nh_count = 2;
	addr(mp[0].gw, "fe80::2");
	addr(mp[1].gw, "fe80::3");
	assert_int_equal(snapshot_add_route(s, &r, mp, 2, NULL), 0);
	r = mk("2001:db8:2::", 48, RT_TABLE_MAIN, 5, 1);
	r.type = RTN_UNREACHABLE;
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("2001:db8::", 32, RT_TABLE_MAIN, 1024, 2);
	r.expires_ms = T0 - 10; /* overdue */
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("::", 0, RT_TABLE_MAIN, 1024, 2);
	addr(r.nh.gw, "fe80::1");
	r.nh.has_gw = 1;
	r.protocol = RTPROT_RA;
	r.expires_ms = T0 + 1800000;
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	r = mk("2001:db8:1::1", 128, RT_TABLE_LOCAL, 0, 2);
	r.type = RTN_LOCAL;
	r.protocol = RTPROT_KERNEL;
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	assert_int_equal(snapshot_finish(s), 0);
	return s;
}

static char *body(const struct query_result *res, size_t *len)
{
	size_t n = 0;
	char *b;

	for (size_t i = 0; i < res->nseg; i++)
		n += res->segs[i].len;
	b = malloc(n + 1);
	assert_non_null(b);
	n = 0;
	for (size_t i = 0; i < res->nseg; i++) {
		memcpy(b + n, res->segs[i].p, res->segs[i].len);
		n += res->segs[i].len;
	}
	b[n] = 0;
	if (len)
		*len = n;
	return b;
}

/* Run a query given as "k=v&k=v" at time now; return the dst/metric list "dst,metric;...". */
static char *run(const struct snapshot *s, const char *qs, int64_t now, char *next,
		 json_t **arr_out)
{
	struct query q = { 0 };
	struct query_result res;
	char *copy = strdup(qs), *save = NULL, *b, *out;
	json_error_t je;
	json_t *arr, *o;
	size_t i, len;
	struct strbuf sb = { 0 };

	for (char *kv = strtok_r(copy, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		assert_non_null(eq);
		*eq = 0;
		assert_int_equal(parse1(&q, kv, eq + 1), 0);
	}
	free(copy);
	assert_int_equal(query_run(s, &q, now, &res), 0);
	b = body(&res, &len);
	assert_true(len >= 3);
	assert_int_equal(b[len - 1], '\n');
	arr = json_loads(b, 0, &je);
	if (!arr)
		fail_msg("bad JSON (%s): %s", je.text, b);
	assert_true(json_is_array(arr));
	assert_int_equal(json_array_size(arr), res.count);
	json_array_foreach(arr, i, o)
	{
		strbuf_appendf(&sb, "%s%s,%lld", i ? ";" : "",
			       json_string_value(json_object_get(o, "dst")),
			       (long long)json_integer_value(json_object_get(o, "metric")));
	}
	strbuf_putc(&sb, 0);
	if (next)
		strcpy(next, res.next);
	if (arr_out)
		*arr_out = arr;
	else
		json_decref(arr);
	free(b);
	query_result_free(&res);
	out = strbuf_detach(&sb, NULL);
	return out;
}

static void expect(const struct snapshot *s, const char *qs, const char *want)
{
	char *got = run(s, qs, T0, NULL, NULL);

	if (strcmp(got, want))
		fail_msg("%s:\n got  %s\n want %s", qs, got, want);
	free(got);
}

static void test_filters(void **state)
{
	struct snapshot *s = sample();
	uint8_t any[16] = { 0 };
	uint32_t lo, hi;

	(void)state;
	/* the sample is in kernel order: no table needs the fallback permutation */
	for (size_t t = 0; t < s->ntables; t++)
		assert_int_equal(index_inside_range(s, (int)t, any, 0, &lo, &hi), 1);
	expect(s, "table=all",
	       "2001:db8:100::/48,1024;default,1024;2001:db8:1::5,1024;2001:db8:1::/64,256;"
	       "2001:db8:1::/48,1024;2001:db8:2::/48,5;2001:db8::/32,1024;default,1024;"
	       "2001:db8:1::1,0");
	expect(s, "table=main",
	       "2001:db8:1::5,1024;2001:db8:1::/64,256;2001:db8:1::/48,1024;2001:db8:2::/48,5;"
	       "2001:db8::/32,1024;default,1024");
	expect(s, "table=100", "2001:db8:100::/48,1024;default,1024");
	expect(s, "table=7", "");
	expect(s, "prefix=2001:db8:1::/48",
	       "2001:db8:1::5,1024;2001:db8:1::/64,256;2001:db8:1::/48,1024;2001:db8:1::1,0");
	expect(s, "prefix=2001:db8::/32&table=main",
	       "2001:db8:1::5,1024;2001:db8:1::/64,256;2001:db8:1::/48,1024;2001:db8:2::/48,5;"
	       "2001:db8::/32,1024");
	expect(s, "prefix=2001:db8:1::5", "2001:db8:1::5,1024");
	expect(s, "prefix=2001:db8:3::/48", "");
	expect(s, "covers=2001:db8:1::5",
	       "default,1024;2001:db8:1::5,1024;2001:db8:1::/64,256;2001:db8:1::/48,1024;"
	       "2001:db8::/32,1024;default,1024");
	expect(s, "covers=2001:db8:1::/60&table=main",
	       "2001:db8:1::/48,1024;2001:db8::/32,1024;default,1024");
	expect(s, "dev=eth1", "2001:db8:1::5,1024;2001:db8:1::/48,1024");
	expect(s, "dev=nosuch", "");
	expect(s, "gateway=fe80::3", "2001:db8:1::/48,1024");
	expect(s, "gateway=fe80::1", "default,1024;default,1024");
	expect(s, "protocol=kernel", "2001:db8:1::/64,256;2001:db8:1::1,0");
	expect(s, "protocol=ra&table=main", "default,1024");
	expect(s, "type=unreachable", "2001:db8:2::/48,5");
	expect(s, "type=local", "2001:db8:1::1,0");
	expect(s, "metric=5", "2001:db8:2::/48,5");
	expect(s, "expiring=1", "2001:db8:1::5,1024;2001:db8::/32,1024;default,1024");
	expect(s, "expiring=1&prefix=2001:db8::/32", "2001:db8:1::5,1024;2001:db8::/32,1024");
	expect(s, "expiring=0&table=main",
	       "2001:db8:1::/64,256;2001:db8:1::/48,1024;2001:db8:2::/48,5");
	expect(s, "covers=2001:db8:1::5&dev=eth0&metric=1024&table=main",
	       "2001:db8:1::/48,1024;2001:db8::/32,1024;default,1024");
	snapshot_free(s);
}

/* Pages of every size concatenate to the unpaged answer, for several filters. */
static void test_paging(void **state)
{
	static const char *const qs[] = {
		"table=all",  "table=main", "prefix=2001:db8::/32", "covers=2001:db8:1::5",
		"expiring=1", "dev=eth0"
	};
	struct snapshot *s = sample();

	(void)state;
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		char *all = run(s, qs[k], T0, NULL, NULL);

		for (unsigned int lim = 1; lim <= 10; lim++) {
			char next[QUERY_CURSOR_LEN + 1] = "", q[512];
			struct strbuf acc = { 0 };
			int pages = 0;

			do {
				char *page;

				snprintf(q, sizeof(q), "%s&limit=%u%s%s", qs[k], lim,
					 next[0] ? "&after=" : "", next);
				page = run(s, q, T0, next, NULL);
				if (*page)
					strbuf_appendf(&acc, "%s%s", acc.len ? ";" : "", page);
				free(page);
				assert_true(++pages < 50);
			} while (next[0]);
			strbuf_putc(&acc, 0);
			if (strcmp(acc.buf, all))
				fail_msg("%s limit %u:\n got  %s\n want %s", qs[k], lim, acc.buf,
					 all);
			strbuf_free(&acc);
		}
		free(all);
	}
	snapshot_free(s);
}

/* "expires" is the time left when the query runs; the body is byte-identical otherwise. */
static void test_expires_now(void **state)
{
	struct snapshot *s = sample();
	json_t *a, *b;
	char *x, *y;

	(void)state;
	x = run(s, "prefix=2001:db8:1::5", T0, NULL, &a);
	y = run(s, "prefix=2001:db8:1::5", T0 + 30500, NULL, &b);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "expires")), 100);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(b, 0), "expires")), 69);
	json_decref(a);
	json_decref(b);
	free(x);
	free(y);
	/* an overdue route prints a negative value, as ip does */
	x = run(s, "prefix=2001:db8::/32&metric=1024&dev=eth0&covers=2001:db8::/32", T0 + 5000,
		NULL, &a);
	assert_string_equal(x, "2001:db8::/32,1024");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "expires")), -5);
	json_decref(a);
	free(x);
	snapshot_free(s);
}

static void test_expiring_view(void **state)
{
	struct snapshot *s = sample();
	struct strbuf sb = { 0 };
	json_error_t je;
	json_t *arr, *o;

	(void)state;
	query_render_expiring(s, T0 + 1000, &sb);
	strbuf_putc(&sb, 0);
	arr = json_loads(sb.buf, 0, &je);
	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), 3);
	/* soonest first: the overdue /32, then the /128 (99 s), then the default (1799 s) */
	o = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(o, "dst")), "2001:db8::/32");
	assert_true(json_is_true(json_object_get(o, "expired")));
	o = json_array_get(arr, 1);
	assert_string_equal(json_string_value(json_object_get(o, "dst")), "2001:db8:1::5");
	assert_int_equal(json_integer_value(json_object_get(o, "expires")), 99);
	assert_null(json_object_get(o, "expired"));
	o = json_array_get(arr, 2);
	assert_string_equal(json_string_value(json_object_get(o, "dst")), "default");
	assert_int_equal(json_integer_value(json_object_get(o, "expires")), 1799);
	json_decref(arr);
	strbuf_free(&sb);
	snapshot_free(s);
}

static void test_lookup(void **state)
{
	struct snapshot *s = sample();
	struct lookup_query lq;
	char err[256];
	struct strbuf sb = { 0 };

	(void)state;
	query_lookup_init(&lq);
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "addr", "2001:db8:1::5", err, sizeof(err)),
	    0);
	assert_int_equal(query_lookup(s, &lq, T0), 2);
	/* after its deadline the /128 is skipped (fib6_check_expired), the /64 wins */
	assert_int_equal(query_lookup(s, &lq, T0 + 100000), 3);
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "addr", "2001:db8:2::1", err, sizeof(err)),
	    0);
	assert_int_equal(query_lookup(s, &lq, T0), 5); /* the unreachable route itself */
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "addr", "2001:db8:ffff::1", err, sizeof(err)),
	    0);
	assert_int_equal(query_lookup(s, &lq, T0), 7); /* the /32 is overdue: default */
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "table", "local", err, sizeof(err)), 0);
	assert_int_equal(query_lookup(s, &lq, T0), -ENOENT);
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "table", "all", err, sizeof(err)), -EINVAL);
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "addr", "2001:db8::/64", err, sizeof(err)),
	    -EINVAL);
	assert_int_equal(query_lookup_parse_arg(&lq, s->ctx.names, "from", "x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
	    query_lookup_parse_arg(&lq, s->ctx.names, "prefix", "::", err, sizeof(err)), -EINVAL);
	query_render_route(s, 2, T0 + 2000, &sb);
	strbuf_putc(&sb, 0);
	assert_string_equal(sb.buf, "{\"dst\":\"2001:db8:1::5\",\"dev\":\"eth1\",\"metric\":1024,"
				    "\"flags\":[],\"expires\":98,\"pref\":\"medium\"}");
	strbuf_free(&sb);
	snapshot_free(s);
}

/* Addresses are written exactly as inet_ntop() writes them (what ip prints). */
static void test_addr_format(void **state)
{
	static const char *const fixed[] = { "::",
					     "::1",
					     "1::",
					     "::ffff:1.2.3.4",
					     "::1.2.3.4",
					     "::ffff:0:0",
					     "::ffff:0.0.0.1",
					     "1:0:0:1:0:0:1:0",
					     "1:0:1:0:0:1:0:1",
					     "0:1::1:0",
					     "fe80::1:0:0:0",
					     "::2:3:4:5:6:7:8",
					     "1:2:3:4:5:6:7::",
					     "::fffe:1.2.3.4",
					     "::ffff:1:2:3",
					     "2001:db8::ff00:42:8329" };
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	struct snapshot *s = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(snapshot_new(NULL, &s), 0);
	for (size_t i = 0; i < 3000; i++) {
		struct route r = mk("::", 128, RT_TABLE_MAIN, (uint32_t)i, 1);

		if (i < sizeof(fixed) / sizeof(fixed[0])) {
			addr(r.dst, fixed[i]);
		} else {
			for (int w = 0; w < 8; w++) {
				unsigned int v;

				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				v = (unsigned int)(rng >> 20);
				v = (v % 6 < 3)	 ? 0
				    : v % 6 == 3 ? 0xffff
				    : v % 6 == 4 ? (v >> 8) % 16
						 : v >> 16 & 0xffff;
				r.dst[2 * w] = (uint8_t)(v >> 8);
				r.dst[2 * w + 1] = (uint8_t)v;
			}
			r.dst_len = (uint8_t)(i % 5 ? 128 : rng % 129);
		}
		assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
	}
	assert_int_equal(snapshot_finish(s), 0);
	for (size_t i = 0; i < s->nroutes; i++) {
		const struct route *r = snapshot_route(s, i);
		char want[128], txt[INET6_ADDRSTRLEN];
		struct strbuf sb = { 0 };

		if (r->placeholder)
			continue;
		inet_ntop(AF_INET6, r->dst, txt, sizeof(txt));
		if (r->dst_len == 0)
			snprintf(want, sizeof(want), "{\"dst\":\"default\"");
		else if (r->dst_len == 128)
			snprintf(want, sizeof(want), "{\"dst\":\"%s\"", txt);
		else
			snprintf(want, sizeof(want), "{\"dst\":\"%s/%u\"", txt, r->dst_len);
		query_render_route(s, i, T0, &sb);
		strbuf_putc(&sb, 0);
		if (strncmp(sb.buf, want, strlen(want)))
			fail_msg("rendered %s, inet_ntop says %s", sb.buf, want);
		strbuf_free(&sb);
		n++;
	}
	assert_true(n >= 3000);
	snapshot_free(s);
}

static int setup(void **state)
{
	(void)state;
	return names_load("/nonexistent", &s_names);
}

static int teardown(void **state)
{
	(void)state;
	names_free(s_names);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),    cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_cursor_codec),  cmocka_unit_test(test_filters),
		cmocka_unit_test(test_paging),	      cmocka_unit_test(test_expires_now),
		cmocka_unit_test(test_expiring_view), cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_addr_format),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
