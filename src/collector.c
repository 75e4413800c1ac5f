// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * collector.c - the one thread that follows the kernel and publishes snapshots.
 *
 * Who does what:
 *   - collector_start() (main thread) opens the notification socket first, then takes one
 *     full dump into a mirror (mirror.c), applies what arrived meanwhile, publishes, and
 *     hands the sockets and the mirror to the collector thread. From then on only the
 *     collector thread touches them and calls snapshot_publish().
 *   - The thread applies every notification to the mirror with the kernel's own semantics
 *     and publishes a snapshot built from the mirror once the socket is drained (at most one
 *     publication per --debounce-ms, and never spending more than about half its time
 *     building). Where the kernel changes state without a message for it, it runs the
 *     smallest dump that restores the truth (by device, by table, nexthop objects, prefix
 *     marks), counted by reason. Router advertisements refresh what they taught without a
 *     message unless they carry a prefix or user option: the devices of RA-learned routes
 *     are also re-read every --ra-refresh seconds.
 *   - A full dump (resync) runs at start, every --interval, on SIGHUP and after ENOBUFS. It
 *     is compared with the mirror (differences are logged and counted as drift) and adopted
 *     only when nothing changed while it ran: IPv6 dumps are never flagged NLM_F_DUMP_INTR
 *     and can skip routes under churn, so an untrusted dump never deletes a live route. It is
 *     adopted anyway when the mirror is known to be incomplete (start, ENOBUFS), and retried.
 *     Adopting merges the dump into the mirror (mirror_adopt_*(): only what differs changes),
 *     a large one in steps with a publication after each. After ENOBUFS what the socket holds
 *     until the dump is older than the dump: it is dropped with the socket, not applied.
 *   - Mirrors and snapshots the thread builds and does not publish are freed here; published
 *     snapshots are freed by snapshot.c's lifetime rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/nexthop.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>

#include "rtsnap/collector.h"
#include "rtsnap/events.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlconn.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/procfile.h"
#include "rtsnap/segment.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

#define STARTUP_TRIES 20    /* full dumps tried at start before serving an untrusted one */
#define DRAIN_BUDGET_MS 5   /* publish after this long of continuous arrival */
#define RESYNC_DRAIN_MS 100 /* catching up before a full dump, at most */
#define RESYNC_RETRY_MIN_MS 1000
#define RESYNC_RETRY_MAX_MS 60000
#define OVERRUN_WATCH_RCVBUF 4096 /* after an overrun: room for a message or two */
#define OVERRUN_WATCH_GAP_MS 20	  /* after an overrun: no listener this long after a sign */
#define ADOPT_STEPS 8		  /* a dump that differs is adopted in this many steps */
#define ADOPT_STEP_MIN 65536	  /* routes: smaller dumps in one */
#define ENOBUFS_LOG_MS 10000	  /* at most one overflow warning per this long */
/* After an overflow the resync waits until notifications pause this long (at most
 * OVERFLOW_WAIT_MAX_MS): an overflow means a storm of changes (a BGP session reset, a bulk
 * load), and a full dump during it takes each table's tb6_lock chunk by chunk against the
 * writers, would be untrusted anyway, and is repeated until one is not. */
#define OVERFLOW_QUIET_MS 200
#define PUBLISH_WAIT_FACTOR 39	    /* see publish() */
#define HOLD_RCVBUF_MIN (16u << 20) /* see collector_main() */
#define HOLD_MAX_MS 100		    /* a longer wait (--debounce-ms, a failure) reads as it goes */
#define PUBLISH_WAIT_MAX_MS 30
#define OVERFLOW_WAIT_MAX_MS 5000
/* A storm not worth following (see storm_check()): this much queued at least, and more
 * notifications than a quarter of the mirror's routes, at about STORM_MSG_BYTES each (what
 * the kernel charges the buffer for a route's notification, measured: 1 280 bytes). */
#define STORM_QUEUED_MIN (4u << 20)
#define STORM_MSG_BYTES 1280

struct coll {
	struct nlconn dump, notify;
	struct mirror *m;
	int m_valid;	       /* the mirror followed every notification since a trusted dump */
	int overrun;	       /* ENOBUFS since the last full dump began: what is queued is stale */
	int watching;	       /* overrun: the notification socket only watches for a pause */
	int64_t watch_at;      /* overrun, no socket: open the watch socket then */
	size_t notify_max_len; /* the longest notification datagram read */
	struct nlparse_route *pr;

	/* publication */
	int dirty;
	int64_t dirty_since_ms; /* first change not yet published */
	struct mirror_delta delta;
	int64_t next_pub_ms;	      /* no publication before this */
	int64_t overflow_deadline_ms; /* the overflow resync runs by then at the latest */
	int64_t fail_until_ms;

	/* pending work the kernel did not announce */
	uint32_t *oifs; /* devices whose routes' flags to re-read */
	size_t noifs, oifs_cap;
	uint32_t *aoifs; /* devices whose address or RA prefix changed: routes' lifetimes */
	size_t naoifs, aoifs_cap;
	uint32_t *roifs;	  /* (table or 0, device) pairs an RA may have changed silently */
	size_t nroifs, roifs_cap; /* pairs */
	int64_t next_ra_ms;	  /* next periodic re-read of RA-learned routes (0: off) */
	int64_t ra_round_ms;	  /* how long the last re-read of them took */
	uint32_t *probes;	  /* tables named by rules */
	size_t nprobes, probes_cap;
	int want_prefix, want_nexthops, want_groups;

	/* resync */
	enum collector_trigger resync_why; /* TRIGGER__COUNT: none pending */
	int64_t resync_at;
	int64_t resync_backoff_ms;
	int64_t next_interval_ms;
};

static struct collector_opts s_opts;
static struct coll s_c;
static pthread_t s_thread;
static int s_running;
static int s_evfd = -1; /* wakes the collector: resync request or stop */
static int s_stop;	/* set by collector_stop() */
static int s_resync;	/* set by collector_request_resync() (signal handler) */
/* Test hook: with RTSNAP_TEST_FAIL_AFTER=N in the environment, every publication after the
 * N-th successful one fails with -EIO, so tests can watch the stale path on a real daemon. */
static long s_fail_after = -1;
static long s_ok_count;

