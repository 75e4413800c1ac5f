// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_metrics.c - /metrics: the snapshot's pre-rendered exposition plus the per-scrape
 * values (render_metrics.c) and the HTTP counters (http_count.c), sent as two segments, gzip
 * when the client accepts it. The snapshot part is never copied: the response holds the
 * snapshot reference until it has been sent.
 *
 * With named namespaces served (--netns), their instances' series follow the own namespace's,
 * labelled netns="NAME", for the --metrics-netns-limit lowest names (the rest are counted in
 * rtsnap_netns_omitted*); each one's per-snapshot part is cached in its snapshot as the own
 * one's is, and the body is then copied into one buffer (render_metrics_body_n()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rtsnap/auth.h"
#include "rtsnap/http_events.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/http_pin.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/stats.h"

/* What in-flight responses pin (http_pin.c); what the bound dropped is a counter of
 * http_count.c. */
static void render_pinned(struct strbuf *sb)
{
	struct http_pin_stats st;

	http_pin_stats(&st);
	strbuf_appendf(
	    sb,
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

/* The named namespaces' gauges: served, and beyond the limit omitted (with their routes). */
static void render_netns(struct strbuf *sb, size_t served, size_t omitted, uint64_t routes)
{
	strbuf_appendf(
	    sb,
	    "# HELP rtsnap_netns_served Named network namespaces served beside the daemon's own "
	    "(--netns).\n"
	    "# TYPE rtsnap_netns_served gauge\n"
	    "rtsnap_netns_served %zu\n"
	    "# HELP rtsnap_netns_omitted Named namespaces served whose series are left out of "
	    "/metrics (beyond --metrics-netns-limit; the lowest names are kept).\n"
	    "# TYPE rtsnap_netns_omitted gauge\n"
	    "rtsnap_netns_omitted %zu\n"
	    "# HELP rtsnap_netns_omitted_routes Routes of the namespaces left out (every family "
	    "followed).\n"
	    "# TYPE rtsnap_netns_omitted_routes gauge\n"
	    "rtsnap_netns_omitted_routes %llu\n",
	    served, omitted, (unsigned long long)routes);
}

static uint64_t routes_of(struct snapshot_chain *c)
{
	struct snapshot *s = c ? snapshot_acquire(c) : NULL;
	uint64_t n = s ? snapshot_nroutes(s) : 0;

	snapshot_release(s);
	return n;
}

enum MHD_Result http_ep_metrics(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	static const char *const hdr_plain[] = { "Vary", "Accept-Encoding", NULL };
	static const char *const hdr_gzip[] = { "Vary", "Accept-Encoding", "Content-Encoding",
						"gzip", NULL };
	struct render_metrics_inst *in = NULL;
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 };
	struct http_ns **ns = NULL;
	size_t nns = 0, shown = 0, nin = 0;
	uint64_t omitted_routes = 0;
	enum MHD_Result res;
	int gzip, n;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	/* with --family all the IPv4 instance's route series too (its snapshot, once published,
	 * is held by the response like rq->snap) */
	if (rq->chain4 && !rq->no_inet6)
		rq->snap2 = snapshot_acquire(rq->chain4);
	gzip = http_accepts_gzip(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_ACCEPT_ENCODING));
	if (http_ns_list(&ns, &nns))
		nns = 0; /* no memory: the own namespace's alone */
	shown = nns < http_ns_metrics_limit() ? nns : http_ns_metrics_limit();
	if (nns) {
		in = calloc(2 + 2 * shown, sizeof(*in));
		if (!in) {
			http_ns_list_free(ns, nns);
			return http_send_error(rq, 500, "out of memory");
		}
		if (rq->no_inet6) {
			in[nin++] =
			    (struct render_metrics_inst){ rq->snap, rq->stats, "inet", NULL };
		} else {
			in[nin++] = (struct render_metrics_inst){ rq->snap, rq->stats, NULL, NULL };
			if (rq->stats4)
				in[nin++] = (struct render_metrics_inst){ rq->snap2, rq->stats4,
									  "inet", NULL };
		}
		for (size_t i = 0; i < nns; i++) {
			const struct http_ns_view *v = http_ns_view(ns[i]);

			if (i >= shown) {
				omitted_routes += routes_of(v->chain);
				if (!v->no_inet6)
					omitted_routes += routes_of(v->chain4);
				continue;
			}
			/* released below: the body is a copy (render_metrics_body_n()) */
			in[nin++] =
			    (struct render_metrics_inst){ snapshot_acquire(v->chain), v->stats,
							  v->no_inet6 ? "inet" : NULL, v->name };
			if (!v->no_inet6 && v->stats4)
				in[nin++] =
				    (struct render_metrics_inst){ snapshot_acquire(v->chain4),
								  v->stats4, "inet", v->name };
		}
	}
	strbuf_reserve(&dyn, 8192);
	if (nns)
		render_metrics_scrape_n(in, nin, rq->now_ms, &dyn);
	else if (rq->no_inet6) /* IPv4 alone: its samples labelled family="inet" as beside IPv6 */
		render_metrics_scrape2(NULL, NULL, rq->snap, rq->stats, rq->now_ms, &dyn);
	else
		render_metrics_scrape2(rq->snap, rq->stats, rq->snap2, rq->stats4, rq->now_ms,
				       &dyn);
	render_netns(&dyn, nns, nns - shown, omitted_routes);
	http_watch_metrics(rq, &dyn);
	http_count_render(&dyn);
	render_pinned(&dyn);
	render_auth(&dyn);
	http_events_metrics(&dyn);
	render_metrics_process(&dyn);
	if (nns) {
		n = render_metrics_body_n(in, nin, &dyn, gzip, &segs);
		for (size_t i = 0; i < nin; i++)
			if (in[i].netns)
				snapshot_release((struct snapshot *)in[i].s);
		free(in);
		http_ns_list_free(ns, nns);
	} else {
		n = render_metrics_body(rq->snap, rq->snap2, &dyn, gzip, &segs);
		if (n == -ENOMEM && gzip && !dyn.failed && dyn.len) {
			gzip = 0; /* out of memory: the per-scrape families alone, plain */
			n = render_metrics_body(rq->snap, rq->snap2, &dyn, 0, &segs);
		}
	}
	if (n < 0) {
		strbuf_free(&dyn);
		return http_send_error(rq, 500, "out of memory");
	}
	rq->headers = gzip ? hdr_gzip : hdr_plain;
	return http_send_snapshot_segs(rq, 200, RENDER_METRICS_CTYPE, segs, (unsigned int)n, &dyn);
}
