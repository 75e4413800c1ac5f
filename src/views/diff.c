// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * diff.c - the routes that differ between two snapshots, in proportion to the change.
 *
 * Per table, two cursors walk the segments of a and b. When both stand at the start of the
 * same segment (a pointer both snapshots hold) the segment is skipped whole: it is the same
 * bytes. Otherwise two records that are the same route (the usual case in a segment that
 * changed) are passed together, and the others are merged by kernel order key: a key only a has is a removed
 * route, a key only b has an added one, and the records of one key on both sides (one node
 * and metric: routes that differ by device or type, kept in insertion order) are paired by
 * diff_same_route(); the ones left unpaired are removed or added. A key's records may run
 * over a segment boundary; the merge reads them as one group, so the cursors can end up in
 * the middle of a shared segment, which they then walk record by record (at most one
 * segment) until they meet at the start of the next one. Placeholder rows are not routes
 * (they are rebuilt at every publication) and are stepped over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/array.h"
#include "rtsnap/diff.h"
#include "rtsnap/index.h"
#include "rtsnap/order.h"

#define DEADLINE_SLACK_MS 1000 /* what a dump's rounding to whole ticks moves a deadline */

size_t diff_object(const struct segment *g, uint32_t pos, const char **p)
{
	uint32_t a = g->json_off[pos], b = g->json_off[pos + 1];

	if (b > a) /* the leading comma */
		a++;
	*p = g->json + a;
	return b - a;
}

void diff_expires_span(const char *obj, size_t len, size_t *off, size_t *elen)
{
	static const char key[] = ",\"expires\":";
	const char *p = memmem(obj, len, key, sizeof(key) - 1);
	size_t i;

	*off = 0;
	*elen = 0;
	/* a '"' inside a string value is escaped, so the key cannot be faked by a name */
	if (!p)
		return;
	i = (size_t)(p - obj) + sizeof(key) - 1;
	if (i < len && obj[i] == '-')
		i++;
	while (i < len && obj[i] >= '0' && obj[i] <= '9')
		i++;
	*off = (size_t)(p - obj);
	*elen = i - *off;
}

/* x and y equal once their "expires" is cut out. */
static int same_but_expires(const char *x, size_t xl, const char *y, size_t yl)
{
	size_t xo, xe, yo, ye;

	diff_expires_span(x, xl, &xo, &xe);
	diff_expires_span(y, yl, &yo, &ye);
	if (xl - xe != yl - ye || xo != yo)
		return 0;
	return memcmp(x, y, xo) == 0 && memcmp(x + xo + xe, y + yo + ye, xl - xo - xe) == 0;
}

int diff_same_route(const struct segment *ga, uint32_t ia, const struct segment *gb, uint32_t ib)
{
	const struct route *ra = &ga->routes[ia], *rb = &gb->routes[ib];
	const char *ja, *jb;
	size_t la = diff_object(ga, ia, &ja), lb = diff_object(gb, ib, &jb);
	int64_t dx;

	if (!ra->expires_ms != !rb->expires_ms)
		return 0;
	if (!ra->expires_ms)
		return la == lb && memcmp(ja, jb, la) == 0;
	if (ra->expires_capped != rb->expires_capped)
		return 0;
	/* a capped deadline is the kernel's constant, not a countdown: it moves every dump */
	dx = ra->expires_ms - rb->expires_ms;
	if (!ra->expires_capped && (dx > DEADLINE_SLACK_MS || dx < -DEADLINE_SLACK_MS))
		return 0;
	return same_but_expires(ja, la, jb, lb);
}

/* ---- cursors ---- */

struct cur {
	const struct snapshot *s;
	size_t q, qend; /* group, end of the table's groups */
	uint32_t j;	/* member of group q */
	uint32_t pos;	/* record of member j */
};

static void cur_init(struct cur *c, const struct snapshot *s, const struct snapshot_table *t)
{
	c->s = s;
	c->q = t ? t->g0 : 0;
	c->qend = t ? (size_t)t->g0 + t->ng : 0;
	c->j = c->pos = 0;
}

static const struct seggroup *cur_group(const struct cur *c)
{
	return snapshot_group(c->s, c->q, NULL);
}

static const struct segment *cur_seg(const struct cur *c)
{
	return cur_group(c)->segs[c->j];
}

