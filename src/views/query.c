// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * query.c - /routes filters, /routes/lookup and /expiring on one snapshot.
 *
 * Parsing is strict: every value must parse completely, numbers are decimal without sign,
 * addresses are what inet_pton() accepts, nothing longer than QUERY_VALUE_MAX. A bad value
 * is reported with the parameter's name (the HTTP layer turns it into a 400).
 *
 * Evaluation picks one index-served "driver" for the candidates (covers= > prefix= >
 * expiring=1 > table= > every record), visits candidates in record order (= kernel order),
 * checks the remaining predicates on each, and emits matches as segments: runs of
 * consecutive pre-rendered objects become one segment, routes with an expiry are rendered
 * for this response into a small buffer (their "expires" must be the time left now).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "rtsnap/query.h"
#include "rtsnap/route4.h"

const char *const query_params[] = { "table",	"dev",	  "protocol", "type",  "prefix", "covers",
				     "gateway", "metric", "expiring", "limit", "after",	 NULL };
const char *const query_lookup_params[] = { "addr", "table", "from", NULL };

/* ---- parsing ---- */

static int bad(char *err, size_t errlen, const char *key, const char *what)
{
	snprintf(err, errlen, "bad value for '%s': %s", key, what);
	return -EINVAL;
}

/* Decimal, no sign, no leading spaces, fits in 32 bits. */
static int parse_dec_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || p - s >= 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int query_parse_addr(const char *s, uint8_t out[16])
{
	struct in6_addr a;

	if (!*s || strlen(s) >= INET6_ADDRSTRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET6, s, &a) != 1)
		return -EINVAL;
	memcpy(out, &a, 16);
	return 0;
}

static void mask_addr(uint8_t a[16], unsigned int len)
{
	for (unsigned int i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		a[i] &= len > 8 * i ? (uint8_t)(0xff << (8 - (len - 8 * i))) : 0;
	}
}

int query_parse_addr4(const char *s, uint8_t out[16])
{
	struct in_addr a;

	if (!*s || strlen(s) >= INET_ADDRSTRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	memset(out, 0, 16);
	memcpy(out, &a, 4);
	return 0;
}

/* ADDR[/LEN] of one family: addresses parsed by parse, lengths up to maxlen. */
static int parse_prefix(const char *s, uint8_t out[16], uint8_t *len, uint32_t maxlen,
			int (*parse)(const char *, uint8_t *))
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	uint32_t l = maxlen;
	size_t alen;

	if (strcmp(s, "default") == 0) {
		memset(out, 0, 16);
		*len = 0;
		return 0;
	}
	alen = slash ? (size_t)(slash - s) : strlen(s);
	if (alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, alen);
	addr[alen] = 0;
	if (slash && (strlen(slash + 1) > 3 || parse_dec_u32(slash + 1, &l) || l > maxlen))
		return -EINVAL;
	if (parse(addr, out))
		return -EINVAL;
	mask_addr(out, l);
	*len = (uint8_t)l;
	return 0;
}

int query_parse_prefix4(const char *s, uint8_t out[16], uint8_t *len)
{
	return parse_prefix(s, out, len, 32, query_parse_addr4);
}

int query_parse_prefix(const char *s, uint8_t out[16], uint8_t *len)
{
	return parse_prefix(s, out, len, 128, query_parse_addr);
}

static const char s_hex[] = "0123456789abcdef";

static char *put_hex(char *p, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*p++ = s_hex[b[i] >> 4];
		*p++ = s_hex[b[i] & 15];
	}
	return p;
}

static char *put_hex32(char *p, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	return put_hex(p, b, 4);
}

void query_cursor_encode(const struct index_cursor *c, char out[QUERY_CURSOR_LEN + 1])
{
	char *p = out;

	p = put_hex32(p, c->table);
	p = put_hex(p, c->dst, 16);
	p = put_hex(p, &c->dst_len, 1);
	p = put_hex(p, c->src, 16);
	p = put_hex(p, &c->src_len, 1);
	p = put_hex32(p, c->metric);
	p = put_hex(p, c->gw, 16);
	p = put_hex32(p, c->ifindex);
	p = put_hex32(p, c->ordinal);
	*p = 0;
}

static int get_hex(const char **p, uint8_t *b, size_t n)
{
	for (size_t i = 0; i < 2 * n; i++) {
		const char *h = strchr(s_hex, (*p)[i]);

		if (!(*p)[i] || !h)
			return -EINVAL;
		if (i % 2 == 0)
			b[i / 2] = (uint8_t)((h - s_hex) << 4);
		else
			b[i / 2] |= (uint8_t)(h - s_hex);
	}
	*p += 2 * n;
	return 0;
}

