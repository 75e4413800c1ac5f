/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render.h - a snapshot's views as response bodies: its segments' pre-rendered bytes, with
 * the routes whose text depends on the time rendered per response (view.c). Any thread
 * holding the snapshot.
 */
#ifndef RTSNAP_RENDER_H
#define RTSNAP_RENDER_H

#include <stdint.h>
#include <stdlib.h>
#include "rtsnap/io.h"
#include "rtsnap/render_route.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

/* A run of bytes of a response body. */
struct render_seg {
	const char *p;
	size_t len;
};

/* Route i's object as pre-rendered in its segment, with a leading ','; empty for placeholder
 * rows. Its "expires" is frozen at snapshot time, so routes
 * with a deadline must be rendered with render_json_route() instead. */
void render_json_span(const struct snapshot *s, size_t i, const char **p, size_t *len);

/* The body of /routes (whole array) as a list of segments over snapshot memory, with the
 * routes that carry an expiry rendered for now_ms into *dyn (owned by the caller, freed with
 * strbuf_free after the response is sent). Returns the number of segments in *segs (caller
 * frees *segs) or a negative errno. */
int render_json_all(const struct snapshot *s, int64_t now_ms, struct render_seg **segs,
		    struct strbuf *dyn) __attribute__((warn_unused_result));
/* The /proc/net/ipv6_route bytes of s as a list of segments over snapshot memory (one per
 * segment; the caller frees *segs). Count or -ENOMEM. */
int render_proc_segs(const struct snapshot *s, struct render_seg **segs)
    __attribute__((warn_unused_result));
/* The proc view of s as one malloc()ed NUL-terminated string (for tests and tools), its
 * length in *len; NULL on -ENOMEM. */
char *render_proc_text(const struct snapshot *s, size_t *len);
/* Write n segments to fd. 0 or a negative errno. */
static inline int render_write_segs(int fd, const struct render_seg *segs, int n)
{
	int ret = n < 0 ? n : 0;

	for (int i = 0; i < n && !ret; i++)
		ret = io_write_all(fd, segs[i].p, segs[i].len);
	return ret;
}
/* Write the proc view of s to fd. 0 or a negative errno. */
static inline int render_proc_write(const struct snapshot *s, int fd)
{
	struct render_seg *segs = NULL;
	int n = render_proc_segs(s, &segs), ret = render_write_segs(fd, segs, n);

	free(segs);
	return ret;
}

#endif
