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

struct webconfig;

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
	const char *const *site_headers; /* http_server_config.headers of the web
					    configuration: name, value, ..., NULL */
	const struct webconfig *web;	 /* the connection's web configuration, or NULL */
	const void *owner;		 /* the HTTP generation (daemons) serving it, for /events */
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
/* libmicrohttpd value iterator: stops at the first argument whose key or value holds a NUL
 * (MHD decodes %00 into one, which would cut it short silently) and stores its key in
 * *(const char **)cls. */
enum MHD_Result http_find_nul(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			      const char *value, size_t value_size);
/* If no snapshot is published yet, queue a 503 and return 1 (result in *res). */
int http_no_snapshot(struct http_req *rq, enum MHD_Result *res);

/* Endpoint handlers outside http.c: http_query.c (routes, lookup, expiring), http_metrics.c. */
enum MHD_Result http_ep_routes(struct http_req *rq);
enum MHD_Result http_ep_lookup(struct http_req *rq);
enum MHD_Result http_ep_expiring(struct http_req *rq);
enum MHD_Result http_ep_metrics(struct http_req *rq);
/* http_events.c: the change stream (Server-Sent Events) and the change since a generation. */
enum MHD_Result http_ep_events(struct http_req *rq);
enum MHD_Result http_ep_changes(struct http_req *rq);

/* For per-endpoint counters: endpoint path by index ("other" for unknown paths, index
 * HTTP_EP__MAX - 1), number of endpoints, and the status code counted in column idx of
 * g_stats.http_requests_code (0 for the last column, which counts every other code). */
const char *http_endpoint_name(int ep);
unsigned int http_endpoint_count(void);
unsigned int http_status_code(unsigned int idx);

/* Any thread: count one answer with status for the endpoint whose path is path[0..len) (raw,
 * not decoded; NULL or no match: "other"). For answers sent outside libmicrohttpd. */
void http_count_status(const char *path, size_t len, unsigned int status);

/*
 * http_gate.c: where a listener's connections wait for their first request head, outside
 * libmicrohttpd, and the deadlines of their later requests inside it (see the comment at its
 * top). One gate per listener; all calls from the main thread except http_gate_notify,
 * http_gate_completed and http_gate_request_complete (libmicrohttpd's threads).
 */
struct http_gate;
struct http_gate_opts {
	unsigned int max_pending;      /* connections waiting for a request head */
	unsigned int header_timeout_s; /* from accept to a complete head */
	unsigned int conn_limit;       /* libmicrohttpd's connection limit (503 beyond) */
};
/* Take over listen_fd (closed by http_gate_free, or left to the caller on failure). name is
 * kept for logs. 0 or a negative errno. */
int http_gate_new(const char *name, int listen_fd, const struct http_gate_opts *o,
		  struct http_gate **out) __attribute__((warn_unused_result));
/* MHD_OPTION_NOTIFY_CONNECTION callback, cls = the gate: counts libmicrohttpd's connections
 * and keeps one deadline record per connection in *socket_context (freed at CLOSED). */
void http_gate_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		      enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_NOTIFY_COMPLETED callback (cls unused): a response was sent in full, so the
 * connection waits for its client's next request from now on. */
void http_gate_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe);
/* A worker, when conn's request is complete (or answered): its deadline no longer applies
 * (until the response has been sent). Cheap; fine to call more than once. */
void http_gate_request_complete(struct MHD_Connection *conn);
/* Start accepting; connections are handed to mhd, which speaks TLS if tls (then the gate
 * only checks that the first byte starts a TLS handshake). 0 or a negative errno. */
int http_gate_start(struct http_gate *g, struct MHD_Daemon *mhd, int tls)
    __attribute__((warn_unused_result));
/* Hand new connections to mhd from now on. When it returns, none reaches the previous
 * daemon any more (it may be stopped once its own connections are done). */
void http_gate_switch(struct http_gate *g, struct MHD_Daemon *mhd, int tls);
/* Stop accepting (joins the thread). Safe on NULL or a gate never started. */
void http_gate_stop(struct http_gate *g);
/* Stop, close the listen socket and every waiting connection, free. Accepts NULL. */
void http_gate_free(struct http_gate *g);

/*
 * http_pin.c: the registry of in-flight responses that hold a snapshot reference, and the
 * bound on the bytes of replaced snapshots they keep alive (see the comment at its top).
 */
struct http_pin {
	struct http_pin *prev, *next; /* under the registry's lock */
	struct snapshot *snap;	      /* the response's reference (owned by the response) */
	int fd;			      /* the connection's socket; -1: unknown, never dropped */
	int dropped;		      /* shut down by the bound */
	int listed;		      /* worker thread only */
	int64_t start_ms;
	uint64_t body_bytes;
};
struct http_pin_stats {
	unsigned long responses;	 /* in flight, holding a snapshot */
	unsigned long responses_retired; /* ... a replaced one */
	uint64_t limit_bytes;		 /* now; 0: no bound */
};
/* Main thread, before http_start(). bytes != 0: that limit; else factor x the current
 * snapshot's bytes; both 0: no bound. */
void http_pin_set_limit(uint64_t bytes, unsigned int factor);
/* Any thread. The limit in bytes now (0: no bound). */
uint64_t http_pin_limit(void);
/* Worker thread, when a response holding snap is created for conn. p lives in the response. */
void http_pin_add(struct http_pin *p, struct MHD_Connection *conn, struct snapshot *snap,
		  uint64_t body_bytes);
/* The response's free callback, before the snapshot reference is dropped. Fine if never added. */
void http_pin_del(struct http_pin *p);
/* Any thread. */
void http_pin_stats(struct http_pin_stats *st);
/* The snapshot retire hook (collector thread): enforce the limit. */
void http_pin_retired(uint64_t current_generation);

/* Value of argument key, or NULL. */
const char *http_arg(const struct http_req *rq, const char *key);

#endif
