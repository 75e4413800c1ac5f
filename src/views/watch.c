// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch.c - watched routes evaluated at publication, and their /watch and /metrics text
 * (watch.h, docs/watch.md).
 *
 * Who does what: the collector thread owns its instance's struct watch_state and is the only
 * writer of answers; watch_eval() runs on it between the build and snapshot_publish(), and
 * hangs the answers on the snapshot (snapshot_views(s)->watch), from where they are read by
 * any thread holding the snapshot. An answer is immutable once made and reference-counted:
 * held by the state (the current one), by each snapshot's view that shows it, and by the
 * readings HTTP makes; the last holder frees it, on any thread. A watch whose answer holds
 * (same route, same object) keeps the same answer, so a publication allocates only for the
 * watches whose answer changed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/rtnetlink.h>

#include "rtsnap/diff.h"
#include "rtsnap/index.h"
#include "rtsnap/names.h"
#include "rtsnap/query.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/route4.h"
#include "rtsnap/stats.h"
#include "rtsnap/watch.h"

static struct watch_answer *answer_get(struct watch_answer *a)
{
	if (a)
		__atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
	return a;
}

void watch_answer_put(struct watch_answer *a)
{
	if (!a || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(a->route);
	free(a->info);
	free(a->key);
	for (unsigned int i = 0; i < a->nhist; i++)
		free(a->hist[i].route);
	free(a);
}

void watch_view_free(struct watch_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++)
		watch_answer_put(v->ans[i]);
	free(v->ans);
	free(v->pos);
	watch_list_put(v->list);
	free(v);
}

/* ---- the collector's state ---- */

int watch_state_init(struct watch_state *st, uint8_t family, const char *netns)
{
	memset(st, 0, sizeof(*st));
	st->family = family;
	st->netns = strdup(netns ? netns : "");
	return st->netns ? 0 : -ENOMEM;
}

void watch_state_free(struct watch_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		watch_answer_put(st->ans[i]);
	free(st->ans);
	free(st->pos);
	free(st->by_target);
	free(st->due);
	free(st->netns);
	watch_list_put(st->list);
	memset(st, 0, sizeof(*st));
}

int watch_state_stale(const struct watch_state *st)
{
	return st->serial != watch_list_serial();
}

static int mine(const struct watch_state *st, const struct watch_spec *w)
{
	return w->family == st->family && !strcmp(w->netns, st->netns);
}

/* qsort has no argument: the state being sorted (the collector thread's) */
static _Thread_local const struct watch_state *s_sorting;

/* The order of st->by_target: table, then the address (a lookup's, a prefix's first). */
static int target_cmp(const struct watch_spec *a, const struct watch_spec *b)
{
	if (a->table != b->table)
		return a->table < b->table ? -1 : 1;
	return memcmp(a->addr, b->addr, 16);
}

static int by_target(const void *x, const void *y)
{
	const struct watch_state *st = s_sorting;

	return target_cmp(watch_list_at(st->list, st->pos[*(const uint32_t *)x]),
			  watch_list_at(st->list, st->pos[*(const uint32_t *)y]));
}

/*
 * A new list: this instance's watches in it, each keeping its answer (and so its count and
 * history) when the previous list had a watch of the same name and spec.
 */
static int remap(struct watch_state *st, struct watch_list *l)
{
	size_t n = 0, k = 0;
	uint32_t *pos;
	struct watch_answer **ans;

	for (size_t i = 0; i < watch_list_count(l); i++)
		n += mine(st, watch_list_at(l, i));
	pos = malloc((n + 1) * sizeof(*pos));
	ans = calloc(n + 1, sizeof(*ans));
	if (!pos || !ans) {
		free(pos);
		free(ans);
		return -ENOMEM;
	}
	for (size_t i = 0; i < watch_list_count(l); i++) {
		const struct watch_spec *w = watch_list_at(l, i);
		long o;

		if (!mine(st, w))
			continue;
		pos[k] = (uint32_t)i;
		o = st->list ? watch_list_find(st->list, w->name) : -1;
		if (o >= 0 && !strcmp(watch_list_at(st->list, (size_t)o)->spec, w->spec)) {
			/* its old place among this instance's watches */
			for (size_t j = 0; j < st->n; j++)
				if (st->pos[j] == (uint32_t)o) {
					ans[k] = st->ans[j];
					st->ans[j] = NULL;
					break;
				}
		}
		k++;
	}
	for (size_t j = 0; j < st->n; j++)
		watch_answer_put(st->ans[j]);
	free(st->ans);
	free(st->pos);
	free(st->by_target);
	free(st->due);
	watch_list_put(st->list);
	st->list = watch_list_get(l);
	st->pos = pos;
	st->ans = ans;
	st->n = n;
	st->by_target = malloc((n + 1) * sizeof(*st->by_target));
	st->due = calloc(n + 1, 1);
	if (!st->by_target || !st->due)
		return -ENOMEM; /* st stays consistent: everything is evaluated */
	for (size_t j = 0; j < n; j++)
		st->by_target[j] = (uint32_t)j;
	s_sorting = st;
	qsort(st->by_target, n, sizeof(*st->by_target), by_target);
	s_sorting = NULL;
	return 0;
}

