/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h - process-wide counters and collector health, for /status, /healthz and /metrics.
 *
 * Counters are updated with relaxed atomics by their one owner (collector or HTTP threads)
 * and read by anyone; a reader may see values from slightly different instants.
 */
#ifndef RTSNAP_STATS_H
#define RTSNAP_STATS_H

#include <stdint.h>

enum collector_trigger {
	TRIGGER_STARTUP,
	TRIGGER_INTERVAL,
	TRIGGER_SIGNAL,
	TRIGGER_CHANGE,
	TRIGGER_EXPIRY,
	TRIGGER_RESYNC, /* notification socket overflowed (ENOBUFS) */
	TRIGGER__COUNT
};

enum collector_error {
	CERR_SOCKET,	/* socket, bind, send failed */
	CERR_RECV,	/* recvmsg failed */
	CERR_NLMSGERR,	/* kernel answered NLMSG_ERROR */
	CERR_TRUNCATED, /* datagram or message cut short */
	CERR_NOMEM,
	CERR_DUMP_INTR_GAVE_UP, /* NLM_F_DUMP_INTR on every retry */
	CERR_TIMEOUT,
	CERR__COUNT
};

/* Notifications applied to the mirror, by kind. */
enum notify_kind {
	NOTIFY_ROUTE_NEW,
	NOTIFY_ROUTE_DEL,
	NOTIFY_LINK,
	NOTIFY_NEXTHOP,
	NOTIFY_RULE,
	NOTIFY_PREFIX,
	NOTIFY_ADDR,
	NOTIFY_ND_USEROPT, /* RTM_NEWNDUSEROPT: an RA carried RDNSS, DNSSL, prefix, ... options */
	NOTIFY__COUNT
};

/* Targeted dumps (less than a full dump) run where the kernel changes state silently. */
enum tdump_reason {
	TDUMP_LINK,    /* a link changed state: its routes' linkdown/dead flags */
	TDUMP_RULE,    /* a rule names a table we do not know */
	TDUMP_PREFIX,  /* RTF_PREFIX_RT marks (RTM_F_PREFIX dump) */
	TDUMP_NEXTHOP, /* nexthop objects flushed or shrunk without a message */
	TDUMP_GROUP,   /* tables with routes over a nexthop group that lost a member */
	TDUMP_ADDR,    /* an address or an RA prefix changed: its device's routes' lifetimes */
	TDUMP_RA,      /* an RA may have refreshed routes learned from RAs: their device's */
	TDUMP__COUNT
};

#define STATS_LATENCY_BUCKETS 12
/* Change-to-publication latency histogram (one writer: the collector). */
struct stats_hist {
	uint64_t bucket[STATS_LATENCY_BUCKETS + 1]; /* non-cumulative; last is +Inf */
	double sum;
};

#define HTTP_EP__MAX 16
/* columns of http_requests_code: the codes in http.c's table, then "other" */
#define HTTP_CODE__MAX 13

struct rtsnap_stats {
	/* collector */
	uint64_t collections[TRIGGER__COUNT]; /* successful publications by trigger */
	uint64_t errors[CERR__COUNT];
	uint64_t dump_intr_redone; /* dumps redone after NLM_F_DUMP_INTR */
	uint64_t malformed;	   /* messages skipped by validation */
	uint64_t notifications;	   /* change notifications received */
	uint64_t enobufs;	   /* notification socket overruns */
	uint64_t storms;	   /* storms given up on before the socket overflowed */
	uint64_t overrun_skipped;  /* notifications read after an overrun and before its dump */
	uint64_t proc_file_errors;
	int64_t last_ok_mono_ms; /* when the last successful collection finished (0 = never) */
	int64_t last_attempt_mono_ms;
	int32_t last_error; /* negative errno of the last failed collection, 0 if the last one ok */
	uint32_t last_added, last_removed; /* routes changed by the last publication */
	/* observed collection durations, for the histogram (seconds buckets in render_metrics) */
	uint64_t duration_bucket[12];
	uint64_t duration_count;
	double duration_sum;
	/* incremental collector */
	uint64_t notify_applied[NOTIFY__COUNT];
	uint64_t targeted_dumps[TDUMP__COUNT];
	uint64_t full_dumps[TRIGGER__COUNT]; /* by what asked for them */
	uint64_t resync_drift_routes;	     /* routes a resync found different from the mirror */
	uint64_t resyncs_postponed; /* resync dumps not trusted (the kernel changed meanwhile) */
	uint64_t adopt_steps;	    /* publications between the steps of adopting a dump */
	uint64_t unknown_deletes;   /* deletes of routes the mirror did not have */
	uint64_t publications;
	uint64_t segments_built; /* segments rendered for a publication (the rest were shared) */
	uint64_t segments, segments_shared; /* in the last publication, and how many of them it
					       shared with the one before */
	uint64_t mirror_routes, mirror_bytes;
	int64_t last_enobufs_mono_ms;
	struct stats_hist latency; /* first unpublished change received -> published */
	/* http */
	uint64_t http_requests[HTTP_EP__MAX][6]; /* unused: superseded by http_requests_code */
	uint64_t http_requests_code[HTTP_EP__MAX][HTTP_CODE__MAX]; /* by endpoint and status
								     code idx (http.c) */
	uint64_t http_bytes;
	uint64_t http_shed;	       /* waiting connections closed to make room for new ones */
	uint64_t http_header_timeouts; /* 408: no complete request head within --header-timeout */
	uint64_t http_busy;	       /* 503: every libmicrohttpd connection in use */
	uint64_t http_request_timeouts[2]; /* connections shut down after the handover: a first
					      request (0) or a later one (1) not complete within
					      --header-timeout (http_gate.c) */
	uint64_t http_evicted;	      /* connections waiting for their clients closed to let a new
				  request in when every slot was in use (http_gate.c) */
	uint64_t http_dropped_pinned; /* responses closed: replaced snapshots pinned beyond
					  --max-pinned-bytes (http_pin.c) */
	/* process */
	int64_t start_time_real_s;
	uint64_t interval_s; /* the collector's --interval (set once at its start) */
};

extern struct rtsnap_stats g_stats;

/* Relaxed atomic helpers. */
#define stats_inc(field) __atomic_add_fetch(&(field), 1, __ATOMIC_RELAXED)
#define stats_add(field, v) __atomic_add_fetch(&(field), (v), __ATOMIC_RELAXED)
#define stats_set(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define stats_get(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* Any thread: true while the current snapshot is fresh: the last collection succeeded, and
 * recently enough for the collector's interval. */
int stats_is_fresh(void);

/* Names for labels. */
const char *stats_trigger_name(enum collector_trigger t);
const char *stats_error_name(enum collector_error e);

/* Duration histogram bucket upper bounds in seconds (STATS_DURATION_BUCKETS of them, +Inf last). */
#define STATS_DURATION_BUCKETS 11
extern const double stats_duration_bounds[STATS_DURATION_BUCKETS];
/* Collector thread: record one collection duration. */
void stats_observe_duration(double seconds);

/* Upper bounds (seconds) of the latency histogram's buckets (+Inf last, not listed). */
extern const double stats_latency_bounds[STATS_LATENCY_BUCKETS];
/* Collector thread: record one change-to-publication latency. */
void stats_observe_latency(double seconds);
const char *stats_notify_name(enum notify_kind k);
const char *stats_tdump_name(enum tdump_reason r);

#endif
