// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_events.c - /events (Server-Sent Events) and /changes: the change history of
 * events.c over HTTP. libmicrohttpd glue and the streams' life; the changes themselves are
 * rendered once by the collector (events.c), never per stream.
 *
 * A stream's state (struct stream, under its own lock):
 *   - cursor: the last generation it handed to libmicrohttpd; its queue is the history after
 *     that, which it does not copy: the bytes are the history's, shared by every unfiltered
 *     stream (a filtered one renders the event it is sending into its own buffer, one at a
 *     time).
 *   - suspended: the reader callback found nothing to send and suspended the connection
 *     (MHD_suspend_connection from the content reader, as libmicrohttpd allows).
 * Threads:
 *   - HTTP workers create a stream (http_ep_events), call its reader and free it (the
 *     response's free callback). The reader takes the next change with events_next() from
 *     its family's history (family=inet: the IPv4 instance's), never waits, and suspends its
 *     connection when there is nothing to send.
 *   - The fan-out thread (one) wakes when the collector recorded a change (eventfd) and at
 *     least once a second. Under s_lock it walks the streams: a suspended one with something
 *     to send (a new change, a heartbeat due, an end) is resumed; one more than
 *     --stream-queue bytes behind the newest event, or behind the oldest the history keeps,
 *     is told to resync and ends, and if it did not take that notice within a second (a
 *     client that stopped reading: its socket is full) its socket is shut down, as
 *     http_pin.c does for slow responses (the fd cannot have been reused: the free callback
 *     unlists the stream under s_lock before libmicrohttpd closes the socket).
 *   - The main thread ends the streams of an HTTP generation before its daemons stop
 *     (http_events_close): libmicrohttpd must not be stopped with a suspended connection.
 * Lock order: s_lock, then a stream's lock, then libmicrohttpd's own (suspend, resume). The
 * collector takes neither: it only writes the eventfd.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rtsnap/events.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_events.h"
#include "rtsnap/log.h"
#include "rtsnap/query.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/stats.h"

#define DROP_GRACE_MS 1000	   /* a dropped stream's notice not taken by then: shut it down */
#define MAX_CLOSING 64		   /* HTTP generations being retired at once (one per SIGHUP) */
#define RETRY_MS 2000		   /* the client's reconnection delay, announced at the start */
#define STREAM_SNDBUF (128 * 1024) /* the kernel doubles it */

enum resync_reason { RS_HISTORY, RS_UNKNOWN, RS_SLOW, RS_CHANGE, RS_EVICTED, RS__COUNT };
static const char *const s_reason[RS__COUNT] = { "history", "unknown", "slow", "change",
						 "evicted" };

struct stream {
	struct stream *prev, *next; /* under s_lock */
	pthread_mutex_t lock;
	struct MHD_Connection *conn;
	struct http_wake wake; /* its worker, after a resume */
	const void *owner;
	int fd;
	uint64_t id;	       /* its name in the hang-up watch (s_epfd) */
	unsigned int listener; /* whose --max-streams it counts against */
	int evicted, gone;     /* under s_lock and lock: for a newer stream; the client left */
	/* under lock */
	int suspended, ending, error, drop, closing, shut, hb;
	int64_t last_ms, drop_ms;
	uint64_t cursor, cum;
	struct events_change *cur; /* held while its text is handed out */
	const char *out;
	size_t out_len, out_off;
	struct strbuf buf; /* the start, a filtered event, a notice */
	struct query q;
	struct events_history *hist; /* the history it reads: its family's */
};

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream s_list = { .prev = &s_list, .next = &s_list };
static const void *s_closing[MAX_CLOSING];
static size_t s_queue = HTTP_EVENTS_QUEUE_DEFAULT;
static int64_t s_hb_ms = HTTP_EVENTS_HEARTBEAT_DEFAULT * 1000;
static int s_evfd = -1, s_epfd = -1, s_stop, s_running;
static unsigned int s_max_streams = UINT_MAX;	    /* per listener */
static unsigned int s_live[HTTP_EVENTS_MAX_LISTEN]; /* streams not evicted; under s_lock */
static uint64_t s_next_id = 1;			    /* under s_lock */
static pthread_t s_thread;
static struct events_history *s_hist;  /* set by http_events_start() */
static struct events_history *s_hist4; /* the IPv4 instance's, or NULL; likewise */

