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
 *   - A full dump runs at start on the main thread (trusted when nothing changed while it
 *     ran; else retried, then served and resynced later). Every later resync (--interval,
 *     SIGHUP, ENOBUFS) dumps on a thread of its own (resync_dump(): its own sockets, into a
 *     mirror of its own, which it hands over when done), while the collector thread goes on
 *     following notifications and publishing; the collector then merges the dump into the
 *     mirror in steps of about a millisecond (mirror_adopt_*(): only what differs changes,
 *     counted as drift), leaving alone the keys it changed since the dump began and the
 *     routes the dump may have skipped (see resync_dump()). After ENOBUFS what the socket
 *     holds until the dump begins is older than the dump: it is dropped, not applied.
 *   - An IPv4 collector (collector_opts.family AF_INET) is the same loop on its own sockets
 *     (IPv4 route, address and rule groups, links, nexthop objects) with an IPv4 mirror
 *     (mirror4.h): its full dumps are full4.c's, its routes placed by the IPv4 rules, and what
 *     the kernel does silently on a device going down, losing its carrier or its last
 *     address, or on a nexthop object's removal, is applied from those events by mirror4.c's
 *     rules instead of targeted dumps. None of IPv6's re-reads run for it (prefix marks,
 *     RAs, expiry, MTU, siblings); a change of nexthop_compat_mode resyncs it.
 *   - Mirrors and snapshots the thread builds and does not publish are freed here; published
 *     snapshots are freed by snapshot.c's lifetime rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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

#include "rtsnap/builder.h"
#include "rtsnap/cloop.h"
#include "rtsnap/collector.h"
#include "rtsnap/costfit.h"
#include "rtsnap/dump4.h"
#include "rtsnap/events.h"
#include "rtsnap/full4.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/mirror4.h"
#include "rtsnap/netns.h"
#include "rtsnap/nlconn.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/procfile.h"
#include "rtsnap/reserve.h"
#include "rtsnap/segment.h"
#include "rtsnap/silent.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"
#include "rtsnap/watch.h"

#define STARTUP_TRIES 20    /* full dumps tried at start before serving an untrusted one */
#define DRAIN_BUDGET_MS 5   /* publish after this long of continuous arrival */
#define RESYNC_DRAIN_MS 100 /* catching up before a full dump, at most */
#define RESYNC_RETRY_MIN_MS 1000
#define RESYNC_RETRY_MAX_MS 60000
#define OVERRUN_WATCH_RCVBUF 4096 /* after an overrun: room for a message or two */
#define OVERRUN_WATCH_GAP_MS 20	  /* after an overrun: no listener this long after a sign */
#define ADOPT_STEP_US 1000	  /* a resync's merge runs in steps of about this long */
#define ADOPT_STEP_MIN 256	  /* routes per step, at least */
#define ADOPT_STEP_MAX (1u << 20) /* and at most */
/* A notification this long can carry a route too wide for a dump (mirror_has_oversized()):
 * only then is the mirror searched for one. */
#define WIDE_NOTIFICATION 16384
#define RESYNC_NICE 19		/* the resync's dump thread yields to the collector */
#define RESYNC_STACK (2u << 20) /* the dump thread's stack */
#define ENOBUFS_LOG_MS 10000	/* at most one overflow warning per this long */
/* After an overflow the resync waits until notifications pause this long (at most
 * OVERFLOW_WAIT_MAX_MS): an overflow means a storm of changes (a BGP session reset, a bulk
 * load), and a full dump during it takes each table's tb6_lock chunk by chunk against the
 * writers, would be untrusted anyway, and is repeated until one is not. */
#define OVERFLOW_QUIET_MS 200
#define PUBLISH_WAIT_FACTOR 39	    /* see publish() */
#define PUBLISH_MIN_WAIT_US 4000    /* see publish() */
#define HOLD_RCVBUF_MIN (16u << 20) /* see coll_prepare() */
#define HOLD_MAX_MS 100		    /* a longer wait (--debounce-ms, a failure) reads as it goes */
#define OVERFLOW_WAIT_MAX_MS 5000
/* A storm not worth following (see storm_check()): this much queued at least, and more
 * notifications than a quarter of the mirror's routes, at about STORM_MSG_BYTES each (what
 * the kernel charges the buffer for a route's notification, measured: 1 280 bytes). */
#define STORM_QUEUED_MIN (4u << 20)
#define STORM_MSG_BYTES 1280
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h; net/if.h does not define it */
#endif
#define EXPIRING_CHECK_MS 2000 /* the expiring routes are checked this often (silent.c) */
/* After running out of memory the fresh dump is tried after this, doubling up to the max:
 * memory freed elsewhere (routes deleted, a limit raised) is found within the max. */
#define RECOVER_MIN_MS 250
#define RECOVER_MAX_MS 2000

/* What the log says of the collector: which family, for the IPv4 one. */
#define FAM(c) ((c)->tag)

/*
 * The keys (table, order key) whose routes the collector changed since a resync's dump began,
 * and the tables it touched: an open-addressing hash set. Collector thread only.
 */
struct touch_key {
	uint32_t table, used;
	struct order_key k;
};

struct touchset {
	struct touch_key *slot;
	size_t cap, n; /* cap: 0 or a power of two */
	uint32_t *tables;
	size_t ntables, tables_cap;
};

/*
 * A resync's full dump, run by its own thread on its own sockets into a mirror of its own (d),
 * while the collector thread goes on applying notifications and publishing. The thread owns
 * d until it sets done; the collector then joins it and takes d. abort asks it to stop.
 */
struct rjob {
	pthread_t th;
	enum collector_trigger why;
	uint32_t *ids; /* the tables the mirror knew (probed if the dump shows none of theirs) */
	long nids;
	struct mirror *d;
	int v4; /* an IPv4 dump (full4.h): into d4, whose mirror d is not */
	struct mirror4 *d4;
	int intr; /* v4: the kernel flagged a dump inconsistent */
	int ret;
	int64_t t0, t1;		    /* when the dump began and ended (ms) */
	int done;		    /* atomic: d and ret are set */
	int abort;		    /* atomic: the collector no longer wants the dump */
	int evfd;		    /* the collector's: written when done */
	int nsfd;		    /* the collector's namespace (entered by the thread), or -1 */
	struct collector_stats *st; /* the collector's counters, for its socket's errors */
};

struct collector {
	struct collector_opts opts;
	/* the watched routes of its family and namespace: answers carried across publications
	 * (watch.h); NULL netns: not followed (collect_once) */
	struct watch_state watch;
	struct collector_stats *st; /* the instance's counters (opts.stats, or collect_once's) */
	struct cloop_member member; /* its place in the collector thread's loop (cloop.h) */
	int running;		    /* member of the loop */
	int evfd;    /* wakes the loop for it: resync request, a resync's dump done */
	int resync;  /* set by collector_request_resync() */
	int hold;    /* this pass leaves the notifications to gather (coll_prepare()) */
	int nsfd;    /* the named namespace it follows (opts.netns), or -1: the daemon's */
	char *netns; /* its name (a copy), or NULL */
	char tag[NETNS_NAME_MAX + 24]; /* log prefix: the namespace and family, or "" */
	/* RTSNAP_TEST_FAIL_AFTER=N: publications after the Nth fail (tests) */
	long fail_after, ok_count;
	/* RTSNAP_TEST_NOMEM=K: the K builds after the first publication run out of memory */
	long nomem_inject;

	struct nlconn dump, notify;
	int v4;			 /* an IPv4 collector: m is m4's mirror */
	struct mirror4 *m4;	 /* v4: the mirror with the IPv4 rules' state; owns m */
	struct nlparse_nh4 *nh4; /* v4: parse buffer of nexthop objects */
	int want_main;		 /* v4: probe whether the main table exists */
	struct mirror *m;
	struct builder *b;     /* composes m's snapshots */
	int m_valid;	       /* the mirror followed every notification since a trusted dump */
	int overrun;	       /* ENOBUFS since the last full dump began: what is queued is stale */
	int watching;	       /* overrun: the notification socket only watches for a pause */
	int64_t watch_at;      /* overrun, no socket: open the watch socket then */
	size_t notify_max_len; /* the longest notification datagram read */
	struct nlparse_route *pr;

	/* publication */
	int dirty;
	int64_t dirty_since_ms; /* first change not yet published */
	int64_t dirty_since_us; /* the same, in microseconds */
	struct mirror_delta delta;
	int64_t next_pub_us;	      /* under churn, no publication before this (see publish()) */
	struct costfit pace;	      /* what a publication costs: its fixed part (publish()) */
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
	struct silent sil; /* other re-reads, the compat sysctl, the expiring check */
	size_t nexpiring;  /* expiring routes in the published snapshot */

	/* resync */
	enum collector_trigger resync_why; /* TRIGGER__COUNT: none pending */
	int64_t resync_at;
	int64_t resync_backoff_ms;
	int64_t next_interval_ms;
	enum collector_trigger pub_why; /* what the next publication is for */

	/* a resync beside the notifications (resync_begin()) */
	struct rjob *job;		  /* its dump, while it runs or waits to be joined */
	struct mirror_adoption *adopting; /* its merge into the mirror, in steps */
	enum collector_trigger adopt_why;
	int64_t adopt_dump_ms;	 /* what its dump took */
	size_t step_routes;	 /* routes per merge step (about ADOPT_STEP_US) */
	int tracking;		 /* from the dump's start to the merge's end: */
	struct touchset touched; /*   the keys and tables changed meanwhile */
	uint64_t notes_since;	 /*   notifications read meanwhile */
	int outside;		 /*   a link, nexthop object, rule or table changed meanwhile */
	int was_valid;		 /*   m_valid when the dump began */

	/* out of memory (out_of_memory()): the mirror is dropped and a fresh one dumped */
	int recovering;		    /* set from the failure until a publication succeeds */
	uint64_t nomem_seen;	    /* out_of_memory() calls so far */
	int retake;		    /* recovered, but the reserve is not taken again yet */
	int64_t recover_at;	    /* the next try of the fresh dump (ms) */
	int64_t recover_backoff_ms; /* the wait after that one, if it fails */
};

static void out_of_memory(struct collector *c, const char *what);

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
static void want_ra(struct collector *c, uint32_t table, uint32_t ifindex)
{
	if (ifindex && push_pair(&c->roifs, &c->nroifs, &c->roifs_cap, table, ifindex))
		out_of_memory(c, "queueing a re-read");
}

/* CLOCK_MONOTONIC now in microseconds: publications are paced to fractions of a millisecond. */
static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void mark_dirty(struct collector *c)
{
	if (!c->dirty) {
		c->dirty_since_us = now_us();
		c->dirty_since_ms = c->dirty_since_us / 1000;
	}
	c->dirty = 1;
}

