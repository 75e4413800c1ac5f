// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nlnotify - record a dump, the notifications of a sequence of changes, and a second dump, for
 * the unit test test_mirror (which replays the notifications onto the first dump and compares
 * with the second dump and the kernel's own proc text). Run by tests/data/capture_notify.sh,
 * inside a fresh network namespace, as root; never by a test.
 *
 *   nlnotify DIR STEPS     record into DIR; STEPS is a file of shell commands, one a line
 *                          ("# ..." and empty lines skipped; "! CMD": CMD must fail)
 *   nlnotify --print FILE  print a recorded file one message a line (for people)
 *
 * Order of work: subscribe to RTNLGRP_IPV6_ROUTE, LINK, NEXTHOP, IPV6_RULE, IPV6_PREFIX,
 * IPV6_IFADDR and ND_USEROPT first (as rtsnapd does), wait until nothing arrives for a while,
 * dump, check that nothing
 * arrived during the dump; run every step with /bin/sh -c, reading the notification socket all
 * the while; wait until quiet; dump again; copy /proc/net/ipv6_route; check quiet again.
 *
 * Files (tests/data/README.md): each .nl file is raw netlink messages exactly as received,
 * concatenated, each padded to NLMSG_ALIGN (nlmsghdr.nlmsg_len gives each one's length, so a
 * reader walks them with NLMSG_OK/NLMSG_NEXT; nlmsg_flags are kept as the kernel sent them).
 *   DIR/start/{links,nexthops,rules,routes,prefix}.nl  the first dump, one file per request,
 *       each ending with the kernel's NLMSG_DONE (or NLMSG_ERROR if the request was refused)
 *   DIR/notify.nl   every notification, in arrival order, no NLMSG_DONE
 *   DIR/steps.txt   "<index of the first message after the step started><TAB><command>";
 *                   a last line "<index><TAB># settle" for what arrived after the last step
 *   DIR/prefix-steps.nl  an RTM_F_PREFIX dump after every line of steps.txt, in that order
 *   DIR/oif-steps.nl  after every line of steps.txt, a strict dump of the routes of each device
 *                   the collector re-reads after that step's messages (RTM_NEWPREFIX,
 *                   RTM_NEWADDR/DELADDR, RTM_NEWNDUSEROPT, RTM_NEWROUTE of a route learned
 *                   from an RA), each ending with its NLMSG_DONE, then an NLMSG_NOOP
 *   DIR/end/...     the second dump, same files as start/
 *   DIR/proc.txt    /proc/net/ipv6_route right after the second dump
 *
 * Dumps are requested as rtsnapd's collector requests them: a non-strict socket (routes
 * include exceptions flagged RTM_F_CLONED, which nlparse drops), AF_INET6 routes, AF_UNSPEC
 * links and nexthop objects, AF_INET6 rules, and RTM_F_PREFIX for the prefix marks.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fib_rules.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "rtsnap/nlparse.h"

#define SETTLE_MS 1000 /* quiet this long before a dump */
#define BUF_SZ (1 << 20)

static char s_buf[BUF_SZ];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "nlnotify: %s: %s\n", what, strerror(err));
	exit(1);
}

static int open_notify(void)
{
	static const unsigned int groups[] = { RTNLGRP_IPV6_ROUTE,  RTNLGRP_LINK,
					       RTNLGRP_NEXTHOP,	    RTNLGRP_IPV6_RULE,
					       RTNLGRP_IPV6_PREFIX, RTNLGRP_IPV6_IFADDR,
					       RTNLGRP_ND_USEROPT };
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

/* Devices the collector would re-read after the current step (collector.c aoifs, roifs). */
static uint32_t s_oifs[64];
static unsigned int s_noifs;

static void want_oif(int ifindex)
{
	for (unsigned int i = 0; i < s_noifs; i++)
		if (s_oifs[i] == (uint32_t)ifindex)
			return;
	if (ifindex > 0 && s_noifs < sizeof(s_oifs) / sizeof(s_oifs[0]))
		s_oifs[s_noifs++] = (uint32_t)ifindex;
}

/* What in message h makes the collector re-read a device's routes. */
static void note_oif(const struct nlmsghdr *h)
{
	static struct nlparse_route pr;

	switch (h->nlmsg_type) {
	case RTM_NEWPREFIX:
		if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct prefixmsg)))
			want_oif(((const struct prefixmsg *)NLMSG_DATA(h))->prefix_ifindex);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg)) &&
		    ((const struct ifaddrmsg *)NLMSG_DATA(h))->ifa_family == AF_INET6)
			want_oif((int)((const struct ifaddrmsg *)NLMSG_DATA(h))->ifa_index);
		break;
	case RTM_NEWNDUSEROPT:
		if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nduseroptmsg)))
			want_oif(((const struct nduseroptmsg *)NLMSG_DATA(h))->nduseropt_ifindex);
		break;
	case RTM_NEWROUTE:
		if (nlparse_route(h, 0, &pr) == 1 && route_ra_shape(&pr.r))
			want_oif((int)pr.r.nh.ifindex);
		break;
	}
}

