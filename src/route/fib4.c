// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fib4.c - the IPv4 tables changed by the kernel's rules (fib4.h). Every rule names the kernel
 * function it follows; docs/kernel-facts.md section 12 has what was seen.
 *
 * Ownership: each route is one heap entry (the record, its hops, metrics and blobs); a table
 * is an array of pointers to the records, in the kernel's order. Links, addresses and
 * nexthop objects are small arrays searched linearly (tens to thousands of them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>

#include "rtsnap/fib4.h"
#include "rtsnap/order.h"
#include "rtsnap/order4.h"
#include "rtsnap/route4.h"

struct entry {
	struct route r; /* first: tables point here */
	struct route_nh *nhs;
	struct route_metrics m;
	unsigned char encaps[]; /* the hops' blobs */
};

struct table {
	uint32_t id;
	struct route **v;
	size_t n, cap;
};

struct link4 {
	uint32_t ifindex, flags;
	unsigned int naddrs;
};

struct addr4 {
	uint32_t ifindex;
	uint8_t addr[4], plen;
};

struct nhobj4 {
	uint32_t id, ifindex, flags;
	uint8_t family, has_gw, blackhole, is_group;
	uint8_t gw[16];
	unsigned int nmemb;
	struct route_nhmember *memb;
};

struct fib4 {
	struct table *tables; /* kernel order */
	size_t ntables;
	struct link4 *links;
	size_t nlinks;
	struct addr4 *addrs;
	size_t naddrs;
	struct nhobj4 *nhobjs;
	size_t nnhobjs;
	struct fib4_stats st;
};

#define ENTRY(rp) ((struct entry *)(void *)(rp))

/* ---- records ---- */

static struct route *entry_new(const struct route *r, const struct route_nh *nhs,
			       const struct route_metrics *m)
{
	size_t esz = route_encaps_size(r, nhs);
	struct entry *e = calloc(1, sizeof(*e) + esz);

	if (!e)
		return NULL;
	e->r = *r;
	if (r->nh_count > 1) {
		e->nhs = malloc(r->nh_count * sizeof(*e->nhs));
		if (!e->nhs) {
			free(e);
			return NULL;
		}
		memcpy(e->nhs, nhs, r->nh_count * sizeof(*e->nhs));
	}
	route_encaps_copy(&e->r, e->nhs, e->encaps);
	e->r.nhs = e->nhs;
	if (m) {
		e->m = *m;
		e->r.metrics = &e->m;
	} else {
		e->r.metrics = NULL;
	}
	return &e->r;
}

static void entry_free(struct route *r)
{
	if (r) {
		free(ENTRY(r)->nhs);
		free(ENTRY(r));
	}
}

/*
 * Whether a and b are the same fib alias for the kernel: type and fib_info (protocol, scope,
 * prefsrc, metrics, nexthop object or nexthops with their gateways, devices, weights, onlink,
 * encapsulations and realms). The flags the kernel changes on its own (dead, linkdown,
 * offload) are no part of it, and over a nexthop object the hops are the object's.
 */
int fib4_same_alias(const struct route *a, const struct route *b)
{
	if (a->type != b->type || a->protocol != b->protocol || a->scope != b->scope ||
	    a->has_prefsrc != b->has_prefsrc || memcmp(a->prefsrc, b->prefsrc, 4) ||
	    a->nhid != b->nhid || !a->metrics != !b->metrics ||
	    (a->metrics && memcmp(a->metrics, b->metrics, sizeof(*a->metrics))))
		return 0;
	if (a->nhid)
		return 1;
	if (a->nh_count != b->nh_count)
		return 0;
	for (unsigned int i = 0; i < a->nh_count; i++) {
		const struct route_nh *x = route_nh(a, i), *y = route_nh(b, i);

		if (x->ifindex != y->ifindex || x->has_gw != y->has_gw ||
		    memcmp(x->gw, y->gw, 16) || x->weight != y->weight ||
		    (x->flags & RTNH_F_ONLINK) != (y->flags & RTNH_F_ONLINK) ||
		    !route_encap_equal(x->encap, y->encap))
			return 0;
	}
	return 1;
}

/* ---- tables ---- */

static struct table *table_get(struct fib4 *f, uint32_t id, int create)
{
	size_t at = f->ntables;
	struct table *t;

	for (size_t i = 0; i < f->ntables; i++)
		if (f->tables[i].id == id)
			return &f->tables[i];
	if (!create)
		return NULL;
	/* fib_new_table: hlist_add_head_rcu, so first in its bucket (id % 256) */
	for (size_t i = 0; i < f->ntables; i++) {
		if (order_table_bucket(f->tables[i].id) >= order_table_bucket(id)) {
			at = i;
			break;
		}
	}
	t = realloc(f->tables, (f->ntables + 1) * sizeof(*t));
	if (!t)
		return NULL;
	f->tables = t;
	memmove(&t[at + 1], &t[at], (f->ntables - at) * sizeof(*t));
	memset(&t[at], 0, sizeof(*t));
	t[at].id = id;
	f->ntables++;
	return &t[at];
}

/* For a dump: the table goes last (a dump lists tables in the kernel's order). */
static struct table *table_get_dump(struct fib4 *f, uint32_t id)
{
	struct table *t;

	for (size_t i = 0; i < f->ntables; i++)
		if (f->tables[i].id == id)
			return &f->tables[i];
	t = realloc(f->tables, (f->ntables + 1) * sizeof(*t));
	if (!t)
		return NULL;
	f->tables = t;
	memset(&t[f->ntables], 0, sizeof(*t));
	t[f->ntables].id = id;
	return &t[f->ntables++];
}

static int table_insert(struct table *t, size_t at, struct route *r)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct route **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	memmove(&t->v[at + 1], &t->v[at], (t->n - at) * sizeof(*t->v));
	t->v[at] = r;
	t->n++;
	return 0;
}

