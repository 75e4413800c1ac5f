// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http.c - the HTTP server: its listeners, the generations of workers that serve them, and
 * the reload of the web configuration. The top of the HTTP layer (see http_reply.h for the
 * order of the others).
 *
 * Per listen address, a gate (http_gate.c) accepts and --threads workers (http_worker.c)
 * serve: each a thread running one libmicrohttpd daemon in external epoll mode, whose
 * callbacks are the dispatcher's (http_dispatch.c); the gate hands each connection to the
 * least loaded worker of its listener.
 *
 * Web configuration (--web-config-file, webconfig.h): a "generation" is the set of workers
 * (daemons), --threads per listener, started with one configuration (TLS credentials are
 * daemon options in libmicrohttpd). SIGHUP's http_reload() starts a new generation next to the
 * current one, switches the gates to it, and retires the old one: it is stopped by http_reap()
 * once its connections are done (or after twice the idle timeout), so a certificate rotation
 * drops no scrape in flight. Requests see their own generation's configuration (the daemon's
 * cls), so a configuration is freed only with the last daemon that uses it. The main thread
 * alone starts, switches and stops generations.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "rtsnap/http.h"
#include "rtsnap/auth.h"
#include "rtsnap/http_auth.h"
#include "rtsnap/http_dispatch.h"
#include "rtsnap/http_conn.h"
#include "rtsnap/http_events.h"
#include "rtsnap/http_gate.h"
#include "rtsnap/http_listen.h"
#include "rtsnap/http_pin.h"
#include "rtsnap/http_worker.h"
#include "rtsnap/log.h"
#include "rtsnap/webconfig.h"

#define MAX_LISTEN 8
#define MAX_THREADS 256

struct http_gen;
struct gen_worker {	       /* cls of a worker daemon's connection notifications */
	struct http_site site; /* cls of its request callbacks */
	struct http_gen *gen;
	unsigned int i;	       /* listener index */
	struct http_worker *w; /* set once started; connections come only after that */
};

struct http_gen {
	struct webconfig *wc;		   /* owned; NULL: no --web-config-file */
	struct gen_worker *gw[MAX_LISTEN]; /* s_threads workers per listener */
	unsigned int conns;		   /* atomic: open connections of all its daemons */
	int64_t retired_ms;		   /* CLOCK_MONOTONIC ms when it stopped being current */
	struct http_gen *next;
};

static struct http_gen *s_cur, *s_retired;
static struct snapshot_chain *s_chain;	/* what it serves; set by http_start() */
static struct collector_stats *s_stats; /* its instance's counters; likewise */
static int s_no_inet6; /* IPv6 not followed: s_chain and s_stats are the IPv4 instance's */
static struct collector_stats *s_stats4;	/* the IPv4 instance's, or NULL; likewise */
static struct snapshot_chain *s_chain4;		/* the IPv4 instance's, or NULL; likewise */
static struct events_history *s_hist, *s_hist4; /* the instances' histories; likewise */
static unsigned int s_nlisten, s_threads, s_limit, s_timeout_s;
static const char *const *s_listen;
static struct http_gate *s_gates[MAX_LISTEN];
static struct http_unix_sock s_unix[MAX_LISTEN];

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void gen_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct gen_worker *gw = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		__atomic_add_fetch(&gw->gen->conns, 1, __ATOMIC_RELAXED);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		__atomic_sub_fetch(&gw->gen->conns, 1, __ATOMIC_RELAXED);
		http_worker_closed(gw->w);
	}
	http_gate_notify(s_gates[gw->i], conn, socket_context, toe);
}

/* The gate's handover (gate thread): to the least loaded worker of the listener cls. */
static int hand_over(void *cls, int fd, const struct sockaddr *addr, socklen_t alen)
{
	struct gen_worker *gw = cls, *best = gw;
	unsigned int load = http_worker_load(gw->w);

	for (unsigned int t = 1; t < s_threads && load; t++) {
		unsigned int l = http_worker_load(gw[t].w);

		if (l < load) {
			load = l;
			best = &gw[t];
		}
	}
	return http_worker_add(best->w, fd, addr, alen);
}

/* Stop a generation's workers and daemons (their connections are closed) and free it.
 * Accepts NULL and a half-built one. */
static void gen_free(struct http_gen *gen)
{
	if (!gen)
		return;
	http_events_close(gen); /* no connection may be suspended when a daemon stops */
	http_auth_close(gen);
	for (unsigned int i = 0; i < MAX_LISTEN; i++) {
		for (unsigned int t = 0; gen->gw[i] && t < s_threads; t++)
			http_worker_stop(gen->gw[i][t].w);
		for (unsigned int t = 0; gen->gw[i] && t < s_threads; t++)
			http_worker_free(gen->gw[i][t].w);
		free(gen->gw[i]);
	}
	http_events_closed(gen);
	http_auth_closed(gen);
	webconfig_free(gen->wc);
	free(gen);
}

