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
 *   DST and GW are IPv6, or both IPv4 (an IPv4 route; EXPIRES is then ignored)
 *   TYPE: unicast (default), unreachable, blackhole, prohibit
 *   EXPIRES: seconds, 0 = permanent
 *
 * Usage: nlload [-r] [-b BATCH]     (-r: NLM_F_REPLACE instead of NLM_F_EXCL)
 * Prints "loaded N errors E" on stderr; exit status 1 if any request failed.
 * Run it inside the namespace: ip netns exec NS nlload < routes.txt
 *
 * Two more modes for bench/bench_churn.sh (see bench/README-churn.md):
 *
 *   nlload -c RATE -T SECONDS [-s SEED] < routes.txt
 *     churn: the routes on stdin must already be in the kernel. For SECONDS,
 *     RATE requests per second change random ones among them, in cycles of
 *     four: replace (nexthop toggled between the line's own and
 *     "dev d1 via 2001:db8:ff01::2", for IPv4 routes "dev d1 via 10.255.1.2"),
 *     replace, delete, add back the deleted
 *     one. Paced on CLOCK_MONOTONIC: every wakeup (at most one per ms) sends
 *     what is due in one sendmsg(). Prints on stdout "churn ready N routes"
 *     once the input is read and the clock starts, then at the end
 *       "churn changes C errors E seconds S rate R".
 *
 *   nlload -p PORT -T SECONDS [-i INTERVAL_MS] [-w POLL_MS] [-x TIMEOUT_MS]
 *          [-k FIRST] [-D DEV]
 *     probe: every INTERVAL_MS (500; each gap drawn from 0.5-1.5 times it, see
 *     probe_gap()) adds a fresh route 2001:db8:a000::/36 + k
 *     (a /64, dev DEV, default d0, table main) and polls
 *     http://[::1]:PORT/routes/lookup?addr=<prefix>::1 on one keep-alive
 *     connection every POLL_MS (2; fractions allowed, at least 0.1) until the answer is
 *     that route, at most
 *     TIMEOUT_MS (10000). Prints on stdout one line per probe,
 *       "probe K PREFIX MS" or "probe K PREFIX timeout",
 *     MS counted from the kernel's ack of the RTM_NEWROUTE. With -4 the probe
 *     routes are IPv4 host routes 10.200.0.0 + k (dev DEV) and the lookup asks
 *     for that address.
 *
 *   nlload -e CLIENTS -p PORT -T SECONDS [-i INTERVAL_MS] [-x TIMEOUT_MS] [-k FIRST]
 *          [-D DEV]
 *     events: opens CLIENTS streams http://[::1]:PORT/events (HTTP/1.0, so the
 *     body is the raw event stream), prints "events ready N" once every one
 *     has its response head, then adds a probe route every INTERVAL_MS as -p
 *     does (0: none, the streams are only held) and reads every stream (one
 *     epoll loop) until each shows the probe's object ("dst":"PREFIX/64").
 *     Prints one line per probe and client, "event K CLIENT MS" or
 *     "event K CLIENT timeout", MS from the kernel's ack, then
 *     "events clients N bytes B closed C" (streams the server ended).
 *
 *   nlload -L -T SECONDS [-i INTERVAL_MS] [-x TIMEOUT_MS] [-k FIRST] [-D DEV]
 *     floor: what the machine alone costs a probe. A thread of nlload blocks in
 *     recv() on a socket joined to the IPv6 route notifications; every
 *     INTERVAL_MS (500) a probe route is added as -p adds it, and the adding
 *     thread spins (as a polling probe keeps its CPU busy) until that thread
 *     has received the route's notification, at most TIMEOUT_MS. Prints
 *     "floor K PREFIX MS" (or "floor K PREFIX timeout"), MS from the kernel's
 *     ack to the listener's return from recv(): negative when the listener ran
 *     before the writer saw its ack.
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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

struct route {
	struct in6_addr dst, gw; /* an IPv4 route's addresses in the first 4 bytes */
	unsigned char family, plen, type, has_gw;
	unsigned table, ifidx, metric, expires;
};

