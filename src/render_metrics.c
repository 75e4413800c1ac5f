// SPDX-License-Identifier: GPL-2.0-or-later
/* render_metrics.c - Prometheus exposition. Not built yet (metrics issue). */
#include "rtsnap/render_metrics.h"

int render_metrics_build(struct snapshot *s)
{
	s->metrics_view = NULL;
	return 0;
}

void render_metrics_free(struct metrics_view *v)
{
	(void)v;
}
