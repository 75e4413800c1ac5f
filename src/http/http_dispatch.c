// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_dispatch.c - libmicrohttpd's request callbacks: a request's path to its endpoint, the
 * checks that come before any endpoint (who may ask, the method, the target's bytes), the
 * snapshot the request is answered from, and If-None-Match against its generation.
 *
 * A request takes a snapshot reference (snapshot_acquire) before its handler runs: of the IPv4
 * instance for /route and /proc/net/route, of the family /routes?family= names (both for
 * all), of the IPv6 instance otherwise (for /status, with IPv4 followed, of both: its body and
 * its ETag name both generations, so that an IPv4 change is not a 304). With IPv6 not
 * followed (--family inet) the IPv4 instance takes the IPv6 one's place, and the IPv6 paths
 * answer 404 as the IPv4 ones do without IPv4; a response
 * that points into the snapshot keeps that reference (http_reply.c), anything else is released
 * here when the handler returns.
 *
 * /netns/NAME/PATH serves PATH of the named namespace NAME (http_ns.h): every path above but
 * /metrics (one for all, labelled netns="NAME"), the web page and /netns. NAME is the decoded
 * path segment (any byte but '/' and NUL); the request reads that namespace's instances
 * instead of the site's and holds a reference on it until its handler returns (a response
 * holds its snapshots, a stream its own reference). An unknown or removed name is a 404.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/http_auth.h"
#include "rtsnap/http_conn.h"
#include "rtsnap/http_dispatch.h"
#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/http_web.h"
#include "rtsnap/netns.h"
#include "rtsnap/webconfig.h"

struct endpoint {
	const char *path;
	int ep; /* enum http_ep */
	enum MHD_Result (*fn)(struct http_req *rq);
	int etag; /* supports If-None-Match on the snapshot generation (2: both instances') */
	int v4;	  /* served from the IPv4 instance */
	int v6;	  /* served from the IPv6 instance alone (404 when it is not followed) */
};

/* "/" also serves every other path http_web_path() knows (the web page's files) */
static const struct endpoint s_endpoints[] = {
	{ "/ipv6_route", HTTP_EP_IPV6_ROUTE, http_ep_proc, 1, 0, 1 },
	{ "/proc/net/ipv6_route", HTTP_EP_PROC_IPV6_ROUTE, http_ep_proc, 1, 0, 1 },
	{ "/route", HTTP_EP_ROUTE4, http_ep_proc, 1, 1, 0 },
	{ "/proc/net/route", HTTP_EP_PROC_ROUTE4, http_ep_proc, 1, 1, 0 },
	/* expires changes with time: no 304 */
	{ "/routes", HTTP_EP_ROUTES, http_ep_routes, 0, 0, 0 },
	{ "/routes/lookup", HTTP_EP_LOOKUP, http_ep_lookup, 0, 0, 0 },
	/* IPv4 routes have no lifetime: the IPv6 instance's */
	{ "/expiring", HTTP_EP_EXPIRING, http_ep_expiring, 0, 0, 1 },
	{ "/metrics", HTTP_EP_METRICS, http_ep_metrics, 0, 0, 0 },
	{ "/status", HTTP_EP_STATUS, http_ep_status, 2, 0, 0 },
	{ "/healthz", HTTP_EP_HEALTHZ, http_ep_healthz, 0, 0, 0 },
	{ "/", HTTP_EP_WEB, http_ep_web, 0, 0, 0 },
	{ "/events", HTTP_EP_EVENTS, http_ep_events, 0, 0, 0 },
	{ "/changes", HTTP_EP_CHANGES, http_ep_changes, 0, 0, 0 },
	{ "/netns", HTTP_EP_NETNS, http_ep_netns, 0, 0, 0 },
	{ "/watch", HTTP_EP_WATCH, http_ep_watch, 0, 0, 0 },
};
#define NENDPOINTS (sizeof(s_endpoints) / sizeof(s_endpoints[0]))

#define NETNS_PREFIX "/netns/"

/* The endpoint served at path (exact; "/" also for the web page's files), or NULL. */
static const struct endpoint *endpoint_of(const char *path)
{
	for (size_t i = 0; i < NENDPOINTS; i++)
		if (strcmp(path, s_endpoints[i].path) == 0 ||
		    (s_endpoints[i].ep == HTTP_EP_WEB && http_web_path(path)) ||
		    (s_endpoints[i].ep == HTTP_EP_NETNS && strcmp(path, NETNS_PREFIX) == 0))
			return &s_endpoints[i];
	return NULL;
}

