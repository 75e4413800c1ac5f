// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_render_metrics - the Prometheus exposition: per-snapshot counts from records built by
 * hand, the capped per-route series, the per-scrape expiry values from the expiring index, the
 * cumulative histogram, label escaping, the structure of the whole text (every family once,
 * HELP and TYPE before its samples, no duplicate series), and the gzip body (the snapshot's
 * pre-compressed bytes + the per-scrape continuation must inflate to exactly the plain body),
 * and /metrics of an IPv6 and an IPv4 instance together (route series and per-scrape samples).
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/names.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/route4.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

#define NOW_MS 1000000 /* CLOCK_MONOTONIC ms the hand-made snapshots pretend to be taken at */

static char s_names_dir[64];

static struct route mkroute(uint32_t table, const char *dst, unsigned int plen, uint8_t proto,
			    uint8_t type, uint32_t ifindex, const char *gw, uint32_t metric)
{
	struct route r = { 0 };

	assert_int_equal(inet_pton(AF_INET6, dst, r.dst), 1);
	r.dst_len = (uint8_t)plen;
	r.table = table;
	r.protocol = proto;
	r.type = type;
	r.metric = metric;
	r.pref = ROUTE_PREF_NONE;
	r.nh_count = 1;
	r.nh.ifindex = ifindex;
	r.nh.weight = 1;
	if (gw) {
		assert_int_equal(inet_pton(AF_INET6, gw, r.nh.gw), 1);
		r.nh.has_gw = 1;
	}
	return r;
}

static void add(struct snapshot *s, struct route r)
{
	assert_int_equal(snapshot_add_route(s, &r, NULL, 0, NULL), 0);
}

/*
 * Table 100 ("custom" in the names directory): a 3-nexthop bgp multipath route and an
 * expiring static route. Main: 2 static gateway routes (one expiring soon, one already past
 * its deadline), a kernel device route on a device named with a quote and a backslash, a
 * static blackhole on lo, a host route, a source-specific route, a route on an ifindex the
 * link dump did not list. Local: one kernel local route.
 */
static struct snapshot *make(void)
{
	struct snapshot *s = NULL;
	struct route_link l1 = { .ifindex = 1, .name = "lo" };
	struct route_link l2 = { .ifindex = 2, .name = "eth0" };
	struct route_link l3 = { .ifindex = 3, .name = "we\"ird\\" };
	struct route_link l4 = { .ifindex = 4, .name = "unused0" };
	struct route_nh nhs[3] = { 0 };
	struct route r;

	assert_int_equal(snapshot_new(NULL, &s), 0);
	s->taken_mono_ms = NOW_MS;
	s->taken_at.tv_sec = 1700000000;
	s->taken_at.tv_nsec = 250000000;
	assert_int_equal(snapshot_add_link(s, &l3), 0);
	assert_int_equal(snapshot_add_link(s, &l1), 0);
	assert_int_equal(snapshot_add_link(s, &l2), 0);
	assert_int_equal(snapshot_add_link(s, &l4), 0);

	r = mkroute(100, "2001:db8:100::", 48, RTPROT_BGP, RTN_UNICAST, 0, NULL, 20);
	r.nh_count = 3;
	for (int i = 0; i < 3; i++) {
		nhs[i].ifindex = i == 2 ? 3 : 2;
		nhs[i].has_gw = 1;
		nhs[i].weight = 1;
		assert_int_equal(inet_pton(AF_INET6, i ? "fe80::2" : "fe80::1", nhs[i].gw), 1);
		nhs[i].gw[15] += (uint8_t)(i * 16);
	}
	assert_int_equal(snapshot_add_route(s, &r, nhs, 3, NULL), 0);
	r = mkroute(100, "2001:db8:101::", 64, RTPROT_STATIC, RTN_UNICAST, 2, "fe80::9", 1024);
	r.expires_ms = NOW_MS + 600000;
	add(s, r);

	r = mkroute(RT_TABLE_MAIN, "2001:db8:1::", 64, RTPROT_STATIC, RTN_UNICAST, 2, "fe80::1",
		    1024);
	r.expires_ms = NOW_MS + 30000;
	add(s, r);
	r = mkroute(RT_TABLE_MAIN, "2001:db8:2::", 64, RTPROT_STATIC, RTN_UNICAST, 2, "fe80::1",
		    1024);
	r.expires_ms = NOW_MS - 5000; /* the kernel has not collected it yet */
	add(s, r);
	add(s,
	    mkroute(RT_TABLE_MAIN, "2001:db8:3::", 64, RTPROT_KERNEL, RTN_UNICAST, 3, NULL, 256));
	add(s, mkroute(RT_TABLE_MAIN, "2001:db8:4::", 64, RTPROT_STATIC, RTN_BLACKHOLE, 1, NULL,
		       1024));
	add(s,
	    mkroute(RT_TABLE_MAIN, "2001:db8:5::7", 128, RTPROT_BOOT, RTN_UNICAST, 2, NULL, 1024));
	r = mkroute(RT_TABLE_MAIN, "2001:db8:6::", 64, RTPROT_BOOT, RTN_UNICAST, 2, NULL, 1024);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:77::", r.src), 1);
	r.src_len = 48;
	add(s, r);
	add(s, mkroute(RT_TABLE_MAIN, "2001:db8:8::", 64, RTPROT_BOOT, RTN_UNICAST, 9, NULL, 1024));