/* Past the current segment. */
static void cur_skip_seg(struct cur *c)
{
	c->pos = 0;
	if (++c->j >= cur_group(c)->nsegs) {
		c->q++;
		c->j = 0;
	}
}

static void cur_next(struct cur *c)
{
	if (++c->pos >= cur_seg(c)->n)
		cur_skip_seg(c);
}

/* Step over placeholder rows; 1 while records are left. */
static int cur_settle(struct cur *c)
{
	while (c->q < c->qend && cur_seg(c)->routes[c->pos].placeholder)
		cur_next(c);
	return c->q < c->qend;
}

static void cur_key(const struct cur *c, struct order_key *k)
{
	order_key_of(&cur_seg(c)->routes[c->pos], k);
}

static int push(struct diff_ref **v, size_t *n, size_t *cap, const struct cur *c)
{
	if (array_grow((void **)v, cap, *n, sizeof(**v), 64))
		return -ENOMEM;
	(*v)[*n].g = cur_seg(c);
	(*v)[*n].pos = c->pos;
	(*n)++;
	return 0;
}

struct walk {
	struct diff *d;
	size_t max;
	/* one key's records on each side (reused) */
	struct diff_ref *ga, *gb;
	size_t nga, ngb, cap_ga, cap_gb;
	unsigned char *used;
	size_t cap_used;
};

static int emit(struct walk *w, const struct diff_ref *r, int added)
{
	struct diff *d = w->d;

	if (d->nremoved + d->nadded >= w->max)
		return -E2BIG;
	if (added) {
		if (array_grow((void **)&d->added, &d->cap_added, d->nadded, sizeof(*d->added), 64))
			return -ENOMEM;
		d->added[d->nadded++] = *r;
	} else {
		if (array_grow((void **)&d->removed, &d->cap_removed, d->nremoved,
			       sizeof(*d->removed), 64))
			return -ENOMEM;
		d->removed[d->nremoved++] = *r;
	}
	return 0;
}

static int emit_cur(struct walk *w, const struct cur *c, int added)
{
	struct diff_ref r = { cur_seg(c), c->pos };

	return emit(w, &r, added);
}

/* The records of key k at the cursor (advanced past them) into *v. */
static int gather(struct cur *c, const struct order_key *k, struct diff_ref **v, size_t *n,
		  size_t *cap)
{
	struct order_key x;
	int ret;

	*n = 0;
	while (cur_settle(c)) {
		cur_key(c, &x);
		if (order_key_cmp(&x, k) != 0)
			break;
		ret = push(v, n, cap, c);
		if (ret)
			return ret;
		cur_next(c);
	}
	return 0;
}

/* Pair the records of one key on both sides; emit the unpaired ones. */
static int pair_group(struct walk *w)
{
	size_t j0 = 0;
	int ret;

	if (w->ngb > w->cap_used) {
		unsigned char *u = realloc(w->used, w->ngb);

		if (!u)
			return -ENOMEM;
		w->used = u;
		w->cap_used = w->ngb;
	}
	if (w->ngb)
		memset(w->used, 0, w->ngb);
	for (size_t i = 0; i < w->nga; i++) {
		int found = 0;

		/* in the usual case both sides list them in the same order: start where the
		 * previous pairing ended */
		for (size_t t = 0; t < w->ngb && !found; t++) {
			size_t j = (j0 + t) % w->ngb;

			w->d->visited++;
			if (!w->used[j] &&
			    diff_same_route(w->ga[i].g, w->ga[i].pos, w->gb[j].g, w->gb[j].pos)) {
				w->used[j] = 1;
				j0 = j + 1;
				found = 1;
			}
		}
		if (!found && (ret = emit(w, &w->ga[i], 0)))
			return ret;
	}
	for (size_t j = 0; j < w->ngb; j++)
		if (!w->used[j] && (ret = emit(w, &w->gb[j], 1)))
			return ret;
	return 0;
}

/* Past what both cursors share from where they are (at the start of a segment on both sides):
 * whole groups (the snapshots' arrays, no group read), else segments of one group each. 1 if
 * they moved. */