static int push_u32(uint32_t **arr, size_t *n, size_t *cap, uint32_t v)
{
	for (size_t i = 0; i < *n; i++)
		if ((*arr)[i] == v)
			return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		uint32_t *p = realloc(*arr, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	(*arr)[(*n)++] = v;
	return 0;
}

/* Add the pair (table, ifindex) to *arr (n pairs) unless it is there. 0 or -ENOMEM. */
static int push_pair(uint32_t **arr, size_t *n, size_t *cap, uint32_t table, uint32_t ifindex)
{
	for (size_t i = 0; i < *n; i++)
		if ((*arr)[2 * i] == table && (*arr)[2 * i + 1] == ifindex)
			return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		uint32_t *p = realloc(*arr, ncap * 2 * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	(*arr)[2 * *n] = table;
	(*arr)[2 * *n + 1] = ifindex;
	(*n)++;
	return 0;
}

/* An RA may have changed the routes of this device (in this table, 0: any) silently. */
static void want_ra(struct coll *c, uint32_t table, uint32_t ifindex)
{
	if (ifindex && push_pair(&c->roifs, &c->nroifs, &c->roifs_cap, table, ifindex))
		stats_inc(g_stats.errors[CERR_NOMEM]);
}

static void mark_dirty(struct coll *c)
{
	if (!c->dirty)
		c->dirty_since_ms = snapshot_now_ms();
	c->dirty = 1;
}

static void schedule_resync(struct coll *c, enum collector_trigger why, int64_t at)
{
	if (c->resync_why == TRIGGER__COUNT || at < c->resync_at)
		c->resync_at = at;
	if (c->resync_why == TRIGGER__COUNT || why == TRIGGER_RESYNC)
		c->resync_why = why;
}

/* ---- full dumps ---- */

struct dump_ctx {
	struct mirror *m;
	struct nlparse_route *pr;
	int64_t now_ms;
	struct mirror_delta *d; /* upsert mode (targeted dumps); NULL: load in dump order */
	uint32_t marks;		/* prefix dumps: RTF_PREFIX_RT marks that changed */
	uint32_t *ids;		/* rule dumps: tables named */
	size_t nids, ids_cap;
};

static int on_link(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *x = arg;
	struct route_link l;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	ret = nlparse_link(nlh, &l);
	if (ret <= 0)
		return ret;
	ret = mirror_set_link(x->m, &l);
	return ret < 0 ? ret : 0;
}

static int on_nexthop(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *x = arg;
	struct route_nhobj o;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWNEXTHOP)
		return 0;
	ret = nlparse_nexthop(nlh, &o);
	if (ret <= 0)
		return ret;
	ret = mirror_set_nhobj(x->m, &o);
	return ret < 0 ? ret : 0;
}

static int on_route(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *x = arg;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_route(nlh, x->now_ms, x->pr);
	if (ret <= 0)
		return ret;
	if (x->d)
		return mirror_apply_update(x->m, x->pr, x->d);
	return mirror_load_route(x->m, x->pr);
}

static int on_prefix(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *x = arg;
	struct prefix_key k;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_prefix_key(nlh, x->pr, &k);
	if (ret <= 0)
		return ret;
	x->marks += (uint32_t)mirror_mark_prefix(x->m, &k);
	return 0;
}

/* The table a rule points to (0 if none or not ours). -EBADMSG when malformed. */
static long rule_table(const struct nlmsghdr *nlh)
{
	const struct fib_rule_hdr *frh;
	const struct rtattr *a;
	size_t left;
	uint32_t table;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*frh)))
		return -EBADMSG;
	frh = NLMSG_DATA(nlh);
	if (frh->family != AF_INET6 || frh->action != FR_ACT_TO_TBL)
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
	return table;
}

static int on_rule(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *x = arg;
	long t;

	if (nlh->nlmsg_type != RTM_NEWRULE)
		return 0;
	t = rule_table(nlh);
	if (t <= 0)
		return (int)t;
	return push_u32(&x->ids, &x->nids, &x->ids_cap, (uint32_t)t);
}

/* A strict dump of routes, filtered on table (if table) and device (if oif). */
static int dump_filtered(struct nlconn *strict, uint32_t table, uint32_t oif, struct dump_ctx *x)
{
	struct {
		struct rtmsg rtm;
		struct rtattr a1;
		uint32_t v1;
		struct rtattr a2;
		uint32_t v2;
	} req;
	size_t len = sizeof(struct rtmsg);
	struct rtattr *a = &req.a1;
	uint32_t *v = &req.v1;

	memset(&req, 0, sizeof(req));
	req.rtm.rtm_family = AF_INET6;
	if (table) {
		a->rta_len = RTA_LENGTH(sizeof(uint32_t));
		a->rta_type = RTA_TABLE;
		*v = table;
		len += sizeof(*a) + sizeof(*v);
		a = &req.a2;
		v = &req.v2;
	}
	if (oif) {
		a->rta_len = RTA_LENGTH(sizeof(uint32_t));
		a->rta_type = RTA_OIF;
		*v = oif;
		len += sizeof(*a) + sizeof(*v);
	}
	return nlconn_dump(strict, RTM_GETROUTE, &req, len, on_route, x);
}

/*
 * Tables without routes: the kernel never frees a table and prints a placeholder row for an
 * empty one, but a route dump shows nothing of it. A strict dump filtered on a table id ends
 * cleanly if the table exists and with -ENOENT if not. Probed: the tables rules point to, and
 * the tables the previous mirror knew (prev may be NULL).
 */
static int find_empty_tables(struct nlconn *c, struct mirror *m, const uint32_t *prev_ids,
			     size_t nprev)
{
	struct fib_rule_hdr frh = { .family = AF_INET6 };
	struct dump_ctx x = { .m = m };
	struct nlconn strict = { .fd = -1 };
	int ret;

	ret = nlconn_dump(c, RTM_GETRULE, &frh, sizeof(frh), on_rule, &x);
	if (ret == -EOPNOTSUPP || ret == -EAFNOSUPPORT)
		ret = 0; /* no IPv6 policy routing in this kernel */
	for (size_t k = 0; !ret && k < nprev; k++)
		ret = push_u32(&x.ids, &x.nids, &x.ids_cap, prev_ids[k]);
	if (!ret && x.nids)
		ret = nlconn_open(&strict, NLCONN_STRICT);
	for (size_t k = 0; !ret && k < x.nids; k++) {
		uint32_t id = x.ids[k];
		struct dump_ctx probe = { .m = m };
		int r;

		if (id == RT_TABLE_MAIN || id == RT_TABLE_LOCAL || mirror_has_table(m, id))
			continue; /* main and local always exist; the snapshot adds them */
		r = dump_filtered(&strict, id, 0, &probe);
		if (r == -ENOENT)
			continue;
		if (r)
			ret = r;
		else if (!mirror_has_table(m, id))
			ret = mirror_add_table(m, id, 0);
	}
	nlconn_close(&strict);
	free(x.ids);
	return ret;
}

/* One complete dump of the namespace into a new mirror. prev_ids: tables known before (they
 * exist until the namespace goes, and are probed if the dump shows none of their routes). */