/* The route of table whose prefix is exactly w's (the first in kernel order: the one the
 * kernel uses), or -ENOENT. */
static long exact_route(const struct snapshot *s, const struct watch_spec *w)
{
	int tpos = index_table_pos(s, w->table);
	uint32_t *v = NULL;
	long n, found = -ENOENT;
	size_t alen = w->family == AF_INET ? 4 : 16;

	if (tpos < 0)
		return -ENOENT;
	/* the routes covering the prefix: one hash probe per prefix length present */
	n = index_covers(s, tpos, w->addr, w->len, &v);
	for (long k = 0; k < n; k++) {
		const struct route *r = snapshot_route(s, v[k]);

		if (r->placeholder || r->dst_len != w->len || r->src_len ||
		    memcmp(r->dst, w->addr, alen))
			continue;
		found = (long)v[k];
		break;
	}
	free(v);
	return n < 0 ? n : found;
}

static long resolve(const struct snapshot *s, const struct watch_spec *w, int64_t now_ms)
{
	if (w->kind == WATCH_ROUTE)
		return exact_route(s, w);
	if (w->family == AF_INET)
		return index_lookup4(s, w->table, w->addr);
	return index_lookup(s, w->table, w->addr, NULL, now_ms);
}

static void put_addr(struct strbuf *sb, uint8_t family, const uint8_t *a)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(family, a, buf, sizeof(buf));
	strbuf_puts(sb, buf);
}

/* dst as `ip route` prints it: default, an address (a host route) or ADDR/LEN. */
static void put_dst(struct strbuf *sb, const struct route *r)
{
	uint8_t fam = r->family == AF_INET ? AF_INET : AF_INET6;
	unsigned int bits = fam == AF_INET ? 32 : 128;

	if (!r->dst_len) {
		strbuf_puts(sb, "default");
		return;
	}
	put_addr(sb, fam, r->dst);
	if (r->dst_len != bits)
		strbuf_appendf(sb, "/%u", r->dst_len);
}

/* One hop's dev and gateway (a nexthop object's for a route that names one). */
static void hop_of(const struct snapshot *s, const struct route *r, unsigned int i,
		   uint32_t *ifindex, uint8_t *gw_family, const uint8_t **gw)
{
	uint8_t fam = r->family == AF_INET ? AF_INET : AF_INET6;

	*gw = NULL;
	*ifindex = 0;
	if (r->nhid && !r->nh_count) {
		const struct route_nhobj *o = snapshot_nhobj(s, r->nhid);

		/* a group: its first member, as /proc shows it */
		if (o && o->is_group)
			o = snapshot_nhobj(s, o->first);
		if (!o)
			return;
		*ifindex = o->ifindex;
		if (o->has_gw) {
			*gw = o->gw;
			*gw_family = o->family == AF_INET ? AF_INET : AF_INET6;
		}
		return;
	}
	{
		const struct route_nh *nh = snapshot_route_nh(s, r, i);

		*ifindex = nh->ifindex;
		if (nh->has_gw) {
			*gw = nh->gw;
			*gw_family =
			    fam == AF_INET && nh->has_gw != ROUTE_GW_VIA6 ? AF_INET : AF_INET6;
		}
	}
}

