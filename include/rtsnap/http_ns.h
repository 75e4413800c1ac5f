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

/* Any thread. Drop a reference; the last one frees ns and what it took over. NULL is fine. */
void http_ns_put(struct http_ns *ns);

#endif
