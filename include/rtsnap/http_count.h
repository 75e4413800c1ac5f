/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_count.h - the request counters (see http_count.c). Any thread.
 */
#ifndef RTSNAP_HTTP_COUNT_H
#define RTSNAP_HTTP_COUNT_H

#include <stddef.h>

#include "rtsnap/stats.h"

/* Endpoints, in the order of their per-endpoint counters (g_stats.http_requests_code). */
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
	HTTP_EP__COUNT,
	HTTP_EP_OTHER = HTTP_EP__MAX - 1 /* unknown paths */
};

/* Counters. Endpoint path by index ("other" beyond HTTP_EP__COUNT), number of endpoints, and
 * the status code counted in column idx of g_stats.http_requests_code (0 for the last column,
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

#endif
