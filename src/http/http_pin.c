// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_pin.c - what in-flight responses may pin.
 *
 * A response that points into a snapshot holds a reference until libmicrohttpd frees it,
 * i.e. until its last byte is sent or the connection dies. A slow reader therefore keeps a
 * replaced (retired) snapshot alive, and with a route changing every second, a hundred slow
 * readers keep a hundred different snapshots alive. This module bounds the bytes of retired
 * snapshots that responses keep alive: beyond --max-pinned-bytes, the connections holding
 * the oldest snapshot are shut down, so libmicrohttpd fails their send, frees their
 * responses and the references go.
 *
 * Registry: one entry per response that holds a snapshot reference, embedded in the
 * response's context (http.c), in a list under s_lock. Workers add an entry when the
 * response is created and remove it in the response's free callback, before the reference
 * is dropped. The check runs from the snapshot retire hook (collector thread), the only
 * moment the pinned bytes grow.
 *
 * Why shutdown(2) on another thread's socket is safe here: libmicrohttpd 0.9.75 frees a
 * connection's response (MHD_connection_close_, MHD_cleanup_connections, or the end of a
 * response on a kept-alive connection) before it closes the socket, always. Our entry leaves
 * the list in that free callback under s_lock, and the shutdown happens under s_lock, so
 * while an entry is listed its fd is still that connection's socket and cannot have been
 * reused. shutdown() does not free anything: libmicrohttpd's worker sees the hang-up (epoll
 * reports it), its next send fails, and it closes the connection on its own thread.
 *
 * "The slowest first": the responses holding the oldest snapshot are the ones that have been
 * in flight longest. A snapshot is freed only when every response holding it is gone, so the
 * unit dropped is a generation: all responses holding it, then the next oldest, until the
 * projected pinned bytes are within the limit.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "rtsnap/http.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_pin.h"
#include "rtsnap/log.h"
#include "rtsnap/stats.h"

#define PIN_WARN_MS 10000 /* at most one drop warning this often */

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_pin *s_head; /* under s_lock */
static unsigned long s_count;	/* entries; under s_lock, read relaxed */
/* The newest generation an entry was added with, and how many listed entries hold it: a
 * scrape reads how many responses hold the current snapshot without walking the list (a walk
 * under s_lock at every scrape cost in proportion to the responses in flight). Under s_lock. */
static uint64_t s_top_gen;
static unsigned long s_top_count;
static uint64_t s_limit_bytes;			      /* absolute limit; 0: use the factor */
static unsigned int s_limit_factor = HTTP_PIN_FACTOR; /* x current snapshot; 0: off */
static struct snapshot_chain *s_chain;		      /* set before http_start() */
static int64_t s_last_warn_ms;			      /* collector thread */

void http_pin_set_limit(struct snapshot_chain *chain, uint64_t bytes, unsigned int factor)
{
	s_chain = chain;
	s_limit_bytes = bytes;
	s_limit_factor = bytes ? 0 : factor;
}

uint64_t http_pin_limit(void)
{
	uint64_t cur = snapshot_current_bytes(s_chain);

	if (s_limit_bytes)
		return s_limit_bytes;
	if (!s_limit_factor || !cur)
		return 0;
	/* N snapshots of about the current size: sizes move by a few bytes with every change,
	 * and "2x" must not mean one snapshot when the older ones were a little larger */
	return (uint64_t)s_limit_factor * cur + cur / 16;
}

void http_pin_add(struct http_pin *p, struct MHD_Connection *conn, struct snapshot *snap,
		  uint64_t body_bytes)
{
	const union MHD_ConnectionInfo *ci;

	if (!snap) {
		p->listed =
		    0; /* a body that holds no snapshot (the web page's files) pins nothing */
		return;
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	p->snap = snap;
	p->gen = snapshot_generation(snap);
	p->fd = ci ? ci->connect_fd : -1;
	p->dropped = 0;
	p->start_ms = snapshot_now_ms();
	p->body_bytes = body_bytes;
	p->prev = NULL;
	pthread_mutex_lock(&s_lock);
	p->next = s_head;
	if (s_head)
		s_head->prev = p;
	s_head = p;
	s_count++;
	if (p->gen > s_top_gen) {
		s_top_gen = p->gen;
		s_top_count = 1;
	} else if (p->gen == s_top_gen) {
		s_top_count++;
	}
	pthread_mutex_unlock(&s_lock);
	p->listed = 1;
}

void http_pin_del(struct http_pin *p)
{
	if (!p->listed)
		return;
	pthread_mutex_lock(&s_lock);
	if (p->prev)
		p->prev->next = p->next;
	else
		s_head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	s_count--;
	if (p->gen == s_top_gen)
		s_top_count--;
	pthread_mutex_unlock(&s_lock);
	p->listed = 0;
}

void http_pin_stats(struct http_pin_stats *st)
{
	uint64_t cur = 0;
	struct snapshot *s = snapshot_acquire(s_chain);

	if (s)
		cur = snapshot_generation(s);
	snapshot_release(s);
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s_lock);
	st->responses = s_count;
	/* entries newer than cur (added after a publication this scrape did not see yet) hold
	 * no replaced snapshot either */
	st->responses_retired = s_count - (s_top_gen >= cur ? s_top_count : 0);
	pthread_mutex_unlock(&s_lock);
	st->limit_bytes = http_pin_limit();
	st->snapshots_retired = snapshot_retired_count(s_chain);
	st->retired_bytes = snapshot_retired_bytes(s_chain);
	st->current_bytes = snapshot_current_bytes(s_chain);
}

void http_pin_retired(uint64_t cur_gen)
{
	uint64_t limit = http_pin_limit(), pinned = snapshot_retired_bytes(s_chain), oldest_gen = 0;
	unsigned long dropped = 0, gens = 0;
	int64_t now;

	if (!limit || pinned <= limit)
		return;
	pthread_mutex_lock(&s_lock);
	while (pinned > limit) {
		struct snapshot *oldest = NULL;

		for (struct http_pin *p = s_head; p; p = p->next)
			if (!p->dropped && p->fd >= 0 && snapshot_generation(p->snap) < cur_gen &&
			    (!oldest || snapshot_generation(p->snap) < snapshot_generation(oldest)))
				oldest = p->snap;
		if (!oldest)
			break; /* the rest is held by nothing we can drop (e.g. --proc-file) */
		if (!gens)
			oldest_gen = snapshot_generation(oldest);
		for (struct http_pin *p = s_head; p; p = p->next) {
			if (p->dropped || p->snap != oldest)
				continue;
			shutdown(p->fd, SHUT_RDWR);
			p->dropped = 1;
			dropped++;
		}
		gens++;
		pinned -= snapshot_bytes(oldest) < pinned ? snapshot_bytes(oldest) : pinned;
	}
	pthread_mutex_unlock(&s_lock);
	if (!dropped)
		return;
	http_count_add(HTTP_C_DROPPED_PINNED, dropped);
	now = snapshot_now_ms();
	if (!s_last_warn_ms || now - s_last_warn_ms >= PIN_WARN_MS) {
		s_last_warn_ms = now;
		log_warn(
		    "slow readers pinned %llu bytes of replaced snapshots (limit %llu): closed "
		    "%lu responses holding %lu snapshots from generation %llu on (dropped so "
		    "far: %llu)",
		    (unsigned long long)snapshot_retired_bytes(s_chain), (unsigned long long)limit,
		    dropped, gens, (unsigned long long)oldest_gen,
		    (unsigned long long)http_count_get(HTTP_C_DROPPED_PINNED));
	}
}
