// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * collector.c - the one thread that reads the kernel and publishes snapshots.
 *
 * Who does what:
 *   - collector_start() (main thread) takes the first snapshot synchronously, publishes it,
 *     then starts the collector thread. From then on only the collector thread calls
 *     snapshot_publish().
 *   - The collector thread owns two libnl sockets: a dump socket (requests, replies) and a
 *     notification socket subscribed to RTNLGRP_IPV6_ROUTE and RTNLGRP_LINK. A notification
 *     only schedules a full re-dump (debounced); ENOBUFS on the notification socket (we lost
 *     events) schedules one too. A full re-dump also runs every interval, on SIGHUP, and just
 *     after the earliest route expiry deadline passes.
 *   - A collection either completes and is published, or is dropped whole: an error leaves
 *     the previous snapshot in place, counted in g_stats and reported stale by
 *     collector_is_fresh(). NLM_F_DUMP_INTR (the table changed under the dump) redoes the
 *     collection.
 *   - Snapshots the collector builds but does not publish are freed here; published ones are
 *     freed by snapshot.c's lifetime rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/nexthop.h>
#include <linux/fib_rules.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "rtsnap/collector.h"
#include "rtsnap/log.h"
#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/procfile.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

#define DUMP_RETRIES 8
#define STARTUP_ROUNDS 20 /* rounds of DUMP_RETRIES before the first snapshot gives up */
#define RECV_TIMEOUT_S 10
#define NOTIFY_RCVBUF (64 << 20)
#define RECV_BUF_MIN (64 << 10)

struct nlconn {
	struct nl_sock *sk;
	int fd;
	uint32_t port;
	uint32_t seq;
	char *buf;
	size_t bufsz;
};

static struct collector_opts s_opts;
static pthread_t s_thread;
static int s_running;
static int s_evfd = -1; /* wakes the collector: resync request or stop */
static int s_stop;	/* set by collector_stop() */
static int s_resync;	/* set by collector_request_resync() (signal handler) */
/* Test hook: with RTSNAP_TEST_FAIL_AFTER=N in the environment, every collection after the
 * N-th successful one fails with -EIO, so tests can watch the stale path on a real daemon. */
static long s_fail_after = -1;
static long s_ok_count;

