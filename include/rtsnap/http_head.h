/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_head.h - the rules every request head must follow, checked on the raw bytes: the
 * gate's first look at a plain connection's first request, and http_conn.c's at every request
 * libmicrohttpd is given afterwards (later requests, TLS). Pure functions, any thread.
 */
#ifndef RTSNAP_HTTP_HEAD_H
#define RTSNAP_HTTP_HEAD_H

#include <stddef.h>

#define HTTP_HEAD_MAX (16 * 1024) /* request line and headers: more is 431 (414) */
#define HTTP_URI_MAX 8192	  /* request target: more is 414 */
#define HTTP_BODY_MAX (64 * 1024) /* Content-Length a GET may carry: more is 413 */

struct http_head {
	unsigned int status; /* 0: acceptable; else the answer (400, 405, 413, 414, 505) */
	const char *why;     /* a fixed ASCII text for the JSON error */
	int head_only;	     /* HEAD: an answer without a body */
	const char *path;    /* the target up to '?', raw, for the request counter */
	size_t path_len;
	unsigned long long body; /* Content-Length (0 without one) */
};

/* End of the head (offset just past its blank line) in p[0..len), or 0 if not there yet.
 * Empty lines before the request line belong to the head. */
size_t http_head_end(const char *p, size_t len);

/*
 * Check the complete head buf[0..len) (as http_head_end() found it): request line, version
 * (HTTP/1.0 and 1.1 only), method (GET and HEAD), header syntax, no NUL byte anywhere, no
 * Transfer-Encoding, Content-Length digits only and the same in every copy, at most
 * HTTP_BODY_MAX; the target at most HTTP_URI_MAX. Fills *h.
 */
void http_head_check(const char *buf, size_t len, struct http_head *h);

/* The status a head that is not complete after max bytes gets: 414 when not even its request
 * line is, else 431; why is set to the text. */
unsigned int http_head_too_long(const char *buf, size_t max, const char **why);

#endif