static int full_dump(struct coll *c, const uint32_t *prev_ids, size_t nprev, struct mirror **out)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct rtmsg rtm = { .rtm_family = AF_INET6 };
	struct rtmsg rtm_prefix = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	struct dump_ctx x = { .pr = c->pr, .now_ms = snapshot_now_ms() };
	int ret;

	ret = mirror_new(&x.m);
	if (ret)
		return ret;
	ret = nlconn_dump(&c->dump, RTM_GETLINK, &ifi, sizeof(ifi), on_link, &x);
	if (!ret) {
		/* /proc shows a route's object's first nexthop, which the route dump leaves
		 * out when nexthop_compat_mode is 0; kernels without objects refuse the dump */
		ret = nlconn_dump(&c->dump, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &x);
		if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EAFNOSUPPORT)
			ret = 0;
	}
	if (!ret) {
		x.now_ms = snapshot_now_ms();
		ret = nlconn_dump(&c->dump, RTM_GETROUTE, &rtm, sizeof(rtm), on_route, &x);
	}
	if (!ret)
		ret = nlconn_dump(&c->dump, RTM_GETROUTE, &rtm_prefix, sizeof(rtm_prefix),
				  on_prefix, &x);
	if (!ret)
		ret = find_empty_tables(&c->dump, x.m, prev_ids, nprev);
	if (ret) {
		if (ret == -ENOMEM)
			stats_inc(g_stats.errors[CERR_NOMEM]);
		mirror_free(x.m);
		return ret;
	}
	*out = x.m;
	return 0;
}

/* ---- notifications ---- */

static void apply_route(struct coll *c, const struct nlmsghdr *nlh)
{
	int ret = nlparse_route(nlh, snapshot_now_ms(), c->pr);

	if (ret == -EBADMSG) {
		stats_inc(g_stats.malformed);
		return;
	}
	if (ret <= 0)
		return;
	if (nlh->nlmsg_type == RTM_NEWROUTE) {
		const struct route *r = &c->pr->r;

		stats_inc(g_stats.notify_applied[NOTIFY_ROUTE_NEW]);
		ret = mirror_apply_new(c->m, c->pr, nlh->nlmsg_flags, &c->delta);
		/* an RA prefix route looks like any connected route; its RTF_PREFIX_RT mark
		 * comes only from an RTM_F_PREFIX dump (an RA also sends RTM_NEWPREFIX) */
		if (r->protocol == RTPROT_KERNEL && r->type == RTN_UNICAST && r->nh_count == 1 &&
		    !r->nh.has_gw && r->dst_len && !r->src_len)
			c->want_prefix = 1;
		/* a route-information route is announced before the RA sets its lifetime, and
		 * the rest of that RA (hop limit, other routes) changes things silently */
		if (route_ra_shape(r))
			want_ra(c, r->table, r->nh.ifindex);
	} else {
		uint32_t unknown = c->delta.unknown;

		stats_inc(g_stats.notify_applied[NOTIFY_ROUTE_DEL]);
		ret = mirror_apply_del(c->m, c->pr, &c->delta);
		if (c->delta.unknown != unknown)
			stats_add(g_stats.unknown_deletes, c->delta.unknown - unknown);
	}
	if (ret == -ENOMEM) {
		/* the mirror no longer matches the kernel: start over from a dump */
		stats_inc(g_stats.errors[CERR_NOMEM]);
		c->m_valid = 0;
		schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
	}
	mark_dirty(c);
}

static void apply_link(struct coll *c, const struct nlmsghdr *nlh)
{
	struct route_link l;
	int ret;

	stats_inc(g_stats.notify_applied[NOTIFY_LINK]);
	if (nlh->nlmsg_type == RTM_DELLINK) {
		const struct ifinfomsg *ifi = NLMSG_DATA(nlh);
		uint32_t ifindex;

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) || ifi->ifi_index <= 0) {
			stats_inc(g_stats.malformed);
			return;
		}
		ifindex = (uint32_t)ifi->ifi_index;
		if (mirror_link_has_nhobj(c->m, ifindex)) {
			/* the kernel flushes its nexthop objects without RTM_DELNEXTHOP */
			c->want_nexthops = 1;
			c->want_groups = 1;
		}
		mirror_del_link(c->m, ifindex, &c->delta);
		mark_dirty(c);
		return;
	}
	ret = nlparse_link(nlh, &l);
	if (ret == -EBADMSG)
		stats_inc(g_stats.malformed);
	if (ret <= 0)
		return;
	ret = mirror_set_link(c->m, &l);
	if (ret < 0) {
		stats_inc(g_stats.errors[CERR_NOMEM]);
		return;
	}
	if (ret & MIRROR_LINK_STATE) {
		/* carrier and admin state change nexthop flags (linkdown, dead) silently */
		if (push_u32(&c->oifs, &c->noifs, &c->oifs_cap, l.ifindex))
			stats_inc(g_stats.errors[CERR_NOMEM]);
		if (!(l.flags & IFF_UP) && mirror_link_has_nhobj(c->m, l.ifindex)) {
			c->want_nexthops = 1;
			c->want_groups = 1;
		}
	}
	if (ret)
		mark_dirty(c); /* names and flags are rendered */
}

static void apply_nexthop(struct coll *c, const struct nlmsghdr *nlh)
{
	struct route_nhobj o;
	int ret;

	stats_inc(g_stats.notify_applied[NOTIFY_NEXTHOP]);
	ret = nlparse_nexthop(nlh, &o);
	if (ret == -EBADMSG)
		stats_inc(g_stats.malformed);
	if (ret <= 0)
		return;
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		/* groups that held it shrink; routes over them are not re-announced */
		if (mirror_has_groups(c->m))
			c->want_groups = 1;
		mirror_del_nhobj(c->m, o.id, &c->delta);
		mark_dirty(c);
		return;
	}
	ret = mirror_set_nhobj(c->m, &o);
	if (ret < 0)
		stats_inc(g_stats.errors[CERR_NOMEM]);
	else if (ret)
		mark_dirty(c);
}

static void apply_rule(struct coll *c, const struct nlmsghdr *nlh)
{
	long t;

	stats_inc(g_stats.notify_applied[NOTIFY_RULE]);
	if (nlh->nlmsg_type != RTM_NEWRULE)
		return;
	t = rule_table(nlh);
	if (t == -EBADMSG)
		stats_inc(g_stats.malformed);
	/* a rule creates its table if it does not exist: probe it */
	if (t > 0 && !mirror_has_table(c->m, (uint32_t)t) &&
	    push_u32(&c->probes, &c->nprobes, &c->probes_cap, (uint32_t)t))
		stats_inc(g_stats.errors[CERR_NOMEM]);
}