static struct { /* atomic */
	uint64_t open, opened, bytes, dropped, refused, heartbeats, evicted, hangups;
	uint64_t resyncs[RS__COUNT];
} s_st;

/* ---- one stream ---- */

static void out_done(struct stream *st)
{
	events_put(st->cur);
	st->cur = NULL;
	st->out = NULL;
	st->out_len = st->out_off = 0;
	st->buf.len = 0;
}

static void out_buf(struct stream *st)
{
	if (st->buf.failed) {
		st->error = 1; /* no memory: end it, the client comes back with its Last-Event-ID */
		st->ending = 1;
		return;
	}
	st->out = st->buf.buf;
	st->out_len = st->buf.len;
	st->out_off = 0;
}

static void notice(struct stream *st, uint64_t gen, enum resync_reason why)
{
	out_done(st);
	events_render_resync(gen, s_reason[why], &st->buf);
	out_buf(st);
	__atomic_add_fetch(&s_st.resyncs[why], 1, __ATOMIC_RELAXED);
}

/* Hand out change c (a reference the stream takes over). */
static void take(struct stream *st, struct events_change *c)
{
	st->cursor = c->generation;
	st->cum = c->cum;
	if (c->kind == EVENTS_RESYNC)
		__atomic_add_fetch(&s_st.resyncs[RS_CHANGE], 1, __ATOMIC_RELAXED);
	if (c->kind == EVENTS_RESYNC || !st->q.set) {
		st->cur = c; /* the history's own bytes */
		st->out = c->text;
		st->out_len = c->len;
		st->out_off = 0;
		return;
	}
	events_render(c, &st->q, &st->buf);
	events_put(c);
	out_buf(st);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct events_change *c;
	struct events_window w;
	size_t n = 0;
	int end = 0;

	(void)pos;
	pthread_mutex_lock(&st->lock);
	while (n < max) {
		if (st->out_off < st->out_len) {
			size_t k = st->out_len - st->out_off;

			if (k > max - n)
				k = max - n;
			memcpy(buf + n, st->out + st->out_off, k);
			n += k;
			st->out_off += k;
			continue;
		}
		out_done(st);
		if (st->ending) {
			end = 1;
			break;
		}
		if (st->closing) {
			st->ending = 1;
			continue;
		}
		if (st->gone) { /* the client hung up: nothing to send it */
			st->error = 1;
			st->ending = 1;
			continue;
		}
		if (st->drop) {
			events_window(st->hist, &w);
			notice(st, w.head, st->evicted ? RS_EVICTED : RS_SLOW);
			st->ending = 1;
			continue;
		}
		switch (events_next(st->hist, st->cursor, &c)) {
		case 0:
			take(st, c);
			continue;
		case -ERANGE: /* the history moved past it: start again from the newest */
			events_window(st->hist, &w);
			notice(st, w.head, RS_HISTORY);
			st->cursor = w.head;
			st->cum = w.cum_head;
			continue;
		default:
			break;
		}
		if (st->hb) {
			st->hb = 0;
			strbuf_puts(&st->buf, ":\n\n");
			out_buf(st);
			__atomic_add_fetch(&s_st.heartbeats, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!n) {
			st->suspended = 1; /* until the fan-out thread resumes it */
			MHD_suspend_connection(st->conn);
		}
		break;
	}
	if (n) {
		st->last_ms = snapshot_now_ms();
		__atomic_add_fetch(&s_st.bytes, n, __ATOMIC_RELAXED);
		http_count_add(HTTP_C_BYTES, n);
	}
	pthread_mutex_unlock(&st->lock);
	if (n)
		return (ssize_t)n;
	if (end)
		return st->error ? MHD_CONTENT_READER_END_WITH_ERROR
				 : MHD_CONTENT_READER_END_OF_STREAM;
	return 0;
}

static void unlist_locked(struct stream *st)
{
	st->prev->next = st->next;
	st->next->prev = st->prev;
	st->prev = st->next = st;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	pthread_mutex_lock(&s_lock); /* before libmicrohttpd closes the fd */
	if (st->next != st) {
		unlist_locked(st);
		__atomic_sub_fetch(&s_st.open, 1, __ATOMIC_RELAXED);
		if (!st->evicted)
			s_live[st->listener]--;
		if (st->fd >= 0)
			epoll_ctl(s_epfd, EPOLL_CTL_DEL, st->fd, NULL);
	}
	pthread_mutex_unlock(&s_lock);
	out_done(st);
	strbuf_free(&st->buf);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static int closing_locked(const void *owner)
{
	for (size_t i = 0; i < MAX_CLOSING; i++)
		if (s_closing[i] && s_closing[i] == owner)
			return 1;
	return 0;
}

/* ---- the fan-out thread ---- */

static void resume_locked(struct stream *st);

/*
 * s_lock held: make room for a new stream of listener l, whose --max-streams are all taken:
 * the oldest of them is sent a resync (evicted) and ends, and its socket is shut down if it
 * has not taken the notice within DROP_GRACE_MS (as a slow stream's).
 */
static void evict_oldest_locked(unsigned int l, int64_t now)
{
	for (struct stream *st = s_list.next; st != &s_list; st = st->next) {
		if (st->listener != l || st->evicted)
			continue;
		pthread_mutex_lock(&st->lock);
		st->evicted = 1;
		s_live[l]--;
		__atomic_add_fetch(&s_st.evicted, 1, __ATOMIC_RELAXED);
		if (!st->drop && !st->ending) {
			st->drop = 1;
			st->drop_ms = now;
		}
		if (st->suspended)
			resume_locked(st);
		pthread_mutex_unlock(&st->lock);
		return;
	}
}

static void wake_up(void)
{
	uint64_t one = 1;

	if (s_evfd >= 0 && write(s_evfd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wakeup is pending anyway */
	}
}

static void resume_locked(struct stream *st)
{
	st->suspended = 0;
	MHD_resume_connection(st->conn);
	st->wake.fn(st->wake.cls);
}

static void sweep(int64_t now)
{
	struct events_window w6, w4 = { 0 };

	events_window(s_hist, &w6);
	if (s_hist4)
		events_window(s_hist4, &w4);
	pthread_mutex_lock(&s_lock);
	for (struct stream *st = s_list.next; st != &s_list; st = st->next) {
		const struct events_window w = st->hist == s_hist ? w6 : w4;

		pthread_mutex_lock(&st->lock);
		if (!st->drop && !st->ending &&
		    (w.cum_head - st->cum > s_queue || st->cursor < w.base)) {
			st->drop = 1; /* fell behind: a notice, then the end */
			st->drop_ms = now;
			__atomic_add_fetch(&s_st.dropped, 1, __ATOMIC_RELAXED);
			log_debug("/events: a stream at generation %llu is %llu bytes behind "
				  "generation %llu: dropped",
				  (unsigned long long)st->cursor,
				  (unsigned long long)(w.cum_head - st->cum),
				  (unsigned long long)w.head);
		}
		if (st->drop && !st->shut && now - st->drop_ms >= DROP_GRACE_MS && st->fd >= 0) {
			shutdown(st->fd, SHUT_RDWR); /* it stopped reading */
			st->shut = 1;
		}
		if (st->suspended) {
			if (!st->drop && !st->closing && st->cursor >= w.head &&
			    now - st->last_ms >= s_hb_ms)
				st->hb = 1;
			if (st->drop || st->closing || st->hb || st->cursor < w.head)
				resume_locked(st);
		}
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&s_lock);
}

/* A stream's client hung up (its socket reported it to s_epfd): end the stream now, which
 * frees its connection's slot, rather than at its next event or heartbeat. */
static void hung_up(uint64_t id)
{
	pthread_mutex_lock(&s_lock);
	for (struct stream *st = s_list.next; st != &s_list; st = st->next) {
		if (st->id != id)
			continue;
		pthread_mutex_lock(&st->lock);
		if (!st->gone) {
			st->gone = 1;
			if (!st->drop && !st->ending && !st->closing) /* not told to end already */
				__atomic_add_fetch(&s_st.hangups, 1, __ATOMIC_RELAXED);
			if (st->suspended)
				resume_locked(st);
		}
		pthread_mutex_unlock(&st->lock);
		break;
	}
	pthread_mutex_unlock(&s_lock);
}

static void *fanout_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event evs[64];
		int n = epoll_wait(s_epfd, evs, 64, 1000);
		uint64_t v;

		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == 0) {
				if (read(s_evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					log_debug("/events: eventfd read: %s", strerror(errno));
				continue;
			}
			hung_up(evs[i].data.u64);
		}
		sweep(snapshot_now_ms());
	}
	return NULL;
}

int http_events_start(const struct http_events_opts *o)
{
	int ret;

	s_hist = o->history;
	s_hist4 = o->history4;
	if (o->queue_bytes)
		s_queue = o->queue_bytes;
	if (o->heartbeat_s)
		s_hb_ms = (int64_t)o->heartbeat_s * 1000;
	s_max_streams = o->max_streams;
	s_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s_evfd < 0 || s_epfd < 0) {
		ret = -errno;
		goto fail;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };

		if (epoll_ctl(s_epfd, EPOLL_CTL_ADD, s_evfd, &ev) < 0) {
			ret = -errno;
			goto fail;
		}
	}
	ret = pthread_create(&s_thread, NULL, fanout_main, NULL);
	if (ret) {
		ret = -ret;
		goto fail;
	}
	s_running = 1;
	events_set_notify(s_hist, wake_up);
	if (s_hist4)
		events_set_notify(s_hist4, wake_up);
	return 0;
