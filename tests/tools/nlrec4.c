// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlrec4 - record the kernel's IPv4 routing state for the unit tests that replay it (no root
 * needed to replay). Run inside a throw-away network namespace, as root, by the scripts in
 * tests/data (capture_inet.sh, capture_inet_notify.sh) and by the live tests; never by a unit
 * test.
 *
 *   nlrec4 dump DIR          DIR/{links,nexthops,addrs,routes}.nl (RTM_GETLINK AF_UNSPEC,
 *                            RTM_GETNEXTHOP AF_UNSPEC, RTM_GETADDR AF_INET, RTM_GETROUTE
 *                            AF_INET), DIR/proc.txt
 *                            (/proc/net/route) and DIR/ip.json (`ip -j -4 route show table
 *                            all`), taken again until two rounds agree, so that the four
 *                            show one state of the kernel
 *   nlrec4 notify DIR STEPS  subscribe (RTNLGRP_IPV4_ROUTE, LINK, NEXTHOP, IPV4_IFADDR,
 *                            IPV4_RULE), wait until quiet, `dump` into DIR/start; run each
 *                            line of STEPS with /bin/sh -c ("# ..." and empty lines skipped,
 *                            "! CMD": CMD must fail), and after each step wait until quiet
 *                            and append the full route dump to DIR/routes-steps.nl and
 *                            /proc/net/route to DIR/proc-steps.txt; finally `dump` into
 *                            DIR/end. DIR/notify.nl holds every notification in arrival
 *                            order, DIR/steps.txt "<index of the step's first message><TAB>
 *                            <command>" per step
 *   nlrec4 --print FILE      print a recorded .nl file one message a line (for people)
 *
 * File formats: tests/data/README.md. A notification that arrives during a dump makes the
 * dump untrustworthy: the step (or the start) is dumped again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#define SETTLE_MS \
	1200 /* quiet this long before a dump (linkwatch announces carrier up to 1 s late) */
#define BUF_SZ (1 << 20)

static char s_buf[BUF_SZ];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "nlrec4: %s: %s\n", what, strerror(err));
	exit(1);
}

static int open_notify(void)
{
	static const unsigned int groups[] = { RTNLGRP_IPV4_ROUTE, RTNLGRP_LINK, RTNLGRP_NEXTHOP,
					       RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_RULE };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	int sz = 64 << 20;

	if (fd < 0)
		die("socket", errno);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind", errno);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		die("SO_RCVBUFFORCE", errno);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i],
			       sizeof(groups[i])) < 0)
			die("NETLINK_ADD_MEMBERSHIP", errno);
	return fd;
}

/* Append what the notification socket holds to out (NULL: discard); how many messages. */
static long drain(int fd, FILE *out)
{
	long n = 0;

	for (;;) {
		struct iovec iov = { s_buf, sizeof(s_buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t len = recvmsg(fd, &msg, MSG_DONTWAIT);
		size_t left;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return n;
		if (len < 0)
			die("notification socket", errno);
		if (msg.msg_flags & MSG_TRUNC)
			die("notification socket", EMSGSIZE);
		left = (size_t)len;
		for (struct nlmsghdr *h = (struct nlmsghdr *)s_buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (out && fwrite(h, 1, NLMSG_ALIGN(h->nlmsg_len), out) !=
				       NLMSG_ALIGN(h->nlmsg_len))
				die("write", errno);
			n++;
		}
	}
}

/* Wait until the socket stayed empty for SETTLE_MS, recording what arrives meanwhile. */
static long settle(int fd, FILE *out)
{
	int64_t quiet_since = now_ms();
	long n = 0;

	while (now_ms() - quiet_since < SETTLE_MS) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long k;

		poll(&p, 1, 50);
		k = drain(fd, out);
		if (k) {
			n += k;
			quiet_since = now_ms();
		}
	}
	return n;
}

static int pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* One dump request; every reply (NLMSG_DONE or NLMSG_ERROR included) is appended to f. */
static void dump_into(uint16_t type, const void *body, size_t blen, FILE *f)
{
	static uint32_t seq = 100;
	struct {
		struct nlmsghdr h;
		char b[64];
	} req;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), done = 0;

	if (fd < 0)
		die("socket", errno);
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(blen);
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = ++seq;
	memcpy(NLMSG_DATA(&req.h), body, blen);
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0)
		die("send", errno);
	while (!done) {
		struct iovec iov = { s_buf, sizeof(s_buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(fd, &msg, 0);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("dump", errno);
		if (msg.msg_flags & MSG_TRUNC)
			die("dump", EMSGSIZE);
		left = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)s_buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (fwrite(h, 1, NLMSG_ALIGN(h->nlmsg_len), f) != NLMSG_ALIGN(h->nlmsg_len))
				die("write", errno);
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = 1;
		}
	}
	close(fd);
}