static void nlconn_close(struct nlconn *c)
{
	if (c->sk)
		nl_socket_free(c->sk);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

enum { CONN_DUMP, CONN_NOTIFY, CONN_STRICT };

/* A dump socket, a notification socket (route, link, nexthop, rule events), or a dump socket
 * with strict checking (NETLINK_GET_STRICT_CHK: the kernel honours dump filters). */
static int nlconn_open(struct nlconn *c, int mode)
{
	struct timeval tv = { .tv_sec = RECV_TIMEOUT_S };
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -ENOMEM;
	nl_socket_disable_seq_check(c->sk);
	nl_socket_disable_auto_ack(c->sk);
	ret = nl_connect(c->sk, NETLINK_ROUTE);
	if (ret < 0) {
		nlconn_close(c);
		return -EIO;
	}
	c->fd = nl_socket_get_fd(c->sk);
	c->port = nl_socket_get_local_port(c->sk);
	c->seq = (uint32_t)time(NULL);
	c->bufsz = RECV_BUF_MIN;
	c->buf = malloc(c->bufsz);
	if (!c->buf) {
		nlconn_close(c);
		return -ENOMEM;
	}
	if (mode == CONN_NOTIFY) {
		int sz = NOTIFY_RCVBUF;

		if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		ret = nl_socket_add_memberships(c->sk, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK,
						RTNLGRP_NEXTHOP, RTNLGRP_IPV6_RULE, 0);
		if (ret < 0) {
			nlconn_close(c);
			return -EIO;
		}
		fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	} else {
		int sz = 4 << 20;

		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (mode == CONN_STRICT) {
			int one = 1;

			if (setsockopt(c->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
				       sizeof(one)) < 0) {
				nlconn_close(c);
				return -errno;
			}
		}
	}
	return 0;
}

/*
 * Receive one datagram into c->buf, sized first with MSG_PEEK|MSG_TRUNC so nothing is cut.
 * Returns its length, or a negative errno (-EAGAIN on a non-blocking socket with nothing).
 */
static ssize_t nlconn_recv(struct nlconn *c, int flags)
{
	struct sockaddr_nl sa;
	struct iovec iov;
	struct msghdr msg = {
		.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1
	};
	ssize_t n;

	for (;;) {
		iov.iov_base = c->buf;
		iov.iov_len = c->bufsz;
		n = recvmsg(c->fd, &msg, MSG_PEEK | MSG_TRUNC | flags);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((size_t)n > c->bufsz) {
			char *p = realloc(c->buf, (size_t)n);

			if (!p)
				return -ENOMEM;
			c->buf = p;
			c->bufsz = (size_t)n;
		}
		break;
	}
	iov.iov_base = c->buf;
	iov.iov_len = c->bufsz;
	do {
		n = recvmsg(c->fd, &msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (msg.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	if (sa.nl_pid != 0)
		return 0; /* not from the kernel: ignore the datagram */
	return n;
}

typedef int (*dump_cb)(const struct nlmsghdr *nlh, void *ctx);

/*
 * One dump: send the request, feed every reply message to cb until NLMSG_DONE. Returns 0,
 * -EINTR if the kernel flagged the dump inconsistent (NLM_F_DUMP_INTR: redo it), or another
 * negative errno. cb returns 0 to go on, -EBADMSG to count-and-skip, other negatives abort
 * (the rest of the dump is still read so the socket stays in step).
 */
static int nlconn_dump(struct nlconn *c, uint16_t type, const void *req, size_t reqlen, dump_cb cb,
		       void *ctx)
{
	struct {
		struct nlmsghdr nlh;
		char body[64];
	} m;
	int ret = 0, intr = 0;
	uint32_t seq = ++c->seq;

	memset(&m, 0, sizeof(m));
	m.nlh.nlmsg_len = (uint32_t)NLMSG_LENGTH(reqlen);
	m.nlh.nlmsg_type = type;
	m.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	m.nlh.nlmsg_seq = seq;
	memcpy(NLMSG_DATA(&m.nlh), req, reqlen);
	if (send(c->fd, &m, m.nlh.nlmsg_len, 0) < 0) {
		stats_inc(g_stats.errors[CERR_SOCKET]);
		return -errno;
	}
	for (;;) {
		ssize_t n = nlconn_recv(c, 0);
		const struct nlmsghdr *nlh;
		size_t left;

		if (n < 0) {
			stats_inc(g_stats.errors[n == -EAGAIN ? CERR_TIMEOUT : CERR_RECV]);
			return (int)n;
		}
		left = (size_t)n;
		for (nlh = (const struct nlmsghdr *)c->buf; NLMSG_OK(nlh, left);
		     nlh = NLMSG_NEXT(nlh, left)) {
			if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != c->port)
				continue; /* a stale reply from an aborted dump */
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = 1;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int derr = 0;

				/* a dump that failed says so in its DONE message */
				if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&derr, NLMSG_DATA(nlh), sizeof(derr));
				if (derr < 0 && !ret)
					ret = derr;
				return ret ? ret : (intr ? -EINTR : 0);
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				stats_inc(g_stats.errors[CERR_NLMSGERR]);
				if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EBADMSG;
				return e->error ? e->error : -EPROTO;
			}
			if (ret)
				continue; /* aborted: drain to NLMSG_DONE */
			{
				int r = cb(nlh, ctx);

				if (r == -EBADMSG)
					stats_inc(g_stats.malformed);
				else if (r < 0)
					ret = r;
			}
		}
		if (left) {
			/* trailing bytes that do not form a message */
			stats_inc(g_stats.errors[CERR_TRUNCATED]);
			stats_inc(g_stats.malformed);
		}
	}
}

struct collect_ctx {
	struct snapshot *s;
	struct nlparse_route *pr;
	int64_t now_ms;
};

static int on_link(const struct nlmsghdr *nlh, void *arg)
{
	struct collect_ctx *ctx = arg;
	struct route_link l;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	ret = nlparse_link(nlh, &l);
	if (ret <= 0)
		return ret;
	return snapshot_add_link(ctx->s, &l);
}

static int on_route(const struct nlmsghdr *nlh, void *arg)
{
	struct collect_ctx *ctx = arg;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_route(nlh, ctx->now_ms, ctx->pr);
	if (ret <= 0)
		return ret;
	return snapshot_add_route(ctx->s, &ctx->pr->r, ctx->pr->nhs, ctx->pr->r.nh_count,
				  ctx->pr->has_metrics ? &ctx->pr->m : NULL);
}

static int on_nexthop(const struct nlmsghdr *nlh, void *arg)
{
	struct collect_ctx *ctx = arg;
	struct route_nhobj o;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWNEXTHOP)
		return 0;
	ret = nlparse_nexthop(nlh, &o);
	if (ret <= 0)
		return ret;
	return snapshot_add_nhobj(ctx->s, &o);
}

