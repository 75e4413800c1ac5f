// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_conn.c - the record of each libmicrohttpd connection, and the deadlines of those that
 * wait for their clients (see http_conn.h).
 *
 * After the handover (kept-alive connections). libmicrohttpd tells us when it takes a
 * connection (MHD_CONNECTION_NOTIFY_STARTED), when a response has been sent in full
 * (MHD_OPTION_NOTIFY_COMPLETED) and, before it closes the socket, that it closes it
 * (MHD_CONNECTION_NOTIFY_CLOSED); the dispatcher tells us when a request is complete and about
 * to be answered. Each connection has a struct http_conn in its socket_context, which is
 * "armed" (in its set, under the set's lock) while the connection waits for its client, i.e.
 * from the handover or the end of a response until the next request is complete:
 *   - FIRST, from the handover: the rest of the first request (its body; on TLS the handshake
 *     and the head) must arrive within --header-timeout;
 *   - IDLE, after a response on a kept-alive connection: nothing is due; an idle connection is
 *     closed by libmicrohttpd's own timer (--http-timeout);
 *   - LATER: a later request has begun (its first bytes were read, below, or they came
 *     before the previous response ended): it must be complete within --header-timeout.
 * Past its deadline a connection is shut down (shutdown(SHUT_RDWR), counted in
 * http_request_timeouts). Its worker sees the hang-up and closes it on its own thread; the
 * record leaves the list in NOTIFY_CLOSED, under the lock, which libmicrohttpd 0.9.75 calls
 * before it closes the fd (MHD_cleanup_connections, and the failure path of
 * new_connection_process_), so an fd in the list cannot have been closed and reused. A
 * deadline is always now + --header-timeout when armed, so the list in arm order is in
 * deadline order.
 *
 * Eviction (the gate, when every --max-connections slot is taken and a new request waits):
 * armed connections are shut down nearest their deadline first: a connection between requests
 * may be closed at any time (RFC 9112 9.5, and what Apache's event MPM does when full), and
 * one answering a request is never touched.
 *
 * Every request. The gate checks the first request head of a plain connection; libmicrohttpd
 * parses the others (later requests on a kept-alive connection, and every request on TLS),
 * and 0.9.75 parses them laxly: a later "Content-Length: +5", "0, 7" or "0x5" made it send
 * its error's head twice (transmit_error_response() builds the head, then the state machine,
 * which parse_connection_headers() returned to, builds it again), and it accepts HTTP/1.2, a
 * NUL in the path, differing duplicate Content-Lengths, Content-Length with Transfer-Encoding.
 * So the bytes libmicrohttpd reads pass through here first: this file defines recv() and
 * gnutls_record_recv(), which libmicrohttpd calls through its PLT (Debian's build, as for
 * MHD_queue_response in http_mhd_errors.c; every other caller, and every fd without a record,
 * gets the real call). Each head is held back until it is complete and has passed
 * http_head_check(), the gate's rules; a Content-Length body is counted through. A head that
 * breaks a rule, and everything after it, never reaches libmicrohttpd: it is given a stand-in
 * request ("GET / HTTP/1.1" with Connection: close, HEAD for a HEAD) whose dispatch answers
 * with the refusal's status and JSON error (http_conn_refusal), once, and closes. An
 * incomplete head arms the connection's deadline (LATER), so a pipelined request that never
 * completes is closed after --header-timeout, not after --http-timeout. On a TLS connection
 * the raw recv() is GnuTLS's own and passes through.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <dlfcn.h>
#include <gnutls/gnutls.h>

#include "rtsnap/auth.h"
#include "rtsnap/http_conn.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_head.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

#define HOLD_CAP (HTTP_HEAD_MAX + 4096) /* an incomplete head, and what came with its end */
#define DRAIN_MAX (64 * 1024)		/* read and dropped after a refused head, at most */

static const char s_synth_get[] = "GET / HTTP/1.1\r\nHost: -\r\nConnection: close\r\n\r\n";
static const char s_synth_head[] = "HEAD / HTTP/1.1\r\nHost: -\r\nConnection: close\r\n\r\n";

/* The records by fd, for the recv() hooks: written by the worker that owns the fd (at start
 * and before close), read by the same worker. */
static struct http_conn **s_byfd;
static unsigned int s_nfd;
static pthread_once_t s_byfd_once = PTHREAD_ONCE_INIT;

static void byfd_init(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1 << 20;
	if (rl.rlim_cur > 1 << 24)
		rl.rlim_cur = 1 << 24;
	s_byfd = calloc(rl.rlim_cur, sizeof(*s_byfd));
	s_nfd = s_byfd ? (unsigned int)rl.rlim_cur : 0;
}

static struct http_conn *byfd(int fd)
{
	if (fd < 0 || (unsigned int)fd >= __atomic_load_n(&s_nfd, __ATOMIC_ACQUIRE))
		return NULL;
	return __atomic_load_n(&s_byfd[fd], __ATOMIC_ACQUIRE);
}

void http_conns_init(struct http_conns *s, unsigned int header_ms)
{
	pthread_once(&s_byfd_once, byfd_init);
	pthread_mutex_init(&s->lock, NULL);
	s->head = s->tail = NULL;
	s->shut = 0;
	s->header_ms = header_ms;
}

void http_conns_destroy(struct http_conns *s)
{
	pthread_mutex_destroy(&s->lock);
}

/* Lock held: take c out of the list (it must be armed). */
static void unlink_locked(struct http_conns *s, struct http_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	c->prev = c->next = NULL;
	c->phase = HTTP_CONN_OFF;
}

/* Lock held: arm c (not armed) in phase, due at now + --header-timeout. */
static void append_locked(struct http_conns *s, struct http_conn *c, int phase, int64_t now)
{
	c->phase = phase;
	c->deadline_ms = now + s->header_ms;
	c->next = NULL;
	c->prev = s->tail;
	if (c->prev)
		c->prev->next = c;
	else
		s->head = c;
	s->tail = c;
}

/* Lock held: shut c's socket down (c not armed); libmicrohttpd closes it. */
static void shutdown_locked(struct http_conns *s, struct http_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->shut = 1;
	s->shut++;
}

/* Any thread: c starts waiting for its client (phase FIRST or IDLE). */
static void arm(struct http_conn *c, int phase)
{
	struct http_conns *s = c->set;
	int64_t now;

	pthread_mutex_lock(&s->lock);
	now = snapshot_now_ms(); /* under the lock: deadlines are appended in order */
	if (!c->shut) {
		if (c->phase != HTTP_CONN_OFF)
			unlink_locked(s, c);
		c->wait_ms = now;
		append_locked(s, c, phase, now);
	}
	pthread_mutex_unlock(&s->lock);
}

struct http_conn *http_conn_new(struct http_conns *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct http_conn *c = ci ? calloc(1, sizeof(*c)) : NULL;

	if (!c)
		return NULL;
	c->set = s;
	c->fd = ci->connect_fd;
	c->tls = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION) != NULL;
	arm(c, HTTP_CONN_FIRST);
	if (c->fd >= 0 && (unsigned int)c->fd < s_nfd)
		__atomic_store_n(&s_byfd[c->fd], c, __ATOMIC_RELEASE);
	return c;
}

