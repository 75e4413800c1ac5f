/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * index.h - per-snapshot lookup indexes (longest-prefix match, prefix/covers queries).
 * Built once by snapshot_finish() on the collector thread; read-only afterwards.
 */
#ifndef RTSNAP_INDEX_H
#define RTSNAP_INDEX_H

#include "rtsnap/snapshot.h"

/* Fill s->lookup. 0 or -ENOMEM. */
int index_build(struct snapshot *s) __attribute__((warn_unused_result));
void index_free(struct lookup_index *ix);

#endif
