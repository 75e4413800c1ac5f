// SPDX-License-Identifier: GPL-2.0-or-later
/* stats.c - the process-wide counters and their label names. */
#include <time.h>
#include "rtsnap/stats.h"

struct rtsnap_stats g_stats;

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

void stats_observe_duration(double seconds)
{
	unsigned int i;

	for (i = 0; i < STATS_DURATION_BUCKETS; i++)
		if (seconds <= stats_duration_bounds[i])
			break;
	/* bucket i counts observations <= bound i (non-cumulative); i == N is +Inf */
	stats_inc(g_stats.duration_bucket[i]);
	stats_inc(g_stats.duration_count);
	{
		/* one writer (the collector); the store is atomic for readers (/metrics) */
		double sum = g_stats.duration_sum + seconds;

		__atomic_store(&g_stats.duration_sum, &sum, __ATOMIC_RELAXED);
	}
}

const double stats_latency_bounds[STATS_LATENCY_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
};

void stats_observe_latency(double seconds)
{
	unsigned int i;
	double sum;

	for (i = 0; i < STATS_LATENCY_BUCKETS; i++)
		if (seconds <= stats_latency_bounds[i])
			break;
	stats_inc(g_stats.latency.bucket[i]);
	sum = g_stats.latency.sum + seconds;
	__atomic_store(&g_stats.latency.sum, &sum, __ATOMIC_RELAXED);
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
		"link", "rule", "prefix", "nexthop", "group", "address", "ra",
	};
	return (unsigned int)r < TDUMP__COUNT ? names[r] : "unknown";
}

int stats_is_fresh(void)
{
	int64_t ok = stats_get(g_stats.last_ok_mono_ms), now;
	uint64_t interval_s = stats_get(g_stats.interval_s);
	struct timespec ts;

	if (!ok || stats_get(g_stats.last_error))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return !(interval_s && now - ok > (int64_t)interval_s * 2000 + 10000);
}