void http_conn_free(struct http_conn *c)
{
	struct http_conns *s;

	if (!c)
		return;
	if (c->fd >= 0 && (unsigned int)c->fd < s_nfd && s_byfd[c->fd] == c)
		__atomic_store_n(&s_byfd[c->fd], NULL, __ATOMIC_RELEASE);
	s = c->set;
	pthread_mutex_lock(&s->lock);
	if (c->phase != HTTP_CONN_OFF)
		unlink_locked(s, c);
	if (c->shut)
		s->shut--;
	pthread_mutex_unlock(&s->lock);
	free(c->hold);
	auth_ticket_free(c->auth); /* a verdict never read (a check is never pending here) */
	free(c);
}

struct http_conn *http_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void http_conn_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_conn *c = http_conn_of(conn);

	(void)cls;
	(void)req_cls;
	/* a next request that came with this one and is not complete yet is due now */
	if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		arm(c, c->pending ? HTTP_CONN_LATER : HTTP_CONN_IDLE);
}

void http_conn_request_complete(struct MHD_Connection *conn)
{
	struct http_conn *c = http_conn_of(conn);
	struct http_conns *s;

	if (!c)
		return;
	s = c->set;
	pthread_mutex_lock(&s->lock);
	if (c->phase != HTTP_CONN_OFF)
		unlink_locked(s, c);
	pthread_mutex_unlock(&s->lock);
}