	add(s, mkroute(RT_TABLE_LOCAL, "2001:db8:1::1", 128, RTPROT_KERNEL, RTN_LOCAL, 2, NULL, 0));
	assert_int_equal(names_load(s_names_dir, &s->ctx.names), 0);
	assert_int_equal(snapshot_finish(s), 0);
	s->generation = 42; /* snapshot_publish() would assign it */
	return s;
}

static char *text_of(const struct snapshot *s)
{
	size_t len;
	const char *t = render_metrics_snapshot_text(s, &len);
	char *c = malloc(len + 1);

	assert_non_null(c);
	memcpy(c, t, len);
	c[len] = 0;
	return c;
}

/* The value of the sample line that starts with "series " (exact series), or -1. */
static double value_of(const char *text, const char *series)
{
	size_t l = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, series, l) == 0 && p[l] == ' ')
			return strtod(p + l + 1, NULL);
	}
	return -1;
}

static int count_prefix(const char *text, const char *prefix)
{
	int n = 0;
	size_t l = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += strncmp(p, prefix, l) == 0;
	return n;
}

/*
 * Structure of an exposition: every family has HELP then TYPE before its samples, appears in
 * one block, is declared once; sample names belong to the family (histogram suffixes
 * allowed); no two samples have the same name and labels; values parse as numbers.
 */
static void check_structure(const char *text)
{
	char fam[128] = "", type[16] = "", seen[8192] = " ";
	char **series = NULL;
	size_t nseries = 0;
	int have_help = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		char line[4096];
		size_t l;

		assert_non_null(nl); /* every line ends with \n */
		l = (size_t)(nl - p);
		assert_true(l < sizeof(line));
		memcpy(line, p, l);
		line[l] = 0;
		p = nl + 1;
		if (strncmp(line, "# HELP ", 7) == 0) {
			char key[140];

			assert_int_equal(sscanf(line + 7, "%127s", fam), 1);
			snprintf(key, sizeof(key), " %s ", fam);
			assert_null(strstr(seen, key)); /* declared once */
			assert_true(strlen(seen) + strlen(key) < sizeof(seen));
			strcat(seen, key + 1);
			have_help = 1;
			type[0] = 0;
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			char name[128];

			assert_true(have_help);
			assert_int_equal(sscanf(line + 7, "%127s %15s", name, type), 2);
			assert_string_equal(name, fam);
			assert_true(!strcmp(type, "gauge") || !strcmp(type, "counter") ||
				    !strcmp(type, "histogram"));
			if (!strcmp(type, "counter"))
				assert_non_null(strstr(fam, "_total"));
		} else {
			size_t nl2 = strcspn(line, "{ ");
			const char *sp = strrchr(line, ' ');
			char *end;

			assert_true(type[0]);
			assert_true(nl2 >= strlen(fam) && strncmp(line, fam, strlen(fam)) == 0);
			if (nl2 > strlen(fam)) {
				const char *suf = line + strlen(fam);

				assert_string_equal(type, "histogram");
				assert_true(!strncmp(suf, "_bucket", 7) ||
					    !strncmp(suf, "_sum", 4) || !strncmp(suf, "_count", 6));
			}
			assert_non_null(sp);
			strtod(sp + 1, &end);
			assert_true(*end == 0 && end != sp + 1);
			for (size_t i = 0; i < nseries; i++)
				assert_true(strncmp(series[i], line, (size_t)(sp - line)) != 0 ||
					    series[i][sp - line] != 0);
			series = realloc(series, (nseries + 1) * sizeof(*series));
			assert_non_null(series);
			series[nseries] = strndup(line, (size_t)(sp - line));
			assert_non_null(series[nseries]);
			nseries++;
		}
	}
	for (size_t i = 0; i < nseries; i++)
		free(series[i]);
	free(series);
}

