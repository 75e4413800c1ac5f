// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dump4.c - one full dump of the IPv4 state (dump4.h): links (AF_UNSPEC), nexthop objects
 * (both families share them: kernel-facts.md 12.1), IPv4 addresses, IPv4 routes, in that order,
 * so that every route's device and object is known before the route. A notification socket
 * subscribed before the first request tells whether anything changed meanwhile.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "rtsnap/dump4.h"
#include "rtsnap/names.h"
#include "rtsnap/nlconn.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"

struct dump4_pass {
	struct dump4 *d;
	struct nlparse_route *pr;
	struct nlparse_nh4 *nh;
};

static int on_link4(const struct nlmsghdr *nlh, void *arg)
{
	struct dump4_pass *x = arg;
	const struct ifinfomsg *ifi = NLMSG_DATA(nlh);
	struct route_link l;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	ret = nlparse_link(nlh, &l);
	if (ret <= 0)
		return ret;
	ret = route_ctx_add_link(&x->d->ctx, &l);
	if (!ret)
		ret = fib4_link(x->d->fib, (uint32_t)ifi->ifi_index, ifi->ifi_flags);
	return ret;
}

static int on_nexthop4(const struct nlmsghdr *nlh, void *arg)
{
	struct dump4_pass *x = arg;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWNEXTHOP)
		return 0;
	ret = nlparse_nexthop4(nlh, x->nh);
	if (ret <= 0)
		return ret;
	ret = route_ctx_add_nhobj(&x->d->ctx, &x->nh->o);
	if (!ret)
		ret =
		    fib4_nexthop(x->d->fib, &x->nh->o, x->nh->flags, x->nh->memb, x->nh->nmemb, 0);
	return ret;
}

/* An IPv4 address (nlparse_addr4(): its local address). */
static int on_addr4(const struct nlmsghdr *nlh, void *arg)
{
	struct dump4_pass *x = arg;
	uint32_t ifindex;
	uint8_t addr[4], plen;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return 0;
	ret = nlparse_addr4(nlh, &ifindex, addr, &plen);
	if (ret <= 0)
		return ret;
	return fib4_addr(x->d->fib, ifindex, addr, plen, 0, 1);
}

static int on_route4(const struct nlmsghdr *nlh, void *arg)
{
	struct dump4_pass *x = arg;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_route4(nlh, x->pr);
	if (ret <= 0)
		return ret;
	return fib4_dump_route(x->d->fib, &x->pr->r, x->pr->nhs,
			       x->pr->has_metrics ? &x->pr->m : NULL);
}

/* A callback's -EBADMSG makes nlconn_dump() skip the message; count it. */
static int counted(int (*cb)(const struct nlmsghdr *, void *), const struct nlmsghdr *nlh,
		   struct dump4_pass *x)
{
	int ret = cb(nlh, x);

	if (ret == -EBADMSG)
		x->d->malformed++;
	return ret;
}

static int cb_link(const struct nlmsghdr *nlh, void *arg)
{
	return counted(on_link4, nlh, arg);
}

static int cb_nexthop(const struct nlmsghdr *nlh, void *arg)
{
	return counted(on_nexthop4, nlh, arg);
}

static int cb_addr(const struct nlmsghdr *nlh, void *arg)
{
	return counted(on_addr4, nlh, arg);
}

static int cb_route(const struct nlmsghdr *nlh, void *arg)
{
	return counted(on_route4, nlh, arg);
}

void dump4_release(struct dump4 *d)
{
	fib4_free(d->fib);
	route_ctx_release(&d->ctx);
	memset(d, 0, sizeof(*d));
}

/* A dump the kernel flagged NLM_F_DUMP_INTR is complete but may be inconsistent: noted in
 * *intr, and the pass goes on. */
static int dump_one(struct nlconn *conn, uint16_t type, const void *req, size_t len,
		    nlconn_dump_cb cb, struct dump4_pass *x, int *intr)
{
	int ret = nlconn_dump(conn, type, req, len, cb, x);

	if (ret == -EINTR) {
		*intr = 1;
		ret = 0;
	}
	return ret;
}

static int probe_none(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(void)arg;
	return 0;
}

/*
 * A strict dump filtered on main ends with -ENOENT when main does not exist (inet_dump_fib).
 * The kernel creates main with its first route, or with local while there is no rule of the
 * user's (the two share a trie then), and never frees it (kernel-facts.md 12.3).
 */
