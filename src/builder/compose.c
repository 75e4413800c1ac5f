// SPDX-License-Identifier: GPL-2.0-or-later
/* compose.c - seal a snapshot and build its views (compose.h). */
#include "rtsnap/compose.h"
#include "rtsnap/index.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/watch.h"

static void free_views(struct snapshot_views *v)
{
	index_free(v->lookup);
	render_metrics_free(v->metrics);
	watch_view_free(v->watch);
	v->lookup = NULL;
	v->metrics = NULL;
	v->watch = NULL;
}

int snapshot_finish(struct snapshot *s)
{
	int ret = snapshot_seal(s);

	snapshot_views(s)->free = free_views;
	if (!ret)
		ret = index_build(s);
	if (ret)
		return ret;
	/* the index; the metrics text is built by the first scrape (render_metrics.c), a few
	 * kilobytes unless --metrics-routes is on */
	snapshot_views(s)->bytes = index_bytes(snapshot_views(s)->lookup);
	return 0;
}
