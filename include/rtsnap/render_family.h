/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_family.h - a record's text whatever its family: IPv6 records as render_route.h
 * renders them (/proc/net/ipv6_route, ip -j -6), IPv4 records (route_is4()) as render4.h does
 * (/proc/net/route, ip -j -4). For the code that holds records of either family (segments,
 * the proc reader). Pure functions of their arguments: any thread.
 */
#ifndef RTSNAP_RENDER_FAMILY_H
#define RTSNAP_RENDER_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/strbuf.h"

/* Append r's JSON object (now_ms: CLOCK_MONOTONIC ms, for an IPv6 route's "expires"). */
void render_family_json(const struct route_ctx *c, const struct route *r, int64_t now_ms,
			struct strbuf *sb);
/* Append r's lines of its family's proc text (an IPv4 route outside /proc/net/route: none);
 * lo = render_proc_loopback(c). */
void render_family_proc(const struct route_ctx *c, const char *lo, const struct route *r,
			struct strbuf *sb);
/* The bytes and the lines render_family_proc() appends for r, without rendering them. */
size_t render_family_proc_len(const struct route_ctx *c, const char *lo, const struct route *r);
uint32_t render_family_proc_lines(const struct route *r);
/* The line the proc text of a family starts with (IPv4: /proc/net/route's header, while the
 * main table exists; IPv6: none, NULL with *len 0). A static string. */
const char *render_family_proc_head(int ipv4, size_t *len);

#endif