static void route_dump(FILE *f)
{
	struct rtmsg rtm = { .rtm_family = AF_INET };

	dump_into(RTM_GETROUTE, &rtm, sizeof(rtm), f);
}

/* The whole of file src appended to f. */
static void copy_file(const char *src, FILE *f)
{
	FILE *in = fopen(src, "rb");
	size_t n;

	if (!in)
		die(src, errno);
	while ((n = fread(s_buf, 1, sizeof(s_buf), in)) > 0)
		if (fwrite(s_buf, 1, n, f) != n)
			die("write", errno);
	fclose(in);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		die(path, errno);
	do {
		if (n + 65536 > cap) {
			cap = cap ? 2 * cap : 1 << 20;
			p = realloc(p, cap);
			if (!p)
				die("realloc", ENOMEM);
		}
		k = fread(p + n, 1, cap - n, f);
		n += k;
	} while (k);
	fclose(f);
	*len = n;
	return p;
}

static int same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *pa = slurp(a, &la), *pb = slurp(b, &lb);
	int same = la == lb && !memcmp(pa, pb, la);

	free(pa);
	free(pb);
	return same;
}

static void open_into(const char *dir, const char *name, char *path, size_t len, FILE **f)
{
	snprintf(path, len, "%s/%s", dir, name);
	*f = fopen(path, "wb");
	if (!*f)
		die(path, errno);
}

static void run_into(const char *cmd, const char *path)
{
	char line[8192];

	snprintf(line, sizeof(line), "%s > '%s'", cmd, path);
	if (system(line) != 0)
		die(cmd, EIO);
}

/*
 * One state into dir: proc and ip before and after the netlink dumps, again until both
 * rounds agree and (nfd >= 0) no notification arrived meanwhile.
 */
