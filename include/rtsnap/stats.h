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
	TDUMP_LINK,	/* a link changed state: its routes' linkdown/dead flags */
	TDUMP_RULE,	/* a rule names a table we do not know */
	TDUMP_PREFIX,	/* RTF_PREFIX_RT marks (RTM_F_PREFIX dump) */
	TDUMP_NEXTHOP,	/* nexthop objects flushed or shrunk without a message */
	TDUMP_GROUP,	/* tables with routes over a nexthop group that lost a member */
	TDUMP_ADDR,	/* an address or an RA prefix changed: its device's routes' lifetimes */
	TDUMP_RA,	/* an RA may have refreshed routes learned from RAs: their device's */
	TDUMP_MTU,	/* a device's MTU changed: the kernel rewrote its routes' mtu */
	TDUMP_COMPAT,	/* net.ipv4.nexthop_compat_mode changed: routes over nexthop objects */
	TDUMP_EXPIRING, /* the periodic check of the expiring routes (silent appends) */
	TDUMP_SIBLING,	/* a group's first leg went: the survivor's own attributes */
	TDUMP_PREFSRC,	/* an address went: routes that had it as their preferred source */
	TDUMP__COUNT
};

#define STATS_LATENCY_BUCKETS 12
/* Change-to-publication latency histogram (one writer: the collector). */
struct stats_hist {
	uint64_t bucket[STATS_LATENCY_BUCKETS + 1]; /* non-cumulative; last is +Inf */
	double sum;
};

/*
 * The fault register: a persistent fault (a thing that keeps failing until something outside
 * the daemon changes) is set by the thread that met it when it fails and cleared by the same
 * thread when the thing works again. Shown in /status ("faults") and in /metrics
 * (rtsnap_fault{kind}); every kind is always listed in /metrics. A kind is either one
 * collector instance's (in its struct collector_stats) or the process's (in stats.c): see
 * stats_fault().
 */
enum fault_kind {
	FAULT_MEMORY,	  /* the collector ran out of memory: it recovers with a fresh dump (per
			     instance; written by its collector thread) */
	FAULT_PROC_FILE,  /* --proc-file cannot be written (per instance; its writer thread) */
	FAULT_WEB_CONFIG, /* SIGHUP found --web-config-file or its TLS files unusable: the
			     previous web configuration stays in force (process; main thread) */
	FAULT__COUNT
};

#define FAULT_MSG_MAX 160
/* One kind's state. active is read without a lock (relaxed); the rest under stats.c's lock. */
struct fault {
	int active;
	int32_t error;		 /* negative errno of the last failure (0: none known) */
	int64_t since_real_ms;	 /* when it began (CLOCK_REALTIME) */
	int64_t since_mono_ms;	 /* the same, CLOCK_MONOTONIC */
	char msg[FAULT_MSG_MAX]; /* what failed, for a person */
};

/*
 * One collector instance's counters and health: written by its collector (and the netlink
 * connections and proc-file writer working for it), read by anyone through what the instance
 * publishes. Described once in stats.c's table (name, help, type, label, /status key), from
 * which /metrics and /status are rendered.
 */
struct collector_stats {
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
	uint32_t resync_phase;	    /* 0: no resync runs; 1: its dump runs; 2: it is merged */
	uint64_t unknown_deletes;   /* deletes of routes the mirror did not have */
	uint64_t publications;
	uint64_t segments_built; /* segments rendered for a publication (the rest were shared) */
	uint64_t segments, segments_shared; /* in the last publication, and how many of them it
					       shared with the one before */
	uint64_t mirror_routes, mirror_bytes;
	int64_t last_enobufs_mono_ms;
	struct stats_hist latency;	   /* first unpublished change received -> published */
	uint64_t interval_s;		   /* the collector's --interval (set once at its start) */
	struct fault faults[FAULT__COUNT]; /* the per-instance kinds (stats_fault()) */
};