static void schedule_resync(struct collector *c, enum collector_trigger why, int64_t at)
{
	if (c->resync_why == TRIGGER__COUNT || at < c->resync_at)
		c->resync_at = at;
	if (c->resync_why == TRIGGER__COUNT || why == TRIGGER_RESYNC)
		c->resync_why = why;
}

/* ---- what changed while a resync runs ---- */

static uint64_t touch_hash(uint32_t table, const struct order_key *k)
{
	uint64_t h = table * 0x9e3779b97f4a7c15ull;

	h ^= k->a_hi + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= k->a_lo + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= ((uint64_t)k->c << 32 | k->metric) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= k->s_hi + ((uint64_t)k->sl << 7) + (h << 6) + (h >> 2);
	h ^= k->s_lo + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int touch_eq(const struct touch_key *x, uint32_t table, const struct order_key *k)
{
	return x->table == table && !order_key_cmp(&x->k, k);
}

/* Whether key k (NULL: any key) of table was touched; a mirror_adopt_rules.touched. */
static int touch_has(void *arg, uint32_t table, const struct order_key *k)
{
	const struct touchset *t = arg;
	size_t i;

	if (!k) {
		for (i = 0; i < t->ntables; i++)
			if (t->tables[i] == table)
				return 1;
		return 0;
	}
	if (!t->n)
		return 0;
	for (i = touch_hash(table, k) & (t->cap - 1); t->slot[i].used; i = (i + 1) & (t->cap - 1))
		if (touch_eq(&t->slot[i], table, k))
			return 1;
	return 0;
}

/* Add (table, k). 0 or -ENOMEM. */
static int touch_add(struct touchset *t, uint32_t table, const struct order_key *k)
{
	size_t i;

	if (touch_has(t, table, k))
		return 0;
	if ((t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct touch_key *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slot[j].used)
				continue;
			for (i = touch_hash(t->slot[j].table, &t->slot[j].k) & (ncap - 1);
			     ns[i].used; i = (i + 1) & (ncap - 1))
				;
			ns[i] = t->slot[j];
		}
		free(t->slot);
		t->slot = ns;
		t->cap = ncap;
	}
	for (i = touch_hash(table, k) & (t->cap - 1); t->slot[i].used; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i].used = 1;
	t->slot[i].table = table;
	t->slot[i].k = *k;
	t->n++;
	for (size_t j = 0; j < t->ntables; j++)
		if (t->tables[j] == table)
			return 0;
	return push_u32(&t->tables, &t->ntables, &t->tables_cap, table);
}

static void touch_free(struct touchset *t)
{
	free(t->slot);
	free(t->tables);
	memset(t, 0, sizeof(*t));
}

/* The routes of key k of table changed while a resync runs: its merge leaves them be. */
static void touch(struct collector *c, uint32_t table, const struct order_key *k)
{
	if (c->tracking && touch_add(&c->touched, table, k))
		c->outside = 1; /* not recorded: the merge could undo it, so there is none */
}

static void touch_route(struct collector *c, const struct route *r)
{
	struct order_key k;

	if (!c->tracking)
		return;
	order_key_of(r, &k);
	touch(c, r->table, &k);
}

/* Something outside the routes (links, nexthop objects, tables) changed: a resync running
 * now cannot merge its dump, which may predate it. */
static void touch_outside(struct collector *c)
{
	if (c->tracking)
		c->outside = 1;
}

/* ---- full dumps ---- */

struct dump_ctx {
	struct mirror *m;
	struct nlparse_route *pr;
	int64_t now_ms;
	struct mirror_delta *d;	   /* upsert mode (targeted dumps); NULL: load in dump order */
	struct collector *c;	   /* upsert mode: the collector, told what changed */
	const struct nlconn *gaps; /* load mode: the dump's datagram boundaries (mirror_load_gap) */
	const int *abort;	   /* atomic: stop (-ECANCELED) when set */
	uint32_t marks;		   /* prefix dumps: RTF_PREFIX_RT marks that changed */
	uint32_t *ids;		   /* rule dumps: tables named */
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

	if (x->abort && __atomic_load_n(x->abort, __ATOMIC_RELAXED))
		return -ECANCELED;
	if (x->gaps && (const char *)nlh == x->gaps->buf)
		mirror_load_gap(x->m); /* the first message of a datagram */
	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_route(nlh, x->now_ms, x->pr);
	if (ret <= 0)
		return ret;
	if (x->d) {
		/* what a targeted dump re-read is at least as new as a resync's dump */
		if (x->c)
			touch_route(x->c, &x->pr->r);
		return mirror_apply_update(x->m, x->pr, x->d);
	}
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
	if (mirror_mark_prefix(x->m, &k) > 0) {
		x->marks++;
		if (x->c) {
			struct order_key ok;

			order_key_make(k.dst, k.dst_len, k.src, k.src_len, k.metric, &ok);
			touch(x->c, k.table, &ok);
		}
	}
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

/* A strict dump of routes, filtered on table (if table), device (if oif) and protocol (if
 * protocol). */
static int dump_filtered_p(struct nlconn *strict, uint32_t table, uint32_t oif, uint8_t protocol,
			   struct dump_ctx *x)
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
	req.rtm.rtm_protocol = protocol;
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

static int dump_filtered(struct nlconn *strict, uint32_t table, uint32_t oif, struct dump_ctx *x)
{
	return dump_filtered_p(strict, table, oif, 0, x);
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
		ret = nlconn_open(&strict, NLCONN_STRICT, c->st);
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

/* One complete dump of the namespace into a new mirror, on conn with parse buffer pr.
 * prev_ids: tables known before (they exist until the namespace goes, and are probed if the
 * dump shows none of their routes). gaps: record where the route dump may have skipped routes
 * (mirror_load_gap()). abort: stop with -ECANCELED once it is set (may be NULL). */
static int full_dump(struct nlconn *conn, struct nlparse_route *pr, const uint32_t *prev_ids,
		     size_t nprev, int gaps, const int *abort, struct mirror **out)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct rtmsg rtm = { .rtm_family = AF_INET6 };
	struct rtmsg rtm_prefix = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	struct dump_ctx x = { .pr = pr, .now_ms = snapshot_now_ms(), .abort = abort };
	int ret;

	ret = mirror_new(&x.m);
	if (ret)
		return ret;
	ret = nlconn_dump(conn, RTM_GETLINK, &ifi, sizeof(ifi), on_link, &x);
	if (!ret) {
		/* /proc shows a route's object's first nexthop, which the route dump leaves
		 * out when nexthop_compat_mode is 0; kernels without objects refuse the dump */
		ret = nlconn_dump(conn, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &x);
		if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EAFNOSUPPORT)
			ret = 0;
	}
	if (!ret) {
		x.now_ms = snapshot_now_ms();
		x.gaps = conn;
		ret = nlconn_dump(conn, RTM_GETROUTE, &rtm, sizeof(rtm), on_route, &x);
		x.gaps = NULL;
		if (!ret)
			ret = mirror_load_end(x.m, gaps);
	}
	if (!ret)
		ret =
		    nlconn_dump(conn, RTM_GETROUTE, &rtm_prefix, sizeof(rtm_prefix), on_prefix, &x);
	if (!ret && abort && __atomic_load_n(abort, __ATOMIC_RELAXED))
		ret = -ECANCELED;
	if (!ret)
		ret = find_empty_tables(conn, x.m, prev_ids, nprev);
	if (ret) {
		if (ret == -ENOMEM && conn->st)
			stats_inc(conn->st->errors[CERR_NOMEM]);
		mirror_free(x.m);
		return ret;
	}
	*out = x.m;
	return 0;
}

/* ---- notifications ---- */

static void apply_route(struct collector *c, const struct nlmsghdr *nlh)
{
	int ret = nlparse_route(nlh, snapshot_now_ms(), c->pr);

	if (ret == -EBADMSG) {
		stats_inc(c->st->malformed);
		return;
	}
	if (ret <= 0)
		return;
	touch_route(c, &c->pr->r);
	if (nlh->nlmsg_type == RTM_NEWROUTE) {
		const struct route *r = &c->pr->r;

		stats_inc(c->st->notify_applied[NOTIFY_ROUTE_NEW]);
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
		/* the form tells net.ipv4.nexthop_compat_mode at the time (silent.h) */
		if (r->nhid)
			silent_compat_seen(&c->sil, r->nh_count > 0);
		/* over an object the mirror does not know: a nexthop re-dump newer than this
		 * message saw it gone (a device flush, silent), and the route with it. The next
		 * re-dump drops the route unless the object is there. */
		if (r->nhid && !mirror_knows_nhobj(c->m, r->nhid))
			c->want_nexthops = 1;
	} else {
		uint32_t unknown = c->delta.unknown;

		stats_inc(c->st->notify_applied[NOTIFY_ROUTE_DEL]);
		ret = mirror_apply_del(c->m, c->pr, &c->delta);
		if (c->delta.unknown != unknown)
			stats_add(c->st->unknown_deletes, c->delta.unknown - unknown);
	}
	if (ret == -ENOMEM) {
		/* the mirror no longer matches the kernel: start over from a fresh dump */
		out_of_memory(c, "applying a route");
		return;
	}
	mark_dirty(c);
}

static void apply_link(struct collector *c, const struct nlmsghdr *nlh)
{
	struct route_link l;
	int ret;

	stats_inc(c->st->notify_applied[NOTIFY_LINK]);
	if (nlh->nlmsg_type == RTM_DELLINK) {
		const struct ifinfomsg *ifi = NLMSG_DATA(nlh);
		uint32_t ifindex;

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) || ifi->ifi_index <= 0) {
			stats_inc(c->st->malformed);
			return;
		}
		ifindex = (uint32_t)ifi->ifi_index;
		if (mirror_link_has_nhobj(c->m, ifindex)) {
			/* the kernel flushes its nexthop objects without RTM_DELNEXTHOP */
			c->want_nexthops = 1;
			c->want_groups = 1;
		}
		mirror_del_link(c->m, ifindex, &c->delta);
		touch_outside(c);
		mark_dirty(c);
		return;
	}
	ret = nlparse_link(nlh, &l);
	if (ret == -EBADMSG)
		stats_inc(c->st->malformed);
	if (ret <= 0)
		return;
	ret = mirror_set_link(c->m, &l);
	if (ret < 0) {
		out_of_memory(c, "applying a link");
		return;
	}
	if (ret & MIRROR_LINK_STATE) {
		/* carrier and admin state change nexthop flags (linkdown, dead) silently */
		if (push_u32(&c->oifs, &c->noifs, &c->oifs_cap, l.ifindex))
			out_of_memory(c, "queueing a re-read");
		/* the kernel flushes the device's nexthop objects, and the routes over them,
		 * without RTM_DELNEXTHOP when it goes down and also when it loses its carrier
		 * (neither IFF_RUNNING nor IFF_LOWER_UP: nexthop.c, NETDEV_CHANGE) */
		if ((!(l.flags & IFF_UP) || !(l.flags & (IFF_RUNNING | IFF_LOWER_UP))) &&
		    mirror_link_has_nhobj(c->m, l.ifindex)) {
			/* now, in the order of the messages: an object of the same id may be
			 * added again before the re-dump runs */
			mirror_flush_link_nhobjs(c->m, l.ifindex, &c->delta);
			c->want_nexthops = 1;
			c->want_groups = 1;
		}
	}
	if (ret & MIRROR_LINK_MTU) {
		/* routes' mtu rewritten silently, the siblings' too */
		mirror_forget_siblings(c->m, l.ifindex);
		if (silent_want(&c->sil, TDUMP_MTU, 0, l.ifindex, 0))
			out_of_memory(c, "queueing a re-read");
	}
	if (ret) {
		touch_outside(c);
		mark_dirty(c); /* names and flags are rendered */
	}
}

