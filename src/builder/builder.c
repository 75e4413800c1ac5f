// SPDX-License-Identifier: GPL-2.0-or-later
/* builder.c - compose a snapshot of a mirror (builder.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "rtsnap/builder.h"
#include "rtsnap/compose.h"
#include "rtsnap/mirror.h"
#include "rtsnap/mirror_edit.h"
#include "rtsnap/names.h"
#include "rtsnap/snapshot.h"

struct builder {
	struct names_cache *names;
};

int builder_new(const char *names_dir, struct builder **out)
{
	struct builder *b = calloc(1, sizeof(*b));
	int ret;

	if (!b)
		return -ENOMEM;
	ret = names_cache_new(names_dir, &b->names);
	if (ret) {
		free(b);
		return ret;
	}
	*out = b;
	return 0;
}

void builder_free(struct builder *b)
{
	if (!b)
		return;
	names_cache_free(b->names);
	free(b);
}

int builder_compose(struct builder *b, struct mirror *m, struct snapshot_chain *c,
		    struct snapshot **out)
{
	struct snapshot *s = NULL;
	struct names *names = NULL;
	int ret = snapshot_new(c, &s);

	if (!ret)
		ret = mirror_add_context(m, s);
	if (!ret)
		ret = names_cache_get(b->names, &names);
	if (!ret)
		snapshot_set_names(s, names);
	if (!ret)
		ret = snapshot_prepare(s);
	if (!ret)
		ret = mirror_add_segments(m, s);
	if (!ret && mirror_family(m) == AF_INET) {
		/* /proc/net/route has its header while main exists (kernel-facts.md 12.3) */
		snapshot_set_family(s, AF_INET, mirror_has_table(m, RT_TABLE_MAIN));
	}
	if (!ret)
		ret = snapshot_finish(s);
	if (ret) {
		snapshot_free(s);
		return ret;
	}
	mirror_published(m, s);
	*out = s;
	return 0;
}

unsigned long builder_names_loads(const struct builder *b)
{
	return names_cache_loads(b->names);
}