/* Any thread. The process's start (CLOCK_REALTIME seconds), set once by main at start.
 * (The HTTP front door's counters are its own: http_count.h.) */
void stats_set_start_time(int64_t real_s);
int64_t stats_start_time(void);

/*
 * The table that describes each counter of struct collector_stats once: its /metrics family
 * (name, type, help, label) and its /status key. /metrics (render_metrics.c) and /status
 * (stats_status_json()) are rendered from it; a new counter is a field and a line in the
 * table (stats.c). Values are uint64_t, n of them from off (one per label value).
 */
struct stats_desc {
	const char *metric; /* family name */
	const char *type;   /* "counter" or "gauge" */
	const char *help;
	const char *label;		   /* NULL: one sample */
	const char *(*label_value)(int i); /* the label's value for sample i */
	int n;				   /* samples */
	size_t off;			   /* offsetof(struct collector_stats, the first) */
	const char *status;		   /* its key in /status */
	int in_collector;		   /* 1: under "collector" in /status; 0: at the top */
};
extern const struct stats_desc stats_table[];
extern const size_t stats_table_len;

/* Any thread. Value i of d in st (relaxed). */
uint64_t stats_value(const struct collector_stats *st, const struct stats_desc *d, int i);

struct json_t;
/* Any thread. Every counter of the table into the /status objects top and coll (its
 * "collector" object): a number, or an object by label value. */
void stats_status_json(const struct collector_stats *st, struct json_t *top, struct json_t *coll);

/* Relaxed atomic helpers. */
#define stats_inc(field) __atomic_add_fetch(&(field), 1, __ATOMIC_RELAXED)
#define stats_add(field, v) __atomic_add_fetch(&(field), (v), __ATOMIC_RELAXED)
#define stats_set(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define stats_get(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* Any thread: true while st's instance's current snapshot is fresh: its last collection
 * succeeded, and recently enough for its collector's interval. */
int stats_is_fresh(const struct collector_stats *st);

/* Any thread. Where kind k is kept: in st (an instance's kind) or in stats.c (a process-wide
 * one; st may then be NULL). */
struct fault *stats_fault(struct collector_stats *st, enum fault_kind k);
/* The thread that owns kind k: the fault is there (since the first call of a run of failures;
 * error and the message, printf-style, from the last). */
void fault_set(struct fault *f, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same thread: the thing works again. */
void fault_clear(struct fault *f);
/* Any thread: whether kind k is set for st's instance (or the process). */
int stats_fault_active(const struct collector_stats *st, enum fault_kind k);
/* Any thread: a copy of kind k's state, taken under the lock; returns its active flag. */
int stats_fault_get(const struct collector_stats *st, enum fault_kind k, struct fault *out);
/* Any thread. The faults set for st's instance and the process into arr (one object each:
 * kind, since, age_seconds, error, detail), now_mono_ms being CLOCK_MONOTONIC in ms. */
void stats_faults_json(const struct collector_stats *st, struct json_t *arr, int64_t now_mono_ms);
const char *stats_fault_name(enum fault_kind k);

/* Names for labels. */
const char *stats_trigger_name(enum collector_trigger t);
const char *stats_error_name(enum collector_error e);

/* Duration histogram bucket upper bounds in seconds (STATS_DURATION_BUCKETS of them, +Inf last). */
#define STATS_DURATION_BUCKETS 11
extern const double stats_duration_bounds[STATS_DURATION_BUCKETS];
/* Collector thread: record one collection duration. */
void stats_observe_duration(struct collector_stats *st, double seconds);

/* Upper bounds (seconds) of the latency histogram's buckets (+Inf last, not listed). */
extern const double stats_latency_bounds[STATS_LATENCY_BUCKETS];
/* Collector thread: record one change-to-publication latency. */
void stats_observe_latency(struct collector_stats *st, double seconds);
const char *stats_notify_name(enum notify_kind k);
const char *stats_tdump_name(enum tdump_reason r);

#endif