static int on_prefix(const struct nlmsghdr *nlh, void *arg)
{
	struct collect_ctx *ctx = arg;
	struct prefix_key k;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_prefix_key(nlh, &k);
	if (ret <= 0)
		return ret;
	return snapshot_add_prefix_key(ctx->s, &k);
}

/*
 * Tables without routes. The kernel never frees a table, and prints a placeholder row for
 * an empty one, but a route dump shows nothing of it. We can ask about a table we know the id
 * of: a strict dump filtered on that table ends cleanly if it exists and with -ENOENT if not.
 * The ids we know: tables that ip -6 rules point to, and tables this process has seen.
 */
static uint32_t *s_known; /* tables seen in earlier snapshots; collector thread (or startup) */
static size_t s_nknown;

static void remember_tables(const struct snapshot *s)
{
	for (size_t i = 0; i < s->ntables; i++) {
		size_t k;
		uint32_t *p;

		for (k = 0; k < s_nknown && s_known[k] != s->tables[i].id; k++)
			;
		if (k < s_nknown)
			continue;
		p = realloc(s_known, (s_nknown + 1) * sizeof(*p));
		if (!p)
			return; /* only a hint: forgetting a table is not an error */
		s_known = p;
		s_known[s_nknown++] = s->tables[i].id;
	}
}

struct rule_ctx {
	uint32_t *ids;
	size_t n, cap;
};

static int on_rule_id(struct rule_ctx *rc, uint32_t table)
{
	if (rc->n == rc->cap) {
		size_t ncap = rc->cap ? rc->cap * 2 : 16;
		uint32_t *p = realloc(rc->ids, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rc->ids = p;
		rc->cap = ncap;
	}
	rc->ids[rc->n++] = table;
	return 0;
}

static int on_rule(const struct nlmsghdr *nlh, void *arg)
{
	struct rule_ctx *rc = arg;
	const struct fib_rule_hdr *frh;
	const struct rtattr *a;
	size_t left;
	uint32_t table;

	if (nlh->nlmsg_type != RTM_NEWRULE)
		return 0;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*frh)))
		return -EBADMSG;
	frh = NLMSG_DATA(nlh);
	if (frh->action != FR_ACT_TO_TBL)
		return 0;
	table = frh->table;
	left = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*frh));
	for (a = (const struct rtattr *)((const char *)frh + NLMSG_ALIGN(sizeof(*frh)));
	     RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == FRA_TABLE) {
			if (RTA_PAYLOAD(a) != sizeof(uint32_t))
				return -EBADMSG;
			memcpy(&table, RTA_DATA(a), sizeof(table));
		}
	}
	return table ? on_rule_id(rc, table) : 0;
}

static int on_probe(const struct nlmsghdr *nlh, void *arg)
{
	if (nlh->nlmsg_type == RTM_NEWROUTE)
		(*(int *)arg)++;
	return 0;
}

/* 1 if table id exists and is empty, 0 if absent, -EINTR if it has routes now (it changed
 * since the route dump), another negative errno on failure. */
