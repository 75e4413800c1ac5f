// SPDX-License-Identifier: GPL-2.0-or-later
/* routectx.c - interfaces, nexthop objects and names a route is rendered with (routectx.h). */
#include <errno.h>
#include <stdlib.h>

#include "rtsnap/array.h"
#include "rtsnap/names.h"
#include "rtsnap/routectx.h"

int route_ctx_add_link(struct route_ctx *c, const struct route_link *l)
{
	if (array_grow((void **)&c->links, &c->links_cap, c->nlinks, sizeof(*c->links), 64))
		return -ENOMEM;
	c->links[c->nlinks++] = *l;
	return 0;
}

int route_ctx_add_nhobj(struct route_ctx *c, const struct route_nhobj *o)
{
	if (array_grow((void **)&c->nhobjs, &c->nhobjs_cap, c->nnhobjs, sizeof(*c->nhobjs), 64))
		return -ENOMEM;
	c->nhobjs[c->nnhobjs++] = *o;
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct route_link *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

static int cmp_nhobj(const void *a, const void *b)
{
	const struct route_nhobj *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void route_ctx_sort(struct route_ctx *c)
{
	if (c->nlinks)
		qsort(c->links, c->nlinks, sizeof(*c->links), cmp_link);
	if (c->nnhobjs)
		qsort(c->nhobjs, c->nnhobjs, sizeof(*c->nhobjs), cmp_nhobj);
}

void route_ctx_release(struct route_ctx *c)
{
	free(c->links);
	free(c->nhobjs);
	names_free(c->names);
	c->links = NULL;
	c->nhobjs = NULL;
	c->names = NULL;
	c->nlinks = c->nnhobjs = c->links_cap = c->nhobjs_cap = 0;
}

const struct route_link *route_ctx_link(const struct route_ctx *c, uint32_t ifindex)
{
	struct route_link key = { .ifindex = ifindex };

	if (!c->nlinks)
		return NULL;
	return bsearch(&key, c->links, c->nlinks, sizeof(*c->links), cmp_link);
}

const char *route_ctx_link_name(const struct route_ctx *c, uint32_t ifindex)
{
	const struct route_link *l = route_ctx_link(c, ifindex);

	return l ? l->name : "";
}

const struct route_nhobj *route_ctx_nhobj(const struct route_ctx *c, uint32_t id)
{
	struct route_nhobj key = { .id = id };

	if (!c->nnhobjs)
		return NULL;
	return bsearch(&key, c->nhobjs, c->nnhobjs, sizeof(*c->nhobjs), cmp_nhobj);
}
