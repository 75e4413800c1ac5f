/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * array.h - growing a malloc()ed array by doubling, with overflow-checked sizes.
 */
#ifndef RTSNAP_ARRAY_H
#define RTSNAP_ARRAY_H

#include <errno.h>
#include <stdlib.h>

/*
 * Make room in *arr (elements of size sz, *cap of them allocated) for element n (n in use and
 * one more, or any index past the end): doubles the capacity (first when empty) until it
 * holds n. 0 or -ENOMEM (then *arr and *cap are unchanged).
 */
static inline int array_grow(void **arr, size_t *cap, size_t n, size_t sz, size_t first)
{
	size_t ncap, bytes;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first ? first : 1;
	while (ncap <= n) /* n may be far past the end (a table's groups made afresh) */
		if (__builtin_mul_overflow(ncap, (size_t)2, &ncap))
			return -ENOMEM;
	if (__builtin_mul_overflow(ncap, sz, &bytes))
		return -ENOMEM;
	p = realloc(*arr, bytes);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

#endif
