// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fakedump.so - make `ip -j -6 route show` print routes the kernel here cannot hold, so that
 * iproute2 itself says how it prints them (tests/data/capture_synthetic.sh; never used by a
 * test). LD_PRELOAD it with RTSNAP_FAKE_DUMP=FILE (netlink messages, as in tests/data/*.nl):
 * the first RTM_GETROUTE dump request on a socket is not sent; its answer is FILE's messages,
 * with the request's sequence number and the socket's port id, then NLMSG_DONE. Every other
 * request (link names, say) goes to the kernel.
 *
 *   cc -shared -fPIC -o fakedump.so tests/data/fakedump.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static int s_fd = -1;	  /* the socket whose dump we answer */
static unsigned char *s_ans; /* the whole answer, one datagram */
static size_t s_len;

/* Build the answer to a dump request with sequence seq on fd. */
static void prepare(int fd, uint32_t seq)
{
	const char *path = getenv("RTSNAP_FAKE_DUMP");
	struct sockaddr_nl sa;
	socklen_t sl = sizeof(sa);
	FILE *f = path ? fopen(path, "rb") : NULL;
	long n;
	size_t off = 0;
	struct nlmsghdr *done;

	if (!f || getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		fprintf(stderr, "fakedump: no RTSNAP_FAKE_DUMP file or socket name\n");
		exit(3);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s_ans = calloc(1, (size_t)n + NLMSG_SPACE(sizeof(int)));
	if (!s_ans || fread(s_ans, 1, (size_t)n, f) != (size_t)n)
		exit(3);
	fclose(f);
	while (off + NLMSG_HDRLEN <= (size_t)n) {
		struct nlmsghdr *h = (struct nlmsghdr *)(s_ans + off);

		if (h->nlmsg_len < NLMSG_HDRLEN || off + h->nlmsg_len > (size_t)n)
			exit(3);
		h->nlmsg_seq = seq;
		h->nlmsg_pid = sa.nl_pid;
		h->nlmsg_flags |= NLM_F_MULTI;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	done = (struct nlmsghdr *)(s_ans + off);
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_flags = NLM_F_MULTI;
	done->nlmsg_seq = seq;
	done->nlmsg_pid = sa.nl_pid;
	s_len = off + NLMSG_SPACE(sizeof(int));
	s_fd = fd;
}

static int is_route_dump(const void *buf, size_t len)
{
	const struct nlmsghdr *h = buf;

	return len >= NLMSG_HDRLEN && h->nlmsg_type == RTM_GETROUTE && (h->nlmsg_flags & NLM_F_DUMP);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);

	if (s_fd < 0 && !s_ans && is_route_dump(buf, len)) {
		prepare(fd, ((const struct nlmsghdr *)buf)->nlmsg_seq);
		return (ssize_t)len;
	}
	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	return real(fd, buf, len, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);

	if (s_fd < 0 && !s_ans && msg->msg_iovlen == 1 &&
	    is_route_dump(msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len)) {
		prepare(fd, ((const struct nlmsghdr *)msg->msg_iov[0].iov_base)->nlmsg_seq);
		return (ssize_t)msg->msg_iov[0].iov_len;
	}
	if (!real)
		real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	return real(fd, msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	size_t n;

	if (fd != s_fd || !s_ans) {
		if (!real)
			real = (ssize_t(*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");
		return real(fd, msg, flags);
	}
	if (msg->msg_name && msg->msg_namelen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl *sa = msg->msg_name;

		memset(sa, 0, sizeof(*sa));
		sa->nl_family = AF_NETLINK; /* from the kernel: port 0 */
		msg->msg_namelen = sizeof(*sa);
	}
	msg->msg_flags = 0;
	n = msg->msg_iovlen && msg->msg_iov[0].iov_len < s_len ? msg->msg_iov[0].iov_len : s_len;
	if (msg->msg_iovlen && msg->msg_iov[0].iov_base)
		memcpy(msg->msg_iov[0].iov_base, s_ans, n);
	if (n < s_len)
		msg->msg_flags |= MSG_TRUNC;
	if (!(flags & MSG_PEEK))
		s_fd = -1; /* answered; s_ans stays set so that no second dump is faked */
	return (flags & MSG_TRUNC) ? (ssize_t)s_len : (ssize_t)n;
}
