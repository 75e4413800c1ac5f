/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_internal.h - what endpoint handlers share with the libmicrohttpd glue in http.c.
 * Handlers run on HTTP worker threads, are RCU readers only, and must not block.
 */
#ifndef RTSNAP_HTTP_INTERNAL_H
#define RTSNAP_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

#define HTTP_MAX_ARGS 16

struct http_arg {
	const char *key;
	const char *val; /* percent-decoded by libmicrohttpd; "" when given without '=' */
};

struct http_req {
	struct MHD_Connection *conn;
	const char *path;
	int ep;		       /* endpoint index, for per-endpoint counters */
	struct snapshot *snap; /* acquired by http.c; NULL when none published yet */
	int64_t now_ms;
	struct http_arg args[HTTP_MAX_ARGS];
	unsigned int nargs;
	int args_overflow;	    /* more than HTTP_MAX_ARGS arguments */
	const char *const *headers; /* extra response headers from the handler: name, value, ...,
				       NULL (e.g. Content-Encoding, Vary); static or request-lived */
};

/*
 * Reply helpers. Each queues exactly one response and returns the MHD result to hand back.
 * Bodies built per request are malloc()ed and handed over (freed by the response).
 */
enum MHD_Result http_send_error(struct http_req *rq, unsigned int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result http_send_buffer(struct http_req *rq, unsigned int status, const char *ctype,
				 char *body, size_t len);
/*
 * Send segments that point into rq->snap (and into *dyn, whose bytes are handed over with
 * it), holding a snapshot reference until the response is freed. segs is copied and freed.
 */
enum MHD_Result http_send_snapshot_segs(struct http_req *rq, unsigned int status, const char *ctype,
					struct render_seg *segs, unsigned int nseg,
					struct strbuf *dyn);

/*
 * Reject arguments not in allowed (NULL-terminated) and repeated ones with a 400 naming the
 * parameter. Returns 0 when fine, else the result of the 400 already queued (as 1 + result).
 */
int http_args_check(struct http_req *rq, const char *const *allowed, enum MHD_Result *res);
/* If no snapshot is published yet, queue a 503 and return 1 (result in *res). */
int http_no_snapshot(struct http_req *rq, enum MHD_Result *res);

/* Endpoint handlers outside http.c: http_query.c (routes, lookup, expiring), http_metrics.c. */
enum MHD_Result http_ep_routes(struct http_req *rq);
enum MHD_Result http_ep_lookup(struct http_req *rq);
enum MHD_Result http_ep_expiring(struct http_req *rq);
enum MHD_Result http_ep_metrics(struct http_req *rq);

/* For per-endpoint counters: endpoint path by index ("other" for unknown paths, index
 * HTTP_EP__MAX - 1), number of endpoints, and the status code counted in column idx of
 * g_stats.http_requests_code (0 for the last column, which counts every other code). */
const char *http_endpoint_name(int ep);
unsigned int http_endpoint_count(void);
unsigned int http_status_code(unsigned int idx);

/* Value of argument key, or NULL. */
const char *http_arg(const struct http_req *rq, const char *key);

#endif
