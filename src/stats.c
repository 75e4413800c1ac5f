// SPDX-License-Identifier: GPL-2.0-or-later
/* stats.c - the process-wide counters and their label names. */
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
