// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http.c - libmicrohttpd glue: listeners, dispatch, ETag, errors, the snapshot reference
 * that a response holds while its bytes are sent.
 *
 * One MHD daemon per listen address, each with an internal thread pool (epoll). A request
 * takes a snapshot reference (snapshot_acquire) before anything else; a response that points
 * into the snapshot keeps that reference and drops it in its free callback, so a snapshot is
 * never freed under a response that is still being sent.
 *
 * Web configuration (--web-config-file, webconfig.h): a "generation" is the set of daemons,
 * one per listener, started with one configuration (TLS credentials are daemon options in
 * libmicrohttpd). SIGHUP's http_reload() starts a new generation next to the current one,
 * switches the gates to it, and retires the old one: it is stopped by http_reap() once its
 * connections are done (or after twice the idle timeout), so a certificate rotation drops no
 * scrape in flight. Requests see their own generation's configuration (the daemon's cls), so
 * a configuration is freed only with the last daemon that uses it. The main thread alone
 * starts, switches and stops generations.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>

#include "rtsnap/auth.h"
#include "rtsnap/collector.h"
#include "rtsnap/http.h"
#include "rtsnap/http_events.h"
#include "rtsnap/http_internal.h"
#include "rtsnap/http_web.h"
#include "rtsnap/log.h"
#include "rtsnap/names.h"
#include "rtsnap/stats.h"
#include "rtsnap/webconfig.h"

#define MAX_LISTEN 8

struct http_gen;
struct gen_listener { /* cls of a daemon's connection notifications */
	struct http_gen *gen;
	unsigned int i; /* listener index */
};

struct http_gen {
	struct webconfig *wc; /* owned; NULL: no --web-config-file */
	struct MHD_Daemon *mhd[MAX_LISTEN];
	struct gen_listener gl[MAX_LISTEN];
	unsigned int conns; /* atomic: open connections of all its daemons */
	int64_t retired_ms; /* CLOCK_MONOTONIC ms when it stopped being current */
	struct http_gen *next;
};

static struct http_gen *s_cur, *s_retired;
static unsigned int s_nlisten, s_threads, s_limit, s_timeout_s;
static const char *const *s_listen;
static struct http_gate *s_gates[MAX_LISTEN];
static char s_unix_paths[MAX_LISTEN][108];
static struct stat s_unix_st[MAX_LISTEN]; /* the socket file we created, removed only if still it */

/* Status codes counted one by one; anything else is counted as "other" (the last column). */
static const unsigned int s_codes[HTTP_CODE__MAX - 1] = { 200, 304, 400, 404, 405, 408,
							  413, 414, 431, 500, 503, 505 };

static void count_request(int ep, unsigned int status)
{
	unsigned int ci = HTTP_CODE__MAX - 1;

	for (unsigned int i = 0; i < HTTP_CODE__MAX - 1; i++)
		if (s_codes[i] == status)
			ci = i;
	if (ep < 0 || ep >= HTTP_EP__MAX)
		ep = HTTP_EP__MAX - 1;
	stats_inc(g_stats.http_requests_code[ep][ci]);
}

/* ---- responses ---- */

static void add_common_headers(struct MHD_Response *r, const struct http_req *rq, const char *ctype)
{
	char etag[32];

	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	for (const char *const *h = rq->headers; h && h[0] && h[1]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	for (const char *const *h = rq->site_headers; h && h[0] && h[1]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	if (rq->snap) {
		snprintf(etag, sizeof(etag), "\"%llu\"", (unsigned long long)rq->snap->generation);
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	}
}

static enum MHD_Result queue(struct http_req *rq, unsigned int status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	http_gate_request_complete(rq->conn); /* answered: a body it may carry is not awaited */
	ret = MHD_queue_response(rq->conn, status, r);
	MHD_destroy_response(r);
	count_request(rq->ep, status);
	return ret;
}

enum MHD_Result http_send_buffer(struct http_req *rq, unsigned int status, const char *ctype,
				 char *body, size_t len)
{
	struct MHD_Response *r;

	r = MHD_create_response_from_buffer_with_free_callback_cls(len, body, free, body);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	add_common_headers(r, rq, ctype);
	stats_add(g_stats.http_bytes, len);
	return queue(rq, status, r);
}

enum MHD_Result http_send_response(struct http_req *rq, unsigned int status, const char *ctype,
				   struct MHD_Response *r)
{
	if (!r)
		return MHD_NO;
	add_common_headers(r, rq, ctype);
	return queue(rq, status, r);
}

/* Length of the well-formed UTF-8 sequence at p (at most n bytes available), 0 if none. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0; /* overlong, surrogate, beyond Unicode */
	return len;
}

/*
 * Copy src into dst (size dstlen > 0) as valid UTF-8: every byte that does not start a
 * well-formed sequence (a stray byte, or a character cut short by a "%.64s" in the caller's
 * format) becomes U+FFFD, and the copy ends on a character boundary.
 */
static void utf8_clean(char *dst, size_t dstlen, const char *src)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)src;
	size_t n = strlen(src), o = 0;

	while (n) {
		size_t l = utf8_seq(p, n);
		const char *from = l ? (const char *)p : repl;
		size_t cl = l ? l : 3;

		if (o + cl >= dstlen)
			break;
		memcpy(dst + o, from, cl);
		o += cl;
		l = l ? l : 1;
		p += l;
		n -= l;
	}
	dst[o] = 0;
}

