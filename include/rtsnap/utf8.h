/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * utf8.h - recognising valid UTF-8 in bytes from outside (namespace names, route labels),
 * which JSON documents and Prometheus labels must carry as UTF-8.
 */
#ifndef RTSNAP_UTF8_H
#define RTSNAP_UTF8_H

#include <stddef.h>

/*
 * Any thread. The length (1 to 4) of the valid UTF-8 sequence that starts at p, or 0 when
 * there is none there (a stray continuation byte, an overlong form, a surrogate, a code
 * point past U+10FFFF, a sequence cut short). p points into a NUL-terminated string: the
 * terminator ends a short sequence, so no byte past it is read.
 */
size_t utf8_len(const unsigned char *p);

#endif