/* Labels of rtsnap_watch_route_info (escaped) into info, and the change key into key. */
static void describe(const struct snapshot *s, const struct route *r, struct strbuf *info,
		     struct strbuf *key)
{
	const struct names *nm = snapshot_ctx(s)->names;
	struct strbuf v = { 0 };
	char buf[12];
	unsigned int nh = r->nh_count ? r->nh_count : (r->nhid ? 1 : 0);

	strbuf_puts(info, "table=\"");
	render_metrics_label(info, names_table(nm, r->table, buf));
	strbuf_puts(info, "\",dst=\"");
	put_dst(info, r);
	strbuf_puts(info, "\",dev=\"");
	for (unsigned int i = 0; i < nh; i++) {
		uint32_t ifi;
		uint8_t gf = 0;
		const uint8_t *gw;

		hop_of(s, r, i, &ifi, &gf, &gw);
		if (i)
			strbuf_putc(&v, ',');
		strbuf_puts(&v, snapshot_link_name(s, ifi));
	}
	strbuf_putc(&v, '\0');
	if (!v.failed)
		render_metrics_label(info, v.buf);
	v.len = 0;
	strbuf_puts(info, "\",gateway=\"");
	for (unsigned int i = 0; i < nh; i++) {
		uint32_t ifi;
		uint8_t gf = 0;
		const uint8_t *gw;

		hop_of(s, r, i, &ifi, &gf, &gw);
		if (i)
			strbuf_putc(info, ',');
		if (gw)
			put_addr(info, gf, gw);
	}
	strbuf_free(&v);
	strbuf_puts(info, "\",protocol=\"");
	render_metrics_label(info, names_protocol(nm, r->protocol, buf));
	strbuf_appendf(info, "\",metric=\"%u\",nexthops=\"%u\"", r->metric, nh);
	/* a change: another type, table, prefix, metric, protocol or set of hops */
	strbuf_appendf(key, "%u %u ", r->type, r->tos);
	strbuf_append(key, info->buf, info->len);
	if (r->src_len) {
		strbuf_puts(key, " from ");
		put_addr(key, AF_INET6, r->src);
		strbuf_appendf(key, "/%u", r->src_len);
	}
}

