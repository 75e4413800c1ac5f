/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collector.h - the one thread that reads the kernel and publishes snapshots.
 */
#ifndef RTSNAP_COLLECTOR_H
#define RTSNAP_COLLECTOR_H

#include "rtsnap/snapshot.h"

struct collector_opts {
	unsigned int interval_s;  /* full resync period; 0 = only on start, signal and changes */
	unsigned int debounce_ms; /* at least this long between two publications */
	int nice; /* nice value of the collector thread (its own, not the HTTP threads') */
	/* re-read the routes of devices with routes learned from RAs this often (an RA without
	 * a prefix or user option refreshes them without any message); 0 = never */
	unsigned int ra_refresh_s;
};

/*
 * Main thread. Take the first snapshot synchronously (so the daemon never serves nothing),
 * publish it, then start the collector thread. Returns 0 or a negative errno (the daemon
 * should not start).
 */
int collector_start(const struct collector_opts *o) __attribute__((warn_unused_result));

/* Async-signal-safe: ask for a full resync (SIGHUP). */
void collector_request_resync(void);

/* Main thread: stop and join the collector thread. Safe to call if never started. */
void collector_stop(void);

/*
 * Any thread not holding an RCU read lock; no thread needed. One complete dump of the
 * namespace this process runs in, sealed but not published. *out set only on success.
 */
int collector_collect_once(struct snapshot **out) __attribute__((warn_unused_result));

/* Any thread: true while the current snapshot is fresh (last collection succeeded recently). */
int collector_is_fresh(void);

/* The configured interval (for /status and staleness). */
unsigned int collector_interval(void);

#endif