enum MHD_Result http_send_error(struct http_req *rq, unsigned int status, const char *fmt, ...)
{
	char raw[512], msg[512];
	json_t *o;
	char *body;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	utf8_clean(msg, sizeof(msg), raw); /* jansson refuses anything else */
	o = json_pack("{s:s}", "error", msg);
	body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!body)
		return MHD_NO;
	{
		size_t l = strlen(body);
		char *b = realloc(body, l + 2);

		if (b) {
			body = b;
			body[l++] = '\n';
			body[l] = 0;
		}
		return http_send_buffer(rq, status, "application/json", body, l);
	}
}

/*
 * libmicrohttpd 0.9.75 stalls or aborts ("Failed to destroy mutex") on an iovec response of
 * more than IOV_MAX elements; such bodies are streamed from a reader callback instead, which
 * copies the segments into libmicrohttpd's buffer block by block.
 */
#define HTTP_IOV_MAX 1024

struct seg_ctx {
	struct http_pin pin; /* in the registry of responses holding a snapshot (http_pin.c) */
	struct snapshot *snap;
	struct strbuf dyn;
	struct render_seg *segs;	 /* reader path only */
	struct render_proc_reader *proc; /* the proc text's reader, instead of segs */
	unsigned int nseg, cur;
	size_t off;   /* into segs[cur] */
	uint64_t pos; /* body bytes handed out so far */
};

static void seg_free(void *cls)
{
	struct seg_ctx *c = cls;

	http_pin_del(&c->pin); /* before the release, and before libmicrohttpd closes the fd */
	snapshot_release(c->snap);
	strbuf_free(&c->dyn);
	free(c->segs);
	if (c->proc)
		render_proc_reader_free(c->proc);
	free(c->proc);
	free(c);
}

