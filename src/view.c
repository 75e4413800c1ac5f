// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * view.c - a snapshot's proc text and /routes body as lists of byte runs over its segments
 * (render.h). Nothing is copied but the routes whose "expires" is rendered per response.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/render.h"

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
	size_t nseg = 0, cap = 2 * s->nexpiring + s->nsegs + 2, ndyn = 0;
	struct render_seg *out = malloc(cap * sizeof(*out));
	size_t *dyn_start = malloc((s->nexpiring + 1) * sizeof(*dyn_start));
	static const char open_br[] = "[", close_br[] = "]\n";
	int first = 1;

	if (!out || !dyn_start) {
		free(out);
		free(dyn_start);
		return -ENOMEM;
	}
	out[nseg].p = open_br;
	out[nseg++].len = 1;
	for (size_t k = 0; k < s->nsegs; k++) {
		const struct segment *g = s->segs[k];
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
			render_json_route(&s->ctx, &g->routes[g->exp[e]], now_ms, dyn);
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

int render_proc_segs(const struct snapshot *s, struct render_seg **out)
{
	struct render_seg *v = malloc((s->nsegs ? s->nsegs : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t k = 0; k < s->nsegs; k++) {
		v[k].p = s->segs[k]->proc;
		v[k].len = s->segs[k]->proc_len;
	}
	*out = v;
	return (int)s->nsegs;
}

char *render_proc_text(const struct snapshot *s, size_t *len)
{
	char *p = malloc(s->proc_len + 1);
	size_t n = 0;

	if (!p)
		return NULL;
	for (size_t k = 0; k < s->nsegs; k++) {
		size_t l = s->segs[k]->proc_len;

		memcpy(p + n, s->segs[k]->proc, l);
		n += l;
	}
	p[n] = 0;
	*len = n;
	return p;
}
