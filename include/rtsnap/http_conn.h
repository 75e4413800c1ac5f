/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_conn.h - one record per libmicrohttpd connection (its socket_context), and the
 * deadlines of the connections that wait for their clients (see http_conn.c).
 *
 * A listener's records form a set (struct http_conns, owned by its gate). A record is created
 * and freed by the worker thread that serves its connection (libmicrohttpd's
 * NOTIFY_CONNECTION); it is armed (listed under the set's lock, with a deadline) while the
 * connection waits for its client, and the gate's thread expires and evicts armed records by
 * shutting their sockets down, never by calling into libmicrohttpd.
 */
#ifndef RTSNAP_HTTP_CONN_H
#define RTSNAP_HTTP_CONN_H

#include <pthread.h>
#include <stdint.h>
#include <microhttpd.h>

/* How to make the thread that serves a connection run after MHD_resume_connection() from
 * another thread: fn(cls), any thread. */
struct http_wake {
	void (*fn)(void *cls);
	void *cls;
};

enum http_conn_phase {
	HTTP_CONN_OFF,	 /* not waiting for its client (being answered), not listed */
	HTTP_CONN_FIRST, /* from the handover: the rest of the first request is due */
	HTTP_CONN_IDLE,	 /* after a response: nothing is due (libmicrohttpd's idle timeout) */
	HTTP_CONN_LATER, /* a later request has begun: it is due --header-timeout later */
};

struct http_conns {
	pthread_mutex_t lock;
	struct http_conn *head, *tail; /* armed, in deadline order; under lock */
	unsigned int shut;	       /* shut down, not closed yet; under lock */
	unsigned int header_ms;	       /* --header-timeout */
};

struct auth_ticket;

struct http_conn {
	struct http_conns *set;
	struct http_conn *prev, *next; /* in set while armed; under set->lock */
	int fd;			       /* libmicrohttpd's socket, open until the record is freed */
	int phase;		       /* enum http_conn_phase; under set->lock */
	int shut;		       /* shut down, waiting for libmicrohttpd to close it */
	int64_t wait_ms;	       /* since when it has been waiting for its client */
	int64_t deadline_ms;
	/* The check of every request head in the bytes libmicrohttpd reads (worker thread
	 * only; see "Every request" in http_conn.c). */
	int tls;		  /* reads come decrypted through gnutls_record_recv() */
	int eof;		  /* the client closed its side; given after the held bytes */
	int pending;		  /* a request has begun and is not complete yet */
	uint64_t body_left;	  /* body bytes of the last checked head still to come */
	char *hold;		  /* read from the client, not given to libmicrohttpd yet */
	size_t hold_len, hold_ok; /* hold[0..hold_ok) is checked and may be given */
	unsigned int heads;	  /* heads checked and given */
	unsigned int dispatched;  /* requests dispatched (http_conn_refusal() calls) */
	unsigned int refused_at;  /* the refused head's place: its stand-in's request number */
	unsigned int refused;	  /* status of a refused head (its synthetic request follows) */
	int refused_ep;		  /* its endpoint, for the counters */
	const char *refused_why;
	const char *synth; /* the synthetic request still to give */
	size_t synth_left;
	/* a password check off the worker (http_auth.c, under its lock) */
	struct auth_ticket *auth; /* the request's ticket, until its verdict is read */
	int auth_ready;		  /* the ticket's done() was called */
	int auth_suspended;	  /* the connection is suspended until then */
	struct MHD_Connection *mhd;
	struct http_wake auth_wake;
};

/* Main thread: an empty set; header_ms is --header-timeout. */
void http_conns_init(struct http_conns *s, unsigned int header_ms);
/* Main thread, once no connection of the set is open. */
void http_conns_destroy(struct http_conns *s);

/* Worker thread, at NOTIFY_STARTED: conn's record, armed FIRST, or NULL (no memory: no
 * deadline for this connection). */
struct http_conn *http_conn_new(struct http_conns *s, struct MHD_Connection *conn);
/* Worker thread, at NOTIFY_CLOSED (before libmicrohttpd closes the fd). Accepts NULL. */
void http_conn_free(struct http_conn *c);
/* conn's record, or NULL. */
struct http_conn *http_conn_of(struct MHD_Connection *conn);
/* Worker thread, once per request, when its head has been parsed: the status (400, 405, 413,
 * 414, 431, 505) and reason the request gets, because its head broke a rule of
 * http_head_check() (libmicrohttpd was given a stand-in request instead, with Connection:
 * close); 0 if it did not. *ep is the refused request's endpoint, for the counters. */
unsigned int http_conn_refusal(struct MHD_Connection *conn, const char **why, int *ep);

/* MHD_OPTION_NOTIFY_COMPLETED callback (cls unused): a response was sent in full, so the
 * connection waits for its client's next request from now on. */
void http_conn_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe);
/* Worker thread, when conn's request is complete (or answered): its deadline no longer
 * applies (until the response has been sent). Cheap; fine to call more than once. */
void http_conn_request_complete(struct MHD_Connection *conn);

/* Gate thread: shut down armed connections past their deadline (counted in
 * http_request_timeouts); ms until the next deadline, or -1. An IDLE connection has none: it is
 * listed (it may be evicted) and looked at again a --header-timeout later. */
int64_t http_conns_expire(struct http_conns *s, int64_t now);
/*
 * Gate thread: shut down up to n armed connections, nearest their deadline first, minus those
 * already shut down and not closed yet (their slots are about to free); a FIRST one only
 * HTTP_CONN_EVICT_MIN_MS after its handover. Returns how many were shut down now (counted in
 * http_evicted).
 */
unsigned int http_conns_evict(struct http_conns *s, unsigned int n, int64_t now);

#define HTTP_CONN_EVICT_MIN_MS 100

#endif