/* Parse one input line into *r. Returns 1 for a route, 0 for a blank or
 * comment line; exits on a malformed line (as the loader always has). */
static int parse_line(char *line, unsigned long lineno, struct route *r)
{
	static char lastdev[IFNAMSIZ + 1] = "";
	static unsigned lastidx;
	char *f[8] = { 0 };
	int nf = 0;
	char *save = NULL;

	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	for (char *t = strtok_r(line, " \t\n", &save); t && nf < 8;
	     t = strtok_r(NULL, " \t\n", &save))
		f[nf++] = t;
	if (nf == 0)
		return 0;
	if (nf < 4) {
		fprintf(stderr, "nlload: line %lu: need DST/PLEN TABLE DEV GW\n", lineno);
		exit(2);
	}

	char *slash = strchr(f[0], '/');
	memset(&r->dst, 0, sizeof(r->dst));
	memset(&r->gw, 0, sizeof(r->gw));
	r->family = strchr(f[0], ':') ? AF_INET6 : AF_INET;
	unsigned maxlen = r->family == AF_INET ? 32 : 128, plen = maxlen;
	if (slash) {
		*slash = '\0';
		plen = (unsigned)atoi(slash + 1);
	}
	int type = parse_type(nf > 6 ? f[6] : NULL);
	if (nf > 7 || inet_pton(r->family, f[0], &r->dst) != 1 || plen > maxlen || type < 0) {
		fprintf(stderr, "nlload: line %lu: bad route\n", lineno);
		exit(2);
	}
	r->plen = (unsigned char)plen;
	r->type = (unsigned char)type;
	r->table = (unsigned)strtoul(f[1], NULL, 10);
	r->ifidx = 0;
	if (strcmp(f[2], "-")) {
		if (strcmp(f[2], lastdev)) {
			lastidx = if_nametoindex(f[2]);
			if (!lastidx) {
				fprintf(stderr, "nlload: line %lu: no device %s\n", lineno, f[2]);
				exit(2);
			}
			snprintf(lastdev, sizeof(lastdev), "%s", f[2]);
		}
		r->ifidx = lastidx;
	}
	r->has_gw = strcmp(f[3], "-") != 0;
	if (r->has_gw && inet_pton(r->family, f[3], &r->gw) != 1) {
		fprintf(stderr, "nlload: line %lu: bad gateway\n", lineno);
		exit(2);
	}
	r->metric = nf > 4 ? (unsigned)strtoul(f[4], NULL, 10) : 0;
	r->expires = nf > 5 && r->family == AF_INET6 ? (unsigned)strtoul(f[5], NULL, 10) : 0;
	return 1;
}

/* Append one request for *r to the batch buffer (flushing it first when it
 * is full). RTM_DELROUTE names only the table, destination and metric, so
 * it matches the route whatever its nexthop is now. */
static void put_route(unsigned short msgtype, unsigned flags, const struct route *r, unsigned batch)
{
	if (s_len + 256 > BUFSZ || s_inflight >= batch)
		flush();
	struct nlmsghdr *n = (struct nlmsghdr *)(s_buf + s_len);
	memset(n, 0, 256);
	n->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	n->nlmsg_type = msgtype;
	n->nlmsg_flags = (unsigned short)flags;
	n->nlmsg_seq = s_seq++;
	struct rtmsg *rtm = NLMSG_DATA(n);
	size_t alen = r->family == AF_INET ? 4 : 16;
	rtm->rtm_family = r->family;
	rtm->rtm_dst_len = r->plen;
	rtm->rtm_table = r->table < 256 ? (unsigned char)r->table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = r->type;
	if (r->plen)
		addattr(n, RTA_DST, &r->dst, alen);
	if (r->table >= 256)
		addattr(n, RTA_TABLE, &r->table, sizeof(r->table));
	if (msgtype == RTM_NEWROUTE) {
		if (r->ifidx)
			addattr(n, RTA_OIF, &r->ifidx, sizeof(r->ifidx));
		if (r->has_gw)
			addattr(n, RTA_GATEWAY, &r->gw, alen);
	}
	if (r->metric)
		addattr(n, RTA_PRIORITY, &r->metric, sizeof(r->metric));
	if (msgtype == RTM_NEWROUTE && r->expires)
		addattr(n, RTA_EXPIRES, &r->expires, sizeof(r->expires));
	s_len += NLMSG_ALIGN(n->nlmsg_len);
	s_inflight++;
}

