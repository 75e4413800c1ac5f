// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_query.c - the route query endpoints: /routes (filters, paging), /routes/lookup and
 * /expiring. libmicrohttpd glue only: parsing and evaluation are in query.c.
 *
 * RCU readers only: every handler works on rq->snap (acquired by http.c), never blocks and
 * never writes it. /routes bodies point into the snapshot (plus the few routes re-rendered
 * for their "expires"), so the cost of a request is what it returns, not the table size.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/http_internal.h"
#include "rtsnap/names.h"
#include "rtsnap/query.h"

/*
 * libmicrohttpd decodes %00 into a NUL byte, which would silently cut a key or value short
 * ("prefix=2001:db8::%00junk" would read as a valid prefix). Refuse such parameters.
 */
enum MHD_Result http_find_nul(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			      const char *value, size_t value_size)
{
	const char **bad = cls;

	(void)kind;
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		*bad = key;
		return MHD_NO;
	}
	return MHD_YES;
}

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

enum MHD_Result http_ep_routes(struct http_req *rq)
{
	const char *hdrs[3] = { "X-Next-After", NULL, NULL };
	struct query q = { 0 };
	struct query_result res;
	enum MHD_Result mres;
	char err[256];

	if (!args_ok(rq, query_params, &mres))
		return mres;
	for (unsigned int i = 0; i < rq->nargs; i++)
		if (query_parse_arg(&q, rq->snap->ctx.names, rq->args[i].key, rq->args[i].val, err,
				    sizeof(err)))
			return http_send_error(rq, 400, "%s", err);
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
		if (query_lookup_parse_arg(&lq, rq->snap->ctx.names, rq->args[k].key,
					   rq->args[k].val, err, sizeof(err)))
			return http_send_error(rq, 400, "%s", err);
	if (!lq.have_addr)
		return http_send_error(rq, 400, "missing query parameter 'addr'");
	i = query_lookup(rq->snap, &lq, rq->now_ms);
	if (i < 0) {
		char a[INET6_ADDRSTRLEN], b[12];

		inet_ntop(AF_INET6, lq.addr, a, sizeof(a));
		return http_send_error(rq, 404, "no route to %s in table %s", a,
				       names_table(rq->snap->ctx.names, lq.table, b));
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