static void test_route_counts(void **state)
{
	struct snapshot *s = make();
	char *t = text_of(s);

	(void)state;
	assert_true(value_of(t, "rtsnap_build_info{version=\"" RTSNAP_VERSION "\"}") == 1);
	/* the snapshot's time is rendered per scrape (the collector stamps it after the build) */
	assert_true(value_of(t, "rtsnap_snapshot_timestamp_seconds") == -1);
	/* counts by table, protocol and type; a multipath route once */
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"custom\",protocol=\"bgp\",type=\"unicast\"}") ==
	    1);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"custom\",protocol=\"static\",type=\"unicast\"}") ==
	    1);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"main\",protocol=\"static\",type=\"unicast\"}") ==
	    2);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"main\",protocol=\"static\",type=\"blackhole\"}") ==
	    1);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"main\",protocol=\"kernel\",type=\"unicast\"}") ==
	    1);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"main\",protocol=\"boot\",type=\"unicast\"}") ==
	    3);
	assert_true(
	    value_of(
		t,
		"rtsnap_routes{family=\"inet6\",table=\"local\",protocol=\"kernel\",type=\"local\"}") ==
	    1);
	/* the placeholder rows (main and custom have no ::/0) are not routes */
	assert_int_equal(count_prefix(t, "rtsnap_routes{"), 7);
	assert_int_equal(count_prefix(t, "rtsnap_routes{family=\"inet6\",table=\"main\""), 4);
	/* multipath */
	assert_true(value_of(t, "rtsnap_multipath_routes{family=\"inet6\",table=\"custom\"}") == 1);
	assert_true(value_of(t, "rtsnap_multipath_nexthops{family=\"inet6\",table=\"custom\"}") ==
		    3);
	assert_true(value_of(t, "rtsnap_multipath_routes{family=\"inet6\",table=\"main\"}") == 0);
	assert_true(value_of(t, "rtsnap_multipath_nexthops{family=\"inet6\",table=\"local\"}") ==
		    0);
	/* devices: the multipath route once on eth0 although two nexthops use it */
	assert_true(value_of(t, "rtsnap_device_routes{family=\"inet6\",device=\"eth0\"}") == 7);
	assert_true(
	    value_of(t, "rtsnap_device_routes{family=\"inet6\",device=\"we\\\"ird\\\\\"}") == 2);
	assert_true(value_of(t, "rtsnap_device_routes{family=\"inet6\",device=\"lo\"}") == 1);
	assert_true(value_of(t, "rtsnap_device_routes{family=\"inet6\",device=\"if9\"}") == 1);
	assert_int_equal(
	    count_prefix(t, "rtsnap_device_routes{family=\"inet6\",device=\"unused0\"}"), 0);
	assert_true(value_of(t, "rtsnap_device_routes_omitted{family=\"inet6\"}") == 0);
	/* expiring by table, every table listed */
	assert_true(value_of(t, "rtsnap_routes_expiring{family=\"inet6\",table=\"custom\"}") == 1);
	assert_true(value_of(t, "rtsnap_routes_expiring{family=\"inet6\",table=\"main\"}") == 2);
	assert_true(value_of(t, "rtsnap_routes_expiring{family=\"inet6\",table=\"local\"}") == 0);
	/* per-route series are off by default */
	assert_int_equal(count_prefix(t, "rtsnap_route_info"), 0);
	check_structure(t);
	free(t);
	snapshot_free(s);
}

static void test_route_info(void **state)
{
	struct snapshot *s;
	char *t;

	(void)state;
	render_metrics_set_routes(1);
	render_metrics_set_route_limit(1000);
	s = make();
	t = text_of(s);
	/* 10 routes, the multipath one as 3 series */
	assert_int_equal(count_prefix(t, "rtsnap_route_info{"), 12);
	assert_true(value_of(t, "rtsnap_route_info_omitted_routes{family=\"inet6\"}") == 0);
	assert_true(
	    value_of(t, "rtsnap_route_info{family=\"inet6\",table=\"main\",dst=\"2001:db8:1::/64\","
			"gateway=\"fe80::1\",dev=\"eth0\",protocol=\"static\","
			"type=\"unicast\",metric=\"1024\"}") == 1);
	assert_true(
	    value_of(t, "rtsnap_route_info{family=\"inet6\",table=\"main\",dst=\"2001:db8:5::7\","
			"gateway=\"\",dev=\"eth0\",protocol=\"boot\",type=\"unicast\","
			"metric=\"1024\"}") == 1);
	assert_true(
	    value_of(t, "rtsnap_route_info{family=\"inet6\",table=\"main\",dst=\"2001:db8:6::/64\","
			"src=\"2001:db8:77::/48\",gateway=\"\",dev=\"eth0\","
			"protocol=\"boot\",type=\"unicast\",metric=\"1024\"}") == 1);
	assert_true(
	    value_of(
		t, "rtsnap_route_info{family=\"inet6\",table=\"custom\",dst=\"2001:db8:100::/48\","
		   "gateway=\"fe80::12\",dev=\"eth0\",protocol=\"bgp\","
		   "type=\"unicast\",metric=\"20\"}") == 1);
	assert_true(
	    value_of(
		t, "rtsnap_route_info{family=\"inet6\",table=\"custom\",dst=\"2001:db8:100::/48\","
		   "gateway=\"fe80::22\",dev=\"we\\\"ird\\\\\",protocol=\"bgp\","
		   "type=\"unicast\",metric=\"20\"}") == 1);
	check_structure(t);
	free(t);
	snapshot_free(s);

	/* capped: the first routes in kernel order (custom's multipath route first, whole) */
	render_metrics_set_route_limit(2);
	s = make();
	t = text_of(s);
	assert_int_equal(count_prefix(t, "rtsnap_route_info{"), 4);
	assert_int_equal(count_prefix(t, "rtsnap_route_info{family=\"inet6\",table=\"custom\""), 4);
	assert_true(value_of(t, "rtsnap_route_info_omitted_routes{family=\"inet6\"}") == 8);
	check_structure(t);
	free(t);
	snapshot_free(s);

	render_metrics_set_route_limit(0);
	s = make();
	t = text_of(s);
	assert_int_equal(count_prefix(t, "rtsnap_route_info{"), 0);
	assert_true(value_of(t, "rtsnap_route_info_omitted_routes{family=\"inet6\"}") == 10);
	free(t);
	snapshot_free(s);
	render_metrics_set_routes(0);
	render_metrics_set_route_limit(RENDER_METRICS_ROUTE_LIMIT_DEFAULT);
}

