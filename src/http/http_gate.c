// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_gate.c - the accept side of a listener: connections wait here, outside libmicrohttpd,
 * until their first request head has arrived whole; then it is checked and the connection is
 * handed to a worker (http_worker.c, which adds it to its libmicrohttpd daemon), or answered
 * here with a JSON error.
 *
 * Why (issue 13): libmicrohttpd 0.9.75 gives every accepted connection one of its
 * --max-connections slots and its idle timer is reset by every byte, so 1 024 idle or
 * slowloris connections locked every other client out; and the errors it produces itself
 * (400, 413, 414, 431, 505) have fixed HTML bodies no API can change. Here:
 *   - a connection has --header-timeout seconds from accept to deliver a complete request
 *     head; trickling bytes does not extend it (408, JSON);
 *   - waiting connections cost an fd and a slot in this table, not a libmicrohttpd slot;
 *     when the table (--max-pending) is full, or accept() runs out of descriptors, the
 *     connection that has waited longest is closed to make room, so a new client that sends
 *     its request at once always gets in;
 *   - the head is read with MSG_PEEK, so libmicrohttpd later reads the same bytes itself; what
 *     it would refuse with HTML is refused here with the same status and a JSON body;
 *   - when libmicrohttpd's connections are all in use, a complete request waits a little for
 *     one (see "Eviction" below), then the answer is 503 (JSON), not a close.
 * Only the first request head of a connection is parsed here; what follows is libmicrohttpd's
 * (its own errors are made JSON by http_mhd_errors.c). But its idle timer is reset by every
 * byte, so a client that sends one valid request and then trickles the next could hold a
 * slot for ever: see "After the handover" below.
 *
 * TLS listeners (--web-config-file with a certificate): the bytes are encrypted, so the gate
 * does not parse a request head. It waits (--header-timeout, as above) for the first byte of
 * the client's first TLS record: a handshake record (0x16) is handed to libmicrohttpd, which
 * runs the handshake itself; a request in plain text gets a plain-text 400 saying the port
 * speaks TLS (what Go's servers do, so a misconfigured scraper says why it fails); anything
 * else is closed. From the handover on, libmicrohttpd's timeout bounds the handshake and the
 * head, and its connection limit is the only one (a 503 cannot be sent before the handshake:
 * a busy TLS listener closes the connection instead).
 *
 * The target (a set of workers, TLS or not) can change at run time (SIGHUP re-reads the web
 * configuration: http.c starts new workers and switches the gates to them). The gate
 * thread holds target_lock from its decision through the handover, so once
 * http_gate_switch() returns no connection reaches the previous daemon any more.
 *
 * After the handover, the connections' records and deadlines are http_conn.c's; this thread
 * expires them (http_conns_expire) and evicts from them.
 *
 * Eviction. A deadline bounds each hold, but a client can open connections faster than they
 * expire. When a new request is complete and every --max-connections slot is taken, it waits
 * (L_READY, at most GATE_READY_MS) while the gate shuts down armed connections, nearest their
 * deadline first (http_evicted; a first request only HTTP_CONN_EVICT_MIN_MS after its handover):
 * a connection between requests may be closed at any time (RFC 9112 9.5, and what Apache's
 * event MPM does when full), and one answering a request is never touched. Only when none
 * can be found does the new request get the 503. A freed slot wakes the gate (wakefd).
 * Handovers not yet started by libmicrohttpd (inflight) count as taken, so that a burst does
 * not hand over more connections than there are slots.
 *
 * The gate alone enforces --max-connections: libmicrohttpd's own limit is set far above it
 * (http.c), because a 0.9.75 worker that refuses a handed-over connection at its limit
 * (new_connection_process_, "Server reached connection limit") leaves its
 * cleanup_connection_mutex locked, and then hangs on the next request or at shutdown (fixed
 * in 1.0).
 *
 * One thread per listener runs an epoll loop over the listen socket, the waiting connections
 * (edge-triggered: a peek leaves the bytes in place), an eventfd that stops it and one that
 * wakes it. Waiting connections are kept in accept order, which is also deadline order;
 * answered ones (being drained so that closing does not reset the answer away) in a second
 * list, also in deadline order; complete ones waiting for a slot in a third. The thread owns
 * these lists; shared with the workers are the connection counts (atomics) and the records
 * of libmicrohttpd's connections (http_conn.c, under their set's lock).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rtsnap/http_conn.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_gate.h"