static void apply_message(struct coll *c, const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		apply_route(c, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		apply_link(c, nlh);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		apply_nexthop(c, nlh);
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
		apply_rule(c, nlh);
		break;
	case RTM_NEWPREFIX: {
		const struct prefixmsg *pm = NLMSG_DATA(nlh);

		stats_inc(g_stats.notify_applied[NOTIFY_PREFIX]);
		c->want_prefix = 1;
		/* an RA refreshes lifetimes of its device's routes without a route message */
		if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(*pm)) && pm->prefix_ifindex > 0 &&
		    push_u32(&c->aoifs, &c->naoifs, &c->aoifs_cap, (uint32_t)pm->prefix_ifindex))
			stats_inc(g_stats.errors[CERR_NOMEM]);
		break;
	}
	case RTM_NEWNDUSEROPT: {
		const struct nduseroptmsg *u = NLMSG_DATA(nlh);

		/* an RA with RDNSS, DNSSL, prefix, ... options: it refreshed what it taught */
		stats_inc(g_stats.notify_applied[NOTIFY_ND_USEROPT]);
		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*u))) {
			stats_inc(g_stats.malformed);
			return;
		}
		if (u->nduseropt_family == AF_INET6 && u->nduseropt_ifindex > 0)
			want_ra(c, 0, (uint32_t)u->nduseropt_ifindex);
		break;
	}
	case RTM_NEWADDR:
	case RTM_DELADDR: {
		const struct ifaddrmsg *ifa = NLMSG_DATA(nlh);

		/* an address's lifetimes are its prefix route's: changed with RTM_NEWADDR only */
		stats_inc(g_stats.notify_applied[NOTIFY_ADDR]);
		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa))) {
			stats_inc(g_stats.malformed);
			return;
		}
		if (ifa->ifa_family == AF_INET6 && ifa->ifa_index > 0 &&
		    push_u32(&c->aoifs, &c->naoifs, &c->aoifs_cap, ifa->ifa_index))
			stats_inc(g_stats.errors[CERR_NOMEM]);
		break;
	}
	default:
		return;
	}
	stats_inc(g_stats.notifications);
}

static void overflow_postpone(struct coll *c, int64_t t);
static void watch_saw(struct coll *c);

/* The kernel dropped notifications (ENOBUFS), or (storm) the collector gives up following a
 * storm before it does. */
static void on_overflow(struct coll *c, int storm)
{
	int64_t now = snapshot_now_ms();
	int say;

	if (c->overrun) {
		if (c->watching)
			watch_saw(c); /* the storm goes on */
		return;
	}
	say = now - stats_get(g_stats.last_enobufs_mono_ms) >= ENOBUFS_LOG_MS ||
	      !stats_get(g_stats.last_enobufs_mono_ms);
	if (storm) {
		stats_inc(g_stats.storms);
		if (say)
			log_warn(
			    "a storm of changes, more than following them is worth (%llu times "
			    "so far); resyncing with a full dump once it pauses",
			    (unsigned long long)stats_get(g_stats.storms));
	} else {
		stats_inc(g_stats.enobufs);
		if (say)
			log_warn("the kernel dropped change notifications (ENOBUFS, %llu times so "
				 "far); resyncing with a full dump",
				 (unsigned long long)stats_get(g_stats.enobufs));
	}
	stats_set(g_stats.last_enobufs_mono_ms, now);
	c->m_valid = 0;
	c->overrun = 1;
	c->watching = 1;
	if (c->resync_why != TRIGGER_RESYNC)
		c->overflow_deadline_ms = now + OVERFLOW_WAIT_MAX_MS;
	schedule_resync(c, TRIGGER_RESYNC, now + OVERFLOW_QUIET_MS);
	/* What the socket holds is older than the dump to come, which says what it says: drop it
	 * with the socket (reading 64 MB of it out took the CPU the storm's writers need) */
	watch_saw(c);
}

/*
 * After an overrun, a sign that the storm goes on (a message or ENOBUFS on the watch
 * socket, or the overrun itself). What the notifications say the dump to come will say, so
 * none is read: no socket listens for the next OVERRUN_WATCH_GAP_MS (the storm's writers pay
 * nothing for rtsnapd meanwhile), then watch_open() opens one with room for a message or two,
 * and the resync waits until that one has stayed empty for OVERFLOW_QUIET_MS (or until the
 * deadline; resync() opens a socket itself if none is open, and gives it its full buffer).
 */
static void watch_saw(struct coll *c)
{
	nlconn_close(&c->notify);
	c->watch_at = snapshot_now_ms() + OVERRUN_WATCH_GAP_MS;
	overflow_postpone(c, c->watch_at + OVERFLOW_QUIET_MS);
}

static void watch_open(struct coll *c)
{
	if (nlconn_open(&c->notify, NLCONN_NOTIFY)) {
		stats_inc(g_stats.errors[CERR_SOCKET]);
		c->watch_at = snapshot_now_ms() + RESYNC_RETRY_MIN_MS;
		return;
	}
	if (nlconn_set_rcvbuf(&c->notify, OVERRUN_WATCH_RCVBUF))
		stats_inc(g_stats.errors[CERR_SOCKET]);
	overflow_postpone(c, snapshot_now_ms() + OVERFLOW_QUIET_MS);
}

/* Something changed: an overflow resync waits for the storm to pause, until t (at most until
 * its deadline). */
static void overflow_postpone(struct coll *c, int64_t t)
{
	if (c->resync_why != TRIGGER_RESYNC)
		return;
	if (t > c->overflow_deadline_ms)
		t = c->overflow_deadline_ms;
	if (t > c->resync_at)
		c->resync_at = t;
}

/*
 * Whether the notification socket holds a storm not worth following: more notifications than
 * a quarter of the mirror's routes (and at least STORM_QUEUED_MIN bytes). Such a backlog
 * means the kernel changes routes faster than the collector applies them, as in a bulk load
 * or a BGP session coming up on a small table: following it would cost more than the full
 * dump that replaces it, and would take CPU from the writers until the socket overflows
 * anyway (seed 000). Giving up early costs the writers nothing more (see watch_saw()). On a
 * large table a burst is followed: at 1 000 000 routes the socket overflows first.
 */
static int storm_check(struct coll *c)
{
	ssize_t q;

	if (c->overrun || !c->m_valid || !c->m)
		return 0;
	q = nlconn_queued(&c->notify);
	if (q < (ssize_t)STORM_QUEUED_MIN || (size_t)q / STORM_MSG_BYTES <= mirror_routes(c->m) / 4)
		return 0;
	/* a wide multipath route's notifications list the whole sibling set: many bytes, few
	 * routes, and perhaps a route too wide for any dump to carry, which only notifications
	 * tell (proc_wide_multipath.t): where one was seen, storms are followed */
	return c->notify_max_len <= 2 * STORM_MSG_BYTES;
}

/*
 * Read and apply what the notification socket holds, for at most budget_ms (0: until it is
 * empty). Returns 1 if it is empty now, 0 if the budget ran out first.
 */
static int drain(struct coll *c, int64_t budget_ms)
{
	int64_t end = budget_ms ? snapshot_now_ms() + budget_ms : 0;

	for (;;) {
		ssize_t len = nlconn_recv(&c->notify, MSG_DONTWAIT);
		const struct nlmsghdr *nlh;
		size_t left;

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			return 1;
		if (len == -ENOBUFS) {
			on_overflow(c, 0);
			if (c->notify.fd < 0)
				return 1; /* closed: see watch_saw() */
			continue;
		}
		if (len < 0) {
			stats_inc(g_stats.errors[CERR_RECV]);
			return 1;
		}
		left = (size_t)len;
		if (left > c->notify_max_len)
			c->notify_max_len = left;
		overflow_postpone(c, snapshot_now_ms() + OVERFLOW_QUIET_MS);
		if (c->overrun) {
			/* after an overrun the mirror waits for a full dump, which will say what
			 * these say (they are older than it): applying them would only publish
			 * states the kernel is already past, while the storm delays the dump */
			for (nlh = (const struct nlmsghdr *)c->notify.buf; NLMSG_OK(nlh, left);
			     nlh = NLMSG_NEXT(nlh, left))
				stats_inc(g_stats.overrun_skipped);
			if (c->watching) {
				watch_saw(c);
				return 1;
			}
			continue;
		}
		for (nlh = (const struct nlmsghdr *)c->notify.buf; NLMSG_OK(nlh, left);
		     nlh = NLMSG_NEXT(nlh, left))
			apply_message(c, nlh);
		if (left) {
			stats_inc(g_stats.errors[CERR_TRUNCATED]);
			stats_inc(g_stats.malformed);
		}
		if (end && snapshot_now_ms() >= end)
			return 0;
	}
}

