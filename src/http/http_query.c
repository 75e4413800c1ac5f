// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_query.c - the route query endpoints: /routes (filters, paging), /routes/lookup and
 * /expiring. libmicrohttpd glue only: parsing and evaluation are in query.c. An IPv4 query
 * (/routes?family=inet, a lookup of an IPv4 address) runs on the IPv4 instance's snapshot,
 * which takes rq->snap's place.
 *
 * RCU readers only: every handler works on rq->snap (acquired by http.c), never blocks and
 * never writes it. /routes bodies point into the snapshot (plus the few routes re-rendered
 * for their "expires"), so the cost of a request is what it returns, not the table size.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/http_endpoints.h"
#include "rtsnap/names.h"
#include "rtsnap/query.h"

/* Common argument checks: 1 to go on, 0 when an error response is queued (result in *res). */
static int args_ok(struct http_req *rq, const char *const *allowed, enum MHD_Result *res)
{
	const char *bad = NULL;

	if (http_args_check(rq, allowed, res))
		return 0;
	MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, http_find_nul, &bad);
	if (bad) {
		*res = http_send_error(rq, 400, "query parameter '%.64s' contains a NUL byte", bad);
		return 0;
	}
	return !http_no_snapshot(rq, res);
}

static enum MHD_Result send_strbuf(struct http_req *rq, unsigned int status, struct strbuf *sb)
{
	size_t len;
	char *body;

	if (sb->failed) {
		strbuf_free(sb);
		return http_send_error(rq, 500, "out of memory");
	}
	body = strbuf_detach(sb, &len);
	if (!body)
		return http_send_error(rq, 500, "out of memory");
	return http_send_buffer(rq, status, "application/json", body, len);
}

/* /routes' parameters: query.c's and "family", listed once (pthread_once: any worker). */
static const char *s_routes_params[32];

static void routes_params_init(void)
{
	size_t n = 0;

	while (query_params[n] && n < 30) {
		s_routes_params[n] = query_params[n];
		n++;
	}
	s_routes_params[n] = "family";
}

static const char *const *routes_params(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, routes_params_init);
	return s_routes_params;
}

/*
 * Append the answer of q on snapshot s to segs (n of them so far: the array's opening and the
 * objects before), without its opening unless first and without its end unless last, with a
 * comma between objects of two snapshots. Its expiring routes' text goes into *dyn, which must
 * be empty: a later one would move it. The routes it found in *count, the cursor of the next
 * page in next ("" when it was the last). The new count of segments, or a negative errno.
 */
static int add_json(const struct snapshot *s, const struct query *q, int64_t now_ms, int first,
		    int last, struct render_seg **segs, int n, struct strbuf *dyn, size_t *count,
		    char next[QUERY_CURSOR_LEN + 1])
{
	static const char comma[] = ",";
	struct query_result res;
	struct render_seg *grown;
	int k;

	if (dyn->len)
		return -EINVAL;
	if (query_run(s, q, now_ms, &res))
		return -ENOMEM;
	*dyn = res.dyn; /* the caller's now */
	*count = res.count;
	memcpy(next, res.next, sizeof(res.next));
	k = (int)res.nseg;
	/* res.segs: "[", the objects (none: k == 2), "]\n" */
	grown = realloc(*segs, (size_t)(n + k + 1) * sizeof(**segs));
	if (!grown) {
		free(res.segs);
		return -ENOMEM;
	}
	*segs = grown;
	if (!first && n > 1 && k > 2)
		grown[n++] = (struct render_seg){ .p = comma, .len = 1 };
	for (int i = !first; i < k - !last; i++)
		grown[n++] = res.segs[i];
	free(res.segs);
	return n;
}

/*
 * /routes?family=all: the IPv4 answer (rq->snap2), then the IPv6 one (rq->snap), in one array,
 * as `rtsnapd --once --family all --format json` prints. Every filter applies to both; an
 * address (prefix=, covers=, gateway=) is of one family, and the other family's routes cannot
 * match it: prefix= and covers= with an IPv4 value answer from the IPv4 snapshot alone, with
 * an IPv6 one from the IPv6 snapshot alone; gateway= with an IPv6 value matches IPv4 routes
 * via inet6 too. Paging goes through the IPv4 routes, then the IPv6 ones: a page is at most
 * limit= routes, and its cursor (X-Next-After) is the family's digit, 4 or 6, then that
 * family's cursor ("6" alone: the IPv6 routes from their first).
 */