static ssize_t proc_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct seg_ctx *c = cls;
	ssize_t n;

	if (pos != c->pos) { /* not sequential (never seen): start again and skip to pos */
		char skip[4096];

		render_proc_reader_free(c->proc);
		render_proc_reader_init(c->proc, c->snap);
		for (c->pos = 0; c->pos < pos; c->pos += (uint64_t)n) {
			n = render_proc_read(c->proc, skip,
					     pos - c->pos < sizeof(skip) ? pos - c->pos
									 : sizeof(skip));
			if (n <= 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	n = render_proc_read(c->proc, buf, max);
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	c->pos += (uint64_t)n;
	return n ? n : MHD_CONTENT_READER_END_OF_STREAM;
}

/*
 * Queue response r (NULL: it could not be made) whose body, total bytes, reads c->snap:
 * headers, the registry of responses holding a snapshot, the byte count. c belongs to r
 * (freed by seg_free()) from here on.
 */
static enum MHD_Result queue_snapshot_response(struct http_req *rq, unsigned int status,
					       const char *ctype, struct seg_ctx *c,
					       struct MHD_Response *r, uint64_t total)
{
	if (!r) {
		seg_free(c);
		return MHD_NO;
	}
	rq->snap = c->snap; /* for the ETag header only; the reference stays with c */
	add_common_headers(r, rq, ctype);
	rq->snap = NULL;
	http_pin_add(&c->pin, rq->conn, c->snap, total);
	stats_add(g_stats.http_bytes, total);
	return queue(rq, status, r);
}

/* The proc text of rq's snapshot, rendered as libmicrohttpd asks for it. */
static enum MHD_Result send_proc(struct http_req *rq)
{
	struct seg_ctx *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	uint64_t total = rq->snap->proc_len;

	if (c)
		c->proc = malloc(sizeof(*c->proc));
	if (!c || !c->proc) {
		free(c);
		return MHD_NO;
	}
	c->snap = rq->snap;
	rq->snap = NULL; /* the response holds the reference now */
	render_proc_reader_init(c->proc, c->snap);
	r = MHD_create_response_from_callback(total, 64 * 1024, proc_read, c, seg_free);
	return queue_snapshot_response(rq, 200, "text/plain; charset=utf-8", c, r, total);
}

static ssize_t seg_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct seg_ctx *c = cls;
	size_t n = 0;

	if (pos != c->pos) { /* not sequential (never seen): find the segment again */
		c->cur = 0;
		c->off = 0;
		c->pos = pos;
		while (c->cur < c->nseg && pos >= c->segs[c->cur].len)
			pos -= c->segs[c->cur++].len;
		c->off = (size_t)pos;
	}
	while (n < max && c->cur < c->nseg) {
		const struct render_seg *s = &c->segs[c->cur];
		size_t k = s->len - c->off;

		if (k > max - n)
			k = max - n;
		memcpy(buf + n, s->p + c->off, k);
		n += k;
		c->off += k;
		if (c->off == s->len) {
			c->cur++;
			c->off = 0;
		}
	}
	c->pos += n;
	return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

enum MHD_Result http_send_snapshot_segs(struct http_req *rq, unsigned int status, const char *ctype,
					struct render_seg *segs, unsigned int nseg,
					struct strbuf *dyn)
{
	struct MHD_IoVec *iov =
	    nseg > HTTP_IOV_MAX ? NULL : malloc((nseg ? nseg : 1) * sizeof(*iov));
	struct seg_ctx *c = calloc(1, sizeof(*c));
	struct MHD_Response *r = NULL;
	size_t total = 0;

	if ((!iov && nseg <= HTTP_IOV_MAX) || !c) {
		free(iov);
		free(c);
		free(segs);
		if (dyn)
			strbuf_free(dyn);
		return MHD_NO;
	}
	for (unsigned int i = 0; i < nseg; i++) {
		if (iov) {
			iov[i].iov_base = segs[i].p;
			iov[i].iov_len = segs[i].len;
		}
		total += segs[i].len;
	}
	if (iov) {
		free(segs);
	} else {
		c->segs = segs;
		c->nseg = nseg;
	}
	if (dyn)
		c->dyn = *dyn; /* bytes move to the response */
	c->snap = rq->snap;
	rq->snap = NULL; /* the response holds the reference now */
	if (iov)
		r = MHD_create_response_from_iovec(iov, nseg, seg_free, c);
	else
		r = MHD_create_response_from_callback(total, 64 * 1024, seg_read, c, seg_free);
	free(iov); /* MHD keeps its own copy of the array */
	return queue_snapshot_response(rq, status, ctype, c, r, total);
}

/* ---- arguments ---- */

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct http_req *rq = cls;

	(void)kind;
	if (rq->nargs >= HTTP_MAX_ARGS) {
		rq->args_overflow = 1;
		return MHD_NO;
	}
	rq->args[rq->nargs].key = key;
	rq->args[rq->nargs].val = value ? value : "";
	rq->nargs++;
	return MHD_YES;
}

const char *http_arg(const struct http_req *rq, const char *key)
{
	for (unsigned int i = 0; i < rq->nargs; i++)
		if (strcmp(rq->args[i].key, key) == 0)
			return rq->args[i].val;
	return NULL;
}

int http_args_check(struct http_req *rq, const char *const *allowed, enum MHD_Result *res)
{
	if (rq->args_overflow) {
		*res = http_send_error(rq, 400, "too many query parameters (at most %d)",
				       HTTP_MAX_ARGS);
		return 1;
	}
	for (unsigned int i = 0; i < rq->nargs; i++) {
		const char *k = rq->args[i].key;
		int ok = 0;

		for (const char *const *a = allowed; a && *a; a++)
			ok |= strcmp(*a, k) == 0;
		if (!ok) {
			*res = http_send_error(rq, 400, "unknown query parameter '%.64s'", k);
			return 1;
		}
		for (unsigned int j = 0; j < i; j++) {
			if (strcmp(rq->args[j].key, k) == 0) {
				*res =
				    http_send_error(rq, 400, "query parameter '%.64s' repeated", k);
				return 1;
			}
		}
	}
	return 0;
}

/* ---- endpoints ---- */

int http_no_snapshot(struct http_req *rq, enum MHD_Result *res)
{
	if (rq->snap)
		return 0;
	*res = http_send_error(rq, 503, "no snapshot yet");
	return 1;
}

static enum MHD_Result ep_proc(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	enum MHD_Result res;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	return send_proc(rq);
}

static void iso8601(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	int ms = (int)(ts->tv_nsec / 1000000);

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

/* The incremental collector's counters (see docs/design.md). */
static json_t *status_collector(int64_t now_ms)
{
	json_t *o = json_object(), *n = json_object(), *t = json_object(), *f = json_object();
	int64_t overrun = stats_get(g_stats.last_enobufs_mono_ms);

	for (int k = 0; k < NOTIFY__COUNT; k++)
		json_object_set_new(n, stats_notify_name(k),
				    json_integer((json_int_t)stats_get(g_stats.notify_applied[k])));
	for (int k = 0; k < TDUMP__COUNT; k++)
		json_object_set_new(t, stats_tdump_name(k),
				    json_integer((json_int_t)stats_get(g_stats.targeted_dumps[k])));
	for (int k = 0; k < TRIGGER__COUNT; k++)
		json_object_set_new(f, stats_trigger_name(k),
				    json_integer((json_int_t)stats_get(g_stats.full_dumps[k])));
	json_object_set_new(o, "notifications_applied", n);
	json_object_set_new(o, "targeted_dumps", t);
	json_object_set_new(o, "full_dumps", f);
	json_object_set_new(o, "publications",
			    json_integer((json_int_t)stats_get(g_stats.publications)));
	json_object_set_new(o, "segments_built",
			    json_integer((json_int_t)stats_get(g_stats.segments_built)));
	json_object_set_new(o, "segments", json_integer((json_int_t)stats_get(g_stats.segments)));
	json_object_set_new(o, "segments_shared",
			    json_integer((json_int_t)stats_get(g_stats.segments_shared)));
	json_object_set_new(o, "resync_drift_routes",
			    json_integer((json_int_t)stats_get(g_stats.resync_drift_routes)));
	json_object_set_new(o, "resyncs_postponed",
			    json_integer((json_int_t)stats_get(g_stats.resyncs_postponed)));
	json_object_set_new(o, "resync_adopt_steps",
			    json_integer((json_int_t)stats_get(g_stats.adopt_steps)));
	json_object_set_new(o, "unknown_deletes",
			    json_integer((json_int_t)stats_get(g_stats.unknown_deletes)));
	json_object_set_new(o, "notification_overruns",
			    json_integer((json_int_t)stats_get(g_stats.enobufs)));
	json_object_set_new(o, "notification_storms",
			    json_integer((json_int_t)stats_get(g_stats.storms)));
	json_object_set_new(o, "notifications_skipped_after_overrun",
			    json_integer((json_int_t)stats_get(g_stats.overrun_skipped)));
	json_object_set_new(o, "last_overrun_age_seconds",
			    overrun ? json_real((double)(now_ms - overrun) / 1000.0) : json_null());
	json_object_set_new(o, "mirror_routes",
			    json_integer((json_int_t)stats_get(g_stats.mirror_routes)));
	json_object_set_new(o, "mirror_bytes",
			    json_integer((json_int_t)stats_get(g_stats.mirror_bytes)));
	return o;
}

static enum MHD_Result ep_status(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	const struct snapshot *s = rq->snap;
	json_t *o, *tables, *errors, *coll;
	enum MHD_Result res;
	char when[64], b[12];
	char *body;
	size_t routes = 0;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	o = json_object();
	tables = json_array();
	errors = json_object();
	coll = json_object();
	for (size_t i = 0; i < s->ntables; i++) {
		const struct snapshot_table *t = &s->tables[i];

		routes += t->routes;
		json_array_append_new(
		    tables, json_pack("{s:I,s:s,s:I,s:I}", "id", (json_int_t)t->id, "name",
				      names_table(s->ctx.names, t->id, b), "routes",
				      (json_int_t)t->routes, "proc_lines", (json_int_t)t->lines));
	}
	for (int e = 0; e < CERR__COUNT; e++)
		json_object_set_new(errors, stats_error_name(e),
				    json_integer((json_int_t)stats_get(g_stats.errors[e])));
	for (int t = 0; t < TRIGGER__COUNT; t++)
		json_object_set_new(coll, stats_trigger_name(t),
				    json_integer((json_int_t)stats_get(g_stats.collections[t])));
	iso8601(&s->taken_at, when, sizeof(when));
	json_object_set_new(o, "version", json_string(RTSNAP_VERSION));
	json_object_set_new(o, "generation", json_integer((json_int_t)s->generation));
	json_object_set_new(o, "taken_at", json_string(when));
	json_object_set_new(o, "age_seconds",
			    json_real((double)(rq->now_ms - s->taken_mono_ms) / 1000.0));
	json_object_set_new(o, "duration_seconds", json_real(s->duration_s));
	json_object_set_new(o, "trigger", json_string(stats_trigger_name(s->trigger)));
	json_object_set_new(o, "stale", json_boolean(!collector_is_fresh()));
	json_object_set_new(o, "interval_seconds", json_integer(collector_interval()));
	json_object_set_new(o, "routes", json_integer((json_int_t)routes));
	json_object_set_new(o, "proc_bytes", json_integer((json_int_t)s->proc_len));
	json_object_set_new(o, "expiring", json_integer((json_int_t)s->nexpiring));
	json_object_set_new(o, "tables", tables);
	json_object_set_new(o, "collections", coll);
	json_object_set_new(o, "errors", errors);
	json_object_set_new(o, "malformed_messages",
			    json_integer((json_int_t)stats_get(g_stats.malformed)));
	json_object_set_new(o, "dumps_redone",
			    json_integer((json_int_t)stats_get(g_stats.dump_intr_redone)));
	json_object_set_new(o, "collector", status_collector(rq->now_ms));
	if (rq->web) {
		const struct webconfig *wc = rq->web;

		json_object_set_new(
		    o, "web_config",
		    json_pack("{s:s,s:b,s:s,s:I,s:I,s:I,s:I}", "path", wc->path, "tls", wc->tls,
			      "client_auth_type",
			      wc->tls ? webconfig_client_auth_name(wc->client_auth) : "none",
			      "basic_auth_users", (json_int_t)wc->nusers, "bcrypt_checks",
			      (json_int_t)auth_bcrypt_runs(), "cached_checks",
			      (json_int_t)auth_cache_hits(), "busy_checks",
			      (json_int_t)auth_busy()));
	}
	json_object_set_new(o, "last_error",
			    stats_get(g_stats.last_error)
				? json_string(strerror(-stats_get(g_stats.last_error)))
				: json_null());
	body = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!body)
		return http_send_error(rq, 500, "out of memory");
	return http_send_buffer(rq, 200, "application/json", body, strlen(body));
}

static enum MHD_Result ep_healthz(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	enum MHD_Result res;
	int fresh = rq->snap && collector_is_fresh();
	char *body;

	if (http_args_check(rq, allowed, &res))
		return res;
	if (asprintf(&body, "{\"status\":\"%s\",\"generation\":%llu}\n", fresh ? "ok" : "stale",
		     rq->snap ? (unsigned long long)rq->snap->generation : 0ULL) < 0)
		return MHD_NO;
	return http_send_buffer(rq, fresh ? 200 : 503, "application/json", body, strlen(body));
}

struct endpoint {
	const char *path;
	enum MHD_Result (*fn)(struct http_req *rq);
	int etag; /* supports If-None-Match on the snapshot generation */
};

/* "/" also serves every other path http_web_path() knows (the web page's files) */
static const struct endpoint s_endpoints[] = {
	{ "/ipv6_route", ep_proc, 1 },		 { "/proc/net/ipv6_route", ep_proc, 1 },
	{ "/routes", http_ep_routes, 0 }, /* expires changes with time: no 304 */
	{ "/routes/lookup", http_ep_lookup, 0 }, { "/expiring", http_ep_expiring, 0 },
	{ "/metrics", http_ep_metrics, 0 },	 { "/status", ep_status, 1 },
	{ "/healthz", ep_healthz, 0 },		 { "/", http_ep_web, 0 },
	{ "/events", http_ep_events, 0 },	 { "/changes", http_ep_changes, 0 },
};
#define NENDPOINTS (sizeof(s_endpoints) / sizeof(s_endpoints[0]))

const char *http_endpoint_name(int ep)
{
	if (ep >= 0 && (size_t)ep < NENDPOINTS)
		return s_endpoints[ep].path;
	return "other";
}

unsigned int http_endpoint_count(void)
{
	return (unsigned int)NENDPOINTS;
}

void http_count_status(const char *path, size_t len, unsigned int status)
{
	int ep = HTTP_EP__MAX - 1;

	for (size_t i = 0; path && i < NENDPOINTS; i++)
		if (strlen(s_endpoints[i].path) == len &&
		    memcmp(s_endpoints[i].path, path, len) == 0)
			ep = (int)i;
	count_request(ep, status);
}

unsigned int http_status_code(unsigned int idx)
{
	return idx < HTTP_CODE__MAX - 1 ? s_codes[idx] : 0;
}

/* If-None-Match: "*", or a comma-separated list of (possibly weak) tags. */
static int etag_matches(const char *inm, uint64_t gen)
{
	char tag[32];
	size_t tl;

	if (!inm)
		return 0;
	tl = (size_t)snprintf(tag, sizeof(tag), "\"%llu\"", (unsigned long long)gen);
	for (const char *p = inm; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (strncmp(p, tag, tl) == 0 && (p[tl] == 0 || p[tl] == ',' || p[tl] == ' '))
			return 1;
		while (*p && *p != ',')
			p++;
	}
	return 0;
}

/*
 * Per-request state kept in libmicrohttpd's request pointer, as flag bits (no allocation):
 * set by on_uri() when the request line arrives, read by on_request().
 */
#define RQF_SEEN 0x1u /* on_request() was called once (headers received) */
#define RQF_NUL 0x2u  /* the raw path holds "%00": decoded, it would be cut short */
#define RQF_CTL 0x4u  /* the raw target holds a control byte */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	uintptr_t f = 0;
	int in_path = 1;

	(void)cls;
	(void)conn;
	for (const unsigned char *p = (const unsigned char *)uri; *p; p++) {
		if (*p == '?')
			in_path = 0;
		if (*p < 0x20 || *p == 0x7f)
			f |= RQF_CTL;
		if (in_path && p[0] == '%' && p[1] == '0' && p[2] == '0')
			f |= RQF_NUL;
	}
	return (void *)(f | 0x100u); /* never NULL */
}