static void apply_nexthop(struct collector *c, const struct nlmsghdr *nlh)
{
	struct route_nhobj o;
	int ret;

	stats_inc(c->st->notify_applied[NOTIFY_NEXTHOP]);
	ret = nlparse_nexthop(nlh, &o);
	if (ret == -EBADMSG)
		stats_inc(c->st->malformed);
	if (ret <= 0)
		return;
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		/* groups that held it shrink; routes over them are not re-announced */
		if (mirror_has_groups(c->m))
			c->want_groups = 1;
		mirror_del_nhobj(c->m, o.id, &c->delta);
		touch_outside(c);
		mark_dirty(c);
		return;
	}
	ret = mirror_set_nhobj(c->m, &o);
	if (ret < 0)
		out_of_memory(c, "applying a nexthop object");
	if (ret) {
		touch_outside(c);
		if (ret > 0)
			mark_dirty(c);
	}
}

static void apply_rule(struct collector *c, const struct nlmsghdr *nlh)
{
	long t;

	stats_inc(c->st->notify_applied[NOTIFY_RULE]);
	if (nlh->nlmsg_type != RTM_NEWRULE)
		return;
	t = rule_table(nlh);
	if (t == -EBADMSG)
		stats_inc(c->st->malformed);
	/* a rule creates its table if it does not exist: probe it */
	if (t > 0 && !mirror_has_table(c->m, (uint32_t)t)) {
		touch_outside(c); /* a table the dump may not list */
		if (push_u32(&c->probes, &c->nprobes, &c->probes_cap, (uint32_t)t))
			out_of_memory(c, "queueing a re-read");
	}
}

/* ---- IPv4 notifications (mirror4.h) ---- */

/* The notification socket's groups: the collector's family's. */
static enum nlconn_mode notify_mode(const struct collector *c)
{
	return c->v4 ? NLCONN_NOTIFY4 : NLCONN_NOTIFY;
}

/* A rule of mirror4.c failed (-ENOMEM): the mirror may have missed the change. */
static void failed4(struct collector *c, int ret)
{
	if (ret >= 0)
		return;
	stats_inc(c->st->errors[CERR_NOMEM]);
	c->m_valid = 0;
	schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
}

static uint32_t delta_sum(const struct mirror_delta *d)
{
	return d->added + d->removed + d->changed;
}

static void apply_route4(struct collector *c, const struct nlmsghdr *nlh)
{
	int del = nlh->nlmsg_type == RTM_DELROUTE, ret = nlparse_route4(nlh, c->pr);
	uint32_t unknown = c->delta.unknown;

	if (ret == -EBADMSG) {
		stats_inc(c->st->malformed);
		return;
	}
	if (ret <= 0)
		return;
	touch_route(c, &c->pr->r);
	stats_inc(c->st->notify_applied[del ? NOTIFY_ROUTE_DEL : NOTIFY_ROUTE_NEW]);
	ret = mirror4_route(c->m4, del, nlh->nlmsg_flags, c->pr, &c->delta);
	if (c->delta.unknown != unknown)
		stats_add(c->st->unknown_deletes, c->delta.unknown - unknown);
	/* the kernel makes main with local while no rule of the user's exists: its header */
	if (!del && c->pr->r.table == RT_TABLE_LOCAL && !mirror_has_table(c->m, RT_TABLE_MAIN))
		c->want_main = 1;
	failed4(c, ret);
	mark_dirty(c);
}

static void apply_link4(struct collector *c, const struct nlmsghdr *nlh)
{
	uint32_t before = delta_sum(&c->delta);
	struct route_link l;
	int ret, chg;

	stats_inc(c->st->notify_applied[NOTIFY_LINK]);
	if (nlh->nlmsg_type == RTM_DELLINK) {
		const struct ifinfomsg *ifi = NLMSG_DATA(nlh);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) || ifi->ifi_index <= 0) {
			stats_inc(c->st->malformed);
			return;
		}
		/* NETDEV_UNREGISTER: its routes and objects go without a message */
		failed4(c, mirror4_link_del(c->m4, (uint32_t)ifi->ifi_index, &c->delta));
		touch_outside(c);
		mark_dirty(c);
		return;
	}
	ret = nlparse_link(nlh, &l);
	if (ret == -EBADMSG)
		stats_inc(c->st->malformed);
	if (ret <= 0)
		return;
	/* what the snapshot prints of the link (a name, flags) changed, or not */
	chg = mirror_set_link(c->m, &l);
	if (chg < 0) {
		failed4(c, chg);
		return;
	}
	/* down, carrier lost or back: the kernel's silent changes, by the IPv4 rules */
	failed4(c, mirror4_link(c->m4, &l, &c->delta));
	if (chg || delta_sum(&c->delta) != before) {
		touch_outside(c);
		mark_dirty(c);
	}
}

static void apply_addr4(struct collector *c, const struct nlmsghdr *nlh)
{
	uint32_t before = delta_sum(&c->delta), ifindex;
	uint8_t addr[4], plen;
	int ret;

	stats_inc(c->st->notify_applied[NOTIFY_ADDR]);
	ret = nlparse_addr4(nlh, &ifindex, addr, &plen);
	if (ret == -EBADMSG)
		stats_inc(c->st->malformed);
	if (ret <= 0)
		return;
	/* the last address gone takes the device's routes, silently */
	failed4(c, mirror4_addr(c->m4, ifindex, addr, plen, nlh->nlmsg_type == RTM_DELADDR, 0,
				&c->delta));
	touch_outside(c); /* the rules' state: a resync's dump may predate it */
	if (delta_sum(&c->delta) != before)
		mark_dirty(c);
}

static void apply_nexthop4(struct collector *c, const struct nlmsghdr *nlh)
{
	int ret;

	stats_inc(c->st->notify_applied[NOTIFY_NEXTHOP]);
	ret = nlparse_nexthop4(nlh, c->nh4);
	if (ret == -EBADMSG)
		stats_inc(c->st->malformed);
	if (ret <= 0)
		return;
	/* a removed object takes its IPv4 routes silently; groups that held it shrink */
	failed4(c, mirror4_nexthop(c->m4, c->nh4, nlh->nlmsg_type == RTM_DELNEXTHOP, &c->delta));
	touch_outside(c);
	mark_dirty(c);
}

static void apply_message4(struct collector *c, const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		apply_route4(c, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		apply_link4(c, nlh);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		apply_nexthop4(c, nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		apply_addr4(c, nlh);
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
		/* IPv4 tables print nothing until a route comes; main's header is probed */
		stats_inc(c->st->notify_applied[NOTIFY_RULE]);
		if (!mirror_has_table(c->m, RT_TABLE_MAIN))
			c->want_main = 1;
		break;
	default:
		return;
	}
	stats_inc(c->st->notifications);
}

static void apply_message(struct collector *c, const struct nlmsghdr *nlh)
{
	if (c->v4) {
		apply_message4(c, nlh);
		return;
	}
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

		stats_inc(c->st->notify_applied[NOTIFY_PREFIX]);
		c->want_prefix = 1;
		/* an RA refreshes lifetimes of its device's routes without a route message */
		if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(*pm)) && pm->prefix_ifindex > 0 &&
		    push_u32(&c->aoifs, &c->naoifs, &c->aoifs_cap, (uint32_t)pm->prefix_ifindex))
			out_of_memory(c, "queueing a re-read");
		break;
	}
	case RTM_NEWNDUSEROPT: {
		const struct nduseroptmsg *u = NLMSG_DATA(nlh);

		/* an RA with RDNSS, DNSSL, prefix, ... options: it refreshed what it taught */
		stats_inc(c->st->notify_applied[NOTIFY_ND_USEROPT]);
		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*u))) {
			stats_inc(c->st->malformed);
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
		stats_inc(c->st->notify_applied[NOTIFY_ADDR]);
		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa))) {
			stats_inc(c->st->malformed);
			return;
		}
		if (ifa->ifa_family == AF_INET6 && ifa->ifa_index > 0 &&
		    push_u32(&c->aoifs, &c->naoifs, &c->aoifs_cap, ifa->ifa_index))
			out_of_memory(c, "queueing a re-read");
		/* a deleted address stops being any route's preferred source, silently: the
		 * routes that named it are re-read (mirror.h) */
		if (nlh->nlmsg_type == RTM_DELADDR) {
			uint8_t a[16];

			if (nlparse_addr6(nlh, a) == 1)
				mirror_prefsrc_gone(c->m, a);
		}
		/* an address added inside an RA prefix makes its route static: RTF_ADDRCONF and
		 * RTF_PREFIX_RT go without a route message (only an RTM_F_PREFIX dump tells) */
		if (ifa->ifa_family == AF_INET6)
			c->want_prefix = 1;
		break;
	}
	default:
		return;
	}
	stats_inc(c->st->notifications);
}

static void overflow_postpone(struct collector *c, int64_t t);
static void watch_saw(struct collector *c);
static void resync_cancel(struct collector *c);

/* The kernel dropped notifications (ENOBUFS), or (storm) the collector gives up following a
 * storm before it does. */