/* The counters of the instance the test's snapshots stand for. */
static struct collector_stats s_st;

static char *scrape(const struct snapshot *s, int64_t now)
{
	struct strbuf sb = { 0 };

	render_metrics_scrape(s, &s_st, now, &sb);
	strbuf_putc(&sb, 0);
	assert_false(sb.failed);
	return strbuf_detach(&sb, NULL);
}

static void test_scrape_expiry(void **state)
{
	struct snapshot *s = make();
	char *t;

	(void)state;
	/* at the snapshot's time: one route 5 s overdue, the next deadline 30 s ahead */
	t = scrape(s, NOW_MS + 1500);
	assert_true(value_of(t, "rtsnap_snapshot_generation") == 42);
	assert_true(value_of(t, "rtsnap_snapshot_timestamp_seconds") == 1700000000.25);
	assert_true(value_of(t, "rtsnap_snapshot_age_seconds") == 1.5);
	assert_true(value_of(t, "rtsnap_routes_past_deadline") == 1);
	assert_true(value_of(t, "rtsnap_routes_next_expiry_seconds") == 28.5);
	check_structure(t);
	free(t);
	/* later: the 30 s route is overdue too; the 600 s one is next */
	t = scrape(s, NOW_MS + 30000);
	assert_true(value_of(t, "rtsnap_routes_past_deadline") == 2);
	assert_true(value_of(t, "rtsnap_routes_next_expiry_seconds") == 570);
	free(t);
	/* after every deadline: no next-expiry sample, the family is still declared */
	t = scrape(s, NOW_MS + 700000);
	assert_true(value_of(t, "rtsnap_routes_past_deadline") == 3);
	assert_int_equal(count_prefix(t, "rtsnap_routes_next_expiry_seconds "), 0);
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_routes_next_expiry_seconds gauge"), 1);
	check_structure(t);
	free(t);
	snapshot_free(s);
}

static void test_histogram_and_counters(void **state)
{
	struct snapshot *s = make();
	char *t, key[256];
	uint64_t acc = 0;
	json_t *top, *coll;

	(void)state;
	memset(&s_st, 0, sizeof(s_st));
	/* non-cumulative buckets: 0.0005 s x2, 0.3 s x1, 20 s (+Inf only) x1 */
	stats_observe_duration(&s_st, 0.0005);
	stats_observe_duration(&s_st, 0.0005);
	stats_observe_duration(&s_st, 0.3);
	stats_observe_duration(&s_st, 20);
	s_st.collections[TRIGGER_CHANGE] = 7;
	s_st.errors[CERR_RECV] = 3;
	s_st.last_added = 11;
	s_st.last_removed = 4;
	s_st.notify_applied[NOTIFY_LINK] = 5;
	s_st.mirror_routes = 1234;
	t = scrape(s, NOW_MS);
	for (unsigned int i = 0; i < STATS_DURATION_BUCKETS; i++) {
		acc += s_st.duration_bucket[i];
		snprintf(key, sizeof(key), "rtsnap_collection_duration_seconds_bucket{le=\"%g\"}",
			 stats_duration_bounds[i]);
		assert_true(value_of(t, key) == (double)acc);
	}
	assert_true(value_of(t, "rtsnap_collection_duration_seconds_bucket{le=\"0.001\"}") == 2);
	assert_true(value_of(t, "rtsnap_collection_duration_seconds_bucket{le=\"+Inf\"}") ==
		    (double)s_st.duration_count);
	assert_true(value_of(t, "rtsnap_collection_duration_seconds_count") ==
		    (double)s_st.duration_count);
	assert_true(value_of(t, "rtsnap_collection_duration_seconds_bucket{le=\"10\"}") ==
		    (double)s_st.duration_count - 1);
	assert_true(value_of(t, "rtsnap_collections_total{trigger=\"change\"}") == 7);
	assert_true(value_of(t, "rtsnap_collection_errors_total{reason=\"recv\"}") == 3);
	assert_true(value_of(t, "rtsnap_snapshot_routes_changed{change=\"added\"}") == 11);
	assert_true(value_of(t, "rtsnap_snapshot_routes_changed{change=\"removed\"}") == 4);
	assert_true(value_of(t, "rtsnap_notifications_applied_total{kind=\"link\"}") == 5);
	assert_true(value_of(t, "rtsnap_mirror_routes") == 1234);
	/* every counter of the table, in /metrics and in /status, from the one description */
	top = json_object();
	coll = json_object();
	stats_status_json(&s_st, top, coll);
	for (size_t k = 0; k < stats_table_len; k++) {
		const struct stats_desc *d = &stats_table[k];
		json_t *v = json_object_get(d->in_collector ? coll : top, d->status);

		snprintf(key, sizeof(key), "# HELP %s %s\n# TYPE %s %s\n", d->metric, d->help,
			 d->metric, d->type);
		assert_non_null(strstr(t, key));
		assert_non_null(v);
		for (int i = 0; i < d->n; i++) {
			json_t *x = d->label ? json_object_get(v, d->label_value(i)) : v;

			if (d->label)
				snprintf(key, sizeof(key), "%s{%s=\"%s\"}", d->metric, d->label,
					 d->label_value(i));
			else
				snprintf(key, sizeof(key), "%s", d->metric);
			assert_true(value_of(t, key) == (double)stats_value(&s_st, d, i));
			assert_int_equal(json_integer_value(x),
					 (json_int_t)stats_value(&s_st, d, i));
		}
	}
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(coll, "notifications_applied"), "link")),
			 5);
	json_decref(top);
	json_decref(coll);
	check_structure(t);
	free(t);
	memset(&s_st, 0, sizeof(s_st));
	snapshot_free(s);
}

