// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * siblings.c - a multipath sibling's own attributes (see siblings.h).
 *
 * What the kernel keeps per sibling and what reaches user space (docs/kernel-facts.md §7.2,
 * "Per-sibling attributes"): the append notification of a sibling carries that sibling's
 * protocol, RTA_PREF, expiry, RTA_METRICS and RTA_PREFSRC (rt6_fill_node starts at the route
 * it was given); a dump carries the first sibling's for the group; /proc/net/ipv6_route prints
 * each sibling's RTF_EXPIRES and RTF_PREF on its own line.
 */
#include <string.h>

#include "rtsnap/siblings.h"

void route_sib_of(struct route_sib *s, const struct route *r, const struct route_metrics *met)
{
	memset(s, 0, sizeof(*s));
	s->expires_ms = r->expires_ms;
	s->expires_capped = r->expires_capped;
	s->protocol = r->protocol;
	s->pref = r->pref;
	s->has_prefsrc = r->has_prefsrc;
	memcpy(s->prefsrc, r->prefsrc, 16);
	if (met && met->mask)
		s->m = *met;
}

int route_sib_apply(const struct route_sib *s, struct route *r, struct route_metrics *met)
{
	r->expires_ms = s->expires_ms;
	r->expires_capped = s->expires_capped;
	r->protocol = s->protocol;
	r->pref = s->pref;
	r->has_prefsrc = s->has_prefsrc;
	memcpy(r->prefsrc, s->prefsrc, 16);
	*met = s->m;
	return s->m.mask != 0;
}

static int metrics_equal(const struct route_metrics *a, const struct route_metrics *b)
{
	if (a->mask != b->mask)
		return 0;
	for (unsigned int i = 0; i < ROUTE_METRICS_MAX; i++)
		if ((a->mask & (1u << i)) && a->val[i] != b->val[i])
			return 0;
	return strncmp(a->cc_algo, b->cc_algo, sizeof(a->cc_algo)) == 0;
}

int route_sib_equal(const struct route_sib *a, const struct route_sib *b)
{
	int64_t dx = a->expires_ms - b->expires_ms;

	if (!a->expires_ms != !b->expires_ms || dx > 1000 || dx < -1000)
		return 0;
	return a->protocol == b->protocol && a->pref == b->pref &&
	       a->has_prefsrc == b->has_prefsrc && !memcmp(a->prefsrc, b->prefsrc, 16) &&
	       metrics_equal(&a->m, &b->m);
}

uint8_t route_sib_bits(const struct route_sib *s)
{
	uint8_t b = ROUTE_SIB_SET;

	if (s->expires_ms)
		b |= ROUTE_SIB_EXPIRES;
	if (s->pref != ROUTE_PREF_NONE)
		b |= s->pref & ROUTE_SIB_PREF;
	return b;
}