fail:
	if (s_evfd >= 0)
		close(s_evfd);
	if (s_epfd >= 0)
		close(s_epfd);
	s_evfd = s_epfd = -1;
	return ret;
}

void http_events_stop(void)
{
	if (!s_running)
		return;
	events_set_notify(s_hist, NULL);
	if (s_hist4)
		events_set_notify(s_hist4, NULL);
	__atomic_store_n(&s_stop, 1, __ATOMIC_RELEASE);
	wake_up();
	pthread_join(s_thread, NULL);
	s_running = 0;
	close(s_epfd);
	s_epfd = -1;
	close(s_evfd);
	s_evfd = -1;
}

void http_events_close(const void *owner)
{
	pthread_mutex_lock(&s_lock);
	if (!closing_locked(owner)) {
		size_t i;

		for (i = 0; i < MAX_CLOSING && s_closing[i]; i++)
			;
		if (i < MAX_CLOSING)
			s_closing[i] = owner;
		else /* then a stream could still start on it before its daemons stop */
			log_warn("/events: more than %d HTTP configurations retiring at once",
				 MAX_CLOSING);
	}
	for (struct stream *st = s_list.next; st != &s_list; st = st->next) {
		if (st->owner != owner)
			continue;
		pthread_mutex_lock(&st->lock);
		st->closing = 1;
		if (st->suspended)
			resume_locked(st);
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&s_lock);
}