int64_t http_conns_expire(struct http_conns *s, int64_t now)
{
	struct http_conn *c;
	int64_t next = -1;

	pthread_mutex_lock(&s->lock);
	while ((c = s->head) && c->deadline_ms <= now) {
		int phase = c->phase;

		unlink_locked(s, c);
		if (phase == HTTP_CONN_IDLE) { /* owes nothing: stays evictable */
			append_locked(s, c, phase, now);
			continue;
		}
		http_count_add(phase == HTTP_CONN_FIRST ? HTTP_C_REQUEST_TIMEOUT_FIRST
							: HTTP_C_REQUEST_TIMEOUT_LATER,
			       1);
		shutdown_locked(s, c);
	}
	if (s->head)
		next = s->head->deadline_ms - now;
	pthread_mutex_unlock(&s->lock);
	return next;
}

unsigned int http_conns_evict(struct http_conns *s, unsigned int n, int64_t now)
{
	struct http_conn *c, *next;
	unsigned int got = 0;

	pthread_mutex_lock(&s->lock);
	n = n > s->shut ? n - s->shut : 0;
	for (c = s->head; c && got < n; c = next) {
		next = c->next;
		/* a first request gets a moment from the handover to its handler (a TLS
		 * handshake, a worker busy with another request) */
		if (c->phase == HTTP_CONN_FIRST && now - c->wait_ms < HTTP_CONN_EVICT_MIN_MS)
			continue;
		unlink_locked(s, c);
		shutdown_locked(s, c);
		got++;
	}
	pthread_mutex_unlock(&s->lock);
	if (got)
		http_count_add(HTTP_C_EVICTED, got);
	return got;
}

unsigned int http_conn_refusal(struct MHD_Connection *conn, const char **why, int *ep)
{
	struct http_conn *c = http_conn_of(conn);

	if (!c)
		return 0;
	c->dispatched++;
	if (!c->refused || c->dispatched != c->refused_at)
		return 0;
	*why = c->refused_why;
	*ep = c->refused_ep;
	return c->refused;
}

/* ---- every request: the recv() hooks ---- */

/* What a read from the client gave: bytes, the end of its stream, no data now, an error. */
enum { RD_AGAIN = -1, RD_ERROR = -2 };

struct source {
	int fd;
	gnutls_session_t ses; /* NULL: plain */
	ssize_t err;	      /* RD_ERROR: what to return (plain: -1 with errno; TLS: the code) */
	int saved_errno;
};

static ssize_t (*s_gnutls_recv)(gnutls_session_t, void *, size_t);

/* Read from the client: > 0 bytes, 0 at the end of its stream, RD_AGAIN or RD_ERROR. */
static ssize_t rd(struct source *src, void *buf, size_t len)
{
	ssize_t n;

	if (!src->ses) {
		n = recvfrom(src->fd, buf, len, 0, NULL, NULL);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return RD_AGAIN;
		src->saved_errno = errno;
		src->err = -1;
		return RD_ERROR;
	}
	n = s_gnutls_recv(src->ses, buf, len);
	if (n >= 0)
		return n;
	if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
		return RD_AGAIN;
	src->err = n;
	return RD_ERROR;
}