static int get_hex32(const char **p, uint32_t *v)
{
	uint8_t b[4];

	if (get_hex(p, b, 4))
		return -EINVAL;
	*v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return 0;
}

int query_cursor_decode(const char *s, struct index_cursor *c)
{
	const char *p = s;

	memset(c, 0, sizeof(*c));
	if (strlen(s) != QUERY_CURSOR_LEN)
		return -EINVAL;
	if (get_hex32(&p, &c->table) || get_hex(&p, c->dst, 16) || get_hex(&p, &c->dst_len, 1) ||
	    get_hex(&p, c->src, 16) || get_hex(&p, &c->src_len, 1) || get_hex32(&p, &c->metric) ||
	    get_hex(&p, c->gw, 16) || get_hex32(&p, &c->ifindex) || get_hex32(&p, &c->ordinal))
		return -EINVAL;
	if (c->dst_len > 128 || c->src_len > 128)
		return -EINVAL;
	return 0;
}

/* What the kernel accepts as an interface name (dev_valid_name). */
static int valid_ifname(const char *s)
{
	size_t l = strlen(s);

	if (l == 0 || l >= 16 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (const char *p = s; *p; p++)
		if (*p == '/' || *p == ':' || *p == ' ' || (*p >= '\t' && *p <= '\r'))
			return 0;
	return 1;
}

static int parse_table(const struct names *names, const char *key, const char *val, uint32_t *id,
		       int allow_all, int *all, char *err, size_t errlen)
{
	*all = 0;
	if (allow_all && strcmp(val, "all") == 0) {
		*all = 1;
		return 0;
	}
	if (names_table_id(names, val, id) || *id == 0)
		return bad(err, errlen, key, "not a table name or number");
	return 0;
}

int query_parse_arg(struct query *q, const struct names *names, const char *key, const char *val,
		    char *err, size_t errlen)
{
	unsigned int f;
	int all;

	if (strlen(val) > QUERY_VALUE_MAX)
		return bad(err, errlen, key, "too long");
	if (strcmp(key, "table") == 0) {
		if (parse_table(names, key, val, &q->table, 1, &all, err, errlen))
			return -EINVAL;
		f = all ? 0 : QF_TABLE;
	} else if (strcmp(key, "dev") == 0) {
		if (!valid_ifname(val))
			return bad(err, errlen, key, "not an interface name");
		snprintf(q->dev, sizeof(q->dev), "%s", val);
		f = QF_DEV;
	} else if (strcmp(key, "protocol") == 0) {
		if (!*val || names_protocol_id(names, val, &q->protocol))
			return bad(err, errlen, key, "not a protocol name or number (0-255)");
		f = QF_PROTOCOL;
	} else if (strcmp(key, "type") == 0) {
		if (!*val || names_type_id(val, &q->type))
			return bad(err, errlen, key, "not a route type name or number (0-255)");
		f = QF_TYPE;
	} else if (strcmp(key, "prefix") == 0 && q->family == AF_INET) {
		if (query_parse_prefix4(val, q->prefix, &q->prefix_len))
			return bad(err, errlen, key, "not an IPv4 prefix ADDR[/LEN]");
		f = QF_PREFIX;
	} else if (strcmp(key, "prefix") == 0) {
		if (query_parse_prefix(val, q->prefix, &q->prefix_len))
			return bad(err, errlen, key, "not an IPv6 prefix ADDR[/LEN]");
		f = QF_PREFIX;
	} else if (strcmp(key, "covers") == 0 && q->family == AF_INET) {
		if (query_parse_prefix4(val, q->covers, &q->covers_len))
			return bad(err, errlen, key, "not an IPv4 address or prefix");
		f = QF_COVERS;
	} else if (strcmp(key, "covers") == 0) {
		if (query_parse_prefix(val, q->covers, &q->covers_len))
			return bad(err, errlen, key, "not an IPv6 address or prefix");
		f = QF_COVERS;
	} else if (strcmp(key, "gateway") == 0 && q->family == AF_INET) {
		/* an IPv4 route's gateway is IPv4, or IPv6 (via inet6) */
		if (!query_parse_addr4(val, q->gateway))
			q->gateway_kind = 1;
		else if (!query_parse_addr(val, q->gateway))
			q->gateway_kind = ROUTE_GW_VIA6;
		else
			return bad(err, errlen, key, "not an IPv4 or IPv6 address");
		f = QF_GATEWAY;
	} else if (strcmp(key, "gateway") == 0) {
		if (query_parse_addr(val, q->gateway))
			return bad(err, errlen, key, "not an IPv6 address");
		f = QF_GATEWAY;
	} else if (strcmp(key, "metric") == 0) {
		if (parse_dec_u32(val, &q->metric))
			return bad(err, errlen, key, "not a decimal number 0-4294967295");
		f = QF_METRIC;
	} else if (strcmp(key, "expiring") == 0) {
		if (strcmp(val, "1") && strcmp(val, "0"))
			return bad(err, errlen, key, "must be 1 or 0");
		q->expiring = val[0] == '1';
		f = QF_EXPIRING;
	} else if (strcmp(key, "limit") == 0) {
		if (parse_dec_u32(val, &q->limit) || q->limit == 0)
			return bad(err, errlen, key, "not a decimal number 1-4294967295");
		f = QF_LIMIT;
	} else if (strcmp(key, "after") == 0) {
		if (query_cursor_decode(val, &q->after))
			return bad(err, errlen, key, "not a cursor from X-Next-After");
		f = QF_AFTER;
	} else {
		snprintf(err, errlen, "unknown query parameter '%.64s'", key);
		return -EINVAL;
	}
	q->set |= f;
	return 0;
}

void query_lookup_init(struct lookup_query *lq)
{
	memset(lq, 0, sizeof(*lq));
	lq->table = RT_TABLE_MAIN;
}

int query_lookup_parse_arg(struct lookup_query *lq, const struct names *names, const char *key,
			   const char *val, char *err, size_t errlen)
{
	int all;

	if (strlen(val) > QUERY_VALUE_MAX)
		return bad(err, errlen, key, "too long");
	if (strcmp(key, "addr") == 0) {
		if (!query_parse_addr(val, lq->addr))
			lq->family = AF_INET6;
		else if (!query_parse_addr4(val, lq->addr))
			lq->family = AF_INET;
		else
			return bad(err, errlen, key, "not an IPv6 or IPv4 address");
		lq->have_addr = 1;
	} else if (strcmp(key, "from") == 0) {
		if (query_parse_addr(val, lq->src))
			return bad(err, errlen, key, "not an IPv6 address");
		lq->have_src = 1;
	} else if (strcmp(key, "table") == 0) {
		return parse_table(names, key, val, &lq->table, 0, &all, err, errlen);
	} else {
		snprintf(err, errlen, "unknown query parameter '%.64s'", key);
		return -EINVAL;
	}
	return 0;
}

int query_lookup_check(const struct lookup_query *lq, char *err, size_t errlen)
{
	if (!lq->have_addr) {
		snprintf(err, errlen, "missing query parameter 'addr'");
		return -EINVAL;
	}
	/* the IPv4 FIB has no source-specific routes: only policy rules look at the source */
	if (lq->family == AF_INET && lq->have_src) {
		snprintf(err, errlen, "'from' goes with an IPv6 'addr' only");
		return -EINVAL;
	}
	return 0;
}

long query_lookup(const struct snapshot *s, const struct lookup_query *lq, int64_t now_ms)
{
	if (lq->family == AF_INET)
		return index_lookup4(s, lq->table, lq->addr);
	return index_lookup(s, lq->table, lq->addr, lq->src, now_ms);
}

/* ---- output ---- */

struct seg_build {
	struct render_seg *segs;
	size_t *dyn_off; /* per segment: offset in dyn, or SIZE_MAX for snapshot memory */
	size_t n, cap;
	const char *run_p; /* the open run of pre-rendered bytes, or NULL */
	size_t run_len;
	int failed;
};

static void seg_add(struct seg_build *b, const char *p, size_t len, size_t dyn_off)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 16;
		struct render_seg *s = realloc(b->segs, ncap * sizeof(*s));
		size_t *d;

		if (!s) {
			b->failed = 1;
			return;
		}
		b->segs = s;
		d = realloc(b->dyn_off, ncap * sizeof(*d));
		if (!d) {
			b->failed = 1;
			return;
		}
		b->dyn_off = d;
		b->cap = ncap;
	}
	b->segs[b->n].p = p;
	b->segs[b->n].len = len;
	b->dyn_off[b->n] = dyn_off;
	b->n++;
}