/*
 * Read what the notification socket holds, appending every message to out (NULL: discard).
 * Returns the number of messages read; dies on overflow (ENOBUFS) or a truncated datagram.
 */
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
			if (out)
				note_oif(h);
			n++;
		}
		if (left)
			die("notification socket: trailing bytes", EBADMSG);
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

	return poll(&p, 1, 0) > 0;
}

/* One dump request; every reply message (NLMSG_DONE or NLMSG_ERROR included) goes to f. */
static void dump_into(int fd, uint16_t type, const void *body, size_t blen, FILE *f,
		      const char *what)
{
	static uint32_t seq = 100;
	struct {
		struct nlmsghdr h;
		char b[64];
	} req;
	int done = 0;

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
				die(what, errno);
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = 1;
		}
	}
}

/* One dump request into the new file dir/name. */
static void dump(int fd, uint16_t type, const void *body, size_t blen, const char *dir,
		 const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		die(path, errno);
	dump_into(fd, type, body, blen, f, path);
	if (fclose(f))
		die(path, errno);
}

/*
 * The RTM_F_PREFIX dump the collector runs as a targeted dump (after a new connected route or
 * an RTM_NEWPREFIX), appended to f: one after every step, so a replay can apply the marks
 * where the collector would have.
 */
static void prefix_dump(FILE *f)
{
	struct rtmsg pfx = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		die("socket", errno);
	dump_into(fd, RTM_GETROUTE, &pfx, sizeof(pfx), f, "prefix-steps.nl");
	close(fd);
}

/*
 * The strict dumps of the devices' routes the collector runs after a step (targeted dumps for
 * addresses and RAs), appended to f, then an NLMSG_NOOP that ends the step.
 */
static void oif_dumps(FILE *f)
{
	struct {
		struct rtmsg rtm;
		struct rtattr a;
		uint32_t oif;
	} req;
	struct nlmsghdr noop = { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_NOOP };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), one = 1;

	if (fd < 0)
		die("socket", errno);
	if (setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one)) < 0)
		die("NETLINK_GET_STRICT_CHK", errno);
	for (unsigned int i = 0; i < s_noifs; i++) {
		memset(&req, 0, sizeof(req));
		req.rtm.rtm_family = AF_INET6;
		req.a.rta_len = RTA_LENGTH(sizeof(uint32_t));
		req.a.rta_type = RTA_OIF;
		req.oif = s_oifs[i];
		dump_into(fd, RTM_GETROUTE, &req, sizeof(req), f, "oif-steps.nl");
	}
	if (fwrite(&noop, 1, sizeof(noop), f) != sizeof(noop))
		die("oif-steps.nl", errno);
	s_noifs = 0;
	close(fd);
}

/* The collector's full dump (collector.c full_dump) plus the rules, into dir. */
static void full_dump(const char *dir)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nhmsg nhm = { .nh_family = AF_UNSPEC };
	struct fib_rule_hdr frh = { .family = AF_INET6 };
	struct rtmsg rtm = { .rtm_family = AF_INET6 };
	struct rtmsg pfx = { .rtm_family = AF_INET6, .rtm_flags = RTM_F_PREFIX };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		die("socket", errno);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die(dir, errno);
	dump(fd, RTM_GETLINK, &ifi, sizeof(ifi), dir, "links.nl");
	dump(fd, RTM_GETNEXTHOP, &nhm, sizeof(nhm), dir, "nexthops.nl");
	dump(fd, RTM_GETRULE, &frh, sizeof(frh), dir, "rules.nl");
	dump(fd, RTM_GETROUTE, &rtm, sizeof(rtm), dir, "routes.nl");
	dump(fd, RTM_GETROUTE, &pfx, sizeof(pfx), dir, "prefix.nl");
	close(fd);
}