/* A request has begun and is not complete: its deadline runs (the first request's runs from
 * the handover; an idle connection's starts now). */
static void begun(struct http_conn *c)
{
	struct http_conns *s = c->set;

	c->pending = 1;
	pthread_mutex_lock(&s->lock);
	if (c->phase == HTTP_CONN_IDLE && !c->shut) {
		int64_t now = snapshot_now_ms();

		unlink_locked(s, c);
		append_locked(s, c, HTTP_CONN_LATER, now);
	}
	pthread_mutex_unlock(&s->lock);
}

/* Refuse the head at p (h: its verdict; status and why when h is NULL): libmicrohttpd gets the
 * stand-in request instead of it and of everything after it. */
static void refuse(struct http_conn *c, const struct http_head *h, unsigned int status,
		   const char *why)
{
	int head_only = h ? h->head_only : 0;

	c->refused = h ? h->status : status;
	c->refused_at = c->heads + 1;
	c->refused_why = h ? h->why : why;
	c->refused_ep = h && h->path ? http_endpoint_of(h->path, h->path_len) : HTTP_EP_OTHER;
	c->synth = head_only ? s_synth_head : s_synth_get;
	c->synth_left = head_only ? sizeof(s_synth_head) - 1 : sizeof(s_synth_get) - 1;
	c->pending = 0;
}

/*
 * Check the bytes p[0..n) that follow what was checked before: returns how many of them may
 * be given to libmicrohttpd. It stops before an incomplete head (returned offset < n,
 * c->refused 0) or before a refused head (c->refused set).
 */
static size_t scan(struct http_conn *c, const char *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		struct http_head h;
		size_t e;

		if (c->body_left) {
			size_t k = n - off < c->body_left ? n - off : (size_t)c->body_left;

			off += k;
			c->body_left -= k;
			continue;
		}
		e = http_head_end(p + off, n - off);
		if (!e) {
			if (n - off >= HTTP_HEAD_MAX) {
				const char *why;
				unsigned int st = http_head_too_long(p + off, n - off, &why);

				refuse(c, NULL, st, why);
			}
			return off;
		}
		http_head_check(p + off, e, &h);
		if (h.status) {
			refuse(c, &h, 0, NULL);
			return off;
		}
		off += e;
		c->heads++;
		c->body_left = h.body;
	}
	c->pending = c->body_left != 0;
	return off;
}

/* After a refusal: drop what the client sent after the refused head (some of it), so that
 * closing the connection is less likely to reset the answer away. */
static void drain(struct source *src)
{
	char buf[4096];
	size_t got = 0;
	ssize_t n;

	while (got < DRAIN_MAX && (n = rd(src, buf, sizeof(buf))) > 0)
		got += (size_t)n;
}

/* Give libmicrohttpd what is held and checked, then the stand-in request; 0 if neither. */
static size_t give_held(struct http_conn *c, char *buf, size_t len)
{
	size_t n;

	if (c->hold_ok) {
		n = c->hold_ok < len ? c->hold_ok : len;
		memcpy(buf, c->hold, n);
		memmove(c->hold, c->hold + n, c->hold_len - n);
		c->hold_len -= n;
		c->hold_ok -= n;
		return n;
	}
	if (c->refused && c->synth_left) {
		n = c->synth_left < len ? c->synth_left : len;
		memcpy(buf, c->synth, n);
		c->synth += n;
		c->synth_left -= n;
		return n;
	}
	return 0;
}

/*
 * The filter: up to len bytes for libmicrohttpd in buf, or 0 at the end of the client's
 * stream, RD_AGAIN or RD_ERROR (see the top of this file).
 */
