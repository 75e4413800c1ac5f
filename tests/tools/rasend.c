// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rasend - send one ICMPv6 Router Advertisement (RFC 4861 4.2) to ff02::1 on a device, for the
 * tests of what the kernel announces when an RA refreshes what it learned before
 * (tests/integration/proc_ra_refresh.t). A router daemon sends on its own schedule; this sends
 * exactly one RA, with exactly the options asked for, when the test says so. Root, in the
 * router's namespace; the device needs a link-local address (the source of an RA).
 *
 *   rasend DEV [OPTION]...
 *     --lifetime S          router lifetime in seconds (default 0: not a default router)
 *     --pref high|medium|low   default router preference (default medium)
 *     --hoplimit N          cur hop limit (default 0: unspecified)
 *     --prefix P/L,VALID,PREFERRED[,FLAGS]   a prefix information option; FLAGS of "L"
 *                           (on-link) and "A" (autonomous), default "LA"
 *     --route P/L,LIFETIME[,PREF]   a route information option (RFC 4191), PREF
 *                           high|medium|low (default medium); LIFETIME "inf" = infinite
 *     --rdnss ADDR,LIFETIME a recursive DNS server option (RFC 8106)
 *     --mtu N               an MTU option
 *
 * Exit status 0 when the RA was sent; messages on stderr otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RA_MAX 1280

static unsigned char s_pkt[RA_MAX];
static size_t s_len;

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "rasend: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

/* Room for an option of len8 * 8 bytes, zeroed, with its type and length filled in. */
static unsigned char *opt(uint8_t type, uint8_t len8)
{
	unsigned char *p = s_pkt + s_len;

	if (s_len + (size_t)len8 * 8 > sizeof(s_pkt))
		die("too many options", NULL);
	memset(p, 0, (size_t)len8 * 8);
	p[0] = type;
	p[1] = len8;
	s_len += (size_t)len8 * 8;
	return p;
}

static void put32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t lifetime(const char *s)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "inf"))
		return 0xffffffffu;
	v = strtoul(s, &end, 10);
	if (*end || v > 0xffffffffu)
		die("bad lifetime", s);
	return (uint32_t)v;
}

/* RFC 4191 2.1: high 01, medium 00, low 11 */
static unsigned int pref_bits(const char *s)
{
	if (!strcmp(s, "high"))
		return 1;
	if (!strcmp(s, "medium"))
		return 0;
	if (!strcmp(s, "low"))
		return 3;
	die("bad preference", s);
	return 0;
}

/* "P/L" into a and *plen */
static void prefix(const char *s, struct in6_addr *a, unsigned int *plen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		die("prefix needs /LEN", s);
	*slash = 0;
	*plen = (unsigned int)atoi(slash + 1);
	if (inet_pton(AF_INET6, buf, a) != 1 || *plen > 128)
		die("bad prefix", s);
}

/* Split s at commas into at most n fields; returns how many. */
static int fields(char *s, char **f, int n)
{
	int k = 0;

	while (k < n) {
		f[k++] = s;
		s = strchr(s, ',');
		if (!s)
			break;
		*s++ = 0;
	}
	return k;
}

static void add_prefix(char *arg)
{
	char *f[4];
	int n = fields(arg, f, 4);
	struct in6_addr a;
	unsigned int plen;
	unsigned char *p;

	if (n < 3)
		die("--prefix P/L,VALID,PREFERRED[,FLAGS]", NULL);
	prefix(f[0], &a, &plen);
	p = opt(ND_OPT_PREFIX_INFORMATION, 4);
	p[2] = (uint8_t)plen;
	p[3] = n > 3 ? 0 : 0xc0;
	for (const char *c = n > 3 ? f[3] : ""; *c; c++)
		p[3] |= *c == 'L' ? 0x80 : *c == 'A' ? 0x40 : 0;
	put32(p + 4, lifetime(f[1]));
	put32(p + 8, lifetime(f[2]));
	memcpy(p + 16, &a, 16);
}

static void add_route(char *arg)
{
	char *f[3];
	int n = fields(arg, f, 3);
	struct in6_addr a;
	unsigned int plen;
	unsigned char *p;
	uint8_t len8;

	if (n < 2)
		die("--route P/L,LIFETIME[,PREF]", NULL);
	prefix(f[0], &a, &plen);
	len8 = plen == 0 ? 1 : plen <= 64 ? 2 : 3; /* RFC 4191 2.3 */
	p = opt(24, len8);
	p[2] = (uint8_t)plen;
	p[3] = (uint8_t)(pref_bits(n > 2 ? f[2] : "medium") << 3);
	put32(p + 4, lifetime(f[1]));
	memcpy(p + 8, &a, (size_t)(len8 - 1) * 8);
}

static void add_rdnss(char *arg)
{
	char *f[2];
	struct in6_addr a;
	unsigned char *p;

	if (fields(arg, f, 2) < 2 || inet_pton(AF_INET6, f[0], &a) != 1)
		die("--rdnss ADDR,LIFETIME", NULL);
	p = opt(25, 3);
	put32(p + 4, lifetime(f[1]));
	memcpy(p + 8, &a, 16);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lifetime", required_argument, NULL, 'l' },
		{ "pref", required_argument, NULL, 'p' },
		{ "hoplimit", required_argument, NULL, 'h' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "route", required_argument, NULL, 'r' },
		{ "rdnss", required_argument, NULL, 'd' },
		{ "mtu", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct nd_router_advert *ra = (struct nd_router_advert *)s_pkt;
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 };
	unsigned int ifindex, hops = 255;
	unsigned char *p;
	int c, fd;

	if (argc < 2 || argv[1][0] == '-')
		die("usage: rasend DEV [--lifetime S] [--pref P] [--hoplimit N] [--prefix ...] "
		    "[--route ...] [--rdnss ...] [--mtu N]",
		    NULL);
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex)
		die("no such device", argv[1]);
	memset(ra, 0, sizeof(*ra));
	ra->nd_ra_type = ND_ROUTER_ADVERT;
	s_len = sizeof(*ra);
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			ra->nd_ra_router_lifetime = htons((uint16_t)atoi(optarg));
			break;
		case 'p':
			ra->nd_ra_flags_reserved = (uint8_t)(pref_bits(optarg) << 3);
			break;
		case 'h':
			ra->nd_ra_curhoplimit = (uint8_t)atoi(optarg);
			break;
		case 'P':
			add_prefix(optarg);
			break;
		case 'r':
			add_route(optarg);
			break;
		case 'd':
			add_rdnss(optarg);
			break;
		case 'm':
			p = opt(ND_OPT_MTU, 1);
			put32(p + 4, (uint32_t)atoi(optarg));
			break;
		default:
			die("unknown option", NULL);
		}
	}
	fd = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6); /* the kernel fills in the checksum */
	if (fd < 0)
		die("socket", strerror(errno));
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops)) ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)))
		die("setsockopt", strerror(errno));
	inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
	to.sin6_scope_id = ifindex;
	if (sendto(fd, s_pkt, s_len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)s_len)
		die("sendto", strerror(errno));
	close(fd);
	return 0;
}