static int skip_shared(struct walk *w, struct cur *ca, struct cur *cb)
{
	const struct seggroup *ga, *gb;
	size_t n, segs;
	uint32_t k = 0;

	if (ca->pos || cb->pos || ca->q >= ca->qend || cb->q >= cb->qend)
		return 0;
	if (ca->j == 0 && cb->j == 0) {
		n = ca->qend - ca->q < cb->qend - cb->q ? ca->qend - ca->q : cb->qend - cb->q;
		n = snapshot_same_groups(ca->s, ca->q, cb->s, cb->q, n, &segs);
		if (n) {
			ca->q += n;
			cb->q += n;
			w->d->skipped += segs;
			return 1;
		}
	}
	ga = cur_group(ca);
	gb = cur_group(cb);
	while (ca->j + k < ga->nsegs && cb->j + k < gb->nsegs &&
	       ga->segs[ca->j + k] == gb->segs[cb->j + k])
		k++;
	if (!k)
		return 0;
	w->d->skipped += k;
	ca->j += k - 1; /* the last one through cur_skip_seg(): maybe into the next group */
	cb->j += k - 1;
	cur_skip_seg(ca);
	cur_skip_seg(cb);
	return 1;
}

static int walk_table(struct walk *w, struct cur *ca, struct cur *cb)
{
	struct order_key ka, kb;
	int ret, c;

	for (;;) {
		int ha, hb;

		/* the same groups in both, or the same segments: the same routes. Compared before
		 * anything of the segments is read: a shared group costs a pointer comparison */
		if (skip_shared(w, ca, cb))
			continue;
		ha = cur_settle(ca);
		hb = cur_settle(cb);
		if (ha && hb && ca->pos == 0 && cb->pos == 0 && cur_seg(ca) == cur_seg(cb))
			continue; /* past placeholder rows, at a shared segment again */
		if (!ha && !hb)
			return 0;
		w->d->visited++;
		if (ha && hb && diff_same_route(cur_seg(ca), ca->pos, cur_seg(cb), cb->pos)) {
			/* the usual case inside a segment that changed: the same route on both
			 * sides (same object, so same key). Pairing it at once is what the
			 * group below would do: identical routes pair in any order */
			cur_next(ca);
			cur_next(cb);
			continue;
		}
		if (!hb) {
			ret = emit_cur(w, ca, 0);
			cur_next(ca);
		} else if (!ha) {
			ret = emit_cur(w, cb, 1);
			cur_next(cb);
		} else {
			cur_key(ca, &ka);
			cur_key(cb, &kb);
			c = order_key_cmp(&ka, &kb);
			if (c < 0) {
				ret = emit_cur(w, ca, 0);
				cur_next(ca);
			} else if (c > 0) {
				ret = emit_cur(w, cb, 1);
				cur_next(cb);
			} else {
				ret = gather(ca, &ka, &w->ga, &w->nga, &w->cap_ga);
				if (!ret)
					ret = gather(cb, &ka, &w->gb, &w->ngb, &w->cap_gb);
				if (!ret)
					ret = pair_group(w);
			}
		}
		if (ret)
			return ret;
	}
}

static const struct snapshot_table *table_of(const struct snapshot *s, uint32_t id)
{
	int pos;

	if (!s)
		return NULL;
	pos = index_table_pos(s, id);
	if (pos >= 0)
		return snapshot_table_at(s, pos);
	for (size_t i = 0; i < snapshot_ntables(s); i++) /* no index (a snapshot not finished) */
		if (snapshot_table_at(s, i)->id == id)
			return snapshot_table_at(s, i);
	return NULL;
}

int diff_snapshots(const struct snapshot *a, const struct snapshot *b, size_t max, struct diff *d)
{
	struct walk w = { .d = d, .max = max };
	struct cur ca, cb;
	int ret = 0;

	for (size_t t = 0; b && !ret && t < snapshot_ntables(b); t++) {
		cur_init(&ca, a, table_of(a, snapshot_table_at(b, t)->id));
		cur_init(&cb, b, snapshot_table_at(b, t));
		ret = walk_table(&w, &ca, &cb);
	}
	for (size_t t = 0; a && !ret && t < snapshot_ntables(a); t++) {
		if (table_of(b, snapshot_table_at(a, t)->id))
			continue;
		cur_init(&ca, a, snapshot_table_at(a, t));
		cur_init(&cb, b, NULL);
		ret = walk_table(&w, &ca, &cb);
	}
	free(w.ga);
	free(w.gb);
	free(w.used);
	return ret;
}

void diff_free(struct diff *d)
{
	free(d->removed);
	free(d->added);
	memset(d, 0, sizeof(*d));
}
