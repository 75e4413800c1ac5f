/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strbuf.h - growable byte buffer with a sticky error flag.
 *
 * Append freely, check sb.failed once at the end. Size arithmetic is overflow-checked.
 * Not thread-safe; a strbuf belongs to one thread at a time.
 */
#ifndef RTSNAP_STRBUF_H
#define RTSNAP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed or a size overflowed; contents are then unspecified */
};

/* Make room for at least n more bytes. Returns false (and sets failed) on failure. */
bool strbuf_reserve(struct strbuf *sb, size_t n);
void strbuf_append(struct strbuf *sb, const void *data, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as the body of a JSON string (no quotes) as iproute2's json_writer escapes it
 * (\b \t \n \f \r \" \\), other control characters as \u00XX (json_writer writes those raw,
 * which is not JSON). */
void strbuf_json_escape(struct strbuf *sb, const char *s);
/* Give the bytes to the caller (who frees them with free()); the strbuf is reset. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_free(struct strbuf *sb);

#endif