static char *finish(struct strbuf *sb)
{
	strbuf_putc(sb, '\0');
	if (sb->failed) {
		strbuf_free(sb);
		return NULL;
	}
	return strbuf_detach(sb, NULL);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * The answer for one watch in s: old (the previous one, or NULL the first time) when nothing
 * of it changed, else a new one carrying old's count and history forward.
 */
static int answer(const struct snapshot *s, const struct watch_spec *w, struct watch_answer *old,
		  int64_t now_ms, int64_t now_real_ms, struct watch_answer **out)
{
	struct strbuf route = { 0 }, info = { 0 }, key = { 0 };
	long i = resolve(s, w, now_ms);
	struct watch_answer *a;
	int changed;

	if (i >= 0) {
		query_render_route(s, (size_t)i, now_ms, &route);
		describe(s, snapshot_route(s, (size_t)i), &info, &key);
		strbuf_putc(&route, '\0');
		strbuf_putc(&key, '\0');
		if (route.failed || info.failed || key.failed) {
			strbuf_free(&route);
			strbuf_free(&info);
			strbuf_free(&key);
			return -ENOMEM;
		}
		if (old && old->present && !strcmp(old->key, key.buf) &&
		    !strcmp(old->route, route.buf)) {
			strbuf_free(&route);
			strbuf_free(&info);
			strbuf_free(&key);
			*out = answer_get(old);
			return 0;
		}
	} else if (old && !old->present) {
		*out = answer_get(old);
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		goto nomem;
	a->refs = 1;
	a->family = w->family;
	a->present = i >= 0;
	if (a->present) {
		a->route = strbuf_detach(&route, NULL);
		a->info = finish(&info);
		a->key = strbuf_detach(&key, NULL);
		if (!a->info)
			goto nomem;
	}
	/* the first answer is no change; nor is an object that shows the same route
	 * otherwise (its "expires", metrics) */
	changed = old && (old->present != a->present || !same_str(old->key, a->key));
	a->changes = old ? old->changes + (uint64_t)changed : 0;
	a->changed_ms = changed ? now_real_ms : old ? old->changed_ms : stats_start_time() * 1000;
	a->generation = snapshot_next_generation(s);
	if (old) {
		unsigned int k = 0;

		if (changed) {
			a->hist[k].generation = a->generation;
			a->hist[k].time_ms = now_real_ms;
			if (a->route && !(a->hist[k].route = strdup(a->route)))
				goto nomem;
			a->nhist = ++k;
		}
		for (unsigned int j = 0; j < old->nhist && k < WATCH_HISTORY; j++, k++) {
			a->hist[k] = old->hist[j];
			a->hist[k].route = NULL;
			a->nhist = k + 1;
			if (old->hist[j].route && !(a->hist[k].route = strdup(old->hist[j].route)))
				goto nomem;
		}
	}
	*out = a;
	return 0;
nomem:
	strbuf_free(&route);
	strbuf_free(&info);
	strbuf_free(&key);
	watch_answer_put(a);
	return -ENOMEM;
}

/*
 * Mark in st->due the watches a route of table with destination dst/len can answer: the
 * watches of that table whose prefix's first address or lookup address lies inside dst/len
 * (a binary search in st->by_target, then the run inside). A prefix watch is due only for
 * its exact prefix, a lookup for every prefix containing its address.
 */
static void mark_due(struct watch_state *st, uint32_t table, const uint8_t *dst, unsigned int len)
{
	unsigned int bits = st->family == AF_INET ? 32 : 128;
	struct watch_spec lo = { .table = table }, hi = { .table = table };
	size_t a = 0, b = st->n;

	memcpy(lo.addr, dst, bits / 8);
	memcpy(hi.addr, dst, bits / 8);
	for (unsigned int i = len; i < bits; i++)
		hi.addr[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	while (a < b) { /* the first watch not below lo */
		size_t mid = a + (b - a) / 2;

		if (target_cmp(watch_list_at(st->list, st->pos[st->by_target[mid]]), &lo) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < st->n; a++) {
		uint32_t k = st->by_target[a];
		const struct watch_spec *w = watch_list_at(st->list, st->pos[k]);

		if (target_cmp(w, &hi) > 0)
			break;
		if (w->kind == WATCH_LOOKUP || w->len == len)
			st->due[k] = 1;
	}
}

/*
 * Which watches the publication of s after prev can affect, into st->due: those a route
 * that differs between them can answer (diff.h: the segments both share are skipped). 0, or
 * 1 when every watch is to be evaluated (no prev, too many changes, no memory).
 */
static int find_due(struct watch_state *st, const struct snapshot *s, const struct snapshot *prev)
{
	struct diff d = { 0 };
	int ret;

	if (!prev || !st->due || !st->by_target)
		return 1;
	ret = diff_snapshots(prev, s, WATCH_DIFF_MAX, &d);
	if (ret) {
		diff_free(&d);
		return 1;
	}
	memset(st->due, 0, st->n);
	for (size_t i = 0; i < d.nremoved; i++) {
		const struct route *r = &d.removed[i].g->routes[d.removed[i].pos];

		mark_due(st, r->table, r->dst, r->dst_len);
	}
	for (size_t i = 0; i < d.nadded; i++) {
		const struct route *r = &d.added[i].g->routes[d.added[i].pos];

		mark_due(st, r->table, r->dst, r->dst_len);
	}
	diff_free(&d);
	return 0;
}

int watch_eval(struct watch_state *st, struct snapshot *s, const struct snapshot *prev,
	       int64_t now_real_ms)
{
	int all = 1;

	uint64_t serial = watch_list_serial(); /* before the list: a later one is seen next */
	struct watch_list *l = watch_list_current();
	struct watch_view *v = NULL;
	int64_t now_ms = snapshot_now_ms();
	int ret = 0;

	if (l != st->list) {
		ret = remap(st, l);
		if (ret)
			goto out;
		prev = NULL; /* every watch, the new ones first of all */
	}
	st->serial = serial;
	if (!st->n)
		goto out; /* nothing of this instance's: no view, every reader sees absent */
	/* the routes and their objects change only with what diff sees: a watch that no
	 * changed route can answer keeps its answer */
	all = find_due(st, s, prev);
	v = calloc(1, sizeof(*v));
	if (!v || !(v->ans = calloc(st->n, sizeof(*v->ans))) ||
	    !(v->pos = malloc(st->n * sizeof(*v->pos)))) {
		ret = -ENOMEM;
		goto out;
	}
	v->list = watch_list_get(l);
	v->n = st->n;
	memcpy(v->pos, st->pos, st->n * sizeof(*v->pos));
	for (size_t k = 0; k < st->n; k++) {
		struct watch_answer *a;

		if (!all && !st->due[k] && st->ans[k]) {
			v->ans[k] = answer_get(st->ans[k]);
			continue;
		}
		ret = answer(s, watch_list_at(l, st->pos[k]), st->ans[k], now_ms, now_real_ms, &a);
		if (ret)
			goto out;
		st->evaluated++;
		watch_answer_put(st->ans[k]);
		st->ans[k] = a;
		v->ans[k] = answer_get(a);
	}
	snapshot_views(s)->watch = v;
	v = NULL;
out:
	watch_view_free(v);
	watch_list_put(l);
	return ret;
}

/* ---- readers ---- */

int watch_reading_init(struct watch_reading *r)
{
	memset(r, 0, sizeof(*r));
	r->list = watch_list_current();
	if (!r->list)
		return 0;
	r->ans = calloc(watch_list_count(r->list) + 1, sizeof(*r->ans));
	r->gen = calloc(watch_list_count(r->list) + 1, sizeof(*r->gen));
	if (!r->ans || !r->gen) {
		free(r->ans);
		free(r->gen);
		r->ans = NULL;
		r->gen = NULL;
		watch_list_put(r->list);
		r->list = NULL;
		return -ENOMEM;
	}
	return 0;
}

void watch_reading_add(struct watch_reading *r, const struct snapshot *s)
{
	const struct watch_view *v = s ? snapshot_views(s)->watch : NULL;

	if (!v || !r->list)
		return;
	for (size_t k = 0; k < v->n; k++) {
		long p = v->pos[k];

		if (v->list != r->list) {
			/* evaluated with the list before a reload: the same watch if its name
			 * and spec are */
			const struct watch_spec *w = watch_list_at(v->list, v->pos[k]);

			p = watch_list_find(r->list, w->name);
			if (p < 0 || strcmp(watch_list_at(r->list, (size_t)p)->spec, w->spec))
				continue;
		}
		if (r->ans[p])
			continue;
		r->ans[p] = answer_get(v->ans[k]);
		r->gen[p] = snapshot_generation(s);
	}
}

void watch_reading_free(struct watch_reading *r)
{
	for (size_t i = 0; r->ans && i < watch_list_count(r->list); i++)
		watch_answer_put(r->ans[i]);
	free(r->ans);
	free(r->gen);
	watch_list_put(r->list);
	memset(r, 0, sizeof(*r));
}

static void put_time(struct strbuf *sb, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strbuf_puts(sb, buf);
}

static void put_json_str(struct strbuf *sb, const char *key, const char *v)
{
	strbuf_appendf(sb, "\"%s\":\"", key);
	strbuf_json_escape(sb, v);
	strbuf_putc(sb, '"');
}

static const char *family_name(uint8_t f)
{
	return f == AF_INET ? "inet" : "inet6";
}

void watch_render_json(const struct watch_reading *r, struct strbuf *sb)
{
	size_t n = watch_list_count(r->list);
	char ab[INET6_ADDRSTRLEN];

	strbuf_puts(sb, "{\"watches\":[");
	for (size_t i = 0; i < n; i++) {
		const struct watch_spec *w = watch_list_at(r->list, i);
		const struct watch_answer *a = r->ans[i];

		if (i)
			strbuf_putc(sb, ',');
		strbuf_putc(sb, '{');
		put_json_str(sb, "name", w->name);
		strbuf_putc(sb, ',');
		put_json_str(sb, "spec", w->spec);
		strbuf_appendf(sb, ",\"kind\":\"%s\",\"family\":\"%s\",",
			       w->kind == WATCH_LOOKUP ? "lookup" : "route",
			       family_name(w->family));
		put_json_str(sb, "netns", w->netns);
		strbuf_putc(sb, ',');
		put_json_str(sb, "table", w->table_name);
		inet_ntop(w->family, w->addr, ab, sizeof(ab));
		if (w->kind == WATCH_ROUTE)
			strbuf_appendf(sb, ",\"target\":\"%s/%u\"", ab, w->len);
		else
			strbuf_appendf(sb, ",\"target\":\"%s\"", ab);
		strbuf_appendf(sb, ",\"present\":%s,\"route\":%s,\"changed_at\":\"",
			       a && a->present ? "true" : "false",
			       a && a->route ? a->route : "null");
		put_time(sb, a ? a->changed_ms : stats_start_time() * 1000);
		strbuf_appendf(sb, "\",\"changes\":%llu,\"generation\":",
			       (unsigned long long)(a ? a->changes : 0));
		if (a)
			strbuf_appendf(sb, "%llu", (unsigned long long)r->gen[i]);
		else
			strbuf_puts(sb, "null");
		strbuf_puts(sb, ",\"history\":[");
		for (unsigned int h = 0; a && h < a->nhist; h++) {
			strbuf_appendf(sb, "%s{\"generation\":%llu,\"time\":\"", h ? "," : "",
				       (unsigned long long)a->hist[h].generation);
			put_time(sb, a->hist[h].time_ms);
			strbuf_appendf(sb, "\",\"present\":%s,\"route\":%s}",
				       a->hist[h].route ? "true" : "false",
				       a->hist[h].route ? a->hist[h].route : "null");
		}
		strbuf_puts(sb, "]}");
	}
	strbuf_puts(sb, "]}\n");
}

/* watch="NAME",family="F"[,netns="NS"] */
static void put_labels(struct strbuf *sb, const struct watch_spec *w)
{
	strbuf_puts(sb, "watch=\"");
	render_metrics_label(sb, w->name);
	strbuf_appendf(sb, "\",family=\"%s\"", family_name(w->family));
	if (*w->netns) {
		strbuf_puts(sb, ",netns=\"");
		render_metrics_label(sb, w->netns);
		strbuf_putc(sb, '"');
	}
}

void watch_render_metrics(const struct watch_reading *r, struct strbuf *sb)
{
	size_t n = watch_list_count(r->list);

	strbuf_appendf(sb,
		       "# HELP rtsnap_watches Watched routes configured (--watch, --watch-file).\n"
		       "# TYPE rtsnap_watches gauge\n"
		       "rtsnap_watches %zu\n",
		       n);
	if (!n)
		return;
	strbuf_puts(sb, "# HELP rtsnap_watch_present Whether the watched route exists (a lookup: "
			"whether the address resolves to a route), 1 or 0.\n"
			"# TYPE rtsnap_watch_present gauge\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(sb, "rtsnap_watch_present{");
		put_labels(sb, watch_list_at(r->list, i));
		strbuf_appendf(sb, "} %d\n", r->ans[i] && r->ans[i]->present);
	}
	strbuf_puts(sb, "# HELP rtsnap_watch_route_info The route a watch resolves to, while "
			"present: its table, dst, devices and gateways (every hop, in kernel "
			"order), protocol, metric and number of hops.\n"
			"# TYPE rtsnap_watch_route_info gauge\n");
	for (size_t i = 0; i < n; i++) {
		if (!r->ans[i] || !r->ans[i]->present)
			continue;
		strbuf_puts(sb, "rtsnap_watch_route_info{");
		put_labels(sb, watch_list_at(r->list, i));
		strbuf_appendf(sb, ",%s} 1\n", r->ans[i]->info);
	}
	strbuf_puts(sb, "# HELP rtsnap_watch_last_change_timestamp_seconds Unix time of the last "
			"change of a watch's answer (present or absent, another route or hops); "
			"the daemon's start before any.\n"
			"# TYPE rtsnap_watch_last_change_timestamp_seconds gauge\n");
	for (size_t i = 0; i < n; i++) {
		int64_t ms = r->ans[i] ? r->ans[i]->changed_ms : stats_start_time() * 1000;

		strbuf_puts(sb, "rtsnap_watch_last_change_timestamp_seconds{");
		put_labels(sb, watch_list_at(r->list, i));
		strbuf_appendf(sb, "} %lld.%03lld\n", (long long)(ms / 1000),
			       (long long)(ms % 1000));
	}
	strbuf_puts(sb, "# HELP rtsnap_watch_changes_total Changes of a watch's answer since the "
			"daemon started.\n"
			"# TYPE rtsnap_watch_changes_total counter\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(sb, "rtsnap_watch_changes_total{");
		put_labels(sb, watch_list_at(r->list, i));
		strbuf_appendf(sb, "} %llu\n",
			       (unsigned long long)(r->ans[i] ? r->ans[i]->changes : 0));
	}
}
