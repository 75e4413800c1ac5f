// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * silent.c - re-reads for what the kernel changes without a message (see silent.h).
 *
 * Thread: the collector's only. Owns its queue and the sysctl's file descriptor.
 *
 * net.ipv4.nexthop_compat_mode (it applies to IPv6 routes too) decides whether the messages
 * of routes over nexthop objects carry the objects' gateways and devices; switching it sends
 * nothing. The file is opened once in the daemon's network namespace (a sysctl file shows
 * the namespace of whoever opened it) and read again with pread() at offset 0, once a second,
 * only while the mirror has nexthop objects: without them the value changes no message.
 *
 * The expiring routes are checked from the published snapshot's own index of them (ordered by
 * deadline): a round queues the distinct (table, device, protocol) of up to EXP_BATCH of
 * them, so finding what to read costs in proportion to the expiring routes and nothing at
 * all when none expire. The kernel cannot be asked for one route by table and metric
 * (RTM_GETROUTE looks an address up through the rules and returns the best match), so each
 * is read with a strict dump filtered on those three; its cost in the kernel is a walk of
 * the table (about 65 ms at 500 000 routes here), which is why rounds are spaced at least
 * twenty times their own duration.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtsnap/array.h"
#include "rtsnap/silent.h"

#define COMPAT_SYSCTL "/proc/sys/net/ipv4/nexthop_compat_mode"
#define COMPAT_POLL_MS 1000
#define EXP_BATCH 64 /* distinct re-reads queued per expiring round */

static int read_compat(int fd);

void silent_init(struct silent *s, unsigned int exp_period_ms)
{
	memset(s, 0, sizeof(*s));
	s->compat = -1;
	s->compat_fd = open(COMPAT_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (s->compat_fd >= 0)
		s->compat = read_compat(s->compat_fd); /* what the start-up dump saw */
	s->exp_period_ms = exp_period_ms;
}

void silent_free(struct silent *s)
{
	if (s->compat_fd >= 0)
		close(s->compat_fd);
	free(s->q);
	memset(s, 0, sizeof(*s));
	s->compat_fd = -1;
}

int silent_want(struct silent *s, enum tdump_reason why, uint32_t table, uint32_t oif,
		uint8_t protocol)
{
	struct silent_req r = { table, oif, protocol, (uint8_t)why };

	for (size_t i = 0; i < s->nq; i++)
		if (!memcmp(&s->q[i], &r, sizeof(r)))
			return 0;
	if (array_grow((void **)&s->q, &s->qcap, s->nq, sizeof(*s->q), 8))
		return -ENOMEM;
	s->q[s->nq++] = r;
	return 0;
}

int64_t silent_next_ms(const struct silent *s, int have_nhobjs, size_t nexpiring)
{
	int64_t t = INT64_MAX;

	if (have_nhobjs && s->compat_fd >= 0)
		t = s->next_compat_ms;
	if (nexpiring && s->exp_period_ms && s->next_exp_ms < t)
		t = s->next_exp_ms;
	return t;
}

/* The sysctl's value, or -1 if it cannot be read. */
static int read_compat(int fd)
{
	char buf[16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	return atoi(buf);
}

/* Queue up to EXP_BATCH distinct re-reads for the expiring routes of snap, from where the
 * last round stopped. */
static void expiring_round(struct silent *s, const struct snapshot *snap)
{
	size_t n = snapshot_nexpiring(snap), queued = 0, before = s->nq;

	if (s->exp_cursor >= n)
		s->exp_cursor = 0;
	for (; s->exp_cursor < n && queued < EXP_BATCH; s->exp_cursor++) {
		const struct route *r =
		    snapshot_route(snap, snapshot_expiring(snap)[s->exp_cursor]);
		/* a route over a nexthop object: its device is the object's */
		uint32_t oif = !r->nhid && r->nh_count ? route_nh(r, 0)->ifindex : 0;

		if (silent_want(s, TDUMP_EXPIRING, r->table, oif, r->protocol))
			break;
		queued = s->nq - before;
	}
}

void silent_compat_seen(struct silent *s, int mode)
{
	if (s->compat >= 0 && mode != s->compat && !s->compat_suspect) {
		s->compat_suspect = 1;
		s->next_compat_ms = 0;
	}
}

int silent_tick(struct silent *s, int64_t now, int have_nhobjs, const struct snapshot *snap)
{
	int flipped = 0;

	if (have_nhobjs && s->compat_fd >= 0 && now >= s->next_compat_ms) {
		int v = read_compat(s->compat_fd);

		flipped = v >= 0 && s->compat >= 0 && (v != s->compat || s->compat_suspect);
		s->compat_suspect = 0;
		if (v >= 0)
			s->compat = v;
		s->next_compat_ms = now + COMPAT_POLL_MS;
	}
	if (snap && snapshot_nexpiring(snap) && s->exp_period_ms && now >= s->next_exp_ms) {
		expiring_round(s, snap);
		/* until silent_round_done() says how long the round took */
		s->next_exp_ms = now + s->exp_period_ms;
	}
	return flipped;
}

void silent_round_done(struct silent *s, int64_t now, int64_t ms)
{
	int64_t period = s->exp_period_ms;

	s->exp_round_ms = ms;
	if (period < 20 * ms)
		period = 20 * ms;
	s->next_exp_ms = now + period;
}