static void test_label_escape(void **state)
{
	struct strbuf sb = { 0 };

	(void)state;
	render_metrics_label(&sb, "a\"b\\c\nd");
	render_metrics_label(&sb, "|\xc3\xa9|\xe2\x82\xac|\xf0\x9f\x98\x80|"); /* é € 😀 */
	render_metrics_label(&sb, "|\xff|\xc3|\xc0\xaf|\xed\xa0\x80|");	       /* invalid */
	strbuf_putc(&sb, 0);
	assert_false(sb.failed);
	assert_string_equal(sb.buf, "a\\\"b\\\\c\\nd"
				    "|\xc3\xa9|\xe2\x82\xac|\xf0\x9f\x98\x80|"
				    "|?|?|??|???|");
	strbuf_free(&sb);
}

static void test_process(void **state)
{
	struct strbuf sb = { 0 };
	double start, fds;

	(void)state;
	render_metrics_process(&sb);
	strbuf_putc(&sb, 0);
	check_structure(sb.buf);
	start = value_of(sb.buf, "process_start_time_seconds");
	fds = value_of(sb.buf, "process_open_fds");
	assert_true(start > (double)time(NULL) - 3600 && start <= (double)time(NULL) + 1);
	assert_true(fds >= 3 && fds < 1000);
	assert_true(value_of(sb.buf, "process_resident_memory_bytes") > 100000);
	assert_true(value_of(sb.buf, "process_cpu_seconds_total") >= 0);
	strbuf_free(&sb);
}

