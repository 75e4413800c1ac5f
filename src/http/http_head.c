// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_head.c - the rules of a request head (see http_head.h): what libmicrohttpd would refuse
 * with an HTML page or parse laxly (a later request's "Content-Length: +5" made 0.9.75 send
 * its error's head twice), and the shapes of request smuggling, refused in the raw bytes
 * before libmicrohttpd parses them.
 */
#include <string.h>
#include <strings.h>

#include "rtsnap/http_head.h"

static int is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* End of the head (offset just past its blank line) in p[0..len), or 0 if not there yet. */
size_t http_head_end(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < len && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Next line of [*p, end): returns its start, sets *len (no CR/LF) and moves *p past it. */
static const char *next_line(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;

	*p = nl ? nl + 1 : end;
	if (e > s && e[-1] == '\r')
		e--;
	*len = (size_t)(e - s);
	return s;
}

void http_head_check(const char *buf, size_t len, struct http_head *h)
{
	const char *p = buf, *end = buf + len, *line, *sp1, *sp2, *ver;
	size_t ll, mlen;
	int get_or_head, have_cl = 0;
	unsigned long long cl = 0;

	memset(h, 0, sizeof(*h));
	if (memchr(buf, 0, len)) {
		h->status = 400, h->why = "NUL byte in the request head";
		return;
	}
	do /* empty lines before the request line are allowed */
		line = next_line(&p, end, &ll);
	while (!ll && p < end);
	sp1 = memchr(line, ' ', ll);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line + ll - sp1 - 1)) : NULL;
	mlen = sp1 ? (size_t)(sp1 - line) : 0;
	for (size_t i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)line[i]))
			mlen = 0;
	if (!mlen || !sp2 || sp2 == sp1 + 1) {
		h->status = 400, h->why = "malformed request line";
		return;
	}
	h->path = sp1 + 1;
	h->path_len = (size_t)(sp2 - sp1 - 1);
	if (h->path_len > HTTP_URI_MAX) {
		h->status = 414, h->why = "request target too long";
		h->path = NULL;
		return;
	}
	{
		const char *q = memchr(h->path, '?', h->path_len);

		if (q)
			h->path_len = (size_t)(q - h->path);
	}
	ver = sp2 + 1;
	if ((size_t)(line + ll - ver) != 8 || strncmp(ver, "HTTP/", 5) != 0 || ver[5] < '0' ||
	    ver[5] > '9' || ver[6] != '.' || ver[7] < '0' || ver[7] > '9') {
		h->status = 400, h->why = "malformed request line";
		return;
	}
	if (strncmp(ver, "HTTP/1.0", 8) != 0 && strncmp(ver, "HTTP/1.1", 8) != 0) {
		h->status = 505, h->why = "HTTP version not supported (HTTP/1.0 and 1.1 are)";
		return;
	}
	get_or_head = (mlen == 3 && strncmp(line, "GET", 3) == 0) ||
		      (mlen == 4 && strncmp(line, "HEAD", 4) == 0);
	h->head_only = mlen == 4 && strncmp(line, "HEAD", 4) == 0;
	if (!get_or_head) {
		h->status = 405, h->why = "method not allowed";
		return;
	}
	for (int first = 1;; first = 0) {
		const char *colon, *v, *ve;

		line = next_line(&p, end, &ll);
		if (!ll)
			break;
		if (line[0] == ' ' || line[0] == '\t') { /* folded continuation */
			if (first) {
				h->status = 400, h->why = "malformed header line";
				return;
			}
			continue;
		}
		colon = memchr(line, ':', ll);
		if (!colon || colon == line) {
			h->status = 400, h->why = "malformed header line";
			return;
		}
		for (const char *q = line; q < colon; q++) {
			if (!is_tchar((unsigned char)*q)) {
				h->status = 400, h->why = "malformed header line";
				return;
			}
		}
		v = colon + 1;
		ve = line + ll;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (colon - line == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
			h->status = 400, h->why = "a GET or HEAD request has no body to encode";
			return;
		}
		if (colon - line == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
			unsigned long long x = 0;

			if (v == ve) {
				h->status = 400, h->why = "malformed Content-Length";
				return;
			}
			for (const char *q = v; q < ve; q++) {
				if (*q < '0' || *q > '9') {
					h->status = 400, h->why = "malformed Content-Length";
					return;
				}
				/* saturates: anything that large is a 413 below */
				x = x > HTTP_BODY_MAX ? x : x * 10 + (unsigned int)(*q - '0');
			}
			if (have_cl && x != cl) {
				h->status = 400, h->why = "conflicting Content-Length headers";
				return;
			}
			have_cl = 1;
			cl = x;
		}
	}
	if (cl > HTTP_BODY_MAX) {
		h->status = 413, h->why = "request body too large";
		return;
	}
	h->body = cl;
}

unsigned int http_head_too_long(const char *buf, size_t max, const char **why)
{
	if (!memchr(buf, '\n', max)) {
		*why = "request line too long";
		return 414;
	}
	*why = "request header fields too large";
	return 431;
}
