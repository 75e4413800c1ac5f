/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_count.h - the HTTP front door's counters (see http_count.c): answers by endpoint and
 * status code, and the connection-level events, each described once and rendered to /metrics
 * from that description. Any thread.
 */
#ifndef RTSNAP_HTTP_COUNT_H
#define RTSNAP_HTTP_COUNT_H

#include <stddef.h>

#include <stdint.h>

#include "rtsnap/stats.h"
#include "rtsnap/strbuf.h"

/* Rows (endpoints, the last one for unknown paths) and columns (the status codes counted one
 * by one in http_count.c, then "other") of the per-endpoint counters. */
#define HTTP_EP__MAX 16
#define HTTP_CODE__MAX 16

/* Endpoints, in the order of their per-endpoint counters. */
enum http_ep {
	HTTP_EP_IPV6_ROUTE,
	HTTP_EP_PROC_IPV6_ROUTE,
	HTTP_EP_ROUTES,
	HTTP_EP_LOOKUP,
	HTTP_EP_EXPIRING,
	HTTP_EP_METRICS,
	HTTP_EP_STATUS,
	HTTP_EP_HEALTHZ,
	HTTP_EP_WEB, /* "/" and the web page's files */
	HTTP_EP_EVENTS,
	HTTP_EP_CHANGES,
	HTTP_EP_ROUTE4,	     /* /route */
	HTTP_EP_PROC_ROUTE4, /* /proc/net/route */
	HTTP_EP_NETNS,	     /* /netns: the namespaces served (/netns/NAME/PATH counts as PATH) */
	HTTP_EP_WATCH,	     /* /watch: the watched routes */
	HTTP_EP__COUNT,
	HTTP_EP_OTHER = HTTP_EP__MAX - 1 /* unknown paths */
};

/* Counters. Endpoint path by index ("other" beyond HTTP_EP__COUNT), number of endpoints, and
 * the status code counted in column idx of the per-endpoint counters (0 for the last column,
 * which counts every other code). */
const char *http_endpoint_name(int ep);
unsigned int http_endpoint_count(void);
unsigned int http_status_code(unsigned int idx);
/* The endpoint whose path is path[0..len) exactly (raw, not decoded), or HTTP_EP_OTHER. */
int http_endpoint_of(const char *path, size_t len);
/* Any thread: count one answer with status for endpoint ep. */
void http_count(int ep, unsigned int status);
/* Any thread: count one answer with status for the endpoint whose path is path[0..len) (NULL:
 * "other"). For answers sent outside libmicrohttpd. */
void http_count_status(const char *path, size_t len, unsigned int status);

/* The front door's other counters (rendered by http_count_render() in this order). */
enum http_counter {
	HTTP_C_BYTES,		      /* bytes of response bodies sent (after compression) */
	HTTP_C_HEADER_TIMEOUTS,	      /* 408: no complete request head within --header-timeout */
	HTTP_C_SHED,		      /* waiting connections closed to make room for new ones */
	HTTP_C_BUSY,		      /* 503: every connection slot in use */
	HTTP_C_REQUEST_TIMEOUT_FIRST, /* shut down after the handover: first request incomplete */
	HTTP_C_REQUEST_TIMEOUT_LATER, /* ... a later request on a kept-alive connection */
	HTTP_C_EVICTED,	       /* connections waiting for their client closed for a new one */
	HTTP_C_DROPPED_PINNED, /* responses closed: pinned bytes over --max-pinned-bytes */
	HTTP_C__COUNT
};

/* Any thread: add v to counter c; its value. */
void http_count_add(enum http_counter c, uint64_t v);
uint64_t http_count_get(enum http_counter c);

/* Any thread: every counter of this file in the Prometheus text format. */
void http_count_render(struct strbuf *sb);

#endif