#include "rtsnap/http_head.h"
#include "rtsnap/log.h"
#include "rtsnap/stats.h"

#define GATE_DRAIN_MS 1000    /* after an answer, read until EOF for at most this */
#define GATE_WARN_MS 10000    /* at most one flood warning per listener this often */
#define GATE_READY_MS 1000    /* a complete request waits this long for a slot, then 503 */
#define GATE_READY_POLL_MS 50 /* while requests wait for a slot, look again this often */
#define NIL UINT32_MAX

enum { L_PENDING, L_DRAIN, L_READY, L__COUNT };
enum { ID_LISTEN, ID_STOP, ID_WAKE, ID__FIRST_CONN }; /* epoll data: slot i is i + ID__FIRST_CONN */

struct gate_conn {
	int fd; /* -1: free */
	int list;
	int64_t deadline_ms;
	uint32_t prev, next;
	socklen_t alen;
	struct sockaddr_storage addr;
};

struct http_gate {
	const char *name; /* the --listen value, for logs */
	int lfd, efd, stopfd, wakefd;
	pthread_mutex_t target_lock;
	http_gate_handover_fn handover; /* under target_lock */
	void *handover_cls;		/* under target_lock */
	int tls;			/* under target_lock */
	unsigned int conn_limit, header_ms;
	unsigned int mhd_conns; /* atomic: libmicrohttpd's open connections */
	int inflight;		/* atomic: handed over, not yet started by libmicrohttpd */
	int ready_waiting;	/* atomic: requests wait for a slot (wake the gate) */
	pthread_t thread;
	int running;
	int64_t accept_paused_until, last_warn_ms, last_evict_warn_ms;
	int64_t last_handover_ms;
	struct http_conns conns; /* libmicrohttpd's connections (http_conn.c) */
	uint32_t cap, nfree, free_head;
	uint32_t head[L__COUNT], tail[L__COUNT], count[L__COUNT];
	struct gate_conn *c;
	char buf[HTTP_HEAD_MAX + 1];
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the two lists ---- */

static void list_del(struct http_gate *g, uint32_t i)
{
	struct gate_conn *c = &g->c[i];
	int l = c->list;

	if (c->prev != NIL)
		g->c[c->prev].next = c->next;
	else
		g->head[l] = c->next;
	if (c->next != NIL)
		g->c[c->next].prev = c->prev;
	else
		g->tail[l] = c->prev;
	g->count[l]--;
}

static void list_add(struct http_gate *g, uint32_t i, int l, int64_t deadline)
{
	struct gate_conn *c = &g->c[i];

	c->list = l;
	c->deadline_ms = deadline;
	c->next = NIL;
	c->prev = g->tail[l];
	if (c->prev != NIL)
		g->c[c->prev].next = i;
	else
		g->head[l] = i;
	g->tail[l] = i;
	g->count[l]++;
}

/* Forget slot i; its fd is closed unless handed over (then already -1). */
static void conn_free(struct http_gate *g, uint32_t i)
{
	struct gate_conn *c = &g->c[i];

	list_del(g, i);
	if (c->fd >= 0)
		close(c->fd); /* also removes it from the epoll set */
	c->fd = -1;
	c->next = g->free_head;
	g->free_head = i;
	g->nfree++;
}

/* ---- answers ---- */

static const char *reason(unsigned int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}

/*
 * Answer slot i with status and a JSON error (msg: a fixed ASCII text), then drain it: the
 * bytes already received are discarded, our side is shut down, and what else arrives is read
 * until EOF, so that close() does not turn into a reset that destroys the answer in flight.
 */
static void answer(struct http_gate *g, uint32_t i, unsigned int status, const char *msg,
		   int head_only, const char *path, size_t path_len)
{
	struct gate_conn *c = &g->c[i];
	char resp[512], body[160];
	int bl, n;

	bl = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", msg);
	n = snprintf(
	    resp, sizeof(resp),
	    "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
	    "Cache-Control: no-cache\r\nConnection: close\r\n%sContent-Length: %d\r\n\r\n%s",
	    status, reason(status), status == 405 ? "Allow: GET, HEAD\r\n" : "", bl,
	    head_only ? "" : body);
	(void)!send(c->fd, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	http_count_status(path, path_len, status);
	while (recv(c->fd, g->buf, sizeof(g->buf), MSG_DONTWAIT) > 0)
		;
	shutdown(c->fd, SHUT_WR);
	list_del(g, i);
	list_add(g, i, L_DRAIN, mono_ms() + GATE_DRAIN_MS);
}

/* libmicrohttpd slots not taken (open connections and handovers it has not started yet). */
static int slots_free(struct http_gate *g, int64_t now)
{
	int used = (int)__atomic_load_n(&g->mhd_conns, __ATOMIC_RELAXED);
	int inflight = __atomic_load_n(&g->inflight, __ATOMIC_RELAXED);

	/* a handover that libmicrohttpd dropped before starting it is never notified */
	if (inflight > 0 && now - g->last_handover_ms > 1000)
		__atomic_store_n(&g->inflight, inflight = 0, __ATOMIC_RELAXED);
	return (int)g->conn_limit - used - (inflight > 0 ? inflight : 0);
}

/* Hand slot i to libmicrohttpd (target_lock held). Its own limit is far above ours (http.c),
 * so it does not refuse for want of a slot. */
static void hand_over(struct http_gate *g, uint32_t i, int64_t now)
{
	struct gate_conn *c = &g->c[i];
	int fd = c->fd;

	epoll_ctl(g->efd, EPOLL_CTL_DEL, fd, NULL);
	c->fd = -1; /* libmicrohttpd's now, closed by it even on failure */
	conn_free(g, i);
	__atomic_add_fetch(&g->inflight, 1, __ATOMIC_RELAXED);
	g->last_handover_ms = now;
	if (g->handover(g->handover_cls, fd, (struct sockaddr *)&c->addr, c->alen) < 0) {
		__atomic_sub_fetch(&g->inflight, 1, __ATOMIC_RELAXED);
		http_count_add(HTTP_C_BUSY, 1);
	}
}

/* Slot i has a complete request: hand it over if a slot is free and nobody waits before it,
 * else let it wait for one (admit() evicts, hands over, and answers 503 at the deadline). */
static void ready(struct http_gate *g, uint32_t i)
{
	int64_t now = mono_ms();

	if (g->head[L_READY] == NIL && slots_free(g, now) > 0) {
		hand_over(g, i, now);
		return;
	}
	list_del(g, i);
	list_add(g, i, L_READY, now + GATE_READY_MS);
	__atomic_store_n(&g->ready_waiting, 1, __ATOMIC_RELAXED);
}

/* A TLS listener's slot i is readable: look at the first byte only (see the top). */
static void on_readable_tls(struct http_gate *g, uint32_t i)
{
	unsigned char b;
	ssize_t n = recv(g->c[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_free(g, i);
		return;
	}
	if (n == 0) {
		conn_free(g, i);
		return;
	}
	if (b == 0x16) { /* TLS handshake record */
		ready(g, i);
		return;
	}
	if (b >= 'A' && b <= 'Z') {
		answer(g, i, 400, "this port speaks TLS only: use https://", 0, NULL, 0);
		return;
	}
	conn_free(g, i);
}

/* Slot i is readable (or hung up): peek at what has arrived and decide. */
static void on_readable_plain(struct http_gate *g, uint32_t i)
{
	struct gate_conn *c = &g->c[i];
	struct http_head h;
	ssize_t n;
	size_t he;

	if (c->list == L_DRAIN) {
		while ((n = recv(c->fd, g->buf, sizeof(g->buf), MSG_DONTWAIT)) > 0)
			;
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_free(g, i);
		return;
	}
	if (c->list == L_READY) { /* complete, waiting for a slot: only a hang-up matters */
		char b;

		n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_free(g, i);
		return;
	}
	n = recv(c->fd, g->buf, HTTP_HEAD_MAX, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_free(g, i);
		return;
	}
	if (n == 0) { /* closed before a request */
		conn_free(g, i);
		return;
	}
	he = http_head_end(g->buf, (size_t)n);
	if (!he) {
		if (n < HTTP_HEAD_MAX)
			return; /* wait for more (edge-triggered: woken by the next bytes) */
		const char *why;
		unsigned int st = http_head_too_long(g->buf, (size_t)n, &why);

		answer(g, i, st, why, 0, NULL, 0);
		return;
	}
	http_head_check(g->buf, he, &h);
	if (h.status) {
		answer(g, i, h.status, h.why, h.head_only, h.path, h.path_len);
		return;
	}
	ready(g, i);
}

static void on_readable(struct http_gate *g, uint32_t i)
{
	pthread_mutex_lock(&g->target_lock);
	if (g->c[i].list == L_PENDING && g->tls)
		on_readable_tls(g, i);
	else
		on_readable_plain(g, i);
	pthread_mutex_unlock(&g->target_lock);
}

/* ---- accepting ---- */

/* Close the connection that has waited longest (answered ones first, complete ones last).
 * 0 if there was none. */
static int shed_one(struct http_gate *g, int64_t now)
{
	uint32_t i = g->head[L_DRAIN];

	if (i == NIL)
		i = g->head[L_PENDING] != NIL ? g->head[L_PENDING] : g->head[L_READY];
	if (i == NIL)
		return 0;
	if (g->c[i].list != L_DRAIN)
		http_count_add(HTTP_C_SHED, 1);
	conn_free(g, i);
	if (now - g->last_warn_ms >= GATE_WARN_MS || !g->last_warn_ms) {
		g->last_warn_ms = now;
		log_warn("%s: %u connections waiting for their request: closing the oldest to "
			 "make room (shed so far: %llu)",
			 g->name, g->count[L_PENDING] + g->count[L_DRAIN] + g->count[L_READY],
			 (unsigned long long)http_count_get(HTTP_C_SHED));
	}
	return 1;
}

static void on_accept(struct http_gate *g)
{
	for (int k = 0; k < 256; k++) {
		struct sockaddr_storage ss;
		socklen_t alen = sizeof(ss);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET };
		int64_t now = mono_ms();
		uint32_t i;
		int fd;

		fd = accept4(g->lfd, (struct sockaddr *)&ss, &alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				if (shed_one(g, now))
					continue;
				g->accept_paused_until = now + 100; /* nothing to give back */
				epoll_ctl(g->efd, EPOLL_CTL_DEL, g->lfd, NULL);
			}
			return; /* EAGAIN, or a connection that went away (ECONNABORTED...) */
		}
		if (!g->nfree)
			shed_one(g, now);
		i = g->free_head;
		g->free_head = g->c[i].next;
		g->nfree--;
		g->c[i].fd = fd;
		g->c[i].alen = alen;
		memcpy(&g->c[i].addr, &ss, alen);
		list_add(g, i, L_PENDING, now + g->header_ms);
		ev.data.u64 = (uint64_t)i + ID__FIRST_CONN;
		if (epoll_ctl(g->efd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			conn_free(g, i);
			continue;
		}
		on_readable(g, i); /* the request may be there already */
	}
}

/* A complete request in slot i found no slot in time: 503 (on TLS: closed, no session yet). */
static void ready_expired(struct http_gate *g, uint32_t i, int tls)
{
	ssize_t n = tls ? -1 : recv(g->c[i].fd, g->buf, HTTP_HEAD_MAX, MSG_PEEK | MSG_DONTWAIT);
	struct http_head h = { 0 };

	http_count_add(HTTP_C_BUSY, 1);
	if (n <= 0) {
		conn_free(g, i);
		return;
	}
	http_head_check(g->buf, http_head_end(g->buf, (size_t)n),
			&h); /* checked before: for the counter */
	answer(g, i, 503, "too many connections", h.head_only, h.path, h.path_len);
}

/*
 * Complete requests waiting for a slot (target_lock held): hand over as many as there are
 * free slots, in arrival order; for the rest, evict connections that wait for their clients
 * (see the top). Returns ms until it should run again (-1: nothing waits).
 */
static int64_t admit(struct http_gate *g, int64_t now)
{
	int free_slots;

	if (g->head[L_READY] == NIL)
		return -1;
	free_slots = slots_free(g, now);
	for (; g->head[L_READY] != NIL && free_slots > 0; free_slots--)
		hand_over(g, g->head[L_READY], now);
	if (g->head[L_READY] == NIL) {
		__atomic_store_n(&g->ready_waiting, 0, __ATOMIC_RELAXED);
		return -1;
	}
	if (http_conns_evict(&g->conns, g->count[L_READY], now) && /* free_slots is 0 here */
	    (now - g->last_evict_warn_ms >= GATE_WARN_MS || !g->last_evict_warn_ms)) {
		g->last_evict_warn_ms = now;
		log_warn("%s: every connection slot is in use: closing connections that wait for "
			 "their clients to let new requests in (evicted so far: %llu)",
			 g->name, (unsigned long long)http_count_get(HTTP_C_EVICTED));
	}
	return GATE_READY_POLL_MS;
}

static void next_at(int64_t *next, int64_t in)
{
	if (in >= 0 && (*next < 0 || in < *next))
		*next = in;
}

/* Answer or close what is past its deadline, admit waiting requests; returns ms until
 * something is due (-1: nothing). */
static int expire(struct http_gate *g, int64_t now)
{
	int64_t next = -1;
	int tls;

	pthread_mutex_lock(&g->target_lock);
	tls = g->tls;
	while (g->head[L_PENDING] != NIL && g->c[g->head[L_PENDING]].deadline_ms <= now) {
		http_count_add(HTTP_C_HEADER_TIMEOUTS, 1);
		if (tls) /* no TLS session yet: a plain-text 408 would be noise */
			conn_free(g, g->head[L_PENDING]);
		else
			answer(g, g->head[L_PENDING], 408, "request head not received in time", 0,
			       NULL, 0);
	}
	while (g->head[L_DRAIN] != NIL && g->c[g->head[L_DRAIN]].deadline_ms <= now)
		conn_free(g, g->head[L_DRAIN]);
	next_at(&next, http_conns_expire(&g->conns, now));
	next_at(&next, admit(g, now));
	while (g->head[L_READY] != NIL && g->c[g->head[L_READY]].deadline_ms <= now)
		ready_expired(g, g->head[L_READY], tls);
	if (g->head[L_READY] == NIL)
		__atomic_store_n(&g->ready_waiting, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g->target_lock);
	for (int l = 0; l < L__COUNT; l++)
		if (g->head[l] != NIL)
			next_at(&next, g->c[g->head[l]].deadline_ms - now);
	/* a connection armed while we sleep is due --header-timeout later: never sleep longer */
	next_at(&next, g->header_ms);
	if (g->accept_paused_until) {
		if (g->accept_paused_until <= now) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ID_LISTEN };

			g->accept_paused_until = 0;
			epoll_ctl(g->efd, EPOLL_CTL_ADD, g->lfd, &ev);
		} else if (next < 0 || g->accept_paused_until - now < next) {
			next = g->accept_paused_until - now;
		}
	}
	return next < 0 ? -1 : (int)(next > 60000 ? 60000 : next);
}