/*
 * A per-namespace path, "/netns/NAME/REST": NAME into name (at most NETNS_NAME_MAX bytes, else
 * cut and *toolong set) and a pointer to "/REST" returned; NULL when url is not of that form
 * ("/netns" and "/netns/" are the list). "/netns/NAME" alone returns "".
 */
static const char *netns_split(const char *url, char name[NETNS_NAME_MAX + 1], int *toolong)
{
	const char *p = url + strlen(NETNS_PREFIX), *slash;
	size_t len;

	if (strncmp(url, NETNS_PREFIX, strlen(NETNS_PREFIX)) != 0 || !*p)
		return NULL;
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	*toolong = len > NETNS_NAME_MAX;
	if (*toolong)
		len = NETNS_NAME_MAX;
	memcpy(name, p, len);
	name[len] = '\0';
	return slash ? slash : "";
}

/* If-None-Match: "*", or a comma-separated list of (possibly weak) tags; tag is quoted. */
static int etag_matches(const char *inm, const char *tag, size_t tl)
{
	if (!inm || !tl)
		return 0;
	for (const char *p = inm; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (strncmp(p, tag, tl) == 0 && (p[tl] == 0 || p[tl] == ',' || p[tl] == ' '))
			return 1;
		while (*p && *p != ',')
			p++;
	}
	return 0;
}

/*
 * Per-request state kept in libmicrohttpd's request pointer, as flag bits (no allocation):
 * set by http_dispatch_uri() when the request line arrives, read by http_dispatch_request().
 */
#define RQF_SEEN 0x1u	      /* http_dispatch_request() was called once (headers received) */
#define RQF_NUL 0x2u	      /* the raw path holds "%00": decoded, it would be cut short */
#define RQF_CTL 0x4u	      /* the raw target holds a control byte */
#define RQF_REFUSAL_SEEN 0x8u /* http_conn_refusal() was asked (before a suspension) */

void *http_dispatch_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	uintptr_t f = 0;
	int in_path = 1;

	(void)cls;
	(void)conn;
	for (const unsigned char *p = (const unsigned char *)uri; *p; p++) {
		if (*p == '?')
			in_path = 0;
		if (*p < 0x20 || *p == 0x7f)
			f |= RQF_CTL;
		if (in_path && p[0] == '%' && p[1] == '0' && p[2] == '0')
			f |= RQF_NUL;
	}
	return (void *)(f | 0x100u); /* never NULL */
}

static enum MHD_Result serve(struct http_req *rqp, const struct endpoint *e,
			     struct snapshot_chain *chain, struct snapshot_chain *chain4);

static enum MHD_Result send_405(struct http_req *rq)
{
	struct MHD_Response *r;
	char *body = strdup("{\"error\":\"method not allowed\"}\n");

	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer_with_free_callback_cls(strlen(body), body, free, body);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return http_queue(rq, 405, r);
}