static enum MHD_Result routes_all(struct http_req *rq)
{
	static const char *const addr[] = { "prefix", "covers", "gateway", NULL };
	static const char close_br[] = "]\n";
	const char *hdrs[3] = { "X-Next-After", NULL, NULL };
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 }, none = { 0 };
	struct query q4 = { .family = AF_INET }, q6 = { 0 };
	const struct names *names = snapshot_ctx(rq->snap)->names;
	int want4 = 1, want6 = 1, n = 0;
	char err[256], err4[256], next[QUERY_CURSOR_LEN + 2] = "";
	char next4[QUERY_CURSOR_LEN + 1] = "", next6[QUERY_CURSOR_LEN + 1] = "";
	const char *after = NULL;
	size_t count4 = 0, count6 = 0;

	for (unsigned int i = 0; i < rq->nargs; i++) {
		const char *key = rq->args[i].key, *val = rq->args[i].val;
		int is_addr = 0, bad4, bad6;

		if (!strcmp(key, "family"))
			continue;
		if (!strcmp(key, "after")) {
			after = val;
			continue;
		}
		for (const char *const *k = addr; *k; k++)
			is_addr |= !strcmp(key, *k);
		bad4 = query_parse_arg(&q4, names, key, val, err4, sizeof(err4));
		bad6 = query_parse_arg(&q6, names, key, val, err, sizeof(err));
		if (!is_addr && (bad4 || bad6))
			return http_send_error(rq, 400, "%s", bad6 ? err : err4);
		if (bad4 && bad6)
			return http_send_error(
			    rq, 400, "bad value for '%.64s': not an IPv4 or IPv6 %s", key,
			    strcmp(key, "gateway") ? "address or prefix" : "address");
		want4 &= !bad4;
		want6 &= !bad6;
	}
	if (after) {
		/* "4" + an IPv4 cursor, "6" + an IPv6 one, or "6" alone */
		int bad = (after[0] != '4' && after[0] != '6') || (after[0] == '4' && !after[1]);

		if (!bad && after[1])
			bad =
			    query_cursor_decode(after + 1, after[0] == '4' ? &q4.after : &q6.after);
		if (bad)
			return http_send_error(
			    rq, 400, "bad value for 'after': not a cursor from X-Next-After");
		if (after[0] == '4') {
			q4.set |= QF_AFTER;
		} else {
			want4 = 0;
			if (after[1])
				q6.set |= QF_AFTER;
		}
	}
	if (!want4 && !want6) { /* addresses of both families: no route matches */
		char *body = strdup("[]\n");

		return body ? http_send_buffer(rq, 200, "application/json", body, 3)
			    : http_send_error(rq, 500, "out of memory");
	}
	/* IPv4 records carry no deadline: nothing is rendered into none */
	if (want4)
		n = add_json(rq->snap2, &q4, rq->now_ms, 1, !want6, &segs, 0, &none, &count4,
			     next4);
	if (n >= 0 && none.len)
		n = -EINVAL;
	if (want4 && want6 && (next4[0] || ((q6.set & QF_LIMIT) && count4 >= q6.limit))) {
		/* the page is full of IPv4 routes: the IPv6 ones come on a later page */
		snprintf(next, sizeof(next), "%c%s", next4[0] ? '4' : '6', next4);
		want6 = 0;
		if (n >= 0) {
			struct render_seg *grown = realloc(segs, (size_t)(n + 1) * sizeof(*segs));

			if (grown) {
				segs = grown;
				segs[n++] = (struct render_seg){ .p = close_br, .len = 2 };
			} else {
				n = -ENOMEM;
			}
		}
	} else if (want4 && next4[0]) {
		snprintf(next, sizeof(next), "4%s", next4);
	}
	if (n >= 0 && want6) {
		if (q6.set & QF_LIMIT)
			q6.limit -= (uint32_t)count4; /* count4 < limit here */
		n = add_json(rq->snap, &q6, rq->now_ms, !want4, 1, &segs, n, &dyn, &count6, next6);
		if (next6[0])
			snprintf(next, sizeof(next), "6%s", next6);
	}
	strbuf_free(&none);
	if (n < 0) {
		free(segs);
		strbuf_free(&dyn);
		return http_send_error(rq, 500, "cannot render the routes: %s", strerror(-n));
	}
	if (next[0]) {
		hdrs[1] = next; /* copied by libmicrohttpd when the response is built */
		rq->headers = hdrs;
	}
	{
		enum MHD_Result mres = http_send_snapshot_segs(rq, 200, "application/json", segs,
							       (unsigned int)n, &dyn);

		rq->headers = NULL;
		return mres;
	}
}