static void table_remove(struct table *t, size_t at)
{
	entry_free(t->v[at]);
	memmove(&t->v[at], &t->v[at + 1], (t->n - at - 1) * sizeof(*t->v));
	t->n--;
}

/* The group of r in t: [*lo, *hi), the routes of equal order4 key (fib_find_alias). */
static void group_of(const struct table *t, const struct route *r, size_t *lo, size_t *hi)
{
	size_t a = 0, b = t->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (order4_route_cmp(t->v[mid], r) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	b = t->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (order4_route_cmp(t->v[mid], r) <= 0)
			a = mid + 1;
		else
			b = mid;
	}
	*hi = a;
}

int fib4_new(struct fib4 **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fib4_free(struct fib4 *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ntables; i++) {
		for (size_t k = 0; k < f->tables[i].n; k++)
			entry_free(f->tables[i].v[k]);
		free(f->tables[i].v);
	}
	for (size_t i = 0; i < f->nnhobjs; i++)
		free(f->nhobjs[i].memb);
	free(f->tables);
	free(f->links);
	free(f->addrs);
	free(f->nhobjs);
	free(f);
}

int fib4_dump_route(struct fib4 *f, const struct route *r, const struct route_nh *nhs,
		    const struct route_metrics *m)
{
	struct table *t = table_get_dump(f, r->table);
	struct route *e;

	if (!t || !(e = entry_new(r, nhs, m)))
		return -ENOMEM;
	if (table_insert(t, t->n, e)) {
		entry_free(e);
		return -ENOMEM;
	}
	return 0;
}

/*
 * fib_table_insert's placement, from the flags it announces with: NLM_F_REPLACE takes the
 * place of the group's first alias (or of the alias itself when a nexthop object's update
 * re-announces it: fib_info_notify_update), NLM_F_APPEND goes last in the group, NLM_F_CREATE
 * without NLM_F_EXCL (prepend) first, and NLM_F_EXCL starts a group (at its sorted place).
 */
