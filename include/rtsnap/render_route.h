/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_route.h - one route's text: its /proc/net/ipv6_route line(s) (render_proc.c) and its
 * `ip -j -6 route show` object (render_json.c), in the context of the interfaces, nexthop
 * objects and names it was captured with (routectx.h). Pure functions of their arguments:
 * any thread.
 */
#ifndef RTSNAP_RENDER_ROUTE_H
#define RTSNAP_RENDER_ROUTE_H

#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/strbuf.h"

/* The loopback device's name in c ("lo" if it has none): the kernel prints it for reject
 * routes, placeholder rows and routes over a blackhole nexthop object. */
const char *render_proc_loopback(const struct route_ctx *c);
/* Append the /proc/net/ipv6_route line(s) of r; lo = render_proc_loopback(c). */
void render_proc_route(const struct route_ctx *c, const char *lo, const struct route *r,
		       struct strbuf *sb);
/* The bytes render_proc_route() appends for r, without rendering them. */
size_t render_proc_route_len(const struct route_ctx *c, const char *lo, const struct route *r);
/* The RTF_* flags column for nexthop nh of r, as the kernel prints it. */
uint32_t render_proc_flags(const struct route_ctx *c, const struct route *r,
			   const struct route_nh *nh);

/* Append the JSON object of route r (as `ip -j -6 route show` prints it) at time now_ms
 * (CLOCK_MONOTONIC ms, for "expires"). */
void render_json_route(const struct route_ctx *c, const struct route *r, int64_t now_ms,
		       struct strbuf *sb);

#endif
