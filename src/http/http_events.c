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
 *     time). A family=all stream has a cursor in each of the two histories, its id is the
 *     pair ("4.G4-6.G6"), and it renders each event (which names its family) likewise.
 *   - suspended: the reader callback found nothing to send and suspended the connection
 *     (MHD_suspend_connection from the content reader, as libmicrohttpd allows).
 * Threads:
 *   - HTTP workers create a stream (http_ep_events), call its reader and free it (the
 *     response's free callback). A stream reads the histories of its request (rq->hist,
 *     rq->hist4): the own namespace's, or under /netns/NAME/ that namespace's, on which it then
 *     holds a reference (http_ns.h) until it is freed. The reader takes the next change with events_next() from
 *     its family's history (family=inet: the IPv4 instance's; family=all: of both, the one
 *     recorded first), never waits, and suspends its connection when there is nothing to
 *     send.
 *   - The fan-out thread (one) wakes when the collector recorded a change (eventfd) and at
 *     least once a second. Under s_lock it walks the streams: a suspended one with something
 *     to send (a new change, a heartbeat due, an end) is resumed; one more than
 *     --stream-queue bytes behind the newest event (family=all: in both histories together),
 *     or behind the oldest a history keeps,
 *     is told to resync and ends, and if it did not take that notice within a second (a
 *     client that stopped reading: its socket is full) its socket is shut down, as
 *     http_pin.c does for slow responses (the fd cannot have been reused: the free callback
 *     unlists the stream under s_lock before libmicrohttpd closes the socket).
 *     A stream of a named namespace that is no longer served (http_ns_remove(), which wakes
 *     this thread) ends at the next sweep, closed without a final event as at a reload.
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
#include "rtsnap/http_ns.h"
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
	struct http_ns *ns; /* a reference on the named namespace it reads, or NULL (own) */
	int fd;
	uint64_t id;	       /* its name in the hang-up watch (s_epfd) */
	unsigned int listener; /* whose --max-streams it counts against */
	int evicted, gone;     /* under s_lock and lock: for a newer stream; the client left */
	/* under lock */
	int suspended, ending, error, drop, closing, shut, hb;
	int64_t last_ms, drop_ms;
	/*
	 * The histories it reads: one (its family's), or with family=all two, [0] the IPv4
	 * instance's and [1] the IPv6 one's, merged. Per history: the last generation handed
	 * out, the cum of that change, the filter, and none when a filter names an address of
	 * the other family (no route of this one matches it).
	 */
	unsigned int nfam;
	struct events_history *hist[2];
	uint64_t cursor[2], cum[2];
	struct query q[2];
	int none[2];
	struct events_change *cur; /* held while its text is handed out */
	const char *out;
	size_t out_len, out_off;
	struct strbuf buf; /* the start, a filtered or merged event, a notice */
};

/* family=all: the names of the two histories, as a stream's hist[] holds them */
static const char *const s_fam[2] = { "inet", "inet6" };

/* A family=all cursor: "4." the IPv4 generation "-6." the IPv6 one. */
#define CURSOR_LEN 48

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream s_list = { .prev = &s_list, .next = &s_list };
static long s_nlisted; /* streams in s_list (atomic: read without s_lock by wake_up()) */
static const void *s_closing[MAX_CLOSING];
static size_t s_queue = HTTP_EVENTS_QUEUE_DEFAULT;
static int64_t s_hb_ms = HTTP_EVENTS_HEARTBEAT_DEFAULT * 1000;
static int s_evfd = -1, s_epfd = -1, s_stop, s_running;
static unsigned int s_max_streams = UINT_MAX;	    /* per listener */
static unsigned int s_live[HTTP_EVENTS_MAX_LISTEN]; /* streams not evicted; under s_lock */
static uint64_t s_next_id = 1;			    /* under s_lock */
static pthread_t s_thread;
static struct events_history *s_hist;  /* set by http_events_start(); NULL: IPv6 not followed */
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

static void cursor_id(const uint64_t g[2], char *buf, size_t len)
{
	snprintf(buf, len, "4.%llu-6.%llu", (unsigned long long)g[0], (unsigned long long)g[1]);
}