static int route_new(struct fib4 *f, uint16_t flags, const struct route *r,
		     const struct route_nh *nhs, const struct route_metrics *m)
{
	struct table *t = table_get(f, r->table, 1);
	struct route *e;
	size_t lo, hi, at;

	if (!t || !(e = entry_new(r, nhs, m)))
		return -ENOMEM;
	group_of(t, e, &lo, &hi);
	at = hi;
	if (flags & NLM_F_REPLACE) {
		size_t k = lo;

		for (size_t i = lo; r->nhid && i < hi; i++) {
			if (fib4_same_alias(t->v[i], e)) {
				k = i;
				break;
			}
		}
		if (k < hi) {
			f->st.replace_in_place += k != lo;
			entry_free(t->v[k]);
			t->v[k] = e;
			return 0;
		}
	} else if (!(flags & NLM_F_CREATE)) { /* an alias that exists changed (offload flags) */
		for (size_t i = lo; i < hi; i++) {
			if (fib4_same_alias(t->v[i], e)) {
				entry_free(t->v[i]);
				t->v[i] = e;
				return 0;
			}
		}
	} else if (!(flags & NLM_F_APPEND) && !(flags & NLM_F_EXCL)) {
		at = lo; /* prepend */
	}
	if (table_insert(t, at, e)) {
		entry_free(e);
		return -ENOMEM;
	}
	return 0;
}

/* fib_table_delete: the alias the message names. */
static void route_del(struct fib4 *f, const struct route *r)
{
	struct table *t = table_get(f, r->table, 0);
	size_t lo, hi;

	if (t) {
		group_of(t, r, &lo, &hi);
		for (size_t i = lo; i < hi; i++) {
			if (fib4_same_alias(t->v[i], r)) {
				table_remove(t, i);
				return;
			}
		}
	}
	f->st.unknown_deletes++;
}

int fib4_route(struct fib4 *f, int del, uint16_t nlmsg_flags, const struct route *r,
	       const struct route_nh *nhs, const struct route_metrics *m)
{
	struct route tmp;

	if (!del)
		return route_new(f, nlmsg_flags, r, nhs, m);
	tmp = *r; /* fib4_same_alias() reads hops and metrics through the record */
	tmp.nhs = (struct route_nh *)nhs;
	tmp.metrics = m;
	route_del(f, &tmp);
	return 0;
}

/* ---- silent changes ---- */

static struct link4 *link_find(struct fib4 *f, uint32_t ifindex)
{
	for (size_t i = 0; i < f->nlinks; i++)
		if (f->links[i].ifindex == ifindex)
			return &f->links[i];
	return NULL;
}

static int link_up(struct fib4 *f, uint32_t ifindex)
{
	struct link4 *l = link_find(f, ifindex);

	return l && (l->flags & IFF_UP);
}

static int has_carrier(uint32_t flags)
{
	return (flags & (IFF_RUNNING | IFF_LOWER_UP)) != 0;
}

/* The hop i of r, writable (the record is ours). */
static struct route_nh *hop_w(struct route *r, unsigned int i)
{
	return r->nh_count > 1 ? &ENTRY(r)->nhs[i] : &r->nh;
}

/* After hop flags changed: a single path's rtm_flags are its hop's (fib_dump_info). */
static void sync_rtm_flags(struct route *r, uint32_t fi_flags_set, uint32_t fi_flags_clear)
{
	if (r->nh_count == 1 && !r->mpath_one)
		r->rtm_flags = (r->rtm_flags & ~0xffu) | r->nh.flags;
	else
		r->rtm_flags = (r->rtm_flags | fi_flags_set) & ~fi_flags_clear;
}

enum { EV_CHANGE, EV_DOWN, EV_UNREGISTER };

/*
 * fib_sync_down_dev, then fib_flush (fib_table_flush): hops on dev get linkdown (CHANGE) or
 * dead and linkdown (DOWN, UNREGISTER), not those of scope host routes unless force; a route
 * whose every hop is now dead is deleted, one with a hop on an unregistered device too;
 * reject routes are never flushed. Routes over nexthop objects are nexthop.c's business.
 */