static void state_dump(const char *dir, int nfd, FILE *notify)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct ifaddrmsg ifa = { .ifa_family = AF_INET };
	char path[4096], again[4096];
	FILE *f;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die(dir, errno);
	for (int tries = 0;; tries++) {
		if (tries == 20)
			die("the kernel never held still for a dump", EAGAIN);
		open_into(dir, "proc.txt", path, sizeof(path), &f);
		copy_file("/proc/net/route", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/ip.json", dir);
		run_into("ip -j -4 route show table all", path);
		open_into(dir, "links.nl", path, sizeof(path), &f);
		dump_into(RTM_GETLINK, &ifi, sizeof(ifi), f);
		fclose(f);
		open_into(dir, "nexthops.nl", path, sizeof(path), &f);
		dump_into(RTM_GETNEXTHOP, &nhm, sizeof(nhm), f);
		fclose(f);
		open_into(dir, "addrs.nl", path, sizeof(path), &f);
		dump_into(RTM_GETADDR, &ifa, sizeof(ifa), f);
		fclose(f);
		open_into(dir, "routes.nl", path, sizeof(path), &f);
		route_dump(f);
		fclose(f);
		snprintf(again, sizeof(again), "%s/proc.again", dir);
		f = fopen(again, "wb");
		if (!f)
			die(again, errno);
		copy_file("/proc/net/route", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/proc.txt", dir);
		if (same_file(path, again) && !pending(nfd)) {
			unlink(again);
			return;
		}
		unlink(again);
		if (nfd >= 0)
			settle(nfd, notify);
	}
}

static int record(const char *dir, const char *steps_path)
{
	FILE *steps = fopen(steps_path, "r"), *notify, *steps_out, *rsteps, *psteps;
	char path[4096], line[8192];
	long count = 0;
	int fd = open_notify();

	if (!steps)
		die(steps_path, errno);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die(dir, errno);
	open_into(dir, "notify.nl", path, sizeof(path), &notify);
	open_into(dir, "steps.txt", path, sizeof(path), &steps_out);
	open_into(dir, "routes-steps.nl", path, sizeof(path), &rsteps);
	open_into(dir, "proc-steps.txt", path, sizeof(path), &psteps);
	settle(fd, NULL);
	snprintf(path, sizeof(path), "%s/start", dir);
	state_dump(path, fd, NULL);
	if (pending(fd))
		die("start: the kernel changed during the dump", EAGAIN);
	while (fgets(line, sizeof(line), steps)) {
		size_t l = strlen(line);
		const char *cmd = line;
		int must_fail = 0, st;

		while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
			line[--l] = 0;
		if (!l || line[0] == '#')
			continue;
		if (line[0] == '!') {
			must_fail = 1;
			cmd = line + 1;
			while (*cmd == ' ')
				cmd++;
		}
		count += drain(fd, notify);
		fprintf(steps_out, "%ld\t%s\n", count, line);
		st = system(cmd);
		if (st == -1 || !WIFEXITED(st) || (WEXITSTATUS(st) != 0) != must_fail) {
			fprintf(stderr, "nlrec4: step %s: exit %d\n", line,
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return 1;
		}
		for (;;) {
			long before = ftell(rsteps), pbefore = ftell(psteps);

			count += settle(fd, notify);
			route_dump(rsteps);
			fprintf(psteps, "== %s\n", line);
			copy_file("/proc/net/route", psteps);
			if (!pending(fd))
				break;
			/* changed while dumping: take this step's dump again */
			fflush(rsteps);
			fflush(psteps);
			if (ftruncate(fileno(rsteps), before) || ftruncate(fileno(psteps), pbefore))
				die("ftruncate", errno);
			fseek(rsteps, before, SEEK_SET);
			fseek(psteps, pbefore, SEEK_SET);
		}
	}
	count += settle(fd, notify);
	fprintf(steps_out, "%ld\t# settle\n", count);
	fclose(steps);
	if (fclose(notify) || fclose(steps_out) || fclose(rsteps) || fclose(psteps))
		die("write", errno);
	snprintf(path, sizeof(path), "%s/end", dir);
	state_dump(path, fd, NULL);
	if (pending(fd))
		die("end: the kernel changed during the dump", EAGAIN);
	printf("nlrec4: %ld notifications into %s\n", count, dir);
	return 0;
}

/* ---- --print ---- */

static const char *a4(const void *p, char *buf)
{
	return inet_ntop(AF_INET, p, buf, INET6_ADDRSTRLEN);
}

static void print_attrs_route(const struct rtmsg *rtm, const struct rtattr *a, size_t left)
{
	char b[INET6_ADDRSTRLEN];

	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		const void *d = RTA_DATA(a);
		uint32_t v = 0;

		if (RTA_PAYLOAD(a) >= 4)
			memcpy(&v, d, 4);
		switch (a->rta_type) {
		case RTA_DST:
			printf(" %s/%u", a4(d, b), rtm->rtm_dst_len);
			break;
		case RTA_GATEWAY:
			printf(" via %s", a4(d, b));
			break;
		case RTA_VIA: {
			const struct rtvia *via = d;

			printf(" via inet6 %s",
			       inet_ntop(via->rtvia_family, via->rtvia_addr, b, sizeof(b)) ?: "?");
			break;
		}
		case RTA_OIF:
			printf(" oif %u", v);
			break;
		case RTA_PRIORITY:
			printf(" metric %u", v);
			break;
		case RTA_PREFSRC:
			printf(" src %s", a4(d, b));
			break;
		case RTA_TABLE:
			printf(" table %u", v);
			break;
		case RTA_FLOW:
			printf(" realms %u/%u", v >> 16, v & 0xffff);
			break;
		case 30: /* RTA_NH_ID */
			printf(" nhid %u", v);
			break;
		case RTA_METRICS:
			printf(" metrics[%u]", (unsigned)RTA_PAYLOAD(a));
			break;
		case RTA_ENCAP:
			printf(" encap[%u]", (unsigned)RTA_PAYLOAD(a));
			break;
		case RTA_MULTIPATH: {
			const struct rtnexthop *nh = d;
			size_t l = RTA_PAYLOAD(a);

			while (l >= sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
			       nh->rtnh_len <= l) {
				printf(" [nh dev %d w %d fl 0x%x", nh->rtnh_ifindex,
				       nh->rtnh_hops + 1, nh->rtnh_flags);
				print_attrs_route(rtm, RTNH_DATA(nh),
						  nh->rtnh_len - RTNH_LENGTH(0));
				printf("]");
				if ((size_t)RTNH_ALIGN(nh->rtnh_len) >= l)
					break;
				l -= (size_t)RTNH_ALIGN(nh->rtnh_len);
				nh = RTNH_NEXT(nh);
			}
			break;
		}
		}
	}
}

static void print_msg(long i, const struct nlmsghdr *h)
{
	static const char *const names[] = {
		[RTM_NEWLINK] = "NEWLINK",	 [RTM_DELLINK] = "DELLINK",
		[RTM_NEWADDR] = "NEWADDR",	 [RTM_DELADDR] = "DELADDR",
		[RTM_NEWROUTE] = "NEWROUTE",	 [RTM_DELROUTE] = "DELROUTE",
		[RTM_NEWRULE] = "NEWRULE",	 [RTM_DELRULE] = "DELRULE",
		[RTM_NEWNEXTHOP] = "NEWNEXTHOP", [RTM_DELNEXTHOP] = "DELNEXTHOP",
	};
	char b[INET6_ADDRSTRLEN];
	const char *name = h->nlmsg_type < sizeof(names) / sizeof(names[0]) && names[h->nlmsg_type]
			       ? names[h->nlmsg_type]
			       : NULL;

	printf("%ld ", i);
	if (h->nlmsg_type == NLMSG_DONE) {
		printf("DONE\n");
		return;
	}
	if (name)
		printf("%s", name);
	else
		printf("type%u", h->nlmsg_type);
	printf(" flags 0x%x%s%s%s%s", h->nlmsg_flags,
	       h->nlmsg_flags & NLM_F_REPLACE ? " REPLACE" : "",
	       h->nlmsg_flags & NLM_F_EXCL ? " EXCL" : "",
	       h->nlmsg_flags & NLM_F_CREATE ? " CREATE" : "",
	       h->nlmsg_flags & NLM_F_APPEND ? " APPEND" : "");
	if ((h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE) &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct rtmsg))) {
		const struct rtmsg *r = NLMSG_DATA(h);

		printf(": fam %u type %u proto %u scope %u tos 0x%x table %u flags 0x%x",
		       r->rtm_family, r->rtm_type, r->rtm_protocol, r->rtm_scope, r->rtm_tos,
		       r->rtm_table, r->rtm_flags);
		if (r->rtm_family == AF_INET)
			print_attrs_route(r, RTM_RTA(r), h->nlmsg_len - NLMSG_LENGTH(sizeof(*r)));
	} else if ((h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK) &&
		   h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
		const struct ifinfomsg *ifi = NLMSG_DATA(h);
		const struct rtattr *a = IFLA_RTA(ifi);
		size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));

		printf(": index %d flags 0x%x", ifi->ifi_index, ifi->ifi_flags);
		for (; RTA_OK(a, left); a = RTA_NEXT(a, left))
			if (a->rta_type == IFLA_IFNAME)
				printf(" %s", (const char *)RTA_DATA(a));
	} else if ((h->nlmsg_type == RTM_NEWADDR || h->nlmsg_type == RTM_DELADDR) &&
		   h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg))) {
		const struct ifaddrmsg *ifa = NLMSG_DATA(h);
		const struct rtattr *a = IFA_RTA(ifa);
		size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));

		printf(": fam %u index %u plen %u", ifa->ifa_family, ifa->ifa_index,
		       ifa->ifa_prefixlen);
		for (; RTA_OK(a, left); a = RTA_NEXT(a, left))
			if (a->rta_type == IFA_LOCAL && ifa->ifa_family == AF_INET)
				printf(" local %s", a4(RTA_DATA(a), b));
	} else if ((h->nlmsg_type == RTM_NEWNEXTHOP || h->nlmsg_type == RTM_DELNEXTHOP) &&
		   h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nhmsg))) {
		const struct nhmsg *nhm = NLMSG_DATA(h);
		const struct rtattr *a =
		    (const void *)((const char *)nhm + NLMSG_ALIGN(sizeof(*nhm)));
		size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*nhm));

		printf(": fam %u", nhm->nh_family);
		for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
			uint32_t v = 0;

			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&v, RTA_DATA(a), 4);
			if (a->rta_type == NHA_ID)
				printf(" id %u", v);
			else if (a->rta_type == NHA_OIF)
				printf(" oif %u", v);
			else if (a->rta_type == NHA_GROUP)
				printf(" group[%u]", (unsigned)(RTA_PAYLOAD(a) / 8));
			else if (a->rta_type == NHA_BLACKHOLE)
				printf(" blackhole");
			else if (a->rta_type == NHA_GATEWAY && RTA_PAYLOAD(a) == 4)
				printf(" via %s", a4(RTA_DATA(a), b));
			else if (a->rta_type == NHA_GATEWAY && RTA_PAYLOAD(a) == 16)
				printf(" via %s", inet_ntop(AF_INET6, RTA_DATA(a), b, sizeof(b)));
		}
	}
	printf("\n");
}

static int print_file(const char *path)
{
	size_t len;
	char *buf = slurp(path, &len);
	size_t left = len;
	long i = 0;

	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left))
		print_msg(i++, h);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--print"))
		return print_file(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "dump")) {
		state_dump(argv[2], -1, NULL);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "notify"))
		return record(argv[2], argv[3]);
	fprintf(stderr, "usage: nlrec4 dump DIR | nlrec4 notify DIR STEPS | nlrec4 --print FILE\n");
	return 2;
}
