/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nlconn.h - rtnetlink sockets: open, receive whole datagrams, run a dump. I/O only: what
 * the messages mean is nlparse.c's and mirror.c's business.
 *
 * A connection belongs to one thread at a time (the collector's, or the main thread before
 * the collector starts).
 */
#ifndef RTSNAP_NLCONN_H
#define RTSNAP_NLCONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>

struct nl_sock;
struct collector_stats;

struct nlconn {
	struct nl_sock *sk;
	int fd;
	uint32_t port;
	uint32_t seq;
	char *buf; /* the last datagram received */
	size_t bufsz;
	size_t rcvbuf; /* the socket's receive buffer as the kernel sized it (SO_RCVBUF) */
	struct collector_stats *st; /* where its errors are counted (stats.h), or NULL */
	/* dumps: after a datagram the kernel took longer than NLCONN_PACE_US to produce, pause
	 * as long again (set by whoever opened it: see nlconn_dump()) */
	int pace;
	/* this opening's number, unique in the process (a descriptor number is reused after a
	 * close: whoever keeps a descriptor registered somewhere tells openings apart by it) */
	uint64_t serial;
	/* notification sockets: datagrams received NLCONN_BATCH at a time (nlconn_recv()), in
	 * slots of slotsz bytes; nb received by the last receive, ib of them returned */
	struct nlbatch *batch;
	unsigned int nb, ib;
};

#define NLCONN_BATCH 8

#define NLCONN_PACE_US 1000

enum nlconn_mode {
	NLCONN_DUMP,	/* requests and their replies */
	NLCONN_NOTIFY,	/* route, link, nexthop, rule, prefix and address events; non-blocking */
	NLCONN_STRICT,	/* dumps with NETLINK_GET_STRICT_CHK: the kernel honours dump filters */
	NLCONN_NOTIFY4, /* IPv4 route, address and rule events, link and nexthop events;
			 * non-blocking */
};

/* Open c in mode, counting its errors in st (NULL: nowhere). 0 or a negative errno; on error
 * c is closed. */
int nlconn_open(struct nlconn *c, enum nlconn_mode mode, struct collector_stats *st)
    __attribute__((warn_unused_result));
/* Close c (a closed or zeroed one is fine). */
void nlconn_close(struct nlconn *c);
/* Size notification socket c's receive buffer: bytes, or 0 for the size nlconn_open() gives
 * it. Sets c->rcvbuf to what the kernel made of it. 0 or a negative errno. */
int nlconn_set_rcvbuf(struct nlconn *c, size_t bytes);
/* Bytes of c's receive buffer that queued messages take (SO_MEMINFO), or a negative errno. */
ssize_t nlconn_queued(const struct nlconn *c);

/*
 * Receive one datagram into c->buf (the buffer holds any datagram the kernel sends: see
 * nlconn.c): with one recvmsg() on a dump socket; on a notification socket, non-blocking,
 * from the datagrams the last recvmmsg() took (up to NLCONN_BATCH in one call), which is
 * called again when they are all returned (one recvmsg() while there is no memory for the
 * batch's slots). A receive that took fewer than it could found the socket empty: the call
 * after its last datagram says -EAGAIN without asking the kernel again. Returns its length,
 * 0 for a datagram not from the kernel (ignore it), or a negative errno (-EAGAIN when a
 * non-blocking receive finds nothing, -ENOBUFS when the kernel dropped messages for us,
 * -EMSGSIZE when a datagram did not fit and was lost: the buffer has grown to its size).
 */
ssize_t nlconn_recv(struct nlconn *c, int flags);
/* Whether datagrams c received are waiting to be returned by nlconn_recv(): the socket's
 * readiness does not show them. */
static inline int nlconn_buffered(const struct nlconn *c)
{
	return c->ib < c->nb;
}

/* Called for every message of a dump; returns 0 to go on, -EBADMSG to count-and-skip it,
 * -ECANCELED to stop at once (the rest of the dump is left unread: close the connection),
 * another negative errno to abort (the rest of the dump is still read). */
typedef int (*nlconn_dump_cb)(const struct nlmsghdr *nlh, void *ctx);

/*
 * One dump: send the request (family header and attributes, reqlen <= 64 bytes), feed every
 * reply to cb until NLMSG_DONE. Returns 0, -EINTR if the kernel flagged the dump
 * inconsistent (NLM_F_DUMP_INTR), the error a DONE or ERROR message carried, or another
 * negative errno.
 */
int nlconn_dump(struct nlconn *c, uint16_t type, const void *req, size_t reqlen, nlconn_dump_cb cb,
		void *ctx) __attribute__((warn_unused_result));

#endif