static enum MHD_Result send_405(struct http_req *rq)
{
	struct MHD_Response *r;
	char *body = strdup("{\"error\":\"method not allowed\"}\n");

	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer_with_free_callback_cls(strlen(body), body, free, body);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return queue(rq, 405, r);
}

/*
 * The client certificate, when client_auth_type asks for one: 0 if the request may go on,
 * else the reason to refuse it. libmicrohttpd requests a certificate when it has a CA (and
 * GnuTLS verifies nothing on the server side by itself): the verdict is taken here, per
 * request, against the CA of the configuration the connection's daemon was started with.
 */
static const char *client_cert_refusal(const struct webconfig *wc, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t ses;
	unsigned int ncerts = 0, status = 0;
	int have, verify;

	if (!wc->tls || wc->client_auth == WC_NO_CLIENT_CERT ||
	    wc->client_auth == WC_REQUEST_CLIENT_CERT)
		return NULL;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return "no TLS session";
	ses = (gnutls_session_t)ci->tls_session;
	have = gnutls_certificate_get_peers(ses, &ncerts) != NULL && ncerts > 0;
	if (!have)
		return wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN
			   ? NULL
			   : "a client certificate is required";
	verify = wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN ||
		 wc->client_auth == WC_REQUIRE_AND_VERIFY_CLIENT_CERT;
	if (verify && (gnutls_certificate_verify_peers2(ses, &status) < 0 || status))
		return "the client certificate is not signed by the client CA (or not valid now)";
	return NULL;
}

