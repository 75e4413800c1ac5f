// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_query.c - the route query endpoints: /routes (filters), /routes/lookup, /expiring.
 * RCU readers only; the work per request is proportional to what is returned.
 */
#include <stdlib.h>

#include "rtsnap/http_internal.h"

enum MHD_Result http_ep_routes(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 };
	enum MHD_Result res;
	int n;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	n = render_json_all(rq->snap, rq->now_ms, &segs, &dyn);
	if (n < 0) {
		strbuf_free(&dyn);
		return http_send_error(rq, 500, "out of memory");
	}
	return http_send_snapshot_segs(rq, 200, "application/json", segs, (unsigned int)n, &dyn);
}

enum MHD_Result http_ep_lookup(struct http_req *rq)
{
	return http_send_error(rq, 501, "not implemented yet");
}

enum MHD_Result http_ep_expiring(struct http_req *rq)
{
	return http_send_error(rq, 501, "not implemented yet");
}
