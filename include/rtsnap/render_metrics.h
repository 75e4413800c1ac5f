/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_metrics.h - Prometheus text exposition. The per-snapshot part is rendered once by
 * snapshot_finish(); the time-dependent part per scrape.
 */
#ifndef RTSNAP_RENDER_METRICS_H
#define RTSNAP_RENDER_METRICS_H

#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

/* Fill s->metrics_view. 0 or -ENOMEM. */
int render_metrics_build(struct snapshot *s) __attribute__((warn_unused_result));
void render_metrics_free(struct metrics_view *v);

#endif