static int probe_table(struct nlconn *strict, uint32_t id)
{
	struct {
		struct rtmsg rtm;
		struct rtattr rta;
		uint32_t table;
	} req = { .rtm = { .rtm_family = AF_INET6 },
		  .rta = { .rta_len = RTA_LENGTH(sizeof(uint32_t)), .rta_type = RTA_TABLE },
		  .table = id };
	int routes = 0;
	int ret = nlconn_dump(strict, RTM_GETROUTE, &req, sizeof(req), on_probe, &routes);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	return routes ? -EINTR : 1;
}

/* Add to s the tables that exist without routes, among those we can name. */
static int find_empty_tables(struct nlconn *c, struct snapshot *s)
{
	struct fib_rule_hdr frh = { .family = AF_INET6 };
	struct rule_ctx rc = { 0 }, dumped = { 0 };
	struct nlconn strict = { .fd = -1 };
	int ret;

	ret = nlconn_dump(c, RTM_GETRULE, &frh, sizeof(frh), on_rule, &rc);
	if (ret == -EOPNOTSUPP || ret == -EAFNOSUPPORT)
		ret = 0; /* no IPv6 policy routing in this kernel */
	for (size_t k = 0; !ret && k < s_nknown; k++)
		ret = on_rule_id(&rc, s_known[k]);
	if (ret || !rc.n) {
		free(rc.ids);
		return ret;
	}
	/* the tables the dump showed: routes come grouped by table, one pass finds them */
	for (size_t i = 0; !ret && i < s->nroutes; i++)
		if (i == 0 || s->routes[i].table != s->routes[i - 1].table)
			ret = on_rule_id(&dumped, s->routes[i].table);
	if (!ret)
		ret = nlconn_open(&strict, CONN_STRICT);
	for (size_t k = 0; !ret && k < rc.n; k++) {
		uint32_t id = rc.ids[k];
		int seen = 0, r;

		if (id == RT_TABLE_MAIN || id == RT_TABLE_LOCAL)
			continue; /* always there; snapshot_finish adds them */
		for (size_t j = 0; j < k && !seen; j++)
			seen = rc.ids[j] == id;
		for (size_t j = 0; j < dumped.n && !seen; j++)
			seen = dumped.ids[j] == id;
		if (seen)
			continue;
		r = probe_table(&strict, id);
		if (r == 1)
			ret = snapshot_add_empty_table(s, id);
		else if (r < 0)
			ret = r;
	}
	nlconn_close(&strict);
	free(rc.ids);
	free(dumped.ids);
	return ret;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Drain the notification socket. Returns 1 if anything relevant arrived, or -ENOBUFS. */
static int drain_notifications(struct nlconn *n)
{
	int got = 0;

	for (;;) {
		ssize_t len = nlconn_recv(n, MSG_DONTWAIT);
		const struct nlmsghdr *nlh;
		size_t left;

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			return got;
		if (len == -ENOBUFS) {
			stats_inc(g_stats.enobufs);
			return -ENOBUFS;
		}
		if (len < 0) {
			stats_inc(g_stats.errors[CERR_RECV]);
			return got;
		}
		left = (size_t)len;
		for (nlh = (const struct nlmsghdr *)n->buf; NLMSG_OK(nlh, left);
		     nlh = NLMSG_NEXT(nlh, left)) {
			if (nlh->nlmsg_type == RTM_NEWROUTE || nlh->nlmsg_type == RTM_DELROUTE ||
			    nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK ||
			    nlh->nlmsg_type == RTM_NEWNEXTHOP ||
			    nlh->nlmsg_type == RTM_DELNEXTHOP) {
				stats_inc(g_stats.notifications);
				got = 1;
			}
		}
	}
}

/*
 * One complete collection on c: links, nexthop objects, routes, prefix routes; sealed.
 *
 * The kernel does not flag an IPv6 route dump that a change interrupted (no
 * NLM_F_DUMP_INTR): when a table changes between two batches of the dump, the walk restarts
 * and skips as many routes as it already sent, so a route can come twice or not at all. So a
 * dump is only trusted if the notification socket watch (drained just before) received no
 * route, link or nexthop event by the time the dump ended: then the kernel did not change
 * while we read it. Otherwise it is redone, a few times, and if the kernel never holds still
 * long enough the collection fails with -EAGAIN and the previous snapshot stays.
 */
static int collect_with(struct nlconn *c, struct nlconn *watch, struct nlparse_route *pr,
			struct snapshot **out);

static int collect(struct nlconn *c, struct nlconn *watch, struct snapshot **out)
{
	struct nlparse_route *pr = malloc(sizeof(*pr)); /* ~25 KiB: not on the stack */
	int ret;

	if (!pr)
		return -ENOMEM;
	ret = collect_with(c, watch, pr, out);
	free(pr);
	return ret;
}

static int collect_with(struct nlconn *c, struct nlconn *watch, struct nlparse_route *pr,
			struct snapshot **out)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct rtmsg rtm = { .rtm_family = AF_INET6 };
	struct rtmsg rtm_prefix = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	struct timespec t0, t1;
	int ret = -EAGAIN;

	for (int attempt = 0; attempt < DUMP_RETRIES; attempt++) {
		struct collect_ctx ctx = { .pr = pr };

		if (attempt) {
			struct timespec pause = { 0, 5000000L * attempt }; /* let a burst pass */

			stats_inc(g_stats.dump_intr_redone);
			nanosleep(&pause, NULL);
		}
		if (watch)
			drain_notifications(watch); /* what happened before is in the dump */
		ret = snapshot_new(&ctx.s);
		if (ret)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		clock_gettime(CLOCK_REALTIME, &ctx.s->taken_at);
		ctx.now_ms = ctx.s->taken_mono_ms =
		    (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
		ret = nlconn_dump(c, RTM_GETLINK, &ifi, sizeof(ifi), on_link, &ctx);
		if (!ret) {
			/* nexthop objects: /proc shows a route's object's first nexthop, which
			 * the route dump leaves out when nexthop_compat_mode is 0. Kernels
			 * without nexthop objects refuse the dump: nothing to resolve then. */
			ret = nlconn_dump(c, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &ctx);
			if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EAFNOSUPPORT)
				ret = 0;
		}
		if (!ret)
			ret = nlconn_dump(c, RTM_GETROUTE, &rtm, sizeof(rtm), on_route, &ctx);
		if (!ret)
			ret = nlconn_dump(c, RTM_GETROUTE, &rtm_prefix, sizeof(rtm_prefix),
					  on_prefix, &ctx);
		if (!ret)
			ret = find_empty_tables(c, ctx.s);
		if (!ret && watch && drain_notifications(watch) != 0)
			ret = -EINTR; /* the kernel changed while we read it */
		if (ret == -EINTR) {
			log_debug("the tables changed during the dump; redoing it");
			snapshot_free(ctx.s);
			continue;
		}
		if (!ret)
			ret = names_load(NULL, &ctx.s->names);
		if (!ret)
			ret = snapshot_finish(ctx.s);
		if (ret) {
			if (ret == -ENOMEM)
				stats_inc(g_stats.errors[CERR_NOMEM]);
			snapshot_free(ctx.s);
			return ret;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ctx.s->duration_s = ts_diff(&t0, &t1);
		*out = ctx.s;
		return 0;
	}
	stats_inc(g_stats.errors[CERR_DUMP_INTR_GAVE_UP]);
	return -EAGAIN;
}

int collector_collect_once(struct snapshot **out)
{
	struct nlconn c, w;
	int ret = nlconn_open(&c, CONN_DUMP);

	if (ret)
		return ret;
	ret = nlconn_open(&w, CONN_NOTIFY);
	if (ret) {
		nlconn_close(&c);
		return ret;
	}
	/* a busy kernel: keep trying for a while rather than fail */
	for (int round = 0; round < STARTUP_ROUNDS; round++) {
		ret = collect(&c, &w, out);
		if (ret != -EAGAIN)
			break;
	}
	nlconn_close(&c);
	nlconn_close(&w);
	return ret;
}

/* Run one collection and publish it. Returns 0 or the error (previous snapshot stays). */
static int collect_and_publish(struct nlconn *c, struct nlconn *watch, enum collector_trigger why)
{
	struct snapshot *s = NULL, *old;
	int ret;

	stats_set(g_stats.last_attempt_mono_ms, snapshot_now_ms());
	if (s_fail_after >= 0 && s_ok_count >= s_fail_after)
		ret = -EIO; /* injected by RTSNAP_TEST_FAIL_AFTER */
	else
		ret = collect(c, watch, &s);
	if (ret == -EAGAIN) {
		/* the tables never held still during a dump: not a failure of ours; the
		 * snapshot ages and turns stale by age if this goes on */
		log_debug("collection (%s) postponed: the tables kept changing during the dump",
			  stats_trigger_name(why));
		return ret;
	}
	if (ret) {
		stats_set(g_stats.last_error, ret);
		log_warn("collection (%s) failed: %s; keeping the previous snapshot",
			 stats_trigger_name(why), strerror(-ret));
		return ret;
	}
	s_ok_count++;
	s->trigger = (uint32_t)why;
	stats_observe_duration(s->duration_s);
	old = snapshot_acquire(); /* kept past the publish to count what changed */
	snapshot_publish(s);
	if (old) {
		uint32_t added, removed;

		if (!snapshot_diff(old, s, &added, &removed)) {
			stats_set(g_stats.last_added, added);
			stats_set(g_stats.last_removed, removed);
		}
		snapshot_release(old);
	} else {
		uint32_t n = 0;

		for (size_t i = 0; i < s->nroutes; i++)
			n += !s->routes[i].placeholder;
		stats_set(g_stats.last_added, n);
		stats_set(g_stats.last_removed, 0);
	}
	/* s stays valid here: only this thread can retire it, at the next publish */
	stats_set(g_stats.last_error, 0);
	stats_set(g_stats.last_ok_mono_ms, snapshot_now_ms());
	stats_inc(g_stats.collections[why]);
	log_debug("published generation %llu: %zu records in %zu tables, %.3f s (%s)",
		  (unsigned long long)s->generation, s->nroutes, s->ntables, s->duration_s,
		  stats_trigger_name(why));
	remember_tables(s); /* so that we notice when one of them is emptied */
	procfile_notify();  /* the --proc-file writer, if any, picks the new snapshot up */
	return 0;
}

/* The next expiry deadline after the snapshot was taken, or 0. O(log expiring). */
static int64_t next_expiry(const struct snapshot *s)
{
	size_t k = snapshot_expiring_after(s, s->taken_mono_ms);

	return k < s->nexpiring ? s->routes[s->expiring[k]].expires_ms : 0;
}

static void *collector_main(void *arg)
{
	struct nlconn dump, notify;
	int64_t next_interval, change_at = 0, last_end;
	double last_dur = 0;

	(void)arg;
	if (nlconn_open(&dump, CONN_DUMP) || nlconn_open(&notify, CONN_NOTIFY)) {
		log_err("collector: cannot open netlink sockets");
		stats_inc(g_stats.errors[CERR_SOCKET]);
		stats_set(g_stats.last_error, -EIO);
		return NULL;
	}
	last_end = snapshot_now_ms();
	next_interval = s_opts.interval_s ? last_end + (int64_t)s_opts.interval_s * 1000 : 0;
	while (!__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd[2] = { { .fd = s_evfd, .events = POLLIN },
					 { .fd = notify.fd, .events = POLLIN } };
		int64_t now = snapshot_now_ms(), wake = INT64_MAX, expiry = 0;
		enum collector_trigger why = TRIGGER__COUNT;
		struct snapshot *cur;
		int timeout, r;

		cur = snapshot_acquire();
		if (cur) {
			expiry = next_expiry(cur);
			snapshot_release(cur);
		}
		if (next_interval)
			wake = next_interval;
		if (change_at && change_at < wake)
			wake = change_at;
		if (expiry && expiry + 20 < wake)
			wake = expiry + 20; /* just after the deadline */
		timeout = wake == INT64_MAX ? -1 : (wake <= now ? 0 : (int)(wake - now));
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(s_evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_debug("eventfd read: %s", strerror(errno));
		}
		if (__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE))
			break;
		if (pfd[1].revents & (POLLIN | POLLERR)) {
			int got = drain_notifications(&notify);

			if (got == -ENOBUFS) {
				why = TRIGGER_RESYNC;
			} else if (got > 0 && !change_at) {
				/* debounce; and never spend more than half the time dumping */
				int64_t gap = (int64_t)(last_dur * 1000);

				change_at = snapshot_now_ms() + s_opts.debounce_ms;
				if (change_at < last_end + gap)
					change_at = last_end + gap;
			}
		}
		now = snapshot_now_ms();
		if (why == TRIGGER__COUNT && __atomic_exchange_n(&s_resync, 0, __ATOMIC_ACQ_REL))
			why = TRIGGER_SIGNAL;
		if (why == TRIGGER__COUNT && change_at && now >= change_at)
			why = TRIGGER_CHANGE;
		if (why == TRIGGER__COUNT && expiry && now >= expiry + 20)
			why = TRIGGER_EXPIRY;
		if (why == TRIGGER__COUNT && next_interval && now >= next_interval)
			why = TRIGGER_INTERVAL;
		if (why == TRIGGER__COUNT)
			continue;
		r = collect_and_publish(&dump, &notify, why);
		if (r == -EIO) {
			nlconn_close(&dump);
			if (nlconn_open(&dump, CONN_DUMP))
				stats_inc(g_stats.errors[CERR_SOCKET]);
		}
		last_end = snapshot_now_ms();
		/* postponed by churn: try again soon (what we drained is still unapplied) */
		change_at = r == -EAGAIN ? last_end + 50 + s_opts.debounce_ms : 0;
		last_dur = (double)(last_end - now) / 1000.0;
		if (s_opts.interval_s)
			next_interval = last_end + (int64_t)s_opts.interval_s * 1000;
	}
	nlconn_close(&dump);
	nlconn_close(&notify);
	return NULL;
}

