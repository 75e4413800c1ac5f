/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_worker.h - the threads that serve HTTP connections. Each worker is one thread that owns
 * one libmicrohttpd daemon started without an internal thread (external epoll mode) and runs
 * its event loop: connections handed over by the gate are queued to a worker and added to its
 * daemon on its own thread, so every call into that daemon happens on one thread, except
 * MHD_resume_connection(), which is followed by http_worker_wake().
 *
 * Why not libmicrohttpd's own thread pool: in 0.9.75 its internal epoll loop waits again, with
 * the full timeout, whenever epoll_wait() returned exactly its batch of 128 events
 * (MHD_epoll(): `while (MAX_EVENTS == num_events)`), and the connections of those 128 events
 * are served only after that second wait returns. 256 kept-alive connections on 2 workers are
 * 128 each: every request waited for a timeout (wrk -c256: 677 requests/s against 142 000 at
 * 32). Driven from outside, MHD_run() waits with a zero timeout, and the wait that sleeps is
 * ours.
 */
#ifndef RTSNAP_HTTP_WORKER_H
#define RTSNAP_HTTP_WORKER_H

#include <sys/socket.h>
#include <microhttpd.h>

struct http_worker;

/*
 * Main thread. Start a worker thread for mhd (a daemon started with MHD_USE_EPOLL and without
 * MHD_USE_INTERNAL_POLLING_THREAD), which the worker owns from now on, also on failure (then
 * it is stopped). name is kept for logs. 0 or a negative errno.
 */
int http_worker_new(struct MHD_Daemon *mhd, const char *name, struct http_worker **out)
    __attribute__((warn_unused_result));

/*
 * Any thread. Queue connection fd (non-blocking) to the worker, which adds it to its daemon;
 * the fd is the worker's from now on (closed by libmicrohttpd, or here if the worker is
 * stopping). 0, or a negative errno when it could not be queued (fd closed).
 */
int http_worker_add(struct http_worker *w, int fd, const struct sockaddr *addr, socklen_t alen);

/* Any thread. Make the worker run its daemon soon (after MHD_resume_connection()). */
void http_worker_wake(struct http_worker *w);

/* Any thread. Connections queued to or served by the worker (for picking the least loaded). */
unsigned int http_worker_load(const struct http_worker *w);

/* Libmicrohttpd's NOTIFY_CONNECTION, on the worker's thread: count a connection's end. */
void http_worker_closed(struct http_worker *w);

/*
 * Main thread. Stop the thread (joins; connections not added yet are closed), then stop the
 * daemon, which closes its connections on the calling thread: no connection may be suspended
 * by then (resume them first, and let the thread run). Accepts NULL.
 */
void http_worker_free(struct http_worker *w);

/* Main thread. Stop the thread only (joins); http_worker_free() does the rest. Accepts NULL. */
void http_worker_stop(struct http_worker *w);

#endif