/* Append a resync event for history i of st (its family named on a family=all stream). */
static void notice_add(struct stream *st, unsigned int i, uint64_t gen, enum resync_reason why)
{
	if (st->nfam == 2)
		events_render_resync_family(gen, s_fam[i], s_reason[why], &st->buf);
	else
		events_render_resync(gen, s_reason[why], &st->buf);
	__atomic_add_fetch(&s_st.resyncs[why], 1, __ATOMIC_RELAXED);
}

static void notice(struct stream *st, unsigned int i, uint64_t gen, enum resync_reason why)
{
	out_done(st);
	notice_add(st, i, gen, why);
	out_buf(st);
}

/* Hand out change c of history i (a reference the stream takes over). */
static void take(struct stream *st, unsigned int i, struct events_change *c)
{
	char id[CURSOR_LEN];

	st->cursor[i] = c->generation;
	st->cum[i] = c->cum;
	if (c->kind == EVENTS_RESYNC)
		__atomic_add_fetch(&s_st.resyncs[RS_CHANGE], 1, __ATOMIC_RELAXED);
	if (st->nfam == 2) { /* its id is the cursor, its data names the family: a copy */
		cursor_id(st->cursor, id, sizeof(id));
		events_render_family(c, &st->q[i], st->none[i], s_fam[i], id, &st->buf);
		events_put(c);
		out_buf(st);
		return;
	}
	if (c->kind == EVENTS_RESYNC || !st->q[0].set) {
		st->cur = c; /* the history's own bytes */
		st->out = c->text;
		st->out_len = c->len;
		st->out_off = 0;
		return;
	}
	events_render(c, &st->q[0], &st->buf);
	events_put(c);
	out_buf(st);
}

/*
 * The next change st hands out: 0 with it in *out (a reference) and its history's index in
 * *fi; 1 when a history moved past st's cursor (a resync notice is queued and the stream goes
 * on from that history's newest change); -EAGAIN when there is nothing new. Of two histories
 * the change recorded first goes first (the IPv4 one on a tie), so a family=all stream
 * follows the order in which the collectors recorded their changes.
 */
