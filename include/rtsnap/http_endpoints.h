/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_endpoints.h - the endpoint handlers, one file each (or per family): called by the
 * dispatcher on the worker thread, once per request whose head and body are complete, with
 * rq->snap acquired (NULL when nothing is published yet). Each queues exactly one response
 * (http_reply.h) and never blocks.
 */
#ifndef RTSNAP_HTTP_ENDPOINTS_H
#define RTSNAP_HTTP_ENDPOINTS_H

#include "rtsnap/http_reply.h"

/* http_proc.c: /ipv6_route and /proc/net/ipv6_route, the kernel's file. */
enum MHD_Result http_ep_proc(struct http_req *rq);
/* http_query.c: /routes (filters, paging), /routes/lookup, /expiring. */
enum MHD_Result http_ep_routes(struct http_req *rq);
enum MHD_Result http_ep_lookup(struct http_req *rq);
enum MHD_Result http_ep_expiring(struct http_req *rq);
/* http_status.c: /status and /healthz. */
enum MHD_Result http_ep_status(struct http_req *rq);
enum MHD_Result http_ep_healthz(struct http_req *rq);
/* http_metrics.c: /metrics. */
enum MHD_Result http_ep_metrics(struct http_req *rq);
/* http_events.c: the change stream (Server-Sent Events) and the change since a generation. */
enum MHD_Result http_ep_events(struct http_req *rq);
enum MHD_Result http_ep_changes(struct http_req *rq);
/* http_netns.c: /netns, the namespaces served (the daemon's own first). */
enum MHD_Result http_ep_netns(struct http_req *rq);
/* http_watch.c: /watch, the watched routes (every namespace's), and their /metrics series
 * appended to sb (sb->failed on error). */
enum MHD_Result http_ep_watch(struct http_req *rq);
void http_watch_metrics(struct http_req *rq, struct strbuf *sb);
/* http_web.c: "/" and the web page's files (http_web.h). */
enum MHD_Result http_ep_web(struct http_req *rq);

#endif