static void *gate_thread(void *arg)
{
	struct http_gate *g = arg;
	struct epoll_event evs[64];

	for (;;) {
		int timeout = expire(g, mono_ms());
		int n = epoll_wait(g->efd, evs, 64, timeout);

		for (int k = 0; k < n; k++) {
			uint64_t id = evs[k].data.u64, v;

			if (id == ID_STOP)
				return NULL;
			if (id == ID_WAKE) /* a slot freed: admit() runs next */
				(void)!read(g->wakefd, &v, sizeof(v));
			else if (id == ID_LISTEN)
				on_accept(g);
			else if (g->c[id - ID__FIRST_CONN].fd >= 0)
				on_readable(g, (uint32_t)(id - ID__FIRST_CONN));
		}
	}
}

/* ---- lifecycle ---- */

int http_gate_new(const char *name, int listen_fd, const struct http_gate_opts *o,
		  struct http_gate **out)
{
	struct http_gate *g = calloc(1, sizeof(*g));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!g)
		return -ENOMEM;
	g->name = name;
	g->lfd = listen_fd;
	pthread_mutex_init(&g->target_lock, NULL);
	g->stopfd = g->wakefd = -1;
	g->cap = o->max_pending ? o->max_pending : 1;
	g->conn_limit = o->conn_limit;
	g->header_ms = o->header_timeout_s * 1000;
	http_conns_init(&g->conns, g->header_ms);
	g->c = calloc(g->cap, sizeof(*g->c));
	g->efd = epoll_create1(EPOLL_CLOEXEC);
	g->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!g->c || g->efd < 0 || g->stopfd < 0 || g->wakefd < 0)
		goto fail;
	for (uint32_t i = 0; i < g->cap; i++) {
		g->c[i].fd = -1;
		g->c[i].next = i + 1 < g->cap ? i + 1 : NIL;
	}
	g->free_head = 0;
	g->nfree = g->cap;
	for (int l = 0; l < L__COUNT; l++)
		g->head[l] = g->tail[l] = NIL;
	ev.data.u64 = ID_LISTEN;
	if (epoll_ctl(g->efd, EPOLL_CTL_ADD, g->lfd, &ev) < 0)
		goto fail;
	ev.data.u64 = ID_STOP;
	if (epoll_ctl(g->efd, EPOLL_CTL_ADD, g->stopfd, &ev) < 0)
		goto fail;
	ev.data.u64 = ID_WAKE;
	if (epoll_ctl(g->efd, EPOLL_CTL_ADD, g->wakefd, &ev) < 0)
		goto fail;
	*out = g;
	return 0;