/* Basic auth: 1 if the configuration has no users or the request names one of them, 0 if
 * not, -EBUSY if the check has to wait for another one (see auth.h). */
static int basic_auth_ok(struct webconfig *wc, struct MHD_Connection *conn)
{
	char *pass = NULL, *user;
	int ok;

	if (!wc->nusers)
		return 1;
	user = MHD_basic_auth_get_username_password(conn, &pass);
	ok = user && pass ? auth_check(wc, user, pass) : 0;
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return ok;
}

static enum MHD_Result send_401(struct http_req *rq)
{
	static const char msg[] = "{\"error\":\"authentication required\"}\n";
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	http_gate_request_complete(rq->conn);
	ret = MHD_queue_basic_auth_fail_response(rq->conn, "rtsnapd", r);
	MHD_destroy_response(r);
	count_request(rq->ep, 401);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct http_gen *gen = cls;
	struct http_req rq = { .conn = conn, .path = url, .ep = HTTP_EP__MAX - 1 };
	uintptr_t flags = (uintptr_t)*req_cls;
	const struct endpoint *e = NULL;
	enum MHD_Result res;

	(void)version;
	rq.web = gen->wc;
	rq.owner = gen;
	if (gen->wc)
		rq.site_headers = (const char *const *)gen->wc->headers;
	(void)upload;
	for (size_t i = 0; i < NENDPOINTS; i++) {
		if (strcmp(url, s_endpoints[i].path) == 0 ||
		    (s_endpoints[i].fn == http_ep_web && http_web_path(url))) {
			e = &s_endpoints[i];
			rq.ep = (int)i;
		}
	}
	if (!(flags & RQF_SEEN)) {
		/*
		 * First call: the headers only. A refusal is queued now, before any body is read
		 * (libmicrohttpd accepts a response only before the body or after all of it);
		 * a GET is answered on the next call, once a body it may carry has been skipped.
		 */
		*req_cls = (void *)(flags | RQF_SEEN);
		if (gen->wc) { /* who may ask comes before what is asked */
			const char *why = client_cert_refusal(gen->wc, conn);

			if (why)
				return http_send_error(&rq, 403, "%s", why);
			switch (basic_auth_ok(gen->wc, conn)) {
			case 1:
				break;
			case 0:
				return send_401(&rq);
			default:
				rq.headers = (const char *const[]){ "Retry-After", "1", NULL };
				return http_send_error(&rq, 503, "password checks are busy: retry");
			}
		}
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return send_405(&rq);
		if (flags & RQF_CTL)
			return http_send_error(&rq, 400, "control character in the request target");
		if (flags & RQF_NUL)
			return http_send_error(&rq, 400, "NUL byte (%%00) in the path");
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a GET with a body: ignore the body */
		return MHD_YES;
	}
	http_gate_request_complete(conn); /* before rendering, however long that takes */
	if (!e)
		return http_send_error(&rq, 404, "no such endpoint: %.128s", url);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &rq);
	rq.snap = snapshot_acquire();
	rq.now_ms = snapshot_now_ms();
	if (e->etag && rq.snap &&
	    etag_matches(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
		rq.snap->generation)) {
		struct MHD_Response *r =
		    MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

		if (r)
			add_common_headers(r, &rq, NULL);
		res = queue(&rq, 304, r);
	} else {
		res = e->fn(&rq);
	}
	snapshot_release(rq.snap); /* NULL if a response took it over */
	return res;
}

