// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mirror4.c - the IPv4 mirror (mirror4.h): fib4.c's rules applied to a mirror's chunks.
 *
 * A fib alias group is a run of equal keys (order4_key_of(), mirror_edit.h), so placement is
 * an insert at the run's start (prepend) or end (add, append), a replace is a set of the run's
 * first record (or of the alias itself when a nexthop object's update re-announces it), a
 * delete removes the alias the message names. The silent changes walk every record
 * (mirror_edit_all()) and change only those the kernel changed, so the chunks of the others
 * keep their published segments. Each rule names the kernel function it follows, as in
 * fib4.c; docs/kernel-facts.md section 12 has what was seen.
 *
 * Ownership: x owns its mirror and the small arrays of links, addresses and objects (tens to
 * thousands: searched linearly, as in fib4.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>

#include "rtsnap/fib4.h"
#include "rtsnap/mirror4.h"
#include "rtsnap/mirror_edit.h"
#include "rtsnap/route4.h"

struct link4 {
	uint32_t ifindex, flags;
};

struct addr4 {
	uint32_t ifindex;
	uint8_t addr[4], plen;
};

struct obj4 {
	struct route_nhobj o;
	uint32_t flags;
	unsigned int nmemb;
	struct route_nhmember *memb;
};

struct mirror4 {
	struct mirror *m;
	struct link4 *links;
	size_t nlinks;
	struct addr4 *addrs;
	size_t naddrs;
	struct obj4 *objs;
	size_t nobjs;
	struct mirror4_stats st;
};

int mirror4_new(struct mirror4 **out)
{
	struct mirror4 *x = calloc(1, sizeof(*x));
	int ret;

	if (!x)
		return -ENOMEM;
	ret = mirror_new4(&x->m);
	if (ret) {
		free(x);
		return ret;
	}
	*out = x;
	return 0;
}

void mirror4_free(struct mirror4 *x)
{
	if (!x)
		return;
	mirror_free(x->m);
	for (size_t i = 0; i < x->nobjs; i++)
		free(x->objs[i].memb);
	free(x->objs);
	free(x->links);
	free(x->addrs);
	free(x);
}

struct mirror *mirror4_mirror(struct mirror4 *x)
{
	return x->m;
}

struct mirror *mirror4_take_state(struct mirror4 *x, struct mirror4 *from)
{
	struct mirror4 keep;
	struct mirror *m;

	if (!from)
		return NULL;
	m = from->m;
	keep = *x;
	x->links = from->links, x->nlinks = from->nlinks;
	x->addrs = from->addrs, x->naddrs = from->naddrs;
	x->objs = from->objs, x->nobjs = from->nobjs;
	from->links = keep.links, from->nlinks = keep.nlinks;
	from->addrs = keep.addrs, from->naddrs = keep.naddrs;
	from->objs = keep.objs, from->nobjs = keep.nobjs;
	from->m = NULL;
	mirror4_free(from); /* x's previous state */
	return m;
}

void mirror4_get_stats(const struct mirror4 *x, struct mirror4_stats *out)
{
	*out = x->st;
}

/* pr's route with its hops and metrics reachable through it, as the mirror's records are. */
static struct route view_of(const struct nlparse_route *pr)
{
	struct route r = pr->r;

	r.nhs = r.nh_count > 1 ? (struct route_nh *)pr->nhs : NULL;
	r.metrics = pr->has_metrics ? &pr->m : NULL;
	return r;
}

/* ---- routes (net/ipv4/fib_trie.c) ---- */

int mirror4_dump_route(struct mirror4 *x, const struct nlparse_route *pr)
{
	return mirror_load_route(x->m, pr);
}

/*
 * fib_table_insert's placement, from the flags it announces with: NLM_F_REPLACE takes the
 * place of the group's first alias (or of the alias itself when a nexthop object's update
 * re-announces it: fib_info_notify_update), NLM_F_APPEND goes last in the group, NLM_F_CREATE
 * without NLM_F_EXCL (prepend) first, NLM_F_EXCL starts a group; a message without
 * NLM_F_CREATE updates the alias it names (offload flags).
 */
static int route_new(struct mirror4 *x, uint16_t flags, const struct nlparse_route *pr,
		     struct mirror_delta *d)
{
	struct route r = view_of(pr), tmp;
	const struct route_metrics *met = r.metrics;
	struct mirror_run run;
	size_t at;
	int ret = mirror_run_find(x->m, &r, 1, &run);

	if (ret)
		return ret;
	at = run.n;
	if (flags & NLM_F_REPLACE) {
		size_t k = 0;

		for (size_t i = 0; r.nhid && i < run.n; i++) {
			if (fib4_same_alias(mirror_run_get(x->m, &run, i, &tmp), &r)) {
				k = i;
				break;
			}
		}
		if (run.n) {
			x->st.replace_in_place += k != 0;
			return mirror_run_set(x->m, &run, k, &r, pr->nhs, met, d);
		}
	} else if (!(flags & NLM_F_CREATE)) {
		for (size_t i = 0; i < run.n; i++)
			if (fib4_same_alias(mirror_run_get(x->m, &run, i, &tmp), &r))
				return mirror_run_set(x->m, &run, i, &r, pr->nhs, met, d);
	} else if (!(flags & NLM_F_APPEND) && !(flags & NLM_F_EXCL)) {
		at = 0; /* prepend */
	}
	return mirror_run_insert(x->m, &run, at, &r, pr->nhs, met, d);
}

/* fib_table_delete: the alias the message names, whole. */
static int route_del(struct mirror4 *x, const struct nlparse_route *pr, struct mirror_delta *d)
{
	struct route r = view_of(pr), tmp;
	struct mirror_run run;
	int ret = mirror_run_find(x->m, &r, 0, &run);

	if (ret)
		return ret;
	for (size_t i = 0; i < run.n; i++)
		if (fib4_same_alias(mirror_run_get(x->m, &run, i, &tmp), &r))
			return mirror_run_remove(x->m, &run, i, d);
	x->st.unknown_deletes++;
	d->unknown++;
	return 0;
}

int mirror4_route(struct mirror4 *x, int del, uint16_t nlflags, const struct nlparse_route *pr,
		  struct mirror_delta *d)
{
	return del ? route_del(x, pr, d) : route_new(x, nlflags, pr, d);
}

/* ---- silent changes ---- */

static struct link4 *link_find(struct mirror4 *x, uint32_t ifindex)
{
	for (size_t i = 0; i < x->nlinks; i++)
		if (x->links[i].ifindex == ifindex)
			return &x->links[i];
	return NULL;
}

static int link_up(struct mirror4 *x, uint32_t ifindex)
{
	struct link4 *l = link_find(x, ifindex);

	return l && (l->flags & IFF_UP);
}

static int has_carrier(uint32_t flags)
{
	return (flags & (IFF_RUNNING | IFF_LOWER_UP)) != 0;
}

/* A writable copy of r into *out and hops (its hops, when more than one). */
static void copy_out(const struct route *r, struct route *out, struct route_nh *hops)
{
	*out = *r;
	if (r->nh_count > 1)
		memcpy(hops, r->nhs, r->nh_count * sizeof(*hops));
}

static struct route_nh *hop_out(struct route *out, struct route_nh *hops, unsigned int i)
{
	return out->nh_count > 1 ? &hops[i] : &out->nh;
}

/* After hop flags changed: a single path's rtm_flags are its hop's (fib_dump_info). */
static void sync_rtm_flags(struct route *r, uint32_t fi_flags_set, uint32_t fi_flags_clear)
{
	if (r->nh_count == 1 && !r->mpath_one)
		r->rtm_flags = (r->rtm_flags & ~0xffu) | r->nh.flags;
	else
		r->rtm_flags = (r->rtm_flags | fi_flags_set) & ~fi_flags_clear;
}

static int same_flags(const struct route *a, const struct route *b, const struct route_nh *hops)
{
	if (a->rtm_flags != b->rtm_flags)
		return 0;
	for (unsigned int k = 0; k < a->nh_count; k++)
		if (route_nh(a, k)->flags != (b->nh_count > 1 ? hops[k].flags : b->nh.flags))
			return 0;
	return 1;
}

enum { EV_CHANGE, EV_DOWN, EV_UNREGISTER };

struct down_arg {
	struct mirror4 *x;
	uint32_t dev;
	int ev, force;
};

/*
 * fib_sync_down_dev, then fib_flush (fib_table_flush): hops on dev get linkdown (CHANGE) or
 * dead and linkdown (DOWN, UNREGISTER), not those of scope host routes unless force; a route
 * whose every hop is now dead is deleted, one with a hop on an unregistered device too;
 * reject routes are never flushed. Routes over nexthop objects are nexthop.c's business.
 */
static int down_one(void *arg, const struct route *r, struct route *out, struct route_nh *hops)
{
	struct down_arg *a = arg;
	uint8_t set = a->ev == EV_CHANGE ? RTNH_F_LINKDOWN : RTNH_F_LINKDOWN | RTNH_F_DEAD;
	unsigned int dead = 0, on_dev = 0, n = r->nh_count;

	for (unsigned int k = 0; k < n && !r->nhid; k++)
		on_dev += route_nh(r, k)->ifindex == a->dev;
	if (!on_dev)
		return MIRROR_EDIT_KEEP;
	copy_out(r, out, hops);
	for (unsigned int k = 0; k < n; k++) {
		struct route_nh *nh = hop_out(out, hops, k);

		if (nh->flags & RTNH_F_DEAD) {
			dead++;
		} else if (nh->ifindex == a->dev && (a->force || r->scope != RT_SCOPE_HOST)) {
			nh->flags |= set;
			dead++;
		}
		if (a->ev == EV_UNREGISTER && nh->ifindex == a->dev) {
			dead = n;
			break;
		}
	}
	if (dead == n && a->ev != EV_CHANGE && r->type != RTN_BLACKHOLE &&
	    r->type != RTN_UNREACHABLE && r->type != RTN_PROHIBIT && r->type != RTN_THROW) {
		a->x->st.silent_removals++;
		return MIRROR_EDIT_REMOVE;
	}
	sync_rtm_flags(out, dead == n ? set : 0, 0);
	if (same_flags(r, out, hops))
		return MIRROR_EDIT_KEEP;
	a->x->st.silent_changes++;
	return MIRROR_EDIT_SET;
}

static int sync_down(struct mirror4 *x, uint32_t dev, int ev, int force, struct mirror_delta *d)
{
	struct down_arg a = { x, dev, ev, force };

	return mirror_edit_all(x->m, down_one, &a, d);
}

struct up_arg {
	struct mirror4 *x;
	uint32_t dev;
	uint8_t nh_flags;
};

/* fib_sync_up: hops on dev lose nh_flags (dead also clears linkdown when the carrier is up),
 * a route with a live hop loses them too. */
static int up_one(void *arg, const struct route *r, struct route *out, struct route_nh *hops)
{
	struct up_arg *a = arg;
	unsigned int alive = 0, on_dev = 0;

	for (unsigned int k = 0; k < r->nh_count && !r->nhid; k++)
		on_dev += route_nh(r, k)->ifindex == a->dev;
	if (!on_dev)
		return MIRROR_EDIT_KEEP;
	copy_out(r, out, hops);
	for (unsigned int k = 0; k < r->nh_count; k++) {
		struct route_nh *nh = hop_out(out, hops, k);

		if (!(nh->flags & a->nh_flags)) {
			alive++;
			continue;
		}
		if (!nh->ifindex || !link_up(a->x, nh->ifindex) || nh->ifindex != a->dev)
			continue;
		alive++;
		nh->flags &= (uint8_t)~a->nh_flags;
	}
	if (alive)
		sync_rtm_flags(out, 0, a->nh_flags);
	if (same_flags(r, out, hops))
		return MIRROR_EDIT_KEEP;
	a->x->st.silent_changes++;
	return MIRROR_EDIT_SET;
}

static int sync_up(struct mirror4 *x, uint32_t dev, uint8_t nh_flags, struct mirror_delta *d)
{
	struct link4 *l = link_find(x, dev);
	struct up_arg a = { x, dev, nh_flags };

	if (!l || !(l->flags & IFF_UP))
		return 0;
	if ((nh_flags & RTNH_F_DEAD) && has_carrier(l->flags))
		a.nh_flags |= RTNH_F_LINKDOWN;
	return mirror_edit_all(x->m, up_one, &a, d);
}

/* ---- nexthop objects (net/ipv4/nexthop.c) ---- */

static struct obj4 *obj_find(struct mirror4 *x, uint32_t id)
{
	for (size_t i = 0; i < x->nobjs; i++)
		if (x->objs[i].o.id == id)
			return &x->objs[i];
	return NULL;
}

/* The hop a member object gives a route (fib_add_nexthop / fib_nexthop_info). */
static void hop_of(const struct obj4 *o, uint16_t weight, struct route_nh *nh)
{
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = o->o.ifindex;
	nh->weight = (uint8_t)weight;
	nh->flags = (uint8_t)o->flags;
	if (o->o.has_gw) {
		memcpy(nh->gw, o->o.gw, 16);
		nh->has_gw = o->o.family == 10 /* AF_INET6 */ ? ROUTE_GW_VIA6 : 1;
	}
}

#define GROUP_HOPS 64 /* routes over larger groups are left to a resync (as fib4.c) */

struct group_arg {
	struct mirror4 *x;
	uint32_t id;
	unsigned int n;
	struct route_nh hops[GROUP_HOPS];
};

/* Routes over group a->id show its members now (compat mode 1), a lone member as a single
 * path. */
static int group_one(void *arg, const struct route *r, struct route *out, struct route_nh *hops)
{
	struct group_arg *a = arg;

	if (r->nhid != a->id || !a->n)
		return MIRROR_EDIT_KEEP;
	*out = *r;
	out->nh_count = (uint16_t)a->n;
	out->mpath_one = 0;
	if (a->n == 1) {
		out->nh = a->hops[0];
		out->nh.weight = 1;
		out->rtm_flags = (out->rtm_flags & ~0xffu) | out->nh.flags;
	} else {
		memset(&out->nh, 0, sizeof(out->nh));
		memcpy(hops, a->hops, a->n * sizeof(*hops));
	}
	a->x->st.silent_changes++;
	return MIRROR_EDIT_SET;
}

static int routes_over_group(struct mirror4 *x, const struct obj4 *g, struct mirror_delta *d)
{
	struct group_arg *a;
	int ret;

	if (g->nmemb > GROUP_HOPS)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->x = x;
	a->id = g->o.id;
	for (unsigned int i = 0; i < g->nmemb; i++) {
		const struct obj4 *o = obj_find(x, g->memb[i].id);

		if (o)
			hop_of(o, g->memb[i].weight, &a->hops[a->n++]);
	}
	ret = mirror_edit_all(x->m, group_one, a, d);
	free(a);
	return ret;
}

/* remove_nexthop: the object goes with its routes (silently for IPv4); groups holding it lose
 * it (an empty group goes too) and their routes show what is left. */
static int obj_remove(struct mirror4 *x, uint32_t id, struct mirror_delta *d)
{
	struct obj4 *o = obj_find(x, id);
	uint32_t removed0 = d->removed;
	int ret = 0;

	if (!o)
		return 0;
	free(o->memb);
	*o = x->objs[--x->nobjs];
	mirror_del_nhobj(x->m, id, d);
	x->st.silent_removals += d->removed - removed0;
	for (size_t i = 0; i < x->nobjs && !ret; i++) {
		struct obj4 *g = &x->objs[i];
		unsigned int k = 0;

		for (unsigned int j = 0; j < g->nmemb; j++)
			if (g->memb[j].id != id)
				g->memb[k++] = g->memb[j];
		if (k == g->nmemb)
			continue;
		g->nmemb = k;
		if (!k) {
			ret = obj_remove(x, g->o.id, d);
			i = (size_t)-1; /* the array changed: start again */
			continue;
		}
		g->o.first = g->memb[0].id; /* what the object shows first */
		ret = mirror_set_nhobj(x->m, &g->o);
		if (ret >= 0)
			ret = routes_over_group(x, g, d);
	}
	return ret < 0 ? ret : 0;
}

/* nexthop_flush_dev: the objects on dev go (no RTM_DELNEXTHOP). */
static int obj_flush_dev(struct mirror4 *x, uint32_t dev, struct mirror_delta *d)
{
	for (size_t i = 0; i < x->nobjs;) {
		if (!x->objs[i].o.is_group && !x->objs[i].o.blackhole &&
		    x->objs[i].o.ifindex == dev) {
			int ret = obj_remove(x, x->objs[i].o.id, d);

			if (ret)
				return ret;
			i = 0;
			continue;
		}
		i++;
	}
	return 0;
}

int mirror4_nexthop(struct mirror4 *x, const struct nlparse_nh4 *nh, int del,
		    struct mirror_delta *d)
{
	struct obj4 *o;
	int ret;

	if (del)
		return obj_remove(x, nh->o.id, d);
	o = obj_find(x, nh->o.id);
	if (!o) {
		o = realloc(x->objs, (x->nobjs + 1) * sizeof(*o));
		if (!o)
			return -ENOMEM;
		x->objs = o;
		o = &x->objs[x->nobjs++];
		memset(o, 0, sizeof(*o));
	}
	free(o->memb);
	o->memb = NULL;
	o->o = nh->o;
	o->flags = nh->flags;
	o->nmemb = nh->nmemb;
	if (nh->nmemb) {
		o->memb = malloc(nh->nmemb * sizeof(*o->memb));
		if (!o->memb) {
			o->nmemb = 0;
			return -ENOMEM;
		}
		memcpy(o->memb, nh->memb, nh->nmemb * sizeof(*o->memb));
	}
	ret = mirror_set_nhobj(x->m, &nh->o);
	return ret < 0 ? ret : 0;
}

/* ---- links and addresses (net/ipv4/fib_frontend.c) ---- */

int mirror4_link(struct mirror4 *x, const struct route_link *in, struct mirror_delta *d)
{
	struct link4 *l = link_find(x, in->ifindex);
	uint32_t old, flags = in->flags;
	unsigned int ev;
	int ret = mirror_set_link(x->m, in);

	if (ret < 0)
		return ret;
	if (!l) {
		l = realloc(x->links, (x->nlinks + 1) * sizeof(*l));
		if (!l)
			return -ENOMEM;
		x->links = l;
		l = &x->links[x->nlinks++];
		l->ifindex = in->ifindex;
		l->flags = flags;
		return 0;
	}
	old = l->flags;
	l->flags = flags;
	ev = fib4_link_events(old, flags);
	if (ev & FIB4_LINK_DOWN) {
		ret = sync_down(x, in->ifindex, EV_DOWN, 0, d);
		return ret ? ret : obj_flush_dev(x, in->ifindex, d);
	}
	if (ev & FIB4_LINK_UP) {
		ret = sync_up(x, in->ifindex, RTNH_F_DEAD, d);
		if (ret)
			return ret;
	}
	if (ev & FIB4_LINK_CARRIER_ON)
		return sync_up(x, in->ifindex, RTNH_F_LINKDOWN, d);
	if (ev & FIB4_LINK_CARRIER_OFF) {
		ret = sync_down(x, in->ifindex, EV_CHANGE, 0, d);
		return ret ? ret : obj_flush_dev(x, in->ifindex, d);
	}
	return 0;
}

int mirror4_link_del(struct mirror4 *x, uint32_t ifindex, struct mirror_delta *d)
{
	struct link4 *l = link_find(x, ifindex);
	int ret = sync_down(x, ifindex, EV_UNREGISTER, 1, d); /* NETDEV_UNREGISTER */

	if (!ret)
		ret = obj_flush_dev(x, ifindex, d);
	if (l)
		*l = x->links[--x->nlinks];
	for (size_t i = 0; i < x->naddrs;)
		if (x->addrs[i].ifindex == ifindex)
			x->addrs[i] = x->addrs[--x->naddrs];
		else
			i++;
	/* the link itself (no route is left on it) */
	mirror_del_link(x->m, ifindex, d);
	return ret;
}

int mirror4_addr(struct mirror4 *x, uint32_t ifindex, const uint8_t addr[4], uint8_t plen, int del,
		 int dump, struct mirror_delta *d)
{
	size_t i, left = 0;

	for (i = 0; i < x->naddrs; i++)
		if (x->addrs[i].ifindex == ifindex && !memcmp(x->addrs[i].addr, addr, 4) &&
		    x->addrs[i].plen == plen)
			break;
	if (!del) {
		if (i == x->naddrs) {
			struct addr4 *a = realloc(x->addrs, (x->naddrs + 1) * sizeof(*a));

			if (!a)
				return -ENOMEM;
			x->addrs = a;
			a[x->naddrs].ifindex = ifindex;
			memcpy(a[x->naddrs].addr, addr, 4);
			a[x->naddrs].plen = plen;
			x->naddrs++;
		}
		/* fib_inetaddr_event NETDEV_UP */
		return dump ? 0 : sync_up(x, ifindex, RTNH_F_DEAD, d);
	}
	if (i < x->naddrs)
		x->addrs[i] = x->addrs[--x->naddrs];
	for (i = 0; i < x->naddrs; i++)
		left += x->addrs[i].ifindex == ifindex;
	/* fib_inetaddr_event NETDEV_DOWN: the last address gone disables IP on the device */
	return left ? 0 : sync_down(x, ifindex, EV_DOWN, 1, d);
}
