/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump4.h - one full dump of a namespace's IPv4 routing state: the links, nexthop objects and
 * IPv4 addresses the IPv4 model needs (fib4.h) and its routes, in the kernel's order, plus
 * the render context of the moment (routectx.h: interfaces, nexthop objects, names) that the
 * IPv4 renderers (render4.h) print them in.
 *
 * A dump is trusted when no IPv4 route, address or rule event, nor a link or nexthop object
 * event, arrived between its start and its end, and the kernel did not flag it interrupted: a
 * dump is read in several rounds, and a change between two rounds can be missed or seen
 * twice. A trusted dump is one state of the kernel. The caller's thread;
 * opens and closes its own sockets in the namespace it runs in.
 */
#ifndef RTSNAP_DUMP4_H
#define RTSNAP_DUMP4_H

#include "rtsnap/fib4.h"
#include "rtsnap/nlconn.h"
#include "rtsnap/routectx.h"

struct collector_stats;

/* Dumps tried before an untrusted one is taken (the kernel never held still). */
#define DUMP4_TRIES 20

struct dump4 {
	struct fib4 *fib;     /* the routes, tables in the kernel's order; owned */
	struct route_ctx ctx; /* interfaces and nexthop objects of the moment, names; owned */
	int trusted;	      /* no event arrived while it was taken */
	/* the main table exists (it may be empty): /proc/net/route prints nothing at all, not
	 * even its header, until it does (kernel-facts.md 12.3) */
	int has_main;
	unsigned int tries;	 /* dumps taken (1 when the first was trusted) */
	unsigned long malformed; /* messages that failed validation: counted and skipped */
};

/*
 * Take a dump into *d (zeroed first), retried up to DUMP4_TRIES times until one is trusted;
 * the last one is kept when none is (d->trusted 0). Socket errors are counted in st (NULL:
 * nowhere). 0 or a negative errno (then *d holds nothing to free).
 */
int dump4_take(struct dump4 *d, struct collector_stats *st) __attribute__((warn_unused_result));

/* Free what d holds (a zeroed or failed one is fine). */
void dump4_release(struct dump4 *d);

/*
 * Whether the IPv4 main table exists (it may exist without routes): a strict dump filtered on
 * it, its routes passed to cb (NULL: none wanted) with arg. 1, 0, or a negative errno; an
 * interrupted dump sets *intr (NULL: not told). Errors counted in st (NULL: nowhere). The
 * caller's thread, in the namespace it runs in.
 */
int dump4_main_exists(struct collector_stats *st, nlconn_dump_cb cb, void *arg, int *intr)
    __attribute__((warn_unused_result));

#endif