/* ---- listeners ---- */

int http_parse_listen(const char *spec, struct sockaddr_storage *ss, unsigned int *sslen)
{
	char host[128];
	const char *colon;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un *su = (struct sockaddr_un *)ss;
		size_t l = strlen(spec + 5);

		if (l == 0 || l >= sizeof(su->sun_path))
			return -EINVAL;
		su->sun_family = AF_UNIX;
		memcpy(su->sun_path, spec + 5, l + 1);
		*sslen = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + l + 1);
		return 0;
	}
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = 0;
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || (size_t)(colon - spec) >= sizeof(host) || strchr(spec, ':') != colon)
			return -EINVAL;
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return -EINVAL;
	if (spec[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (strcmp(host, "localhost") == 0)
			strcpy(host, "127.0.0.1");
		if (!host[0] || strcmp(host, "*") == 0)
			strcpy(host, "0.0.0.0");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*s4);
	}
	return 0;
}

/*
 * An existing file at a unix listener's path: a socket nobody answers on (a previous run
 * that died) is removed; a socket that answers (another instance) or anything else is
 * refused, and never removed.
 */
static int unix_stale(const struct sockaddr_un *su, unsigned int sslen)
{
	struct stat st;
	int fd, ret;

	if (lstat(su->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_err("%s exists and is not a socket: not touching it", su->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)su, sslen) == 0 ? -EADDRINUSE : -errno;
	close(fd);
	if (ret == -EADDRINUSE) {
		log_err("%s: another process answers on this socket (a second rtsnapd?)",
			su->sun_path);
		return ret;
	}
	if (ret != -ECONNREFUSED) {
		log_err("%s: cannot tell whether the socket is in use: %s", su->sun_path,
			strerror(-ret));
		return ret;
	}
	log_info("%s: removing the stale socket of an earlier run", su->sun_path);
	return unlink(su->sun_path) < 0 ? -errno : 0;
}

static int open_listener(const struct http_opts *o, const char *spec, char *unix_path,
			 struct stat *unix_st)
{
	struct sockaddr_storage ss;
	unsigned int sslen;
	int fd, one = 1, ret;

	ret = http_parse_listen(spec, &ss, &sslen);
	if (ret)
		return ret;
	if (ss.ss_family == AF_UNIX) {
		ret = unix_stale((struct sockaddr_un *)&ss, sslen);
		if (ret)
			return ret;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (ss.ss_family == AF_UNIX) {
		const char *path = ((struct sockaddr_un *)&ss)->sun_path;
		mode_t old;

		/* nobody may connect before the mode and group are set: create it 0600 */
		old = umask(0177);
		ret = bind(fd, (struct sockaddr *)&ss, sslen) < 0 ? -errno : 0;
		umask(old);
		if (!ret && o->unix_gid != (unsigned int)-1 &&
		    chown(path, (uid_t)-1, (gid_t)o->unix_gid) < 0)
			ret = -errno;
		if (!ret && chmod(path, o->unix_mode) < 0)
			ret = -errno;
		if (!ret && lstat(path, unix_st) < 0)
			ret = -errno;
		if (!ret && listen(fd, 1024) < 0)
			ret = -errno;
		if (ret) {
			if (ret != -EADDRINUSE)
				unlink(path);
			close(fd);
			return ret;
		}
		memcpy(unix_path, path, strnlen(path, 107));
		unix_path[strnlen(path, 107)] = 0;
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 1024) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void gen_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct gen_listener *gl = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		__atomic_add_fetch(&gl->gen->conns, 1, __ATOMIC_RELAXED);
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
		__atomic_sub_fetch(&gl->gen->conns, 1, __ATOMIC_RELAXED);
	http_gate_notify(s_gates[gl->i], conn, socket_context, toe);
}

/* Stop a generation's daemons (their connections are closed) and free it. Accepts NULL. */
static void gen_free(struct http_gen *gen)
{
	if (!gen)
		return;
	http_events_close(gen); /* no connection may be suspended when a daemon stops */
	for (unsigned int i = 0; i < MAX_LISTEN; i++)
		if (gen->mhd[i])
			MHD_stop_daemon(gen->mhd[i]);
	http_events_closed(gen);
	webconfig_free(gen->wc);
	free(gen);
}

/* Start one daemon per listener with wc (taken over, freed on failure too). */
static int gen_new(struct webconfig *wc, struct http_gen **out)
{
	struct http_gen *gen = calloc(1, sizeof(*gen));
	int tls = wc && wc->tls;
	unsigned int mhd_limit;

	if (!gen) {
		webconfig_free(wc);
		return -ENOMEM;
	}
	gen->wc = wc;
	if (tls && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		log_err("this libmicrohttpd was built without TLS");
		gen_free(gen);
		return -ENOTSUP;
	}
	/*
	 * The gate enforces --max-connections (s_limit); libmicrohttpd's limit, which it splits
	 * between its workers, is twice s_limit per worker, so that it never refuses a
	 * connection the gate hands over: a 0.9.75 worker that does leaves its cleanup mutex
	 * locked and hangs (see http_gate.c). It allocates nothing per unused slot.
	 */
	mhd_limit = s_limit > UINT_MAX / 2 / s_threads ? UINT_MAX : s_limit * 2 * s_threads;
	for (unsigned int i = 0; i < s_nlisten; i++) {
		struct MHD_OptionItem tlsopts[] = {
			{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
			  tls ? wc->cert_pem : NULL },
			{ MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? wc->key_pem : NULL },
			{ MHD_OPTION_HTTPS_PRIORITIES, 0, tls ? wc->priorities : NULL },
			{ tls && wc->ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
			  tls ? wc->ca_pem : NULL },
			{ MHD_OPTION_END, 0, NULL },
		};

		gen->gl[i].gen = gen;
		gen->gl[i].i = i;
		/* connections come from the gate (MHD_add_connection), never from a listen socket */
		gen->mhd[i] = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO |
			MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
			(tls ? MHD_USE_TLS : 0),
		    0, NULL, NULL, on_request, gen, MHD_OPTION_THREAD_POOL_SIZE, s_threads,
		    MHD_OPTION_CONNECTION_LIMIT, mhd_limit, MHD_OPTION_CONNECTION_TIMEOUT,
		    s_timeout_s, MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
		    MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_CONNECTION,
		    gen_notify, &gen->gl[i], MHD_OPTION_NOTIFY_COMPLETED, http_gate_completed, NULL,
		    MHD_OPTION_ARRAY, tlsopts, MHD_OPTION_END);
		if (!gen->mhd[i]) {
			log_err("cannot start the HTTP%s server on %s", tls ? "S" : "",
				s_listen[i]);
			gen_free(gen);
			return -EIO;
		}
	}
	*out = gen;
	return 0;
}

static void describe(const struct webconfig *wc)
{
	if (!wc)
		return;
	log_info("web configuration %s: %s%s%s, %u basic auth user%s", wc->path,
		 wc->tls ? "TLS (" : "plain HTTP", wc->tls ? wc->priorities : "",
		 !wc->tls				? ""
		 : wc->client_auth == WC_NO_CLIENT_CERT ? ")"
							: ", client certificates: ",
		 wc->nusers, wc->nusers == 1 ? "" : "s");
	if (wc->tls && wc->client_auth != WC_NO_CLIENT_CERT)
		log_info("client_auth_type %s", webconfig_client_auth_name(wc->client_auth));
}

int http_start(const struct http_opts *o)
{
	unsigned int threads = o->threads;
	struct http_gen *gen = NULL;
	int ret;

	if (!threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n > 0 ? (unsigned int)n : 1;
	}
	if (o->nlisten > MAX_LISTEN) {
		webconfig_free(o->web);
		return -E2BIG;
	}
	http_pin_set_limit(o->max_pinned_bytes, o->max_pinned_factor);
	snapshot_set_retire_hook(http_pin_retired);
	s_threads = threads;
	s_limit = o->conn_limit ? o->conn_limit : 1024;
	s_timeout_s = o->timeout_s ? o->timeout_s : 30;
	s_listen = o->listen;
	for (unsigned int i = 0; i < o->nlisten; i++) {
		struct http_gate_opts go = { .max_pending = o->max_pending ? o->max_pending : 1024,
					     .header_timeout_s =
						 o->header_timeout_s ? o->header_timeout_s : 10,
					     .conn_limit = s_limit };
		int fd = open_listener(o, o->listen[i], s_unix_paths[i], &s_unix_st[i]);
		struct http_gate *g;

		if (fd < 0) {
			log_err("cannot listen on %s: %s", o->listen[i], strerror(-fd));
			webconfig_free(o->web);
			http_stop();
			return fd;
		}
		ret = http_gate_new(o->listen[i], fd, &go, &g);
		if (ret) {
			close(fd);
			log_err("cannot start the HTTP server on %s: %s", o->listen[i],
				strerror(-ret));
			webconfig_free(o->web);
			http_stop();
			return ret;
		}
		s_gates[i] = g;
		s_nlisten = i + 1;
	}
	ret = gen_new(o->web, &gen);
	if (ret) {
		http_stop();
		return ret;
	}
	s_cur = gen;
	for (unsigned int i = 0; i < o->nlisten; i++) {
		ret = http_gate_start(s_gates[i], gen->mhd[i], gen->wc && gen->wc->tls);
		if (ret) {
			log_err("cannot start the HTTP server on %s: %s", o->listen[i],
				strerror(-ret));
			http_stop();
			return ret;
		}
		log_info("listening on %s%s (%u threads, %u connections, %u waiting for a request "
			 "head at most %u s)",
			 o->listen[i], gen->wc && gen->wc->tls ? " with TLS" : "", threads, s_limit,
			 o->max_pending, o->header_timeout_s);
	}
	describe(gen->wc);
	return 0;
}

int http_reload(struct webconfig *wc)
{
	struct http_gen *gen = NULL, *old = s_cur;
	int ret;

	if (!old) {
		webconfig_free(wc);
		return -ENOTCONN;
	}
	ret = gen_new(wc, &gen);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < s_nlisten; i++)
		http_gate_switch(s_gates[i], gen->mhd[i], gen->wc && gen->wc->tls);
	s_cur = gen;
	http_events_close(old); /* its streams reconnect to the new configuration */
	old->retired_ms = mono_ms();
	old->next = s_retired;
	s_retired = old;
	describe(gen->wc);
	return 0;
}