static void run_close(struct seg_build *b)
{
	if (b->run_p && b->run_len)
		seg_add(b, b->run_p, b->run_len, SIZE_MAX);
	b->run_p = NULL;
	b->run_len = 0;
}

/* Append route i to the body being built; count is the number of routes already in it. */
static void emit(const struct snapshot *s, struct seg_build *b, struct strbuf *dyn, size_t i,
		 size_t count, int64_t now_ms)
{
	const struct route *r = snapshot_route(s, i);
	const char *p;
	size_t len;

	if (r->expires_ms) {
		size_t start = dyn->len;

		run_close(b);
		if (count)
			strbuf_putc(dyn, ',');
		render_json_route(snapshot_ctx(s), r, now_ms, dyn);
		seg_add(b, NULL, dyn->len - start, start);
		return;
	}
	render_json_span(s, i, &p, &len);
	if (!count && len && *p == ',') {
		p++;
		len--;
	}
	if (b->run_p && b->run_p + b->run_len == p) {
		b->run_len += len;
		return;
	}
	run_close(b);
	b->run_p = p;
	b->run_len = len;
}

/* ---- evaluation ---- */

struct run_ctx {
	const struct snapshot *s;
	const struct query *q;
	int64_t now_ms;
	size_t resume;	  /* first record index a page may return */
	uint32_t ifindex; /* dev= resolved in this snapshot; 0 = no such device */
	uint32_t limit;
	struct seg_build b;
	struct strbuf *dyn;
	size_t count, last;
	int more;
};

