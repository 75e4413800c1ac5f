/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render4.h - one IPv4 route's text: its /proc/net/route line (render_proc4.c) and its
 * `ip -j -4 route show table all` object (render_json4.c), in the context (interfaces,
 * nexthop objects, names) it was captured with. docs/kernel-facts.md section 12 says what the
 * kernel prints. Records as route4.h describes them, with r->nhs and r->metrics set. Pure
 * functions of their arguments: any thread.
 */
#ifndef RTSNAP_RENDER4_H
#define RTSNAP_RENDER4_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/strbuf.h"

/* Every line of /proc/net/route, the header included, is this wide before its newline. */
#define RENDER_PROC4_WIDTH 127

/* Append the header line of /proc/net/route. */
void render_proc4_header(struct strbuf *sb);
/* The same line, newline included, into line (not NUL-terminated). */
void render_proc4_header_line(char line[RENDER_PROC4_WIDTH + 1]);
/* Whether /proc/net/route lists r: a route of the main table that is neither broadcast nor
 * multicast. */
int render_proc4_listed(const struct route *r);
/* Append r's line (nothing when !render_proc4_listed(r)). */
void render_proc4_route(const struct route_ctx *c, const struct route *r, struct strbuf *sb);

/* Append r's JSON object, as `ip -j -4 route show table all` prints it. */
void render_json4_route(const struct route_ctx *c, const struct route *r, struct strbuf *sb);

#endif