void http_events_closed(const void *owner)
{
	pthread_mutex_lock(&s_lock);
	for (size_t i = 0; i < MAX_CLOSING; i++)
		if (s_closing[i] == owner)
			s_closing[i] = NULL;
	pthread_mutex_unlock(&s_lock);
}

/* ---- endpoints ---- */

static const char *const s_params[] = { "table",    "dev",    "protocol", "type",
					"prefix",   "covers", "gateway",  "metric",
					"expiring", "since",  "family",	  NULL };

/* A generation: decimal, no sign, 1-20 digits, fits 64 bits. 0 or -EINVAL. */
static int parse_gen(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || strlen(s) > 20)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * family= of rq: the history to read (*hist), with rq->snap the snapshot of its instance
 * (the IPv4 one's for family=inet, whose filters then take IPv4 addresses). 1 to go on, 0
 * with an error queued in *res.
 */
static int parse_family(struct http_req *rq, struct events_history **hist, enum MHD_Result *res)
{
	const char *fam = http_arg(rq, "family");

	*hist = s_hist;
	if (!fam || !strcmp(fam, "inet6"))
		return 1;
	if (!strcmp(fam, "all")) {
		*res = http_send_error(rq, 400, "family=all is not served here yet: inet6 or inet");
		return 0;
	}
	if (strcmp(fam, "inet")) {
		*res = http_send_error(rq, 400,
				       "bad value for 'family': inet6 (the default), inet or all");
		return 0;
	}
	if (!s_hist4 || !rq->chain4) {
		*res = http_send_error(rq, 404,
				       "IPv4 is not followed: start rtsnapd with --family all");
		return 0;
	}
	snapshot_release(rq->snap);
	rq->snap = snapshot_acquire(rq->chain4);
	*hist = s_hist4;
	return 1;
}

/* The filters, family= and since= of rq into q, *hist and *since: 1 to go on, 0 with an error
 * queued in *res. */
static int parse_args(struct http_req *rq, struct query *q, const char **since,
		      struct events_history **hist, enum MHD_Result *res)
{
	const char *bad = NULL;
	char err[256];

	if (http_args_check(rq, s_params, res))
		return 0;
	MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, http_find_nul, &bad);
	if (bad) {
		*res = http_send_error(rq, 400, "query parameter '%.64s' contains a NUL byte", bad);
		return 0;
	}
	if (!parse_family(rq, hist, res) || http_no_snapshot(rq, res))
		return 0;
	memset(q, 0, sizeof(*q));
	if (*hist != s_hist)
		q->family = AF_INET; /* prefix=, covers= and gateway= take IPv4 values */
	*since = NULL;
	for (unsigned int i = 0; i < rq->nargs; i++) {
		if (strcmp(rq->args[i].key, "family") == 0)
			continue;
		if (strcmp(rq->args[i].key, "since") == 0) {
			*since = rq->args[i].val;
			continue;
		}
		if (query_parse_arg(q, snapshot_ctx(rq->snap)->names, rq->args[i].key,
				    rq->args[i].val, err, sizeof(err))) {
			*res = http_send_error(rq, 400, "%s", err);
			return 0;
		}
	}
	return 1;
}

