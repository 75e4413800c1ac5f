/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reserve.h - a reserve of address space held for recovering from running out of memory.
 *
 * Under an address-space limit (RLIMIT_AS, `ulimit -v`) or strict overcommit, a process that
 * ran out cannot free memory without first allocating a little: its collector needs a few
 * megabytes to dump a (now small) table and publish it, and only that publication frees the
 * snapshot that fills the memory. The reserve is an untouched anonymous mapping (address
 * space and commit charge, no resident memory) taken at start; a collector that runs out
 * gives it back before it tries again, and takes it again once it recovered.
 *
 * Any thread; the reserve is the process's (one for every collector).
 */
#ifndef RTSNAP_RESERVE_H
#define RTSNAP_RESERVE_H

#include <stddef.h>

#define RESERVE_BYTES (8u << 20)

/* Take the reserve unless it is held. 0, or -ENOMEM (try again later). */
int reserve_take(void);
/* Give it back (nothing if it is not held). */
void reserve_give_back(void);
/* Whether it is held. */
int reserve_held(void);

#endif