/* Whether a notification is waiting. */
static int notify_pending(struct coll *c)
{
	struct pollfd p = { .fd = c->notify.fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR));
}

/* ---- targeted dumps ---- */

static void targeted_done(enum tdump_reason why, int ret)
{
	stats_inc(g_stats.targeted_dumps[why]);
	if (ret && ret != -ENOENT)
		log_warn("targeted dump (%s) failed: %s", stats_tdump_name(why), strerror(-ret));
}

/* Run what the kernel left unannounced. Notifications that arrive meanwhile are applied after,
 * so they win over what a dump said. */
static void run_targeted(struct coll *c)
{
	struct nlconn strict = { .fd = -1 };
	struct dump_ctx x = { .m = c->m, .pr = c->pr, .d = &c->delta };
	uint32_t before = c->delta.added + c->delta.removed + c->delta.changed;
	int ret, dirty = c->want_nexthops; /* objects were cleared and re-read */

	if (!c->noifs && !c->naoifs && !c->nroifs && !c->nprobes && !c->want_prefix &&
	    !c->want_nexthops && !c->want_groups)
		return;
	if (c->noifs || c->naoifs || c->nroifs || c->nprobes || c->want_groups) {
		ret = nlconn_open(&strict, NLCONN_STRICT);
		if (ret) {
			log_warn("targeted dumps: no strict socket: %s", strerror(-ret));
			schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
			goto out;
		}
	}
	if (c->want_nexthops) {
		struct nhmsg nhm = { .nh_family = AF_UNSPEC };

		mirror_clear_nhobjs(c->m);
		ret = nlconn_dump(&c->dump, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &x);
		if (!ret)
			mirror_prune_nhid_routes(c->m, &c->delta);
		targeted_done(TDUMP_NEXTHOP, ret == -EOPNOTSUPP ? 0 : ret);
	}
	for (size_t i = 0; i < c->noifs; i++) {
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, 0, c->oifs[i], &x);
		targeted_done(TDUMP_LINK, ret == -ENODEV ? 0 : ret);
	}
	for (size_t i = 0; i < c->naoifs; i++) {
		int dup = 0;

		for (size_t k = 0; k < c->noifs && !dup; k++)
			dup = c->oifs[k] == c->aoifs[i]; /* dumped above already */
		if (dup)
			continue;
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, 0, c->aoifs[i], &x);
		targeted_done(TDUMP_ADDR, ret == -ENODEV ? 0 : ret);
	}
	if (c->nroifs) {
		int64_t t0 = snapshot_now_ms();

		for (size_t i = 0; i < c->nroifs; i++) {
			uint32_t table = c->roifs[2 * i], oif = c->roifs[2 * i + 1];
			int dup = 0;

			for (size_t k = 0; k < c->noifs && !dup; k++)
				dup = c->oifs[k] == oif; /* dumped above already, every table */
			for (size_t k = 0; k < c->naoifs && !dup; k++)
				dup = c->aoifs[k] == oif;
			for (size_t k = 0; k < i && !dup; k++)
				dup = c->roifs[2 * k] == 0 && c->roifs[2 * k + 1] == oif;
			if (dup)
				continue;
			x.now_ms = snapshot_now_ms();
			ret = dump_filtered(&strict, table, oif, &x);
			targeted_done(TDUMP_RA, ret == -ENODEV || ret == -ENOENT ? 0 : ret);
		}
		c->ra_round_ms = snapshot_now_ms() - t0;
	}
	for (size_t i = 0; i < c->nprobes; i++) {
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, c->probes[i], 0, &x);
		if (!ret && !mirror_has_table(c->m, c->probes[i])) {
			dirty = 1; /* a new (empty) table: its placeholder row */
			if (mirror_add_table(c->m, c->probes[i], 1))
				ret = -ENOMEM;
		}
		targeted_done(TDUMP_RULE, ret);
	}
	if (c->want_groups) {
		uint32_t *ids = NULL;
		long n = mirror_group_tables(c->m, &ids);

		for (long i = 0; i < n; i++) {
			x.now_ms = snapshot_now_ms();
			ret = dump_filtered(&strict, ids[i], 0, &x);
			targeted_done(TDUMP_GROUP, ret);
		}
		free(ids);
	}
	if (c->want_prefix) {
		struct rtmsg rtm = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };

		ret = nlconn_dump(&c->dump, RTM_GETROUTE, &rtm, sizeof(rtm), on_prefix, &x);
		targeted_done(TDUMP_PREFIX, ret);
	}
	/* publish only what the dumps changed: re-reading routes unchanged is no news */
	if (dirty || x.marks || c->delta.added + c->delta.removed + c->delta.changed != before)
		mark_dirty(c);
out:
	nlconn_close(&strict);
	c->noifs = c->naoifs = c->nroifs = c->nprobes = 0;
	c->want_prefix = c->want_nexthops = c->want_groups = 0;
}

/*
 * The periodic re-read of routes learned from RAs: an RA that carries no prefix and no user
 * option (RDNSS, DNSSL, ...) refreshes their lifetimes, hop limit and route-information
 * preferences without any message. Queues their (table, device) pairs for run_targeted();
 * the next round comes --ra-refresh seconds later, or 20 times the last round's duration if
 * that is longer (so a large table costs at most about 5 % of the collector's time).
 */
static void ra_refresh(struct coll *c)
{
	uint32_t *pairs = NULL;
	long n = mirror_ra_links(c->m, &pairs);
	int64_t period = (int64_t)s_opts.ra_refresh_s * 1000;

	for (long i = 0; i < n; i++)
		want_ra(c, pairs[2 * i], pairs[2 * i + 1]);
	if (n < 0)
		stats_inc(g_stats.errors[CERR_NOMEM]);
	free(pairs);
	if (period < 20 * c->ra_round_ms)
		period = 20 * c->ra_round_ms;
	c->next_ra_ms = snapshot_now_ms() + period;
}

/* ---- resync ---- */

/*
 * A resync the kernel's changes did not let us trust: try again later, backing off (at least
 * four times what the dump cost, dump_ms).
 */
