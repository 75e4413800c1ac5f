// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * full4.c - the IPv4 collector's full dump into an IPv4 mirror (full4.h). dump4.c does the
 * same into the fib4 model for --once; this one feeds the mirror the daemon publishes from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "rtsnap/dump4.h"
#include "rtsnap/full4.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/stats.h"

struct full4_ctx {
	struct mirror4 *x;
	struct nlparse_route *pr;
	struct nlparse_nh4 *nh;
	const struct nlconn *gaps; /* the route dump's datagram boundaries (mirror_load_gap) */
	const int *abort;
	struct mirror_delta d; /* a dump changes nothing the rules would announce: ignored */
};

static int on_link(const struct nlmsghdr *nlh, void *arg)
{
	struct full4_ctx *x = arg;
	struct route_link l;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;
	ret = nlparse_link(nlh, &l);
	if (ret <= 0)
		return ret;
	return mirror4_link(x->x, &l, &x->d); /* seen for the first time: recorded */
}

static int on_nexthop(const struct nlmsghdr *nlh, void *arg)
{
	struct full4_ctx *x = arg;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWNEXTHOP)
		return 0;
	ret = nlparse_nexthop4(nlh, x->nh);
	if (ret <= 0)
		return ret;
	return mirror4_nexthop(x->x, x->nh, 0, &x->d);
}

static int on_addr(const struct nlmsghdr *nlh, void *arg)
{
	struct full4_ctx *x = arg;
	uint32_t ifindex;
	uint8_t addr[4], plen;
	int ret;

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return 0;
	ret = nlparse_addr4(nlh, &ifindex, addr, &plen);
	if (ret <= 0)
		return ret;
	return mirror4_addr(x->x, ifindex, addr, plen, 0, 1, &x->d);
}

static int on_route(const struct nlmsghdr *nlh, void *arg)
{
	struct full4_ctx *x = arg;
	int ret;

	if (x->abort && __atomic_load_n(x->abort, __ATOMIC_RELAXED))
		return -ECANCELED;
	if (x->gaps && (const char *)nlh == x->gaps->buf)
		mirror_load_gap(mirror4_mirror(x->x)); /* the first message of a datagram */
	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return 0;
	ret = nlparse_route4(nlh, x->pr);
	if (ret <= 0)
		return ret;
	return mirror4_dump_route(x->x, x->pr);
}

/* The probe's replies: main's existence is all it asks (a route in them arrived since the
 * dump, with its notification). */
/* A dump the kernel flagged NLM_F_DUMP_INTR is complete but may be inconsistent. */
static int dump_one(struct nlconn *conn, uint16_t type, const void *req, size_t len,
		    nlconn_dump_cb cb, struct full4_ctx *x, int *intr)
{
	int ret = nlconn_dump(conn, type, req, len, cb, x);

	if (ret == -EINTR) {
		*intr = 1;
		ret = 0;
	}
	return ret;
}

int full4_dump(struct nlconn *conn, int gaps, const int *abort, int *intr, struct mirror4 **out)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct ifaddrmsg ifa = { .ifa_family = AF_INET };
	struct rtmsg rtm = { .rtm_family = AF_INET };
	struct full4_ctx x = { .abort = abort };
	struct mirror *m = NULL;
	int ret;

	*intr = 0;
	x.pr = malloc(sizeof(*x.pr));
	x.nh = malloc(sizeof(*x.nh));
	ret = x.pr && x.nh ? mirror4_new(&x.x) : -ENOMEM;
	if (!ret) {
		m = mirror4_mirror(x.x);
		ret = dump_one(conn, RTM_GETLINK, &ifi, sizeof(ifi), on_link, &x, intr);
	}
	if (!ret) {
		/* kernels without nexthop objects refuse the dump */
		ret = dump_one(conn, RTM_GETNEXTHOP, &nhm, sizeof(nhm), on_nexthop, &x, intr);
		if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EAFNOSUPPORT)
			ret = 0;
	}
	if (!ret)
		ret = dump_one(conn, RTM_GETADDR, &ifa, sizeof(ifa), on_addr, &x, intr);
	if (!ret) {
		x.gaps = conn;
		ret = dump_one(conn, RTM_GETROUTE, &rtm, sizeof(rtm), on_route, &x, intr);
		x.gaps = NULL;
		if (!ret)
			ret = mirror_load_end(m, gaps);
	}
	if (!ret && abort && __atomic_load_n(abort, __ATOMIC_RELAXED))
		ret = -ECANCELED;
	if (!ret && !mirror_has_table(m, RT_TABLE_MAIN)) {
		ret = dump4_main_exists(conn->st, NULL, NULL, NULL);
		if (ret > 0)
			ret = mirror_add_table(m, RT_TABLE_MAIN, 0);
	}
	free(x.pr);
	free(x.nh);
	if (ret) {
		if (ret == -ENOMEM && conn->st)
			stats_inc(conn->st->errors[CERR_NOMEM]);
		mirror4_free(x.x);
		return ret;
	}
	*out = x.x;
	return 0;
}
