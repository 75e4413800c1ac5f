/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.h - watched routes evaluated at publication (docs/watch.md).
 *
 * Each collector instance keeps a struct watch_state (its writer: the collector thread) that
 * carries what lasts across snapshots: per watch of its family and namespace, the current
 * answer (present, the route) with its change count, last change time and last changes.
 * At every publication watch_eval() evaluates those watches against the new sealed snapshot
 * and attaches the result to it as a view (snapshot_views(s)->watch, freed with the
 * snapshot). An answer is immutable and reference-counted: a watch whose answer did not
 * change shares it with the snapshot before, so a publication allocates for the watches that
 * changed only.
 *
 * Readers (HTTP) gather the answers of every instance for the current list
 * (watch_reading_*) and render /watch and the rtsnap_watch_* series from them; a watch whose
 * instance is not served (a namespace not followed, a family not followed) reads as absent.
 */
#ifndef RTSNAP_WATCH_H
#define RTSNAP_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"
#include "rtsnap/watchspec.h"

#define WATCH_HISTORY 8	     /* changes kept per watch */
#define WATCH_DIFF_MAX 65536 /* changed routes past which every watch is evaluated */

struct watch_change {
	uint64_t generation; /* of the snapshot that showed the change */
	int64_t time_ms;     /* unix time, ms */
	char *route;	     /* the route object it resolved to then, or NULL (absent) */
};

/* One watch's answer in one snapshot; immutable, shared between snapshots while it holds. */
struct watch_answer {
	unsigned long refs; /* atomic */
	uint8_t present;
	uint8_t family;
	char *route;	    /* JSON object as /routes prints it, or NULL */
	char *info;	    /* rtsnap_watch_route_info's own labels, escaped, or NULL */
	char *key;	    /* what a change is judged by (type, table, dst, hops), or NULL */
	int64_t changed_ms; /* unix time of the last change (the daemon's start before any) */
	uint64_t changes;
	uint64_t generation; /* of the snapshot it was made for */
	unsigned int nhist;
	struct watch_change hist[WATCH_HISTORY]; /* newest first */
};

/* The answers attached to one snapshot (its view). */
struct watch_view {
	struct watch_list *list; /* the list they were evaluated with (a reference) */
	size_t n;
	uint32_t *pos;		   /* n: each answer's watch, a position in list */
	struct watch_answer **ans; /* n, in the list's order of this instance's watches */
};

/* The collector instance's state (its thread only). */
struct watch_state {
	uint8_t family;
	char *netns; /* "" for the daemon's own */
	struct watch_list *list;
	uint64_t serial;
	size_t n;
	uint32_t *pos;		   /* this instance's watches: positions in list */
	struct watch_answer **ans; /* their current answers (NULL before the first) */
	uint32_t *by_target;	   /* 0..n-1 by table and address, to find the due ones */
	uint8_t *due;		   /* per watch: a changed route can answer it */
	uint64_t evaluated;	   /* answers computed (tests, benchmarks) */
};

/* Collector thread (or the thread that starts it). 0 or -ENOMEM. */
int watch_state_init(struct watch_state *st, uint8_t family, const char *netns)
    __attribute__((warn_unused_result));
void watch_state_free(struct watch_state *st);
/* Whether the process's list changed since st last evaluated (a publication is due). */
int watch_state_stale(const struct watch_state *st);

/*
 * Collector thread, on a sealed snapshot not yet published: evaluate st's watches against s
 * and attach the answers (snapshot_views(s)->watch); now_real_ms: the unix time a change is
 * dated with. prev: the snapshot s replaces (NULL: none); only the watches that a route
 * differing between prev and s can answer are evaluated again (diff.h), the others keep
 * their answers; every watch when the list changed, prev is NULL or more than
 * WATCH_DIFF_MAX routes differ. 0 or -ENOMEM (s then has no answers: its watches read as
 * absent until the next publication).
 */
int watch_eval(struct watch_state *st, struct snapshot *s, const struct snapshot *prev,
	       int64_t now_real_ms) __attribute__((warn_unused_result));

/* Free a view (NULL is fine); compose.c's free function calls it. */
void watch_view_free(struct watch_view *v);
void watch_answer_put(struct watch_answer *a);

/* A reader's gathering of answers for the current list. */
struct watch_reading {
	struct watch_list *list;   /* a reference, NULL: no watch configured */
	struct watch_answer **ans; /* per list position, a reference or NULL (absent) */
	uint64_t *gen;		   /* per list position, the generation it was read from */
};

/* Any thread. Start a reading of the current list. 0 or -ENOMEM. */
int watch_reading_init(struct watch_reading *r) __attribute__((warn_unused_result));
/* Take the answers s holds (of the instance of family and namespace netns, "" = own). */
void watch_reading_add(struct watch_reading *r, const struct snapshot *s);
void watch_reading_free(struct watch_reading *r);

/* The /watch body. */
void watch_render_json(const struct watch_reading *r, struct strbuf *sb);
/* The rtsnap_watch* families. */
void watch_render_metrics(const struct watch_reading *r, struct strbuf *sb);

#endif