static int prefix_inside(const uint8_t *a, unsigned int alen, const uint8_t *p, unsigned int plen)
{
	uint8_t m[16];

	if (alen < plen)
		return 0;
	memcpy(m, a, 16);
	mask_addr(m, plen);
	return memcmp(m, p, 16) == 0;
}

static int uses_dev(const struct route *r, uint32_t ifindex)
{
	if (r->nh_count > 1) {
		for (unsigned int k = 0; k < r->nh_count; k++)
			if (r->nhs[k].ifindex == ifindex)
				return 1;
		return 0;
	}
	return r->nh_count == 1 && r->nh.ifindex == ifindex;
}

/* Is gw the gateway of hop nh? kind 0: any gateway; else nh->has_gw must be kind (IPv4
 * records: an IPv4 and an IPv6 gateway are told apart by has_gw, route4.h). */
static int is_gateway(const struct route_nh *nh, const uint8_t gw[16], uint8_t kind)
{
	return nh->has_gw && (!kind || nh->has_gw == kind) && memcmp(nh->gw, gw, 16) == 0;
}

static int uses_gateway(const struct route *r, const uint8_t gw[16], uint8_t kind)
{
	if (r->nh_count > 1) {
		for (unsigned int k = 0; k < r->nh_count; k++)
			if (is_gateway(&r->nhs[k], gw, kind))
				return 1;
		return 0;
	}
	return r->nh_count == 1 && is_gateway(&r->nh, gw, kind);
}

int query_match(const struct query *q, const struct route *r, uint32_t dev_ifindex)
{
	if (r->placeholder)
		return 0;
	if ((q->set & QF_TABLE) && r->table != q->table)
		return 0;
	if ((q->set & QF_PROTOCOL) && r->protocol != q->protocol)
		return 0;
	if ((q->set & QF_TYPE) && r->type != q->type)
		return 0;
	if ((q->set & QF_METRIC) && r->metric != q->metric)
		return 0;
	if ((q->set & QF_EXPIRING) && (r->expires_ms != 0) != q->expiring)
		return 0;
	if ((q->set & QF_PREFIX) && !prefix_inside(r->dst, r->dst_len, q->prefix, q->prefix_len))
		return 0;
	if ((q->set & QF_COVERS) && !prefix_inside(q->covers, q->covers_len, r->dst, r->dst_len))
		return 0;
	if ((q->set & QF_DEV) && (!dev_ifindex || !uses_dev(r, dev_ifindex)))
		return 0;
	if ((q->set & QF_GATEWAY) &&
	    !uses_gateway(r, q->gateway, route_is4(r) ? q->gateway_kind : 0))
		return 0;
	return 1;
}

static int matches(const struct run_ctx *c, const struct route *r)
{
	return query_match(c->q, r, c->ifindex);
}

/* Consider record i; returns 1 when the walk can stop. */
static int visit(struct run_ctx *c, size_t i)
{
	if (i < c->resume || !matches(c, snapshot_route(c->s, i)))
		return 0;
	if (c->count == c->limit) {
		c->more = 1;
		return 1;
	}
	emit(c->s, &c->b, c->dyn, i, c->count, c->now_ms);
	c->count++;
	c->last = i;
	return 0;
}

static int visit_list(struct run_ctx *c, const uint32_t *v, long n)
{
	for (long k = 0; k < n; k++)
		if (visit(c, v[k]))
			return 1;
	return 0;
}

