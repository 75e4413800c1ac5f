// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_family.c - a record's text by its family (render_family.h): one branch on
 * route_is4(), so that segments and the proc reader hold either family's records.
 */
#include <pthread.h>
#include <string.h>

#include "rtsnap/render4.h"
#include "rtsnap/render_family.h"
#include "rtsnap/render_route.h"
#include "rtsnap/route4.h"

void render_family_json(const struct route_ctx *c, const struct route *r, int64_t now_ms,
			struct strbuf *sb)
{
	if (route_is4(r))
		render_json4_route(c, r, sb);
	else
		render_json_route(c, r, now_ms, sb);
}

void render_family_proc(const struct route_ctx *c, const char *lo, const struct route *r,
			struct strbuf *sb)
{
	if (route_is4(r))
		render_proc4_route(c, r, sb);
	else
		render_proc_route(c, lo, r, sb);
}

size_t render_family_proc_len(const struct route_ctx *c, const char *lo, const struct route *r)
{
	/* every line of /proc/net/route is padded to its width, and none is longer (96
	 * characters at most: a 15-character device and the widest numbers) */
	if (route_is4(r))
		return render_proc4_listed(r) ? RENDER_PROC4_WIDTH + 1 : 0;
	return render_proc_route_len(c, lo, r);
}

uint32_t render_family_proc_lines(const struct route *r)
{
	if (route_is4(r))
		return render_proc4_listed(r) ? 1 : 0;
	return r->nh_count > 1 ? r->nh_count : 1;
}

static char s_head4[RENDER_PROC4_WIDTH + 1];
static pthread_once_t s_head4_once = PTHREAD_ONCE_INIT;

static void head4_init(void)
{
	render_proc4_header_line(s_head4);
}

const char *render_family_proc_head(int ipv4, size_t *len)
{
	if (!ipv4) {
		*len = 0;
		return NULL;
	}
	pthread_once(&s_head4_once, head4_init);
	*len = sizeof(s_head4);
	return s_head4;
}
