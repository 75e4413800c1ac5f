// SPDX-License-Identifier: GPL-2.0-or-later
/* reserve.c - the address space held for recovering from running out of memory (reserve.h). */
#include <errno.h>
#include <sys/mman.h>

#include "rtsnap/reserve.h"

static void *s_reserve; /* the mapping, or NULL; swapped atomically */

int reserve_take(void)
{
	void *p;

	if (__atomic_load_n(&s_reserve, __ATOMIC_ACQUIRE))
		return 0;
	/* never touched: it costs address space and commit charge, not resident memory */
	p = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	{
		void *none = NULL;

		if (!__atomic_compare_exchange_n(&s_reserve, &none, p, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			munmap(p, RESERVE_BYTES); /* another thread took it meanwhile */
	}
	return 0;
}

void reserve_give_back(void)
{
	void *p = __atomic_exchange_n(&s_reserve, NULL, __ATOMIC_ACQ_REL);

	if (p)
		munmap(p, RESERVE_BYTES);
}

int reserve_held(void)
{
	return __atomic_load_n(&s_reserve, __ATOMIC_ACQUIRE) != NULL;
}