static ssize_t filter(struct http_conn *c, struct source *src, char *buf, size_t len)
{
	ssize_t n;
	size_t k, v;

	if (!len)
		return 0;
	k = give_held(c, buf, len);
	if (k)
		return (ssize_t)k;
	if (c->refused) { /* everything after the refused head is dropped */
		drain(src);
		return RD_AGAIN;
	}
	if (c->eof)
		return 0;
	if (!c->hold_len) {
		/* nothing held: read into libmicrohttpd's buffer and check it in place */
		n = rd(src, buf, len);
		if (n <= 0)
			return n;
		v = scan(c, buf, (size_t)n);
		if (v == (size_t)n)
			return n;
		if (c->refused) {
			drain(src);
			k = give_held(c, buf + v, len - v);
			return (ssize_t)(v + k);
		}
		/* an incomplete head from v on: held back until it is complete */
		if (!c->hold)
			c->hold = malloc(HOLD_CAP);
		if (!c->hold) {
			refuse(c, NULL, 503, "out of memory");
			return (ssize_t)(v + give_held(c, buf + v, len - v));
		}
		memcpy(c->hold, buf + v, (size_t)n - v);
		c->hold_len = (size_t)n - v;
		begun(c);
		if (v)
			return (ssize_t)v;
	}
	/* an incomplete head is held: read until it is complete, the client has nothing more
	 * for now, or it is too long */
	for (;;) {
		n = rd(src, c->hold + c->hold_len, HOLD_CAP - c->hold_len);
		if (n == 0) {
			c->eof = 1;
			c->hold_len = c->hold_ok; /* a head cut short is no request */
			break;
		}
		if (n < 0) {
			if (n == RD_AGAIN)
				begun(c);
			return n;
		}
		c->hold_len += (size_t)n;
		c->hold_ok += scan(c, c->hold + c->hold_ok, c->hold_len - c->hold_ok);
		if (c->refused) {
			c->hold_len = c->hold_ok;
			drain(src);
			break;
		}
		if (c->hold_ok)
			break;
		if (c->hold_len == HOLD_CAP) /* scan() refuses a head this long */
			break;
	}
	k = give_held(c, buf, len);
	return k ? (ssize_t)k : (c->eof ? 0 : RD_AGAIN);
}

/* libmicrohttpd's reads of a plain connection (and every other caller's, passed through). */
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct http_conn *c = flags ? NULL : byfd(fd);
	struct source src = { .fd = fd };
	ssize_t n;

	if (!c || c->tls)
		return recvfrom(fd, buf, len, flags, NULL, NULL);
	n = filter(c, &src, buf, len);
	if (n >= 0)
		return n;
	errno = n == RD_AGAIN ? EAGAIN : src.saved_errno;
	return -1;
}

/* libmicrohttpd's reads of a TLS connection (decrypted). */
ssize_t gnutls_record_recv(gnutls_session_t session, void *data, size_t data_size)
{
	ssize_t (*real)(gnutls_session_t, void *, size_t) =
	    __atomic_load_n(&s_gnutls_recv, __ATOMIC_ACQUIRE);
	struct source src = { .ses = session };
	struct http_conn *c;
	ssize_t n;

	if (!real) { /* racing threads find the same address */
		real = (ssize_t(*)(gnutls_session_t, void *, size_t))dlsym(RTLD_NEXT,
									   "gnutls_record_recv");
		if (!real)
			return GNUTLS_E_INTERNAL_ERROR;
		__atomic_store_n(&s_gnutls_recv, real, __ATOMIC_RELEASE);
	}
	src.fd = gnutls_transport_get_int(session);
	c = byfd(src.fd);
	if (!c || !c->tls)
		return real(session, data, data_size);
	n = filter(c, &src, data, data_size);
	if (n >= 0)
		return n;
	return n == RD_AGAIN ? GNUTLS_E_AGAIN : src.err;
}