int http_reap(void)
{
	int64_t now = mono_ms();
	struct http_gen **pp = &s_retired;
	int left = 0;

	while (*pp) {
		struct http_gen *gen = *pp;
		int64_t age = now - gen->retired_ms;
		unsigned int conns = __atomic_load_n(&gen->conns, __ATOMIC_RELAXED);

		/* a connection handed over just before the switch is counted within ms */
		if ((conns == 0 && age >= 1000) || age >= (int64_t)s_timeout_s * 2000) {
			*pp = gen->next;
			if (conns)
				log_info("closing %u connections still open on the previous web "
					 "configuration",
					 conns);
			gen_free(gen);
			continue;
		}
		left++;
		pp = &gen->next;
	}
	return left;
}

void http_stop(void)
{
	for (unsigned int i = 0; i < MAX_LISTEN; i++)
		http_gate_stop(s_gates[i]); /* nothing new reaches libmicrohttpd */
	gen_free(s_cur);
	s_cur = NULL;
	while (s_retired) {
		struct http_gen *gen = s_retired;

		s_retired = gen->next;
		gen_free(gen);
	}
	for (unsigned int i = 0; i < MAX_LISTEN; i++) {
		http_gate_free(s_gates[i]); /* the listen socket and waiting connections */
		s_gates[i] = NULL;
	}
	s_nlisten = 0;
	for (unsigned int i = 0; i < MAX_LISTEN; i++) {
		struct stat st;

		/* only the socket this process created: never one that replaced it */
		if (s_unix_paths[i][0] && lstat(s_unix_paths[i], &st) == 0 &&
		    st.st_dev == s_unix_st[i].st_dev && st.st_ino == s_unix_st[i].st_ino)
			unlink(s_unix_paths[i]);
		s_unix_paths[i][0] = 0;
	}
}