static void on_overflow(struct collector *c, int storm)
{
	int64_t now = snapshot_now_ms();
	int say;

	if (c->overrun) {
		if (c->watching)
			watch_saw(c); /* the storm goes on */
		return;
	}
	say = now - stats_get(c->st->last_enobufs_mono_ms) >= ENOBUFS_LOG_MS ||
	      !stats_get(c->st->last_enobufs_mono_ms);
	if (storm) {
		stats_inc(c->st->storms);
		if (say)
			log_warn("%sa storm of changes, more than following them is worth (%llu "
				 "times so far); resyncing with a full dump once it pauses",
				 FAM(c), (unsigned long long)stats_get(c->st->storms));
	} else {
		stats_inc(c->st->enobufs);
		if (say)
			log_warn(
			    "%sthe kernel dropped change notifications (ENOBUFS, %llu times so "
			    "far); resyncing with a full dump",
			    FAM(c), (unsigned long long)stats_get(c->st->enobufs));
	}
	stats_set(c->st->last_enobufs_mono_ms, now);
	resync_cancel(c); /* what it dumped or merged may miss what was dropped */
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
static void watch_saw(struct collector *c)
{
	nlconn_close(&c->notify);
	c->watch_at = snapshot_now_ms() + OVERRUN_WATCH_GAP_MS;
	overflow_postpone(c, c->watch_at + OVERFLOW_QUIET_MS);
}

static void watch_open(struct collector *c)
{
	if (nlconn_open(&c->notify, notify_mode(c), c->st)) {
		stats_inc(c->st->errors[CERR_SOCKET]);
		c->watch_at = snapshot_now_ms() + RESYNC_RETRY_MIN_MS;
		return;
	}
	if (nlconn_set_rcvbuf(&c->notify, OVERRUN_WATCH_RCVBUF))
		stats_inc(c->st->errors[CERR_SOCKET]);
	overflow_postpone(c, snapshot_now_ms() + OVERFLOW_QUIET_MS);
}

/* Something changed: an overflow resync waits for the storm to pause, until t (at most until
 * its deadline). */
static void overflow_postpone(struct collector *c, int64_t t)
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
static int storm_check(struct collector *c)
{
	ssize_t q;

	if (c->overrun || !c->m_valid || !c->m)
		return 0;
	/* a storm the buffer cannot hold (a large table) overflows it first: no need to ask */
	if ((uint64_t)(mirror_routes(c->m) / 4) * STORM_MSG_BYTES > 2 * (uint64_t)c->notify.rcvbuf)
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
static int drain(struct collector *c, int64_t budget_ms)
{
	int64_t end = budget_ms ? snapshot_now_ms() + budget_ms : 0;
	uint64_t nomem = c->nomem_seen;

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
		if (len == -EMSGSIZE) {
			/* a datagram larger than the buffer (nlconn_recv() says why it should not
			 * happen) was lost: what it said comes back with a resync */
			stats_inc(c->st->errors[CERR_RECV]);
			log_warn("%sa change notification too large to receive was lost; resyncing "
				 "with a full dump",
				 FAM(c));
			schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
			continue;
		}
		if (len < 0) {
			stats_inc(c->st->errors[CERR_RECV]);
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
				stats_inc(c->st->overrun_skipped);
			if (c->watching) {
				watch_saw(c);
				return 1;
			}
			continue;
		}
		if (c->tracking)
			c->notes_since++;
		for (nlh = (const struct nlmsghdr *)c->notify.buf;
		     NLMSG_OK(nlh, left) && c->nomem_seen == nomem; nlh = NLMSG_NEXT(nlh, left))
			apply_message(c, nlh);
		if (c->nomem_seen != nomem)
			return 1; /* out of memory: the mirror is dropped (out_of_memory()) */
		if (left) {
			stats_inc(c->st->errors[CERR_TRUNCATED]);
			stats_inc(c->st->malformed);
		}
		if (end && snapshot_now_ms() >= end)
			return 0;
	}
}

/* Whether a notification is waiting (received and not yet read, or in the socket). */
static int notify_pending(struct collector *c)
{
	struct pollfd p = { .fd = c->notify.fd, .events = POLLIN };

	return nlconn_buffered(&c->notify) ||
	       (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR)));
}

/* ---- targeted dumps ---- */

static void targeted_done(struct collector *c, enum tdump_reason why, int ret)
{
	stats_inc(c->st->targeted_dumps[why]);
	if (ret && ret != -ENOENT)
		log_warn("targeted dump (%s) failed: %s", stats_tdump_name(why), strerror(-ret));
	if (ret == -ENOMEM)
		out_of_memory(c, "a targeted dump");
}

/* Survivors of a multipath route's first leg whose own attributes the mirror does not know
 * (mirror_take_rereads()): their routes are re-read. */
static void want_siblings(struct collector *c)
{
	uint32_t *rr = NULL;
	long n = mirror_take_rereads(c->m, &rr);

	for (long i = 0; i < n; i++)
		if (silent_want(&c->sil,
				rr[3 * i + 2] == MIRROR_REREAD_PREFSRC ? TDUMP_PREFSRC
								       : TDUMP_SIBLING,
				rr[3 * i], rr[3 * i + 1], 0))
			out_of_memory(c, "queueing a re-read");
	free(rr);
}

/* The re-reads silent.c queued (silent.h), on the strict socket. */
static void run_silent(struct collector *c, struct nlconn *strict, struct dump_ctx *x)
{
	size_t n;
	const struct silent_req *q = silent_take(&c->sil, &n);
	int64_t t0 = snapshot_now_ms();
	int expiring = 0;

	for (size_t i = 0; i < n; i++) {
		int ret;

		x->now_ms = snapshot_now_ms();
		ret = dump_filtered_p(strict, q[i].table, q[i].oif, q[i].protocol, x);
		targeted_done(c, (enum tdump_reason)q[i].reason,
			      ret == -ENODEV || ret == -ENOENT ? 0 : ret);
		expiring |= q[i].reason == TDUMP_EXPIRING;
	}
	silent_clear(&c->sil);
	if (expiring) {
		int64_t ms = snapshot_now_ms() - t0;

		log_debug("%sexpiring routes checked: %zu dumps in %lld ms", FAM(c), n,
			  (long long)ms);
		silent_round_done(&c->sil, snapshot_now_ms(), ms);
	}
}

/* v4: whether main exists now that a route came in local or a rule changed. */
static void probe_main4(struct collector *c)
{
	int ret;

	c->want_main = 0;
	if (mirror_has_table(c->m, RT_TABLE_MAIN))
		return;
	ret = dump4_main_exists(c->st, NULL, NULL, NULL);
	if (ret > 0) {
		touch_outside(c);
		ret = mirror_add_table(c->m, RT_TABLE_MAIN, 0);
		failed4(c, ret);
		mark_dirty(c);
	}
	targeted_done(c, TDUMP_RULE, ret < 0 ? ret : 0);
}

/* Run what the kernel left unannounced. Notifications that arrive meanwhile are applied after,
 * so they win over what a dump said. */
static void run_targeted(struct collector *c)
{
	struct nlconn strict = { .fd = -1 };
	struct dump_ctx x = { .m = c->m, .pr = c->pr, .d = &c->delta, .c = c };
	uint32_t before = c->delta.added + c->delta.removed + c->delta.changed;
	int ret, dirty = c->want_nexthops; /* objects were cleared and re-read */

	if (c->v4) { /* the rest is applied from the events (mirror4.h) */
		if (c->want_main)
			probe_main4(c);
		return;
	}
	want_siblings(c);
	if (!c->noifs && !c->naoifs && !c->nroifs && !c->nprobes && !c->want_prefix &&
	    !c->want_nexthops && !c->want_groups && !c->sil.nq)
		return;
	if (c->noifs || c->naoifs || c->nroifs || c->nprobes || c->want_groups || c->sil.nq) {
		ret = nlconn_open(&strict, NLCONN_STRICT, c->st);
		if (ret) {
			log_warn("targeted dumps: no strict socket: %s", strerror(-ret));
			schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
			goto out;
		}
	}
	if (c->want_nexthops) {
		struct nhmsg nhm = { .nh_family = AF_UNSPEC };

		touch_outside(c);
		mirror_clear_nhobjs(c->m);
		ret = nlconn_dump(&c->dump, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &x);
		if (!ret)
			mirror_prune_nhid_routes(c->m, &c->delta);
		targeted_done(c, TDUMP_NEXTHOP, ret == -EOPNOTSUPP ? 0 : ret);
	}
	for (size_t i = 0; i < c->noifs; i++) {
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, 0, c->oifs[i], &x);
		targeted_done(c, TDUMP_LINK, ret == -ENODEV ? 0 : ret);
	}
	for (size_t i = 0; i < c->naoifs; i++) {
		int dup = 0;

		for (size_t k = 0; k < c->noifs && !dup; k++)
			dup = c->oifs[k] == c->aoifs[i]; /* dumped above already */
		if (dup)
			continue;
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, 0, c->aoifs[i], &x);
		targeted_done(c, TDUMP_ADDR, ret == -ENODEV ? 0 : ret);
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
			targeted_done(c, TDUMP_RA, ret == -ENODEV || ret == -ENOENT ? 0 : ret);
		}
		c->ra_round_ms = snapshot_now_ms() - t0;
	}
	for (size_t i = 0; i < c->nprobes; i++) {
		x.now_ms = snapshot_now_ms();
		ret = dump_filtered(&strict, c->probes[i], 0, &x);
		if (!ret && !mirror_has_table(c->m, c->probes[i])) {
			dirty = 1; /* a new (empty) table: its placeholder row */
			touch_outside(c);
			if (mirror_add_table(c->m, c->probes[i], 1))
				ret = -ENOMEM;
		}
		targeted_done(c, TDUMP_RULE, ret);
	}
	if (c->want_groups) {
		uint32_t *ids = NULL;
		long n = mirror_group_tables(c->m, &ids);

		for (long i = 0; i < n; i++) {
			x.now_ms = snapshot_now_ms();
			ret = dump_filtered(&strict, ids[i], 0, &x);
			targeted_done(c, TDUMP_GROUP, ret);
		}
		free(ids);
	}
	run_silent(c, &strict, &x);
	if (c->want_prefix) {
		struct rtmsg rtm = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
		int cleared;

		mirror_prefix_begin(c->m); /* marks the dump lacks now go (mirror.h) */
		ret = nlconn_dump(&c->dump, RTM_GETROUTE, &rtm, sizeof(rtm), on_prefix, &x);
		cleared = mirror_prefix_end(c->m, ret == 0);
		if (cleared > 0)
			touch_outside(c); /* which keys is not told */
		x.marks += (uint32_t)cleared;
		targeted_done(c, TDUMP_PREFIX, ret);
	}
	/* publish only what the dumps changed: re-reading routes unchanged is no news */
	if (dirty || x.marks || c->delta.added + c->delta.removed + c->delta.changed != before)
		mark_dirty(c);
out:
	nlconn_close(&strict);
	silent_clear(&c->sil);
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
static void ra_refresh(struct collector *c)
{
	uint32_t *pairs = NULL;
	long n = mirror_ra_links(c->m, &pairs);
	int64_t period = (int64_t)c->opts.ra_refresh_s * 1000;

	for (long i = 0; i < n; i++)
		want_ra(c, pairs[2 * i], pairs[2 * i + 1]);
	if (n < 0)
		out_of_memory(c, "queueing a re-read");
	free(pairs);
	if (period < 20 * c->ra_round_ms)
		period = 20 * c->ra_round_ms;
	c->next_ra_ms = snapshot_now_ms() + period;
}

/*
 * What silent.c watches: net.ipv4.nexthop_compat_mode (a change re-reads the tables with
 * routes over nexthop objects: their messages gain or lose the objects' hops) and the
 * expiring routes of the published snapshot.
 */