static void sync_down(struct fib4 *f, uint32_t dev, int ev, int force)
{
	uint8_t set = ev == EV_CHANGE ? RTNH_F_LINKDOWN : RTNH_F_LINKDOWN | RTNH_F_DEAD;

	for (size_t ti = 0; ti < f->ntables; ti++) {
		struct table *t = &f->tables[ti];

		for (size_t i = 0; i < t->n;) {
			struct route *r = t->v[i];
			unsigned int dead = 0, on_dev = 0, n = r->nh_count;
			int changed = 0;

			for (unsigned int k = 0; k < n && !r->nhid; k++)
				on_dev += route_nh(r, k)->ifindex == dev;
			if (!on_dev) {
				i++;
				continue;
			}
			for (unsigned int k = 0; k < n; k++) {
				struct route_nh *nh = hop_w(r, k);

				if (nh->flags & RTNH_F_DEAD) {
					dead++;
				} else if (nh->ifindex == dev &&
					   (force || r->scope != RT_SCOPE_HOST)) {
					changed |= (nh->flags | set) != nh->flags;
					nh->flags |= set;
					dead++;
				}
				if (ev == EV_UNREGISTER && nh->ifindex == dev) {
					dead = n;
					break;
				}
			}
			if (dead == n && ev != EV_CHANGE && r->type != RTN_BLACKHOLE &&
			    r->type != RTN_UNREACHABLE && r->type != RTN_PROHIBIT &&
			    r->type != RTN_THROW) {
				table_remove(t, i);
				f->st.silent_removals++;
				continue;
			}
			sync_rtm_flags(r, dead == n ? set : 0, 0);
			f->st.silent_changes += changed;
			i++;
		}
	}
}

/* fib_sync_up: hops on dev lose nh_flags (dead also clears linkdown when the carrier is up),
 * a route with a live hop loses them too. */
static void sync_up(struct fib4 *f, uint32_t dev, uint8_t nh_flags)
{
	struct link4 *l = link_find(f, dev);

	if (!l || !(l->flags & IFF_UP))
		return;
	if ((nh_flags & RTNH_F_DEAD) && has_carrier(l->flags))
		nh_flags |= RTNH_F_LINKDOWN;
	for (size_t ti = 0; ti < f->ntables; ti++) {
		struct table *t = &f->tables[ti];

		for (size_t i = 0; i < t->n; i++) {
			struct route *r = t->v[i];
			unsigned int alive = 0, on_dev = 0;
			int changed = 0;

			for (unsigned int k = 0; k < r->nh_count && !r->nhid; k++)
				on_dev += route_nh(r, k)->ifindex == dev;
			if (!on_dev)
				continue;
			for (unsigned int k = 0; k < r->nh_count; k++) {
				struct route_nh *nh = hop_w(r, k);

				if (!(nh->flags & nh_flags)) {
					alive++;
					continue;
				}
				if (!nh->ifindex || !link_up(f, nh->ifindex) || nh->ifindex != dev)
					continue;
				alive++;
				nh->flags &= (uint8_t)~nh_flags;
				changed = 1;
			}
			if (alive)
				sync_rtm_flags(r, 0, nh_flags);
			f->st.silent_changes += changed;
		}
	}
}

/* ---- nexthop objects (net/ipv4/nexthop.c) ---- */

static struct nhobj4 *nh_find(struct fib4 *f, uint32_t id)
{
	for (size_t i = 0; i < f->nnhobjs; i++)
		if (f->nhobjs[i].id == id)
			return &f->nhobjs[i];
	return NULL;
}

/* Remove every route over object id (silently: IPv4 routes over a deleted object get no
 * RTM_DELROUTE). */
static void routes_over_gone(struct fib4 *f, uint32_t id)
{
	for (size_t ti = 0; ti < f->ntables; ti++) {
		struct table *t = &f->tables[ti];

		for (size_t i = 0; i < t->n;) {
			if (t->v[i]->nhid == id) {
				table_remove(t, i);
				f->st.silent_removals++;
			} else {
				i++;
			}
		}
	}
}

/* The hop a member object gives a route (fib_add_nexthop / fib_nexthop_info). */
static void hop_of(const struct nhobj4 *o, uint16_t weight, struct route_nh *nh)
{
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = o->ifindex;
	nh->weight = (uint8_t)weight;
	nh->flags = (uint8_t)o->flags;
	if (o->has_gw) {
		memcpy(nh->gw, o->gw, 16);
		nh->has_gw = o->family == 10 /* AF_INET6 */ ? ROUTE_GW_VIA6 : 1;
	}
}