enum MHD_Result http_ep_events(struct http_req *rq)
{
	static const char *const hdrs[] = { "X-Accel-Buffering", "no", NULL };
	uint64_t pub, since = 0;
	struct events_window w;
	struct MHD_Response *r;
	const char *arg, *last;
	struct stream *st;
	struct query q;
	struct events_history *hist;
	enum MHD_Result res;
	int have = 0, refuse, why = -1;

	if (!parse_args(rq, &q, &arg, &hist, &res))
		return res;
	events_window(hist, &w);
	if (!w.enabled || !s_running)
		return http_send_error(rq, 503, "the change stream is not running");
	if (!s_max_streams) {
		__atomic_add_fetch(&s_st.refused, 1, __ATOMIC_RELAXED);
		return http_send_error(rq, 503,
				       "no connection slot is left for streams (--max-streams 0)");
	}
	if (arg) {
		if (parse_gen(arg, &since))
			return http_send_error(rq, 400,
					       "bad value for 'since': not a generation number");
		have = 1;
	} else {
		last = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Last-Event-ID");
		if (last && *last) {
			have = 1;
			if (parse_gen(last, &since))
				why = RS_UNKNOWN; /* not an id of ours: start afresh */
		}
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return http_send_error(rq, 500, "out of memory");
	st->q = q;
	st->hist = hist;
	pthread_mutex_init(&st->lock, NULL);
	st->prev = st->next = st;
	st->conn = rq->conn;
	st->wake = rq->wake;
	st->owner = rq->owner;
	st->fd = -1;
	{
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		if (ci)
			st->fd = ci->connect_fd;
	}
	if (st->fd >= 0) {
		/* what a client that stopped reading may keep queued in the kernel: without a
		 * bound, autotuning lets the send buffer grow to net.ipv4.tcp_wmem's maximum
		 * (4 MB) before the stream falls behind at all */
		int sndbuf = STREAM_SNDBUF;

		if (setsockopt(st->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0)
			log_debug("/events: SO_SNDBUF: %s", strerror(errno));
	}
	pub = snapshot_generation(rq->snap);
	/* where it starts: after since, or after the snapshot current now */
	st->cursor = have ? since : pub;
	if (have && why < 0 && since > pub)
		why = RS_UNKNOWN; /* never published here (rtsnapd restarted?) */
	else if (have && why < 0 && since < w.base)
		why = RS_HISTORY;
	strbuf_appendf(&st->buf, "retry: %d\n: rtsnapd change stream after generation %llu\n\n",
		       RETRY_MS, (unsigned long long)(why >= 0 ? w.head : st->cursor));
	if (why >= 0) {
		events_render_resync(w.head, s_reason[why], &st->buf);
		__atomic_add_fetch(&s_st.resyncs[why], 1, __ATOMIC_RELAXED);
		st->cursor = w.head;
	}
	st->cum = events_cum_at(hist, st->cursor);
	st->last_ms = snapshot_now_ms();
	out_buf(st);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st,
					      stream_free);
	if (!r) {
		stream_free(st);
		return MHD_NO;
	}
	st->listener = rq->listener < HTTP_EVENTS_MAX_LISTEN ? rq->listener : 0;
	pthread_mutex_lock(&s_lock);
	refuse = closing_locked(st->owner);
	if (!refuse) {
		if (s_live[st->listener] >= s_max_streams)
			evict_oldest_locked(st->listener, snapshot_now_ms());
		st->id = s_next_id++;
		st->next = &s_list;
		st->prev = s_list.prev;
		s_list.prev->next = st;
		s_list.prev = st;
		s_live[st->listener]++;
		__atomic_add_fetch(&s_st.open, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s_st.opened, 1, __ATOMIC_RELAXED);
		if (st->fd >= 0) { /* a hang-up ends it at once, suspended or not */
			struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT,
						  .data.u64 = st->id };

			if (epoll_ctl(s_epfd, EPOLL_CTL_ADD, st->fd, &ev) < 0)
				log_debug("/events: cannot watch a stream's socket: %s",
					  strerror(errno));
		}
	}
	pthread_mutex_unlock(&s_lock);
	if (refuse) {
		MHD_destroy_response(r); /* frees st */
		__atomic_add_fetch(&s_st.refused, 1, __ATOMIC_RELAXED);
		rq->headers = (const char *const[]){ "Retry-After", "1", NULL };
		return http_send_error(rq, 503, "the server is reloading: reconnect");
	}
	rq->headers = hdrs;
	res = http_send_response(rq, 200, "text/event-stream", r);
	rq->headers = NULL;
	return res;
}

