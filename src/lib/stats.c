// SPDX-License-Identifier: GPL-2.0-or-later
/* stats.c - the counters of a collector instance (described once, in stats_table), their label
 * names, and the fault register: an instance's kinds in its counters, the process's here. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "rtsnap/stats.h"

/* The process's own: its start and the process-wide fault kinds. */
static struct {
	int64_t start_time_real_s;	   /* atomic */
	struct fault faults[FAULT__COUNT]; /* the process-wide kinds (stats_fault()) */
} s_process;

void stats_set_start_time(int64_t real_s)
{
	stats_set(s_process.start_time_real_s, real_s);
}

int64_t stats_start_time(void)
{
	return stats_get(s_process.start_time_real_s);
}

const double stats_duration_bounds[STATS_DURATION_BUCKETS] = {
	0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

const char *stats_trigger_name(enum collector_trigger t)
{
	static const char *const names[TRIGGER__COUNT] = {
		"startup", "interval", "signal", "change", "expiry", "resync",
	};
	return (unsigned int)t < TRIGGER__COUNT ? names[t] : "unknown";
}

const char *stats_error_name(enum collector_error e)
{
	static const char *const names[CERR__COUNT] = {
		"socket",	    "recv",    "netlink_error", "truncated", "nomem",
		"dump_interrupted", "timeout",
	};
	return (unsigned int)e < CERR__COUNT ? names[e] : "unknown";
}

void stats_observe_duration(struct collector_stats *st, double seconds)
{
	unsigned int i;

	for (i = 0; i < STATS_DURATION_BUCKETS; i++)
		if (seconds <= stats_duration_bounds[i])
			break;
	/* bucket i counts observations <= bound i (non-cumulative); i == N is +Inf */
	stats_inc(st->duration_bucket[i]);
	stats_inc(st->duration_count);
	{
		/* one writer (the collector); the store is atomic for readers (/metrics) */
		double sum = st->duration_sum + seconds;

		__atomic_store(&st->duration_sum, &sum, __ATOMIC_RELAXED);
	}
}

const double stats_latency_bounds[STATS_LATENCY_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
};

void stats_observe_latency(struct collector_stats *st, double seconds)
{
	unsigned int i;
	double sum;

	for (i = 0; i < STATS_LATENCY_BUCKETS; i++)
		if (seconds <= stats_latency_bounds[i])
			break;
	stats_inc(st->latency.bucket[i]);
	sum = st->latency.sum + seconds;
	__atomic_store(&st->latency.sum, &sum, __ATOMIC_RELAXED);
}

const char *stats_notify_name(enum notify_kind k)
{
	static const char *const names[NOTIFY__COUNT] = {
		"route_new", "route_del", "link",    "nexthop",
		"rule",	     "prefix",	  "address", "nd_useropt",
	};
	return (unsigned int)k < NOTIFY__COUNT ? names[k] : "unknown";
}

const char *stats_tdump_name(enum tdump_reason r)
{
	static const char *const names[TDUMP__COUNT] = {
		"link", "rule", "prefix", "nexthop",  "group",	 "address",
		"ra",	"mtu",	"compat", "expiring", "sibling", "prefsrc",
	};
	return (unsigned int)r < TDUMP__COUNT ? names[r] : "unknown";
}

int stats_is_fresh(const struct collector_stats *st)
{
	int64_t ok = stats_get(st->last_ok_mono_ms), now;
	uint64_t interval_s = stats_get(st->interval_s);
	struct timespec ts;

	if (!ok || stats_get(st->last_error) || stats_fault_active(st, FAULT_MEMORY))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return !(interval_s && now - ok > (int64_t)interval_s * 2000 + 10000);
}

/* The label names of the table below, as functions of an index. */
static const char *trigger_of(int i)
{
	return stats_trigger_name((enum collector_trigger)i);
}
static const char *error_of(int i)
{
	return stats_error_name((enum collector_error)i);
}
static const char *notify_of(int i)
{
	return stats_notify_name((enum notify_kind)i);
}
static const char *tdump_of(int i)
{
	return stats_tdump_name((enum tdump_reason)i);
}

/* The offset of a field of uint64_t values (anything else does not compile). */
#define U64_AT(field)                                                                 \
	(offsetof(struct collector_stats, field) +                                    \
	 0 * sizeof(char[_Generic(((struct collector_stats *)0)->field, uint64_t : 1, \
				  uint64_t * : 1)]))
#define ONE(field) NULL, NULL, 1, U64_AT(field)
#define BY(label, fn, n, field) label, fn, n, U64_AT(field)

const struct stats_desc stats_table[] = {
	{ "rtsnap_collections_total", "counter", "Collections published, by what triggered them.",
	  BY("trigger", trigger_of, TRIGGER__COUNT, collections), "collections", 0 },
	{ "rtsnap_collection_errors_total", "counter",
	  "Collection errors by reason (a failed collection keeps the previous snapshot).",
	  BY("reason", error_of, CERR__COUNT, errors), "errors", 0 },
	{ "rtsnap_dumps_redone_total", "counter",
	  "Dumps redone because the kernel flagged them interrupted (NLM_F_DUMP_INTR).",
	  ONE(dump_intr_redone), "dumps_redone", 0 },
	{ "rtsnap_malformed_messages_total", "counter",
	  "Netlink messages skipped because they failed validation.", ONE(malformed),
	  "malformed_messages", 0 },
	{ "rtsnap_notifications_total", "counter", "Route and link change notifications received.",
	  ONE(notifications), "notifications_received", 1 },
	{ "rtsnap_notification_overruns_total", "counter",
	  "Times the notification socket overflowed (ENOBUFS), each followed by a resync.",
	  ONE(enobufs), "notification_overruns", 1 },
	{ "rtsnap_notification_storms_total", "counter",
	  "Times the collector stopped following a storm of changes before its socket overflowed "
	  "(more queued than a quarter of the mirror's routes), each followed by a resync as "
	  "after an overrun.",
	  ONE(storms), "notification_storms", 1 },
	{ "rtsnap_notifications_skipped_total", "counter",
	  "Notifications read after an overrun and before the full dump it asked for (older "
	  "than the dump, which replaces what they say): not applied.",
	  ONE(overrun_skipped), "notifications_skipped_after_overrun", 1 },
	{ "rtsnap_proc_file_errors_total", "counter", "Failed writes of --proc-file.",
	  ONE(proc_file_errors), "proc_file_errors", 0 },
	{ "rtsnap_notifications_applied_total", "counter",
	  "Kernel notifications applied to the mirror, by kind.",
	  BY("kind", notify_of, NOTIFY__COUNT, notify_applied), "notifications_applied", 1 },
	{ "rtsnap_targeted_dumps_total", "counter",
	  "Dumps of part of the kernel's state run where it changed without a message, by "
	  "reason.",
	  BY("reason", tdump_of, TDUMP__COUNT, targeted_dumps), "targeted_dumps", 1 },
	{ "rtsnap_full_dumps_total", "counter",
	  "Full dumps of every table (resyncs), by what asked for them.",
	  BY("reason", trigger_of, TRIGGER__COUNT, full_dumps), "full_dumps", 1 },
	{ "rtsnap_resync_drift_routes_total", "counter",
	  "Routes a resync found different between the mirror and the kernel (0 unless the "
	  "kernel changed something without telling, or a bug).",
	  ONE(resync_drift_routes), "resync_drift_routes", 1 },
	{ "rtsnap_resyncs_postponed_total", "counter",
	  "Resync dumps not trusted because the kernel changed while they ran.",
	  ONE(resyncs_postponed), "resyncs_postponed", 1 },
	{ "rtsnap_resync_adopt_steps_total", "counter",
	  "Snapshots published while a resync's dump was being merged into the mirror (in "
	  "steps of about a millisecond, between the collector's reads and publications).",
	  ONE(adopt_steps), "resync_adopt_steps", 1 },
	{ "rtsnap_unknown_deletes_total", "counter",
	  "Route deletions for routes the mirror did not hold.", ONE(unknown_deletes),
	  "unknown_deletes", 1 },
	{ "rtsnap_publications_total", "counter", "Snapshots published.", ONE(publications),
	  "publications", 1 },
	{ "rtsnap_segments_built_total", "counter",
	  "Segments (runs of up to 256 routes with their rendered text) built for a publication; "
	  "the others are shared with the previous snapshot.",
	  ONE(segments_built), "segments_built", 1 },
	{ "rtsnap_snapshot_segments", "gauge", "Segments in the last snapshot published.",
	  ONE(segments), "segments", 1 },
	{ "rtsnap_snapshot_segments_shared", "gauge",
	  "Segments of the last snapshot published that it shares with the one before.",
	  ONE(segments_shared), "segments_shared", 1 },
	{ "rtsnap_mirror_routes", "gauge", "Routes (records) in the collector's mirror.",
	  ONE(mirror_routes), "mirror_routes", 1 },
	{ "rtsnap_mirror_bytes", "gauge", "Bytes of memory the collector's mirror holds.",
	  ONE(mirror_bytes), "mirror_bytes", 1 },
};
const size_t stats_table_len = sizeof(stats_table) / sizeof(stats_table[0]);

uint64_t stats_value(const struct collector_stats *st, const struct stats_desc *d, int i)
{
	const uint64_t *p = (const uint64_t *)(const void *)((const char *)st + d->off);

	return __atomic_load_n(&p[i], __ATOMIC_RELAXED);
}

void stats_status_json(const struct collector_stats *st, json_t *top, json_t *coll)
{
	for (size_t k = 0; k < stats_table_len; k++) {
		const struct stats_desc *d = &stats_table[k];
		json_t *v;

		if (!d->label) {
			v = json_integer((json_int_t)stats_value(st, d, 0));
		} else {
			v = json_object();
			for (int i = 0; i < d->n; i++)
				json_object_set_new(
				    v, d->label_value(i),
				    json_integer((json_int_t)stats_value(st, d, i)));
		}
		json_object_set_new(d->in_collector ? coll : top, d->status, v);
	}
}

/* ---- the fault register ---- */

/* Guards every register's fields but active: faults are rare, and read per /status. */
static pthread_mutex_t s_fault_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct {
	const char *name;
	int process; /* kept in s_process, not per instance */
} s_fault_kinds[FAULT__COUNT] = {
	[FAULT_MEMORY] = { "memory", 0 },
	[FAULT_PROC_FILE] = { "proc_file", 0 },
	[FAULT_WEB_CONFIG] = { "web_config", 1 },
};

const char *stats_fault_name(enum fault_kind k)
{
	return (unsigned int)k < FAULT__COUNT ? s_fault_kinds[k].name : "unknown";
}

struct fault *stats_fault(struct collector_stats *st, enum fault_kind k)
{
	return s_fault_kinds[k].process || !st ? &s_process.faults[k] : &st->faults[k];
}

static const struct fault *fault_of(const struct collector_stats *st, enum fault_kind k)
{
	return s_fault_kinds[k].process || !st ? &s_process.faults[k] : &st->faults[k];
}

static int64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fault_set(struct fault *f, int error, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s_fault_lock);
	if (!__atomic_load_n(&f->active, __ATOMIC_RELAXED)) {
		f->since_real_ms = clock_ms(CLOCK_REALTIME);
		f->since_mono_ms = clock_ms(CLOCK_MONOTONIC);
	}
	f->error = error;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	__atomic_store_n(&f->active, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s_fault_lock);
}

