// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_metrics.c - /metrics: the snapshot's pre-rendered exposition plus the per-scrape
 * values (render_metrics.c) and the HTTP counters (known here), sent as two segments, gzip
 * when the client accepts it. The snapshot part is never copied: the response holds the
 * snapshot reference until it has been sent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rtsnap/auth.h"
#include "rtsnap/http_events.h"
#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_pin.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/stats.h"

/* What in-flight responses pin (http_pin.c) and what the bound dropped. */
static void render_pinned(struct strbuf *sb)
{
	struct http_pin_stats st;

	http_pin_stats(&st);
	strbuf_appendf(
	    sb,
	    "# HELP rtsnap_http_responses_dropped_total Responses closed before they were sent, "
	    "by reason (pinned_bytes: replaced snapshots kept alive by responses in flight went "
	    "over --max-pinned-bytes; those holding the oldest snapshot went first).\n"
	    "# TYPE rtsnap_http_responses_dropped_total counter\n"
	    "rtsnap_http_responses_dropped_total{reason=\"pinned_bytes\"} %llu\n"
	    "# HELP rtsnap_http_snapshot_responses Responses in flight that hold a snapshot, by "
	    "whether it is the current one or a replaced one.\n"
	    "# TYPE rtsnap_http_snapshot_responses gauge\n"
	    "rtsnap_http_snapshot_responses{snapshot=\"current\"} %lu\n"
	    "rtsnap_http_snapshot_responses{snapshot=\"replaced\"} %lu\n"
	    "# HELP rtsnap_snapshots_pinned Replaced snapshots still held by a reader.\n"
	    "# TYPE rtsnap_snapshots_pinned gauge\n"
	    "rtsnap_snapshots_pinned %ld\n"
	    "# HELP rtsnap_snapshots_pinned_bytes Estimated resident bytes of the replaced "
	    "snapshots still held by a reader.\n"
	    "# TYPE rtsnap_snapshots_pinned_bytes gauge\n"
	    "rtsnap_snapshots_pinned_bytes %llu\n"
	    "# HELP rtsnap_snapshot_bytes Estimated resident bytes of the current snapshot.\n"
	    "# TYPE rtsnap_snapshot_bytes gauge\n"
	    "rtsnap_snapshot_bytes %llu\n"
	    "# HELP rtsnap_http_pinned_bytes_limit Bound on rtsnap_snapshots_pinned_bytes "
	    "enforced on responses in flight (--max-pinned-bytes; 0: none).\n"
	    "# TYPE rtsnap_http_pinned_bytes_limit gauge\n"
	    "rtsnap_http_pinned_bytes_limit %llu\n",
	    (unsigned long long)stats_get(g_stats.http_dropped_pinned),
	    st.responses - st.responses_retired, st.responses_retired, st.snapshots_retired,
	    (unsigned long long)st.retired_bytes, (unsigned long long)st.current_bytes,
	    (unsigned long long)st.limit_bytes);
}

/* Basic auth's password checks (auth.c). */
static void render_auth(struct strbuf *sb)
{
	struct auth_stats as;

	auth_stats(&as);
	strbuf_appendf(
	    sb,
	    "# HELP rtsnap_auth_bcrypt_total Passwords hashed with bcrypt (off the HTTP workers).\n"
	    "# TYPE rtsnap_auth_bcrypt_total counter\n"
	    "rtsnap_auth_bcrypt_total %llu\n"
	    "# HELP rtsnap_auth_cached_total Basic auth credentials answered from the caches, by "
	    "verdict.\n"
	    "# TYPE rtsnap_auth_cached_total counter\n"
	    "rtsnap_auth_cached_total{result=\"ok\"} %llu\n"
	    "rtsnap_auth_cached_total{result=\"refused\"} %llu\n"
	    "# HELP rtsnap_auth_coalesced_total Requests that waited for the hash of the same "
	    "credentials asked by another.\n"
	    "# TYPE rtsnap_auth_coalesced_total counter\n"
	    "rtsnap_auth_coalesced_total %llu\n"
	    "# HELP rtsnap_auth_refused_total Requests refused before their password was hashed, by "
	    "reason (limited: the client address failed too often, 429; busy: too many checks "
	    "waiting, 503).\n"
	    "# TYPE rtsnap_auth_refused_total counter\n"
	    "rtsnap_auth_refused_total{reason=\"limited\"} %llu\n"
	    "rtsnap_auth_refused_total{reason=\"busy\"} %llu\n"
	    "# HELP rtsnap_auth_waiting Password checks waiting for their hash now.\n"
	    "# TYPE rtsnap_auth_waiting gauge\n"
	    "rtsnap_auth_waiting %u\n"
	    "# HELP rtsnap_auth_wait_seconds_total Time requests waited for their password's hash "
	    "(their connections suspended).\n"
	    "# TYPE rtsnap_auth_wait_seconds_total counter\n"
	    "rtsnap_auth_wait_seconds_total %.3f\n"
	    "# HELP rtsnap_auth_waits_total Requests that waited for a password's hash.\n"
	    "# TYPE rtsnap_auth_waits_total counter\n"
	    "rtsnap_auth_waits_total %llu\n",
	    as.bcrypt_runs, as.cached_ok, as.cached_bad, as.coalesced, as.limited, as.busy,
	    as.queued, (double)as.waited_ms_sum / 1000.0, as.waited);
}