/* Inflate a gzip stream (one member, checked CRC and length) into a malloc()ed string. */
static char *gunzip(const unsigned char *in, size_t len, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = 1 << 16;
	char *out = malloc(cap + 1);
	int ret;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (unsigned int)len;
	do {
		if (z.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap + 1);
			assert_non_null(out);
		}
		z.next_out = (unsigned char *)out + z.total_out;
		z.avail_out = (unsigned int)(cap - z.total_out);
		ret = inflate(&z, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
	} while (ret != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* nothing after the member */
	*outlen = z.total_out;
	out[*outlen] = 0;
	inflateEnd(&z);
	return out;
}

/* The plain and gzip bodies of one scrape of s; the gzip one must inflate to the plain one. */
static void check_bodies(const struct snapshot *s)
{
	struct render_seg *segs = NULL;
	struct strbuf plain = { 0 }, dyn = { 0 }, gz = { 0 };
	char *inflated;
	size_t len;
	int n;

	render_metrics_scrape(s, &s_st, NOW_MS, &dyn);
	render_metrics_process(&dyn);
	strbuf_append(&gz, dyn.buf, dyn.len); /* the same per-scrape text for both */
	n = render_metrics_body(s, NULL, &dyn, 0, &segs);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		if (segs[i].len) /* strbuf_append() of 0 bytes to an empty strbuf is memcpy(NULL) */
			strbuf_append(&plain, segs[i].p, segs[i].len);
	free(segs);
	strbuf_free(&dyn);
	dyn = gz;
	memset(&gz, 0, sizeof(gz));
	n = render_metrics_body(s, NULL, &dyn, 1, &segs);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		if (segs[i].len)
			strbuf_append(&gz, segs[i].p, segs[i].len);
	free(segs);
	assert_false(plain.failed || gz.failed);
	assert_true(gz.len > 18 && (unsigned char)gz.buf[0] == 0x1f &&
		    (unsigned char)gz.buf[1] == 0x8b);
	inflated = gunzip((unsigned char *)gz.buf, gz.len, &len);
	assert_int_equal(len, plain.len);
	assert_memory_equal(inflated, plain.buf, len);
	free(inflated);
	strbuf_free(&plain);
	strbuf_free(&gz);
	strbuf_free(&dyn);
}

static void test_gzip_body(void **state)
{
	struct snapshot *s = make(), *big = NULL;
	struct metrics_view *v;

	(void)state;
	assert_null(s->views.metrics); /* a publication does not build it: the first scrape does */
	check_bodies(s);
	v = s->views.metrics;
	assert_non_null(v);
	check_bodies(s); /* the pre-compressed part is reused, unchanged */
	assert_ptr_equal(s->views.metrics, v);
	snapshot_free(s);

	/* more than 1 MiB of per-snapshot text (the fast level, several deflate rounds) */
	render_metrics_set_routes(1);
	render_metrics_set_route_limit(100000);
	assert_int_equal(snapshot_new(NULL, &big), 0);
	for (unsigned int i = 0; i < 20000; i++) {
		struct route r = mkroute(RT_TABLE_MAIN, "2001:db8::", 64, RTPROT_STATIC,
					 RTN_UNICAST, 2, "fe80::1", i);

		r.dst[4] = (uint8_t)(i >> 8);
		r.dst[5] = (uint8_t)i;
		add(big, r);
	}
	assert_int_equal(snapshot_finish(big), 0);
	{
		size_t len;

		render_metrics_snapshot_text(big, &len);
		assert_true(len > (1u << 20));
	}
	check_bodies(big);
	snapshot_free(big);
	render_metrics_set_routes(0);
	render_metrics_set_route_limit(RENDER_METRICS_ROUTE_LIMIT_DEFAULT);
}

/* An IPv4 record as route4.h holds it: the address in bytes 0..3. */
static struct route mkroute4(const char *dst, unsigned int plen, uint8_t proto, uint32_t ifindex,
			     const char *gw, int gw6)
{
	struct route r = { 0 };

	assert_int_equal(inet_pton(AF_INET, dst, r.dst), 1);
	r.family = AF_INET;
	r.dst_len = (uint8_t)plen;
	r.table = RT_TABLE_MAIN;
	r.protocol = proto;
	r.type = RTN_UNICAST;
	r.pref = ROUTE_PREF_NONE;
	r.nh_count = 1;
	r.nh.ifindex = ifindex;
	r.nh.weight = 1;
	if (gw) {
		assert_int_equal(inet_pton(gw6 ? AF_INET6 : AF_INET, gw, r.nh.gw), 1);
		r.nh.has_gw = gw6 ? ROUTE_GW_VIA6 : 1;
	}
	return r;
}

/*
 * /metrics of two instances: each per-snapshot family once (HELP and TYPE once, the IPv6
 * series then the IPv4 ones, told apart by the family label), one build info, the IPv4
 * per-route series in IPv4 notation, and a gzip body that inflates to the plain one.
 */
static void test_two_families(void **state)
{
	struct route_link l2 = { .ifindex = 2, .name = "eth0" };
	struct snapshot *s6, *s4 = NULL;
	struct render_seg *segs = NULL;
	struct strbuf plain = { 0 }, dyn = { 0 }, gz = { 0 };
	const char *t;
	char *inflated;
	size_t len;
	int n;

	(void)state;
	render_metrics_set_routes(1);
	s6 = make();
	assert_int_equal(snapshot_new(NULL, &s4), 0);
	snapshot_set_family(s4, AF_INET, 1);
	assert_int_equal(snapshot_add_link(s4, &l2), 0);
	add(s4, mkroute4("10.0.0.0", 8, RTPROT_STATIC, 2, "10.1.2.3", 0));
	add(s4, mkroute4("192.0.2.1", 32, RTPROT_BOOT, 2, "fe80::1", 1));
	add(s4, mkroute4("0.0.0.0", 0, RTPROT_STATIC, 2, "10.1.2.1", 0));
	assert_int_equal(names_load(s_names_dir, &s4->ctx.names), 0);
	assert_int_equal(snapshot_finish(s4), 0);

	render_metrics_scrape(s6, &s_st, NOW_MS, &dyn);
	strbuf_append(&gz, dyn.buf, dyn.len);
	n = render_metrics_body(s6, s4, &dyn, 0, &segs);
	assert_true(n > 2);
	for (int i = 0; i < n; i++)
		if (segs[i].len)
			strbuf_append(&plain, segs[i].p, segs[i].len);
	free(segs);
	strbuf_putc(&plain, '\0');
	t = plain.buf;
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_routes "), 1);
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_route_info "), 1);
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_device_routes_omitted "), 1);
	assert_int_equal(count_prefix(t, "rtsnap_build_info{"), 1);
	assert_int_equal(count_prefix(t, "rtsnap_routes{family=\"inet6\""), 7);
	assert_int_equal(count_prefix(t, "rtsnap_routes{family=\"inet\""), 2);
	assert_true(value_of(t, "rtsnap_routes{family=\"inet\",table=\"main\",protocol=\"static\","
				"type=\"unicast\"}") == 2);
	assert_true(value_of(t, "rtsnap_device_routes{family=\"inet\",device=\"eth0\"}") == 3);
	assert_true(value_of(t, "rtsnap_device_routes_omitted{family=\"inet\"}") == 0);
	assert_true(value_of(t,
			     "rtsnap_route_info{family=\"inet\",table=\"main\",dst=\"10.0.0.0/8\","
			     "gateway=\"10.1.2.3\",dev=\"eth0\",protocol=\"static\","
			     "type=\"unicast\",metric=\"0\"}") == 1);
	assert_true(value_of(t,
			     "rtsnap_route_info{family=\"inet\",table=\"main\",dst=\"192.0.2.1\","
			     "gateway=\"fe80::1\",dev=\"eth0\",protocol=\"boot\","
			     "type=\"unicast\",metric=\"0\"}") == 1);
	assert_true(value_of(t, "rtsnap_route_info{family=\"inet\",table=\"main\",dst=\"default\","
				"gateway=\"10.1.2.1\",dev=\"eth0\",protocol=\"static\","
				"type=\"unicast\",metric=\"0\"}") == 1);
	/* the IPv6 series of each family come before the IPv4 ones, after one HELP */
	assert_true(strstr(t, "rtsnap_routes{family=\"inet6\"") <
		    strstr(t, "rtsnap_routes{family=\"inet\""));
	assert_true(strstr(t, "rtsnap_routes{family=\"inet\"") <
		    strstr(t, "# HELP rtsnap_multipath_routes "));
	plain.len--; /* the NUL */

	strbuf_free(&dyn);
	dyn = gz;
	memset(&gz, 0, sizeof(gz));
	n = render_metrics_body(s6, s4, &dyn, 1, &segs);
	assert_int_equal(n, 1);
	strbuf_append(&gz, segs[0].p, segs[0].len);
	free(segs);
	inflated = gunzip((unsigned char *)gz.buf, gz.len, &len);
	assert_int_equal(len, plain.len);
	assert_memory_equal(inflated, plain.buf, len);
	free(inflated);
	strbuf_free(&plain);
	strbuf_free(&gz);
	strbuf_free(&dyn);

	/* the per-scrape part of both: the IPv6 samples unlabelled, the IPv4 ones family="inet" */
	{
		static struct collector_stats st4;
		struct strbuf sb = { 0 };

		memset(&s_st, 0, sizeof(s_st));
		memset(&st4, 0, sizeof(st4));
		s_st.collections[TRIGGER_CHANGE] = 7;
		st4.collections[TRIGGER_CHANGE] = 3;
		st4.last_added = 2;
		stats_observe_duration(&st4, 0.0005);
		s4->generation = 9;
		render_metrics_scrape2(s6, &s_st, s4, &st4, NOW_MS, &sb);
		strbuf_putc(&sb, '\0');
		t = sb.buf;
		assert_int_equal(count_prefix(t, "# TYPE rtsnap_snapshot_generation "), 1);
		assert_int_equal(count_prefix(t, "# TYPE rtsnap_collections_total "), 1);
		assert_int_equal(count_prefix(t, "# TYPE rtsnap_fault "), 1);
		assert_true(value_of(t, "rtsnap_snapshot_generation") == 42);
		assert_true(value_of(t, "rtsnap_snapshot_generation{family=\"inet\"}") == 9);
		assert_true(value_of(t, "rtsnap_collections_total{trigger=\"change\"}") == 7);
		assert_true(
		    value_of(t, "rtsnap_collections_total{family=\"inet\",trigger=\"change\"}") ==
		    3);
		assert_true(
		    value_of(t,
			     "rtsnap_snapshot_routes_changed{family=\"inet\",change=\"added\"}") ==
		    2);
		assert_true(value_of(t, "rtsnap_snapshot_fresh{family=\"inet\"}") == 0);
		assert_true(value_of(t, "rtsnap_fault{family=\"inet\",kind=\"proc_file\"}") == 0);
		assert_true(value_of(t, "rtsnap_collection_duration_seconds_bucket{family=\"inet\","
					"le=\"+Inf\"}") == 1);
		assert_true(
		    value_of(t, "rtsnap_collection_duration_seconds_count{family=\"inet\"}") == 1);
		assert_true(value_of(t, "rtsnap_collection_duration_seconds_count") == 0);
		/* IPv4 not published yet: its counters and freshness, no generation */
		sb.len = 0;
		render_metrics_scrape2(s6, &s_st, NULL, &st4, NOW_MS, &sb);
		strbuf_putc(&sb, '\0');
		t = sb.buf;
		assert_int_equal(count_prefix(t, "rtsnap_snapshot_generation{"), 0);
		assert_true(value_of(t, "rtsnap_snapshot_fresh{family=\"inet\"}") == 0);
		assert_true(
		    value_of(t, "rtsnap_collections_total{family=\"inet\",trigger=\"change\"}") ==
		    3);
		strbuf_free(&sb);
		memset(&s_st, 0, sizeof(s_st));
	}
	snapshot_free(s6);
	snapshot_free(s4);
	render_metrics_set_routes(0);
}

static int setup(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	snprintf(s_names_dir, sizeof(s_names_dir), "/tmp/test_render_metrics.XXXXXX");
	if (!mkdtemp(s_names_dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rt_tables", s_names_dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("# test\n100\tcustom\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/rt_tables", s_names_dir);
	unlink(path);
	rmdir(s_names_dir);
	return 0;
}

/*
 * A named namespace's instance (--netns) beside the own one: its series labelled
 * netns="NAME" (escaped) after family, per snapshot and per scrape, each family once; the own
 * one's bytes as without it; plain and gzip the same.
 */
static void test_netns_label(void **state)
{
	static struct collector_stats st2;
	struct snapshot *own = make(), *named = make();
	const struct render_metrics_inst in[2] = { { own, &s_st, NULL, NULL },
						   { named, &st2, NULL, "b\"l\\u\ne" } };
	struct render_seg *segs = NULL;
	struct strbuf a = { 0 }, b = { 0 }, dyn = { 0 }, copy = { 0 };
	const char *t;
	char *inflated;
	size_t len;
	int n;

	(void)state;
	memset(&st2, 0, sizeof(st2));
	/* the own instance alone: scrape_n writes what scrape writes */
	render_metrics_scrape(own, &s_st, NOW_MS, &a);
	render_metrics_scrape_n(in, 1, NOW_MS, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	strbuf_free(&a);
	strbuf_free(&b);

	render_metrics_scrape_n(in, 2, NOW_MS, &dyn);
	strbuf_append(&copy, dyn.buf, dyn.len);
	n = render_metrics_body_n(in, 2, &dyn, 0, &segs);
	assert_int_equal(n, 1);
	strbuf_append(&a, segs[0].p, segs[0].len);
	free(segs);
	strbuf_putc(&a, '\0');
	t = a.buf;
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_routes "), 1);
	assert_int_equal(count_prefix(t, "# TYPE rtsnap_snapshot_fresh "), 1);
	assert_int_equal(count_prefix(t, "rtsnap_build_info{"), 1);
	assert_int_equal(count_prefix(t, "rtsnap_routes{family=\"inet6\",table="),
			 count_prefix(t, "rtsnap_routes{family=\"inet6\",netns=\"b\\\"l\\\\u\\ne\","
					 "table="));
	assert_true(count_prefix(t, "rtsnap_routes{family=\"inet6\",table=") > 0);
	assert_true(value_of(t, "rtsnap_device_routes_omitted{family=\"inet6\","
				"netns=\"b\\\"l\\\\u\\ne\"}") == 0);
	assert_true(value_of(t, "rtsnap_snapshot_fresh{netns=\"b\\\"l\\\\u\\ne\"}") == 0);
	assert_true(
	    value_of(t, "rtsnap_collection_duration_seconds_count{netns=\"b\\\"l\\\\u\\ne\"}") ==
	    0);
	assert_true(value_of(t,
			     "rtsnap_collection_duration_seconds_bucket{netns=\"b\\\"l\\\\u\\ne\","
			     "le=\"+Inf\"}") == 0);
	/* the own series first in each family */
	assert_true(strstr(t, "rtsnap_routes{family=\"inet6\",table=") <
		    strstr(t, "rtsnap_routes{family=\"inet6\",netns="));
	a.len--; /* the NUL */

	strbuf_free(&dyn);
	dyn = copy;
	n = render_metrics_body_n(in, 2, &dyn, 1, &segs);
	assert_int_equal(n, 1);
	inflated = gunzip((const unsigned char *)segs[0].p, segs[0].len, &len);
	free(segs);
	assert_int_equal(len, a.len);
	assert_memory_equal(inflated, a.buf, len);
	free(inflated);
	strbuf_free(&a);
	strbuf_free(&dyn);
	snapshot_free(own);
	snapshot_free(named);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_counts),  cmocka_unit_test(test_route_info),
		cmocka_unit_test(test_scrape_expiry), cmocka_unit_test(test_histogram_and_counters),
		cmocka_unit_test(test_label_escape),  cmocka_unit_test(test_process),
		cmocka_unit_test(test_gzip_body),     cmocka_unit_test(test_two_families),
		cmocka_unit_test(test_netns_label),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
