/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_ns.h - the named network namespaces served beside the daemon's own (--netns): each one's
 * instances (one per family followed), found by name under /netns/NAME/..., listed at /netns,
 * in /metrics with a netns="NAME" label.
 *
 * Lifetimes: a served namespace is reference-counted. The one who makes it (main) holds one
 * reference, the registry one while it is served, every request that reads it and every
 * /events stream one. Its chains, histories and counters are its own from http_ns_new() on and
 * freed with its last reference, so a request or stream that found it never reads freed
 * memory, however late it ends. After http_ns_remove() no request finds it any more (404) and
 * its streams end.
 *
 * Order for whoever owns the collectors (main): http_ns_new(), start its collectors on its
 * chains and histories, http_ns_add(); to drop it: http_ns_remove(), stop its collectors
 * (no more publications), http_ns_put().
 */
#ifndef RTSNAP_HTTP_NS_H
#define RTSNAP_HTTP_NS_H

#include <stddef.h>

#include "rtsnap/http.h"

struct http_ns;

/*
 * Main thread. A served namespace named name (netns_name_valid()) with the instances inst[0..n)
 * (one per family followed, at least one; the same rules as http_opts.inst). Their chains,
 * histories and counters are taken over, freed with the last reference (on failure too).
 * *out (one reference, the caller's) set only on success; 0 or a negative errno.
 */
int http_ns_new(const char *name, const struct http_instance *inst, unsigned int n,
		struct http_ns **out) __attribute__((warn_unused_result));

/*
 * Main thread, before or after http_start(). Serve ns at /netns/NAME/... and list it at /netns
 * (the registry takes its own reference). 0, -EEXIST (a namespace of that name is served) or a
 * negative errno.
 */
int http_ns_add(struct http_ns *ns) __attribute__((warn_unused_result));

/*
 * Main thread. Stop serving ns: from the return on, /netns/NAME/... answers 404 and /netns and
 * /metrics leave it out; its /events streams end. Drops the registry's reference. Its instances'
 * collectors may still publish until the caller stops them. Not served: nothing happens.
 */
void http_ns_remove(struct http_ns *ns);

/*
 * Any thread. Drop a reference; after the last one, ns and what it took over are freed by the
 * next http_ns_reap() on main (freeing a chain waits for a grace period, which a worker or the
 * fan-out thread must not). NULL is fine.
 */
void http_ns_put(struct http_ns *ns);

/* Main thread, before the first http_ns_new(): the descriptor to poll for POLLIN, readable
 * when namespaces wait to be freed. -1 if it cannot be made (they are freed at the next
 * http_ns_reap() anyway). */
int http_ns_reap_fd(void);
/* Main thread, not inside an RCU read-side section: free the namespaces whose last reference
 * went. */
void http_ns_reap(void);

/*
 * Main thread, before http_start(). --metrics-netns-limit: per-namespace series in /metrics
 * for at most n named namespaces (the lowest names); the others are summed into
 * rtsnap_netns_omitted and rtsnap_netns_omitted_routes. Default HTTP_NS_METRICS_LIMIT.
 */
#define HTTP_NS_METRICS_LIMIT 100
void http_ns_set_metrics_limit(unsigned int n);

/* ---- for the HTTP modules (dispatch, events, status, metrics) ---- */

struct snapshot_chain;
struct collector_stats;

/* What a request of a served namespace reads: as struct http_site's fields. Lives as long as
 * a reference on its namespace. */
struct http_ns_view {
	const char *name;
	const char *text; /* name as valid UTF-8 (any other byte '?'), for JSON documents */
	struct snapshot_chain *chain; /* IPv6's, or IPv4's alone (no_inet6) */
	const struct collector_stats *stats;
	int no_inet6;
	struct snapshot_chain *chain4; /* IPv4's, or NULL */
	const struct collector_stats *stats4;
	struct events_history *hist, *hist4; /* IPv6's (NULL: not followed), IPv4's */
};

/* Any thread (not a signal handler). The namespace served as name, with a reference
 * (http_ns_put()), or NULL (none, or removed). */
struct http_ns *http_ns_get(const char *name);
/* Any thread. Every namespace served now, sorted by name (strcmp), each with a reference:
 * *out malloc()ed (NULL when *n is 0); free both with http_ns_list_free(). 0 or -ENOMEM. */
int http_ns_list(struct http_ns ***out, size_t *n) __attribute__((warn_unused_result));
void http_ns_list_free(struct http_ns **v, size_t n);
/* Any thread: --metrics-netns-limit. */
unsigned int http_ns_metrics_limit(void);
/* Any thread. How many are served (a gauge; may change right after). */
size_t http_ns_count(void);
/* Any thread holding a reference: one more (http_ns_put()). */
void http_ns_hold(struct http_ns *ns);
/* Any thread holding a reference: 1 once http_ns_remove() ran (its streams end). */
int http_ns_gone(const struct http_ns *ns);
const struct http_ns_view *http_ns_view(const struct http_ns *ns);
/*
 * Main thread (http_events.c, when the fan-out thread starts and stops). fn is set as the
 * notify function (events_set_notify()) of every served namespace's histories, now and when
 * added (cleared when removed), and called after a removal so that its streams end.
 */
void http_ns_set_notify(void (*fn)(void));

#endif