static int next_change(struct stream *st, unsigned int *fi, struct events_change **out)
{
	struct events_change *c[2] = { NULL, NULL };
	struct events_window w;
	unsigned int best = 2;

	for (unsigned int i = 0; i < st->nfam; i++) {
		switch (events_next(st->hist[i], st->cursor[i], &c[i])) {
		case 0:
			if (best == 2 || c[i]->recorded_ns < c[best]->recorded_ns)
				best = i;
			break;
		case -ERANGE: /* the history moved past it: start again from the newest */
			for (unsigned int k = 0; k < i; k++)
				events_put(c[k]);
			events_window(st->hist[i], &w);
			notice(st, i, w.head, RS_HISTORY);
			st->cursor[i] = w.head;
			st->cum[i] = w.cum_head;
			return 1;
		default:
			c[i] = NULL;
			break;
		}
	}
	if (best == 2)
		return -EAGAIN;
	for (unsigned int i = 0; i < st->nfam; i++)
		if (i != best)
			events_put(c[i]);
	*fi = best;
	*out = c[best];
	return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct events_change *c;
	struct events_window w;
	unsigned int fi;
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
		if (st->drop) { /* a notice per history: each family is to be re-read */
			out_done(st);
			for (unsigned int i = 0; i < st->nfam; i++) {
				events_window(st->hist[i], &w);
				notice_add(st, i, w.head, st->evicted ? RS_EVICTED : RS_SLOW);
			}
			out_buf(st);
			st->ending = 1;
			continue;
		}
		switch (next_change(st, &fi, &c)) {
		case 0:
			take(st, fi, c);
			continue;
		case 1:
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
	if (st->next != st)
		__atomic_sub_fetch(&s_nlisted, 1, __ATOMIC_SEQ_CST);
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
	http_ns_put(st->ns); /* the last one frees its histories: nothing reads them now */
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

	/* no stream listed: nobody to wake (a write and a sweep per publication otherwise).
	 * The change was recorded before this load (the fence); a stream listed after it
	 * reads the history itself before it first waits. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&s_nlisted, __ATOMIC_SEQ_CST))
		return;
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
	struct events_window w6 = { 0 }, w4 = { 0 };

	if (s_hist)
		events_window(s_hist, &w6);
	if (s_hist4)
		events_window(s_hist4, &w4);
	pthread_mutex_lock(&s_lock);
	for (struct stream *st = s_list.next; st != &s_list; st = st->next) {
		uint64_t lag = 0;
		int behind = 0, pending = 0;

		pthread_mutex_lock(&st->lock);
		/* a family=all stream's queue is what it lags behind in both histories */
		for (unsigned int i = 0; i < st->nfam; i++) {
			struct events_window wn;
			const struct events_window *w = st->hist[i] == s_hist	 ? &w6
							: st->hist[i] == s_hist4 ? &w4
										 : &wn;

			if (w == &wn) /* a named namespace's (its stream holds it) */
				events_window(st->hist[i], &wn);
			lag += w->cum_head - st->cum[i];
			behind |= st->cursor[i] < w->base;
			pending |= st->cursor[i] < w->head;
		}
		if (st->ns && !st->closing && http_ns_gone(st->ns))
			st->closing = 1; /* its namespace is no longer served: the stream ends */
		if (!st->drop && !st->ending && (lag > s_queue || behind)) {
			st->drop = 1; /* fell behind: a notice, then the end */
			st->drop_ms = now;
			__atomic_add_fetch(&s_st.dropped, 1, __ATOMIC_RELAXED);
			log_debug("/events: a stream at generation %llu is %llu bytes behind: "
				  "dropped",
				  (unsigned long long)st->cursor[st->nfam - 1],
				  (unsigned long long)lag);
		}
		if (st->drop && !st->shut && now - st->drop_ms >= DROP_GRACE_MS && st->fd >= 0) {
			shutdown(st->fd, SHUT_RDWR); /* it stopped reading */
			st->shut = 1;
		}
		if (st->suspended) {
			if (!st->drop && !st->closing && !pending && now - st->last_ms >= s_hb_ms)
				st->hb = 1;
			if (st->drop || st->closing || st->hb || pending)
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
	http_ns_set_notify(wake_up); /* the named namespaces' histories */
	if (s_hist)
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
	http_ns_set_notify(NULL);
	if (s_hist)
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

/* A family=all cursor, "4.G4-6.G6" (cursor_id()), into g[0] (IPv4) and g[1]. 0 or -EINVAL. */
static int parse_cursor(const char *s, uint64_t g[2])
{
	char g4[24];
	const char *dash;
	size_t n;

	if (strncmp(s, "4.", 2) != 0)
		return -EINVAL;
	dash = strchr(s, '-');
	if (!dash || strncmp(dash, "-6.", 3) != 0)
		return -EINVAL;
	n = (size_t)(dash - s - 2);
	if (n >= sizeof(g4))
		return -EINVAL;
	memcpy(g4, s + 2, n);
	g4[n] = '\0';
	if (parse_gen(g4, &g[0]) || parse_gen(dash + 3, &g[1]))
		return -EINVAL;
	return 0;
}

/* What a request reads: its family's history, or with family=all both. */
struct ev_args {
	unsigned int nfam;		/* 1, or 2 (family=all: [0] IPv4, [1] IPv6) */
	struct events_history *hist[2]; /* as struct stream's */
	const struct snapshot *snap[2]; /* each history's instance's current snapshot */
	struct query q[2];
	int none[2];
	const char *since;
};

/*
 * family= of rq (http_family(): inet when IPv6 is not followed): the histories to read
 * (a->hist, a->nfam), with rq->snap the snapshot of the instance (the IPv4 one's for
 * family=inet, whose filters then take IPv4 addresses) and, for family=all, rq->snap2 the
 * IPv4 one's. 1 to go on, 0 with an error queued in *res.
 */
static int parse_family(struct http_req *rq, struct ev_args *a, enum MHD_Result *res)
{
	int af = http_family(rq, res);

	if (af < 0)
		return 0;
	a->nfam = 1;
	a->hist[0] = rq->hist;
	if (af == AF_INET6)
		return 1;
	if (!rq->hist4) { /* as /routes?family=inet and all */
		*res = http_send_error(rq, 404,
				       "IPv4 is not followed: start rtsnapd with --family all");
		return 0;
	}
	a->hist[0] = rq->hist4;
	if (af == AF_UNSPEC) {
		a->nfam = 2;
		a->hist[1] = rq->hist;
		rq->snap2 = snapshot_acquire(rq->chain4);
		if (!rq->snap2 && rq->snap) {
			*res = http_send_error(rq, 503, "no snapshot yet");
			return 0;
		}
		return 1;
	}
	snapshot_release(rq->snap);
	rq->snap = snapshot_acquire(rq->chain4);
	return 1;
}

/*
 * One filter of a family=all request, into both queries: a value the two families read
 * differently (an address) may fit one family only, whose routes alone can then match; any
 * other bad value is a 400, as on /routes?family=all. 0, or -EINVAL with the message in err.
 */
static int parse_arg_all(struct ev_args *a, const struct names *names, const char *key,
			 const char *val, char *err, size_t errlen)
{
	static const char *const addr[] = { "prefix", "covers", "gateway", NULL };
	char err4[256];
	int is_addr = 0, bad4, bad6;

	for (const char *const *k = addr; *k; k++)
		is_addr |= !strcmp(key, *k);
	bad4 = query_parse_arg(&a->q[0], names, key, val, err4, sizeof(err4));
	bad6 = query_parse_arg(&a->q[1], names, key, val, err, errlen);
	if (!is_addr && (bad4 || bad6)) {
		if (!bad6)
			snprintf(err, errlen, "%s", err4);
		return -EINVAL;
	}
	if (bad4 && bad6) {
		snprintf(err, errlen, "bad value for '%.64s': not an IPv4 or IPv6 %s", key,
			 strcmp(key, "gateway") ? "address or prefix" : "address");
		return -EINVAL;
	}
	a->none[0] |= bad4 != 0;
	a->none[1] |= bad6 != 0;
	return 0;
}

/* The filters, family= and since= of rq into *a: 1 to go on, 0 with an error queued in
 * *res. */
static int parse_args(struct http_req *rq, struct ev_args *a, enum MHD_Result *res)
{
	const char *bad = NULL;
	char err[256];

	memset(a, 0, sizeof(*a));
	if (http_args_check(rq, s_params, res))
		return 0;
	MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, http_find_nul, &bad);
	if (bad) {
		*res = http_send_error(rq, 400, "query parameter '%.64s' contains a NUL byte", bad);
		return 0;
	}
	if (!parse_family(rq, a, res) || http_no_snapshot(rq, res))
		return 0;
	if (a->nfam == 2) {
		a->snap[0] = rq->snap2;
		a->snap[1] = rq->snap;
		a->q[0].family = AF_INET;
	} else {
		a->snap[0] = rq->snap;
		if (a->hist[0] != rq->hist)
			a->q[0].family =
			    AF_INET; /* prefix=, covers= and gateway= take IPv4 values */
	}
	for (unsigned int i = 0; i < rq->nargs; i++) {
		const char *key = rq->args[i].key, *val = rq->args[i].val;
		const struct names *names = snapshot_ctx(rq->snap)->names;
		int ret;

		if (strcmp(key, "family") == 0)
			continue;
		if (strcmp(key, "since") == 0) {
			a->since = val;
			continue;
		}
		if (a->nfam == 2)
			ret = parse_arg_all(a, names, key, val, err, sizeof(err));
		else
			ret = query_parse_arg(&a->q[0], names, key, val, err, sizeof(err));
		if (ret) {
			*res = http_send_error(rq, 400, "%s", err);
			return 0;
		}
	}
	return 1;
}

/* since= or Last-Event-ID of a stream into g (one generation, or a family=all cursor). */
static int parse_since(const struct ev_args *a, const char *s, uint64_t g[2])
{
	return a->nfam == 2 ? parse_cursor(s, g) : parse_gen(s, &g[0]);
}

enum MHD_Result http_ep_events(struct http_req *rq)
{
	static const char *const hdrs[] = { "X-Accel-Buffering", "no", NULL };
	uint64_t pub[2] = { 0, 0 }, since[2] = { 0, 0 };
	struct events_window w[2];
	struct MHD_Response *r;
	const char *last;
	struct stream *st;
	struct ev_args a;
	enum MHD_Result res;
	int have = 0, refuse, unknown = 0, why[2] = { -1, -1 };
	char id[CURSOR_LEN];

	if (!parse_args(rq, &a, &res))
		return res;
	for (unsigned int i = 0; i < a.nfam; i++) {
		events_window(a.hist[i], &w[i]);
		if (!w[i].enabled || !s_running)
			return http_send_error(rq, 503, "the change stream is not running");
	}
	if (!s_max_streams) {
		__atomic_add_fetch(&s_st.refused, 1, __ATOMIC_RELAXED);
		return http_send_error(rq, 503,
				       "no connection slot is left for streams (--max-streams 0)");
	}
	if (a.since) {
		if (parse_since(&a, a.since, since))
			return http_send_error(
			    rq, 400,
			    a.nfam == 2 ? "bad value for 'since': not a cursor 4.G-6.G "
					  "(an id of a family=all stream)"
					: "bad value for 'since': not a generation number");
		have = 1;
	} else {
		last = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Last-Event-ID");
		if (last && *last) {
			have = 1;
			if (parse_since(&a, last, since))
				unknown = 1; /* not an id of ours: start afresh */
		}
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return http_send_error(rq, 500, "out of memory");
	st->nfam = a.nfam;
	pthread_mutex_init(&st->lock, NULL);
	st->prev = st->next = st;
	st->conn = rq->conn;
	st->wake = rq->wake;
	st->owner = rq->owner;
	if (rq->ns) { /* its histories live as long as this reference */
		st->ns = rq->ns;
		http_ns_hold(st->ns);
	}
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
	/* where each history starts: after since, or after the snapshot current now */
	for (unsigned int i = 0; i < a.nfam; i++) {
		st->hist[i] = a.hist[i];
		st->q[i] = a.q[i];
		st->none[i] = a.none[i];
		pub[i] = snapshot_generation(a.snap[i]);
		st->cursor[i] = have ? since[i] : pub[i];
		if (unknown)
			why[i] = RS_UNKNOWN;
		else if (have && since[i] > pub[i])
			why[i] = RS_UNKNOWN; /* never published here (rtsnapd restarted?) */
		else if (have && since[i] < w[i].base)
			why[i] = RS_HISTORY;
		if (why[i] >= 0)
			st->cursor[i] = w[i].head;
	}
	if (a.nfam == 2)
		cursor_id(st->cursor, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "%llu", (unsigned long long)st->cursor[0]);
	strbuf_appendf(&st->buf, "retry: %d\n: rtsnapd change stream after generation %s\n\n",
		       RETRY_MS, id);
	for (unsigned int i = 0; i < a.nfam; i++) {
		if (why[i] >= 0)
			notice_add(st, i, w[i].head, why[i]);
		st->cum[i] = events_cum_at(st->hist[i], st->cursor[i]);
	}
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
		__atomic_add_fetch(&s_nlisted, 1, __ATOMIC_SEQ_CST);
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

/* 410 with the current generation (gen: its JSON, a number or a family=all cursor string),
 * so that the poller knows where to re-read from. */
static enum MHD_Result send_gone(struct http_req *rq, const char *msg, const char *gen)
{
	char *body;

	if (asprintf(&body, "{\"error\":\"%s\",\"generation\":%s}\n", msg, gen) < 0)
		return MHD_NO;
	return http_send_buffer(rq, 410, "application/json", body, strlen(body));
}

/*
 * The net change of history i since since[i] into sb, with *head the generation it reaches:
 * 0; -ERANGE with the reason in msg (a 410); -ENOMEM. With family (family=all) the document
 * names it and ends without a newline.
 */
static int changes_of(const struct ev_args *a, unsigned int i, const uint64_t since[2],
		      const char *family, struct strbuf *sb, uint64_t *head, char *msg,
		      size_t msglen)
{
	const char *fam = family ? family : "", *sp = family ? " " : "";
	uint64_t pub = snapshot_generation(a->snap[i]);
	struct events_window w;
	int ret;

	events_window(a->hist[i], &w);
	if (since[i] > pub) {
		snprintf(
		    msg, msglen,
		    "%s%sgeneration %llu was never published here (the newest is %llu; rtsnapd "
		    "restarted?): re-read /routes",
		    fam, sp, (unsigned long long)since[i], (unsigned long long)pub);
		return -ERANGE;
	}
	if (since[i] > w.head) {
		/* published, its change not recorded yet: nothing since */
		char when[32];
		struct timespec at = snapshot_taken_at(a->snap[i]);

		events_iso8601(&at, when, sizeof(when));
		strbuf_putc(sb, '{');
		if (family)
			strbuf_appendf(sb, "\"family\":\"%s\",", family);
		strbuf_appendf(sb,
			       "\"generation\":%llu,\"previous\":%llu,\"taken_at\":\"%s\","
			       "\"added\":[],\"removed\":[]}%s",
			       (unsigned long long)since[i], (unsigned long long)since[i], when,
			       family ? "" : "\n");
		*head = since[i];
		ret = sb->failed ? -ENOMEM : 0;
	} else {
		ret = events_changes_family(a->hist[i], since[i], &a->q[i], a->none[i], family, sb,
					    head);
	}
	if (ret == -ERANGE) {
		if (since[i] < w.base)
			snprintf(msg, msglen,
				 "%s%sgeneration %llu is older than the change history (oldest "
				 "%llu): re-read /routes",
				 fam, sp, (unsigned long long)since[i], (unsigned long long)w.base);
		else
			snprintf(
			    msg, msglen,
			    "the %s%schange history has no diff for a generation after %llu (a "
			    "change too large to keep): re-read /routes",
			    fam, sp, (unsigned long long)since[i]);
	}
	return ret;
}

enum MHD_Result http_ep_changes(struct http_req *rq)
{
	struct strbuf sb = { 0 }, part[2] = { { 0 }, { 0 } };
	struct events_window w;
	struct ev_args a;
	enum MHD_Result res;
	uint64_t since[2] = { 0, 0 }, pub[2] = { 0, 0 }, head[2] = { 0, 0 };
	char msg[256], gone[CURSOR_LEN + 2], c_head[CURSOR_LEN], c_since[CURSOR_LEN], *body;
	size_t len;
	int ret = 0;

	if (!parse_args(rq, &a, &res))
		return res;
	if (!a.since)
		return http_send_error(rq, 400, "missing query parameter 'since'");
	if (parse_since(&a, a.since, since))
		return http_send_error(rq, 400,
				       a.nfam == 2
					   ? "bad value for 'since': not a cursor 4.G-6.G "
					     "(an id of a family=all stream)"
					   : "bad value for 'since': not a generation number");
	for (unsigned int i = 0; i < a.nfam; i++) {
		events_window(a.hist[i], &w);
		if (!w.enabled)
			return http_send_error(rq, 503, "the change history is not kept");
		pub[i] = snapshot_generation(a.snap[i]);
	}
	if (a.nfam == 1) {
		snprintf(gone, sizeof(gone), "%llu", (unsigned long long)pub[0]);
		ret = changes_of(&a, 0, since, NULL, &sb, &head[0], msg, sizeof(msg));
	} else {
		/* {"generation":CURSOR,"previous":CURSOR,"changes":[inet's, inet6's]}: each
		 * family's net change as /changes?family=F answers it, naming its family */
		cursor_id(pub, c_head, sizeof(c_head));
		snprintf(gone, sizeof(gone), "\"%s\"", c_head);
		for (unsigned int i = 0; i < 2 && !ret; i++)
			ret = changes_of(&a, i, since, s_fam[i], &part[i], &head[i], msg,
					 sizeof(msg));
		if (!ret) {
			cursor_id(head, c_head, sizeof(c_head));
			cursor_id(since, c_since, sizeof(c_since));
			strbuf_appendf(&sb,
				       "{\"generation\":\"%s\",\"previous\":\"%s\",\"changes\":[",
				       c_head, c_since);
			strbuf_append(&sb, part[0].buf, part[0].len);
			strbuf_putc(&sb, ',');
			strbuf_append(&sb, part[1].buf, part[1].len);
			strbuf_puts(&sb, "]}\n");
			if (part[0].failed || part[1].failed)
				sb.failed = 1;
		}
		strbuf_free(&part[0]);
		strbuf_free(&part[1]);
	}
	if (ret == -ERANGE) {
		strbuf_free(&sb);
		return send_gone(rq, msg, gone);
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
	/* the IPv6 instance's history, or the IPv4 one's when it is the only one followed */
	struct events_history *h = s_hist ? s_hist : s_hist4;
	struct events_window w = { 0 };
	struct events_stats es = { 0 };

	if (h) {
		events_window(h, &w);
		events_stats(h, &es);
	}
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
