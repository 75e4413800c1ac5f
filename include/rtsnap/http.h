/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.h - libmicrohttpd glue. Handlers are RCU readers only: they never block on the
 * collector and never talk to the kernel.
 */
#ifndef RTSNAP_HTTP_H
#define RTSNAP_HTTP_H

#define HTTP_PIN_FACTOR 2 /* --max-pinned-bytes default: 2x the current snapshot */
struct webconfig;
struct events_history;

/* What an instance (one family's collector) publishes, as HTTP reads it; the caller's. */
struct http_instance {
	int family;			/* AF_INET6 or AF_INET */
	struct snapshot_chain *chain;	/* its snapshots (snapshot.h) */
	struct events_history *history; /* its changes (events.h) */
	struct collector_stats *stats;	/* its counters (stats.h) */
};

struct http_opts {
	const char *const *listen; /* "HOST:PORT", "[V6]:PORT", "unix:/path" */
	unsigned int nlisten;
	unsigned int threads;	       /* per listener; 0 = number of CPUs */
	unsigned int conn_limit;       /* per listener */
	unsigned int timeout_s;	       /* idle connection timeout */
	unsigned int max_pending;      /* per listener: connections still sending their first
					  request head */
	unsigned int header_timeout_s; /* time from accept to a complete first request head */
	unsigned int unix_mode;	       /* mode of unix:/path sockets (e.g. 0660) */
	unsigned int unix_gid;	       /* their group; (unsigned int)-1: the daemon's */
	/* bound on replaced snapshots kept alive by in-flight responses (--max-pinned-bytes):
	 * max_pinned_bytes != 0: that many bytes; else max_pinned_factor x the current
	 * snapshot's bytes; both 0: no bound */
	unsigned long long max_pinned_bytes;
	unsigned int max_pinned_factor;
	struct webconfig *web; /* --web-config-file (TLS, basic auth) or NULL; owned by
					  http from http_start() on, freed on failure too */
	/* the instances it serves, one per family followed (at least one): the IPv6 one
	 * serves every path but /route and /proc/net/route, which the IPv4 one serves (404
	 * without it); /routes?family= reads either or both. With the IPv4 one alone, it
	 * serves every path, family= defaults to inet and the IPv6 paths answer 404 */
	const struct http_instance *inst;
	unsigned int ninst;
};

/* Main thread. Bind every listener and start serving. 0 or a negative errno (nothing left
 * running on failure). */
int http_start(const struct http_opts *o) __attribute__((warn_unused_result));
/* Main thread. Close listeners and stop workers; in-flight responses finish or are dropped. */
void http_stop(void);

/*
 * Main thread, after http_start(). Serve new connections with web configuration wc (taken
 * over; freed on failure too) on every listener; connections already open finish on the
 * previous configuration. 0, or a negative errno with the previous configuration still in
 * force.
 */
int http_reload(struct webconfig *wc) __attribute__((warn_unused_result));
/* Main thread. Stop previous configurations whose connections are done; returns how many
 * are still waiting (call again in about a second while it is not 0). */
int http_reap(void);

/* Parse a --listen value; 0 or -EINVAL. Exposed for tests. Fills a sockaddr in *ss. */
struct sockaddr_storage;
int http_parse_listen(const char *spec, struct sockaddr_storage *ss, unsigned int *sslen)
    __attribute__((warn_unused_result));

#endif
