/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render.h - the views pre-rendered once per snapshot. Called by snapshot_finish() on the
 * collector thread; the results belong to the snapshot and are read-only afterwards.
 */
#ifndef RTSNAP_RENDER_H
#define RTSNAP_RENDER_H

#include <stdint.h>
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

/* Fill s->proc_text/proc_len with the /proc/net/ipv6_route bytes. 0 or -ENOMEM. */
int render_proc_build(struct snapshot *s) __attribute__((warn_unused_result));
/* The RTF_* flags column for nexthop nh of r, as the kernel prints it. */
uint32_t render_proc_flags(const struct snapshot *s, const struct route *r,
			   const struct route_nh *nh);

/* Fill s->json. 0 or -ENOMEM. */
int render_json_build(struct snapshot *s) __attribute__((warn_unused_result));
void render_json_free(struct json_view *v);
/* Append the JSON object of route r (as `ip -j -6 route show` prints it) at time now_ms. */
void render_json_route(const struct snapshot *s, const struct route *r, int64_t now_ms,
		       struct strbuf *sb);

/* Route i's object as pre-rendered in s->json: a leading ',' unless it is the first object of
 * the array; empty for placeholder rows. Its "expires" is frozen at snapshot time, so routes
 * with a deadline must be rendered with render_json_route() instead. */
void render_json_span(const struct snapshot *s, size_t i, const char **p, size_t *len);

/* The body of /routes (whole array) as a list of segments over snapshot memory, with the
 * routes that carry an expiry rendered for now_ms into *dyn (owned by the caller, freed with
 * strbuf_free after the response is sent). Returns the number of segments in *segs (caller
 * frees *segs) or a negative errno. */
struct render_seg {
	const char *p;
	size_t len;
};
int render_json_all(const struct snapshot *s, int64_t now_ms, struct render_seg **segs,
		    struct strbuf *dyn) __attribute__((warn_unused_result));

#endif