/*
 * Try resync why again after c->resync_backoff_ms. An overflow's resync tries as soon as the
 * storm pauses (OVERFLOW_QUIET_MS, as after the overflow itself), with the backoff as its
 * latest: a full-table load that outlasts OVERFLOW_WAIT_MAX_MS was otherwise served only a
 * backoff (at least four dumps long, 9 s at 1 000 000 routes) after it ended.
 */
static void retry_resync(struct coll *c, enum collector_trigger why)
{
	int64_t now = snapshot_now_ms();

	if (why == TRIGGER_RESYNC) {
		c->overflow_deadline_ms = now + c->resync_backoff_ms;
		schedule_resync(c, why, now + OVERFLOW_QUIET_MS);
	} else {
		schedule_resync(c, why, now + c->resync_backoff_ms);
	}
}

static void postpone(struct coll *c, enum collector_trigger why, int64_t dump_ms)
{
	stats_inc(g_stats.resyncs_postponed);
	log_debug("resync (%s) postponed: the tables are changing", stats_trigger_name(why));
	c->resync_backoff_ms =
	    c->resync_backoff_ms ? c->resync_backoff_ms * 2 : RESYNC_RETRY_MIN_MS;
	if (c->resync_backoff_ms < 4 * dump_ms)
		c->resync_backoff_ms = 4 * dump_ms;
	if (c->resync_backoff_ms > RESYNC_RETRY_MAX_MS)
		c->resync_backoff_ms = RESYNC_RETRY_MAX_MS;
	retry_resync(c, why);
}

static int publish(struct coll *c, enum collector_trigger why);

/*
 * Make the mirror what dump d says (d is taken) in steps of an eighth of the dump (at least
 * ADOPT_STEP_MIN routes), published in between: a dump that differs everywhere (an overflow
 * during a full-table load, say) would otherwise build a whole table's segments while the
 * published snapshot still holds the old ones (RSS twice the table's). The snapshots between
 * steps show the dump's routes up to a key and the mirror's after it, on their way from one
 * stale state to the kernel's. Notifications wait for the end. 0 or -ENOMEM.
 */
static int adopt(struct coll *c, struct mirror *d, enum collector_trigger why)
{
	struct mirror_adoption *a = NULL;
	size_t step = mirror_routes(d) / ADOPT_STEPS;
	int ret;

	if (step < ADOPT_STEP_MIN)
		step = ADOPT_STEP_MIN;
	ret = mirror_adopt_begin(c->m, d, &a);
	while (!ret && (ret = mirror_adopt_step(a, step, &c->delta)) == 1) {
		ret = 0;
		if (!(c->delta.added + c->delta.removed + c->delta.changed))
			continue; /* nothing to show yet */
		mark_dirty(c);
		if (publish(c, why) == 0)
			stats_inc(g_stats.adopt_steps);
	}
	mirror_adopt_end(a);
	if (c->delta.added + c->delta.removed + c->delta.changed)
		mark_dirty(c);
	return ret;
}

/*
 * Full dump, compared with the mirror and adopted as described at the top. Returns 0, or a
 * negative errno (the mirror and the published snapshot stay as they were).
 */