/* Start s_threads workers per listener with wc (taken over, freed on failure too). */
static int gen_new(struct webconfig *wc, struct http_gen **out)
{
	struct http_gen *gen = calloc(1, sizeof(*gen));
	int tls = wc && wc->tls, ret;
	unsigned int mhd_limit;

	if (!gen) {
		webconfig_free(wc);
		return -ENOMEM;
	}
	gen->wc = wc;
	if (tls && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		log_err("this libmicrohttpd was built without TLS");
		gen_free(gen);
		return -ENOTSUP;
	}
	/*
	 * The gate enforces --max-connections (s_limit); libmicrohttpd's limit per daemon is
	 * twice s_limit, so that it never refuses a connection the gate hands over: a 0.9.75
	 * daemon that does leaves its cleanup mutex locked and hangs (see http_gate.c). It
	 * allocates nothing per unused slot.
	 */
	mhd_limit = s_limit > UINT_MAX / 2 ? UINT_MAX : s_limit * 2;
	for (unsigned int i = 0; i < s_nlisten; i++) {
		struct MHD_OptionItem tlsopts[] = {
			{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
			  tls ? wc->cert_pem : NULL },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? wc->key_pem : NULL },
			{ MHD_OPTION_HTTPS_PRIORITIES, 0, tls ? wc->priorities : NULL },
			{ tls && wc->ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
			  tls ? wc->ca_pem : NULL },
			{ MHD_OPTION_END, 0, NULL },
		};

		gen->gw[i] = calloc(s_threads, sizeof(*gen->gw[i]));
		if (!gen->gw[i]) {
			gen_free(gen);
			return -ENOMEM;
		}
		for (unsigned int t = 0; t < s_threads; t++) {
			struct gen_worker *gw = &gen->gw[i][t];
			struct MHD_Daemon *mhd;

			gw->gen = gen;
			gw->i = i;
			gw->site.wc = wc;
			gw->site.owner = gen;
			gw->site.chain = s_chain;
			gw->site.listener = i;
			gw->site.stats = s_stats;
			gw->site.no_inet6 = s_no_inet6;
			gw->site.stats4 = s_stats4;
			gw->site.chain4 = s_chain4;
			gw->site.hist = s_hist;
			gw->site.hist4 = s_hist4;
			/* no internal thread: a worker runs it (http_worker.h); connections come
			 * from the gate, never from a listen socket */
			mhd = MHD_start_daemon(
			    MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET |
				MHD_ALLOW_SUSPEND_RESUME | (tls ? MHD_USE_TLS : 0),
			    0, NULL, NULL, http_dispatch_request, &gw->site,
			    MHD_OPTION_CONNECTION_LIMIT, mhd_limit, MHD_OPTION_CONNECTION_TIMEOUT,
			    s_timeout_s, MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0,
			    /* a head is at most HTTP_HEAD_MAX (16 KiB); libmicrohttpd zeroes
			     * the whole pool after every request: 64 KiB cost 16 % of the CPU
			     * at 4 096 connections (perf), 32 KiB half of it */
			    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
			    MHD_OPTION_URI_LOG_CALLBACK, http_dispatch_uri, NULL,
			    MHD_OPTION_NOTIFY_CONNECTION, gen_notify, gw,
			    MHD_OPTION_NOTIFY_COMPLETED, http_conn_completed, NULL,
			    MHD_OPTION_ARRAY, tlsopts, MHD_OPTION_END);
			if (!mhd) {
				log_err("cannot start the HTTP%s server on %s", tls ? "S" : "",
					s_listen[i]);
				gen_free(gen);
				return -EIO;
			}
			ret = http_worker_new(mhd, s_listen[i], &gw->w);
			gw->site.wake.fn = (void (*)(void *))http_worker_wake;
			gw->site.wake.cls = gw->w;
			if (ret) {
				log_err("cannot start an HTTP worker for %s: %s", s_listen[i],
					strerror(-ret));
				gen_free(gen);
				return ret;
			}
		}
	}
	*out = gen;
	return 0;
}

static void describe(const struct webconfig *wc)
{
	if (!wc)
		return;
	log_info("web configuration %s: %s%s%s, %u basic auth user%s", wc->path,
		 wc->tls ? "TLS (" : "plain HTTP", wc->tls ? wc->priorities : "",
		 !wc->tls				? ""
		 : wc->client_auth == WC_NO_CLIENT_CERT ? ")"
							: ", client certificates: ",
		 wc->nusers, wc->nusers == 1 ? "" : "s");
	if (wc->tls && wc->client_auth != WC_NO_CLIENT_CERT)
		log_info("client_auth_type %s", webconfig_client_auth_name(wc->client_auth));
}

