// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlconn.c - rtnetlink socket I/O (see nlconn.h). Errors are counted here, where they happen,
 * in the counters of the instance the connection works for; nothing is logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "rtsnap/nlconn.h"
#include "rtsnap/stats.h"

/* Count in the instance's counters, if the connection works for one. */
#define count(c, field)                            \
	do {                                       \
		if ((c)->st)                       \
			stats_inc((c)->st->field); \
	} while (0)

#define RECV_TIMEOUT_S 10
#define NOTIFY_RCVBUF (64 << 20)
#define RECV_BUF_MIN (128 << 10) /* see nlconn_recv() */

/* A notification socket's receive batch (nlconn_recv()). */
struct nlbatch {
	size_t slotsz; /* bytes per slot: the connection's bufsz when it was made */
	struct mmsghdr mm[NLCONN_BATCH];
	struct iovec iov[NLCONN_BATCH];
	struct sockaddr_nl sa[NLCONN_BATCH];
	char *slots; /* NLCONN_BATCH * slotsz bytes */
};

static void batch_free(struct nlconn *c)
{
	if (c->batch)
		free(c->batch->slots);
	free(c->batch);
	c->batch = NULL;
	c->nb = c->ib = 0;
}

void nlconn_close(struct nlconn *c)
{
	if (c->sk)
		nl_socket_free(c->sk);
	batch_free(c);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int nlconn_set_rcvbuf(struct nlconn *c, size_t bytes)
{
	int sz = bytes ? (int)bytes : NOTIFY_RCVBUF;
	socklen_t len = sizeof(sz);

	if (c->fd < 0)
		return -EBADF;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0 &&
	    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)) < 0)
		return -errno;
	if (getsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, &len) == 0 && sz > 0)
		c->rcvbuf = (size_t)sz;
	return 0;
}

ssize_t nlconn_queued(const struct nlconn *c)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (c->fd < 0)
		return -EBADF;
	if (getsockopt(c->fd, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0)
		return -errno;
	if (len <= SK_MEMINFO_RMEM_ALLOC * sizeof(mi[0]))
		return -EINVAL;
	return (ssize_t)mi[SK_MEMINFO_RMEM_ALLOC];
}

/* A dump socket, a notification socket (route, link, nexthop, rule events), or a dump socket
 * with strict checking (NETLINK_GET_STRICT_CHK: the kernel honours dump filters). */