/* 410 with the current generation, so that the poller knows where to re-read from. */
static enum MHD_Result send_gone(struct http_req *rq, const char *msg, uint64_t pub)
{
	char *body;

	if (asprintf(&body, "{\"error\":\"%s\",\"generation\":%llu}\n", msg,
		     (unsigned long long)pub) < 0)
		return MHD_NO;
	return http_send_buffer(rq, 410, "application/json", body, strlen(body));
}

enum MHD_Result http_ep_changes(struct http_req *rq)
{
	struct strbuf sb = { 0 };
	struct events_window w;
	struct query q;
	struct events_history *hist;
	enum MHD_Result res;
	const char *arg;
	uint64_t since, pub, gen;
	char msg[256], *body;
	size_t len;
	int ret;

	if (!parse_args(rq, &q, &arg, &hist, &res))
		return res;
	if (!arg)
		return http_send_error(rq, 400, "missing query parameter 'since'");
	if (parse_gen(arg, &since))
		return http_send_error(rq, 400, "bad value for 'since': not a generation number");
	events_window(hist, &w);
	if (!w.enabled)
		return http_send_error(rq, 503, "the change history is not kept");
	pub = snapshot_generation(rq->snap);
	if (since > pub) {
		snprintf(msg, sizeof(msg),
			 "generation %llu was never published here (the newest is %llu; rtsnapd "
			 "restarted?): re-read /routes",
			 (unsigned long long)since, (unsigned long long)pub);
		return send_gone(rq, msg, pub);
	}
	if (since > w.head) {
		/* published, its change not recorded yet: nothing since */
		char when[32];

		struct timespec at = snapshot_taken_at(rq->snap);

		events_iso8601(&at, when, sizeof(when));
		strbuf_appendf(&sb,
			       "{\"generation\":%llu,\"previous\":%llu,\"taken_at\":\"%s\","
			       "\"added\":[],\"removed\":[]}\n",
			       (unsigned long long)since, (unsigned long long)since, when);
		ret = sb.failed ? -ENOMEM : 0;
	} else {
		ret = events_changes(hist, since, &q, &sb, &gen);
	}
	if (ret == -ERANGE) {
		strbuf_free(&sb);
		if (since < w.base)
			snprintf(msg, sizeof(msg),
				 "generation %llu is older than the change history (oldest %llu): "
				 "re-read /routes",
				 (unsigned long long)since, (unsigned long long)w.base);
		else
			snprintf(msg, sizeof(msg),
				 "the change history has no diff for a generation after %llu (a "
				 "change too large to keep): re-read /routes",
				 (unsigned long long)since);
		return send_gone(rq, msg, pub);
	}
	if (ret || sb.failed) {
		strbuf_free(&sb);
		return http_send_error(rq, 500, "out of memory");
	}
	body = strbuf_detach(&sb, &len);
	return http_send_buffer(rq, 200, "application/json", body, len);
}

