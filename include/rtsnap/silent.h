/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * silent.h - what the kernel changes without a message, and the re-reads that catch it up.
 *
 * The collector thread owns one struct silent. It queues re-reads (strict route dumps
 * filtered on table, device and protocol, each counted under a reason), watches the one
 * sysctl that changes route dumps without a message (net.ipv4.nexthop_compat_mode, read once
 * a second only while nexthop objects exist), and schedules the periodic check of the
 * expiring routes (an append that duplicates an expiring route changes or clears its expiry
 * with no message: docs/kernel-facts.md). The collector runs the queued re-reads with its own
 * dump code (silent_take()). Nothing here is shared with any other thread.
 */
#ifndef RTSNAP_SILENT_H
#define RTSNAP_SILENT_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

/* A strict route dump filtered on what is set (0 = any). */
struct silent_req {
	uint32_t table, oif;
	uint8_t protocol;
	uint8_t reason; /* enum tdump_reason */
};

struct silent {
	struct silent_req *q; /* queued re-reads, each once */
	size_t nq, qcap;
	/* net.ipv4.nexthop_compat_mode: its fd (opened in the daemon's namespace), last value
	 * read (-1: never), next read */
	int compat_fd;
	int compat;
	int compat_suspect; /* a message's form contradicted it: re-read whatever it reads */
	int64_t next_compat_ms;
	/* the expiring routes' check: the next round, how long the last one took, and where
	 * a round that stopped at its batch limit goes on in the expiring index */
	int64_t next_exp_ms;
	int64_t exp_round_ms;
	size_t exp_cursor;
	unsigned int exp_period_ms; /* 0: off */
};

/* Collector thread (or before it starts, in the namespace to follow). exp_period_ms: how
 * often the expiring routes are checked (0: never). Never fails: a missing sysctl is not
 * watched. */
void silent_init(struct silent *s, unsigned int exp_period_ms);
void silent_free(struct silent *s);

/* Queue a re-read (once; a duplicate is dropped). 0 or -ENOMEM. */
int silent_want(struct silent *s, enum tdump_reason why, uint32_t table, uint32_t oif,
		uint8_t protocol) __attribute__((warn_unused_result));

/*
 * When the collector must call silent_tick() next (INT64_MAX: never): once a second while
 * have_nhobjs (nexthop objects exist), and the next expiring round while nexpiring routes
 * expire in the published snapshot.
 */
int64_t silent_next_ms(const struct silent *s, int have_nhobjs, size_t nexpiring);

/*
 * Due work at now. Returns 1 when net.ipv4.nexthop_compat_mode changed since it was last read
 * (the caller queues the tables with routes over nexthop objects, reason TDUMP_COMPAT), 0
 * otherwise. When an expiring round is due and snap (the published snapshot, or NULL) has
 * expiring routes, queues the (table, device, protocol) of a batch of them (reason
 * TDUMP_EXPIRING).
 */
int silent_tick(struct silent *s, int64_t now, int have_nhobjs, const struct snapshot *snap);

/*
 * A route over a nexthop object was announced with (mode 1) or without (mode 0) the object's
 * hops. When that contradicts the value last read, the sysctl changed since, perhaps twice
 * within a poll (then the value read next is the old one, yet routes were announced in the
 * other form): the next silent_tick() comes at once and reports a change either way.
 */
void silent_compat_seen(struct silent *s, int mode);

/* The collector ran an expiring round that took ms milliseconds: the next one comes the
 * period later, or twenty times that if longer (at most about 5 % of the collector's time). */
void silent_round_done(struct silent *s, int64_t now, int64_t ms);

/* The queued re-reads, in order; the caller runs them and then calls silent_clear(). */
static inline const struct silent_req *silent_take(const struct silent *s, size_t *n)
{
	*n = s->nq;
	return s->q;
}
static inline void silent_clear(struct silent *s)
{
	s->nq = 0;
}

#endif
