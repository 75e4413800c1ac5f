/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_metrics.h - Prometheus text exposition (format 0.0.4) for /metrics.
 *
 * A scrape is two parts:
 *   - the per-snapshot families (routes by table/protocol/type, multipath, per device,
 *     expiring by table, build info, the optional per-route series; each series labelled
 *     with its instance's family, inet6 or inet),
 *     rendered once per snapshot, by the first scrape that reads it (a publication does not
 *     pay for them), kept in the snapshot plain and pre-compressed;
 *   - the time-dependent families (generation, age, next expiry, routes past their deadline,
 *     collector counters and duration histogram, process metrics), rendered per scrape into a
 *     small buffer with work independent of the table size (O(log expiring) at most).
 * render_metrics_body() joins the two as two segments, optionally as one gzip member.
 */
#ifndef RTSNAP_RENDER_METRICS_H
#define RTSNAP_RENDER_METRICS_H

#include <stdint.h>
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

struct collector_stats;

#define RENDER_METRICS_CTYPE "text/plain; version=0.0.4; charset=utf-8"
/* rtsnap_route_info cap when --metrics-routes is given without --metrics-route-limit */
#define RENDER_METRICS_ROUTE_LIMIT_DEFAULT 10000UL
/* at most this many rtsnap_device_routes series (lowest ifindex first); the rest are summed
 * into rtsnap_device_routes_omitted */
#define RENDER_METRICS_MAX_DEVICES 1024

/*
 * Main thread, before collector_start() (later calls apply from the next snapshot).
 * --metrics-routes: emit rtsnap_route_info, one series per route (per nexthop of a multipath
 * route); off by default. --metrics-route-limit N: at most N routes get series (kernel order),
 * the others are counted in rtsnap_route_info_omitted_routes.
 */
void render_metrics_set_routes(int on);
void render_metrics_set_route_limit(unsigned long n);

/* NULL is fine. */
void render_metrics_free(struct metrics_view *v);

/*
 * Any thread (holding s). The per-snapshot text of s (points into s), built on first use;
 * NULL with *len 0 when it cannot be built (out of memory).
 */
const char *render_metrics_snapshot_text(const struct snapshot *s, size_t *len);

/*
 * Any thread (RCU reader holding s). Append the per-scrape families for s at now_ms
 * (CLOCK_MONOTONIC ms): snapshot generation and age, changes of the last publication, seconds
 * to the next expiry, routes past their deadline; and st's: every counter of the table
 * (stats.h), the duration and latency histograms, freshness. s may be NULL (none yet).
 */
void render_metrics_scrape(const struct snapshot *s, const struct collector_stats *st,
			   int64_t now_ms, struct strbuf *sb);
/*
 * Any thread. The same for the IPv6 instance (s, st; its samples unlabelled, as above) and
 * the IPv4 one (s4, NULL when none is published yet, and st4; NULL st4: the IPv6 one alone;
 * NULL s and st: the IPv4 one alone, still labelled): each family once, the IPv6 samples,
 * then the IPv4 ones labelled family="inet".
 */
void render_metrics_scrape2(const struct snapshot *s, const struct collector_stats *st,
			    const struct snapshot *s4, const struct collector_stats *st4,
			    int64_t now_ms, struct strbuf *sb);

/*
 * An instance a scrape shows: the own IPv6 one's per-scrape samples carry no family label (as
 * before there was another), the IPv4 one's family="inet"; a named namespace's (--netns) carry
 * netns="NAME" too, per-scrape and per-snapshot.
 */
struct render_metrics_inst {
	const struct snapshot *s; /* NULL: none published yet */
	const struct collector_stats *st;
	const char *fam;   /* NULL, or "inet" */
	const char *netns; /* the named namespace whose chain s is on; NULL: the daemon's own */
};

/* Any thread. render_metrics_scrape2() for in[0..n): each family once, in's samples in order. */
void render_metrics_scrape_n(const struct render_metrics_inst *in, size_t n, int64_t now_ms,
			     struct strbuf *sb);

/*
 * Any thread (holding every in[i].s). The /metrics body of several instances (of several
 * namespaces): each per-snapshot family once, its HELP from the first view that has it, then
 * the samples of every in[i].s (built by the first call for it, labelled with in[i].netns),
 * then *dyn. Copied into *dyn as one segment (plain, or one gzip member), so that the response
 * holds none of the snapshots: per scrape, work in proportion to the views' bytes. A snapshot
 * whose part cannot be built is left out. Returns 1 with *segs (malloc()ed) or a negative
 * errno.
 */
int render_metrics_body_n(const struct render_metrics_inst *in, size_t n, struct strbuf *dyn,
			  int gzip, struct render_seg **segs) __attribute__((warn_unused_result));

/* Any thread. Append the process_* families the Prometheus client libraries export. */
void render_metrics_process(struct strbuf *sb);

/*
 * Any thread. Append a label value escaped as the exposition format requires (backslash,
 * double quote, newline); bytes that are not valid UTF-8 become '?'.
 */
void render_metrics_label(struct strbuf *sb, const char *v);

/*
 * Any thread (holding s, not NULL, and s4 when not NULL). The /metrics body: the per-snapshot
 * bytes of s (built by the first call for s) followed by *dyn (the per-scrape text on entry).
 * With s4 (the IPv4 instance's snapshot beside s, the IPv6 one's) each per-snapshot family
 * holds s's series then s4's (the family label tells them apart), and with gzip the whole body
 * is compressed per call into *dyn (one segment). With gzip != 0 the body is one gzip member: the snapshot's
 * pre-compressed bytes, and *dyn replaced by the compressed continuation and trailer. On
 * success *segs (malloc()ed, caller frees; points into s and into *dyn) holds the segments
 * and their number is returned; else a negative errno and *dyn is unchanged or emptied.
 * When the snapshot's bytes cannot be built (no memory) the body is *dyn alone, plain (one
 * segment); with gzip that is -ENOMEM, and the caller may ask again without.
 */
int render_metrics_body(const struct snapshot *s, const struct snapshot *s4, struct strbuf *dyn,
			int gzip, struct render_seg **segs) __attribute__((warn_unused_result));

#endif
