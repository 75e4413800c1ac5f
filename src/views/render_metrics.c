// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * render_metrics.c - Prometheus text exposition (format 0.0.4).
 *
 * The per-snapshot families are counted in one pass over the segments' aggregates and rendered
 * once per snapshot, by the first scrape that reads it (a publication does not pay for them:
 * under churn most snapshots are never scraped), together with a gzip form: a gzip header and the text
 * deflated with Z_SYNC_FLUSH, which ends on a byte boundary without a final block. A gzip
 * scrape then only deflates its few per-scrape kilobytes as the continuation of that stream
 * (a fresh raw deflate stream, ending with the final block) and appends the trailer, whose
 * CRC is crc32_combine() of the two parts. The body is the two as segments: the big one is
 * sent from snapshot memory, never copied, never compressed again.
 *
 * Per scrape nothing walks the table: generation and age are fields of the snapshot, the next
 * expiry and the routes past their deadline are one binary search in the expiring index
 * (sorted by deadline), the rest are process-wide counters.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <linux/rtnetlink.h>

#include "rtsnap/names.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/route4.h"
#include "rtsnap/stats.h"
#include "rtsnap/utf8.h"

/* the per-snapshot families, in this order in every view (route info only when enabled) */
#define VIEW_PARTS 9

struct metrics_view {
	char *text; /* per-snapshot families */
	size_t len;
	unsigned char *gz; /* gzip header + deflate(text), sync-flushed, no final block */
	size_t gzlen;
	uint32_t crc; /* crc32(text) */
	/* where each family's HELP (hdr) and its samples (body) start in text; a family ends
	 * where the next begins: /metrics of two instances interleaves two views by these */
	unsigned int nparts;
	size_t hdr[VIEW_PARTS], body[VIEW_PARTS];
	/* what its series carry between family=" and the closing quote: the family, and for a
	 * named namespace's snapshot `",netns="NAME` (escaped) after it */
	char *fam;
};

static int s_routes_on; /* rtsnap_route_info enabled */
static unsigned long s_route_limit = RENDER_METRICS_ROUTE_LIMIT_DEFAULT;

void render_metrics_set_routes(int on)
{
	__atomic_store_n(&s_routes_on, on ? 1 : 0, __ATOMIC_RELAXED);
}

void render_metrics_set_route_limit(unsigned long n)
{
	__atomic_store_n(&s_route_limit, n, __ATOMIC_RELAXED);
}

/* ---- exposition helpers ---- */

void render_metrics_label(struct strbuf *sb, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\' || *p == '"') {
			strbuf_putc(sb, '\\');
			strbuf_putc(sb, (char)*p);
		} else if (*p == '\n') {
			strbuf_puts(sb, "\\n");
		} else if (n == 0) {
			strbuf_putc(sb, '?');
			n = 1;
		} else {
			strbuf_append(sb, p, n);
			p += n;
			continue;
		}
		p++;
	}
}

static void family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf_appendf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A per-snapshot family: its HELP and TYPE, and where they and its samples start in v. */
static void part(struct strbuf *sb, struct metrics_view *v, const char *name, const char *type,
		 const char *help)
{
	if (v->nparts < VIEW_PARTS)
		v->hdr[v->nparts] = sb->len;
	family(sb, name, type, help);
	if (v->nparts < VIEW_PARTS)
		v->body[v->nparts++] = sb->len;
}

/* The family label of s's series: the instance's address family, as `ip -j` names it. */
static const char *fam_of(const struct snapshot *s)
{
	return snapshot_family(s) == AF_INET ? "inet" : "inet6";
}

/* name{family="fam",k="v"} value: a per-snapshot series. */
static void sample_f(struct strbuf *sb, const char *name, const char *fam, const char *k,
		     const char *v, unsigned long long val)
{
	strbuf_puts(sb, name);
	strbuf_puts(sb, "{family=\"");
	strbuf_puts(sb, fam);
	strbuf_puts(sb, "\",");
	strbuf_puts(sb, k);
	strbuf_puts(sb, "=\"");
	render_metrics_label(sb, v);
	strbuf_appendf(sb, "\"} %llu\n", val);
}

static void gauge_u(struct strbuf *sb, const char *name, const char *help, uint64_t v)
{
	family(sb, name, "gauge", help);
	strbuf_appendf(sb, "%s %llu\n", name, (unsigned long long)v);
}

/* Seconds and other fractional values: millisecond resolution is all we have. */
static void gauge_f(struct strbuf *sb, const char *name, const char *help, double v)
{
	family(sb, name, "gauge", help);
	strbuf_appendf(sb, "%s %.3f\n", name, v);
}

static void counter_f(struct strbuf *sb, const char *name, const char *help, double v)
{
	family(sb, name, "counter", help);
	strbuf_appendf(sb, "%s %.3f\n", name, v);
}

/* The route's dst as `ip -j` prints it: "default", "addr/plen", a host route without /128
 * (/32 for IPv4, af AF_INET: the address in a[0..3]). */
static void put_prefix(struct strbuf *sb, int af, const uint8_t *a, unsigned int plen)
{
	char txt[INET6_ADDRSTRLEN];

	if (!plen) {
		strbuf_puts(sb, "default");
		return;
	}
	inet_ntop(af, a, txt, sizeof(txt));
	strbuf_puts(sb, txt);
	if (plen != (af == AF_INET ? 32u : 128u))
		strbuf_appendf(sb, "/%u", plen);
}

static const char *dev_name(const struct snapshot *s, uint32_t ifindex, char buf[16])
{
	const char *n = snapshot_link_name(s, ifindex);

	if (*n)
		return n;
	snprintf(buf, 16, "if%u", ifindex); /* what `ip` prints for an unknown index */
	return buf;
}

