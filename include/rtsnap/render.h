/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render.h - a snapshot's views as response bodies: its segments' pre-rendered JSON, with
 * the routes whose text depends on the time rendered per response, and its proc text
 * rendered as it is read (view.c). Any thread holding the snapshot.
 */
#ifndef RTSNAP_RENDER_H
#define RTSNAP_RENDER_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
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
/*
 * The /proc/net/ipv6_route text of s, rendered segment by segment as it is read: the lines
 * are not kept in the snapshot (they would be 150 bytes a route, a quarter of the daemon),
 * and rendering them costs about what copying them does. The reader holds no reference:
 * the caller keeps s until it is done.
 */
struct render_proc_reader {
	const struct snapshot *s;
	const char *lo;	   /* the loopback device's name in s */
	size_t seg;	   /* the next segment to render */
	struct strbuf buf; /* the lines of the segment before it */
	size_t off;	   /* bytes of buf handed out */
};
void render_proc_reader_init(struct render_proc_reader *rd, const struct snapshot *s);
/* Copy the next at most max bytes of the text to out: how many, 0 at its end, or -ENOMEM. */
ssize_t render_proc_read(struct render_proc_reader *rd, char *out, size_t max);
void render_proc_reader_free(struct render_proc_reader *rd);
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
int render_proc_write(const struct snapshot *s, int fd);

#endif
