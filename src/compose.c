// SPDX-License-Identifier: GPL-2.0-or-later
/* compose.c - seal a snapshot and build its views (compose.h). */
#include "rtsnap/compose.h"
#include "rtsnap/index.h"
#include "rtsnap/render_metrics.h"

static void free_views(struct snapshot *s)
{
	index_free(s->lookup);
	render_metrics_free(s->metrics_view);
	s->lookup = NULL;
	s->metrics_view = NULL;
}

int snapshot_finish(struct snapshot *s)
{
	int ret = snapshot_seal(s);

	s->free_views = free_views;
	if (!ret)
		ret = index_build(s);
	if (ret)
		return ret;
	/* the index; the metrics text is built by the first scrape (render_metrics.c), a few
	 * kilobytes unless --metrics-routes is on */
	s->views_bytes = index_bytes(s->lookup);
	return 0;
}