/*
 * Run one step, reading notifications into out while it runs. A step written "! CMD" must
 * fail (the kernel's error paths notify too); any other must succeed. Dies otherwise.
 */
static long run_step(int fd, const char *step, FILE *out)
{
	int must_fail = !strncmp(step, "! ", 2);
	const char *cmd = must_fail ? step + 2 : step;
	pid_t pid = fork();
	long n = 0;
	int st;

	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		pid_t w;

		poll(&p, 1, 20);
		n += drain(fd, out);
		w = waitpid(pid, &st, WNOHANG);
		if (w < 0)
			die("waitpid", errno);
		if (w == pid)
			break;
	}
	/* what a synchronous rtnetlink request notifies is queued before it returns */
	n += drain(fd, out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 127 || (WEXITSTATUS(st) != 0) != must_fail) {
		fprintf(stderr, "nlnotify: step %s: %s\n", must_fail ? "did not fail" : "failed",
			cmd);
		exit(1);
	}
	return n;
}

static void copy_file(const char *from, const char *dir, const char *name)
{
	char path[4096];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "wb");
	if (!in || !out)
		die(!in ? from : path, errno);
	while ((n = fread(s_buf, 1, sizeof(s_buf), in)) > 0)
		if (fwrite(s_buf, 1, n, out) != n)
			die(path, errno);
	fclose(in);
	if (fclose(out))
		die(path, errno);
}

static int record(const char *dir, const char *steps)
{
	char path[4096], start[4096], end[4096], line[4096];
	FILE *in = fopen(steps, "r"), *notify, *idx, *pfx, *oifs;
	long nmsg = 0;
	int fd, tries;

	if (!in)
		die(steps, errno);
	snprintf(start, sizeof(start), "%s/start", dir);
	snprintf(end, sizeof(end), "%s/end", dir);
	fd = open_notify();
	for (tries = 0;; tries++) {
		if (tries == 10) {
			fprintf(stderr, "nlnotify: the namespace never held still for a dump\n");
			return 1;
		}
		settle(fd, NULL);
		full_dump(start);
		if (!pending(fd))
			break;
	}
	snprintf(path, sizeof(path), "%s/notify.nl", dir);
	notify = fopen(path, "wb");
	snprintf(path, sizeof(path), "%s/prefix-steps.nl", dir);
	pfx = fopen(path, "wb");
	snprintf(path, sizeof(path), "%s/oif-steps.nl", dir);
	oifs = fopen(path, "wb");
	snprintf(path, sizeof(path), "%s/steps.txt", dir);
	idx = fopen(path, "w");
	if (!notify || !idx || !pfx || !oifs)
		die(path, errno);
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		fprintf(idx, "%ld\t%s\n", nmsg, line);
		nmsg += run_step(fd, line, notify);
		prefix_dump(pfx);
		oif_dumps(oifs);
	}
	fclose(in);
	/* late arrivals (timers, RAs) get a step of their own */
	fprintf(idx, "%ld\t# settle\n", nmsg);
	nmsg += settle(fd, notify);
	prefix_dump(pfx);
	oif_dumps(oifs);
	if (fclose(notify) || fclose(idx) || fclose(pfx) || fclose(oifs))
		die("close", errno);
	full_dump(end);
	copy_file("/proc/net/ipv6_route", dir, "proc.txt");
	if (pending(fd)) {
		fprintf(stderr, "nlnotify: the tables changed during the final dump\n");
		return 1;
	}
	close(fd);
	fprintf(stderr, "nlnotify: %ld notifications recorded in %s\n", nmsg, dir);
	return 0;
}

/* ---- --print ---- */

static const char *type_name(uint16_t t)
{
	switch (t) {
	case RTM_NEWROUTE:
		return "NEWROUTE";
	case RTM_DELROUTE:
		return "DELROUTE";
	case RTM_NEWLINK:
		return "NEWLINK";
	case RTM_DELLINK:
		return "DELLINK";
	case RTM_NEWNEXTHOP:
		return "NEWNEXTHOP";
	case RTM_DELNEXTHOP:
		return "DELNEXTHOP";
	case RTM_NEWRULE:
		return "NEWRULE";
	case RTM_DELRULE:
		return "DELRULE";
	case RTM_NEWPREFIX:
		return "NEWPREFIX";
	case RTM_NEWADDR:
		return "NEWADDR";
	case RTM_DELADDR:
		return "DELADDR";
	case RTM_NEWNDUSEROPT:
		return "NEWNDUSEROPT";
	case NLMSG_NOOP:
		return "NOOP";
	case NLMSG_DONE:
		return "DONE";
	case NLMSG_ERROR:
		return "ERROR";
	default:
		return "?";
	}
}

