/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compose.h - a publishable snapshot: sealed (snapshot.h), with the views that are built once
 * per snapshot on top of it (the lookup index, index.h; the /metrics families,
 * render_metrics.h). It sits above the snapshot and its views, so that neither depends on the
 * other's builder.
 */
#ifndef RTSNAP_COMPOSE_H
#define RTSNAP_COMPOSE_H

#include "rtsnap/snapshot.h"

/*
 * Collector thread. Seal s and build its views. After this returns 0 the snapshot is
 * immutable and ready for snapshot_publish(). On error it is only fit for snapshot_free().
 */
int snapshot_finish(struct snapshot *s) __attribute__((warn_unused_result));

#endif