/* Routes over group g show its members now (compat mode 1), a lone member as a single path. */
static int routes_over_group(struct fib4 *f, const struct nhobj4 *g)
{
	struct route_nh hops[64];
	unsigned int n = 0;

	if (g->nmemb > 64)
		return 0; /* not followed here: a resync restores it */
	for (unsigned int i = 0; i < g->nmemb; i++) {
		const struct nhobj4 *o = nh_find(f, g->memb[i].id);

		if (o)
			hop_of(o, g->memb[i].weight, &hops[n++]);
	}
	for (size_t ti = 0; ti < f->ntables; ti++) {
		struct table *t = &f->tables[ti];

		for (size_t i = 0; i < t->n; i++) {
			struct route r = *t->v[i], *e;

			if (r.nhid != g->id || !n)
				continue;
			r.nh_count = (uint16_t)n;
			r.mpath_one = 0;
			if (n == 1) {
				r.nh = hops[0];
				r.nh.weight = 1;
				r.rtm_flags = (r.rtm_flags & ~0xffu) | r.nh.flags;
			} else {
				memset(&r.nh, 0, sizeof(r.nh));
			}
			e = entry_new(&r, hops, r.metrics);
			if (!e)
				return -ENOMEM;
			entry_free(t->v[i]);
			t->v[i] = e;
			f->st.silent_changes++;
		}
	}
	return 0;
}

/* remove_nexthop: the object goes, with its routes; groups holding it lose it (an empty
 * group goes too) and their routes show what is left. */
static int nh_remove(struct fib4 *f, uint32_t id)
{
	struct nhobj4 *o = nh_find(f, id);
	int ret = 0;

	if (!o)
		return 0;
	free(o->memb);
	*o = f->nhobjs[--f->nnhobjs];
	routes_over_gone(f, id);
	for (size_t i = 0; i < f->nnhobjs && !ret; i++) {
		struct nhobj4 *g = &f->nhobjs[i];
		unsigned int k = 0;

		for (unsigned int j = 0; j < g->nmemb; j++)
			if (g->memb[j].id != id)
				g->memb[k++] = g->memb[j];
		if (k == g->nmemb)
			continue;
		g->nmemb = k;
		if (!k) {
			ret = nh_remove(f, g->id);
			i = (size_t)-1; /* the array changed: start again */
			continue;
		}
		ret = routes_over_group(f, g);
	}
	return ret;
}

/* nexthop_flush_dev: objects on dev go (no RTM_DELNEXTHOP). */
static int nh_flush_dev(struct fib4 *f, uint32_t dev)
{
	for (size_t i = 0; i < f->nnhobjs;) {
		if (!f->nhobjs[i].is_group && !f->nhobjs[i].blackhole &&
		    f->nhobjs[i].ifindex == dev) {
			int ret = nh_remove(f, f->nhobjs[i].id);

			if (ret)
				return ret;
			i = 0;
			continue;
		}
		i++;
	}
	return 0;
}

int fib4_nexthop(struct fib4 *f, const struct route_nhobj *in, uint32_t nh_flags,
		 const struct route_nhmember *memb, unsigned int nmemb, int del)
{
	struct nhobj4 *o;

	if (del)
		return nh_remove(f, in->id);
	o = nh_find(f, in->id);
	if (!o) {
		o = realloc(f->nhobjs, (f->nnhobjs + 1) * sizeof(*o));
		if (!o)
			return -ENOMEM;
		f->nhobjs = o;
		o = &f->nhobjs[f->nnhobjs++];
		memset(o, 0, sizeof(*o));
	}
	free(o->memb);
	o->memb = NULL;
	o->id = in->id;
	o->ifindex = in->ifindex;
	o->flags = nh_flags;
	o->family = in->family;
	o->has_gw = in->has_gw;
	o->blackhole = in->blackhole;
	o->is_group = in->is_group;
	memcpy(o->gw, in->gw, 16);
	o->nmemb = nmemb;
	if (nmemb) {
		o->memb = malloc(nmemb * sizeof(*o->memb));
		if (!o->memb) {
			o->nmemb = 0;
			return -ENOMEM;
		}
		memcpy(o->memb, memb, nmemb * sizeof(*o->memb));
	}
	return 0;
}

/* ---- links and addresses (net/ipv4/fib_frontend.c) ---- */