int collector_start(const struct collector_opts *o)
{
	struct nlconn c, w;
	int ret;

	s_opts = *o;
	if (getenv("RTSNAP_TEST_FAIL_AFTER"))
		s_fail_after = atol(getenv("RTSNAP_TEST_FAIL_AFTER"));
	s_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s_evfd < 0)
		return -errno;
	ret = nlconn_open(&c, CONN_DUMP);
	if (ret)
		return ret;
	ret = nlconn_open(&w, CONN_NOTIFY);
	if (ret) {
		nlconn_close(&c);
		return ret;
	}
	for (int round = 0; round < STARTUP_ROUNDS; round++) {
		ret = collect_and_publish(&c, &w, TRIGGER_STARTUP);
		if (ret != -EAGAIN)
			break;
	}
	nlconn_close(&c);
	nlconn_close(&w);
	if (ret)
		return ret;
	ret = pthread_create(&s_thread, NULL, collector_main, NULL);
	if (ret)
		return -ret;
	s_running = 1;
	return 0;
}

void collector_request_resync(void)
{
	uint64_t one = 1;

	__atomic_store_n(&s_resync, 1, __ATOMIC_RELEASE);
	if (s_evfd >= 0 && write(s_evfd, &one, sizeof(one)) < 0) {
		/* eventfd full: a wakeup is already pending */
	}
}

void collector_stop(void)
{
	uint64_t one = 1;

	if (!s_running)
		goto out;
	__atomic_store_n(&s_stop, 1, __ATOMIC_RELEASE);
	if (write(s_evfd, &one, sizeof(one)) < 0)
		log_debug("eventfd write: %s", strerror(errno));
	pthread_join(s_thread, NULL);
	s_running = 0;
	free(s_known);
	s_known = NULL;
	s_nknown = 0;
out:
	if (s_evfd >= 0)
		close(s_evfd);
	s_evfd = -1;
}

unsigned int collector_interval(void)
{
	return s_opts.interval_s;
}

int collector_is_fresh(void)
{
	int64_t ok = stats_get(g_stats.last_ok_mono_ms);

	if (!ok || stats_get(g_stats.last_error))
		return 0;
	if (s_opts.interval_s && snapshot_now_ms() - ok > (int64_t)s_opts.interval_s * 2000 + 10000)
		return 0;
	return 1;
}
