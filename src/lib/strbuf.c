// SPDX-License-Identifier: GPL-2.0-or-later
/* strbuf.c - growable buffer with a sticky error flag. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/strbuf.h"

bool strbuf_reserve(struct strbuf *sb, size_t n)
{
	size_t need, cap;
	char *p;

	if (sb->failed)
		return false;
	if (__builtin_add_overflow(sb->len, n, &need))
		goto fail;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need) {
		if (__builtin_mul_overflow(cap, 2, &cap))
			goto fail;
	}
	p = realloc(sb->buf, cap);
	if (!p)
		goto fail;
	sb->buf = p;
	sb->cap = cap;
	return true;
fail:
	sb->failed = true;
	return false;
}

void strbuf_append(struct strbuf *sb, const void *data, size_t n)
{
	if (!n)
		return;
	if (!strbuf_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_putc(struct strbuf *sb, char c)
{
	if (!strbuf_reserve(sb, 1))
		return;
	sb->buf[sb->len++] = c;
}

void strbuf_appendf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->failed)
		return;
	if (!strbuf_reserve(sb, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->failed = true;
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		if (!strbuf_reserve(sb, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void strbuf_json_escape(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *short_esc = NULL;

		switch (*p) { /* the escapes iproute2's json_writer uses */
		case '\b':
			short_esc = "\\b";
			break;
		case '\t':
			short_esc = "\\t";
			break;
		case '\n':
			short_esc = "\\n";
			break;
		case '\f':
			short_esc = "\\f";
			break;
		case '\r':
			short_esc = "\\r";
			break;
		}
		if (short_esc) {
			strbuf_puts(sb, short_esc);
		} else if (*p == '"' || *p == '\\') {
			strbuf_putc(sb, '\\');
			strbuf_putc(sb, (char)*p);
		} else if (*p < 0x20) { /* json_writer writes these raw, which is not JSON */
			char e[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };

			strbuf_append(sb, e, sizeof(e));
		} else {
			strbuf_putc(sb, (char)*p);
		}
	}
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *p = sb->buf;

	if (len)
		*len = sb->len;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->failed = false;
	return p;
}

void strbuf_free(struct strbuf *sb)
{
	if (!sb)
		return;
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->failed = false;
}