/* ---- per-snapshot part ---- */

/* Index in s->tables of the table holding record i (tables are in record order). */
static size_t table_of(const struct snapshot *s, uint32_t i)
{
	size_t lo = 0, hi = snapshot_ntables(s);

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (snapshot_table_at(s, mid)->first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_u16(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return x < y ? -1 : x > y;
}

/* rtsnap_routes{table,protocol,type}, multipath routes and nexthops by table. */
static int render_route_counts(const struct snapshot *s, struct strbuf *sb, struct metrics_view *v)
{
	const char *fam = v->fam;
	uint32_t *cnt = calloc(65536, sizeof(*cnt)); /* by protocol << 8 | type */
	uint16_t *touched = malloc(65536 * sizeof(*touched));
	uint32_t *mp_routes =
	    calloc(snapshot_ntables(s) ? snapshot_ntables(s) : 1, sizeof(*mp_routes));
	uint64_t *mp_nh = calloc(snapshot_ntables(s) ? snapshot_ntables(s) : 1, sizeof(*mp_nh));
	char tb[12], pb[12], yb[12];

	if (!cnt || !touched || !mp_routes || !mp_nh) {
		free(cnt);
		free(touched);
		free(mp_routes);
		free(mp_nh);
		return -ENOMEM;
	}
	part(sb, v, "rtsnap_routes", "gauge",
	     "Routes in the snapshot by family, table, protocol and type, as ip -6 (family inet6) "
	     "or ip -4 (inet) route show table all lists them (a multipath route counts once).");
	for (size_t t = 0; t < snapshot_ntables(s); t++) {
		const struct snapshot_table *st = snapshot_table_at(s, t);
		const char *tname = names_table(snapshot_ctx(s)->names, st->id, tb);
		size_t ntouched = 0;

		/* the segments' own counts: O(segments), not O(routes) */
		for (uint32_t g = st->seg0; g < st->seg0 + st->nseg; g++) {
			const struct segment *sg = snapshot_seg(s, g, NULL);

			for (uint32_t j = 0; j < sg->nkinds; j++) {
				uint16_t k = (uint16_t)sg->kinds[j].key;

				if (!cnt[k])
					touched[ntouched++] = k;
				cnt[k] += sg->kinds[j].n;
			}
			mp_routes[t] += sg->mp_routes;
			mp_nh[t] += sg->mp_nh;
		}
		qsort(touched, ntouched, sizeof(*touched), cmp_u16);
		for (size_t j = 0; j < ntouched; j++) {
			uint16_t k = touched[j];

			strbuf_puts(sb, "rtsnap_routes{family=\"");
			strbuf_puts(sb, fam);
			strbuf_puts(sb, "\",table=\"");
			render_metrics_label(sb, tname);
			strbuf_puts(sb, "\",protocol=\"");
			render_metrics_label(
			    sb, names_protocol(snapshot_ctx(s)->names, (uint8_t)(k >> 8), pb));
			strbuf_puts(sb, "\",type=\"");
			render_metrics_label(sb, names_type((uint8_t)(k & 0xff), yb));
			strbuf_appendf(sb, "\"} %u\n", cnt[k]);
			cnt[k] = 0;
		}
	}
	part(sb, v, "rtsnap_multipath_routes", "gauge",
	     "Routes with more than one nexthop in the snapshot, by family and table.");
	for (size_t t = 0; t < snapshot_ntables(s); t++)
		sample_f(sb, "rtsnap_multipath_routes", fam, "table",
			 names_table(snapshot_ctx(s)->names, snapshot_table_at(s, t)->id, tb),
			 mp_routes[t]);
	part(sb, v, "rtsnap_multipath_nexthops", "gauge",
	     "Nexthops of the multipath routes in the snapshot, by family and table.");
	for (size_t t = 0; t < snapshot_ntables(s); t++)
		sample_f(sb, "rtsnap_multipath_nexthops", fam, "table",
			 names_table(snapshot_ctx(s)->names, snapshot_table_at(s, t)->id, tb),
			 mp_nh[t]);
	free(cnt);
	free(touched);
	free(mp_routes);
	free(mp_nh);
	return 0;
}

struct dev_count {
	uint32_t ifindex;
	uint32_t routes;
};

static int cmp_dev(const void *a, const void *b)
{
	const struct dev_count *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

/* Add cnt routes on ifindex; devs is sorted by ifindex. */
static int dev_add(struct dev_count **devs, size_t *n, size_t *cap, uint32_t ifindex, uint32_t cnt)
{
	struct dev_count key = { .ifindex = ifindex }, *d;

	d = bsearch(&key, *devs, *n, sizeof(key), cmp_dev);
	if (!d) {
		/* an index the link dump did not list: rare; insert keeping the order */
		size_t pos = 0;

		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			struct dev_count *p = realloc(*devs, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*devs = p;
			*cap = ncap;
		}
		while (pos < *n && (*devs)[pos].ifindex < ifindex)
			pos++;
		memmove(&(*devs)[pos + 1], &(*devs)[pos], (*n - pos) * sizeof(key));
		(*devs)[pos] = key;
		(*n)++;
		d = &(*devs)[pos];
	}
	d->routes += cnt;
	return 0;
}

/* rtsnap_device_routes{device}: routes with a nexthop on the device. */
static int render_devices(const struct snapshot *s, struct strbuf *sb, struct metrics_view *v)
{
	size_t n = snapshot_ctx(s)->nlinks, cap = snapshot_ctx(s)->nlinks + 16, shown = 0;
	struct dev_count *devs = calloc(cap, sizeof(*devs));
	uint64_t omitted = 0;
	char buf[16];

	if (!devs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		devs[i].ifindex =
		    snapshot_ctx(s)->links[i].ifindex;	 /* links are sorted by ifindex */
	for (size_t k = 0; k < snapshot_nsegs(s); k++) { /* the segments' own counts */
		const struct segment *sg = snapshot_seg(s, k, NULL);

		for (uint32_t j = 0; j < sg->ndevs; j++) {
			if (dev_add(&devs, &n, &cap, sg->devs[j].key, sg->devs[j].n)) {
				free(devs);
				return -ENOMEM;
			}
		}
	}
	part(sb, v, "rtsnap_device_routes", "gauge",
	     "Routes of the family with a nexthop on the device (a multipath route counts once per "
	     "device).");
	for (size_t i = 0; i < n; i++) {
		if (!devs[i].routes)
			continue;
		if (shown++ >= RENDER_METRICS_MAX_DEVICES) {
			omitted += devs[i].routes;
			continue;
		}
		sample_f(sb, "rtsnap_device_routes", v->fam, "device",
			 dev_name(s, devs[i].ifindex, buf), devs[i].routes);
	}
	part(sb, v, "rtsnap_device_routes_omitted", "gauge",
	     "Routes of the family counted on devices beyond the first 1024 with routes, which get "
	     "no rtsnap_device_routes series.");
	strbuf_appendf(sb, "rtsnap_device_routes_omitted{family=\"%s\"} %llu\n", v->fam,
		       (unsigned long long)omitted);
	free(devs);
	return 0;
}

/* rtsnap_routes_expiring{table}: O(expiring routes), from the expiring index. */
static int render_expiring(const struct snapshot *s, struct strbuf *sb, struct metrics_view *v)
{
	uint32_t *cnt = calloc(snapshot_ntables(s) ? snapshot_ntables(s) : 1, sizeof(*cnt));
	char tb[12];

	if (!cnt)
		return -ENOMEM;
	for (size_t i = 0; i < snapshot_nexpiring(s); i++)
		cnt[table_of(s, snapshot_expiring(s)[i])]++;
	part(sb, v, "rtsnap_routes_expiring", "gauge",
	     "Routes with an expiry time in the snapshot, by family and table (IPv4 routes have "
	     "none).");
	for (size_t t = 0; t < snapshot_ntables(s); t++)
		sample_f(sb, "rtsnap_routes_expiring", v->fam, "table",
			 names_table(snapshot_ctx(s)->names, snapshot_table_at(s, t)->id, tb),
			 cnt[t]);
	free(cnt);
	return 0;
}

/* rtsnap_route_info: one series per route (per nexthop of a multipath route), capped. */
static void render_route_info(const struct snapshot *s, struct strbuf *sb, struct metrics_view *v)
{
	int af = snapshot_family(s) == AF_INET ? AF_INET : AF_INET6;
	unsigned long limit = __atomic_load_n(&s_route_limit, __ATOMIC_RELAXED), done = 0;
	uint64_t omitted = 0;
	char tb[12], pb[12], yb[12], db[16], gw[INET6_ADDRSTRLEN];

	part(sb, v, "rtsnap_route_info", "gauge",
	     "One series per route (per nexthop of a multipath route), labelled as ip -6 or ip -4 "
	     "route prints it; the value is always 1. Enabled by --metrics-routes.");
	for (size_t t = 0; t < snapshot_ntables(s); t++) {
		const struct snapshot_table *st = snapshot_table_at(s, t);
		const char *tname = names_table(snapshot_ctx(s)->names, st->id, tb);

		for (uint32_t i = st->first; i < st->first + st->count; i++) {
			const struct route *r = snapshot_route(s, i);
			unsigned int nnh = r->nh_count ? r->nh_count : 1;

			if (r->placeholder)
				continue;
			if (done >= limit) {
				omitted++;
				continue;
			}
			done++;
			for (unsigned int j = 0; j < nnh; j++) {
				const struct route_nh *nh = snapshot_route_nh(s, r, j);

				strbuf_puts(sb, "rtsnap_route_info{family=\"");
				strbuf_puts(sb, v->fam);
				strbuf_puts(sb, "\",table=\"");
				render_metrics_label(sb, tname);
				strbuf_puts(sb, "\",dst=\"");
				put_prefix(sb, af, r->dst, r->dst_len);
				if (r->src_len) {
					strbuf_puts(sb, "\",src=\"");
					put_prefix(sb, af, r->src, r->src_len);
				}
				strbuf_puts(sb, "\",gateway=\"");
				/* an IPv4 route's gateway is IPv4, or IPv6 (via inet6) */
				if (r->nh_count && nh->has_gw)
					strbuf_puts(sb, inet_ntop(af == AF_INET && nh->has_gw !=
										       ROUTE_GW_VIA6
								      ? AF_INET
								      : AF_INET6,
								  nh->gw, gw, sizeof(gw)));
				strbuf_puts(sb, "\",dev=\"");
				if (r->nh_count && nh->ifindex)
					render_metrics_label(sb, dev_name(s, nh->ifindex, db));
				strbuf_puts(sb, "\",protocol=\"");
				render_metrics_label(
				    sb, names_protocol(snapshot_ctx(s)->names, r->protocol, pb));
				strbuf_puts(sb, "\",type=\"");
				render_metrics_label(sb, names_type(r->type, yb));
				strbuf_appendf(sb, "\",metric=\"%u\"} 1\n", r->metric);
			}
		}
	}
	part(sb, v, "rtsnap_route_info_omitted_routes", "gauge",
	     "Routes of the family left out of rtsnap_route_info by --metrics-route-limit.");
	strbuf_appendf(sb, "rtsnap_route_info_omitted_routes{family=\"%s\"} %llu\n", v->fam,
		       (unsigned long long)omitted);
}

static const unsigned char s_gzip_header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

/* v->gz: gzip header + raw deflate of v->text, Z_SYNC_FLUSH (the stream goes on per scrape). */
static int precompress(struct metrics_view *v)
{
	z_stream z = { 0 };
	/* the text is a few kilobytes unless per-route series are on: then be quick */
	int level = v->len > (1u << 20) ? 1 : Z_DEFAULT_COMPRESSION, ret = Z_OK;
	size_t cap, used = sizeof(s_gzip_header), in_off = 0;

	if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = used + deflateBound(&z, v->len) + 64;
	v->gz = malloc(cap);
	if (!v->gz)
		goto fail;
	memcpy(v->gz, s_gzip_header, used);
	do {
		size_t chunk = v->len - in_off > (1u << 30) ? 1u << 30 : v->len - in_off;
		int flush = in_off + chunk == v->len ? Z_SYNC_FLUSH : Z_NO_FLUSH;

		z.next_in = (unsigned char *)v->text + in_off;
		z.avail_in = (unsigned int)chunk;
		do { /* the zlib idiom: until deflate() leaves output space unused */
			size_t room;

			if (cap - used < 64) {
				unsigned char *p = realloc(v->gz, cap * 2);

				if (!p)
					goto fail;
				v->gz = p;
				cap *= 2;
			}
			room = cap - used > (1u << 30) ? 1u << 30 : cap - used;
			z.next_out = v->gz + used;
			z.avail_out = (unsigned int)room;
			ret = deflate(&z, flush);
			if (ret != Z_OK && ret != Z_BUF_ERROR)
				goto fail;
			used += room - z.avail_out;
		} while (z.avail_out == 0);
		in_off += chunk;
	} while (in_off < v->len);
	deflateEnd(&z);
	v->gzlen = used;
	v->crc = 0;
	for (size_t off = 0; off < v->len;) {
		size_t n = v->len - off > (1u << 30) ? 1u << 30 : v->len - off;

		v->crc = (uint32_t)crc32(v->crc, (const unsigned char *)v->text + off, (uInt)n);
		off += n;
	}
	return 0;
fail:
	deflateEnd(&z);
	free(v->gz);
	v->gz = NULL;
	return -ENOMEM;
}

static struct metrics_view *build_view(const struct snapshot *s, const char *netns)
{
	struct metrics_view *v = calloc(1, sizeof(*v));
	struct strbuf sb = { 0 }, fam = { 0 };
	int ret;

	if (!v)
		return NULL;
	strbuf_puts(&fam, fam_of(s));
	if (netns) {
		strbuf_puts(&fam, "\",netns=\"");
		render_metrics_label(&fam, netns);
	}
	strbuf_putc(&fam, '\0');
	if (fam.failed) {
		strbuf_free(&fam);
		free(v);
		return NULL;
	}
	v->fam = strbuf_detach(&fam, NULL);
	part(&sb, v, "rtsnap_build_info", "gauge",
	     "rtsnapd build information; the value is always 1.");
	strbuf_puts(&sb, "rtsnap_build_info{version=\"");
	render_metrics_label(&sb, RTSNAP_VERSION);
	strbuf_puts(&sb, "\"} 1\n");
	ret = render_route_counts(s, &sb, v);
	if (!ret)
		ret = render_devices(s, &sb, v);
	if (!ret)
		ret = render_expiring(s, &sb, v);
	if (!ret && __atomic_load_n(&s_routes_on, __ATOMIC_RELAXED))
		render_route_info(s, &sb, v);
	if (!ret && sb.failed)
		ret = -ENOMEM;
	if (ret) {
		strbuf_free(&sb);
		free(v->fam);
		free(v);
		return NULL;
	}
	v->text = strbuf_detach(&sb, &v->len);
	if (precompress(v)) {
		render_metrics_free(v);
		return NULL;
	}
	return v;
}

static pthread_mutex_t s_build_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The per-snapshot part of s, built by the first caller (under s_build_lock, so once) and
 * kept in s until it is freed; NULL when out of memory (the next scrape tries again). The
 * snapshot is immutable to its readers: this cache is the one field written after
 * publication, once, with release order. netns: the named namespace whose chain s is on (NULL:
 * the daemon's own), whose label its series carry: a chain serves one namespace, so every
 * caller passes the same for s.
 */
static const struct metrics_view *view_of(const struct snapshot *s, const char *netns)
{
	struct metrics_view *v, **slot = &snapshot_views(s)->metrics;

	v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (v)
		return v;
	pthread_mutex_lock(&s_build_lock);
	v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!v) {
		v = build_view(s, netns);
		if (v)
			__atomic_store_n(slot, v, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&s_build_lock);
	return v;
}

void render_metrics_free(struct metrics_view *v)
{
	if (!v)
		return;
	free(v->text);
	free(v->gz);
	free(v->fam);
	free(v);
}

const char *render_metrics_snapshot_text(const struct snapshot *s, size_t *len)
{
	const struct metrics_view *v = s ? view_of(s, NULL) : NULL;

	if (!v) {
		*len = 0;
		return NULL;
	}
	*len = v->len;
	return v->text;
}

/* ---- per-scrape part ---- */

/* Number of expiring routes whose deadline is at or before now_ms: O(log expiring). */
static size_t past_deadline(const struct snapshot *s, int64_t now_ms)
{
	return snapshot_expiring_after(s, now_ms);
}

/* name, then {family="fam",netns="NAME",k="v"} with what of them is there, then a space */
static void put_series(struct strbuf *sb, const char *name, const struct render_metrics_inst *in,
		       const char *k, const char *v)
{
	const char *fam = in->fam;
	int sep = 0;

	strbuf_puts(sb, name);
	if (fam || in->netns || k) {
		strbuf_putc(sb, '{');
		if (fam) {
			strbuf_puts(sb, "family=\"");
			strbuf_puts(sb, fam);
			strbuf_putc(sb, '"');
			sep = 1;
		}
		if (in->netns) {
			strbuf_puts(sb, sep ? ",netns=\"" : "netns=\"");
			render_metrics_label(sb, in->netns);
			strbuf_putc(sb, '"');
			sep = 1;
		}
		if (k) {
			if (sep)
				strbuf_putc(sb, ',');
			strbuf_puts(sb, k);
			strbuf_puts(sb, "=\"");
			render_metrics_label(sb, v);
			strbuf_putc(sb, '"');
		}
		strbuf_putc(sb, '}');
	}
	strbuf_putc(sb, ' ');
}

/* The labels of in before le="...", each followed by a comma: family, netns. */
static void put_labels_comma(struct strbuf *sb, const struct render_metrics_inst *in)
{
	if (in->fam) {
		strbuf_puts(sb, "family=\"");
		strbuf_puts(sb, in->fam);
		strbuf_puts(sb, "\",");
	}
	if (in->netns) {
		strbuf_puts(sb, "netns=\"");
		render_metrics_label(sb, in->netns);
		strbuf_puts(sb, "\",");
	}
}

/* A histogram's samples from non-cumulative bucket counters (n bounds, then +Inf) and a sum. */
static void histogram_samples(struct strbuf *sb, const char *name,
			      const struct render_metrics_inst *in, const double *bounds,
			      unsigned int n, const uint64_t *bucket, const double *sump)
{
	uint64_t acc = 0;
	double sum;

	for (unsigned int i = 0; i < n; i++) {
		acc += stats_get(bucket[i]);
		strbuf_appendf(sb, "%s_bucket{", name);
		put_labels_comma(sb, in);
		strbuf_appendf(sb, "le=\"%g\"} %llu\n", bounds[i], (unsigned long long)acc);
	}
	acc += stats_get(bucket[n]);
	strbuf_appendf(sb, "%s_bucket{", name);
	put_labels_comma(sb, in);
	strbuf_appendf(sb, "le=\"+Inf\"} %llu\n", (unsigned long long)acc);
	__atomic_load(sump, &sum, __ATOMIC_RELAXED);
	/* _count from the buckets, so that it always equals the +Inf bucket */
	strbuf_appendf(sb, "%s_sum", name);
	put_series(sb, "", in, NULL, NULL); /* the labels alone: "{...} " or " " */
	strbuf_appendf(sb, "%.6f\n%s_count", sum, name);
	put_series(sb, "", in, NULL, NULL);
	strbuf_appendf(sb, "%llu\n", (unsigned long long)acc);
}

/* Every counter of the instances' table (stats.h), family by family. */
static void render_counters(struct strbuf *sb, const struct render_metrics_inst *in, size_t nin)
{
	for (size_t k = 0; k < stats_table_len; k++) {
		const struct stats_desc *d = &stats_table[k];

		family(sb, d->metric, d->type, d->help);
		for (size_t x = 0; x < nin; x++) {
			if (!d->label) {
				put_series(sb, d->metric, &in[x], NULL, NULL);
				strbuf_appendf(sb, "%llu\n",
					       (unsigned long long)stats_value(in[x].st, d, 0));
				continue;
			}
			for (int i = 0; i < d->n; i++) {
				put_series(sb, d->metric, &in[x], d->label, d->label_value(i));
				strbuf_appendf(sb, "%llu\n",
					       (unsigned long long)stats_value(in[x].st, d, i));
			}
		}
	}
}

static void render_scrape(const struct render_metrics_inst *in, size_t nin, int64_t now_ms,
			  struct strbuf *sb)
{
	int any = 0;

	for (size_t x = 0; x < nin; x++)
		any |= in[x].s != NULL;
	if (any) {
		family(sb, "rtsnap_snapshot_generation", "gauge",
		       "Generation of the snapshot in use (1, 2, ... in publication order).");
		for (size_t x = 0; x < nin; x++)
			if (in[x].s) {
				put_series(sb, "rtsnap_snapshot_generation", &in[x], NULL, NULL);
				strbuf_appendf(sb, "%llu\n",
					       (unsigned long long)snapshot_generation(in[x].s));
			}
		/* per scrape: the collector stamps a snapshot after building it */
		family(sb, "rtsnap_snapshot_timestamp_seconds", "gauge",
		       "When the snapshot in use was taken, in seconds since the Unix epoch.");
		for (size_t x = 0; x < nin; x++)
			if (in[x].s) {
				struct timespec at = snapshot_taken_at(in[x].s);

				put_series(sb, "rtsnap_snapshot_timestamp_seconds", &in[x], NULL,
					   NULL);
				strbuf_appendf(sb, "%.3f\n",
					       (double)at.tv_sec +
						   (double)(at.tv_nsec / 1000000) / 1000.0);
			}
		family(sb, "rtsnap_snapshot_age_seconds", "gauge",
		       "Seconds since the dump of the snapshot in use started.");
		for (size_t x = 0; x < nin; x++)
			if (in[x].s) {
				put_series(sb, "rtsnap_snapshot_age_seconds", &in[x], NULL, NULL);
				strbuf_appendf(sb, "%.3f\n",
					       (double)(now_ms - snapshot_taken_mono_ms(in[x].s)) /
						   1000.0);
			}
		family(sb, "rtsnap_snapshot_routes_changed", "gauge",
		       "Routes added and removed by the last publication, compared with the "
		       "snapshot it replaced.");
		for (size_t x = 0; x < nin; x++)
			if (in[x].s) {
				put_series(sb, "rtsnap_snapshot_routes_changed", &in[x], "change",
					   "added");
				strbuf_appendf(sb, "%u\n", stats_get(in[x].st->last_added));
				put_series(sb, "rtsnap_snapshot_routes_changed", &in[x], "change",
					   "removed");
				strbuf_appendf(sb, "%u\n", stats_get(in[x].st->last_removed));
			}
		family(sb, "rtsnap_routes_next_expiry_seconds", "gauge",
		       "Seconds until the earliest expiry deadline still ahead among the routes of "
		       "the snapshot (no sample when none).");
		for (size_t x = 0; x < nin; x++) {
			const struct snapshot *s = in[x].s;

			size_t past = s ? past_deadline(s, now_ms) : 0;

			if (s && past < snapshot_nexpiring(s)) {
				put_series(sb, "rtsnap_routes_next_expiry_seconds", &in[x], NULL,
					   NULL);
				strbuf_appendf(
				    sb, "%.3f\n",
				    (double)(snapshot_route(s, snapshot_expiring(s)[past])
						 ->expires_ms -
					     now_ms) /
					1000.0);
			}
		}
		family(sb, "rtsnap_routes_past_deadline", "gauge",
		       "Routes of the snapshot whose expiry deadline has passed but that the "
		       "kernel still listed (garbage collection lag).");
		for (size_t x = 0; x < nin; x++)
			if (in[x].s) {
				put_series(sb, "rtsnap_routes_past_deadline", &in[x], NULL, NULL);
				strbuf_appendf(sb, "%llu\n",
					       (unsigned long long)past_deadline(in[x].s, now_ms));
			}
	}
	family(sb, "rtsnap_snapshot_fresh", "gauge",
	       "1 when the last collection succeeded and is recent, else 0 (stale snapshot).");
	for (size_t x = 0; x < nin; x++) {
		put_series(sb, "rtsnap_snapshot_fresh", &in[x], NULL, NULL);
		strbuf_appendf(sb, "%d\n", stats_is_fresh(in[x].st) ? 1 : 0);
	}
	family(sb, "rtsnap_fault", "gauge",
	       "1 while a persistent fault of this kind lasts (memory: the collector ran out and "
	       "recovers with a fresh dump; proc_file: --proc-file cannot be written; "
	       "web_config: SIGHUP kept the previous web configuration), else 0. /status "
	       "tells since when and why.");
	for (size_t x = 0; x < nin; x++)
		for (int k = 0; k < FAULT__COUNT; k++) {
			put_series(sb, "rtsnap_fault", &in[x], "kind",
				   stats_fault_name((enum fault_kind)k));
			strbuf_appendf(sb, "%d\n",
				       stats_fault_active(in[x].st, (enum fault_kind)k) ? 1 : 0);
		}
	family(sb, "rtsnap_collection_duration_seconds", "histogram",
	       "Time to build and publish a snapshot (published ones).");
	for (size_t x = 0; x < nin; x++)
		histogram_samples(sb, "rtsnap_collection_duration_seconds", &in[x],
				  stats_duration_bounds, STATS_DURATION_BUCKETS,
				  in[x].st->duration_bucket, &in[x].st->duration_sum);
	family(sb, "rtsnap_publication_latency_seconds", "histogram",
	       "Time from receiving the first change of a publication to publishing it.");
	for (size_t x = 0; x < nin; x++)
		histogram_samples(sb, "rtsnap_publication_latency_seconds", &in[x],
				  stats_latency_bounds, STATS_LATENCY_BUCKETS,
				  in[x].st->latency.bucket, &in[x].st->latency.sum);
	render_counters(sb, in, nin);
}

void render_metrics_scrape(const struct snapshot *s, const struct collector_stats *st,
			   int64_t now_ms, struct strbuf *sb)
{
	const struct render_metrics_inst in = { s, st, NULL, NULL };

	render_scrape(&in, 1, now_ms, sb);
}

void render_metrics_scrape2(const struct snapshot *s, const struct collector_stats *st,
			    const struct snapshot *s4, const struct collector_stats *st4,
			    int64_t now_ms, struct strbuf *sb)
{
	const struct render_metrics_inst in[2] = { { s, st, NULL, NULL },
						   { s4, st4, "inet", NULL } };

	if (!st) /* IPv6 not followed */
		render_scrape(&in[1], 1, now_ms, sb);
	else
		render_scrape(in, st4 ? 2 : 1, now_ms, sb);
}

void render_metrics_scrape_n(const struct render_metrics_inst *in, size_t n, int64_t now_ms,
			     struct strbuf *sb)
{
	render_scrape(in, n, now_ms, sb);
}

/* ---- process metrics ---- */

static pthread_once_t s_proc_once = PTHREAD_ONCE_INIT;
static double s_start_time; /* process_start_time_seconds */
static long s_hz, s_pagesize;

/* Fields 3.. of /proc/self/stat (after "pid (comm) "), split on spaces; 0 on success. */
static int read_stat(unsigned long long f[64], int *nf)
{
	char buf[1024], *p, *end;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || !p[1])
		return -EIO;
	p += 2;
	*nf = 0;
	while (*p && *nf < 64) {
		if (*nf == 0) { /* state, a letter */
			f[(*nf)++] = 0;
			while (*p && *p != ' ')
				p++;
		} else {
			f[(*nf)++] = strtoull(p, &end, 10);
			p = end;
		}
		while (*p == ' ')
			p++;
	}
	return 0;
}

/* Field k (1-based, as in proc(5)) from the array read_stat() filled. */
#define STAT(f, k) ((f)[(k)-3])

static void proc_init(void)
{
	unsigned long long f[64], btime = 0;
	char line[256];
	FILE *fp;
	int nf = 0;

	s_hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	s_pagesize = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	fp = fopen("/proc/stat", "re");
	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	if (fp)
		fclose(fp);
	if (btime && read_stat(f, &nf) == 0 && nf >= 22 - 2)
		s_start_time = (double)btime + (double)STAT(f, 22) / (double)s_hz;
	else
		s_start_time = (double)stats_start_time();
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

/*
 * Counting the descriptors lists /proc/self/fd: the kernel walks the whole fd table under
 * its lock, so with 1 024 connections open a scrape cost ~0.4 ms of kernel time and scrapes
 * in parallel fought over the table's lock (70 % of the daemon's samples at 1 024 keep-alive
 * scrapers). Counted at most once a second: one scrape counts, the others in that second
 * take its count (a scrape interval is seconds; the value is a gauge).
 */
static long open_fds(void)
{
	static long s_fds = -1;	 /* atomic: the last count */
	static int64_t s_fds_ms; /* atomic: when it was taken (CLOCK_MONOTONIC) */
	struct timespec ts;
	int64_t now, last;
	long v;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	last = __atomic_load_n(&s_fds_ms, __ATOMIC_ACQUIRE);
	v = __atomic_load_n(&s_fds, __ATOMIC_RELAXED);
	if (v >= 0 &&
	    (now - last < 1000 || !__atomic_compare_exchange_n(&s_fds_ms, &last, now, 0,
							       __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)))
		return v; /* fresh, or another scrape is counting now */
	v = count_fds();
	if (v >= 0) {
		__atomic_store_n(&s_fds, v, __ATOMIC_RELAXED);
		__atomic_store_n(&s_fds_ms, now, __ATOMIC_RELEASE);
	}
	return v;
}

void render_metrics_process(struct strbuf *sb)
{
	unsigned long long f[64];
	struct rlimit rl;
	int nf = 0;
	long fds;

	pthread_once(&s_proc_once, proc_init);
	if (read_stat(f, &nf) == 0 && nf >= 24 - 2) {
		counter_f(sb, "process_cpu_seconds_total",
			  "Total user and system CPU time spent in seconds.",
			  (double)(STAT(f, 14) + STAT(f, 15)) / (double)s_hz);
		gauge_u(sb, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
			STAT(f, 23));
		gauge_u(sb, "process_resident_memory_bytes", "Resident memory size in bytes.",
			STAT(f, 24) * (unsigned long long)s_pagesize);
	}
	fds = open_fds();
	if (fds >= 0)
		gauge_u(sb, "process_open_fds", "Number of open file descriptors.", (uint64_t)fds);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		gauge_u(sb, "process_max_fds", "Maximum number of open file descriptors.",
			rl.rlim_cur);
	gauge_f(sb, "process_start_time_seconds",
		"Start time of the process since unix epoch in seconds.", s_start_time);
}

/* ---- the body ---- */

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* Replace *dyn by the deflate continuation of the snapshot's stream and the gzip trailer. */
static int gzip_tail(const struct metrics_view *v, struct strbuf *dyn)
{
	z_stream z = { 0 };
	struct strbuf out = { 0 };
	uint32_t crc;
	size_t total;
	int ret;

	if (dyn->len > (1u << 30))
		return -E2BIG;
	/* the per-scrape text is a few kilobytes: a small window is enough and cheap */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -12, 6, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	if (!strbuf_reserve(&out, deflateBound(&z, dyn->len) + 16)) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)dyn->buf;
	z.avail_in = (unsigned int)dyn->len;
	z.next_out = (unsigned char *)out.buf + out.len;
	z.avail_out = (unsigned int)(out.cap - out.len - 8);
	ret = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		strbuf_free(&out);
		return -ENOMEM;
	}
	out.len += z.total_out;
	crc = (uint32_t)crc32(0, (const unsigned char *)dyn->buf, (uInt)dyn->len);
	crc = (uint32_t)crc32_combine(v->crc, crc, (z_off_t)dyn->len);
	total = v->len + dyn->len;
	put_le32((unsigned char *)out.buf + out.len, crc);
	put_le32((unsigned char *)out.buf + out.len + 4, (uint32_t)total);
	out.len += 8;
	strbuf_free(dyn);
	*dyn = out;
	return 0;
}

/*
 * /metrics of two instances: each family of the per-snapshot part once, its HELP from v6,
 * then v6's samples and v4's (v4's build info left out: the process has one), then *dyn. As
 * segments into both views and *dyn; with gzip the whole is compressed into *dyn per scrape
 * (the two views cannot share one pre-compressed stream).
 */
static int body_two(const struct metrics_view *v6, const struct metrics_view *v4,
		    struct strbuf *dyn, int gzip, struct render_seg **segs)
{
	unsigned int n = 0, np = v6->nparts > v4->nparts ? v6->nparts : v4->nparts;
	struct render_seg *sg = malloc((2 * (size_t)np + 1) * sizeof(*sg));

	if (!sg)
		return -ENOMEM;
	for (unsigned int k = 0; k < np; k++) {
		if (k < v6->nparts) {
			size_t end = k + 1 < v6->nparts ? v6->hdr[k + 1] : v6->len;

			sg[n++] = (struct render_seg){ v6->text + v6->hdr[k], end - v6->hdr[k] };
		}
		if (k < v4->nparts && k > 0) {
			size_t end = k + 1 < v4->nparts ? v4->hdr[k + 1] : v4->len;
			size_t from = k < v6->nparts ? v4->body[k] : v4->hdr[k];

			sg[n++] = (struct render_seg){ v4->text + from, end - from };
		}
	}
	sg[n++] = (struct render_seg){ dyn->buf ? dyn->buf : "", dyn->len };
	if (gzip) {
		size_t total = 0;
		struct strbuf out = { 0 };
		z_stream z = { 0 };
		int ret = Z_OK;

		for (unsigned int k = 0; k < n; k++)
			total += sg[k].len;
		if (total > (1u << 30) ||
		    deflateInit2(&z, total > (1u << 20) ? 1 : Z_DEFAULT_COMPRESSION, Z_DEFLATED,
				 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(sg);
			return -ENOMEM;
		}
		if (!strbuf_reserve(&out, deflateBound(&z, total) + 64)) {
			deflateEnd(&z);
			free(sg);
			return -ENOMEM;
		}
		z.next_out = (unsigned char *)out.buf;
		z.avail_out = (unsigned int)out.cap;
		for (unsigned int k = 0; k < n && (ret == Z_OK || ret == Z_BUF_ERROR); k++) {
			z.next_in = (unsigned char *)sg[k].p;
			z.avail_in = (unsigned int)sg[k].len;
			ret = deflate(&z, k + 1 == n ? Z_FINISH : Z_NO_FLUSH);
		}
		deflateEnd(&z);
		if (ret != Z_STREAM_END) {
			strbuf_free(&out);
			free(sg);
			return -ENOMEM;
		}
		out.len = z.total_out;
		strbuf_free(dyn);
		*dyn = out;
		sg[0] = (struct render_seg){ dyn->buf, dyn->len };
		n = 1;
	}
	*segs = sg;
	return (int)n;
}

int render_metrics_body_n(const struct render_metrics_inst *in, size_t nin, struct strbuf *dyn,
			  int gzip, struct render_seg **segs)
{
	const struct metrics_view **v = calloc(nin ? nin : 1, sizeof(*v));
	struct render_seg *sg = malloc(sizeof(*sg));
	struct strbuf out = { 0 };
	unsigned int np = 0;
	size_t nv = 0;

	if (!v || !sg || dyn->failed) {
		free(v);
		free(sg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nin; i++) {
		const struct metrics_view *x = in[i].s ? view_of(in[i].s, in[i].netns) : NULL;

		if (x) { /* one that cannot be built (no memory) is left out */
			v[nv++] = x;
			np = x->nparts > np ? x->nparts : np;
		}
	}
	/* each family once: the HELP of the first view that has it, then every view's samples
	 * (the build info of the first alone: the process has one) */
	for (unsigned int k = 0; k < np; k++) {
		int head = 1;

		for (size_t j = 0; j < nv; j++) {
			size_t end, from;

			if (k >= v[j]->nparts || (k == 0 && j > 0))
				continue;
			end = k + 1 < v[j]->nparts ? v[j]->hdr[k + 1] : v[j]->len;
			from = head ? v[j]->hdr[k] : v[j]->body[k];
			strbuf_append(&out, v[j]->text + from, end - from);
			head = 0;
		}
	}
	free(v);
	strbuf_append(&out, dyn->buf ? dyn->buf : "", dyn->len);
	if (out.failed || out.len > (1u << 30)) {
		strbuf_free(&out);
		free(sg);
		return -ENOMEM;
	}
	if (gzip) {
		struct strbuf gz = { 0 };
		z_stream z = { 0 };
		int ret;

		if (deflateInit2(&z, out.len > (1u << 20) ? 1 : Z_DEFAULT_COMPRESSION, Z_DEFLATED,
				 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			strbuf_free(&out);
			free(sg);
			return -ENOMEM;
		}
		if (!strbuf_reserve(&gz, deflateBound(&z, out.len) + 64)) {
			deflateEnd(&z);
			strbuf_free(&out);
			free(sg);
			return -ENOMEM;
		}
		z.next_in = (unsigned char *)out.buf;
		z.avail_in = (unsigned int)out.len;
		z.next_out = (unsigned char *)gz.buf;
		z.avail_out = (unsigned int)gz.cap;
		ret = deflate(&z, Z_FINISH);
		deflateEnd(&z);
		strbuf_free(&out);
		if (ret != Z_STREAM_END) {
			strbuf_free(&gz);
			free(sg);
			return -ENOMEM;
		}
		gz.len = z.total_out;
		out = gz;
	}
	strbuf_free(dyn);
	*dyn = out;
	sg[0] = (struct render_seg){ dyn->buf ? dyn->buf : "", dyn->len };
	*segs = sg;
	return 1;
}

int render_metrics_body(const struct snapshot *s, const struct snapshot *s4, struct strbuf *dyn,
			int gzip, struct render_seg **segs)
{
	const struct metrics_view *v = view_of(s, NULL), *v4 = s4 ? view_of(s4, NULL) : NULL;
	struct render_seg *sg;
	int ret;

	if (dyn->failed || (!v && gzip))
		return -ENOMEM;
	if (v && v4)
		return body_two(v, v4, dyn, gzip, segs);
	sg = malloc(2 * sizeof(*sg));
	if (!sg)
		return -ENOMEM;
	if (!v) {
		/* no memory for the snapshot's families (out of memory, see the memory fault):
		 * the per-scrape ones still tell what is wrong */
		sg[0].p = dyn->buf ? dyn->buf : "";
		sg[0].len = dyn->len;
		*segs = sg;
		return 1;
	}
	if (gzip) {
		ret = gzip_tail(v, dyn);
		if (ret) {
			free(sg);
			return ret;
		}
		sg[0].p = (const char *)v->gz;
		sg[0].len = v->gzlen;
	} else {
		sg[0].p = v->text;
		sg[0].len = v->len;
	}
	sg[1].p = dyn->buf ? dyn->buf : "";
	sg[1].len = dyn->len;
	*segs = sg;
	return 2;
}