static void silent_check(struct collector *c)
{
	struct snapshot *s = c->nexpiring ? snapshot_acquire(c->opts.chain) : NULL;

	if (c->v4 && silent_tick(&c->sil, snapshot_now_ms(), mirror_has_nhobjs(c->m), s)) {
		/* the routes over objects gain or lose their hops, which the IPv4 rules do not
		 * follow: a resync, not counted as drift */
		log_info("%snet.ipv4.nexthop_compat_mode is now %d: resyncing the IPv4 routes",
			 FAM(c), c->sil.compat);
		c->m_valid = 0;
		schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms());
	} else if (!c->v4 && silent_tick(&c->sil, snapshot_now_ms(), mirror_has_nhobjs(c->m), s)) {
		uint32_t *ids = NULL;
		long n = mirror_nhid_tables(c->m, &ids);

		log_info("%snet.ipv4.nexthop_compat_mode is now %d: re-reading the routes over "
			 "nexthop objects",
			 FAM(c), c->sil.compat);
		for (long i = 0; i < n; i++)
			if (silent_want(&c->sil, TDUMP_COMPAT, ids[i], 0, 0))
				out_of_memory(c, "queueing a re-read");
		if (n < 0)
			out_of_memory(c, "queueing a re-read");
		free(ids);
	}
	snapshot_release(s);
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
static void retry_resync(struct collector *c, enum collector_trigger why)
{
	int64_t now = snapshot_now_ms();

	if (why == TRIGGER_RESYNC) {
		c->overflow_deadline_ms = now + c->resync_backoff_ms;
		schedule_resync(c, why, now + OVERFLOW_QUIET_MS);
	} else {
		schedule_resync(c, why, now + c->resync_backoff_ms);
	}
}

static void postpone(struct collector *c, enum collector_trigger why, int64_t dump_ms)
{
	stats_inc(c->st->resyncs_postponed);
	log_debug("%sresync (%s) postponed: the tables are changing", FAM(c),
		  stats_trigger_name(why));
	c->resync_backoff_ms =
	    c->resync_backoff_ms ? c->resync_backoff_ms * 2 : RESYNC_RETRY_MIN_MS;
	if (c->resync_backoff_ms < 4 * dump_ms)
		c->resync_backoff_ms = 4 * dump_ms;
	if (c->resync_backoff_ms > RESYNC_RETRY_MAX_MS)
		c->resync_backoff_ms = RESYNC_RETRY_MAX_MS;
	retry_resync(c, why);
}

static int publish(struct collector *c, enum collector_trigger why);

/*
 * The first full dump (start-up, --once), into the mirror: trusted when no notification
 * arrived while it ran. Returns 0 (c->m is the dump; *trusted says whether to trust it), or a
 * negative errno. An untrusted dump is taken only when take_untrusted, else it is dropped
 * with -EAGAIN.
 */
static int startup_dump(struct collector *c, int take_untrusted, enum collector_trigger why)
{
	struct mirror *d = NULL;
	struct mirror4 *d4 = NULL;
	int64_t end = snapshot_now_ms() + RESYNC_DRAIN_MS;
	int trusted, ret, notrust = 0;

	/* what happened before is in the dump: read and dropped (there is no mirror yet) */
	while (snapshot_now_ms() < end) {
		ssize_t len = nlconn_recv(&c->notify, MSG_DONTWAIT);

		if (len == -EAGAIN || len == -EWOULDBLOCK ||
		    (len < 0 && len != -ENOBUFS && len != -EMSGSIZE))
			break;
	}
	if (c->v4) {
		int intr = 0;

		ret = full4_dump(&c->dump, 0, NULL, &intr, &d4);
		notrust = intr;
	} else {
		ret = full_dump(&c->dump, c->pr, NULL, 0, 0, NULL, &d);
	}
	segment_reclaim_soon(); /* the dump's buffers */
	stats_inc(c->st->full_dumps[why]);
	if (ret) {
		stats_set(c->st->last_error, ret);
		log_warn("%sfull dump (%s) failed: %s", FAM(c), stats_trigger_name(why),
			 strerror(-ret));
		if (ret == -ENOMEM)
			stats_inc(c->st->errors[CERR_NOMEM]);
		nlconn_close(&c->dump);
		if (nlconn_open(&c->dump, NLCONN_DUMP, c->st))
			stats_inc(c->st->errors[CERR_SOCKET]);
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	}
	trusted = !notify_pending(c) && !notrust;
	if (!trusted && !take_untrusted) {
		mirror_free(d);
		mirror4_free(d4);
		return -EAGAIN;
	}
	c->m4 = d4;
	c->m = d4 ? mirror4_mirror(d4) : d;
	c->m_valid = trusted;
	mark_dirty(c);
	if (trusted) {
		stats_set(c->st->last_ok_mono_ms, snapshot_now_ms());
	} else {
		/* adopted because we had nothing better; check again when it is quieter */
		stats_inc(c->st->resyncs_postponed);
		c->resync_backoff_ms = RESYNC_RETRY_MIN_MS;
		retry_resync(c, why);
	}
	drain(c, DRAIN_BUDGET_MS); /* what changed during the dump; the rest in the main loop */
	return 0;
}

/*
 * A resync beside the notifications. Its full dump runs on a thread of its own (resync_dump(),
 * own sockets, into a mirror of its own) while the collector thread goes on applying
 * notifications and publishing; the collector then merges the dump into the mirror in steps
 * of about ADOPT_STEP_US between its reads and publications (resync_step()). From the dump's
 * start to the merge's end the collector records the keys it changed (c->touched): the
 * mirror's routes of those keys are newer than the dump's, and the merge leaves them be. A
 * dump during which no notification arrived is trusted: it says exactly what the kernel has.
 * Otherwise it may have skipped routes where it resumed after a change (mirror_load_gap()),
 * so the mirror's routes it lacks there stay. A change outside the routes (a link, nexthop
 * object, rule or new table) while the dump or the merge runs stops it: the dump may predate
 * it (a deleted link's routes go without a message), and it is retried later.
 */
static void *resync_dump(void *arg)
{
	struct rjob *j = arg;
	struct nlconn conn = { .fd = -1 };
	struct nlparse_route *pr = malloc(sizeof(*pr));
	uint64_t one = 1;
	int ret;

	/* the collector thread, not the dump, decides how fast changes are published */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), RESYNC_NICE) < 0) {
		/* the packaged unit's SystemCallFilter (~@resources) refuses it: documented */
		if (errno == EPERM || errno == EACCES)
			log_debug("resync: nice %d refused by a sandbox; the dump keeps the "
				  "daemon's",
				  RESYNC_NICE);
		else
			log_warn("resync: cannot set nice %d: %s", RESYNC_NICE, strerror(errno));
	}
	ret = pr ? 0 : -ENOMEM;
	/* a thread of its own: it enters the collector's namespace for good */
	if (!ret && j->nsfd >= 0 && setns(j->nsfd, CLONE_NEWNET) < 0)
		ret = -errno;
	if (!ret)
		ret = nlconn_open(&conn, NLCONN_DUMP, j->st);
	conn.pace = 1; /* under churn the kernel's walks take turns with the route writers */
	if (!ret && j->v4)
		ret = full4_dump(&conn, 1, &j->abort, &j->intr, &j->d4);
	else if (!ret)
		ret = full_dump(&conn, pr, j->ids, (size_t)(j->nids > 0 ? j->nids : 0), 1,
				&j->abort, &j->d);
	nlconn_close(&conn);
	free(pr);
	j->ret = ret;
	j->t1 = snapshot_now_ms();
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	if (write(j->evfd, &one, sizeof(one)) < 0) {
		/* eventfd full: a wakeup is pending anyway */
	}
	return NULL;
}

/* Stop recording what changed (the resync is over). */
static void tracking_end(struct collector *c)
{
	stats_set(c->st->resync_phase, 0);
	c->tracking = 0;
	c->outside = 0;
	c->notes_since = 0;
	touch_free(&c->touched);
}

/* Wait for the dump thread and free its job; returns its mirror (NULL if none) in *d, and an
 * IPv4 dump's in *d4. */
static void job_join(struct collector *c, struct mirror **d, struct mirror4 **d4)
{
	struct rjob *j = c->job;

	if (!j)
		return;
	pthread_join(j->th, NULL);
	if (d) {
		*d = j->d;
		*d4 = j->d4;
	} else {
		mirror_free(j->d);
		mirror4_free(j->d4);
	}
	free(j->ids);
	free(j);
	c->job = NULL;
}

/* Give up a running resync: its dump (the thread stops soon) and its merge (the mirror keeps
 * what was merged so far, all of it true as of the dump or newer). */
static void resync_cancel(struct collector *c)
{
	if (c->job)
		__atomic_store_n(&c->job->abort, 1, __ATOMIC_RELAXED);
	if (c->adopting) {
		mirror_adopt_end(c->adopting);
		c->adopting = NULL;
		segment_reclaim_soon();
	}
	tracking_end(c);
}

/* Start resync why: its dump thread. 0, -EBUSY (one runs: try again when it is over), or a
 * negative errno (rescheduled). */