enum MHD_Result http_ep_routes(struct http_req *rq)
{
	const char *hdrs[3] = { "X-Next-After", NULL, NULL };
	int af;
	struct query q = { 0 };
	struct query_result res;
	enum MHD_Result mres;
	char err[256];

	if (!args_ok(rq, routes_params(), &mres))
		return mres;
	af = http_family(rq, &mres);
	if (af < 0)
		return mres;
	if (af != AF_INET6) {
		int all = af == AF_UNSPEC;

		/* the IPv4 snapshot: in place of the IPv6 one, or beside it */
		if (all) {
			rq->snap2 = snapshot_acquire(rq->chain4);
		} else {
			snapshot_release(rq->snap);
			rq->snap = snapshot_acquire(rq->chain4);
		}
		if (!rq->snap || (all && !rq->snap2))
			return http_send_error(rq, 503, "no snapshot published yet");
		if (all)
			return routes_all(rq);
		/* family=inet: every filter, with IPv4 values, on the IPv4 snapshot */
		q.family = AF_INET;
	}
	for (unsigned int i = 0; i < rq->nargs; i++) {
		if (!strcmp(rq->args[i].key, "family"))
			continue;
		if (query_parse_arg(&q, snapshot_ctx(rq->snap)->names, rq->args[i].key,
				    rq->args[i].val, err, sizeof(err)))
			return http_send_error(rq, 400, "%s", err);
	}
	if (query_run(rq->snap, &q, rq->now_ms, &res))
		return http_send_error(rq, 500, "out of memory");
	if (res.next[0]) {
		hdrs[1] = res.next; /* copied by libmicrohttpd when the response is built */
		rq->headers = hdrs;
	}
	mres = http_send_snapshot_segs(rq, 200, "application/json", res.segs,
				       (unsigned int)res.nseg, &res.dyn);
	rq->headers = NULL;
	return mres;
}

enum MHD_Result http_ep_lookup(struct http_req *rq)
{
	struct lookup_query lq;
	struct strbuf sb = { 0 };
	enum MHD_Result mres;
	char err[256];
	long i;

	if (!args_ok(rq, query_lookup_params, &mres))
		return mres;
	query_lookup_init(&lq);
	for (unsigned int k = 0; k < rq->nargs; k++)
		if (query_lookup_parse_arg(&lq, snapshot_ctx(rq->snap)->names, rq->args[k].key,
					   rq->args[k].val, err, sizeof(err)))
			return http_send_error(rq, 400, "%s", err);
	if (query_lookup_check(&lq, err, sizeof(err)))
		return http_send_error(rq, 400, "%s", err);
	if (lq.family == AF_INET6 && rq->no_inet6)
		return http_send_error(rq, 404,
				       "IPv6 is not followed: start rtsnapd with --family all");
	if (lq.family == AF_INET) {
		/* an IPv4 address: the IPv4 instance's snapshot in place of the IPv6 one */
		if (!rq->chain4)
			return http_send_error(
			    rq, 404, "IPv4 is not followed: start rtsnapd with --family all");
		snapshot_release(rq->snap);
		rq->snap = snapshot_acquire(rq->chain4);
		if (!rq->snap)
			return http_send_error(rq, 503, "no snapshot published yet");
	}
	i = query_lookup(rq->snap, &lq, rq->now_ms);
	if (i < 0) {
		char a[INET6_ADDRSTRLEN], b[12];

		inet_ntop(lq.family, lq.addr, a, sizeof(a));
		return http_send_error(rq, 404, "no route to %s in table %s", a,
				       names_table(snapshot_ctx(rq->snap)->names, lq.table, b));
	}
	strbuf_reserve(&sb, 512);
	query_render_route(rq->snap, (size_t)i, rq->now_ms, &sb);
	strbuf_putc(&sb, '\n');
	return send_strbuf(rq, 200, &sb);
}

enum MHD_Result http_ep_expiring(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	struct strbuf sb = { 0 };
	enum MHD_Result mres;

	if (!args_ok(rq, allowed, &mres))
		return mres;
	query_render_expiring(rq->snap, rq->now_ms, &sb);
	return send_strbuf(rq, 200, &sb);
}
