/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_events.h - the /events streams (Server-Sent Events) and their fan-out thread; the
 * endpoints themselves are in http_endpoints.h.
 *
 * A stream is a libmicrohttpd response read by a callback: it hands out the history's
 * events (events.h) from its position on, and suspends its connection when it has caught
 * up. The fan-out thread resumes the suspended streams when a change is recorded or a
 * heartbeat is due, and drops the streams that fell more than --stream-queue bytes behind
 * the newest event (they are told to resync first). No stream ever holds more than the
 * event it is sending, and nothing a stream does waits for the collector or for another
 * stream.
 */
#ifndef RTSNAP_HTTP_EVENTS_H
#define RTSNAP_HTTP_EVENTS_H

#include <stddef.h>

#include "rtsnap/strbuf.h"

#define HTTP_EVENTS_QUEUE_DEFAULT (16u << 20) /* bytes a stream may lag behind */
#define HTTP_EVENTS_HEARTBEAT_DEFAULT 15      /* seconds */

#define HTTP_EVENTS_MAX_LISTEN 8 /* listeners whose streams are counted apart */

struct http_events_opts {
	size_t queue_bytes;	  /* a stream further behind the newest event is dropped */
	unsigned int heartbeat_s; /* a comment after this long without anything to send */
	/* the IPv6 instance's: what the streams and /changes read by default; the caller's.
	 * NULL: IPv6 not followed (--family inet): history4 is then the default */
	struct events_history *history;
	/* the IPv4 instance's, read with family=inet and all; NULL: not followed */
	struct events_history *history4;
	unsigned int max_streams; /* per listener: a new one beyond evicts the oldest; 0: none */
};

/* Main thread, before http_start(). Starts the fan-out thread. 0 or a negative errno. */
int http_events_start(const struct http_events_opts *o) __attribute__((warn_unused_result));
/* Main thread, after http_stop() (every stream has ended). Joins the thread. */
void http_events_stop(void);

/*
 * Main thread (http.c), before the daemons of owner (an HTTP generation) are stopped, or
 * when they stop taking new connections: its streams end (a suspended one is resumed, so
 * that no connection is suspended when MHD_stop_daemon() runs) and it takes no new
 * stream. http_events_closed() once its daemons are stopped.
 */
void http_events_close(const void *owner);
void http_events_closed(const void *owner);

/* Any thread: the stream families of /metrics; the history ones are the IPv6 instance's, or
 * the IPv4 one's when IPv6 is not followed. */
void http_events_metrics(struct strbuf *sb);

#endif