static int resync_begin(struct collector *c, enum collector_trigger why)
{
	struct rjob *j;
	int ret;

	if (c->job || c->adopting)
		return -EBUSY;
	if (c->overrun) {
		/* the full buffer back before what the watch socket holds is read out (it is
		 * older than the dump, and a message dropped now would be an overrun after it) */
		if (c->notify.fd < 0 && nlconn_open(&c->notify, notify_mode(c), c->st)) {
			stats_inc(c->st->errors[CERR_SOCKET]);
			schedule_resync(c, TRIGGER_RESYNC, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
			return -EIO;
		}
		if (nlconn_set_rcvbuf(&c->notify, 0))
			stats_inc(c->st->errors[CERR_SOCKET]);
		c->watching = 0;
		drain(c, RESYNC_DRAIN_MS); /* counted, not applied: older than the dump */
	}
	if (!c->v4 && c->m_valid && c->notify_max_len > WIDE_NOTIFICATION &&
	    mirror_has_oversized(c->m)) {
		/* the dump would stop at that route, silently: it cannot check the mirror */
		stats_inc(c->st->resyncs_postponed);
		log_warn(
		    "resync (%s) skipped: a multipath route is too large for the kernel to dump "
		    "(a dump stops there without an error); following notifications only",
		    stats_trigger_name(why));
		return -EAGAIN;
	}
	j = calloc(1, sizeof(*j));
	if (!j || (j->nids = mirror_table_ids(c->m, &j->ids)) < 0) {
		free(j);
		out_of_memory(c, "starting a resync");
		return -ENOMEM;
	}
	j->why = why;
	j->v4 = c->v4;
	j->evfd = c->evfd;
	j->nsfd = c->nsfd;
	j->st = c->st;
	j->t0 = snapshot_now_ms();
	c->overrun = 0; /* what arrives from now on is news to the dump */
	tracking_end(c);
	c->tracking = 1;
	c->was_valid = c->m_valid;
	{
		/* the dump needs little stack: not the default 8 MiB of address space, which a
		 * process near its limit (RLIMIT_AS) may not have */
		pthread_attr_t attr;

		ret = pthread_attr_init(&attr);
		if (!ret) {
			if (pthread_attr_setstacksize(&attr, RESYNC_STACK))
				log_debug("resync: default stack size for its dump");
			ret = pthread_create(&j->th, &attr, resync_dump, j);
			pthread_attr_destroy(&attr);
		}
	}
	if (ret) {
		free(j->ids);
		free(j);
		tracking_end(c);
		log_warn("resync (%s): no thread for its dump: %s", stats_trigger_name(why),
			 strerror(ret));
		schedule_resync(c, why, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
		return -ret;
	}
	c->job = j;
	stats_set(c->st->resync_phase, 1);
	log_debug("%sresync (%s): dump started", FAM(c), stats_trigger_name(why));
	return 0;
}

/* The dump thread is done: take its dump and start merging it (or give it up). */
static void resync_collect(struct collector *c)
{
	struct rjob *j = c->job;
	enum collector_trigger why = j->why;
	int ret = j->ret, aborted = __atomic_load_n(&j->abort, __ATOMIC_RELAXED), trusted;
	int intr = j->intr;
	int64_t dump_ms = j->t1 - j->t0;
	struct mirror *d = NULL;
	struct mirror4 *d4 = NULL;
	struct mirror_adopt_rules rules;

	job_join(c, &d, &d4);
	if (aborted) {
		mirror_free(d); /* an overflow: its own resync follows */
		mirror4_free(d4);
		return;
	}
	/* what changed until now is applied (and recorded) before the merge starts */
	drain(c, DRAIN_BUDGET_MS);
	if (!c->tracking) { /* the socket overflowed meanwhile */
		mirror_free(d);
		mirror4_free(d4);
		return;
	}
	stats_inc(c->st->full_dumps[why]);
	if (ret) {
		stats_set(c->st->last_error, ret);
		log_warn("%sfull dump (%s) failed: %s; keeping the previous snapshot", FAM(c),
			 stats_trigger_name(why), strerror(-ret));
		mirror_free(d);
		mirror4_free(d4);
		tracking_end(c);
		if (ret == -ENOMEM)
			out_of_memory(c, "a resync's dump");
		else
			schedule_resync(c, why, snapshot_now_ms() + RESYNC_RETRY_MIN_MS);
		return;
	}
	trusted = !c->notes_since && !notify_pending(c) && !intr;
	if (c->outside) {
		/* a link, nexthop object or table changed while it ran: it may predate that */
		mirror_free(d);
		mirror4_free(d4);
		tracking_end(c);
		postpone(c, why, dump_ms);
		return;
	}
	if (c->v4) {
		/* the rules' state (links, addresses, objects) as the dump saw it, which nothing
		 * changed since (else outside); its routes are merged as IPv6's are */
		d = mirror4_take_state(c->m4, d4);
	} else if (c->notify_max_len > WIDE_NOTIFICATION) {
		long kept = mirror_keep_oversized(c->m, d);

		if (kept > 0)
			log_info(
			    "resync (%s): kept %ld multipath route(s) too large for any dump "
			    "(the kernel announced them, and lists them in /proc/net/ipv6_route)",
			    stats_trigger_name(why), kept);
	}
	if (!c->v4) {
		/* routes between multipath siblings, which no dump shows (mirror.h) */
		long kept = mirror_keep_hidden(c->m, d);

		if (kept > 0)
			log_debug("resync (%s): kept %ld route(s) between multipath siblings",
				  stats_trigger_name(why), kept);
	}
	if (!mirror_same_outside_routes(c->m, d))
		mark_dirty(c); /* links, nexthop objects or tables differ: shown at once */
	rules = (struct mirror_adopt_rules){ .touched = touch_has,
					     .arg = &c->touched,
					     .untrusted = !trusted,
					     .max_log = c->was_valid ? 10 : 0 };
	ret = mirror_adopt_begin(c->m, d, &rules, &c->adopting);
	if (ret) {
		mirror_adopt_end(c->adopting);
		c->adopting = NULL;
		tracking_end(c);
		log_warn("resync (%s): adopting the dump failed: %s", stats_trigger_name(why),
			 strerror(-ret));
		out_of_memory(c, "merging a resync's dump");
		return;
	}
	c->adopt_why = why;
	c->adopt_dump_ms = dump_ms;
	stats_set(c->st->resync_phase, 2);
	if (!c->step_routes)
		c->step_routes = 4096;
	log_debug("%sresync (%s): dump of %zu routes in %lld ms (%s), merging", FAM(c),
		  stats_trigger_name(why), mirror_routes(d), (long long)dump_ms,
		  trusted ? "trusted" : "changes meanwhile");
}

/* One step of the merge, about ADOPT_STEP_US long; at its end, what the resync found. */
static void resync_step(struct collector *c)
{
	struct mirror_adopt_count n;
	struct timespec t0, t1;
	enum collector_trigger why = c->adopt_why;
	uint32_t before = c->delta.added + c->delta.removed + c->delta.changed;
	int64_t us;
	int ret, settled;

	if (c->outside) {
		/* a link, nexthop object or table changed: the rest of the dump may predate it.
		 * What was merged stays (it was true then, and what changed since is applied) */
		resync_cancel(c);
		postpone(c, why, c->adopt_dump_ms);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = mirror_adopt_step(c->adopting, c->step_routes, &c->delta);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
	if (us < ADOPT_STEP_US / 2 && c->step_routes < ADOPT_STEP_MAX)
		c->step_routes *= 2;
	else if (us > 2 * ADOPT_STEP_US && c->step_routes > ADOPT_STEP_MIN)
		c->step_routes /= 2;
	if (c->delta.added + c->delta.removed + c->delta.changed != before)
		mark_dirty(c);
	if (ret == 1)
		return;
	mirror_adopt_counts(c->adopting, &n);
	mirror_adopt_end(c->adopting);
	c->adopting = NULL;
	segment_reclaim_soon(); /* the dump's mirror */
	tracking_end(c);
	if (ret) {
		log_warn("resync (%s): adopting the dump failed: %s", stats_trigger_name(why),
			 strerror(-ret));
		out_of_memory(c, "merging a resync's dump");
		return;
	}
	if (c->was_valid && n.only_m + n.only_k) {
		stats_add(c->st->resync_drift_routes, n.only_m + n.only_k);
		log_warn("%sresync (%s): the mirror differed from the kernel in %u routes "
			 "(%u only in the mirror, %u only in the kernel); adopted the dump",
			 FAM(c), stats_trigger_name(why), n.only_m + n.only_k, n.only_m, n.only_k);
	}
	/* a mirror that missed notifications is right again where the dump settled it: not
	 * where the mirror's routes were kept (at the dump's gaps, or changed meanwhile on top
	 * of what may have been stale) */
	settled = c->was_valid || (!n.kept_gap && !n.kept_touched);
	log_debug("%sresync (%s): merged; kept %u changed and %u unseen runs of the mirror", FAM(c),
		  stats_trigger_name(why), n.kept_touched, n.kept_gap);
	if (why == TRIGGER_SIGNAL)
		mark_dirty(c); /* an operator's SIGHUP always gets a new generation */
	if (c->dirty)
		c->pub_why = why;
	if (settled) {
		c->m_valid = 1;
		c->resync_backoff_ms = 0;
		stats_set(c->st->last_ok_mono_ms, snapshot_now_ms());
		if (!c->dirty)
			stats_set(c->st->last_error, 0);
	} else {
		postpone(c, why, c->adopt_dump_ms);
	}
}

/* ---- publication ---- */

/* The collector thread's CPU time in microseconds. */
static int64_t thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int publish(struct collector *c, enum collector_trigger why)
{
	struct snapshot *s = NULL, *prev;
	struct timespec t0, t1;
	int64_t now, cpu0 = thread_cpu_us();
	int ret;

	stats_set(c->st->last_attempt_mono_ms, snapshot_now_ms());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (c->fail_after >= 0 && c->ok_count >= c->fail_after)
		ret = -EIO; /* injected by RTSNAP_TEST_FAIL_AFTER */
	else if (c->nomem_inject > 0 && c->ok_count >= 1 && c->nomem_inject--)
		ret = -ENOMEM; /* injected by RTSNAP_TEST_NOMEM */
	else
		ret = builder_compose(c->b, c->m, c->opts.chain, &s);
	prev = ret ? NULL : snapshot_acquire(c->opts.chain); /* the one s replaces */
	if (!ret && c->watch.netns) {
		/* the watched routes against s, before it is published (their cost is the
		 * build's): those a route that differs from prev can answer; without memory
		 * for them s is published without answers */
		struct timespec rt;
		int wret;

		clock_gettime(CLOCK_REALTIME, &rt);
		wret = watch_eval(&c->watch, s, prev,
				  (int64_t)rt.tv_sec * 1000 + rt.tv_nsec / 1000000);
		if (wret)
			log_warn("%swatched routes not evaluated: %s", FAM(c), strerror(-wret));
	}
	if (ret) {
		stats_set(c->st->last_error, ret);
		log_warn("%spublication (%s) failed: %s; keeping the previous snapshot", FAM(c),
			 stats_trigger_name(why), strerror(-ret));
		c->fail_until_ms = snapshot_now_ms() + 1000;
		/* a build that ran out of memory may have left the mirror half changed */
		if (ret == -ENOMEM)
			out_of_memory(c, "building a snapshot");
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snapshot_set_taken(s, (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000,
			   (double)(t1.tv_sec - t0.tv_sec) +
			       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			   (uint32_t)why);
	snapshot_publish(s); /* immutable from here on; prev (above) is the one it replaces */
	now = snapshot_now_ms();
	c->ok_count++;
	stats_observe_duration(c->st, snapshot_duration_s(s));
	stats_observe_latency(c->st, (double)(now - c->dirty_since_ms) / 1000.0);
	stats_set(c->st->last_added, c->delta.added + c->delta.changed);
	stats_set(c->st->last_removed, c->delta.removed + c->delta.changed);
	stats_set(c->st->last_error, 0);
	stats_set(c->st->last_ok_mono_ms, now);
	stats_inc(c->st->collections[why]);
	stats_inc(c->st->publications);
	if (c->adopting)
		stats_inc(c->st->adopt_steps); /* a resync's merge shown so far */
	stats_add(c->st->segments_built, snapshot_segs_built(s));
	stats_set(c->st->segments, snapshot_nsegs(s));
	stats_set(c->st->segments_shared, snapshot_nsegs(s) - snapshot_segs_built(s));
	stats_set(c->st->mirror_routes, mirror_routes(c->m));
	stats_set(c->st->mirror_bytes, mirror_bytes(c->m));
	c->nexpiring = snapshot_nexpiring(s);
	log_debug("%spublished generation %llu: %zu records in %zu tables, %zu of %zu segments "
		  "built, in %.3f s (%s)",
		  FAM(c), (unsigned long long)snapshot_generation(s), snapshot_nroutes(s),
		  snapshot_ntables(s), snapshot_segs_built(s), snapshot_nsegs(s),
		  snapshot_duration_s(s), stats_trigger_name(why));
	/* s stays valid here: only this thread can retire it, at the next publish */
	c->dirty = 0;
	memset(&c->delta, 0, sizeof(c->delta));
	if (c->retake && !reserve_take())
		c->retake = 0; /* the reserve back, once the memory is (see recover()) */
	procfile_notify();     /* the --proc-file writer, if any, picks the new snapshot up */
	events_record(c->opts.history, prev, s); /* /events: the diff of prev and s (events.h) */
	snapshot_release(prev);
	/*
	 * Pacing. A change that finds the collector idle is published at once (publish_at()).
	 * Under sustained churn the next publication waits thirty-nine times the fixed part of
	 * a publication's cost (walking the groups, the swap and its grace period, the change
	 * stream's walk), so that part takes at most a fortieth of a core. The part in
	 * proportion to the segments built is paid whether changes come one by one or
	 * together, so waiting longer does not save it: pacing on the whole cost stretched the
	 * wait whenever segments cost more (a full dump beside the collector thrashing the
	 * caches: 4 ms became 20-30 ms) and after any one costly publication. The fixed part is
	 * fitted over the recent publications (costfit.h). The wait is never longer than the
	 * latency bound (--debounce-ms), never shorter than the cost itself (publishing never
	 * takes more than half of the collector's time), nor than PUBLISH_MIN_WAIT_US: at a few
	 * tens of microseconds a publication (1 000 000 routes, groups of segments) the factor
	 * alone published 430 times a second at 1 000 changes/s, and what a publication costs
	 * beside its build (waking, the grace period's barriers) made that 4 % of a core.
	 */
	{
		/* the cost is the CPU the collector spent (a busy machine that preempts it must not
		 * stretch the wait to the bound) */
		int64_t end = now_us(), cost_us = thread_cpu_us() - cpu0, wait_us;

		costfit_add(&c->pace, (double)snapshot_segs_built(s), (double)cost_us);
		wait_us = (int64_t)(PUBLISH_WAIT_FACTOR * costfit_fixed(&c->pace));
		if (wait_us < PUBLISH_MIN_WAIT_US)
			wait_us = PUBLISH_MIN_WAIT_US;
		if (wait_us > (int64_t)c->opts.debounce_ms * 1000)
			wait_us = (int64_t)c->opts.debounce_ms * 1000;
		if (wait_us < cost_us)
			wait_us = cost_us;
		c->next_pub_us = end + wait_us;
	}
	return 0;
}

/* ---- recovery from running out of memory ---- */

/*
 * An allocation failed on the collector's side (applying a change, a targeted or full dump, a
 * merge, a build). The mirror may then no longer match the kernel, or be half changed, and
 * everything built on it would be wrong: the collector stops following, drops the mirror and,
 * after a growing wait, dumps the kernel's tables into a fresh one (recover()). Until a
 * snapshot of it is published the previous one is served, stale, and the memory fault is set.
 */
static void out_of_memory(struct collector *c, const char *what)
{
	stats_inc(c->st->errors[CERR_NOMEM]);
	stats_set(c->st->last_error, -ENOMEM);
	c->nomem_seen++;
	fault_set(stats_fault(c->st, FAULT_MEMORY), -ENOMEM,
		  "out of memory %s; serving the previous snapshot until a fresh dump succeeds",
		  what);
	c->m_valid = 0;
	if (c->recovering)
		return;
	log_warn("%sout of memory %s: serving the previous snapshot; dropping the mirror and "
		 "dumping the tables again as soon as memory allows",
		 FAM(c), what);
	c->recovering = 1;
	reserve_give_back(); /* room for the memory the fresh dump needs (reserve.h) */
	c->recover_backoff_ms = RECOVER_MIN_MS;
	c->recover_at = snapshot_now_ms() + RECOVER_MIN_MS;
}

/* Drop the mirror and what depended on it (only the previous snapshot stays); the
 * notification socket too: what it holds is older than the fresh dump to come. */
static void recover_drop(struct collector *c)
{
	resync_cancel(c);
	if (c->job) {
		__atomic_store_n(&c->job->abort, 1, __ATOMIC_RELAXED);
		job_join(c, NULL, NULL);
	}
	nlconn_close(&c->notify);
	if (c->m4)
		mirror4_free(c->m4); /* and its mirror, c->m */
	else
		mirror_free(c->m);
	c->m4 = NULL;
	c->m = NULL;
	c->want_main = 0;
	c->dirty = 0;
	memset(&c->delta, 0, sizeof(c->delta));
	c->noifs = c->naoifs = c->nroifs = c->nprobes = 0;
	c->want_prefix = c->want_nexthops = c->want_groups = 0;
	c->overrun = c->watching = 0;
	c->resync_why = TRIGGER__COUNT;
	c->resync_backoff_ms = 0;
	segment_reclaim_soon();
}

/* Try the fresh dump and publish it. 0 once a snapshot of it is published. */
static int recover(struct collector *c)
{
	uint64_t nomem = c->nomem_seen;
	int ret;

	if (c->m)
		recover_drop(c);
	segment_reclaim();
	ret = c->notify.fd < 0 ? nlconn_open(&c->notify, notify_mode(c), c->st) : 0;
	if (ret) {
		stats_inc(c->st->errors[CERR_SOCKET]);
	} else {
		ret = startup_dump(
		    c, 1, TRIGGER_RESYNC); /* an untrusted one is served, and resynced later */
		if (!ret)
			ret = publish(c, TRIGGER_RESYNC);
	}
	if (!ret && c->nomem_seen == nomem) {
		c->recovering = 0;
		c->pub_why = TRIGGER_CHANGE;
		fault_clear(stats_fault(c->st, FAULT_MEMORY));
		c->retake = reserve_take() != 0; /* else after a later publication */
		log_info("%srecovered from running out of memory: %zu routes dumped and published",
			 FAM(c), mirror_routes(c->m));
		return 0;
	}
	/* the fault stays, and so does the mirror (if any) until the next try drops it */
	c->recover_at = snapshot_now_ms() + c->recover_backoff_ms;
	c->recover_backoff_ms *= 2;
	if (c->recover_backoff_ms > RECOVER_MAX_MS)
		c->recover_backoff_ms = RECOVER_MAX_MS;
	log_debug("recovery from running out of memory failed (%s); next try in %lld ms",
		  ret ? strerror(-ret) : "out of memory",
		  (long long)(c->recover_at - snapshot_now_ms()));
	return ret ? ret : -ENOMEM;
}

/* ---- the thread ---- */

/*
 * When the pending changes are published (microseconds): at once when the collector was idle
 * (the previous publication's pacing is over), else when it is (what arrives meanwhile joins
 * the publication: under sustained churn changes are batched, for at most --debounce-ms);
 * not within a second of a failure.
 */
static int64_t publish_at(const struct collector *c)
{
	int64_t t = c->dirty_since_us;

	if (t < c->next_pub_us)
		t = c->next_pub_us;
	if (t < c->fail_until_ms * 1000)
		t = c->fail_until_ms * 1000;
	return t;
}

/*
 * Until when the notification socket may be left unread (0: not at all). With changes pending,
 * until their publication; without, until the pacing of the last one is over: a change that
 * arrives meanwhile would wait for that anyway (publish_at()), so reading it as it comes
 * would only cost a wake-up (and two epoll_ctl()s) per publication under churn.
 */
static int64_t hold_until(const struct collector *c)
{
	return c->dirty ? publish_at(c) : c->next_pub_us;
}

/*
 * The loop's half of a pass (cloop.h): what this collector waits for, and until when. The
 * evfd (a resync asked for, a resync's dump done) always; the notification socket unless
 * what arrives is left to gather until the publication due soon (hold). Opens nothing.
 */
static int64_t coll_prepare(void *arg, struct pollfd pfd[2], uint64_t id[2])
{
	struct collector *c = arg;
	int64_t now = snapshot_now_ms(), wake = INT64_MAX, nus = now_us(), wake_us, retire_at;

	pfd[0] = (struct pollfd){ .fd = c->evfd, .events = POLLIN };
	id[0] = 1; /* the eventfd lives as long as the collector */
	id[1] = c->notify.serial;
	c->hold = 0;
	/* replaced snapshots to free (their shared grace period) */
	retire_at = c->opts.chain ? snapshot_chain_retire_at(c->opts.chain) : INT64_MAX;
	if (c->recovering) {
		wake = retire_at;
		/* out of memory: nothing but the fresh dump, when it is due (the mirror is
		 * dropped at once, so that the memory it held is free meanwhile) */
		if (c->m || now >= c->recover_at)
			return nus;
		return (wake < c->recover_at ? wake : c->recover_at) * 1000;
	}
	pfd[1] = (struct pollfd){ .fd = c->notify.fd, .events = POLLIN };
	if (c->watching && c->notify.fd < 0 && c->watch_at < wake)
		wake = c->watch_at; /* the watch socket is opened in the step */
	if (c->next_interval_ms && c->next_interval_ms < wake)
		wake = c->next_interval_ms;
	if (c->resync_why != TRIGGER__COUNT && c->resync_at < wake && !c->job && !c->adopting)
		wake = c->resync_at; /* else when the one running is over */
	if (c->next_ra_ms && c->next_ra_ms < wake)
		wake = c->next_ra_ms;
	if (silent_next_ms(&c->sil, mirror_has_nhobjs(c->m), c->nexpiring) < wake)
		wake = silent_next_ms(&c->sil, mirror_has_nhobjs(c->m), c->nexpiring);
	if (segment_reclaim_pending() && wake > now + 1100)
		wake = now + 1100; /* freed segment memory to give back once idle */
	if (c->adopting || (c->job && __atomic_load_n(&c->job->done, __ATOMIC_ACQUIRE)))
		wake = now; /* a resync's merge goes on between reads and publications */
	/* the deadlines above are in ms; a publication's in microseconds */
	wake_us = wake == INT64_MAX ? INT64_MAX : wake * 1000;
	if (c->dirty && publish_at(c) < wake_us)
		wake_us = publish_at(c);
	/* a publication is due soon, or the last one's pacing is not over (under churn): let
	 * what arrives meanwhile gather in the socket and read it all then, rather than waking
	 * for every message, if the buffer can hold that long */
	c->hold = hold_until(c) > nus && hold_until(c) - nus <= HOLD_MAX_MS * 1000 &&
		  c->notify.rcvbuf >= HOLD_RCVBUF_MIN;
	if (c->hold && hold_until(c) < wake_us)
		wake_us = hold_until(c);
	/* a merge applies notifications as they come: the sooner one is read, the sooner
	 * the merge knows not to undo it */
	if (c->adopting)
		c->hold = 0;
	/* the grace period of the snapshots replaced meanwhile: at the hold's end (at most
	 * HOLD_MAX_MS later), where the step retires them before it publishes, rather than in
	 * a wake-up of its own between two publications */
	if (!c->hold && retire_at != INT64_MAX && retire_at * 1000 < wake_us)
		wake_us = retire_at * 1000;
	if (c->hold)
		pfd[1].fd = -1;
	else if (nlconn_buffered(&c->notify))
		wake_us = nus; /* received, not yet read: the socket won't say */
	return wake_us;
}

/* The loop's other half: what arrived or fell due (runs in the collector's namespace). */
static void coll_step(void *arg, struct pollfd pfd[2])
{
	struct collector *c = arg;
	int64_t now = snapshot_now_ms();
	int empty = 1;

	if (pfd[0].revents & POLLIN) {
		uint64_t v;

		if (read(c->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_debug("eventfd read: %s", strerror(errno));
	}
	if (c->opts.chain && now >= snapshot_chain_retire_at(c->opts.chain))
		snapshot_chain_retire(c->opts.chain);
	if (c->recovering) {
		if (c->m)
			recover_drop(c);
		if (now >= c->recover_at)
			recover(c);
		return;
	}
	segment_reclaim();
	if (c->watching && c->notify.fd < 0) {
		if (now >= c->watch_at)
			watch_open(c); /* polled from the next pass on */
		pfd[1].revents = 0;
	}
	if (c->hold)
		pfd[1].revents = now_us() >= hold_until(c) ? POLLIN : 0;
	else if (nlconn_buffered(&c->notify))
		pfd[1].revents |= POLLIN;
	/* an overflow (POLLERR) is read as one */
	if (pfd[1].revents == POLLIN && storm_check(c))
		on_overflow(c, 1);
	else if (pfd[1].revents & (POLLIN | POLLERR))
		empty = drain(c, DRAIN_BUDGET_MS);
	else if (c->hold)
		empty = 0; /* not read: a targeted dump would be newer than what waits */
	if (c->recovering)
		return; /* out of memory: a fresh dump, next pass */
	if (c->next_ra_ms && snapshot_now_ms() >= c->next_ra_ms)
		ra_refresh(c);
	if (snapshot_now_ms() >= silent_next_ms(&c->sil, mirror_has_nhobjs(c->m), c->nexpiring))
		silent_check(c);
	if (empty)
		run_targeted(c);
	now = snapshot_now_ms();
	if (__atomic_exchange_n(&c->resync, 0, __ATOMIC_ACQ_REL))
		schedule_resync(c, TRIGGER_SIGNAL, now);
	if (c->next_interval_ms && now >= c->next_interval_ms) {
		schedule_resync(c, TRIGGER_INTERVAL, now);
		c->next_interval_ms = now + (int64_t)c->opts.interval_s * 1000;
	}
	if (c->job && __atomic_load_n(&c->job->done, __ATOMIC_ACQUIRE))
		resync_collect(c);
	if (c->resync_why != TRIGGER__COUNT && now >= c->resync_at && !c->job && !c->adopting) {
		enum collector_trigger why = c->resync_why;

		c->resync_why = TRIGGER__COUNT;
		resync_begin(c, why);
	}
	if (c->adopting)
		resync_step(c);
	if (c->recovering)
		return;
	/* another watch list (SIGHUP): a publication evaluates it (watch.h) */
	if (c->watch.netns && watch_state_stale(&c->watch))
		mark_dirty(c);
	if (c->dirty && now_us() >= publish_at(c)) {
		if (publish(c, c->pub_why) == 0)
			c->pub_why = TRIGGER_CHANGE;
	}
}

/* Open the sockets (notifications first, so nothing is lost between the dump and them) of a
 * collector of family (AF_INET: IPv4; else IPv6). */
static int coll_open(struct collector *c, struct collector_stats *st, int family)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->st = st;
	c->v4 = family == AF_INET;
	c->dump.fd = c->notify.fd = c->evfd = c->nsfd = -1;
	strcpy(c->tag, c->v4 ? "IPv4: " : "");
	c->fail_after = -1;
	c->resync_why = TRIGGER__COUNT;
	c->pub_why = TRIGGER_CHANGE;
	silent_init(&c->sil, EXPIRING_CHECK_MS);
	c->pr = malloc(sizeof(*c->pr)); /* about 400 KiB: not on the stack */
	if (!c->pr)
		return -ENOMEM;
	if (c->v4) {
		c->nh4 = malloc(sizeof(*c->nh4));
		if (!c->nh4)
			return -ENOMEM;
	}
	ret = builder_new(NULL, &c->b);
	if (!ret)
		ret = nlconn_open(&c->notify, notify_mode(c), c->st);
	if (!ret)
		ret = nlconn_open(&c->dump, NLCONN_DUMP, c->st);
	return ret;
}

static void coll_close(struct collector *c)
{
	resync_cancel(c);
	job_join(c, NULL, NULL);
	nlconn_close(&c->dump);
	nlconn_close(&c->notify);
	if (c->m4)
		mirror4_free(c->m4); /* and its mirror, c->m */
	else
		mirror_free(c->m);
	builder_free(c->b);
	free(c->pr);
	free(c->nh4);
	free(c->oifs);
	free(c->aoifs);
	free(c->roifs);
	free(c->probes);
	silent_free(&c->sil);
	if (c->nsfd >= 0)
		close(c->nsfd);
	free(c->netns);
	watch_state_free(&c->watch);
	memset(c, 0, sizeof(*c));
	c->dump.fd = c->notify.fd = c->sil.compat_fd = c->nsfd = -1;
}

/* The first full dump: tried until one is trusted, then the last one is taken anyway. */
static int first_dump(struct collector *c)
{
	int ret = -EAGAIN;

	for (int i = 0; i < STARTUP_TRIES; i++) {
		ret = startup_dump(
		    c, 0, TRIGGER_STARTUP); /* an untrusted dump is refused, and retried here */
		if (ret != -EAGAIN)
			break;
		{
			struct timespec pause = { 0, 5000000L * (i + 1) }; /* let a burst pass */

			nanosleep(&pause, NULL);
		}
	}
	if (ret == -EAGAIN) {
		/* the kernel never held still: serve what the last dump saw and check later */
		log_info("%sthe tables kept changing during every dump; starting from an "
			 "untrusted dump and resyncing when it is quieter",
			 FAM(c));
		ret = startup_dump(c, 1, TRIGGER_STARTUP);
	}
	return ret;
}

int collector_collect_once(struct snapshot **out)
{
	struct snapshot_chain *chain = NULL;
	struct collector_stats st = { 0 }; /* counted, and forgotten */
	struct collector c;
	int ret = coll_open(&c, &st, AF_INET6);

	if (!ret)
		ret = snapshot_chain_new(&chain);
	if (!ret)
		ret = first_dump(&c);
	if (!ret)
		ret = builder_compose(c.b, c.m, chain, out);
	if (!ret) {
		snapshot_set_taken(*out, snapshot_now_ms(), 0, 0);
	}
	coll_close(&c);
	snapshot_chain_free(chain); /* lives on with *out */
	return ret;
}

int collector_start(const struct collector_opts *o, struct collector **out)
{
	struct collector *c = malloc(sizeof(*c));
	int nsfd = -1, saved = -1, ret = 0;

	if (!c)
		return -ENOMEM;
	/* the sockets, the compat sysctl and the first dump are taken inside the namespace
	 * (everything opened there stays there); the loop enters it for each step */
	if (o->netns) {
		ret = netns_open(NULL, o->netns, &nsfd);
		if (!ret)
			ret = netns_enter_fd(nsfd, &saved);
		if (ret) {
			if (nsfd >= 0)
				close(nsfd);
			free(c);
			return ret;
		}
	}
	ret = coll_open(c, o->stats, o->family); /* zeroes it first */
	if (!ret)
		ret = watch_state_init(&c->watch, o->family == AF_INET ? AF_INET : AF_INET6,
				       o->netns);
	c->opts = *o;
	c->nsfd = nsfd;
	if (o->netns) {
		c->netns = strdup(o->netns);
		if (!c->netns && !ret)
			ret = -ENOMEM;
		snprintf(c->tag, sizeof(c->tag), "netns %s: %s", o->netns, c->v4 ? "IPv4: " : "");
	}
	c->opts.netns = c->netns;
	c->fail_after =
	    getenv("RTSNAP_TEST_FAIL_AFTER") ? atol(getenv("RTSNAP_TEST_FAIL_AFTER")) : -1;
	c->nomem_inject = getenv("RTSNAP_TEST_NOMEM") ? atol(getenv("RTSNAP_TEST_NOMEM")) : 0;
	c->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (reserve_take()) /* room to recover from running out of memory (reserve.h) */
		log_warn("no memory reserve of %u MiB: recovering from running out of memory may "
			 "wait for memory freed elsewhere",
			 RESERVE_BYTES >> 20);
	if (!ret && c->evfd < 0)
		ret = -errno;
	if (!ret)
		ret = first_dump(c);
	if (!ret)
		ret = publish(c, TRIGGER_STARTUP);
	segment_reclaim_soon(); /* the first dump's buffers */
	if (saved >= 0 && netns_leave(saved)) {
		log_err("cannot come back to the daemon's namespace from %s", o->netns);
		abort(); /* everything this thread opens later would be in the wrong one */
	}
	if (ret)
		goto fail;
	c->next_interval_ms =
	    c->opts.interval_s ? snapshot_now_ms() + (int64_t)c->opts.interval_s * 1000 : 0;
	c->next_ra_ms = c->opts.ra_refresh_s && !c->v4
			    ? snapshot_now_ms() + (int64_t)c->opts.ra_refresh_s * 1000
			    : 0;
	stats_set(c->st->interval_s, c->opts.interval_s);
	c->member = (struct cloop_member){ .arg = c,
					   .prepare = coll_prepare,
					   .step = coll_step,
					   .nsfd = c->nsfd,
					   .nice = c->opts.nice };
	ret = cloop_add(&c->member);
	if (ret)
		goto fail;
	c->running = 1;
	*out = c;
	return 0;
fail:
	if (c->evfd >= 0)
		close(c->evfd);
	coll_close(c);
	free(c);
	return ret;
}

void collector_request_resync(struct collector *c)
{
	uint64_t one = 1;

	if (!c)
		return;
	__atomic_store_n(&c->resync, 1, __ATOMIC_RELEASE);
	if (write(c->evfd, &one, sizeof(one)) < 0) { /* polled by the loop */
						     /* eventfd full: a wakeup is already pending */
	}
}

void collector_stop(struct collector *c)
{
	if (!c)
		return;
	if (c->running)
		cloop_remove(&c->member); /* the loop runs it no more */
	resync_cancel(c);
	job_join(c, NULL, NULL); /* before its eventfd goes */
	close(c->evfd);
	coll_close(c);
	free(c);
}
