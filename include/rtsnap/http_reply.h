/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_reply.h - a request as handlers see it, the replies they queue and the query
 * arguments. Everything here runs on the worker
 * thread that serves the connection (or, for the counters, on any thread) and never blocks.
 *
 * The HTTP objects call one way (no call from a lower one to a higher one):
 *   http_head, http_worker, http_pin, http_count  pure parsing; threads; the pinning bound;
 *                                                the request counters
 *   http_conn                                    one record per connection: deadlines, the
 *                                                check of every request head, wake-ups
 *   http_mhd_errors                              libmicrohttpd's own errors in JSON
 *   http_reply                                   replies, arguments
 *   http_gate                                    the accept side
 *   http_ns                                      the named namespaces served (--netns)
 *   http_proc, http_query, http_status, http_web, http_events, http_metrics,
 *   http_netns                                   one per endpoint
 *   http_auth                                    who may ask (client certificates, passwords)
 *   http_dispatch                                routing, ETag, the request callbacks
 *   http_listen, http                            listen sockets; the server (generations,
 *                                                workers, reload)
 */
#ifndef RTSNAP_HTTP_REPLY_H
#define RTSNAP_HTTP_REPLY_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "rtsnap/http_conn.h"
#include "rtsnap/http_count.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

struct webconfig;
struct events_history;
struct http_ns;

#define HTTP_MAX_ARGS 16

struct http_arg {
	const char *key;
	const char *val; /* percent-decoded by libmicrohttpd; "" when given without '=' */
};

struct http_req {
	struct MHD_Connection *conn;
	const char *path;
	int ep;		       /* enum http_ep, for per-endpoint counters */
	struct snapshot *snap; /* acquired by the dispatcher; NULL when none published yet */
	/* /routes?family=all, /metrics, /status: the IPv4 snapshot beside snap (the IPv6 one);
	 * a response made with http_send_snapshot_segs() takes it over */
	struct snapshot *snap2;
	struct snapshot_chain *chain4;	     /* the IPv4 instance's chain, or NULL (not followed) */
	const struct collector_stats *stats; /* the counters of the instance snap comes from */
	const struct collector_stats *stats4; /* the IPv4 instance's counters, or NULL */
	/* 1: IPv6 is not followed (--family inet); snap and stats are then the IPv4 instance's,
	 * as chain4 and stats4 are, and family= defaults to inet */
	int no_inet6;
	/* the change histories of the instances (events.h): IPv6's (NULL: not followed) and
	 * IPv4's (NULL: not followed); /events and /changes read them */
	struct events_history *hist, *hist4;
	/* the named namespace the request reads (/netns/NAME/...; the dispatcher holds a
	 * reference until the handler returns), or NULL: the daemon's own */
	struct http_ns *ns;
	const char *netns; /* its name as UTF-8 text (http_ns_view.text), or NULL */
	int64_t now_ms;
	struct http_arg args[HTTP_MAX_ARGS];
	unsigned int nargs;
	int args_overflow;	    /* more than HTTP_MAX_ARGS arguments */
	const char *const *headers; /* extra response headers from the handler: name, value, ...,
				       NULL (e.g. Content-Encoding, Vary); static or request-lived */
	const char *const *site_headers; /* http_server_config.headers of the web
					    configuration: name, value, ..., NULL */
	const struct webconfig *web;	 /* the connection's web configuration, or NULL */
	const void *owner;		 /* the HTTP generation (daemons) serving it, for /events */
	struct http_wake wake;		 /* after MHD_resume_connection() on this connection */
	unsigned int listener;		 /* index of the listener it came through */
};

/*
 * Reply helpers. Each queues exactly one response and returns the MHD result to hand back.
 * Bodies built per request are malloc()ed and handed over (freed by the response).
 */
enum MHD_Result http_send_error(struct http_req *rq, unsigned int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result http_send_buffer(struct http_req *rq, unsigned int status, const char *ctype,
				 char *body, size_t len);
/* Queue r (taken over; NULL is a failure) with the common headers (ctype, ETag, ...). */
enum MHD_Result http_send_response(struct http_req *rq, unsigned int status, const char *ctype,
				   struct MHD_Response *r);
/*
 * The ETag of a response from rq->snap (and rq->snap2): the quoted generation, "\"G\"", or
 * with rq->snap2 "\"G.G4\"" (the IPv6 generation, then the IPv4 one). Written into buf
 * (at least HTTP_ETAG_MAX bytes); 0 when rq->snap is NULL (no ETag).
 */
#define HTTP_ETAG_MAX 48
size_t http_etag(const struct http_req *rq, char *buf);
/* Queue r (taken over; NULL is a failure) as it is, and count it. */
enum MHD_Result http_queue(struct http_req *rq, unsigned int status, struct MHD_Response *r);
/*
 * Send segments that point into rq->snap and rq->snap2 (and into *dyn, whose bytes are
 * handed over with it), holding their references until the response is freed. segs is
 * copied and freed.
 */
enum MHD_Result http_send_snapshot_segs(struct http_req *rq, unsigned int status, const char *ctype,
					struct render_seg *segs, unsigned int nseg,
					struct strbuf *dyn);
/* The proc text of rq->snap, rendered as libmicrohttpd asks for it (the reference moves to the
 * response). */
enum MHD_Result http_send_proc(struct http_req *rq);
/* Add the headers every response carries (ctype, Cache-Control, the handler's and the
 * site's headers, ETag when rq->snap is set) to r. */
void http_add_common_headers(struct MHD_Response *r, const struct http_req *rq, const char *ctype);

/* libmicrohttpd's GET argument iterator filling rq->args (cls = rq). */
enum MHD_Result http_collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value);
/* Value of argument key, or NULL. */
const char *http_arg(const struct http_req *rq, const char *key);
/*
 * Reject arguments not in allowed (NULL-terminated) and repeated ones with a 400 naming the
 * parameter. Returns 0 when fine, else 1 with the result of the 400 already queued in *res.
 */
int http_args_check(struct http_req *rq, const char *const *allowed, enum MHD_Result *res);
/* libmicrohttpd value iterator: stops at the first argument whose key or value holds a NUL
 * (MHD decodes %00 into one, which would cut it short silently) and stores its key in
 * *(const char **)cls. */
enum MHD_Result http_find_nul(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			      const char *value, size_t value_size);
/*
 * family= of rq (/routes, /events, /changes): AF_INET6, AF_INET, or AF_UNSPEC for all. Absent,
 * the family the daemon follows by default: inet6, or inet when IPv6 is not followed. A
 * family not followed is a 404, another value a 400: -1 with that result queued in *res.
 */
int http_family(struct http_req *rq, enum MHD_Result *res);
/* If no snapshot is published yet, queue a 503 and return 1 (result in *res). */
int http_no_snapshot(struct http_req *rq, enum MHD_Result *res);

/* Any thread. Does an Accept-Encoding value accept gzip ("gzip", "x-gzip" or "*" with
 * q > 0)? */
int http_accepts_gzip(const char *ae);

#endif
