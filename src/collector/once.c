// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * once.c - `rtsnapd --once` (once.h). IPv6 through the collector's own first dump and a
 * composed snapshot (collector_collect_once()); IPv4 through dump4 and a snapshot of family
 * AF_INET made of its records: both printed through the views the daemon serves from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rtsnap/collector.h"
#include "rtsnap/compose.h"
#include "rtsnap/dump4.h"
#include "rtsnap/io.h"
#include "rtsnap/log.h"
#include "rtsnap/names.h"
#include "rtsnap/once.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

int once_family_parse(const char *s, unsigned int *out)
{
	if (!strcmp(s, "inet"))
		*out = ONCE_INET;
	else if (!strcmp(s, "inet6"))
		*out = ONCE_INET6;
	else if (!strcmp(s, "all"))
		*out = ONCE_ALL;
	else
		return -EINVAL;
	return 0;
}

/*
 * The IPv4 dump d as a sealed snapshot of family AF_INET: its interfaces, nexthop objects and
 * names, its routes table by table in the kernel's order, cut into segments and rendered as
 * the daemon's IPv4 snapshots are. *out set only on success.
 */
static int snapshot4(const struct dump4 *d, struct snapshot **out)
{
	struct snapshot *s = NULL;
	int ret = snapshot_new(NULL, &s);

	if (ret)
		return ret;
	snapshot_set_family(s, AF_INET, d->has_main);
	for (size_t i = 0; !ret && i < d->ctx.nlinks; i++)
		ret = snapshot_add_link(s, &d->ctx.links[i]);
	for (size_t i = 0; !ret && i < d->ctx.nnhobjs; i++)
		ret = snapshot_add_nhobj(s, &d->ctx.nhobjs[i]);
	for (size_t t = 0; !ret && t < fib4_ntables(d->fib); t++) {
		const struct route *const *v;
		size_t n;

		fib4_table(d->fib, t, &v, &n);
		for (size_t i = 0; !ret && i < n; i++)
			ret = snapshot_add_route(s, v[i], v[i]->nhs, v[i]->nh_count, v[i]->metrics);
	}
	if (!ret) {
		snapshot_set_names(s, names_get(d->ctx.names));
		ret = snapshot_finish(s);
	}
	if (ret) {
		snapshot_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

/*
 * The text of s: its proc text, or its JSON objects as one part of an array that several
 * snapshots fill: first opens the array, last closes it; *any says whether an object came
 * before (and is set when s has one).
 */
static int write_snap(int fd, const struct snapshot *s, int json, int first, int last, int *any)
{
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 };
	int n, ret = 0;

	if (!json)
		return render_proc_write(s, fd);
	n = render_json_all(s, snapshot_now_ms(), &segs, &dyn);
	if (n < 0)
		return n;
	/* segs: "[", the objects (none: n == 2), "]\n" */
	if (!first && *any && n > 2)
		ret = io_write_all(fd, ",", 1);
	if (!ret)
		ret = render_write_segs(fd, segs + !first, n - !first - !last);
	*any |= n > 2;
	free(segs);
	strbuf_free(&dyn);
	return ret;
}

int once_write(int fd, unsigned int families, int json)
{
	struct dump4 d4 = { 0 };
	struct snapshot *s4 = NULL, *s6 = NULL;
	int ret = 0, any = 0;

	/* both dumps first: the two texts are of about one moment, and nothing is half written
	 * when a dump fails */
	if (families & ONCE_INET) {
		ret = dump4_take(&d4, NULL);
		if (ret)
			log_err("cannot read the IPv4 routing tables: %s", strerror(-ret));
		else if (!d4.trusted)
			log_info(
			    "the IPv4 tables changed during each of %u dumps; printing the last",
			    d4.tries);
		if (!ret) {
			ret = snapshot4(&d4, &s4);
			if (ret)
				log_err("cannot compose the IPv4 snapshot: %s", strerror(-ret));
		}
	}
	if (!ret && (families & ONCE_INET6)) {
		ret = collector_collect_once(&s6);
		if (ret)
			log_err("cannot read the IPv6 routing tables: %s", strerror(-ret));
	}
	if (ret)
		goto out;
	if (s4)
		ret = write_snap(fd, s4, json, 1, !s6, &any);
	if (!ret && s6)
		ret = write_snap(fd, s6, json, !s4, 1, &any);
	if (ret)
		log_err("cannot write the output: %s", strerror(-ret));
out:
	dump4_release(&d4);
	snapshot_free(s4);
	snapshot_free(s6);
	return ret;
}