unsigned int fib4_link_events(uint32_t old, uint32_t new_flags)
{
	uint32_t changed = old ^ new_flags;

	if (!(new_flags & IFF_UP))
		return (old & IFF_UP) ? FIB4_LINK_DOWN : 0;
	if (!(old & IFF_UP))
		return FIB4_LINK_UP; /* fib_sync_up(dead) clears linkdown too with the carrier */
	/* __dev_notify_flags: no NETDEV_CHANGE for a promiscuity or allmulti change alone */
	if ((changed & (IFF_PROMISC | IFF_ALLMULTI)) &&
	    !(changed & ~(IFF_PROMISC | IFF_ALLMULTI | IFF_RUNNING | IFF_LOWER_UP | IFF_DORMANT)))
		return 0;
	return has_carrier(new_flags) ? FIB4_LINK_CARRIER_ON : FIB4_LINK_CARRIER_OFF;
}

int fib4_link(struct fib4 *f, uint32_t ifindex, uint32_t flags)
{
	struct link4 *l = link_find(f, ifindex);
	unsigned int ev;
	uint32_t old;

	if (!l) {
		l = realloc(f->links, (f->nlinks + 1) * sizeof(*l));
		if (!l)
			return -ENOMEM;
		f->links = l;
		l = &f->links[f->nlinks++];
		memset(l, 0, sizeof(*l));
		l->ifindex = ifindex;
		l->flags = flags;
		return 0;
	}
	old = l->flags;
	l->flags = flags;
	ev = fib4_link_events(old, flags);
	if (ev & FIB4_LINK_DOWN) {
		sync_down(f, ifindex, EV_DOWN, 0);
		return nh_flush_dev(f, ifindex);
	}
	if (ev & FIB4_LINK_UP)
		sync_up(f, ifindex, RTNH_F_DEAD);
	if (ev & FIB4_LINK_CARRIER_ON)
		sync_up(f, ifindex, RTNH_F_LINKDOWN);
	if (ev & FIB4_LINK_CARRIER_OFF) {
		sync_down(f, ifindex, EV_CHANGE, 0);
		return nh_flush_dev(f, ifindex);
	}
	return 0;
}

int fib4_link_del(struct fib4 *f, uint32_t ifindex)
{
	struct link4 *l = link_find(f, ifindex);
	int ret;

	sync_down(f, ifindex, EV_UNREGISTER, 1); /* NETDEV_UNREGISTER */
	ret = nh_flush_dev(f, ifindex);
	if (l)
		*l = f->links[--f->nlinks];
	for (size_t i = 0; i < f->naddrs;)
		if (f->addrs[i].ifindex == ifindex)
			f->addrs[i] = f->addrs[--f->naddrs];
		else
			i++;
	return ret;
}

int fib4_addr(struct fib4 *f, uint32_t ifindex, const uint8_t addr[4], uint8_t plen, int del,
	      int dump)
{
	size_t i, left = 0;

	for (i = 0; i < f->naddrs; i++)
		if (f->addrs[i].ifindex == ifindex && !memcmp(f->addrs[i].addr, addr, 4) &&
		    f->addrs[i].plen == plen)
			break;
	if (!del) {
		if (i == f->naddrs) {
			struct addr4 *a = realloc(f->addrs, (f->naddrs + 1) * sizeof(*a));

			if (!a)
				return -ENOMEM;
			f->addrs = a;
			a[f->naddrs].ifindex = ifindex;
			memcpy(a[f->naddrs].addr, addr, 4);
			a[f->naddrs].plen = plen;
			f->naddrs++;
		}
		if (!dump) /* fib_inetaddr_event NETDEV_UP */
			sync_up(f, ifindex, RTNH_F_DEAD);
		return 0;
	}
	if (i < f->naddrs)
		f->addrs[i] = f->addrs[--f->naddrs];
	for (i = 0; i < f->naddrs; i++)
		left += f->addrs[i].ifindex == ifindex;
	/* fib_inetaddr_event NETDEV_DOWN: the last address gone disables IP on the device */
	if (!left)
		sync_down(f, ifindex, EV_DOWN, 1);
	return 0;
}

/* ---- reading ---- */

size_t fib4_ntables(const struct fib4 *f)
{
	return f->ntables;
}

uint32_t fib4_table(const struct fib4 *f, size_t i, const struct route *const **routes, size_t *n)
{
	*routes = (const struct route *const *)f->tables[i].v;
	*n = f->tables[i].n;
	return f->tables[i].id;
}

void fib4_get_stats(const struct fib4 *f, struct fib4_stats *out)
{
	*out = f->st;
}
