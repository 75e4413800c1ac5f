// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_reply.c - replies, counters and query arguments (see http_reply.h): what every endpoint
 * handler queues its answer with, on the worker thread that serves the connection.
 *
 * A response that points into a snapshot (the proc text, /routes, /metrics: iovec or reader
 * callback over snapshot memory) holds the request's snapshot reference until libmicrohttpd
 * frees it, and is listed in the registry of pinned responses (http_pin.c) until then, so a
 * snapshot is never freed under a response that is still being sent.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rtsnap/http_conn.h"
#include "rtsnap/http_count.h"
#include "rtsnap/http_pin.h"
#include "rtsnap/http_reply.h"
#include "rtsnap/stats.h"

/* ---- responses ---- */

size_t http_etag(const struct http_req *rq, char *buf)
{
	int n;

	if (!rq->snap)
		return 0;
	if (rq->snap2)
		n = snprintf(buf, HTTP_ETAG_MAX, "\"%llu.%llu\"",
			     (unsigned long long)snapshot_generation(rq->snap),
			     (unsigned long long)snapshot_generation(rq->snap2));
	else
		n = snprintf(buf, HTTP_ETAG_MAX, "\"%llu\"",
			     (unsigned long long)snapshot_generation(rq->snap));
	return n > 0 ? (size_t)n : 0;
}

void http_add_common_headers(struct MHD_Response *r, const struct http_req *rq, const char *ctype)
{
	char etag[HTTP_ETAG_MAX];

	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	for (const char *const *h = rq->headers; h && h[0] && h[1]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	for (const char *const *h = rq->site_headers; h && h[0] && h[1]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	if (http_etag(rq, etag))
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
}

enum MHD_Result http_queue(struct http_req *rq, unsigned int status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	http_conn_request_complete(rq->conn); /* answered: a body it may carry is not awaited */
	ret = MHD_queue_response(rq->conn, status, r);
	MHD_destroy_response(r);
	http_count(rq->ep, status);
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
	http_add_common_headers(r, rq, ctype);
	http_count_add(HTTP_C_BYTES, len);
	return http_queue(rq, status, r);
}

enum MHD_Result http_send_response(struct http_req *rq, unsigned int status, const char *ctype,
				   struct MHD_Response *r)
{
	if (!r)
		return MHD_NO;
	http_add_common_headers(r, rq, ctype);
	return http_queue(rq, status, r);
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
	struct snapshot *snap2; /* the other family's, for /routes?family=all (not pinned: the
				   bound applies to the IPv6 chain) */
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
	snapshot_release(c->snap2);
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
	http_add_common_headers(r, rq, ctype);
	rq->snap = NULL;
	/* --max-pinned-bytes bounds what the own namespace's chain keeps alive: a named
	 * namespace's snapshots (its generations unrelated) are not listed */
	http_pin_add(&c->pin, rq->conn, rq->ns ? NULL : c->snap, total);
	http_count_add(HTTP_C_BYTES, total);
	return http_queue(rq, status, r);
}

enum MHD_Result http_send_proc(struct http_req *rq)
{
	struct seg_ctx *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	uint64_t total = snapshot_proc_len(rq->snap);

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
	c->snap2 = rq->snap2;
	rq->snap2 = NULL;
	if (iov)
		r = MHD_create_response_from_iovec(iov, nseg, seg_free, c);
	else
		r = MHD_create_response_from_callback(total, 64 * 1024, seg_read, c, seg_free);
	free(iov); /* MHD keeps its own copy of the array */
	return queue_snapshot_response(rq, status, ctype, c, r, total);
}

/* ---- arguments ---- */

enum MHD_Result http_collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
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

int http_family(struct http_req *rq, enum MHD_Result *res)
{
	const char *fam = http_arg(rq, "family");
	int af;

	if (!fam)
		return rq->no_inet6 ? AF_INET : AF_INET6;
	if (!strcmp(fam, "inet6")) {
		af = AF_INET6;
	} else if (!strcmp(fam, "inet")) {
		af = AF_INET;
	} else if (!strcmp(fam, "all")) {
		af = AF_UNSPEC;
	} else {
		*res = http_send_error(rq, 400, "bad value for 'family': %s",
				       rq->no_inet6 ? "inet (the default), inet6 or all"
						    : "inet6 (the default), inet or all");
		return -1;
	}
	if (af != AF_INET && rq->no_inet6) {
		*res = http_send_error(rq, 404,
				       "IPv6 is not followed: start rtsnapd with --family all");
		return -1;
	}
	if (af != AF_INET6 && !rq->chain4) {
		*res = http_send_error(rq, 404,
				       "IPv4 is not followed: start rtsnapd with --family all");
		return -1;
	}
	return af;
}

int http_no_snapshot(struct http_req *rq, enum MHD_Result *res)
{
	if (rq->snap)
		return 0;
	*res = http_send_error(rq, 503, "no snapshot yet");
	return 1;
}

/*
 * libmicrohttpd decodes %00 into a NUL byte, which would silently cut a key or value short
 * ("prefix=2001:db8::%00junk" would read as a valid prefix). Refuse such parameters.
 */
enum MHD_Result http_find_nul(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			      const char *value, size_t value_size)
{
	const char **bad = cls;

	(void)kind;
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		*bad = key;
		return MHD_NO;
	}
	return MHD_YES;
}

/* Is the token [tok, tok + tl) one of the names of gzip? */
static int is_gzip(const char *tok, size_t tl)
{
	return (tl == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
	       (tl == 6 && strncasecmp(tok, "x-gzip", 6) == 0);
}

int http_accepts_gzip(const char *ae)
{
	int gzip = -1, star = -1;

	while (ae && *ae) {
		const char *tok, *end, *p;
		size_t tl;
		int ok = 1;

		while (*ae == ' ' || *ae == '\t' || *ae == ',')
			ae++;
		tok = ae;
		end = strchr(ae, ',');
		if (!end)
			end = ae + strlen(ae);
		for (tl = 0; tok + tl < end && tok[tl] != ';' && tok[tl] != ' ' && tok[tl] != '\t';)
			tl++;
		/* parameters: only q matters; q=0 (0.0, 0.00...) refuses */
		for (p = tok + tl; p < end; p++) {
			if (*p != ';')
				continue;
			while (p + 1 < end && (p[1] == ' ' || p[1] == '\t'))
				p++;
			if (p + 2 < end && (p[1] == 'q' || p[1] == 'Q') && p[2] == '=')
				ok = strtod(p + 3, NULL) > 0;
		}
		if (tl && is_gzip(tok, tl))
			gzip = ok;
		else if (tl == 1 && tok[0] == '*')
			star = ok;
		ae = end;
	}
	return gzip >= 0 ? gzip : star > 0;
}