/* Walk the candidates of table position tpos. Returns 1 to stop, -ENOMEM on failure. */
static int walk_table(struct run_ctx *c, int tpos)
{
	const struct snapshot *s = c->s;
	const struct snapshot_table *t = snapshot_table_at(s, tpos);
	const struct query *q = c->q;
	uint32_t *v = NULL;
	long n;
	int stop;

	if (c->resume >= (size_t)t->first + t->count)
		return 0;
	if (q->set & QF_COVERS) {
		n = index_covers(s, tpos, q->covers, q->covers_len, &v);
	} else if (q->set & QF_PREFIX) {
		uint32_t lo, hi;

		if (index_inside_range(s, tpos, q->prefix, q->prefix_len, &lo, &hi)) {
			for (size_t i = lo > c->resume ? lo : c->resume; i < hi; i++)
				if (visit(c, i))
					return 1;
			return 0;
		}
		n = index_inside_collect(s, tpos, q->prefix, q->prefix_len, &v);
	} else {
		for (size_t i = t->first > c->resume ? t->first : c->resume;
		     i < (size_t)t->first + t->count; i++)
			if (visit(c, i))
				return 1;
		return 0;
	}
	if (n < 0)
		return (int)n;
	stop = visit_list(c, v, n);
	free(v);
	return stop;
}

uint32_t query_find_ifindex(const struct route_link *links, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(links[i].name, name) == 0)
			return links[i].ifindex;
	return 0;
}

int query_run(const struct snapshot *s, const struct query *q, int64_t now_ms,
	      struct query_result *res)
{
	static const char open_br[] = "[", close_br[] = "]\n";
	struct run_ctx c = { .s = s, .q = q, .now_ms = now_ms };
	int ret = 0;

	memset(res, 0, sizeof(*res));
	c.dyn = &res->dyn;
	c.limit = (q->set & QF_LIMIT) ? q->limit : UINT32_MAX;
	if (q->set & QF_AFTER)
		c.resume = index_cursor_resume(s, &q->after);
	if (q->set & QF_DEV)
		c.ifindex =
		    query_find_ifindex(snapshot_ctx(s)->links, snapshot_ctx(s)->nlinks, q->dev);
	seg_add(&c.b, open_br, 1, SIZE_MAX);
	if ((q->set & QF_EXPIRING) && q->expiring && !(q->set & (QF_COVERS | QF_PREFIX))) {
		size_t n;
		const uint32_t *v = index_expiring_by_record(s, &n);

		visit_list(&c, v, (long)n);
	} else if (q->set & QF_TABLE) {
		int tpos = index_table_pos(s, q->table);

		if (tpos >= 0)
			ret = walk_table(&c, tpos);
	} else {
		for (size_t t = 0; t < snapshot_ntables(s) && !ret; t++)
			ret = walk_table(&c, (int)t);
	}
	run_close(&c.b);
	seg_add(&c.b, close_br, 2, SIZE_MAX);
	if (ret < 0 || c.b.failed || res->dyn.failed) {
		free(c.b.segs);
		free(c.b.dyn_off);
		strbuf_free(&res->dyn);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c.b.n; k++)
		if (c.b.dyn_off[k] != SIZE_MAX)
			c.b.segs[k].p = res->dyn.buf + c.b.dyn_off[k];
	free(c.b.dyn_off);
	res->segs = c.b.segs;
	res->nseg = c.b.n;
	res->count = c.count;
	if (c.more) {
		struct index_cursor cur;

		index_cursor_of(s, c.last, &cur);
		query_cursor_encode(&cur, res->next);
	}
	return 0;
}

void query_result_free(struct query_result *res)
{
	free(res->segs);
	res->segs = NULL;
	strbuf_free(&res->dyn);
}

void query_render_route(const struct snapshot *s, size_t i, int64_t now_ms, struct strbuf *sb)
{
	const char *p;
	size_t len;

	if (snapshot_route(s, i)->expires_ms) {
		render_json_route(snapshot_ctx(s), snapshot_route(s, i), now_ms, sb);
		return;
	}
	render_json_span(s, i, &p, &len);
	if (len && *p == ',') {
		p++;
		len--;
	}
	strbuf_append(sb, p, len);
}

void query_render_expiring(const struct snapshot *s, int64_t now_ms, struct strbuf *sb)
{
	strbuf_putc(sb, '[');
	for (size_t k = 0; k < snapshot_nexpiring(s); k++) {
		const struct route *r = snapshot_route(s, snapshot_expiring(s)[k]);

		if (k)
			strbuf_putc(sb, ',');
		render_json_route(snapshot_ctx(s), r, now_ms, sb);
		if (r->expires_ms <= now_ms && sb->len && !sb->failed) {
			sb->len--; /* the closing brace */
			strbuf_puts(sb, ",\"expired\":true}");
		}
	}
	strbuf_puts(sb, "]\n");
}
