/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collector.h - the one thread that reads the kernel and publishes snapshots.
 */
#ifndef RTSNAP_COLLECTOR_H
#define RTSNAP_COLLECTOR_H

#include "rtsnap/snapshot.h"

struct collector_opts {
	unsigned int interval_s;  /* full resync period; 0 = only on start, signal and changes */
	unsigned int debounce_ms; /* under sustained churn, changes wait at most this long */
	int nice; /* nice value of the collector thread (its own, not the HTTP threads') */
	/* re-read the routes of devices with routes learned from RAs this often (an RA without
	 * a prefix or user option refreshes them without any message); 0 = never */
	unsigned int ra_refresh_s;
	/* AF_INET: follow IPv4 (mirror4.h: its own sockets, mirror and rules); else IPv6 */
	int family;
	/* the named namespace to follow (/run/netns/NAME, netns.h: its sockets are opened in it);
	 * NULL: the daemon's own. Copied. */
	const char *netns;
	struct snapshot_chain *chain;	/* where it publishes (snapshot.h); the caller's */
	struct events_history *history; /* where it records each change (events.h); the caller's */
	struct collector_stats *stats;	/* its counters (stats.h), zeroed; the caller's */
};

struct collector;

/*
 * Main thread. Start a collector: take the first snapshot synchronously (so the daemon never
 * serves nothing), publish it on o->chain, then start the collector's thread. *out set only
 * on success; 0 or a negative errno (the daemon should not start).
 */
int collector_start(const struct collector_opts *o, struct collector **out)
    __attribute__((warn_unused_result));

/* Any thread (not a signal handler): ask c for a full resync (SIGHUP). NULL is fine. */
void collector_request_resync(struct collector *c);

/* Main thread: stop and join c's thread, free c. NULL is fine. */
void collector_stop(struct collector *c);

/*
 * Any thread not holding an RCU read lock; no thread needed. One complete dump of the
 * namespace this process runs in, sealed but not published (made for a chain of its own that
 * goes with it). *out set only on success.
 */
int collector_collect_once(struct snapshot **out) __attribute__((warn_unused_result));

#endif