static int resync(struct coll *c, enum collector_trigger why)
{
	struct mirror *d = NULL;
	uint32_t *ids = NULL, only_m = 0, only_k = 0;
	long nids = 0;
	int trusted, ret;
	int64_t t0;

	if (c->overrun) {
		/* the full buffer back before what the watch socket holds is read out (it is
		 * older than the dump, and a message dropped now would be an overrun after it) */
		if (c->notify.fd < 0 && nlconn_open(&c->notify, NLCONN_NOTIFY)) {
			stats_inc(g_stats.errors[CERR_SOCKET]);
			schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
			return -EIO;
		}
		if (nlconn_set_rcvbuf(&c->notify, 0))
			stats_inc(g_stats.errors[CERR_SOCKET]);
		c->watching = 0;
	}
	/* what happened before is in the dump; apply it to the mirror first. Bounded: a
	 * collector slower than the kernel's changes (a starved CPU, valgrind) would otherwise
	 * apply them forever and never publish; a dump now would not be trusted anyway. */
	if (!drain(c, RESYNC_DRAIN_MS) && c->m_valid) {
		postpone(c, why, 0);
		return -EAGAIN;
	}
	if (c->m && c->m_valid && mirror_has_oversized(c->m)) {
		/* the dump would stop at that route, silently: it cannot check the mirror */
		stats_inc(g_stats.resyncs_postponed);
		log_warn(
		    "resync (%s) skipped: a multipath route is too large for the kernel to dump "
		    "(a dump stops there without an error); following notifications only",
		    stats_trigger_name(why));
		return -EAGAIN;
	}
	if (c->m)
		nids = mirror_table_ids(c->m, &ids);
	if (nids < 0)
		nids = 0;
	t0 = snapshot_now_ms();
	c->overrun = 0; /* what arrives from now on is news to the dump */
	ret = full_dump(c, ids, (size_t)nids, &d);
	free(ids);
	segment_reclaim_soon(); /* the dump's buffers (and the dump's mirror, once adopted) go */
	stats_inc(g_stats.full_dumps[why]);
	if (ret) {
		stats_set(g_stats.last_error, ret);
		log_warn("full dump (%s) failed: %s; keeping the previous snapshot",
			 stats_trigger_name(why), strerror(-ret));
		if (ret != -ENOMEM) {
			/* the dump socket may be out of step: a new one, and try again soon */
			nlconn_close(&c->dump);
			if (nlconn_open(&c->dump, NLCONN_DUMP))
				stats_inc(g_stats.errors[CERR_SOCKET]);
		}
		schedule_resync(c, why, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	}
	trusted = !notify_pending(c);
	if (!trusted && c->m_valid) {
		/* the kernel changed while we read it: the dump may miss live routes */
		mirror_free(d);
		postpone(c, why, snapshot_now_ms() - t0);
		return -EAGAIN;
	}
	if (c->m) {
		long kept = mirror_keep_oversized(c->m, d);

		if (kept > 0)
			log_info(
			    "resync (%s): kept %ld multipath route(s) too large for any dump "
			    "(the kernel announced them, and lists them in /proc/net/ipv6_route)",
			    stats_trigger_name(why), kept);
	}
	if (c->m && c->m_valid) {
		if (!mirror_diff(c->m, d, "resync drift", 10, &only_m, &only_k) &&
		    only_m + only_k) {
			stats_add(g_stats.resync_drift_routes, only_m + only_k);
			log_warn("resync (%s): the mirror differed from the kernel in %u routes "
				 "(%u only in the mirror, %u only in the kernel); adopted the dump",
				 stats_trigger_name(why), only_m + only_k, only_m, only_k);
		}
	}
	/* publish what differs; an operator's SIGHUP always gets a new generation */
	if (!c->m || !c->m_valid || only_m + only_k || why == TRIGGER_SIGNAL)
		mark_dirty(c);
	if (trusted && c->m && c->m_valid && !(only_m + only_k) &&
	    mirror_same_outside_routes(c->m, d)) {
		/* the kernel agrees with the mirror: keep it, and the segments the published
		 * snapshot shares with it */
		mirror_free(d);
	} else if (!c->m) {
		c->m = d;
	} else if ((ret = adopt(c, d, why))) {
		stats_inc(g_stats.errors[CERR_NOMEM]);
		stats_set(g_stats.last_error, ret);
		log_warn("resync (%s): adopting the dump failed: %s; resyncing again",
			 stats_trigger_name(why), strerror(-ret));
		c->m_valid = 0;
		schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
		mark_dirty(c);
		return ret;
	}
	c->m_valid = trusted;
	c->noifs = c->naoifs = c->nroifs = c->nprobes = 0;
	c->want_prefix = c->want_nexthops = c->want_groups = 0;
	if (trusted) {
		c->resync_backoff_ms = 0;
		stats_set(g_stats.last_ok_mono_ms, snapshot_now_ms());
	} else {
		/* adopted because we had nothing better; check again when it is quieter */
		stats_inc(g_stats.resyncs_postponed);
		c->resync_backoff_ms =
		    c->resync_backoff_ms ? c->resync_backoff_ms * 2 : RESYNC_RETRY_MIN_MS;
		if (c->resync_backoff_ms > RESYNC_RETRY_MAX_MS)
			c->resync_backoff_ms = RESYNC_RETRY_MAX_MS;
		retry_resync(c, why);
	}
	drain(c, DRAIN_BUDGET_MS); /* what changed during the dump; the rest in the main loop */
	if (!c->dirty)
		stats_set(g_stats.last_error, 0);
	return 0;
}

/* ---- publication ---- */

static int publish(struct coll *c, enum collector_trigger why)
{
	struct snapshot *s = NULL, *prev;
	struct timespec t0, t1;
	int64_t now;
	int ret;

	stats_set(g_stats.last_attempt_mono_ms, snapshot_now_ms());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (s_fail_after >= 0 && s_ok_count >= s_fail_after)
		ret = -EIO; /* injected by RTSNAP_TEST_FAIL_AFTER */
	else
		ret = mirror_snapshot(c->m, &s);
	if (ret) {
		if (ret == -ENOMEM)
			stats_inc(g_stats.errors[CERR_NOMEM]);
		stats_set(g_stats.last_error, ret);
		log_warn("publication (%s) failed: %s; keeping the previous snapshot",
			 stats_trigger_name(why), strerror(-ret));
		c->fail_until_ms = snapshot_now_ms() + 1000;
		return ret;
	}
	clock_gettime(CLOCK_REALTIME, &s->taken_at);
	s->taken_mono_ms = (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
	s->trigger = (uint32_t)why;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->duration_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	prev = snapshot_acquire(); /* the snapshot s replaces, for the change stream */
	snapshot_publish(s);	   /* immutable from here on */
	now = snapshot_now_ms();
	s_ok_count++;
	stats_observe_duration(s->duration_s);
	stats_observe_latency((double)(now - c->dirty_since_ms) / 1000.0);
	stats_set(g_stats.last_added, c->delta.added + c->delta.changed);
	stats_set(g_stats.last_removed, c->delta.removed + c->delta.changed);
	stats_set(g_stats.last_error, 0);
	stats_set(g_stats.last_ok_mono_ms, now);
	stats_inc(g_stats.collections[why]);
	stats_inc(g_stats.publications);
	stats_add(g_stats.segments_built, s->segs_built);
	stats_set(g_stats.segments, s->nsegs);
	stats_set(g_stats.segments_shared, s->nsegs - s->segs_built);
	stats_set(g_stats.mirror_routes, mirror_routes(c->m));
	stats_set(g_stats.mirror_bytes, mirror_bytes(c->m));
	log_debug("published generation %llu: %zu records in %zu tables, %zu of %zu segments "
		  "built, in %.3f s (%s)",
		  (unsigned long long)s->generation, s->nroutes, s->ntables, s->segs_built,
		  s->nsegs, s->duration_s, stats_trigger_name(why));
	/* s stays valid here: only this thread can retire it, at the next publish */
	c->dirty = 0;
	memset(&c->delta, 0, sizeof(c->delta));
	/* publishing (build, swap, retiring the old snapshot) should take at most a fortieth
	 * of the time: the next one waits thirty-nine times what this one cost, but never more
	 * than PUBLISH_WAIT_MAX_MS beyond the cost itself (a publication's cost grows with the
	 * changes it gathers, so an unbounded factor would feed on itself under heavy churn).
	 * At 1 000 000 routes a publication costs about 1 ms (a pass over 4 000+ chunks), so
	 * under churn changes are batched for about 30 ms. (A twentieth, before publications
	 * became that cheap, published twice as often for the same latency at p99 and 2-4
	 * points more of a core at 1 000 changes/s: bench/README-churn.md, session 8.) */
	{
		struct timespec t2;
		int64_t cost_us, wait_us;

		clock_gettime(CLOCK_MONOTONIC, &t2);
		cost_us =
		    ((int64_t)(t2.tv_sec - t0.tv_sec) * 1000000000 + (t2.tv_nsec - t0.tv_nsec)) /
		    1000;
		wait_us = PUBLISH_WAIT_FACTOR * cost_us;
		if (wait_us > PUBLISH_WAIT_MAX_MS * 1000)
			wait_us = cost_us > PUBLISH_WAIT_MAX_MS * 1000 ? cost_us
								       : PUBLISH_WAIT_MAX_MS * 1000;
		c->next_pub_ms = now + (wait_us + 999) / 1000;
	}
	procfile_notify();	/* the --proc-file writer, if any, picks the new snapshot up */
	events_record(prev, s); /* /events: the diff of prev and s (events.h) */
	snapshot_release(prev);
	return 0;
}

/* ---- the thread ---- */

/*
 * When the pending changes are published: --debounce-ms after the first of them (what arrives
 * meanwhile joins the publication), but not before the previous build's own duration has
 * passed again (so building takes at most half the time), nor within a second of a failure.
 */
static int64_t publish_at(const struct coll *c)
{
	int64_t t = c->dirty_since_ms + (int64_t)s_opts.debounce_ms;

	if (t < c->next_pub_ms)
		t = c->next_pub_ms;
	if (t < c->fail_until_ms)
		t = c->fail_until_ms;
	return t;
}

static void *collector_main(void *arg)
{
	struct coll *c = arg;
	enum collector_trigger pub_why = TRIGGER_CHANGE;

	/* a burst of kernel changes is the kernel's work first: yield the CPU to its writers
	 * (the nice value of a thread is its own on Linux) */
	if (s_opts.nice > getpriority(PRIO_PROCESS, (id_t)gettid()) &&
	    setpriority(PRIO_PROCESS, (id_t)gettid(), s_opts.nice) < 0) {
		/* the packaged unit's SystemCallFilter (~@resources) refuses it: documented */
		if (errno == EPERM || errno == EACCES)
			log_debug("collector: nice %d refused by a sandbox; keeping the daemon's",
				  s_opts.nice);
		else
			log_warn("collector: cannot set nice %d: %s", s_opts.nice, strerror(errno));
	}

	while (!__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd[2] = { { .fd = s_evfd, .events = POLLIN },
					 { .fd = c->notify.fd, .events = POLLIN } };
		int64_t now = snapshot_now_ms(), wake = INT64_MAX;
		int timeout, empty = 1, hold;

		if (c->watching && c->notify.fd < 0) {
			if (now >= c->watch_at) {
				watch_open(c);
				pfd[1].fd = c->notify.fd;
			} else {
				wake = c->watch_at;
			}
		}
		if (c->next_interval_ms && c->next_interval_ms < wake)
			wake = c->next_interval_ms;
		if (c->resync_why != TRIGGER__COUNT && c->resync_at < wake)
			wake = c->resync_at;
		if (c->dirty && publish_at(c) < wake)
			wake = publish_at(c);
		if (c->next_ra_ms && c->next_ra_ms < wake)
			wake = c->next_ra_ms;
		if (segment_reclaim_pending() && wake > now + 1100)
			wake = now + 1100; /* freed segment memory to give back once idle */
		timeout = wake == INT64_MAX ? -1 : (wake <= now ? 0 : (int)(wake - now));
		/* a publication is due soon (PUBLISH_WAIT_MAX_MS plus its cost, typically): let
		 * what arrives meanwhile gather in the socket and read it all then, rather than
		 * waking for every message, if the buffer can hold that long */
		hold = c->dirty && publish_at(c) > now && publish_at(c) - now <= HOLD_MAX_MS &&
		       c->notify.rcvbuf >= HOLD_RCVBUF_MIN;
		if (poll(pfd, hold ? 1 : 2, timeout) < 0 && errno != EINTR)
			break;
		if (hold) {
			now = snapshot_now_ms();
			pfd[1].revents = now >= publish_at(c) ? POLLIN : 0;
		}
		segment_reclaim();
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(s_evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_debug("eventfd read: %s", strerror(errno));
		}
		if (__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE))
			break;
		/* not in resync(), whose dump needs the socket; and an overflow (POLLERR) is
		 * read as one */
		if (pfd[1].revents == POLLIN && storm_check(c))
			on_overflow(c, 1);
		else if (pfd[1].revents & (POLLIN | POLLERR))
			empty = drain(c, DRAIN_BUDGET_MS);
		else if (hold)
			empty = 0; /* not read: a targeted dump would be newer than what waits */
		if (c->next_ra_ms && snapshot_now_ms() >= c->next_ra_ms)
			ra_refresh(c);
		if (empty)
			run_targeted(c);
		now = snapshot_now_ms();
		if (__atomic_exchange_n(&s_resync, 0, __ATOMIC_ACQ_REL))
			schedule_resync(c, TRIGGER_SIGNAL, now);
		if (c->next_interval_ms && now >= c->next_interval_ms) {
			schedule_resync(c, TRIGGER_INTERVAL, now);
			c->next_interval_ms = now + (int64_t)s_opts.interval_s * 1000;
		}
		if (c->resync_why != TRIGGER__COUNT && now >= c->resync_at) {
			enum collector_trigger why = c->resync_why;

			c->resync_why = TRIGGER__COUNT;
			if (resync(c, why) == 0 && c->dirty)
				pub_why = why;
		}
		now = snapshot_now_ms();
		if (c->dirty && now >= publish_at(c)) {
			if (publish(c, pub_why) == 0)
				pub_why = TRIGGER_CHANGE;
		}
	}
	return NULL;
}

/* Open the sockets (notifications first, so nothing is lost between the dump and them). */
static int coll_open(struct coll *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->dump.fd = c->notify.fd = -1;
	c->resync_why = TRIGGER__COUNT;
	c->pr = malloc(sizeof(*c->pr)); /* about 400 KiB: not on the stack */
	if (!c->pr)
		return -ENOMEM;
	ret = nlconn_open(&c->notify, NLCONN_NOTIFY);
	if (!ret)
		ret = nlconn_open(&c->dump, NLCONN_DUMP);
	return ret;
}

static void coll_close(struct coll *c)
{
	nlconn_close(&c->dump);
	nlconn_close(&c->notify);
	mirror_free(c->m);
	free(c->pr);
	free(c->oifs);
	free(c->aoifs);
	free(c->roifs);
	free(c->probes);
	memset(c, 0, sizeof(*c));
	c->dump.fd = c->notify.fd = -1;
}

/* The first full dump: tried until one is trusted, then the last one is taken anyway. */
static int first_dump(struct coll *c)
{
	int ret = -EAGAIN;

	for (int i = 0; i < STARTUP_TRIES; i++) {
		c->m_valid = 1; /* an untrusted dump is refused, and retried here */
		ret = resync(c, TRIGGER_STARTUP);
		if (ret != -EAGAIN)
			break;
		c->resync_why = TRIGGER__COUNT;
		{
			struct timespec pause = { 0, 5000000L * (i + 1) }; /* let a burst pass */

			nanosleep(&pause, NULL);
		}
	}
	if (ret == -EAGAIN) {
		/* the kernel never held still: serve what the last dump saw and check later */
		log_info("the tables kept changing during every dump; starting from an "
			 "untrusted dump and resyncing when it is quieter");
		c->m_valid = 0;
		ret = resync(c, TRIGGER_STARTUP);
	}
	if (!ret && !c->m_valid && !c->dirty)
		mark_dirty(c);
	return ret;
}

int collector_collect_once(struct snapshot **out)
{
	struct coll c;
	int ret = coll_open(&c);

	if (!ret)
		ret = first_dump(&c);
	if (!ret)
		ret = mirror_snapshot(c.m, out);
	if (!ret) {
		clock_gettime(CLOCK_REALTIME, &(*out)->taken_at);
		(*out)->taken_mono_ms = snapshot_now_ms();
	}
	coll_close(&c);
	return ret;
}

int collector_start(const struct collector_opts *o)
{
	struct coll *c = &s_c;
	int ret;

	s_opts = *o;
	if (getenv("RTSNAP_TEST_FAIL_AFTER"))
		s_fail_after = atol(getenv("RTSNAP_TEST_FAIL_AFTER"));
	s_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s_evfd < 0)
		return -errno;
	ret = coll_open(c);
	if (!ret)
		ret = first_dump(c);
	if (!ret)
		ret = publish(c, TRIGGER_STARTUP);
	segment_reclaim_soon(); /* the first dump's buffers */
	if (ret) {
		coll_close(c);
		return ret;
	}
	c->next_interval_ms =
	    s_opts.interval_s ? snapshot_now_ms() + (int64_t)s_opts.interval_s * 1000 : 0;
	c->next_ra_ms =
	    s_opts.ra_refresh_s ? snapshot_now_ms() + (int64_t)s_opts.ra_refresh_s * 1000 : 0;
	stats_set(g_stats.interval_s, s_opts.interval_s);
	ret = pthread_create(&s_thread, NULL, collector_main, c);
	if (ret) {
		coll_close(c);
		return -ret;
	}
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
	coll_close(&s_c);
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
	return stats_is_fresh();
}
