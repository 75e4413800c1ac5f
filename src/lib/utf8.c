// SPDX-License-Identifier: GPL-2.0-or-later
/* utf8.c - the length of a valid UTF-8 sequence (RFC 3629, table 3-7 of Unicode). */
#include "rtsnap/utf8.h"

static int cont(unsigned char b)
{
	return (b & 0xc0) == 0x80;
}

size_t utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return cont(p[1]) ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (!cont(p[1]) || !cont(p[2]))
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (!cont(p[1]) || !cont(p[2]) || !cont(p[3]))
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0; /* overlong, past U+10FFFF */
		return 4;
	}
	return 0;
}
