/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * siblings.h - the attributes each sibling of a multipath route has of its own.
 *
 * The kernel keeps protocol, router preference, expiry, metrics and preferred source per
 * sibling (each is a fib6_info); a record holds the first sibling's, as a dump does. When the
 * siblings of a group differ, the mirror keeps an array of struct route_sib beside the
 * record's hops (one per hop, in the same order) so that the survivor of a deleted first leg
 * takes its own values, and each hop's proc line its own RTF_EXPIRES and RTF_PREF
 * (route_nh.sib, route.h). Plain data, no allocation: the owner of the array (the mirror's
 * record) allocates and frees it. Collector thread only.
 */
#ifndef RTSNAP_SIBLINGS_H
#define RTSNAP_SIBLINGS_H

#include <stdint.h>
#include "rtsnap/route.h"

struct route_sib {
	int64_t expires_ms;	/* absolute deadline as route.expires_ms; 0 = none */
	struct route_metrics m; /* m.mask == 0: no RTA_METRICS */
	uint8_t prefsrc[16];
	uint8_t protocol, pref, has_prefsrc, expires_capped;
};

/* The attributes record r (metrics met, or NULL) gives its first sibling. */
void route_sib_of(struct route_sib *s, const struct route *r, const struct route_metrics *met);

/* Give record r the attributes s (the metrics into *met; returns whether it has any). */
int route_sib_apply(const struct route_sib *s, struct route *r, struct route_metrics *met);

/* Whether two siblings' attributes are the same (deadlines within a second: a dump rounds them,
 * and siblings added with one lifetime a moment apart are the same for the proc view). */
int route_sib_equal(const struct route_sib *a, const struct route_sib *b);

/* The ROUTE_SIB_SET bits (expiry, preference) of a hop whose attributes are s. */
uint8_t route_sib_bits(const struct route_sib *s);

#endif
