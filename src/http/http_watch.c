// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_watch.c - /watch and the rtsnap_watch* series of /metrics: the answers of every
 * instance served (the daemon's own, each named namespace's) for the current watch list,
 * read from their current snapshots (watch.h). A watch whose namespace or family is not
 * served reads as absent. Per request: one snapshot per instance held while its answers are
 * referenced, then released; the body is rendered from the answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/watch.h"

static void add_chain(struct watch_reading *r, struct snapshot_chain *c)
{
	struct snapshot *s = c ? snapshot_acquire(c) : NULL;

	watch_reading_add(r, s);
	snapshot_release(s);
}

/* The answers of the own instances (rq's) and of every named namespace's. */
static int gather(struct http_req *rq, struct watch_reading *r)
{
	struct http_ns **ns = NULL;
	size_t nns = 0;
	int ret = watch_reading_init(r);

	if (ret || !r->list)
		return ret;
	watch_reading_add(r, rq->snap); /* IPv6's, or IPv4's alone (no_inet6) */
	if (!rq->no_inet6)
		add_chain(r, rq->chain4);
	if (http_ns_list(&ns, &nns))
		return -ENOMEM;
	for (size_t i = 0; i < nns; i++) {
		const struct http_ns_view *v = http_ns_view(ns[i]);

		add_chain(r, v->chain);
		if (!v->no_inet6)
			add_chain(r, v->chain4);
	}
	http_ns_list_free(ns, nns);
	return 0;
}

void http_watch_metrics(struct http_req *rq, struct strbuf *sb)
{
	struct watch_reading r;

	if (gather(rq, &r))
		sb->failed = true;
	else
		watch_render_metrics(&r, sb);
	watch_reading_free(&r);
}

enum MHD_Result http_ep_watch(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	struct watch_reading r;
	struct strbuf sb = { 0 };
	enum MHD_Result res;
	size_t len;
	char *body;

	if (http_args_check(rq, allowed, &res))
		return res;
	if (gather(rq, &r)) {
		watch_reading_free(&r);
		return http_send_error(rq, 500, "out of memory");
	}
	watch_render_json(&r, &sb);
	watch_reading_free(&r);
	if (sb.failed) {
		strbuf_free(&sb);
		return http_send_error(rq, 500, "out of memory");
	}
	body = strbuf_detach(&sb, &len);
	return http_send_buffer(rq, 200, "application/json", body, len);
}