enum MHD_Result http_dispatch_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version, const char *upload,
				      size_t *upload_size, void **req_cls)
{
	struct http_site *site = cls;
	char nsname[NETNS_NAME_MAX + 1];
	const char *rest;
	int toolong = 0;
	struct http_req rq = { .conn = conn, .path = url, .ep = HTTP_EP_OTHER };
	uintptr_t flags = (uintptr_t)*req_cls;
	const struct endpoint *e = NULL;
	const char *refused_why = NULL;
	int refused_ep = HTTP_EP_OTHER;
	unsigned int refused = 0;
	enum MHD_Result res;

	(void)version;
	rq.web = site->wc;
	rq.owner = site->owner;
	rq.wake = site->wake;
	rq.listener = site->listener;
	if (site->wc)
		rq.site_headers = (const char *const *)site->wc->headers;
	(void)upload;
	rest = netns_split(url, nsname, &toolong);
	e = endpoint_of(rest ? rest : url);
	if (rest && e &&
	    (e->ep == HTTP_EP_METRICS || e->ep == HTTP_EP_WEB || e->ep == HTTP_EP_NETNS ||
	     e->ep == HTTP_EP_WATCH))
		e = NULL; /* one for all */
	if (e)
		rq.ep = e->ep;
	if (!(flags & (RQF_SEEN | RQF_REFUSAL_SEEN)))
		refused = http_conn_refusal(conn, &refused_why, &refused_ep);
	if (!(flags & RQF_SEEN)) {
		/*
		 * First call: the headers only. A refusal is queued now, before any body is read
		 * (libmicrohttpd accepts a response only before the body or after all of it);
		 * a GET is answered on the next call, once a body it may carry has been skipped.
		 */
		*req_cls = (void *)(flags | RQF_SEEN);
		if (refused) { /* the head broke a rule: the same answer as the gate's */
			rq.ep = refused_ep;
			if (refused == 405)
				return send_405(&rq);
			return http_send_error(&rq, refused, "%s", refused_why);
		}
		switch (http_auth_check(&rq, site->wc, &res)) { /* who may ask, before what */
		case 0:
			break;
		case 1:
			return res;
		default: /* suspended: called again for this request once resumed */
			*req_cls = (void *)(flags | RQF_REFUSAL_SEEN);
			return MHD_YES;
		}
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return send_405(&rq);
		if (flags & RQF_CTL)
			return http_send_error(&rq, 400, "control character in the request target");
		if (flags & RQF_NUL)
			return http_send_error(&rq, 400, "NUL byte (%%00) in the path");
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a GET with a body: ignore the body */
		return MHD_YES;
	}
	http_conn_request_complete(conn); /* before rendering, however long that takes */
	if (rest) {
		struct snapshot_chain *c, *c4;

		if (toolong || !netns_name_valid(nsname) || !(rq.ns = http_ns_get(nsname)))
			return http_send_error(&rq, 404, "no such namespace: %s%s", nsname,
					       toolong ? "..." : "");
		if (!e && rest[0]) {
			const struct endpoint *all = endpoint_of(rest);

			if (all && all->ep == HTTP_EP_METRICS)
				res = http_send_error(&rq, 404,
						      "/metrics is not per namespace: /metrics "
						      "serves every one, labelled netns=\"NAME\"");
			else if (all && all->ep == HTTP_EP_WEB)
				res = http_send_error(&rq, 404,
						      "the web page is not per namespace: see / "
						      "(and /netns for the namespaces served)");
			else if (all)
				res = http_send_error(&rq, 404, "%s is not per namespace: see %s",
						      all->path, all->path);
			else
				res = http_send_error(&rq, 404, "no such endpoint: %.128s", url);
			http_ns_put(rq.ns);
			return res;
		}
		if (!e) {
			http_ns_put(rq.ns);
			return http_send_error(
			    &rq, 404, "no such endpoint: %.128s (try %.128s/status)", url, url);
		}
		{
			const struct http_ns_view *v = http_ns_view(rq.ns);

			rq.netns = v->text;
			rq.chain4 = c4 = v->chain4;
			rq.no_inet6 = v->no_inet6;
			rq.stats = v->stats;
			rq.stats4 = v->stats4;
			rq.hist = v->hist;
			rq.hist4 = v->hist4;
			c = v->chain;
		}
		res = serve(&rq, e, c, c4);
		http_ns_put(rq.ns);
		return res;
	}
	if (!e)
		return http_send_error(&rq, 404, "no such endpoint: %.128s", url);
	rq.chain4 = site->chain4;
	rq.no_inet6 = site->no_inet6;
	rq.stats = site->stats;
	rq.stats4 = site->stats4;
	rq.hist = site->hist;
	rq.hist4 = site->hist4;
	return serve(&rq, e, site->chain, site->chain4);
}

/* Answer rq (its instances set) at endpoint e from chain (IPv6's, or IPv4's alone) and chain4
 * (IPv4's beside it, or NULL). */
static enum MHD_Result serve(struct http_req *rqp, const struct endpoint *e,
			     struct snapshot_chain *chain, struct snapshot_chain *chain4)
{
	struct http_req rq = *rqp; /* its arguments are collected into this copy */
	enum MHD_Result res;
	char tag[HTTP_ETAG_MAX];

	MHD_get_connection_values(rq.conn, MHD_GET_ARGUMENT_KIND, http_collect_arg, &rq);
	if (e->v4 && !chain4)
		return http_send_error(&rq, 404,
				       "IPv4 is not followed: start rtsnapd with --family all");
	if (e->v6 && rq.no_inet6)
		return http_send_error(&rq, 404,
				       "IPv6 is not followed: start rtsnapd with --family all");
	rq.snap = snapshot_acquire(e->v4 ? chain4 : chain);
	if (e->etag == 2 && chain4 && !rq.no_inet6 && rq.snap)
		rq.snap2 = snapshot_acquire(chain4);
	rq.now_ms = snapshot_now_ms();
	if (e->etag && etag_matches(MHD_lookup_connection_value(rq.conn, MHD_HEADER_KIND,
								MHD_HTTP_HEADER_IF_NONE_MATCH),
				    tag, http_etag(&rq, tag))) { /* 0 (no tag) without a snapshot */
		struct MHD_Response *r =
		    MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

		if (r)
			http_add_common_headers(r, &rq, NULL);
		res = http_queue(&rq, 304, r);
	} else {
		res = e->fn(&rq);
	}
	snapshot_release(rq.snap); /* NULL if a response took it over */
	snapshot_release(rq.snap2);
	return res;
}
