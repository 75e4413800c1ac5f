/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_gate.h - the accept side of a listener.
 */
#ifndef RTSNAP_HTTP_GATE_H
#define RTSNAP_HTTP_GATE_H

#include <sys/socket.h>
#include <microhttpd.h>

/*
 * http_gate.c: where a listener's connections wait for their first request head, outside
 * libmicrohttpd, and the deadlines of their later requests inside it (see the comment at its
 * top). One gate per listener; all calls from the main thread except http_gate_notify (the
 * workers).
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
 * and keeps their records (http_conn.h) in *socket_context (freed at CLOSED). */
void http_gate_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		      enum MHD_ConnectionNotificationCode toe);
/* Where the gate hands a connection whose first request head is complete (or, with tls, whose
 * handshake begins): fn(cls, fd, ...) takes the fd over (closes it on failure) and returns 0 or
 * a negative errno. Called on the gate's thread. */
typedef int (*http_gate_handover_fn)(void *cls, int fd, const struct sockaddr *addr,
				     socklen_t alen);
/* Start accepting; connections are handed to fn(cls, ...), which speaks TLS if tls (then the
 * gate only checks that the first byte starts a TLS handshake). 0 or a negative errno. */
int http_gate_start(struct http_gate *g, http_gate_handover_fn fn, void *cls, int tls)
    __attribute__((warn_unused_result));
/* Hand new connections to fn(cls, ...) from now on. When it returns, none reaches the previous
 * target any more (it may be stopped once its own connections are done). */
void http_gate_switch(struct http_gate *g, http_gate_handover_fn fn, void *cls, int tls);
/* Stop accepting (joins the thread). Safe on NULL or a gate never started. */
void http_gate_stop(struct http_gate *g);
/* Stop, close the listen socket and every waiting connection, free. Accepts NULL. */
void http_gate_free(struct http_gate *g);

#endif
