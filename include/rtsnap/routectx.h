/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * routectx.h - what a route's text depends on besides the route: the interfaces (names, the
 * loopback flag), the nexthop objects and iproute2's names. A snapshot owns one (the state
 * it was taken in); segments are rendered in it.
 *
 * Built by one thread (add, then route_ctx_sort()), read-only afterwards by any thread.
 */
#ifndef RTSNAP_ROUTECTX_H
#define RTSNAP_ROUTECTX_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/route.h"

struct names;

struct route_ctx {
	struct route_link *links; /* sorted by ifindex after route_ctx_sort() */
	size_t nlinks, links_cap;
	struct route_nhobj *nhobjs; /* sorted by id after route_ctx_sort() */
	size_t nnhobjs, nhobjs_cap;
	struct names *names; /* owned; NULL: numbers only */
};

/* Add an interface / a nexthop object. 0 or -ENOMEM. */
int route_ctx_add_link(struct route_ctx *c, const struct route_link *l)
    __attribute__((warn_unused_result));
int route_ctx_add_nhobj(struct route_ctx *c, const struct route_nhobj *o)
    __attribute__((warn_unused_result));
/* Sort what was added, for the lookups below. */
void route_ctx_sort(struct route_ctx *c);
/* Free the arrays and the names (the struct itself is the caller's). */
void route_ctx_release(struct route_ctx *c);

/* Interface record for ifindex, or NULL; its name, "" when unknown. */
const struct route_link *route_ctx_link(const struct route_ctx *c, uint32_t ifindex);
const char *route_ctx_link_name(const struct route_ctx *c, uint32_t ifindex);
/* Nexthop object id, or NULL. */
const struct route_nhobj *route_ctx_nhobj(const struct route_ctx *c, uint32_t id);

#endif
