/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * full4.h - the IPv4 collector's full dump: links, nexthop objects (both families': IPv4
 * routes may use IPv6 ones), IPv4 addresses and IPv4 routes, in that order, into a new IPv4
 * mirror (mirror4.h), so that every route's device and object is known before the route and
 * the silent rules know each device's flags and addresses. The caller's thread and
 * connection; a strict socket of its own for the main table's probe.
 */
#ifndef RTSNAP_FULL4_H
#define RTSNAP_FULL4_H

#include "rtsnap/mirror4.h"
#include "rtsnap/nlconn.h"

/*
 * One full dump on conn into a new mirror4 (*out, set only on success). gaps: record where
 * the route dump may have skipped routes (mirror_load_gap()). abort: stop with -ECANCELED
 * once it is set (NULL: never). *intr set when the kernel flagged a dump inconsistent
 * (NLM_F_DUMP_INTR: complete but not one state; the caller must not trust it). The main
 * table is added when it exists without routes (probed: /proc/net/route prints its header
 * while main exists). 0 or a negative errno.
 */
int full4_dump(struct nlconn *conn, int gaps, const int *abort, int *intr, struct mirror4 **out)
    __attribute__((warn_unused_result));

#endif