int dump4_main_exists(struct collector_stats *st, nlconn_dump_cb cb, void *arg, int *intr)
{
	struct {
		struct rtmsg rtm;
		struct rtattr a;
		uint32_t table;
	} req = { .rtm = { .rtm_family = AF_INET },
		  .a = { .rta_len = RTA_LENGTH(sizeof(uint32_t)), .rta_type = RTA_TABLE },
		  .table = RT_TABLE_MAIN };
	struct nlconn strict = { .fd = -1 };
	int ret = nlconn_open(&strict, NLCONN_STRICT, st);

	if (!ret)
		ret = nlconn_dump(&strict, RTM_GETROUTE, &req, sizeof(req), cb ? cb : probe_none,
				  arg);
	nlconn_close(&strict);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EINTR) { /* it exists; what cb saw may be inconsistent */
		if (intr)
			*intr = 1;
		ret = 0;
	}
	return ret ? ret : 1;
}

static int has_main(const struct fib4 *f)
{
	for (size_t i = 0; i < fib4_ntables(f); i++) {
		const struct route *const *v;
		size_t n;

		if (fib4_table(f, i, &v, &n) == RT_TABLE_MAIN)
			return 1;
	}
	return 0;
}

/* One pass of the four dumps into d (emptied first); *intr set when one was flagged. */
static int dump_pass(struct nlconn *conn, struct dump4_pass *x, int *intr)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct ifaddrmsg ifa = { .ifa_family = AF_INET };
	struct rtmsg rtm = { .rtm_family = AF_INET };
	unsigned long malformed = x->d->malformed;
	int ret;

	fib4_free(x->d->fib);
	x->d->fib = NULL;
	route_ctx_release(&x->d->ctx);
	memset(&x->d->ctx, 0, sizeof(x->d->ctx));
	x->d->malformed = malformed;
	ret = fib4_new(&x->d->fib);
	if (!ret)
		ret = dump_one(conn, RTM_GETLINK, &ifi, sizeof(ifi), cb_link, x, intr);
	if (!ret) {
		/* kernels without nexthop objects refuse the dump */
		ret = dump_one(conn, RTM_GETNEXTHOP, &nhm, sizeof(nhm), cb_nexthop, x, intr);
		if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EAFNOSUPPORT)
			ret = 0;
	}
	if (!ret)
		ret = dump_one(conn, RTM_GETADDR, &ifa, sizeof(ifa), cb_addr, x, intr);
	if (!ret)
		ret = dump_one(conn, RTM_GETROUTE, &rtm, sizeof(rtm), cb_route, x, intr);
	if (!ret) {
		x->d->has_main = has_main(x->d->fib);
		if (!x->d->has_main) /* what it finds is empty or comes with a notification */
			ret = dump4_main_exists(NULL, cb_route, x, intr);
		if (ret > 0)
			x->d->has_main = 1;
		if (ret >= 0)
			ret = 0;
	}
	return ret;
}

/* Whether an event waits on the notification socket; what waits is read and dropped. */
static int events_arrived(struct nlconn *notify)
{
	struct pollfd p = { .fd = notify->fd, .events = POLLIN };
	int any = 0;

	while (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR))) {
		ssize_t len = nlconn_recv(notify, MSG_DONTWAIT);

		any = 1;
		if (len == -EAGAIN || len == -EWOULDBLOCK ||
		    (len < 0 && len != -ENOBUFS && len != -EMSGSIZE))
			break;
	}
	return any;
}

int dump4_take(struct dump4 *d, struct collector_stats *st)
{
	struct nlconn conn = { .fd = -1 }, notify = { .fd = -1 };
	struct dump4_pass x = { .d = d };
	int ret;

	memset(d, 0, sizeof(*d));
	x.pr = malloc(sizeof(*x.pr));
	x.nh = malloc(sizeof(*x.nh));
	ret = x.pr && x.nh ? nlconn_open(&conn, NLCONN_DUMP, st) : -ENOMEM;
	if (!ret)
		ret = nlconn_open(&notify, NLCONN_NOTIFY4, st);
	while (!ret) {
		int intr = 0;

		events_arrived(&notify); /* what happened before is in the dump */
		d->tries++;
		ret = dump_pass(&conn, &x, &intr);
		d->trusted = !ret && !events_arrived(&notify) && !intr;
		if (ret || d->trusted || d->tries >= DUMP4_TRIES)
			break;
		{
			struct timespec pause = { 0, 5000000L * d->tries }; /* let a burst pass */

			nanosleep(&pause, NULL);
		}
	}
	if (!ret)
		ret = names_load(NULL, &d->ctx.names);
	if (!ret)
		route_ctx_sort(&d->ctx);
	nlconn_close(&conn);
	nlconn_close(&notify);
	free(x.pr);
	free(x.nh);
	if (ret) {
		unsigned long malformed = d->malformed;

		dump4_release(d);
		d->malformed = malformed;
	}
	return ret;
}
