/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_dispatch.h - libmicrohttpd's request callbacks (see http_dispatch.c), for the daemons the
 * server starts. They run on the worker thread that serves the connection.
 */
#ifndef RTSNAP_HTTP_DISPATCH_H
#define RTSNAP_HTTP_DISPATCH_H

#include <stddef.h>
#include <microhttpd.h>

#include "rtsnap/http_reply.h"

struct snapshot_chain;
struct webconfig;
struct events_history;

/* What a daemon serves with (the callbacks' cls); lives as long as the daemon. */
struct http_site {
	struct snapshot_chain *chain;	     /* what it serves: IPv6's, or IPv4's alone */
	const struct collector_stats *stats; /* the counters of chain's instance */
	int no_inet6; /* 1: IPv6 not followed; chain and stats are chain4's and stats4's */
	struct snapshot_chain *chain4;	      /* the IPv4 instance's, or NULL (not followed) */
	const struct collector_stats *stats4; /* its counters, or NULL */
	struct events_history *hist, *hist4;  /* the instances' histories (NULL: not followed) */
	struct webconfig *wc;		      /* the web configuration, or NULL */
	const void *owner;		      /* the HTTP generation, for /events */
	struct http_wake wake; /* the daemon's worker, after a resume from another thread */
	unsigned int listener; /* its listener's index */
};

/* MHD_AccessHandlerCallback; cls is a struct http_site. */
enum MHD_Result http_dispatch_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version, const char *upload,
				      size_t *upload_size, void **req_cls);
/* MHD_OPTION_URI_LOG_CALLBACK: notes what the raw target holds (control bytes, %00) for the
 * request callback; cls unused. */
void *http_dispatch_uri(void *cls, const char *uri, struct MHD_Connection *conn);

#endif
