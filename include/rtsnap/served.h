/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * served.h - the named network namespaces the daemon serves beside its own: --netns NAME for
 * each name given, --netns all for every name in /run/netns as namespaces come and go
 * (inotify, no polling). Each one's instances (a collector, chain, history and counters per
 * family followed) are started when its name is served and stopped when it goes (http_ns.h's
 * order: unlisted first, collectors stopped, then the last reference frees the rest).
 *
 * Threads: main only. A namespace's first dump runs on the main thread (collector_start());
 * the collector thread goes on with the others meanwhile.
 */
#ifndef RTSNAP_SERVED_H
#define RTSNAP_SERVED_H

#include <stdint.h>

struct collector_opts;
struct events_opts;

/*
 * The options every served namespace's instances are started with: families (ONCE_INET6,
 * ONCE_INET of once.h), the
 * collector's (its family, netns, chain, history and counters are each instance's own) and
 * the history's. Copied. Call once, before anything else here.
 */
void served_init(unsigned int families, const struct collector_opts *co,
		 const struct events_opts *eo);

/* Serve name now (--netns NAME). 0 or a negative errno (nothing of it left then). */
int served_add(const char *name) __attribute__((warn_unused_result));

/*
 * Serve every namespace of /run/netns now and follow the directory (--netns all): a name
 * created is served (once it is a namespace: `ip netns add` mounts it after creating it, so a
 * name that is not one yet is tried again, soon and then less often), a name deleted stops
 * being served, a name made again is a new namespace. 0 or a negative errno.
 */
int served_follow_all(void) __attribute__((warn_unused_result));

/* The descriptors to poll (POLLIN) in pfd[0..2): /run/netns followed (fd -1 when it is not),
 * namespaces to free; returns 2. */
struct pollfd;
int served_fds(struct pollfd pfd[2]);
/* Milliseconds until a name not served yet is tried again (-1: none waiting). */
int served_timeout_ms(void);
/* After POLLIN on served_fds() or the timeout: names come and go, retries due are made,
 * namespaces whose last reference went are freed. */
void served_poll(void);

/* Ask every served namespace's collectors for a resync (SIGHUP). */
void served_resync(void);
/* Stop serving every namespace and free everything (after http_stop()). */
void served_stop_all(void);

#endif