fail:
	g->lfd = -1; /* the caller still owns it */
	http_gate_free(g);
	return -ENOMEM;
}

void http_gate_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		      enum MHD_ConnectionNotificationCode toe)
{
	struct http_gate *g = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		__atomic_add_fetch(&g->mhd_conns, 1, __ATOMIC_RELAXED);
		if (__atomic_sub_fetch(&g->inflight, 1, __ATOMIC_RELAXED) < 0)
			__atomic_store_n(&g->inflight, 0, __ATOMIC_RELAXED); /* was reset */
		*socket_context = http_conn_new(&g->conns, conn);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		http_conn_free(*socket_context); /* before libmicrohttpd closes the fd */
		*socket_context = NULL;
		__atomic_sub_fetch(&g->mhd_conns, 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&g->ready_waiting, __ATOMIC_RELAXED)) {
			uint64_t one = 1;

			(void)!write(g->wakefd, &one, sizeof(one));
		}
	}
}

int http_gate_start(struct http_gate *g, http_gate_handover_fn fn, void *cls, int tls)
{
	int ret;

	g->handover = fn;
	g->handover_cls = cls;
	g->tls = tls;
	ret = pthread_create(&g->thread, NULL, gate_thread, g);
	if (ret)
		return -ret;
	g->running = 1;
	return 0;
}

void http_gate_switch(struct http_gate *g, http_gate_handover_fn fn, void *cls, int tls)
{
	pthread_mutex_lock(&g->target_lock);
	g->handover = fn;
	g->handover_cls = cls;
	g->tls = tls;
	pthread_mutex_unlock(&g->target_lock);
}

void http_gate_stop(struct http_gate *g)
{
	uint64_t one = 1;

	if (!g || !g->running)
		return;
	(void)!write(g->stopfd, &one, sizeof(one));
	pthread_join(g->thread, NULL);
	g->running = 0;
}

void http_gate_free(struct http_gate *g)
{
	if (!g)
		return;
	http_gate_stop(g);
	for (uint32_t i = 0; g->c && i < g->cap; i++)
		if (g->c[i].fd >= 0)
			close(g->c[i].fd);
	free(g->c);
	if (g->efd >= 0)
		close(g->efd);
	if (g->stopfd >= 0)
		close(g->stopfd);
	if (g->wakefd >= 0)
		close(g->wakefd);
	if (g->lfd >= 0)
		close(g->lfd);
	pthread_mutex_destroy(&g->target_lock);
	http_conns_destroy(&g->conns);
	free(g);
}
