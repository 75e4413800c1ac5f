/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h - the change history behind /events and /changes: one change per publication,
 * the routes it removed and added (diff.h), rendered once as a Server-Sent Event.
 *
 * Threads and ownership:
 *   - The collector thread records a change after each publication (events_record()): it
 *     diffs the new snapshot against the one it replaced, renders the event text and
 *     appends it to the history, a ring of the last --history generations that is also
 *     bounded in bytes. The oldest changes fall out of it; nothing else writes it.
 *   - Readers (HTTP workers) take changes out of it by generation (events_next()), each
 *     with a reference: a change is immutable and freed by its last holder, so any number
 *     of streams send the same bytes without copying them per stream.
 *   - A change that could not be recorded as a diff (more routes changed than an event may
 *     hold, or no memory) is recorded as a resync: readers tell their clients to re-read
 *     /routes. There is never a gap.
 *
 * Event text (unfiltered), one per generation G:
 *   id: G
 *   data: {"generation":G,"previous":G-1,"taken_at":"...","added":[...],"removed":[...]}
 * and for a resync (no id, so a client's Last-Event-ID stays that of the last diff it saw):
 *   event: resync
 *   data: {"generation":G,"reason":"..."}
 * The route objects are exactly what /routes shows (`ip -j -6 route show`); "expires" is
 * the time left at the publication.
 */
#ifndef RTSNAP_EVENTS_H
#define RTSNAP_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "rtsnap/query.h"
#include "rtsnap/route.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

#define EVENTS_HISTORY_DEFAULT 4096 /* generations */
#define EVENTS_HISTORY_MIN 16	    /* generations */
#define EVENTS_RING_START 16	    /* slots a history starts with; doubled as it fills */
#define EVENTS_HISTORY_BYTES_DEFAULT (64u << 20) /* bytes */
#define EVENTS_HISTORY_BYTES_MIN (1u << 20)

#define EVENTS_HISTORY_SHARE 16 /* by default the history holds at most 1/16 of a snapshot */

struct events_opts {
	unsigned int generations; /* changes kept */
	size_t bytes;		  /* and at most this many bytes of them (the newest always) */
	/* and, when not 0, at most the memory of the snapshot's segments divided by this (but
	 * not under EVENTS_HISTORY_BYTES_MIN): the history stays in proportion to the table */
	unsigned int table_share;
	size_t max_event; /* a larger diff is recorded as a resync (0: bytes / 4) */
};

/* One instance's change history (events.c); the instance's collector records into it. */
struct events_history;

/* Main thread, before the collector starts. A history as o says; one that could not get its
 * ring is disabled (logged; events_record() does nothing). *out set only on success (0 or
 * -ENOMEM). */
int events_new(const struct events_opts *o, struct events_history **out)
    __attribute__((warn_unused_result));
/* Main thread, after the collector and the HTTP workers stopped: free the history (NULL is
 * fine). */
void events_free(struct events_history *eh);

/*
 * Collector thread, right after snapshot_publish(s). prev is the snapshot that was current
 * before (taken with snapshot_acquire() before publishing; NULL for the first one). Records
 * the change from prev to s, then calls the notify function. Work proportional to the change.
 */
void events_record(struct events_history *eh, const struct snapshot *prev,
		   const struct snapshot *s);
/* Main thread, before the collector starts: fn runs on the collector thread after each
 * change is recorded (it must only wake someone up). */
void events_set_notify(struct events_history *eh, void (*fn)(void));

enum events_kind {
	EVENTS_DIFF,
	EVENTS_RESYNC, /* the routes are not known: re-read /routes */
};

/*
 * A route of a change, with what filters need (query_match()): r's hops point into the
 * change, r.metrics is NULL. Any other pointer a record carries into the segment it was
 * copied from (a hop's encapsulation, say) must not be followed: the segment may be gone.
 */
struct events_route {
	struct route r;
	uint32_t off, len;	   /* its object in text */
	uint32_t exp_off, exp_len; /* ,"expires":N inside the object (exp_len 0: none) */
};

/* One publication's change; immutable once recorded. */
struct events_change {
	long refs; /* atomic */
	uint64_t generation, previous;
	enum events_kind kind;
	const char *reason; /* EVENTS_RESYNC: why (static string) */
	char taken_at[32];  /* ISO 8601, UTC */
	char *text;	    /* the event, unfiltered */
	size_t len;
	struct events_route *routes; /* removed ones first, then added ones */
	uint32_t nremoved, nadded;
	/* the links the routes use, as the snapshot each comes from names them (the removed
	 * routes' from the previous snapshot, then the added routes'), for dev= */
	struct route_link *links;
	uint32_t nlinks_old, nlinks_new;
	uint64_t cum; /* bytes of every event text up to and including this one */
	/* CLOCK_MONOTONIC ns when it was appended: orders the changes of two histories
	 * (family=all) */
	uint64_t recorded_ns;
	size_t bytes;	/* memory held */
	double diff_s;	/* time spent recording it */
	size_t visited; /* records the diff compared */
	struct route_nh *hops;
	struct events_change *gone; /* events.c: evicted, to be released */
};

/*
 * Any thread. The change of generation after + 1, with a reference (events_put()): 0;
 * -EAGAIN when it is not recorded yet; -ERANGE when the history no longer reaches back to
 * after (after < the oldest generation a change follows).
 */
int events_next(struct events_history *eh, uint64_t after, struct events_change **out);
void events_put(struct events_change *c);

/* What the history holds now: changes base + 1 .. head, cum_head bytes of events so far. */
struct events_window {
	uint64_t base, head;
	uint64_t cum_head; /* cum of the newest change (0: none yet) */
	uint64_t cum_base; /* cum of the change of generation base (bytes before the oldest) */
	size_t bytes;	   /* memory held */
	unsigned int count;
	int enabled;
};
void events_window(struct events_history *eh, struct events_window *w);
/* Any thread. The cum of the change of generation gen (0 if before the first, the oldest
 * one's if evicted). */
uint64_t events_cum_at(struct events_history *eh, uint64_t gen);

/* Any thread. Append c's event as a stream with filter q (NULL: every route) sees it:
 * routes that do not match are left out. */
void events_render(const struct events_change *c, const struct query *q, struct strbuf *sb);
/* Any thread. Append a resync event: re-read /routes (at generation >= gen). */
void events_render_resync(uint64_t gen, const char *reason, struct strbuf *sb);

/*
 * Any thread. Append c's event as a stream of both families (family=all) sends it: the
 * fields of events_render() after "family":family, the id line id (the stream's cursor
 * after c) instead of the generation; a resync names its family too and has no id. q as
 * for events_render(); none: a filter of the other family (an address), no route matches.
 */
void events_render_family(const struct events_change *c, const struct query *q, int none,
			  const char *family, const char *id, struct strbuf *sb);
/* Any thread. A resync event of one family of a family=all stream. */
void events_render_resync_family(uint64_t gen, const char *family, const char *reason,
				 struct strbuf *sb);

/*
 * Any thread. The routes changed from generation since to the newest one, as one JSON
 * document {"generation","previous","taken_at","added","removed"} (routes removed and added
 * again in between cancel out), filtered by q (NULL: all). Returns 0 with *gen the newest
 * generation; -ERANGE when the history does not reach back to since (or since is newer
 * than the newest); -ENOMEM.
 */
int events_changes(struct events_history *eh, uint64_t since, const struct query *q,
		   struct strbuf *sb, uint64_t *gen) __attribute__((warn_unused_result));
/* The same with "family":family first and no newline at the end when family is not NULL
 * (one member of a family=all answer); none: no route matches (as events_render_family()). */
int events_changes_family(struct events_history *eh, uint64_t since, const struct query *q,
			  int none, const char *family, struct strbuf *sb, uint64_t *gen)
    __attribute__((warn_unused_result));

/* Any thread: counters for /metrics. */
struct events_stats {
	uint64_t recorded, resyncs, routes_added, routes_removed;
	double diff_seconds;
};
void events_stats(struct events_history *eh, struct events_stats *st);

/* ISO 8601 UTC with milliseconds, as /status prints taken_at. */
void events_iso8601(const struct timespec *ts, char *buf, size_t len);

#endif