int nlconn_open(struct nlconn *c, enum nlconn_mode mode, struct collector_stats *st)
{
	struct timeval tv = { .tv_sec = RECV_TIMEOUT_S };
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->st = st;
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
	{
		static uint64_t serials;

		c->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
	}
	c->seq = (uint32_t)time(NULL);
	c->bufsz = RECV_BUF_MIN;
	c->buf = malloc(c->bufsz);
	if (!c->buf) {
		nlconn_close(c);
		return -ENOMEM;
	}
	if (mode == NLCONN_NOTIFY || mode == NLCONN_NOTIFY4) {
		c->batch = calloc(1, sizeof(*c->batch)); /* without it: one datagram a call */
		nlconn_set_rcvbuf(c, 0);
		if (mode == NLCONN_NOTIFY)
			ret = nl_socket_add_memberships(c->sk, RTNLGRP_IPV6_ROUTE, RTNLGRP_LINK,
							RTNLGRP_NEXTHOP, RTNLGRP_IPV6_RULE,
							RTNLGRP_IPV6_PREFIX, RTNLGRP_IPV6_IFADDR,
							RTNLGRP_ND_USEROPT, 0);
		else
			ret = nl_socket_add_memberships(c->sk, RTNLGRP_IPV4_ROUTE, RTNLGRP_LINK,
							RTNLGRP_NEXTHOP, RTNLGRP_IPV4_RULE,
							RTNLGRP_IPV4_IFADDR, 0);
		if (ret < 0) {
			nlconn_close(c);
			return -EIO;
		}
		fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	} else {
		int sz = 4 << 20;

		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (mode == NLCONN_STRICT) {
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
 * The next datagram of a notification socket's batch (nlconn_recv()). Under churn a pass of
 * the collector reads several notifications: one recvmmsg() for them instead of a recvmsg()
 * each (and one more to find the socket empty) saves system calls, which cost several
 * microseconds each on virtual machines. Each slot is as large as the connection's buffer, so
 * a datagram that would fit there fits here too; a slot is only touched as far as the
 * datagram in it reaches. Datagrams are returned in the order the kernel queued them.
 */
static ssize_t batch_recv(struct nlconn *c, int flags)
{
	struct nlbatch *b = c->batch;
	const struct mmsghdr *m;
	int n;

	if (c->ib == c->nb) {
		int was_short = c->nb && c->nb < NLCONN_BATCH;

		c->nb = c->ib = 0;
		if (was_short)
			return -EAGAIN; /* the last receive found the socket empty */
		if (!b->slots || b->slotsz != c->bufsz) {
			free(b->slots);
			b->slotsz = c->bufsz;
			b->slots = malloc(NLCONN_BATCH * b->slotsz);
			if (!b->slots)
				return -ENOMEM;
		}
		for (unsigned int i = 0; i < NLCONN_BATCH; i++) {
			b->iov[i] = (struct iovec){ .iov_base = b->slots + i * b->slotsz,
						    .iov_len = b->slotsz };
			b->mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &b->sa[i],
								  .msg_namelen = sizeof(b->sa[i]),
								  .msg_iov = &b->iov[i],
								  .msg_iovlen = 1 } };
		}
		do {
			/* MSG_TRUNC: each datagram's own size */
			n = recvmmsg(c->fd, b->mm, NLCONN_BATCH, MSG_TRUNC | MSG_DONTWAIT | flags,
				     NULL);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EAGAIN;
		c->nb = (unsigned int)n;
	}
	m = &b->mm[c->ib];
	c->ib++;
	if (m->msg_len > b->slotsz || (m->msg_hdr.msg_flags & MSG_TRUNC)) {
		char *p = realloc(c->buf, m->msg_len);

		if (p) {
			c->buf = p;
			c->bufsz = m->msg_len; /* and the slots, at the next receive */
		}
		return -EMSGSIZE;
	}
	if (((const struct sockaddr_nl *)m->msg_hdr.msg_name)->nl_pid != 0)
		return 0; /* not from the kernel: ignore the datagram */
	memcpy(c->buf, m->msg_hdr.msg_iov->iov_base, m->msg_len);
	return (ssize_t)m->msg_len;
}

/*
 * Receive one datagram into c->buf. One recvmsg(): the buffer (RECV_BUF_MIN) holds any
 * datagram the kernel sends (a dump's are at most 32 KiB; a notification is one message,
 * whose largest attribute, a multipath route's RTA_MULTIPATH, is at most 64 KiB). Sizing
 * each datagram first with MSG_PEEK|MSG_TRUNC cost a second system call and a second copy
 * per notification. Should one still not fit, it is lost: -EMSGSIZE, and the buffer grows to
 * its size for the next (the caller resyncs). Returns its length, or a negative errno
 * (-EAGAIN on a non-blocking socket with nothing).
 */
ssize_t nlconn_recv(struct nlconn *c, int flags)
{
	struct sockaddr_nl sa;
	struct iovec iov = { .iov_base = c->buf, .iov_len = c->bufsz };
	struct msghdr msg = {
		.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1
	};
	ssize_t n;

	if (c->batch && (flags & MSG_DONTWAIT)) {
		n = batch_recv(c, flags & ~MSG_DONTWAIT);
		if (n != -ENOMEM)
			return n;
		/* no memory for the slots: one datagram into the buffer, as without a batch */
	}
	do {
		n = recvmsg(c->fd, &msg, MSG_TRUNC | flags); /* MSG_TRUNC: the datagram's size */
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n > c->bufsz || (msg.msg_flags & MSG_TRUNC)) {
		char *p = realloc(c->buf, (size_t)n);

		if (p) {
			c->buf = p;
			c->bufsz = (size_t)n;
		}
		return -EMSGSIZE;
	}
	if (sa.nl_pid != 0)
		return 0; /* not from the kernel: ignore the datagram */
	return n;
}

/*
 * One dump: send the request, feed every reply message to cb until NLMSG_DONE. Returns 0,
 * -EINTR if the kernel flagged the dump inconsistent (NLM_F_DUMP_INTR: redo it), or another
 * negative errno. cb returns 0 to go on, -EBADMSG to count-and-skip, other negatives abort
 * (the rest of the dump is still read so the socket stays in step).
 */
int nlconn_dump(struct nlconn *c, uint16_t type, const void *req, size_t reqlen, nlconn_dump_cb cb,
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
		count(c, errors[CERR_SOCKET]);
		return -errno;
	}
	for (;;) {
		struct timespec r0, r1;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &r0);
		n = nlconn_recv(c, 0);
		if (c->pace && n > 0) {
			long us;

			clock_gettime(CLOCK_MONOTONIC, &r1);
			us = (r1.tv_sec - r0.tv_sec) * 1000000L + (r1.tv_nsec - r0.tv_nsec) / 1000;
			if (us > NLCONN_PACE_US) {
				/* the kernel produces the next datagram inside this receive; a slow one
				 * walked its table from the root again (a change since the last:
				 * fib6_dump_table), holding the table's lock against route writers.
				 * Pausing as long lets them, and whoever follows them, catch up before
				 * the next walk (kernel-facts.md, "Dump mechanics") */
				struct timespec d = { us / 1000000, us % 1000000 * 1000 };

				nanosleep(&d, NULL);
			}
		}
		const struct nlmsghdr *nlh;
		size_t left;

		if (n < 0) {
			count(c, errors[n == -EAGAIN ? CERR_TIMEOUT : CERR_RECV]);
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

				count(c, errors[CERR_NLMSGERR]);
				if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EBADMSG;
				return e->error ? e->error : -EPROTO;
			}
			if (ret)
				continue; /* aborted: drain to NLMSG_DONE */
			{
				int r = cb(nlh, ctx);

				if (r == -EBADMSG)
					count(c, malformed);
				else if (r == -ECANCELED)
					return r; /* the caller closes c: no need to drain */
				else if (r < 0)
					ret = r;
			}
		}
		if (left) {
			/* trailing bytes that do not form a message */
			count(c, errors[CERR_TRUNCATED]);
			count(c, malformed);
		}
	}
}