static int open_socket(void)
{
	int sz = 4 * 1024 * 1024, one = 1;

	s_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s_fd < 0) {
		perror("nlload: socket");
		return -1;
	}
	setsockopt(s_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	setsockopt(s_fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	/* Errors only carry the header back, not the whole request. */
	setsockopt(s_fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

/* Probe k's prefix: 2001:db8:a<k>::/64 (k below 2^28), outside every generated route. */
static void probe_prefix(struct in6_addr *a, unsigned long k)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[0] = 0x20;
	a->s6_addr[1] = 0x01;
	a->s6_addr[2] = 0x0d;
	a->s6_addr[3] = 0xb8;
	a->s6_addr[4] = (unsigned char)(0xa0 | ((k >> 24) & 0x0f));
	a->s6_addr[5] = (unsigned char)(k >> 16);
	a->s6_addr[6] = (unsigned char)(k >> 8);
	a->s6_addr[7] = (unsigned char)k;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * The spacing of probes: INTERVAL_MS on average, drawn uniformly from half to one and a half
 * times it. Evenly spaced probes lock in phase with whatever the machine does periodically
 * (a kdamond sampling every 500 ms on the VMs this was measured on made every other probe of
 * a 500 ms cadence wait 2-3 ms for its reader's wake-up, and none at other cadences).
 */
static uint64_t s_jit = 0x853c49e6748fea9bULL;

static double probe_gap(unsigned interval_ms)
{
	s_jit ^= s_jit >> 12;
	s_jit ^= s_jit << 25;
	s_jit ^= s_jit >> 27;
	return interval_ms / 1000.0 *
	       (0.5 + (double)((s_jit * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0);
}

/* ------------------------------------------------------------ churn mode */

static uint64_t s_rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64* */
	s_rng ^= s_rng >> 12;
	s_rng ^= s_rng << 25;
	s_rng ^= s_rng >> 27;
	return s_rng * 0x2545f4914f6cdd1dULL;
}

static int churn(double rate, double seconds)
{
	const unsigned flags_rep = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	const unsigned flags_add = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	const unsigned flags_del = NLM_F_REQUEST | NLM_F_ACK;
	struct route *rt = NULL, alt;
	unsigned char *toggled;
	size_t n = 0, cap = 0, gone = (size_t)-1;
	unsigned long lineno = 0, ops = 0;
	char line[512];

	while (fgets(line, sizeof(line), stdin)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			rt = realloc(rt, cap * sizeof(*rt));
			if (!rt) {
				fprintf(stderr, "nlload: out of memory\n");
				return 2;
			}
		}
		if (parse_line(line, ++lineno, &rt[n]))
			n++;
	}
	toggled = calloc(n ? n : 1, 1);
	if (!n || !toggled || rate <= 0) {
		fprintf(stderr, "nlload: churn needs routes on stdin and a rate > 0\n");
		return 2;
	}
	unsigned alt_if = if_nametoindex("d1");
	struct in6_addr alt_gw, alt_gw4 = { 0 };
	inet_pton(AF_INET6, "2001:db8:ff01::2", &alt_gw);
	inet_pton(AF_INET, "10.255.1.2", &alt_gw4);
	if (!alt_if) {
		fprintf(stderr, "nlload: churn needs device d1\n");
		return 2;
	}

	printf("churn ready %zu routes\n", n); /* the caller may start its clock now */
	fflush(stdout);
	double t0 = now_s(), end = t0 + seconds, t;
	while ((t = now_s()) < end) {
		unsigned long due = (unsigned long)((t - t0) * rate);

		if (due > ops + MAXREQ)
			due = ops + MAXREQ; /* one batch per wakeup; the rest next loop */
		for (; ops < due; ops++) {
			size_t i;
			const struct route *r;

			switch (ops % 4) {
			case 0:
			case 1: /* replace: toggle the nexthop */
				do
					i = (size_t)(rng() % n);
				while (i == gone);
				toggled[i] ^= 1;
				r = &rt[i];
				if (toggled[i]) {
					alt = rt[i];
					alt.ifidx = alt_if;
					alt.gw = alt.family == AF_INET ? alt_gw4 : alt_gw;
					alt.has_gw = 1;
					r = &alt;
				}
				put_route(RTM_NEWROUTE, flags_rep, r, MAXREQ);
				break;
			case 2: /* delete */
				gone = (size_t)(rng() % n);
				put_route(RTM_DELROUTE, flags_del, &rt[gone], MAXREQ);
				break;
			default: /* add the deleted route back, as it was */
				alt = rt[gone];
				if (toggled[gone]) {
					alt.ifidx = alt_if;
					alt.gw = alt.family == AF_INET ? alt_gw4 : alt_gw;
					alt.has_gw = 1;
				}
				put_route(RTM_NEWROUTE, flags_add, &alt, MAXREQ);
				gone = (size_t)-1;
				break;
			}
		}
		flush();
		double next = t0 + (double)(ops + 1) / rate, soon = now_s() + 0.001;
		sleep_until(next > soon ? next : soon);
	}
	t = now_s();
	if (gone != (size_t)-1) { /* leave every route in place */
		alt = rt[gone];
		if (toggled[gone]) {
			alt.ifidx = alt_if;
			alt.gw = alt.family == AF_INET ? alt_gw4 : alt_gw;
			alt.has_gw = 1;
		}
		put_route(RTM_NEWROUTE, flags_add, &alt, MAXREQ);
		flush();
		ops++;
	}
	printf("churn changes %lu errors %lu seconds %.3f rate %.1f\n", ops, s_errors, t - t0,
	       (double)ops / (t - t0));
	free(rt);
	free(toggled);
	return s_errors ? 1 : 0;
}

/* ------------------------------------------------------------ floor mode */

static int s_lfd = -1;			 /* the listener's socket */
static struct in6_addr s_want;		 /* the probe route it waits for (main writes) */
static unsigned long s_want_gen, s_seen_gen; /* atomics: asked for, seen */
static double s_seen_at;		 /* when it was seen (before s_seen_gen is stored) */

/* Whether the datagram buf[0..len) announces the route to want/64. */
static int announces(const char *buf, size_t len, const struct in6_addr *want)
{
	for (const struct nlmsghdr *h = (const void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		const struct rtmsg *rtm = NLMSG_DATA(h);
		size_t alen;

		if (h->nlmsg_type != RTM_NEWROUTE || rtm->rtm_dst_len != 64)
			continue;
		alen = RTM_PAYLOAD(h);
		for (const struct rtattr *a = RTM_RTA(rtm); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 16 &&
			    !memcmp(RTA_DATA(a), want, 16))
				return 1;
	}
	return 0;
}

static void *listener(void *arg)
{
	static char buf[BUFSZ];

	(void)arg;
	for (;;) {
		ssize_t r = recv(s_lfd, buf, sizeof(buf), 0);
		double t = now_s();
		unsigned long g = __atomic_load_n(&s_want_gen, __ATOMIC_ACQUIRE);
		struct in6_addr want;

		if (r < 0 && errno != EINTR && errno != ENOBUFS)
			return NULL;
		if (r <= 0 || g == __atomic_load_n(&s_seen_gen, __ATOMIC_RELAXED))
			continue;
		memcpy(&want, &s_want, sizeof(want));
		if (announces(buf, (size_t)r, &want)) {
			s_seen_at = t;
			__atomic_store_n(&s_seen_gen, g, __ATOMIC_RELEASE);
		}
	}
}

static int floor_probe(double seconds, unsigned interval_ms, unsigned timeout_ms,
		       unsigned long first, const char *dev)
{
	const unsigned flags_add = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct route r = { .family = AF_INET6, .plen = 64, .type = RTN_UNICAST,
			   .table = RT_TABLE_MAIN };
	unsigned group = RTNLGRP_IPV6_ROUTE;
	unsigned long k = first, done = 0, late = 0;
	char pfx[INET6_ADDRSTRLEN];
	pthread_t th;

	r.ifidx = if_nametoindex(dev);
	if (!r.ifidx) {
		fprintf(stderr, "nlload: floor: no device %s\n", dev);
		return 2;
	}
	s_lfd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s_lfd < 0 || bind(s_lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(s_lfd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0 ||
	    pthread_create(&th, NULL, listener, NULL)) {
		perror("nlload: floor: listener");
		return 2;
	}
	double t0 = now_s(), end = t0 + seconds;
	double at = t0;
	for (unsigned long p = 0; at < end; p++, k++, at += probe_gap(interval_ms)) {
		sleep_until(at);
		probe_prefix(&r.dst, k);
		inet_ntop(AF_INET6, &r.dst, pfx, sizeof(pfx));
		memcpy(&s_want, &r.dst, sizeof(s_want));
		__atomic_store_n(&s_want_gen, p + 1, __ATOMIC_RELEASE);

		unsigned long before = s_errors;
		put_route(RTM_NEWROUTE, flags_add, &r, 1);
		flush();
		double ta = now_s(), t = ta;
		if (s_errors != before) {
			printf("floor %lu %s/64 add-failed\n", k, pfx);
			continue;
		}
		while (__atomic_load_n(&s_seen_gen, __ATOMIC_ACQUIRE) != p + 1 &&
		       (t = now_s()) - ta < timeout_ms / 1000.0)
			;
		if (__atomic_load_n(&s_seen_gen, __ATOMIC_ACQUIRE) == p + 1)
			printf("floor %lu %s/64 %.3f\n", k, pfx, (s_seen_at - ta) * 1000.0);
		else {
			printf("floor %lu %s/64 timeout\n", k, pfx);
			late++;
		}
		fflush(stdout);
		done++;
	}
	sleep_until(end);
	fprintf(stderr, "nlload: floor probes %lu timeouts %lu\n", done, late);
	return 0;
}

/* ------------------------------------------------------------ probe mode */

/* One GET on a keep-alive connection to [::1]:port (reconnecting when
 * needed). Returns the body length (body in buf, NUL-terminated) or -1. */
static int http_get(int *fd, unsigned port, const char *path, char *buf, size_t cap)
{
	char req[256];
	int len =
	    snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: [::1]\r\nConnection: keep-alive\r\n\r\n", path);

	for (int attempt = 0; attempt < 2; attempt++) {
		if (*fd < 0) {
			struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
						   .sin6_port = htons((uint16_t)port),
						   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
			*fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (*fd < 0 || connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				goto again;
		}
		if (send(*fd, req, (size_t)len, MSG_NOSIGNAL) != len)
			goto again;
		size_t got = 0;
		char *body = NULL;
		long clen = -1;
		while (!body || (long)(got - (size_t)(body - buf)) < clen) {
			struct pollfd pfd = { .fd = *fd, .events = POLLIN };
			if (got + 1 >= cap || poll(&pfd, 1, 2000) != 1)
				goto again;
			ssize_t r = recv(*fd, buf + got, cap - 1 - got, 0);
			if (r <= 0)
				goto again;
			got += (size_t)r;
			buf[got] = '\0';
			if (!body) {
				char *e = strstr(buf, "\r\n\r\n");
				if (!e)
					continue;
				body = e + 4;
				char *c = strcasestr(buf, "\r\nContent-Length:");
				if (!c || c > e)
					goto again; /* rtsnapd sends a length for these */
				clen = strtol(c + 17, NULL, 10);
			}
		}
		len = (int)clen;
		memmove(buf, body, (size_t)clen);
		buf[clen] = '\0';
		return len;
	again:
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	return -1;
}

static int probe(unsigned port, double seconds, unsigned interval_ms, double poll_ms,
		 unsigned timeout_ms, unsigned long first, const char *dev, int v4)
{
	const unsigned flags_add = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	static char body[64 * 1024];
	struct route r = { .family = AF_INET6, .plen = 64, .type = RTN_UNICAST,
			   .table = RT_TABLE_MAIN };
	char pfx[INET6_ADDRSTRLEN], want[INET6_ADDRSTRLEN + 16], path[128];
	int fd = -1;
	unsigned long k = first, done = 0, late = 0;

	r.ifidx = if_nametoindex(dev);
	if (!r.ifidx) {
		fprintf(stderr, "nlload: probe: no device %s\n", dev);
		return 2;
	}
	double t0 = now_s(), end = t0 + seconds;
	double at = t0;
	for (unsigned long p = 0; at < end; p++, k++, at += probe_gap(interval_ms)) {
		sleep_until(at);
		if (v4) { /* 10.200.0.0 + k, a host route: ip -j prints it without /32 */
			uint32_t a = htonl(0x0ac80000u + (uint32_t)(k & 0xffff));

			memset(&r.dst, 0, sizeof(r.dst));
			memcpy(&r.dst, &a, 4);
			r.family = AF_INET;
			r.plen = 32;
			inet_ntop(AF_INET, &a, pfx, sizeof(pfx));
			snprintf(want, sizeof(want), "\"dst\":\"%s\"", pfx);
			snprintf(path, sizeof(path), "/routes/lookup?addr=%s", pfx);
		} else {
			probe_prefix(&r.dst, k);
			inet_ntop(AF_INET6, &r.dst, pfx, sizeof(pfx));
			snprintf(want, sizeof(want), "\"dst\":\"%s/64\"", pfx);
			/* the low 64 bits are zero, so pfx ends in "::": ask for <prefix>::1 */
			snprintf(path, sizeof(path), "/routes/lookup?addr=%s1", pfx);
		}

		unsigned long before = s_errors;
		put_route(RTM_NEWROUTE, flags_add, &r, 1);
		flush();
		double ta = now_s();
		if (s_errors != before) {
			printf("probe %lu %s/%u add-failed\n", k, pfx, r.plen);
			continue;
		}
		int seen = 0;
		double t = ta;
		for (unsigned long i = 0; t - ta < timeout_ms / 1000.0; i++) {
			int len = http_get(&fd, port, path, body, sizeof(body));
			t = now_s();
			if (len > 0 && strstr(body, want)) {
				seen = 1;
				break;
			}
			double next = ta + (double)(i + 1) * poll_ms / 1000.0;
			sleep_until(next > t + 0.0002 ? next : t + 0.0002);
			t = now_s();
		}
		if (seen)
			printf("probe %lu %s/%u %.3f\n", k, pfx, r.plen, (t - ta) * 1000.0);
		else {
			printf("probe %lu %s/%u timeout\n", k, pfx, r.plen);
			late++;
		}
		fflush(stdout);
		done++;
	}
	if (fd >= 0)
		close(fd);
	sleep_until(end); /* the window is SECONDS long even when the last probe was quick */
	fprintf(stderr, "nlload: probes %lu timeouts %lu\n", done, late);
	return 0;
}

/* ------------------------------------------------------------ events mode */

#define EV_MAXPROBES 4096
#define EV_PATMAX 80

struct ev_client {
	int fd;
	int head_done, closed;
	unsigned long next;	  /* first probe not seen yet */
	char tail[2 * EV_PATMAX]; /* the last bytes read, for a pattern cut by a read */
	size_t ntail;
	char hbuf[1024];
	size_t nh;
	unsigned long long bytes;
};

static int ev_connect(unsigned port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	static const char req[] = "GET /events HTTP/1.0\r\nHost: [::1]\r\n\r\n";
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(req) - 1)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static char s_pat[EV_MAXPROBES][EV_PATMAX];
static double s_pat_t[EV_MAXPROBES];
static unsigned long s_npat;

/* Look for the client's pending probes in data[0..n) (after its tail). */
static void ev_scan(struct ev_client *c, unsigned ci, const char *data, size_t n, double t)
{
	static char buf[2 * EV_PATMAX + 65536];
	size_t len = c->ntail, from = 0;

	memcpy(buf, c->tail, c->ntail);
	memcpy(buf + len, data, n);
	len += n;
	while (c->next < s_npat) {
		const char *hit = memmem(buf + from, len - from, s_pat[c->next], strlen(s_pat[c->next]));

		if (!hit)
			break;
		printf("event %lu %u %.3f\n", c->next, ci, (t - s_pat_t[c->next]) * 1000.0);
		from = (size_t)(hit - buf) + 1;
		c->next++;
	}
	c->ntail = len < EV_PATMAX ? len : EV_PATMAX;
	memcpy(c->tail, buf + len - c->ntail, c->ntail);
}

static int events(unsigned nclients, unsigned port, double seconds, unsigned interval_ms,
		  unsigned timeout_ms, unsigned long first, const char *dev)
{
	const unsigned flags_add = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	struct ev_client *cl = calloc(nclients ? nclients : 1, sizeof(*cl));
	struct epoll_event evs[256];
	struct route r = { .family = AF_INET6, .plen = 64, .type = RTN_UNICAST, .table = RT_TABLE_MAIN };
	static char rbuf[65536];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	unsigned ready = 0, closed = 0;
	unsigned long long bytes = 0;
	double t0, end, next_probe, t;
	unsigned long k = first;

	r.ifidx = if_nametoindex(dev);
	if (!cl || ep < 0 || (interval_ms && !r.ifidx)) {
		fprintf(stderr, "nlload: events: no device %s or no memory\n", dev);
		return 2;
	}
	for (unsigned i = 0; i < nclients; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		cl[i].fd = ev_connect(port);
		if (cl[i].fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &e) < 0) {
			fprintf(stderr, "nlload: events: cannot open stream %u\n", i);
			return 2;
		}
	}
	t0 = now_s();
	end = t0 + seconds;
	next_probe = -1;
	for (;;) {
		int n, wait_ms;

		t = now_s();
		if (ready == nclients && next_probe < 0) {
			printf("events ready %u\n", nclients);
			fflush(stdout);
			t0 = t;
			end = t0 + seconds;
			next_probe = interval_ms ? t0 : end + 1e9;
		}
		if (next_probe >= 0 && t >= next_probe && t < end && s_npat < EV_MAXPROBES) {
			unsigned long before = s_errors;

			probe_prefix(&r.dst, k);
			{
				char pfx[INET6_ADDRSTRLEN];

				inet_ntop(AF_INET6, &r.dst, pfx, sizeof(pfx));
				snprintf(s_pat[s_npat], EV_PATMAX, "\"dst\":\"%s/64\"", pfx);
			}
			put_route(RTM_NEWROUTE, flags_add, &r, 1);
			flush();
			s_pat_t[s_npat] = now_s();
			if (s_errors == before)
				s_npat++;
			k++;
			next_probe += probe_gap(interval_ms);
		}
		if (next_probe >= 0 && t >= end) {
			/* the window is over: wait for the last probes, at most the timeout */
			int pending = 0;

			for (unsigned i = 0; i < nclients; i++)
				pending |= !cl[i].closed && cl[i].next < s_npat;
			if (!pending || t >= end + timeout_ms / 1000.0)
				break;
		}
		wait_ms = 10;
		n = epoll_wait(ep, evs, 256, wait_ms);
		t = now_s();
		for (int e = 0; e < n; e++) {
			unsigned ci = evs[e].data.u32;
			struct ev_client *c = &cl[ci];
			ssize_t got = recv(c->fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);

			if (got <= 0) {
				if (got < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				c->closed = 1;
				closed++;
				if (!c->head_done)
					ready++;
				continue;
			}
			c->bytes += (unsigned long long)got;
			bytes += (unsigned long long)got;
			if (!c->head_done) {
				size_t take = (size_t)got < sizeof(c->hbuf) - 1 - c->nh
						  ? (size_t)got
						  : sizeof(c->hbuf) - 1 - c->nh;
				char *eoh;

				memcpy(c->hbuf + c->nh, rbuf, take);
				c->nh += take;
				c->hbuf[c->nh] = 0;
				eoh = strstr(c->hbuf, "\r\n\r\n");
				if (!eoh)
					continue;
				c->head_done = 1;
				ready++;
				if (strncmp(c->hbuf, "HTTP/1.1 200", 12) && strncmp(c->hbuf, "HTTP/1.0 200", 12))
					fprintf(stderr, "nlload: events: stream %u: %.40s\n", ci, c->hbuf);
				continue; /* the first bytes are the start of the stream, no probe yet */
			}
			ev_scan(c, ci, rbuf, (size_t)got, t);
		}
	}
	for (unsigned i = 0; i < nclients; i++) {
		for (unsigned long p = cl[i].next; p < s_npat; p++)
			printf("event %lu %u timeout\n", p, i);
		if (!cl[i].closed)
			close(cl[i].fd);
	}
	printf("events clients %u bytes %llu closed %u probes %lu\n", nclients, bytes, closed,
	       s_npat);
	free(cl);
	close(ep);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	unsigned batch = MAXREQ, port = 0, interval_ms = 500, timeout_ms = 10000;
	double poll_ms = 2;
	double rate = 0, seconds = 0;
	unsigned long first = 0;
	const char *dev = "d0";
	char line[512];
	unsigned long lineno = 0;
	int opt;

	unsigned nclients = 0;
	int ev_mode = 0, v4 = 0, floor_mode = 0;

	while ((opt = getopt(argc, argv, "4Lrb:c:T:s:p:i:w:x:k:D:e:")) != -1) {
		if (opt == '4')
			v4 = 1;
		else if (opt == 'L')
			floor_mode = 1;
		else if (opt == '4')
			v4 = 1;
		else if (opt == 'r')
			flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
		else if (opt == 'b')
			batch = (unsigned)atoi(optarg);
		else if (opt == 'c')
			rate = atof(optarg);
		else if (opt == 'T')
			seconds = atof(optarg);
		else if (opt == 's')
			s_rng = strtoull(optarg, NULL, 0) | 1;
		else if (opt == 'p')
			port = (unsigned)atoi(optarg);
		else if (opt == 'i')
			interval_ms = (unsigned)atoi(optarg);
		else if (opt == 'w')
			poll_ms = atof(optarg);
		else if (opt == 'x')
			timeout_ms = (unsigned)atoi(optarg);
		else if (opt == 'k')
			first = strtoul(optarg, NULL, 0);
		else if (opt == 'D')
			dev = optarg;
		else if (opt == 'e') {
			nclients = (unsigned)atoi(optarg);
			ev_mode = 1;
		}
		else {
			fprintf(
			    stderr,
			    "usage: nlload [-r] [-b BATCH] < routes\n"
			    "       nlload -c RATE -T SECONDS [-s SEED] < routes\n"
			    "       nlload -p PORT -T SECONDS [-4] [-i MS] [-w MS] [-x MS] [-k FIRST] "
			    "[-D DEV]\n"
			    "       nlload -e CLIENTS -p PORT -T SECONDS [-i MS] [-x MS] [-k FIRST] "
			    "[-D DEV]\n"
			    "       nlload -L -T SECONDS [-i MS] [-x MS] [-k FIRST] [-D DEV]\n");
			return 2;
		}
	}
	if (batch < 1 || batch > MAXREQ)
		batch = MAXREQ;
	if (interval_ms < 1 && !ev_mode)
		interval_ms = 1;
	if (poll_ms < 0.1)
		poll_ms = 0.1;

	if (open_socket() < 0)
		return 2;
	if (rate > 0)
		return churn(rate, seconds);
	if (floor_mode)
		return floor_probe(seconds, interval_ms, timeout_ms, first, dev);
	if (ev_mode && port)
		return events(nclients, port, seconds, interval_ms, timeout_ms, first, dev);
	if (port)
		return probe(port, seconds, interval_ms, poll_ms, timeout_ms, first, dev, v4);

	while (fgets(line, sizeof(line), stdin)) {
		struct route r;

		if (parse_line(line, ++lineno, &r))
			put_route(RTM_NEWROUTE, flags, &r, batch);
	}
	flush();
	fprintf(stderr, "nlload: loaded %lu errors %lu\n", s_loaded, s_errors);
	return s_errors ? 1 : 0;
}
