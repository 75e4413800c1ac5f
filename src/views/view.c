// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * view.c - a snapshot's /routes body as a list of byte runs over its segments (nothing is
 * copied but the routes whose "expires" is rendered per response), and its proc text
 * rendered from the segments' records as it is read (render.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/render.h"
#include "rtsnap/render_family.h"

void render_json_span(const struct snapshot *s, size_t i, const char **p, size_t *len)
{
	uint32_t k;
	const struct segment *g = snapshot_segment_of(s, i, &k);

	*p = g->json + g->json_off[k];
	*len = g->json_off[k + 1] - g->json_off[k];
}

int render_json_all(const struct snapshot *s, int64_t now_ms, struct render_seg **segs,
		    struct strbuf *dyn)
{
	size_t nseg = 0, cap = 2 * snapshot_nexpiring(s) + snapshot_nsegs(s) + 2, ndyn = 0;
	struct render_seg *out = malloc(cap * sizeof(*out));
	size_t *dyn_start = malloc((snapshot_nexpiring(s) + 1) * sizeof(*dyn_start));
	static const char open_br[] = "[", close_br[] = "]\n";
	int first = 1;

	if (!out || !dyn_start) {
		free(out);
		free(dyn_start);
		return -ENOMEM;
	}
	out[nseg].p = open_br;
	out[nseg++].len = 1;
	for (size_t k = 0; k < snapshot_nsegs(s); k++) {
		const struct segment *g = snapshot_seg(s, k, NULL);
		size_t pos = 0, end = g->json_off[g->n];

		/* the segment's pre-rendered spans, with its routes that carry a deadline rendered
		 * for now (g->exp is in record order) */
		for (uint32_t e = 0; e <= g->nexp; e++) {
			size_t a = e < g->nexp ? g->json_off[g->exp[e]] : end;

			if (a > pos) {
				out[nseg].p = g->json + pos + first;
				out[nseg++].len = a - pos - first;
				first = 0;
			}
			if (e == g->nexp)
				break;
			dyn_start[ndyn] = dyn->len;
			if (!first)
				strbuf_putc(dyn, ',');
			first = 0;
			render_json_route(snapshot_ctx(s), &g->routes[g->exp[e]], now_ms, dyn);
			out[nseg].p = NULL; /* fixed up below, dyn may move */
			out[nseg++].len = dyn->len - dyn_start[ndyn++];
			pos = g->json_off[g->exp[e] + 1];
		}
	}
	out[nseg].p = close_br;
	out[nseg++].len = 2;
	if (dyn->failed) {
		free(out);
		free(dyn_start);
		return -ENOMEM;
	}
	for (size_t k = 0, j = 0; k < nseg; k++)
		if (!out[k].p)
			out[k].p = dyn->buf + dyn_start[j++];
	free(dyn_start);
	*segs = out;
	return (int)nseg;
}

void render_proc_reader_init(struct render_proc_reader *rd, const struct snapshot *s)
{
	size_t head_len;
	const char *head = snapshot_proc_head(s, &head_len);

	memset(rd, 0, sizeof(*rd));
	rd->s = s;
	rd->lo = render_proc_loopback(snapshot_ctx(s));
	/* the text's first line (IPv4's header), handed out before the first segment's */
	if (head_len)
		strbuf_append(&rd->buf, head, head_len);
}

void render_proc_reader_free(struct render_proc_reader *rd)
{
	strbuf_free(&rd->buf);
}

/* Render the next segment's lines into rd->buf. 1, 0 after the last, or -ENOMEM. */
static int next_segment(struct render_proc_reader *rd)
{
	const struct segment *g;

	if (rd->seg >= snapshot_nsegs(rd->s))
		return 0;
	g = snapshot_seg(rd->s, rd->seg++, NULL);
	rd->buf.len = 0;
	rd->off = 0;
	if (!strbuf_reserve(&rd->buf, g->proc_len))
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n; i++)
		render_family_proc(snapshot_ctx(rd->s), rd->lo, &g->routes[i], &rd->buf);
	if (rd->buf.failed)
		return -ENOMEM;
	/* the length counted when the segment was built is what the response announced */
	return rd->buf.len == g->proc_len ? 1 : -EIO;
}

ssize_t render_proc_read(struct render_proc_reader *rd, char *out, size_t max)
{
	size_t n = 0;

	if (rd->buf.failed) /* the first line did not fit */
		return -ENOMEM;

	while (n < max) {
		size_t k = rd->buf.len - rd->off;

		if (!k) {
			int r = next_segment(rd);

			if (r <= 0) {
				if (r < 0)
					return r;
				break;
			}
			continue;
		}
		if (k > max - n)
			k = max - n;
		memcpy(out + n, rd->buf.buf + rd->off, k);
		rd->off += k;
		n += k;
	}
	return (ssize_t)n;
}

int render_proc_write(const struct snapshot *s, int fd)
{
	struct render_proc_reader rd;
	int ret;

	render_proc_reader_init(&rd, s);
	ret = rd.buf.failed ? -ENOMEM : io_write_all(fd, rd.buf.buf, rd.buf.len);
	while (!ret && (ret = next_segment(&rd)) > 0) {
		ret = io_write_all(fd, rd.buf.buf, rd.buf.len);
		if (ret)
			break;
	}
	render_proc_reader_free(&rd);
	return ret;
}

char *render_proc_text(const struct snapshot *s, size_t *len)
{
	struct render_proc_reader rd;
	char *p = malloc(snapshot_proc_len(s) + 1);
	ssize_t n = -ENOMEM;

	if (p) {
		render_proc_reader_init(&rd, s);
		n = render_proc_read(&rd, p, snapshot_proc_len(s));
		render_proc_reader_free(&rd);
	}
	if (n < 0) {
		free(p);
		return NULL;
	}
	p[n] = 0;
	*len = (size_t)n;
	return p;
}