int http_start(const struct http_opts *o)
{
	unsigned int threads = o->threads;
	struct http_gen *gen = NULL;
	int ret;

	if (!threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n > 0 ? (unsigned int)n : 1;
	}
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (o->nlisten > MAX_LISTEN) {
		webconfig_free(o->web);
		return -E2BIG;
	}
	ret = auth_start(); /* the thread that hashes passwords, off the workers */
	if (ret) {
		webconfig_free(o->web);
		return ret;
	}
	s_chain = NULL;
	s_chain4 = NULL;
	s_stats4 = NULL;
	s_hist = s_hist4 = NULL;
	for (unsigned int i = 0; i < o->ninst; i++) {
		if (o->inst[i].family == AF_INET) {
			s_chain4 = o->inst[i].chain;
			s_stats4 = o->inst[i].stats;
			s_hist4 = o->inst[i].history;
		} else {
			s_chain = o->inst[i].chain;
			s_stats = o->inst[i].stats;
			s_hist = o->inst[i].history;
		}
	}
	/* the IPv6 instance serves every path but IPv4's; without it the IPv4 one serves them
	 * all (the IPv6 paths answer 404) and --max-pinned-bytes bounds what it pins */
	s_no_inet6 = !s_chain;
	if (s_no_inet6) {
		s_chain = s_chain4;
		s_stats = s_stats4;
	}
	if (!s_chain) {
		webconfig_free(o->web);
		auth_stop();
		return -EINVAL;
	}
	http_pin_set_limit(s_chain, o->max_pinned_bytes, o->max_pinned_factor);
	snapshot_set_retire_hook(s_chain, http_pin_retired);
	s_threads = threads;
	s_limit = o->conn_limit ? o->conn_limit : 1024;
	s_timeout_s = o->timeout_s ? o->timeout_s : 30;
	s_listen = o->listen;
	for (unsigned int i = 0; i < o->nlisten; i++) {
		struct http_gate_opts go = { .max_pending = o->max_pending ? o->max_pending : 1024,
					     .header_timeout_s =
						 o->header_timeout_s ? o->header_timeout_s : 10,
					     .conn_limit = s_limit };
		int fd = http_listen_open(o, o->listen[i], &s_unix[i]);
		struct http_gate *g;

		if (fd < 0) {
			log_err("cannot listen on %s: %s", o->listen[i], strerror(-fd));
			webconfig_free(o->web);
			http_stop();
			return fd;
		}
		ret = http_gate_new(o->listen[i], fd, &go, &g);
		if (ret) {
			close(fd);
			log_err("cannot start the HTTP server on %s: %s", o->listen[i],
				strerror(-ret));
			webconfig_free(o->web);
			http_stop();
			return ret;
		}
		s_gates[i] = g;
		s_nlisten = i + 1;
	}
	ret = gen_new(o->web, &gen);
	if (ret) {
		http_stop();
		return ret;
	}
	s_cur = gen;
	for (unsigned int i = 0; i < o->nlisten; i++) {
		ret = http_gate_start(s_gates[i], hand_over, gen->gw[i], gen->wc && gen->wc->tls);
		if (ret) {
			log_err("cannot start the HTTP server on %s: %s", o->listen[i],
				strerror(-ret));
			http_stop();
			return ret;
		}
		log_info("listening on %s%s (%u threads, %u connections, %u waiting for a request "
			 "head at most %u s)",
			 o->listen[i], gen->wc && gen->wc->tls ? " with TLS" : "", threads, s_limit,
			 o->max_pending, o->header_timeout_s);
	}
	describe(gen->wc);
	return 0;
}

int http_reload(struct webconfig *wc)
{
	struct http_gen *gen = NULL, *old = s_cur;
	int ret;

	if (!old) {
		webconfig_free(wc);
		return -ENOTCONN;
	}
	ret = gen_new(wc, &gen);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < s_nlisten; i++)
		http_gate_switch(s_gates[i], hand_over, gen->gw[i], gen->wc && gen->wc->tls);
	s_cur = gen;
	http_events_close(old); /* its streams reconnect to the new configuration */
	old->retired_ms = mono_ms();
	old->next = s_retired;
	s_retired = old;
	describe(gen->wc);
	return 0;
}

int http_reap(void)
{
	int64_t now = mono_ms();
	struct http_gen **pp = &s_retired;
	int left = 0;

	while (*pp) {
		struct http_gen *gen = *pp;
		int64_t age = now - gen->retired_ms;
		unsigned int conns = __atomic_load_n(&gen->conns, __ATOMIC_RELAXED);

		/* a connection handed over just before the switch is counted within ms */
		if ((conns == 0 && age >= 1000) || age >= (int64_t)s_timeout_s * 2000) {
			*pp = gen->next;
			if (conns)
				log_info("closing %u connections still open on the previous web "
					 "configuration",
					 conns);
			gen_free(gen);
			continue;
		}
		left++;
		pp = &gen->next;
	}
	return left;
}

void http_stop(void)
{
	for (unsigned int i = 0; i < MAX_LISTEN; i++)
		http_gate_stop(s_gates[i]); /* nothing new reaches libmicrohttpd */
	gen_free(s_cur);
	s_cur = NULL;
	while (s_retired) {
		struct http_gen *gen = s_retired;

		s_retired = gen->next;
		gen_free(gen);
	}
	for (unsigned int i = 0; i < MAX_LISTEN; i++) {
		http_gate_free(s_gates[i]); /* the listen socket and waiting connections */
		s_gates[i] = NULL;
	}
	s_nlisten = 0;
	auth_stop();
	for (unsigned int i = 0; i < MAX_LISTEN; i++)
		http_listen_unlink(&s_unix[i]);
}