/* rtsnap_http_requests_total{endpoint,code} and the bytes counter (the front door's counters). */
static void render_http(struct strbuf *sb)
{
	unsigned int nep = http_endpoint_count();

	strbuf_puts(sb, "# HELP rtsnap_http_requests_total HTTP requests answered, by endpoint "
			"and status code (other: a code not listed separately).\n"
			"# TYPE rtsnap_http_requests_total counter\n");
	for (unsigned int e = 0; e <= nep; e++) {
		int ep = e < nep ? (int)e : HTTP_EP__MAX - 1; /* last: unknown paths */

		for (unsigned int c = 0; c < HTTP_CODE__MAX; c++) {
			unsigned int code = http_status_code(c);
			uint64_t v = stats_get(g_stats.http_requests_code[ep][c]);

			/* every endpoint's 200 from the start, other codes once they happen */
			if (!v && (code != 200 || ep == HTTP_EP__MAX - 1))
				continue;
			strbuf_puts(sb, "rtsnap_http_requests_total{endpoint=\"");
			render_metrics_label(sb, http_endpoint_name(ep));
			if (!code)
				strbuf_appendf(sb, "\",code=\"other\"} %llu\n",
					       (unsigned long long)v);
			else
				strbuf_appendf(sb, "\",code=\"%u\"} %llu\n", code,
					       (unsigned long long)v);
		}
	}
	strbuf_appendf(sb,
		       "# HELP rtsnap_http_response_bytes_total Bytes of HTTP response bodies "
		       "sent (after compression).\n"
		       "# TYPE rtsnap_http_response_bytes_total counter\n"
		       "rtsnap_http_response_bytes_total %llu\n",
		       (unsigned long long)stats_get(g_stats.http_bytes));
	strbuf_appendf(sb,
		       "# HELP rtsnap_http_header_timeouts_total Connections answered 408: no "
		       "complete request head within --header-timeout.\n"
		       "# TYPE rtsnap_http_header_timeouts_total counter\n"
		       "rtsnap_http_header_timeouts_total %llu\n"
		       "# HELP rtsnap_http_shed_connections_total Connections still waiting for "
		       "their request closed to make room for new ones.\n"
		       "# TYPE rtsnap_http_shed_connections_total counter\n"
		       "rtsnap_http_shed_connections_total %llu\n"
		       "# HELP rtsnap_http_busy_total Requests refused because every connection "
		       "slot (--max-connections) was in use.\n"
		       "# TYPE rtsnap_http_busy_total counter\n"
		       "rtsnap_http_busy_total %llu\n"
		       "# HELP rtsnap_http_request_timeouts_total Connections closed after the "
		       "handover because a request was not complete within --header-timeout "
		       "(first: the rest of the first request; later: a later request on a "
		       "kept-alive connection).\n"
		       "# TYPE rtsnap_http_request_timeouts_total counter\n"
		       "rtsnap_http_request_timeouts_total{request=\"first\"} %llu\n"
		       "rtsnap_http_request_timeouts_total{request=\"later\"} %llu\n"
		       "# HELP rtsnap_http_evicted_connections_total Connections waiting for "
		       "their client's next request closed to let a new request in while every "
		       "slot (--max-connections) was in use.\n"
		       "# TYPE rtsnap_http_evicted_connections_total counter\n"
		       "rtsnap_http_evicted_connections_total %llu\n",
		       (unsigned long long)stats_get(g_stats.http_header_timeouts),
		       (unsigned long long)stats_get(g_stats.http_shed),
		       (unsigned long long)stats_get(g_stats.http_busy),
		       (unsigned long long)stats_get(g_stats.http_request_timeouts[0]),
		       (unsigned long long)stats_get(g_stats.http_request_timeouts[1]),
		       (unsigned long long)stats_get(g_stats.http_evicted));
	render_pinned(sb);
	render_auth(sb);
}

enum MHD_Result http_ep_metrics(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	static const char *const hdr_plain[] = { "Vary", "Accept-Encoding", NULL };
	static const char *const hdr_gzip[] = { "Vary", "Accept-Encoding", "Content-Encoding",
						"gzip", NULL };
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 };
	enum MHD_Result res;
	int gzip, n;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	gzip = http_accepts_gzip(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_ACCEPT_ENCODING));
	strbuf_reserve(&dyn, 8192);
	render_metrics_scrape(rq->snap, rq->stats, rq->now_ms, &dyn);
	render_http(&dyn);
	http_events_metrics(&dyn);
	render_metrics_process(&dyn);
	n = render_metrics_body(rq->snap, &dyn, gzip, &segs);
	if (n == -ENOMEM && gzip && !dyn.failed && dyn.len) {
		gzip = 0; /* out of memory: the per-scrape families alone, plain */
		n = render_metrics_body(rq->snap, &dyn, 0, &segs);
	}
	if (n < 0) {
		strbuf_free(&dyn);
		return http_send_error(rq, 500, "out of memory");
	}
	rq->headers = gzip ? hdr_gzip : hdr_plain;
	return http_send_snapshot_segs(rq, 200, RENDER_METRICS_CTYPE, segs, (unsigned int)n, &dyn);
}
