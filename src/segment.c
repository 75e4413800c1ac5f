// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * segment.c - build, share and free immutable runs of routes (segment.h).
 *
 * A segment is built once, on the collector thread, from records it copies; from then on it
 * is read-only and reference-counted. The references are taken and dropped with atomics
 * because the last one may be dropped by any thread (an HTTP worker releasing the last
 * snapshot that contained it).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/rtnetlink.h>

#include "rtsnap/render_route.h"
#include "rtsnap/segment.h"
#include "rtsnap/strbuf.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long s_live;	       /* atomic */
static size_t s_freed;	       /* atomic: bytes of segments freed since the last trim */
static int64_t s_last_trim_ms; /* atomic */

/* Hand free heap pages back to the kernel once enough segment memory was freed, at most once
 * a second: segments are small allocations from malloc's arenas (below the mmap threshold),
 * which a free() alone does not give back, so without it RSS stays at its peak after slow
 * readers let go of old snapshots. */
void segment_reclaim(void)
{
	int64_t now, last = __atomic_load_n(&s_last_trim_ms, __ATOMIC_RELAXED);

	if (__atomic_load_n(&s_freed, __ATOMIC_RELAXED) < SEGMENT_TRIM_BYTES)
		return;
	now = now_ms();
	if (now - last < 1000 || !__atomic_compare_exchange_n(&s_last_trim_ms, &last, now, 0,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&s_freed, 0, __ATOMIC_RELAXED);
	malloc_trim(0);
}

long segment_live_count(void)
{
	return __atomic_load_n(&s_live, __ATOMIC_RELAXED);
}

void segment_get(struct segment *g)
{
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
}

static void segment_free(struct segment *g)
{
#ifdef RTSNAP_POISON
	if (g->routes)
		memset(g->routes, 0x6b, g->n * sizeof(*g->routes));
	if (g->proc && g->proc_off)
		memset(g->proc, 0x6b, g->proc_off[g->n]);
#endif
	free(g->routes); /* one block with the hops, metrics and encapsulations */
	free(g->exp);
	free(g->proc);
	free(g->proc_off);
	free(g->json);
	free(g->json_off);
	free(g->kinds);
	free(g->devs);
	__atomic_add_fetch(&s_freed, g->bytes, __ATOMIC_RELAXED);
	free(g);
	__atomic_sub_fetch(&s_live, 1, __ATOMIC_RELAXED);
}

void segment_put(struct segment *g)
{
	if (g && __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0)
		segment_free(g);
}

/* Count key once in the sorted list *v of *n (capacity *cap). */
static int count_add(struct segment_count **v, uint32_t *n, uint32_t *cap, uint32_t key)
{
	uint32_t lo = 0, hi = *n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((*v)[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < *n && (*v)[lo].key == key) {
		(*v)[lo].n++;
		return 0;
	}
	if (*n == *cap) {
		uint32_t nc = *cap ? 2 * *cap : 4;
		struct segment_count *p = realloc(*v, nc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = nc;
	}
	memmove(&(*v)[lo + 1], &(*v)[lo], (*n - lo) * sizeof(**v));
	(*v)[lo].key = key;
	(*v)[lo].n = 1;
	(*n)++;
	return 0;
}

/* Aggregates of record r: kinds, multipath, devices (a route counts once per device). */
static int aggregate(struct segment *g, const struct route *r, uint32_t *kcap, uint32_t *dcap)
{
	if (r->placeholder)
		return 0;
	if (r->src_len)
		g->lens0[r->dst_len / 64] |= 1ull << (r->dst_len % 64);
	else
		g->lens1[r->dst_len / 64] |= 1ull << (r->dst_len % 64);
	if (count_add(&g->kinds, &g->nkinds, kcap, (uint32_t)r->protocol << 8 | r->type))
		return -ENOMEM;
	if (r->nh_count > 1) {
		g->mp_routes++;
		g->mp_nh += r->nh_count;
	}
	for (unsigned int j = 0; j < r->nh_count; j++) {
		const struct route_nh *nh = r->nh_count > 1 ? &r->nhs[j] : &r->nh;
		int seen = 0;

		if (!nh->ifindex)
			continue;
		for (unsigned int k = 0; k < j && !seen; k++)
			seen = r->nhs[k].ifindex == nh->ifindex;
		if (!seen && count_add(&g->devs, &g->ndevs, dcap, nh->ifindex))
			return -ENOMEM;
	}
	return 0;
}

/* Append record k's bytes [off[k], off[k + 1]) of text to sb. */
static void copy_text(struct strbuf *sb, const char *text, const uint32_t *off, uint32_t k)
{
	strbuf_append(sb, text + off[k], off[k + 1] - off[k]);
}

int segment_build(const struct route_ctx *ctx, uint32_t table, const struct segment_in *in,
		  uint32_t n, const struct segment *prev, struct segment **out)
{
	struct segment *g = calloc(1, sizeof(*g));
	struct strbuf proc = { 0 }, json = { 0 };
	size_t nnh = 0, nmet = 0, nenc = 0, sz;
	struct route_nh *nhp;
	struct route_metrics *mp;
	unsigned char *ep;
	uint32_t kcap = 0, dcap = 0;
	int64_t now = now_ms();
	char *block;

	if (!g)
		return -ENOMEM;
	__atomic_add_fetch(&s_live, 1, __ATOMIC_RELAXED);
	g->refs = 1;
	g->table = table;
	g->n = n;
	for (uint32_t i = 0; i < n; i++) {
		if (in[i].r->nh_count > 1)
			nnh += in[i].r->nh_count;
		if (in[i].m && in[i].m->mask)
			nmet++;
		nenc += route_encaps_size(in[i].r, in[i].nhs);
		g->nexp += in[i].r->expires_ms != 0;
	}
	/* records, then hops, then metrics, then the hops' encapsulations: one block, every
	 * part aligned for its type (records and hops hold pointers; metrics and
	 * encapsulations need 4) */
	sz = n * sizeof(struct route) + nnh * sizeof(struct route_nh) +
	     nmet * sizeof(struct route_metrics) + nenc;
	block = malloc(sz ? sz : 1);
	g->proc_off = malloc((n + 1) * sizeof(*g->proc_off));
	g->json_off = malloc((n + 1) * sizeof(*g->json_off));
	g->exp = g->nexp ? malloc(g->nexp * sizeof(*g->exp)) : NULL;
	g->routes = (struct route *)block;
	if (!block || !g->proc_off || !g->json_off || (g->nexp && !g->exp))
		goto nomem;
	nhp = (struct route_nh *)(block + n * sizeof(struct route));
	mp = (struct route_metrics *)(block + n * sizeof(struct route) +
				      nnh * sizeof(struct route_nh));
	ep = (unsigned char *)mp + nmet * sizeof(struct route_metrics);
	g->nexp = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct route *d = &g->routes[i];

		*d = *in[i].r;
		d->nhs = NULL;
		d->metrics = NULL;
		if (d->nh_count > 1) {
			memcpy(nhp, in[i].nhs, d->nh_count * sizeof(*nhp));
			d->nhs = nhp;
		}
		/* the hops (d->nh or the copies) point to the segment's copies */
		route_encaps_copy(d, d->nh_count > 1 ? nhp : NULL, ep);
		ep += route_encaps_size(d, d->nh_count > 1 ? nhp : NULL);
		if (d->nh_count > 1)
			nhp += d->nh_count;
		if (in[i].m && in[i].m->mask) {
			*mp = *in[i].m;
			d->metrics = mp++;
		}
		if (d->expires_ms)
			g->exp[g->nexp++] = (uint16_t)i;
		g->lines += d->nh_count > 1 ? d->nh_count : 1;
		g->nreal += !d->placeholder;
		if (aggregate(g, d, &kcap, &dcap))
			goto nomem;
	}
	strbuf_reserve(&proc, (size_t)g->lines * 150 + 1);
	strbuf_reserve(&json, (size_t)n * 200 + 1);
	for (uint32_t i = 0; i < n; i++) {
		const struct route *r = &g->routes[i];

		g->proc_off[i] = (uint32_t)proc.len;
		g->json_off[i] = (uint32_t)json.len;
		if (prev && in[i].src >= 0 && (uint32_t)in[i].src < prev->n) {
			copy_text(&proc, prev->proc, prev->proc_off, (uint32_t)in[i].src);
			copy_text(&json, prev->json, prev->json_off, (uint32_t)in[i].src);
			continue;
		}
		render_proc_route(ctx, r, &proc);
		if (!r->placeholder) {
			strbuf_putc(&json, ',');
			render_json_route(ctx, r, now, &json);
		}
	}
	g->proc_off[n] = (uint32_t)proc.len;
	g->json_off[n] = (uint32_t)json.len;
	if (proc.failed || json.failed || proc.len > UINT32_MAX || json.len > UINT32_MAX)
		goto nomem;
	g->proc = strbuf_detach(&proc, &sz);
	g->json = strbuf_detach(&json, &sz);
	g->bytes = sizeof(*g) + n * sizeof(struct route) + nmet * sizeof(struct route_metrics) +
		   nnh * sizeof(struct route_nh) + nenc + g->proc_off[n] + g->json_off[n] +
		   2 * (n + 1) * sizeof(uint32_t) + g->nexp * sizeof(*g->exp) +
		   (kcap + dcap) * sizeof(struct segment_count);
	*out = g;
	return 0;
nomem:
	strbuf_free(&proc);
	strbuf_free(&json);
	segment_put(g);
	return -ENOMEM;
}

int segment_placeholder(const struct route_ctx *ctx, uint32_t table, struct segment **out)
{
	struct route p;
	struct segment_in in = { .r = &p, .src = -1 };

	memset(&p, 0, sizeof(p));
	p.table = table;
	p.placeholder = 1;
	p.metric = 0xffffffff;
	p.type = RTN_UNREACHABLE;
	p.pref = ROUTE_PREF_NONE;
	return segment_build(ctx, table, &in, 1, NULL, out);
}
