/*
 * nlload: bulk-load IPv6 routes over rtnetlink, many requests per sendmsg().
 *
 * Benchmark helper for bench/lib.sh, not part of rtsnapd. Reads one route per
 * line on stdin and sends RTM_NEWROUTE requests in batches (each request
 * carries NLM_F_ACK; the kernel processes a whole batch inside one sendmsg()
 * and queues the acks, which are then drained and checked). Compared with
 * `ip -batch` this saves one sendmsg+recvmsg pair and iproute2's per-line
 * parsing and heap growth per route.
 *
 * Input line (whitespace separated, '#' starts a comment):
 *   DST/PLEN TABLE DEV GW|- [METRIC [EXPIRES [TYPE]]]
 *   TYPE: unicast (default), unreachable, blackhole, prohibit
 *   EXPIRES: seconds, 0 = permanent
 *
 * Usage: nlload [-r] [-b BATCH]     (-r: NLM_F_REPLACE instead of NLM_F_EXCL)
 * Prints "loaded N errors E" on stderr; exit status 1 if any request failed.
 * Run it inside the namespace: ip netns exec NS nlload < routes.txt
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUFSZ (64 * 1024)
#define MAXREQ 256

static char s_buf[BUFSZ];
static size_t s_len;
static unsigned s_inflight;
static unsigned s_seq = 1;
static unsigned long s_loaded, s_errors;
static int s_fd;

static void addattr(struct nlmsghdr *n, unsigned short type, const void *data, size_t alen)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(alen);
	memcpy(RTA_DATA(rta), data, alen);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void drain(void)
{
	static char rbuf[256 * 1024];

	while (s_inflight > 0) {
		ssize_t r = recv(s_fd, rbuf, sizeof(rbuf), 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("nlload: recv");
			exit(2);
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)r);
		     h = NLMSG_NEXT(h, r)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			struct nlmsgerr *e = NLMSG_DATA(h);

			s_inflight--;
			if (e->error) {
				if (s_errors < 10)
					fprintf(stderr, "nlload: seq %u: %s\n", e->msg.nlmsg_seq,
						strerror(-e->error));
				s_errors++;
			} else {
				s_loaded++;
			}
		}
	}
}

static void flush(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (!s_len)
		return;
	while (sendto(s_fd, s_buf, s_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		perror("nlload: sendto");
		exit(2);
	}
	s_len = 0;
	drain();
}

static int parse_type(const char *t)
{
	if (!t || !strcmp(t, "unicast"))
		return RTN_UNICAST;
	if (!strcmp(t, "unreachable"))
		return RTN_UNREACHABLE;
	if (!strcmp(t, "blackhole"))
		return RTN_BLACKHOLE;
	if (!strcmp(t, "prohibit"))
		return RTN_PROHIBIT;
	return -1;
}

int main(int argc, char **argv)
{
	unsigned flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	unsigned batch = MAXREQ;
	char line[512];
	unsigned long lineno = 0;
	int opt, sz = 4 * 1024 * 1024;
	char lastdev[IFNAMSIZ + 1] = "";
	unsigned lastidx = 0;

	while ((opt = getopt(argc, argv, "rb:")) != -1) {
		if (opt == 'r')
			flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
		else if (opt == 'b')
			batch = (unsigned)atoi(optarg);
		else {
			fprintf(stderr, "usage: nlload [-r] [-b BATCH] < routes\n");
			return 2;
		}
	}
	if (batch < 1 || batch > MAXREQ)
		batch = MAXREQ;

	s_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s_fd < 0) {
		perror("nlload: socket");
		return 2;
	}
	setsockopt(s_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	/* Errors only carry the header back, not the whole request. */
	int one = 1;
	setsockopt(s_fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	while (fgets(line, sizeof(line), stdin)) {
		char *f[8] = { 0 };
		int nf = 0;
		char *save = NULL;

		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (char *t = strtok_r(line, " \t\n", &save); t && nf < 8;
		     t = strtok_r(NULL, " \t\n", &save))
			f[nf++] = t;
		if (nf == 0)
			continue;
		if (nf < 4) {
			fprintf(stderr, "nlload: line %lu: need DST/PLEN TABLE DEV GW\n", lineno);
			return 2;
		}

		char *slash = strchr(f[0], '/');
		unsigned plen = 128;
		struct in6_addr dst, gw;
		if (slash) {
			*slash = '\0';
			plen = (unsigned)atoi(slash + 1);
		}
		int type = parse_type(nf > 6 ? f[6] : NULL);
		if (nf > 7 || inet_pton(AF_INET6, f[0], &dst) != 1 || plen > 128 || type < 0) {
			fprintf(stderr, "nlload: line %lu: bad route\n", lineno);
			return 2;
		}
		unsigned table = (unsigned)strtoul(f[1], NULL, 10);
		unsigned ifidx = 0;
		if (strcmp(f[2], "-")) {
			if (strcmp(f[2], lastdev)) {
				lastidx = if_nametoindex(f[2]);
				if (!lastidx) {
					fprintf(stderr, "nlload: line %lu: no device %s\n", lineno, f[2]);
					return 2;
				}
				snprintf(lastdev, sizeof(lastdev), "%s", f[2]);
			}
			ifidx = lastidx;
		}
		int has_gw = strcmp(f[3], "-") != 0;
		if (has_gw && inet_pton(AF_INET6, f[3], &gw) != 1) {
			fprintf(stderr, "nlload: line %lu: bad gateway\n", lineno);
			return 2;
		}
		unsigned metric = nf > 4 ? (unsigned)strtoul(f[4], NULL, 10) : 0;
		unsigned expires = nf > 5 ? (unsigned)strtoul(f[5], NULL, 10) : 0;

		if (s_len + 256 > BUFSZ || s_inflight >= batch)
			flush();
		struct nlmsghdr *n = (struct nlmsghdr *)(s_buf + s_len);
		memset(n, 0, 256);
		n->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
		n->nlmsg_type = RTM_NEWROUTE;
		n->nlmsg_flags = (unsigned short)flags;
		n->nlmsg_seq = s_seq++;
		struct rtmsg *rtm = NLMSG_DATA(n);
		rtm->rtm_family = AF_INET6;
		rtm->rtm_dst_len = (unsigned char)plen;
		rtm->rtm_table = table < 256 ? (unsigned char)table : RT_TABLE_UNSPEC;
		rtm->rtm_protocol = RTPROT_BOOT;
		rtm->rtm_scope = RT_SCOPE_UNIVERSE;
		rtm->rtm_type = (unsigned char)type;
		addattr(n, RTA_DST, &dst, sizeof(dst));
		if (table >= 256)
			addattr(n, RTA_TABLE, &table, sizeof(table));
		if (ifidx)
			addattr(n, RTA_OIF, &ifidx, sizeof(ifidx));
		if (has_gw)
			addattr(n, RTA_GATEWAY, &gw, sizeof(gw));
		if (metric)
			addattr(n, RTA_PRIORITY, &metric, sizeof(metric));
		if (expires)
			addattr(n, RTA_EXPIRES, &expires, sizeof(expires));
		s_len += NLMSG_ALIGN(n->nlmsg_len);
		s_inflight++;
	}
	flush();
	fprintf(stderr, "nlload: loaded %lu errors %lu\n", s_loaded, s_errors);
	return s_errors ? 1 : 0;
}
