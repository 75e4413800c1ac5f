// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * route.c - the parts of a route record that live outside it: its nexthops' encapsulations.
 *
 * A record's encapsulation blobs belong to whoever owns the record (the mirror: one block per
 * record; a snapshot: its arena). These helpers size and copy them for any owner, so the
 * owners only decide where the bytes go.
 */
#include <string.h>

#include "rtsnap/route.h"

int route_encap_equal(const struct route_encap *a, const struct route_encap *b)
{
	if (!a || !b)
		return a == b;
	return a->type == b->type && a->len == b->len && !memcmp(a->attrs, b->attrs, a->len);
}

size_t route_encaps_size(const struct route *r, const struct route_nh *nhs)
{
	size_t n = 0;

	if (r->nh_count == 1)
		n = route_encap_size(r->nh.encap);
	else if (r->nh_count > 1 && nhs)
		for (unsigned int i = 0; i < r->nh_count; i++)
			n += route_encap_size(nhs[i].encap);
	return n;
}

/* Copy *e to *p (advanced past it) and point *e at the copy. */
static void copy_one(const struct route_encap **e, unsigned char **p)
{
	size_t n = route_encap_size(*e);

	if (!n)
		return;
	memcpy(*p, *e, sizeof(**e) + (*e)->len);
	*e = (const struct route_encap *)*p;
	*p += n;
}

void route_encaps_copy(struct route *r, struct route_nh *nhs, void *dst)
{
	unsigned char *p = dst;

	if (r->nh_count != 1)
		r->nh.encap = NULL; /* unused: never leave it pointing at someone else's bytes */
	if (r->nh_count == 1)
		copy_one(&r->nh.encap, &p);
	else if (r->nh_count > 1 && nhs)
		for (unsigned int i = 0; i < r->nh_count; i++)
			copy_one(&nhs[i].encap, &p);
}
