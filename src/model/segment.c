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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/rtnetlink.h>

#include "rtsnap/log.h"
#include "rtsnap/render_family.h"
#include "rtsnap/render_route.h"
#include "rtsnap/segment.h"
#include "rtsnap/strbuf.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long s_live;		/* atomic */
static size_t s_freed;		/* atomic: bytes of segments freed since the last trim */
static int64_t s_last_trim_ms;	/* atomic */
static int64_t s_last_build_ms; /* atomic: when a segment was last built */

/* Hand free heap pages back to the kernel once enough segment memory was freed, at most once
 * a second: segments are small allocations from malloc's arenas (below the mmap threshold),
 * which a free() alone does not give back, so without it RSS stays at its peak after slow
 * readers let go of old snapshots. */
void segment_reclaim_soon(void)
{
	__atomic_add_fetch(&s_freed, SEGMENT_TRIM_BYTES, __ATOMIC_RELAXED);
}

int segment_reclaim_pending(void)
{
	return __atomic_load_n(&s_freed, __ATOMIC_RELAXED) >= SEGMENT_TRIM_BYTES;
}

void segment_reclaim(void)
{
	int64_t now, last = __atomic_load_n(&s_last_trim_ms, __ATOMIC_RELAXED);

	if (__atomic_load_n(&s_freed, __ATOMIC_RELAXED) < SEGMENT_TRIM_BYTES)
		return;
	now = now_ms();
	/* while segments are being built the freed memory is about to be reused: trimming then
	 * would only make the kernel clear the same pages again */
	if (now - last < 1000 || now - __atomic_load_n(&s_last_build_ms, __ATOMIC_RELAXED) < 1000 ||
	    !__atomic_compare_exchange_n(&s_last_trim_ms, &last, now, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
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
	memset(g->routes, 0x6b, g->n * sizeof(*g->routes));
#endif
	__atomic_add_fetch(&s_freed, g->bytes, __ATOMIC_RELAXED);
	free(g); /* one block: see segment_build() */
	__atomic_sub_fetch(&s_live, 1, __ATOMIC_RELAXED);
}

void segment_put(struct segment *g)
{
	if (g && __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0)
		segment_free(g);
}

void segment_sum(const struct segment *g, struct segment_sum *out)
{
	out->table = g->table;
	out->n = g->n;
	out->nreal = g->nreal;
	out->lines = g->lines;
	out->nexp = g->nexp;
	out->nra = g->nra;
	out->proc_len = g->proc_len;
	out->bytes = g->bytes;
	memcpy(out->lens0, g->lens0, sizeof(out->lens0));
	memcpy(out->lens1, g->lens1, sizeof(out->lens1));
}

/* Count key once in the sorted list v of *n entries (v has room for every key offered). *last:
 * where the previous key was counted, tried first (neighbouring routes mostly share their
 * kind and device). */
static void count_add(struct segment_count *v, uint32_t *n, uint32_t key, uint32_t *last)
{
	uint32_t lo = 0, hi = *n;

	if (*last < *n && v[*last].key == key) {
		v[*last].n++;
		return;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*last = lo;
	if (lo < *n && v[lo].key == key) {
		v[lo].n++;
		return;
	}
	memmove(&v[lo + 1], &v[lo], (*n - lo) * sizeof(*v));
	v[lo].key = key;
	v[lo].n = 1;
	(*n)++;
}

/* What segment_build() collects before it knows the sizes: kept per thread between calls, so
 * that building a segment allocates nothing but the segment. */
struct scratch {
	struct strbuf json;
	uint32_t json_off[SEGMENT_MAX + 1];
	uint16_t exp[SEGMENT_MAX];
	struct segment_count kinds[SEGMENT_MAX];
	struct segment_count *devs; /* one per hop at most */
	size_t devs_cap;
	uint32_t kind_last, dev_last; /* count_add()'s */
};
static pthread_key_t s_scratch_key;
static pthread_once_t s_scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
	struct scratch *x = p;

	strbuf_free(&x->json);
	free(x->devs);
	free(x);
}

static void scratch_key_init(void)
{
	if (pthread_key_create(&s_scratch_key, scratch_free))
		abort(); /* only when the process is out of keys, at its start */
}

/* This thread's scratch buffers (freed when the thread exits), or NULL on -ENOMEM. */
static struct scratch *scratch_get(void)
{
	struct scratch *x;

	pthread_once(&s_scratch_once, scratch_key_init);
	x = pthread_getspecific(s_scratch_key);
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (x && pthread_setspecific(s_scratch_key, x)) {
			free(x);
			x = NULL;
		}
	}
	return x;
}

/* The kinds, devices and prefix lengths of record r (a route counts once per device). */
static void aggregate(struct segment *g, struct scratch *x, const struct route *r)
{
	if (r->placeholder)
		return;
	if (r->src_len)
		g->lens0[r->dst_len / 64] |= 1ull << (r->dst_len % 64);
	else
		g->lens1[r->dst_len / 64] |= 1ull << (r->dst_len % 64);
	count_add(x->kinds, &g->nkinds, (uint32_t)r->protocol << 8 | r->type, &x->kind_last);
	if (r->nh_count > 1) {
		g->mp_routes++;
		g->mp_nh += r->nh_count;
	}
	for (unsigned int j = 0; j < r->nh_count; j++) {
		const struct route_nh *nh = route_nh(r, j);
		int seen = 0;

		if (!nh->ifindex)
			continue;
		for (unsigned int k = 0; k < j && !seen; k++)
			seen = r->nhs[k].ifindex == nh->ifindex;
		if (!seen)
			count_add(x->devs, &g->ndevs, nh->ifindex, &x->dev_last);
	}
}

/* The record to build from, with its hops and metrics reachable through it (what the
 * aggregates and renderers read). */
static void in_view(const struct segment_in *in, struct route *rr)
{
	*rr = *in->r;
	rr->nhs = rr->nh_count > 1 ? in->nhs : NULL;
	rr->metrics = in->m && in->m->mask ? in->m : NULL;
}

/* The length of the proc lines of the record to build from. */
static size_t in_proc_len(const struct route_ctx *ctx, const char *lo, const struct segment_in *in)
{
	struct route rr;

	in_view(in, &rr);
	return render_family_proc_len(ctx, lo, &rr);
}

/* Append record k's bytes [off[k], off[k + 1]) of text to sb. */
static void copy_text(struct strbuf *sb, const char *text, const uint32_t *off, uint32_t k)
{
	strbuf_append(sb, text + off[k], off[k + 1] - off[k]);
}

/* Advance *at to a multiple of align and reserve n bytes there; returns the offset. */
static size_t place(size_t *at, size_t n, size_t align)
{
	size_t o = (*at + align - 1) / align * align;

	*at = o + n;
	return o;
}

int segment_build(const struct route_ctx *ctx, uint32_t table, const struct segment_in *in,
		  uint32_t n, const struct segment *prev, struct segment **out)
{
	struct scratch *x = scratch_get();
	struct segment tmp, *g;
	size_t nnh = 0, nmet = 0, nenc = 0, hops = 0, at = sizeof(*g);
	size_t o_routes, o_met, o_nh, o_enc, o_joff, o_exp, o_kinds, o_devs, o_json, proc_len = 0;
	int64_t now = now_ms();
	const char *lo = render_proc_loopback(ctx);
	/* prev's records taken over unchanged: their proc lines are as long as they were, so
	 * prev's length less those of its records not taken is theirs (prev's context is ctx:
	 * struct segment_in); 0 when a record is taken twice, then every line is measured */
	uint64_t taken[SEGMENT_MAX / 64] = { 0 };
	int reuse_len = prev != NULL;
	char *block;

	if (n > SEGMENT_MAX)
		return -EINVAL;
	if (!x)
		return -ENOMEM;
	memset(&tmp, 0, sizeof(tmp));
	for (uint32_t i = 0; i < n; i++) {
		if (in[i].r->nh_count > 1)
			nnh += in[i].r->nh_count;
		if (in[i].m && in[i].m->mask)
			nmet++;
		hops += in[i].r->nh_count;
		nenc += route_encaps_size(in[i].r, in[i].nhs);
	}
	if (hops > x->devs_cap) {
		struct segment_count *d = realloc(x->devs, hops * sizeof(*d));

		if (!d)
			return -ENOMEM;
		x->devs = d;
		x->devs_cap = hops;
	}
	/* text and aggregates first, into the scratch buffers; proc lines are rendered per read
	 * (view.c), only their length is kept */
	x->json.len = 0;
	x->json.failed = false;
	x->kind_last = x->dev_last = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct route rr;
		const struct route *r = &rr;

		in_view(&in[i], &rr);
		x->json_off[i] = (uint32_t)x->json.len;
		tmp.lines += render_family_proc_lines(r);
		tmp.nreal += !r->placeholder;
		tmp.nra += (uint32_t)route_ra_shape(r);
		if (r->expires_ms)
			x->exp[tmp.nexp++] = (uint16_t)i;
		aggregate(&tmp, x, r);
		if (prev && in[i].src >= 0 && (uint32_t)in[i].src < prev->n) {
			uint32_t j = (uint32_t)in[i].src;

			if (taken[j / 64] & (1ull << (j % 64)))
				reuse_len = 0;
			taken[j / 64] |= 1ull << (j % 64);
			copy_text(&x->json, prev->json, prev->json_off, j);
			continue;
		}
		proc_len += render_family_proc_len(ctx, lo, r);
		if (!r->placeholder) {
			strbuf_putc(&x->json, ',');
			render_family_json(ctx, r, now, &x->json);
		}
	}
	x->json_off[n] = (uint32_t)x->json.len;
	if (reuse_len) {
		size_t gone = 0;

		for (uint32_t j = 0; j < prev->n; j++)
			if (!(taken[j / 64] & (1ull << (j % 64))))
				gone += render_family_proc_len(ctx, lo, &prev->routes[j]);
		proc_len += prev->proc_len - gone;
	} else if (prev) {
		for (uint32_t i = 0; i < n; i++)
			if (in[i].src >= 0 && (uint32_t)in[i].src < prev->n)
				proc_len += in_proc_len(ctx, lo, &in[i]);
	}
#ifdef RTSNAP_POISON
	{
		size_t all = 0;

		for (uint32_t i = 0; i < n; i++)
			all += in_proc_len(ctx, lo, &in[i]);
		if (all != proc_len) {
			log_err("segment: proc length %zu from the previous segment, %zu measured",
				proc_len, all);
			abort();
		}
	}
#endif
	if (x->json.failed || proc_len > UINT32_MAX || x->json.len > UINT32_MAX)
		return -ENOMEM;

	/* one block: the segment, its records, metrics, hops, offsets, lists and text */
	o_routes = place(&at, n * sizeof(struct route), _Alignof(struct route));
	o_met = place(&at, nmet * sizeof(struct route_metrics), _Alignof(struct route_metrics));
	o_nh = place(&at, nnh * sizeof(struct route_nh), _Alignof(struct route_nh));
	o_enc = place(&at, nenc, 8); /* the hops' encapsulations (4-byte aligned blobs) */
	o_joff = place(&at, (n + 1) * sizeof(uint32_t), _Alignof(uint32_t));
	o_kinds =
	    place(&at, tmp.nkinds * sizeof(struct segment_count), _Alignof(struct segment_count));
	o_devs =
	    place(&at, tmp.ndevs * sizeof(struct segment_count), _Alignof(struct segment_count));
	o_exp = place(&at, tmp.nexp * sizeof(uint16_t), _Alignof(uint16_t));
	o_json = place(&at, x->json.len, 1);
	/* plain malloc(): aligned_alloc(64) left small free pieces beside every segment, and
	 * RSS at 10 000 changes/s grew four times as fast (500 000 routes: +87 MB in 20 s
	 * instead of +24 MB) */
	block = malloc(at);
	if (!block)
		return -ENOMEM;
	g = (struct segment *)block;
	*g = tmp;
	g->refs = 1;
	g->table = table;
	g->n = n;
	g->bytes = at;
	g->proc_len = (uint32_t)proc_len;
	g->routes = (struct route *)(block + o_routes);
	g->json_off = (uint32_t *)(block + o_joff);
	g->kinds = (struct segment_count *)(block + o_kinds);
	g->devs = (struct segment_count *)(block + o_devs);
	g->exp = (uint16_t *)(block + o_exp);
	g->json = block + o_json;
	memcpy(g->json_off, x->json_off, (n + 1) * sizeof(uint32_t));
	/* the scratch arrays are NULL until first needed (no hop yet: routes over nexthop
	 * objects with nexthop_compat_mode 0), and memcpy() takes no NULL even for 0 bytes */
	if (g->nkinds)
		memcpy(g->kinds, x->kinds, g->nkinds * sizeof(*g->kinds));
	if (g->ndevs)
		memcpy(g->devs, x->devs, g->ndevs * sizeof(*g->devs));
	if (g->nexp)
		memcpy(g->exp, x->exp, g->nexp * sizeof(*g->exp));
	if (x->json.len)
		memcpy(g->json, x->json.buf, x->json.len);
	{
		struct route_metrics *mp = (struct route_metrics *)(block + o_met);
		struct route_nh *nhp = (struct route_nh *)(block + o_nh);
		unsigned char *ep = (unsigned char *)block + o_enc;

		for (uint32_t i = 0; i < n; i++) {
			struct route *d = &g->routes[i];
			struct route_nh *hops_copy = NULL;

			*d = *in[i].r;
			d->nhs = NULL;
			d->metrics = NULL;
			if (d->nh_count > 1) {
				memcpy(nhp, in[i].nhs, d->nh_count * sizeof(*nhp));
				d->nhs = nhp;
				hops_copy = nhp;
				nhp += d->nh_count;
			}
			/* the hops (d->nh or the copies) point to the segment's copies */
			{
				size_t es = route_encaps_size(d, hops_copy);

				route_encaps_copy(d, hops_copy, ep);
				ep += es;
			}
			if (in[i].m && in[i].m->mask) {
				*mp = *in[i].m;
				d->metrics = mp++;
			}
		}
	}
	__atomic_add_fetch(&s_live, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s_last_build_ms, now, __ATOMIC_RELAXED);
	*out = g;
	return 0;
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
