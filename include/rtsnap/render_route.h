/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_route.h - one route's text: its /proc/net/ipv6_route line(s) (render_proc.c) and its
 * `ip -j -6 route show` object (render_json.c), in the context of the interfaces, nexthop
 * objects and names it was captured with (routectx.h). Pure functions of their arguments,
 * except render_proc_prepare(), which the one rendering thread calls first.
 */
#ifndef RTSNAP_RENDER_ROUTE_H
#define RTSNAP_RENDER_ROUTE_H

#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/strbuf.h"

/* The rendering thread, before rendering proc lines in context c (its loopback name). */
void render_proc_prepare(const struct route_ctx *c);
/* Append the /proc/net/ipv6_route line(s) of r. */
void render_proc_route(const struct route_ctx *c, const struct route *r, struct strbuf *sb);
/* The RTF_* flags column for nexthop nh of r, as the kernel prints it. */
uint32_t render_proc_flags(const struct route_ctx *c, const struct route *r,
			   const struct route_nh *nh);

/* Append the JSON object of route r (as `ip -j -6 route show` prints it) at time now_ms
 * (CLOCK_MONOTONIC ms, for "expires"). */
void render_json_route(const struct route_ctx *c, const struct route *r, int64_t now_ms,
		       struct strbuf *sb);

#endif