void fault_clear(struct fault *f)
{
	if (!__atomic_load_n(&f->active, __ATOMIC_RELAXED))
		return; /* only its owner sets it */
	pthread_mutex_lock(&s_fault_lock);
	__atomic_store_n(&f->active, 0, __ATOMIC_RELAXED);
	f->error = 0;
	f->msg[0] = 0;
	pthread_mutex_unlock(&s_fault_lock);
}

int stats_fault_active(const struct collector_stats *st, enum fault_kind k)
{
	return __atomic_load_n(&fault_of(st, k)->active, __ATOMIC_RELAXED);
}

int stats_fault_get(const struct collector_stats *st, enum fault_kind k, struct fault *out)
{
	pthread_mutex_lock(&s_fault_lock);
	*out = *fault_of(st, k);
	pthread_mutex_unlock(&s_fault_lock);
	return out->active;
}

void stats_faults_json(const struct collector_stats *st, json_t *arr, int64_t now_mono_ms)
{
	for (int k = 0; k < FAULT__COUNT; k++) {
		struct fault f;
		struct tm tm;
		time_t t;
		char when[64];

		if (!stats_fault_get(st, (enum fault_kind)k, &f))
			continue;
		t = (time_t)(f.since_real_ms / 1000);
		gmtime_r(&t, &tm);
		snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)(f.since_real_ms % 1000));
		json_array_append_new(
		    arr, json_pack("{s:s,s:s,s:f,s:s?,s:s}", "kind",
				   stats_fault_name((enum fault_kind)k), "since", when,
				   "age_seconds", (double)(now_mono_ms - f.since_mono_ms) / 1000.0,
				   "error", f.error ? strerror(-f.error) : NULL, "detail", f.msg));
	}
}