static void print_hop(const struct route_nh *h)
{
	char gw[INET6_ADDRSTRLEN];

	if (h->has_gw)
		printf(" via %s", inet_ntop(AF_INET6, h->gw, gw, sizeof(gw)));
	printf(" dev#%u", h->ifindex);
	if (h->weight > 1)
		printf(" weight %u", h->weight);
	if (h->flags)
		printf(" nhflags 0x%x", h->flags);
}

static void print_route(const struct nlmsghdr *h)
{
	static struct nlparse_route pr;
	const struct route *r = &pr.r;
	char a[INET6_ADDRSTRLEN];
	int ret = nlparse_route(h, 0, &pr);

	if (ret <= 0) {
		printf(" (%s)", ret ? "malformed" : "not ours");
		return;
	}
	printf(" table %u type %u proto %u %s/%u", r->table, r->type, r->protocol,
	       inet_ntop(AF_INET6, r->dst, a, sizeof(a)), r->dst_len);
	if (r->src_len)
		printf(" from %s/%u", inet_ntop(AF_INET6, r->src, a, sizeof(a)), r->src_len);
	printf(" metric %u", r->metric);
	if (r->nhid)
		printf(" nhid %u", r->nhid);
	if (r->nh_count == 1)
		print_hop(&r->nh);
	for (unsigned int i = 0; r->nh_count > 1 && i < r->nh_count; i++) {
		printf(" nexthop");
		print_hop(&pr.nhs[i]);
	}
	if (r->expires_ms)
		printf(" expires");
	if (r->pref != ROUTE_PREF_NONE)
		printf(" pref %u", r->pref);
}

static void print_msg(const struct nlmsghdr *h)
{
	printf("%s", type_name(h->nlmsg_type));
	if (h->nlmsg_flags & NLM_F_REPLACE)
		printf(" REPLACE");
	if (h->nlmsg_flags & NLM_F_EXCL)
		printf(" EXCL");
	if (h->nlmsg_flags & NLM_F_CREATE)
		printf(" CREATE");
	if (h->nlmsg_flags & NLM_F_APPEND)
		printf(" APPEND");
	if (h->nlmsg_flags & NLM_F_MULTI)
		printf(" MULTI");
	switch (h->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		print_route(h);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		struct route_link l;

		if (nlparse_link(h, &l) == 1)
			printf(" #%u %s flags 0x%x", l.ifindex, l.name, l.flags);
		break;
	}
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP: {
		struct route_nhobj o;
		char a[INET6_ADDRSTRLEN];

		if (nlparse_nexthop(h, &o) != 1)
			break;
		printf(" id %u", o.id);
		if (o.is_group)
			printf(" group first %u", o.first);
		if (o.has_gw)
			printf(" via %s", inet_ntop(AF_INET6, o.gw, a, sizeof(a)));
		if (o.ifindex)
			printf(" dev#%u", o.ifindex);
		if (o.blackhole)
			printf(" blackhole");
		break;
	}
	case RTM_NEWRULE:
	case RTM_DELRULE: {
		const struct fib_rule_hdr *frh = NLMSG_DATA(h);
		const struct rtattr *a;
		uint32_t table;
		size_t left;

		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*frh)))
			break;
		table = frh->table;
		left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*frh));
		for (a = (const struct rtattr *)((const char *)frh + NLMSG_ALIGN(sizeof(*frh)));
		     RTA_OK(a, left); a = RTA_NEXT(a, left))
			if (a->rta_type == FRA_TABLE && RTA_PAYLOAD(a) == sizeof(table))
				memcpy(&table, RTA_DATA(a), sizeof(table));
		printf(" family %u action %u table %u", frh->family, frh->action, table);
		break;
	}
	default:
		break;
	}
	printf("\n");
}

static int print_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t len, left;
	long i = 0;

	if (!f)
		die(path, errno);
	len = fread(s_buf, 1, sizeof(s_buf), f);
	fclose(f);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)s_buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		printf("%ld ", i++);
		print_msg(h);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--print"))
		return print_file(argv[2]);
	if (argc != 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: nlnotify DIR STEPS | nlnotify --print FILE\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) < 0 && errno != EEXIST)
		die(argv[1], errno);
	return record(argv[1], argv[2]);
}