/* ---- /metrics ---- */

void http_events_metrics(struct strbuf *sb)
{
	struct events_window w;
	struct events_stats es;

	events_window(s_hist, &w);
	events_stats(s_hist, &es);
	strbuf_appendf(
	    sb,
	    "# HELP rtsnap_event_streams Open /events streams.\n"
	    "# TYPE rtsnap_event_streams gauge\n"
	    "rtsnap_event_streams %llu\n"
	    "# HELP rtsnap_event_streams_opened_total /events streams opened.\n"
	    "# TYPE rtsnap_event_streams_opened_total counter\n"
	    "rtsnap_event_streams_opened_total %llu\n"
	    "# HELP rtsnap_event_stream_bytes_total Bytes sent on /events streams (also counted "
	    "in rtsnap_http_response_bytes_total).\n"
	    "# TYPE rtsnap_event_stream_bytes_total counter\n"
	    "rtsnap_event_stream_bytes_total %llu\n"
	    "# HELP rtsnap_event_streams_dropped_total Streams ended, told to resync first, by "
	    "reason (slow: more than --stream-queue bytes behind the newest event, or behind the "
	    "history; evicted: the oldest, for a new stream beyond --max-streams).\n"
	    "# TYPE rtsnap_event_streams_dropped_total counter\n"
	    "rtsnap_event_streams_dropped_total{reason=\"slow\"} %llu\n"
	    "rtsnap_event_streams_dropped_total{reason=\"evicted\"} %llu\n"
	    "# HELP rtsnap_event_streams_limit Streams each listener keeps open at most "
	    "(--max-streams); a new one beyond evicts the oldest.\n"
	    "# TYPE rtsnap_event_streams_limit gauge\n"
	    "rtsnap_event_streams_limit %u\n"
	    "# HELP rtsnap_event_stream_hangups_total Streams ended because their client closed "
	    "the connection (seen on the socket, not at the next event).\n"
	    "# TYPE rtsnap_event_stream_hangups_total counter\n"
	    "rtsnap_event_stream_hangups_total %llu\n"
	    "# HELP rtsnap_event_streams_refused_total Streams refused while the server reloaded "
	    "its web configuration.\n"
	    "# TYPE rtsnap_event_streams_refused_total counter\n"
	    "rtsnap_event_streams_refused_total %llu\n"
	    "# HELP rtsnap_event_heartbeats_total Heartbeat comments sent on idle streams.\n"
	    "# TYPE rtsnap_event_heartbeats_total counter\n"
	    "rtsnap_event_heartbeats_total %llu\n",
	    (unsigned long long)__atomic_load_n(&s_st.open, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.opened, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.bytes, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.dropped, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.evicted, __ATOMIC_RELAXED), s_max_streams,
	    (unsigned long long)__atomic_load_n(&s_st.hangups, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.refused, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s_st.heartbeats, __ATOMIC_RELAXED));
	strbuf_puts(
	    sb,
	    "# HELP rtsnap_event_resyncs_total Resync events sent on streams (re-read "
	    "/routes), by reason: history (the history no longer reaches back to the "
	    "client's generation), unknown (a generation never published here), slow "
	    "(dropped), change (a change too large to keep as a diff), evicted (for a newer stream).\n"
	    "# TYPE rtsnap_event_resyncs_total counter\n");
	for (int i = 0; i < RS__COUNT; i++)
		strbuf_appendf(
		    sb, "rtsnap_event_resyncs_total{reason=\"%s\"} %llu\n", s_reason[i],
		    (unsigned long long)__atomic_load_n(&s_st.resyncs[i], __ATOMIC_RELAXED));
	strbuf_appendf(
	    sb,
	    "# HELP rtsnap_events_history_generations Changes kept for /events and /changes.\n"
	    "# TYPE rtsnap_events_history_generations gauge\n"
	    "rtsnap_events_history_generations %u\n"
	    "# HELP rtsnap_events_history_bytes Bytes of memory the kept changes hold.\n"
	    "# TYPE rtsnap_events_history_bytes gauge\n"
	    "rtsnap_events_history_bytes %zu\n"
	    "# HELP rtsnap_events_history_oldest_generation Oldest generation a client can "
	    "resume after (Last-Event-ID, since=).\n"
	    "# TYPE rtsnap_events_history_oldest_generation gauge\n"
	    "rtsnap_events_history_oldest_generation %llu\n"
	    "# HELP rtsnap_events_recorded_total Changes recorded (one per publication after the "
	    "first).\n"
	    "# TYPE rtsnap_events_recorded_total counter\n"
	    "rtsnap_events_recorded_total %llu\n"
	    "# HELP rtsnap_events_recorded_resyncs_total Changes recorded as a resync (too large "
	    "for an event, or no memory).\n"
	    "# TYPE rtsnap_events_recorded_resyncs_total counter\n"
	    "rtsnap_events_recorded_resyncs_total %llu\n"
	    "# HELP rtsnap_events_routes_total Routes in the recorded changes, by change.\n"
	    "# TYPE rtsnap_events_routes_total counter\n"
	    "rtsnap_events_routes_total{change=\"added\"} %llu\n"
	    "rtsnap_events_routes_total{change=\"removed\"} %llu\n"
	    "# HELP rtsnap_events_diff_seconds_total Collector time spent diffing and rendering "
	    "changes.\n"
	    "# TYPE rtsnap_events_diff_seconds_total counter\n"
	    "rtsnap_events_diff_seconds_total %.6f\n",
	    w.count, w.bytes, (unsigned long long)w.base, (unsigned long long)es.recorded,
	    (unsigned long long)es.resyncs, (unsigned long long)es.routes_added,
	    (unsigned long long)es.routes_removed, es.diff_seconds);
}
