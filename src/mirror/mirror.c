// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mirror.c - the collector's model of the kernel's IPv6 tables (see mirror.h).
 *
 * Ownership: everything here belongs to the collector thread. A record owns its multipath
 * nexthops, its metrics and its hops' encapsulations (one malloc each, NULL when absent:
 * mencaps_dup()); an open chunk owns its records, a closed one reads them from its segment
 * (copy on write: struct mchunk); a table owns its chunks; the mirror owns its tables,
 * links and nexthop objects. Snapshots
 * copy what they need (builder_compose()), so a mirror can change or be freed while any number
 * of snapshots built from it are being read.
 *
 * The kernel rules applied here, checked against the kernel source and in namespaces, are
 * in docs/kernel-facts.md ("Notifications"). In short:
 *   - a node is (table, dst/len, src/len); its routes are ordered by metric, routes of equal
 *     metric in insertion order;
 *   - ECMP-able routes (a gateway, no nexthop object, not RA-learned) of one node and metric
 *     form one group; a NEWROUTE for a group lists all of its hops, new ones anywhere in the
 *     list, and the kernel keeps the old hops' order and puts new ones last;
 *   - NLM_F_REPLACE replaces the first route of the node and metric that is ECMP-able as the
 *     new one is (else the first of that metric), siblings included, with no DELROUTE;
 *   - a DELROUTE names a whole route (all hops) or one hop of a group.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtsnap/array.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/snapshot_impl.h"
#include "rtsnap/mirror_edit.h"
#include "rtsnap/names.h"
#include "rtsnap/order.h"
#include "rtsnap/seggroup.h"
#include "rtsnap/segment.h"
#include "rtsnap/siblings.h"

#define MIRROR_CHUNK SEGMENT_MAX

struct mroute {
	struct route r;		 /* r.nhs and r.metrics unused (NULL) */
	struct route_nh *nhs;	 /* nh_count > 1: the hops; else NULL */
	struct route_metrics *m; /* RTA_METRICS, or NULL */
	struct mencaps *enc;	 /* what r.nh.encap and nhs[].encap point into, or NULL */
	/* nh_count > 1 and the siblings' own attributes differ: one per hop (siblings.h), the
	 * first equal to the record's; else NULL. A chunk holding one never closes: a segment
	 * keeps only each hop's proc bits (route_nh.sib). */
	struct route_sib *sib;
	int32_t src; /* its index in the chunk's prev segment while unchanged since; else -1 */
};

/* One record's encapsulations in one block (a hop dropped from a group leaves its bytes). */
struct mencaps {
	size_t len;
	unsigned char b[] __attribute__((aligned(8)));
};

/*
 * Records in kernel order; seg is the immutable copy published last (segment.h), shared by
 * the next snapshot unless the chunk changes first: every change moves it to prev
 * (chunk_dirty), from which the next build copies the text of the records that did not change
 * (mroute.src).
 *
 * Copy on write: once its segment is built, a chunk lets its records go (e == NULL, "closed")
 * and reads them from the segment, which has them all (hops, metrics, encapsulations). The
 * first change opens it again (chunk_open: the records copied back out of the segment). So
 * at rest a route is held once, in its segment, and the mirror only costs what changed since
 * the last publication.
 */
struct mchunk {
	uint32_t n, cap; /* records, and room for in e (at most MIRROR_CHUNK; 0 when closed) */
	uint32_t hot;	 /* its segment was built by the last publication */
	struct segment *seg, *prev;
	struct mroute *e;	/* the records, or NULL: then seg holds them (and seg->n == n) */
	struct segment_sum sum; /* seg's, while seg is set: composing reads no segment */
	/* the key of its last record, while last_ok (chunk_last()): the binary search over a
	 * table's chunks then reads no record, which for a closed chunk is in its segment (a
	 * cache miss or two per step, for every notification) */
	struct order_key last;
	int last_ok;
};

/*
 * A chunk's array is sized to its records: a table's first chunk starts with CHUNK_FIRST slots
 * and doubles; later chunks appended at the end of a table (a dump filling it) get
 * MIRROR_CHUNK; the halves of a split get CHUNK_SPLIT, grow by half when full and shrink when
 * less than half used. (With fixed 256-record chunks every split doubled the memory of the
 * routes it held: the mirror grew by 8 % in 20 s of 10 000 changes/s.)
 */
#define CHUNK_FIRST 16
#define CHUNK_SPLIT (MIRROR_CHUNK / 2 + MIRROR_CHUNK / 8)
/* A chunk left with fewer than CHUNK_MERGE records takes in the next one's, if together they
 * are at most CHUNK_MERGED (a split leaves halves of 32: far from both). */
#define CHUNK_MERGE (MIRROR_CHUNK / 4)
#define CHUNK_MERGED (MIRROR_CHUNK * 3 / 4)

/*
 * A run of consecutive chunks of a table whose segments were published as one group
 * (seggroup.h): a publication shares the group when none of its chunks changed, and patches
 * it when some did (docs/design.md, "Groups of segments"). visit: the chunks to look at in
 * the next publication (bit j: chunk c0 + j), those changed or opened since the last one;
 * shape: chunks came or went, so the group is made again from its chunks.
 */
struct mgroup {
	uint32_t c0, nc;
	uint32_t shape;
	uint64_t visit[2];
	struct seggroup *sg; /* the last published (one reference), or NULL */
	/* sg's sums and members: composing reads these, not sg (seggroup.h) */
	struct segment_sum sum;
	uint32_t nsegs;
};

/* A group of chunks is split in halves past MG_MAX chunks, and one of fewer than MG_MIN is
 * joined to a neighbour when both fit in MG_JOIN. */
#define MG_MAX 128
#define MG_MIN 16
#define MG_JOIN 96

struct mtable {
	uint32_t id;
	uint32_t nroutes;
	struct mchunk **chunks;
	uint32_t nchunks, cap;
	size_t slots;	       /* the chunks' room, summed */
	struct mgroup *groups; /* covering the chunks in order */
	uint32_t ngroups, gcap;
	struct segment *ph;   /* its placeholder row (one reference), while it has no ::/0 */
	struct seggroup *phg; /* ph as a group (one reference) */
	struct mguide *guide; /* the chunks' last addresses, for bound() (see guide_build()) */
	uint32_t nguide, guide_cap;
};

/* A chunk's last record's address (order_key a_hi, a_lo): an entry of a table's guide. */
struct mguide {
	uint64_t hi, lo;
};

/*
 * An open chunk's records (struct mchunk.e) are an array of MIRROR_CHUNK records taken from
 * slabs of ESLAB_N arrays mmap()ed beside the heap, not from malloc(). They come and go by
 * the thousand (every dump fills a mirror with them, every publication closes the chunks it
 * built and every change opens one): in the heap they left holes between the segments, which
 * live on (a mirror loaded at start and closed by the first publication left 170 MB of free
 * heap between the segments at 1 000 000 routes, and churn made it resident again: RSS 1.4
 * times its size at rest). A slab whose arrays are all free is given back to the kernel
 * (ESLAB_SPARE are kept, about 3 MB: mapping and faulting them in again cost more than the
 * changes themselves under churn). Any thread (a resync's dump fills its own mirror): under s_eslab_lock.
 */
#define ESLAB_N 64
#define ESLAB_SPARE 4 /* empty slabs kept: churn opens and closes chunks by the hundred */
#define EARRAY_HDR 16 /* before each array: its slab */
#define EARRAY_STRIDE (EARRAY_HDR + MIRROR_CHUNK * sizeof(struct mroute))

struct eslab {
	struct eslab *prev, *next; /* in the list of slabs with a free array */
	uint64_t used;		   /* bit k: array k is taken */
	size_t len;		   /* mapped bytes */
	unsigned char *mem;	   /* the arrays, EARRAY_STRIDE apart */
};

static pthread_mutex_t s_eslab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct eslab *s_eslab_avail; /* slabs with a free array */
static unsigned int s_eslab_empty;  /* of them, all free */

static void eslab_unlink(struct eslab *sl)
{
	if (sl->prev)
		sl->prev->next = sl->next;
	else
		s_eslab_avail = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
	sl->prev = sl->next = NULL;
}

static void eslab_link(struct eslab *sl)
{
	sl->prev = NULL;
	sl->next = s_eslab_avail;
	if (sl->next)
		sl->next->prev = sl;
	s_eslab_avail = sl;
}

/* An array for MIRROR_CHUNK records, or NULL. */
static struct mroute *earray_alloc(void)
{
	struct eslab *sl;
	unsigned char *p;
	unsigned int k;

	pthread_mutex_lock(&s_eslab_lock);
	sl = s_eslab_avail;
	if (!sl) {
		size_t len = sizeof(*sl) + 15 + ESLAB_N * EARRAY_STRIDE;
		void *m =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			pthread_mutex_unlock(&s_eslab_lock);
			return NULL;
		}
		sl = m;
		memset(sl, 0, sizeof(*sl));
		sl->len = len;
		sl->mem = (unsigned char *)(((uintptr_t)(sl + 1) + 15) & ~(uintptr_t)15);
		eslab_link(sl);
		s_eslab_empty++;
	}
	if (!sl->used)
		s_eslab_empty--;
	k = (unsigned int)__builtin_ctzll(~sl->used);
	sl->used |= 1ull << k;
	if (sl->used == ~0ull)
		eslab_unlink(sl);
	pthread_mutex_unlock(&s_eslab_lock);
	p = sl->mem + k * EARRAY_STRIDE;
	memcpy(p, &sl, sizeof(sl));
	return (struct mroute *)(void *)(p + EARRAY_HDR);
}

/* Give back an array from earray_alloc() (NULL is fine). */
static void earray_free(struct mroute *e)
{
	unsigned char *p;
	struct eslab *sl;
	unsigned int k;

	if (!e)
		return;
	p = (unsigned char *)e - EARRAY_HDR;
	memcpy(&sl, p, sizeof(sl));
	k = (unsigned int)((size_t)(p - sl->mem) / EARRAY_STRIDE);
	pthread_mutex_lock(&s_eslab_lock);
	if (sl->used == ~0ull)
		eslab_link(sl);
	sl->used &= ~(1ull << k);
	if (!sl->used && ++s_eslab_empty > ESLAB_SPARE) {
		eslab_unlink(sl);
		s_eslab_empty--;
		munmap(sl, sl->len);
	}
	pthread_mutex_unlock(&s_eslab_lock);
}

static struct mchunk *chunk_new(struct mtable *t, uint32_t cap)
{
	struct mchunk *ch = malloc(sizeof(*ch));

	(void)cap; /* arrays hold MIRROR_CHUNK records (earray_alloc()) */
	if (!ch)
		return NULL;
	ch->e = earray_alloc();
	if (!ch->e) {
		free(ch);
		return NULL;
	}
	ch->n = 0;
	ch->cap = MIRROR_CHUNK;
	ch->hot = 0;
	ch->last_ok = 0;
	ch->seg = ch->prev = NULL;
	t->slots += ch->cap;
	return ch;
}

/* Give open chunk c of t room for cap records: every open chunk has room for MIRROR_CHUNK
 * (earray_alloc()). 0. */
static int chunk_resize(struct mtable *t, uint32_t c, uint32_t cap)
{
	(void)t;
	(void)c;
	(void)cap;
	return 0;
}

/* Keys of one table where a dump may have skipped routes (mirror_load_gap()), both ends
 * included; lo_open: from the table's first key, hi_open: to its last. */
struct mgap {
	uint32_t table;
	uint8_t lo_open, hi_open;
	struct order_key lo, hi;
};

struct mirror {
	int family;	       /* AF_INET: an IPv4 mirror (mirror_new4(), mirror_edit.h); else 0 */
	struct mtable *tables; /* kernel order */
	size_t ntables, tables_cap;
	struct route_link *links; /* sorted by ifindex */
	size_t nlinks, links_cap;
	struct route_nhobj *nhobjs; /* sorted by id */
	size_t nnhobjs, nhobjs_cap;
	size_t nroutes;
	size_t extra_bytes; /* nexthop and metrics allocations */
	/* After a nexthop object is replaced, the kernel re-announces every route over it (and over
	 * groups) with NLM_F_REPLACE (nexthop_compat_mode=1): such a message updates its own route,
	 * where a user's replace takes the first route of the node. The window stays open while
	 * those messages follow. */
	uint32_t reannounce_id; /* 0: closed */
	/* What the rendered text of a route depends on besides the route: link names and the
	 * loopback flag, nexthop objects, iproute2 names. A change bumps ctx_epoch; a
	 * publication with another epoch (or other names) than the last builds every segment. */
	uint64_t ctx_epoch, pub_epoch, pub_names;
	/* the chain of the snapshots composed of it (a reference): the segments it gives up
	 * are held for them (snapshot_defer_put()) until they go */
	struct snapshot_chain *chain;
	/* A dump's mirror: where the dump may have skipped routes (sorted and disjoint after
	 * mirror_load_end()), and the route loaded last, in dump order. */
	struct mgap *gaps;
	size_t ngaps, gaps_cap;
	int gap_next, have_last;
	int redump; /* the dump lists the routes of its last key again (mirror_load_route()) */
	uint32_t last_table;
	struct order_key last_key;
	/* The keys the last RTM_F_PREFIX dump marked RTF_PREFIX_RT (pfx), and during a new one
	 * those of the one before (pfx_old): a mark the new dump lacks is cleared (the kernel
	 * makes an RA prefix route static, silently, when an address in it is added). */
	struct prefix_key *pfx, *pfx_old;
	size_t npfx, pfx_cap, npfx_old, pfx_old_cap;
	/* (table, device) pairs to re-read (mirror_take_rereads()) */
	uint32_t *rr;
	size_t nrr, rr_cap;
};

/* The chunk's records change: its published copy no longer describes it, but the records
 * that stay as they are can reuse their text from it. The mirror's references on segments
 * are given up with snapshot_defer_put() (segment.h, lifetime rule 3). */
static void chunk_dirty(struct mchunk *ch)
{
	ch->last_ok = 0;
	if (!ch->seg)
		return;
	snapshot_defer_put(ch->prev);
	ch->prev = ch->seg;
	ch->seg = NULL;
}

/* Forget both copies: the chunk is freed, or every route must be rendered again. */
static void chunk_forget(struct mchunk *ch)
{
	snapshot_defer_put(ch->seg);
	snapshot_defer_put(ch->prev);
	ch->seg = ch->prev = NULL;
}

/* ---- groups of chunks (struct mgroup) ---- */

/* The group holding chunk c of t (c < nchunks), or, for c == nchunks, the last one. */
static uint32_t mg_find(const struct mtable *t, uint32_t c)
{
	uint32_t lo = 0, hi = t->ngroups;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->groups[mid].c0 <= c)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Chunk c of t changed, or was opened: the next publication looks at it. */
static void mg_touch(struct mtable *t, uint32_t c)
{
	struct mgroup *g;
	uint32_t j;

	if (!t->ngroups)
		return;
	g = &t->groups[mg_find(t, c)];
	j = c - g->c0;
	if (j < 128)
		g->visit[j / 64] |= 1ull << (j % 64);
	else
		g->shape = 1;
}

static void mg_drop(struct mgroup *g)
{
	snapshot_defer_put_group(g->sg);
	g->sg = NULL;
}

/* Split group q of t in halves (both made again at the next publication). 0 or -ENOMEM (then
 * it stays whole: groups of up to SEGGROUP_MAX chunks still publish). */
static int mg_split(struct mtable *t, uint32_t q)
{
	size_t cap = t->gcap;
	struct mgroup *g;
	uint32_t half;

	if (array_grow((void **)&t->groups, &cap, t->ngroups, sizeof(*t->groups), 8))
		return -ENOMEM;
	t->gcap = (uint32_t)cap;
	memmove(&t->groups[q + 2], &t->groups[q + 1], (t->ngroups - q - 1) * sizeof(*t->groups));
	t->ngroups++;
	g = &t->groups[q];
	half = g->nc / 2;
	mg_drop(g);
	t->groups[q + 1] = (struct mgroup){ .c0 = g->c0 + half, .nc = g->nc - half, .shape = 1 };
	g->nc = half;
	g->shape = 1;
	return 0;
}

/* A chunk was inserted at c of t (the chunks after it moved up by one): it joins the group of
 * the chunk before it (or the first group). */
static void mg_insert(struct mtable *t, uint32_t c)
{
	uint32_t q;

	if (!t->ngroups) {
		size_t cap = t->gcap;

		if (array_grow((void **)&t->groups, &cap, 0, sizeof(*t->groups), 8))
			return; /* mg_check() makes them at the next publication */
		t->gcap = (uint32_t)cap;
		t->groups[0] = (struct mgroup){ .c0 = 0, .nc = 1, .shape = 1 };
		t->ngroups = 1;
		return;
	}
	q = c ? mg_find(t, c - 1) : 0;
	t->groups[q].nc++;
	t->groups[q].shape = 1;
	for (uint32_t k = q + 1; k < t->ngroups; k++)
		t->groups[k].c0++;
	if (t->groups[q].nc > MG_MAX)
		mg_split(t, q);
}

/* The chunk at c of t was removed (the chunks after it moved down by one). */
static void mg_remove(struct mtable *t, uint32_t c)
{
	uint32_t q;
	struct mgroup *g;

	if (!t->ngroups)
		return;
	q = mg_find(t, c);
	g = &t->groups[q];
	g->nc--;
	g->shape = 1;
	for (uint32_t k = q + 1; k < t->ngroups; k++)
		t->groups[k].c0--;
	if (!g->nc) {
		mg_drop(g);
		memmove(g, g + 1, (t->ngroups - q - 1) * sizeof(*g));
		t->ngroups--;
		return;
	}
	/* a small group joins a neighbour (so that groups stay about √chunks in number) */
	if (g->nc < MG_MIN) {
		uint32_t o = q + 1 < t->ngroups && t->groups[q + 1].nc + g->nc <= MG_JOIN ? q + 1
			     : q > 0 && t->groups[q - 1].nc + g->nc <= MG_JOIN		  ? q - 1
											  : q;

		if (o != q) {
			uint32_t a = o < q ? o : q;
			struct mgroup *x = &t->groups[a], *y = &t->groups[a + 1];

			x->nc += y->nc;
			x->shape = 1;
			mg_drop(y);
			memmove(y, y + 1, (t->ngroups - a - 2) * sizeof(*y));
			t->ngroups--;
		}
	}
}

/* Forget t's groups (published copies dropped). */
static void mg_free(struct mtable *t)
{
	for (uint32_t q = 0; q < t->ngroups; q++)
		mg_drop(&t->groups[q]);
	free(t->groups);
	t->groups = NULL;
	t->ngroups = t->gcap = 0;
}

/* Group t's chunks afresh, about 64 chunks a group, all made at the next publication. 0 or
 * -ENOMEM (then mg_check() tries again then). */
static int mg_reset(struct mtable *t)
{
	uint32_t n = (t->nchunks + 63) / 64;
	size_t cap = 0;

	for (uint32_t q = 0; q < t->ngroups; q++)
		mg_drop(&t->groups[q]);
	t->ngroups = 0;
	if (!n)
		return 0;
	cap = t->gcap;
	if (array_grow((void **)&t->groups, &cap, n - 1, sizeof(*t->groups), 8))
		return -ENOMEM;
	t->gcap = (uint32_t)cap;
	for (uint32_t q = 0; q < n; q++) {
		uint32_t c0 = (uint32_t)((uint64_t)t->nchunks * q / n);
		uint32_t c1 = (uint32_t)((uint64_t)t->nchunks * (q + 1) / n);

		t->groups[q] = (struct mgroup){ .c0 = c0, .nc = c1 - c0, .shape = 1 };
	}
	t->ngroups = n;
	return 0;
}

/* Whether t's groups cover its chunks (an allocation that failed may have left them short):
 * else they are made again. 0 or -ENOMEM. */
static int mg_check(struct mtable *t)
{
	const struct mgroup *l = t->ngroups ? &t->groups[t->ngroups - 1] : NULL;

	if ((!t->nchunks && !t->ngroups) || (l && l->c0 + l->nc == t->nchunks && !t->groups[0].c0))
		return 0;
	return mg_reset(t);
}

/*
 * ---- the search guide (struct mtable.guide) ----
 *
 * bound() looks for a key among a table's chunks by their last records. Read through the
 * chunks, each step of that search is a cache miss or two (a chunk header), some fourteen of
 * them per notification at a million routes. The guide holds the address of each chunk's last
 * record in one dense array, whose upper levels stay in the cache, so that the search reads
 * the array and then only the chunk it lands on and the one before. It is only a guide:
 * bound() checks where it lands against the chunks themselves, steps from there and refreshes
 * what it read, and searches the chunks as before when that does not settle it. An entry a
 * change left behind (a chunk's last record added or removed) therefore costs a step, never a
 * wrong position. It is kept in step where chunks come and go, built whole when its length
 * differs from the chunks' (after a dump's chunks were adopted), and not used for small
 * tables or without the memory for it.
 */
#ifdef RTSNAP_POISON
#define GUIDE_MIN 2 /* the checking builds use it on every table, and check it (bound()) */
#else
#define GUIDE_MIN 64 /* chunks: fewer are searched through the chunks */
#endif
#define GUIDE_STEPS 4 /* steps from where the guide lands before the search through the chunks */

static const struct order_key *chunk_last(struct mchunk *ch);

static void guide_free(struct mtable *t)
{
	free(t->guide);
	t->guide = NULL;
	t->nguide = t->guide_cap = 0;
}

/* Entry c from chunk c itself (it has records). */
static void guide_set(struct mtable *t, uint32_t c)
{
	const struct order_key *l = chunk_last(t->chunks[c]);

	t->guide[c] = (struct mguide){ l->a_hi, l->a_lo };
}

/* Room in t's guide for an entry per chunk. 0 or -ENOMEM. */
static int guide_room(struct mtable *t)
{
	size_t cap = t->guide_cap;

	if (t->nchunks &&
	    array_grow((void **)&t->guide, &cap, t->nchunks - 1, sizeof(*t->guide), 16))
		return -ENOMEM;
	t->guide_cap = (uint32_t)cap;
	return 0;
}

/* The guide made for t's chunks as they are. 0 or -ENOMEM (then it is left unused). */
static int guide_build(struct mtable *t)
{
	if (guide_room(t)) {
		t->nguide = 0;
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < t->nchunks; c++) {
		if (c + 8 < t->nchunks)
			__builtin_prefetch(&t->chunks[c + 8]->last);
		guide_set(t, c);
	}
	t->nguide = t->nchunks;
	return 0;
}

/* A chunk was inserted at c (t->nchunks counts it). Its entry and the one before it are set
 * when they have records (a split changed the chunk before), else copied from a neighbour:
 * an entry a little off costs bound() a step. */
static void guide_insert(struct mtable *t, uint32_t c)
{
	if (!t->guide || t->nguide + 1 != t->nchunks) {
		t->nguide = 0; /* built again when needed */
		return;
	}
	if (guide_room(t)) {
		t->nguide = 0;
		return;
	}
	memmove(&t->guide[c + 1], &t->guide[c], (t->nguide - c) * sizeof(*t->guide));
	t->nguide++;
	if (t->chunks[c]->n)
		guide_set(t, c);
	else
		t->guide[c] = c ? t->guide[c - 1] : (struct mguide){ 0, 0 };
	if (c && t->chunks[c - 1]->n)
		guide_set(t, c - 1);
}

/* The chunk at c was removed (t->nchunks no longer counts it). */
static void guide_remove(struct mtable *t, uint32_t c)
{
	if (!t->guide || t->nguide != t->nchunks + 1) {
		t->nguide = 0;
		return;
	}
	memmove(&t->guide[c], &t->guide[c + 1], (t->nguide - c - 1) * sizeof(*t->guide));
	t->nguide--;
}

static int is_group_id(const struct mirror *m, uint32_t id);
static uint64_t fingerprint_e(const struct mroute *e);

/*
 * Count e as changed if it differs from what it was (fingerprint and deadline before the
 * update): a dump that re-reads a route unchanged is no change to publish. A deadline counts
 * when it moved by more than a second (a dump recomputes it from whole ticks).
 */
static void count_change(struct mirror_delta *d, const struct mroute *e, uint64_t fp0, int64_t exp0)
{
	int64_t dx = e->r.expires_ms - exp0;

	if (fingerprint_e(e) != fp0 || dx > 1000 || dx < -1000)
		d->changed++;
}

/* A position in a table: chunk c, record i. */
struct mpos {
	uint32_t c, i;
};

static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	return array_grow(arr, cap, n, sz, 16);
}

static struct mtable *table_get(struct mirror *m, uint32_t id, int newest);

int mirror_new(struct mirror **out)
{
	struct mirror *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	/* every namespace has them from its start: the oldest tables of their buckets */
	if (!table_get(m, RT_TABLE_MAIN, 0) || !table_get(m, RT_TABLE_LOCAL, 0)) {
		mirror_free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

/*
 * Copy the encapsulations of r (and of its hops nhs, already the record's own array) into a
 * new block and point r and nhs at the copies. *out is the block, NULL when there are none.
 * 0 or -ENOMEM.
 */
static int mencaps_dup(struct mirror *m, struct route *r, struct route_nh *nhs,
		       struct mencaps **out)
{
	size_t n = route_encaps_size(r, nhs);
	struct mencaps *b = NULL;

	if (n) {
		b = malloc(sizeof(*b) + n);
		if (!b)
			return -ENOMEM;
		b->len = n;
		m->extra_bytes += sizeof(*b) + n;
	}
	route_encaps_copy(r, nhs, b ? b->b : NULL);
	*out = b;
	return 0;
}

static void mencaps_free(struct mirror *m, struct mencaps *b)
{
	if (b)
		m->extra_bytes -= sizeof(*b) + b->len;
	free(b);
}

static void mroute_clear(struct mirror *m, struct mroute *e)
{
	if (e->nhs)
		m->extra_bytes -= e->r.nh_count * sizeof(*e->nhs);
	if (e->m)
		m->extra_bytes -= sizeof(*e->m);
	if (e->sib)
		m->extra_bytes -= e->r.nh_count * sizeof(*e->sib);
	free(e->nhs);
	free(e->m);
	free(e->sib);
	mencaps_free(m, e->enc);
	e->nhs = NULL;
	e->m = NULL;
	e->sib = NULL;
	e->enc = NULL;
}

/* Free the chunks of table tb of m (their records, segments and arrays). */
static void table_free_chunks(struct mirror *m, struct mtable *tb)
{
	for (uint32_t c = 0; c < tb->nchunks; c++) {
		struct mchunk *ch = tb->chunks[c];

		for (uint32_t i = 0; ch->e && i < ch->n; i++)
			mroute_clear(m, &ch->e[i]);
		chunk_forget(ch);
		earray_free(ch->e);
		free(ch);
	}
	free(tb->chunks);
	tb->chunks = NULL;
	tb->nchunks = tb->cap = 0;
	mg_free(tb);
	guide_free(tb);
	snapshot_defer_put(tb->ph);
	snapshot_defer_put_group(tb->phg);
	tb->ph = NULL;
	tb->phg = NULL;
}

void mirror_free(struct mirror *m)
{
	if (!m)
		return;
	for (size_t t = 0; t < m->ntables; t++)
		table_free_chunks(m, &m->tables[t]);
	free(m->tables);
	free(m->links);
	free(m->nhobjs);
	free(m->gaps);
	free(m->pfx);
	free(m->pfx_old);
	free(m->rr);
	snapshot_chain_put(m->chain); /* after the segments held for its snapshots */
	free(m);
}

/* ---- records ---- */

/* Fill e from a parsed message (e must be clear). 0 or -ENOMEM. */
static int mroute_set(struct mirror *m, struct mroute *e, const struct route *r,
		      const struct route_nh *nhs, const struct route_metrics *met)
{
	struct route_nh *n = NULL;
	struct route_metrics *mm = NULL;
	struct mencaps *enc = NULL;
	struct route rr = *r;

	if (r->nh_count > 1) {
		n = malloc(r->nh_count * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memcpy(n, nhs, r->nh_count * sizeof(*n));
	}
	if (met && met->mask) {
		mm = malloc(sizeof(*mm));
		if (!mm) {
			free(n);
			return -ENOMEM;
		}
		*mm = *met;
	}
	/* before e is cleared: what r points to may be e's own */
	if (mencaps_dup(m, &rr, n, &enc)) {
		free(n);
		free(mm);
		return -ENOMEM;
	}
	mroute_clear(m, e);
	e->r = rr;
	e->r.nhs = NULL;
	e->r.metrics = NULL;
	e->nhs = n;
	e->m = mm;
	e->enc = enc;
	if (n)
		m->extra_bytes += r->nh_count * sizeof(*n);
	if (mm)
		m->extra_bytes += sizeof(*mm);
	return 0;
}

static const struct route_nh *mroute_nh(const struct mroute *e, unsigned int i)
{
	return e->r.nh_count > 1 ? &e->nhs[i] : &e->r.nh;
}

/* ---- copy on write (struct mchunk) ---- */

/* Record i of ch, for its own fields (not its hops or metrics): open or closed. */
static const struct route *chunk_key(const struct mchunk *ch, uint32_t i)
{
	return ch->e ? &ch->e[i].r : &ch->seg->routes[i];
}

/* The key of ch's last record (ch has records), kept until the chunk changes (chunk_dirty()). */
static const struct order_key *chunk_last(struct mchunk *ch)
{
	if (!ch->last_ok) {
		order_key_of(chunk_key(ch, ch->n - 1), &ch->last);
		ch->last_ok = 1;
	}
	return &ch->last;
}

/* Record i of ch with its hops and metrics reachable through it (route_nh(), ->metrics), as a
 * segment holds it; an open chunk's record is described in *tmp. */
static const struct route *chunk_view(const struct mchunk *ch, uint32_t i, struct route *tmp)
{
	const struct mroute *e;

	if (!ch->e)
		return &ch->seg->routes[i];
	e = &ch->e[i];
	*tmp = e->r;
	tmp->nhs = e->nhs;
	tmp->metrics = e->m;
	return tmp;
}

/* Copy closed chunk c of t's records out of its segment, to change them (the next publication
 * looks at it again, to close it if it did not change). 0 or -ENOMEM (then it stays closed). */
static int chunk_open(struct mirror *m, struct mtable *t, uint32_t c)
{
	struct mchunk *ch = t->chunks[c];
	const struct segment *g = ch->seg;
	struct mroute *e;

	if (ch->e)
		return 0;
	mg_touch(t, c);
	e = earray_alloc();
	if (!e)
		return -ENOMEM;
	for (uint32_t i = 0; i < ch->n; i++) {
		const struct route *r = &g->routes[i];

		e[i].r = *r;
		e[i].r.nhs = NULL;
		e[i].r.metrics = NULL;
		e[i].nhs = NULL;
		e[i].m = NULL;
		e[i].enc = NULL;
		e[i].sib = NULL;
		e[i].src = (int32_t)i; /* unchanged since the segment */
		/* most routes own nothing beside the record */
		if (r->nh_count <= 1 && !r->nh.encap && !r->metrics)
			continue;
		if (mroute_set(m, &e[i], r, r->nhs, r->metrics)) {
			while (i--)
				mroute_clear(m, &e[i]);
			earray_free(e);
			return -ENOMEM;
		}
	}
	ch->e = e;
	ch->cap = MIRROR_CHUNK;
	t->slots += ch->cap;
	return 0;
}

/* Let an unchanged chunk's records go: its segment has them all. */
static void chunk_close(struct mirror *m, struct mtable *t, struct mchunk *ch)
{
	if (!ch->e || !ch->seg)
		return;
	for (uint32_t i = 0; i < ch->n; i++)
		if (ch->e[i].sib)
			return; /* the siblings' own attributes live only here */
	for (uint32_t i = 0; i < ch->n; i++)
		if (ch->e[i].nhs || ch->e[i].m || ch->e[i].enc)
			mroute_clear(m, &ch->e[i]);
	earray_free(ch->e);
	ch->e = NULL;
	t->slots -= ch->cap;
	ch->cap = 0;
}

/* The same nexthop for the kernel (rt6_duplicate_nexthop): device, gateway, encapsulation. */
static int hop_same(const struct route_nh *a, const struct route_nh *b)
{
	return a->ifindex == b->ifindex && a->has_gw == b->has_gw &&
	       (!a->has_gw || !memcmp(a->gw, b->gw, 16)) && route_encap_equal(a->encap, b->encap);
}

static const struct route_link *link_of(const struct mirror *m, uint32_t ifindex);

/* Whether r can be a route the kernel learned from an RA (route.h). */
static int ra_learned(const struct mirror *m, const struct route *r)
{
	return route_ra_shape(r) && route_ra_candidate(r, link_of(m, r->nh.ifindex));
}

/* rt6_qualify_for_ecmp(): a gateway, no nexthop object, not learned from an RA. */
static int ecmp_able(const struct mirror *m, const struct route *r)
{
	if (r->nhid || ra_learned(m, r) || r->nh_count == 0)
		return 0;
	return r->nh_count > 1 || r->nh.has_gw;
}

/* Whether group e and the hops of pr have a hop in common. */
static int shares_hop(const struct mroute *e, const struct nlparse_route *pr)
{
	for (unsigned int i = 0; i < e->r.nh_count; i++)
		for (unsigned int j = 0; j < pr->r.nh_count; j++)
			if (hop_same(mroute_nh(e, i), pr->r.nh_count > 1 ? &pr->nhs[j] : &pr->r.nh))
				return 1;
	return 0;
}

/* Same route for the kernel (rt6_duplicate_nexthop): same object, or the same hop. */
static int entry_same(const struct route *a, const struct route *b)
{
	if (a->nhid || b->nhid)
		return a->nhid == b->nhid;
	if (a->nh_count != 1 || b->nh_count != 1)
		return a->nh_count == b->nh_count && a->type == b->type;
	return hop_same(&a->nh, &b->nh);
}

/* ---- tables and positions ---- */

static struct mtable *table_find(const struct mirror *m, uint32_t id)
{
	for (size_t t = 0; t < m->ntables; t++)
		if (m->tables[t].id == id)
			return &m->tables[t];
	return NULL;
}

long mirror_table_ids(const struct mirror *m, uint32_t **out)
{
	uint32_t *ids = malloc((m->ntables ? m->ntables : 1) * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (size_t t = 0; t < m->ntables; t++)
		ids[t] = m->tables[t].id;
	*out = ids;
	return (long)m->ntables;
}

int mirror_has_table(const struct mirror *m, uint32_t id)
{
	return table_find(m, id) != NULL;
}

/*
 * The table id, created if absent: first in its bucket if newest (the kernel links a new
 * table at the head of its hash bucket), else after the tables of its bucket seen so far (a
 * dump lists them in kernel order) but before main and local, which are always the oldest.
 */
static struct mtable *table_get(struct mirror *m, uint32_t id, int newest)
{
	struct mtable *t = table_find(m, id);
	uint32_t b = order_table_bucket(id);
	size_t at;

	if (t)
		return t;
	if (grow((void **)&m->tables, &m->tables_cap, m->ntables, sizeof(*m->tables)))
		return NULL;
	for (at = 0; at < m->ntables; at++) {
		uint32_t tid = m->tables[at].id, tb = order_table_bucket(tid);

		if (newest
			? tb >= b
			: (tb > b || (tb == b && (tid == RT_TABLE_MAIN || tid == RT_TABLE_LOCAL))))
			break;
	}
	memmove(&m->tables[at + 1], &m->tables[at], (m->ntables - at) * sizeof(*m->tables));
	m->ntables++;
	t = &m->tables[at];
	memset(t, 0, sizeof(*t));
	t->id = id;
	return t;
}

int mirror_add_table(struct mirror *m, uint32_t id, int newest)
{
	return table_get(m, id, newest) ? 0 : -ENOMEM;
}

/* The record at p, in an open chunk (open_range(), insert_at()). */
static struct mroute *at(const struct mtable *t, struct mpos p)
{
	return &t->chunks[p.c]->e[p.i];
}

/* The record at p, about to be changed. */
static struct mroute *at_w(struct mtable *t, struct mpos p)
{
	chunk_dirty(t->chunks[p.c]);
	mg_touch(t, p.c);
	t->chunks[p.c]->e[p.i].src = -1;
	return &t->chunks[p.c]->e[p.i];
}

static int pos_end(const struct mtable *t, struct mpos p)
{
	return p.c >= t->nchunks;
}

/* p after the record at it was removed: the same place, or the start of the next chunk. */
static struct mpos pos_fix(const struct mtable *t, struct mpos p)
{
	if (p.c < t->nchunks && p.i >= t->chunks[p.c]->n) {
		p.c++;
		p.i = 0;
	}
	return p;
}

static struct mpos pos_next(const struct mtable *t, struct mpos p)
{
	if (++p.i >= t->chunks[p.c]->n) {
		p.c++;
		p.i = 0;
	}
	return p;
}

/* Ask for what order_key_of() reads of r: its addresses and metric, and the lengths after
 * them (two cache lines). */
static inline void prefetch_key(const struct route *r)
{
	__builtin_prefetch(r);
	__builtin_prefetch(&r->dst_len);
}

/* Whether chunk c's last record is at or past the bound (k, upper); its guide entry is
 * refreshed on the way (the record is read anyway). */
static int chunk_past(struct mtable *t, uint32_t c, const struct order_key *k, int upper)
{
	const struct order_key *l = chunk_last(t->chunks[c]);
	int r = order_key_cmp(l, k);

	if (c < t->nguide)
		t->guide[c] = (struct mguide){ l->a_hi, l->a_lo };
	return upper ? r > 0 : r >= 0;
}

/* The first chunk whose last record is at or past the bound, found through t's guide, or -1
 * when the guide cannot say (see "the search guide" above). */
static int64_t guide_bound(struct mtable *t, const struct order_key *k, int upper)
{
	uint32_t lo = 0, hi, c;

	if (t->nchunks < GUIDE_MIN || (t->nguide != t->nchunks && guide_build(t)))
		return -1;
	hi = t->nguide;
	/* the first entry whose address is not before k's: the chunk with the bound, or one
	 * next to it when keys of one address span chunks or an entry is behind */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct mguide *g = &t->guide[mid];

		if (g->hi < k->a_hi || (g->hi == k->a_hi && g->lo < k->a_lo))
			lo = mid + 1;
		else
			hi = mid;
	}
	c = lo;
	for (int step = 0; step < GUIDE_STEPS; step++) {
		if (c < t->nchunks && !chunk_past(t, c, k, upper))
			c++;
		else if (c > 0 && chunk_past(t, c - 1, k, upper))
			c--;
		else
			return c;
	}
	return -1;
}

/* First position whose key is >= k (upper = 0) or > k (upper = 1), its chunk known to be
 * in [lo, hi] (0 and t->nchunks when not known). */
static struct mpos bound_in(const struct mtable *t, const struct order_key *k, int upper,
			    uint32_t lo, uint32_t hi)
{
	struct mpos p = { 0, 0 };

	/* the first chunk whose last record is not before the bound. Each step reads a chunk
	 * the previous ones did not (a cache miss or two, for every notification at a million
	 * routes): the two it may read next are asked for while this one is compared. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c;

		if (mid > lo)
			__builtin_prefetch(&t->chunks[lo + (mid - lo) / 2]->last);
		if (hi - mid > 1)
			__builtin_prefetch(&t->chunks[mid + 1 + (hi - mid - 1) / 2]->last);
		c = order_key_cmp(chunk_last(t->chunks[mid]), k);

		if (upper ? c <= 0 : c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	p.c = lo;
	if (lo == t->nchunks)
		return p;
	{
		const struct mchunk *ch = t->chunks[lo];
		uint32_t a = 0, b = ch->n;

		while (a < b) {
			uint32_t mid = a + (b - a) / 2;
			struct order_key x;
			int c;

			if (mid > a)
				prefetch_key(chunk_key(ch, a + (mid - a) / 2));
			if (b - mid > 1)
				prefetch_key(chunk_key(ch, mid + 1 + (b - mid - 1) / 2));
			order_key_of(chunk_key(ch, mid), &x);
			c = order_key_cmp(&x, k);
			if (upper ? c <= 0 : c < 0)
				a = mid + 1;
			else
				b = mid;
		}
		p.i = a;
	}
	if (p.i == t->chunks[p.c]->n) { /* cannot happen for the chunk found, but be safe */
		p.c++;
		p.i = 0;
	}
	return p;
}

/* First position whose key is >= k (upper = 0) or > k (upper = 1): through the guide. */
static struct mpos bound(struct mtable *t, const struct order_key *k, int upper)
{
	int64_t g = guide_bound(t, k, upper);

	if (g >= 0) {
		struct mpos p = bound_in(t, k, upper, (uint32_t)g, (uint32_t)g);
#ifdef RTSNAP_POISON
		struct mpos q = bound_in(t, k, upper, 0, t->nchunks);

		if (p.c != q.c || p.i != q.i) {
			log_err("mirror: the search guide led to %u.%u instead of %u.%u", p.c, p.i,
				q.c, q.i);
			abort();
		}
#endif
		return p;
	}
	return bound_in(t, k, upper, 0, t->nchunks);
}

static int pos_eq(struct mpos a, struct mpos b)
{
	return a.c == b.c && a.i == b.i;
}

/* Open the chunks that hold the records of [lo, hi), to read them with at(). 0 or -ENOMEM. */
static int open_range(struct mirror *m, struct mtable *t, struct mpos lo, struct mpos hi)
{
	if (pos_eq(lo, hi))
		return 0;
	for (uint32_t c = lo.c; c < t->nchunks && (c < hi.c || (c == hi.c && hi.i > 0)); c++)
		if (chunk_open(m, t, c))
			return -ENOMEM;
	return 0;
}

/* Insert a clear record at *pp (it may be the end); returns it, or NULL on -ENOMEM. *pp is
 * set to where the record is (a split may move it). */
static struct mroute *insert_at(struct mirror *m, struct mtable *t, struct mpos *pp)
{
	struct mpos p = *pp;
	struct mchunk *ch;

	if (t->nchunks == 0 || (p.c == t->nchunks && t->chunks[p.c - 1]->n == MIRROR_CHUNK)) {
		size_t cap = t->cap;

		if (grow((void **)&t->chunks, &cap, t->nchunks, sizeof(*t->chunks)))
			return NULL;
		t->cap = (uint32_t)cap;
		ch = chunk_new(t, t->nchunks ? MIRROR_CHUNK : CHUNK_FIRST);
		if (!ch)
			return NULL;
		t->chunks[t->nchunks++] = ch;
		mg_insert(t, t->nchunks - 1);
		guide_insert(t, t->nchunks - 1);
		p.c = t->nchunks - 1;
		p.i = 0;
	} else if (p.c == t->nchunks) {
		p.c = t->nchunks - 1;
		p.i = t->chunks[p.c]->n;
	}
	ch = t->chunks[p.c];
	if (chunk_open(m, t, p.c))
		return NULL;
	if (ch->n == MIRROR_CHUNK) {
		/* split in halves; the new chunk takes the upper half */
		struct mchunk *nc = NULL;
		size_t cap = t->cap;
		uint32_t half = MIRROR_CHUNK / 2;

		if (grow((void **)&t->chunks, &cap, t->nchunks, sizeof(*t->chunks)))
			return NULL;
		t->cap = (uint32_t)cap;
		nc = chunk_new(t, CHUNK_SPLIT);
		if (!nc)
			return NULL;
		chunk_dirty(ch);
		nc->prev = ch->prev; /* the moved records' src name records of it */
		if (nc->prev)
			segment_get(nc->prev);
		nc->n = MIRROR_CHUNK - half;
		memcpy(nc->e, &ch->e[half], nc->n * sizeof(ch->e[0]));
		ch->n = half;
		memmove(&t->chunks[p.c + 2], &t->chunks[p.c + 1],
			(t->nchunks - p.c - 1) * sizeof(*t->chunks));
		t->chunks[p.c + 1] = nc;
		t->nchunks++;
		mg_insert(t, p.c + 1);
		guide_insert(t, p.c + 1);
		chunk_resize(t, p.c, CHUNK_SPLIT); /* smaller: a failure keeps the room */
		if (p.i > half) {
			p.c++;
			p.i -= half;
		}
		ch = t->chunks[p.c];
	}
	if (ch->n == ch->cap) {
		uint32_t cap = ch->cap + ch->cap / 2 + 1;

		if (chunk_resize(t, p.c, cap > MIRROR_CHUNK ? MIRROR_CHUNK : cap))
			return NULL;
	}
	chunk_dirty(ch);
	mg_touch(t, p.c);
	memmove(&ch->e[p.i + 1], &ch->e[p.i], (ch->n - p.i) * sizeof(ch->e[0]));
	ch->n++;
	memset(&ch->e[p.i], 0, sizeof(ch->e[0]));
	ch->e[p.i].src = -1;
	t->nroutes++;
	*pp = p;
	return &ch->e[p.i];
}

/*
 * Chunk c of t, small after a removal, takes in the records of the chunk after it, which goes:
 * a table that churns would otherwise keep more and more small chunks (each with its segment,
 * its group entry and their overheads). Only the next chunk joins, so a position a caller holds
 * in chunk c or before stays valid, and one past the end of c's records (pos_fix()) now names
 * the first record that came in. The records that came in are rendered again (their text was
 * in the other chunk's segment). Nothing happens without memory.
 */
static void chunk_merge_next(struct mirror *m, struct mtable *t, uint32_t c)
{
	struct mchunk *ch = t->chunks[c], *nx;
	uint32_t n;

	if (chunk_open(m, t, c + 1) || chunk_resize(t, c, ch->n + t->chunks[c + 1]->n))
		return;
	nx = t->chunks[c + 1];
	n = ch->n;
	chunk_dirty(ch);
	memcpy(&ch->e[n], nx->e, nx->n * sizeof(*nx->e)); /* the records move, with what they own */
	for (uint32_t i = n; i < n + nx->n; i++)
		ch->e[i].src = -1;
	ch->n += nx->n;
	t->slots -= nx->cap;
	chunk_forget(nx);
	earray_free(nx->e);
	free(nx);
	memmove(&t->chunks[c + 1], &t->chunks[c + 2], (t->nchunks - c - 2) * sizeof(*t->chunks));
	t->nchunks--;
	mg_remove(t, c + 1);
	guide_remove(t, c + 1);
	mg_touch(t, c);
}

/* Remove the record at p. 0, or -ENOMEM when its chunk cannot be opened (nothing changed). */
static int remove_at(struct mirror *m, struct mtable *t, struct mpos p)
{
	struct mchunk *ch = t->chunks[p.c];

	if (chunk_open(m, t, p.c))
		return -ENOMEM;
	chunk_dirty(ch);
	mg_touch(t, p.c);
	mroute_clear(m, &ch->e[p.i]);
	memmove(&ch->e[p.i], &ch->e[p.i + 1], (ch->n - p.i - 1) * sizeof(ch->e[0]));
	ch->n--;
	t->nroutes--;
	m->nroutes--;
	if (ch->n == 0) {
		t->slots -= ch->cap;
		chunk_forget(ch);
		earray_free(ch->e);
		free(ch);
		memmove(&t->chunks[p.c], &t->chunks[p.c + 1],
			(t->nchunks - p.c - 1) * sizeof(*t->chunks));
		t->nchunks--;
		mg_remove(t, p.c);
		guide_remove(t, p.c);
	} else if (ch->n < CHUNK_MERGE && p.c + 1 < t->nchunks &&
		   ch->n + t->chunks[p.c + 1]->n <= CHUNK_MERGED) {
		chunk_merge_next(m, t, p.c);
	} else if (ch->n < ch->cap / 2 && ch->cap > CHUNK_FIRST) {
		/* the chunk may move: callers hold positions, not pointers */
		chunk_resize(t, p.c,
			     ch->n + ch->n / 4 > CHUNK_FIRST ? ch->n + ch->n / 4 : CHUNK_FIRST);
	}
	return 0;
}

/* Insert a record for r at *pp (a position between routes of other keys or after its
 * equals); *pp is set to where it is. */
static int insert_route_at(struct mirror *m, struct mtable *t, struct mpos *pp,
			   const struct route *r, const struct route_nh *nhs,
			   const struct route_metrics *met)
{
	struct mroute *e = insert_at(m, t, pp);

	if (!e)
		return -ENOMEM;
	m->nroutes++;
	if (mroute_set(m, e, r, nhs, met)) {
		remove_at(m, t, *pp); /* its chunk is open */
		return -ENOMEM;
	}
	return 0;
}

static int insert_route(struct mirror *m, struct mtable *t, struct mpos p, const struct route *r,
			const struct route_nh *nhs, const struct route_metrics *met)
{
	return insert_route_at(m, t, &p, r, nhs, met);
}

static void equal_range(struct mtable *t, const struct route *r, struct mpos *lo, struct mpos *hi);

/* Whether e is the route of dump message pr again (same identity, same first hop). */
static int dump_repeat(const struct mroute *e, const struct nlparse_route *pr)
{
	if (!entry_same(&e->r, &pr->r))
		return 0;
	return pr->r.nh_count > 1 ? hop_same(&e->nhs[0], &pr->nhs[0]) : 1;
}

/* ---- where a dump may have skipped routes ---- */

static int gap_push(struct mirror *m, uint32_t table, const struct order_key *lo,
		    const struct order_key *hi)
{
	struct mgap *g;

	if (grow((void **)&m->gaps, &m->gaps_cap, m->ngaps, sizeof(*m->gaps)))
		return -ENOMEM;
	g = &m->gaps[m->ngaps++];
	memset(g, 0, sizeof(*g));
	g->table = table;
	g->lo_open = !lo;
	g->hi_open = !hi;
	if (lo)
		g->lo = *lo;
	if (hi)
		g->hi = *hi;
	return 0;
}

void mirror_load_gap(struct mirror *m)
{
	m->gap_next = 1;
}

/* The dump goes on at (table, k) after a datagram boundary. */
static int gap_close(struct mirror *m, uint32_t table, const struct order_key *k)
{
	if (!m->have_last)
		return 0;
	if (table != m->last_table) {
		/* the rest of the last table, and the start of this one */
		if (gap_push(m, m->last_table, &m->last_key, NULL))
			return -ENOMEM;
		return gap_push(m, table, NULL, k);
	}
	/* resumed before its last route (repeats): nothing was skipped */
	if (order_key_cmp(k, &m->last_key) < 0)
		return 0;
	return gap_push(m, table, &m->last_key, k);
}

static int gap_cmp(const void *x, const void *y)
{
	const struct mgap *a = x, *b = y;

	if (a->table != b->table)
		return a->table < b->table ? -1 : 1;
	if (a->lo_open != b->lo_open)
		return a->lo_open ? -1 : 1;
	return a->lo_open ? 0 : order_key_cmp(&a->lo, &b->lo);
}

int mirror_load_end(struct mirror *m, int keep)
{
	size_t k = 0;

	if (!keep) {
		free(m->gaps);
		m->gaps = NULL;
		m->ngaps = m->gaps_cap = 0;
		m->have_last = m->gap_next = m->redump = 0;
		return 0;
	}
	if (m->have_last && gap_push(m, m->last_table, &m->last_key, NULL))
		return -ENOMEM;
	m->have_last = m->gap_next = m->redump = 0;
	if (!m->ngaps)
		return 0;
	/* sorted by table and start; overlapping ones joined, so a lookup is one search */
	qsort(m->gaps, m->ngaps, sizeof(*m->gaps), gap_cmp);
	for (size_t i = 1; i < m->ngaps; i++) {
		struct mgap *g = &m->gaps[k], *n = &m->gaps[i];

		if (n->table == g->table &&
		    (g->hi_open || n->lo_open || order_key_cmp(&n->lo, &g->hi) <= 0)) {
			if (!g->hi_open && (n->hi_open || order_key_cmp(&n->hi, &g->hi) > 0)) {
				g->hi_open = n->hi_open;
				g->hi = n->hi;
			}
			continue;
		}
		m->gaps[++k] = *n;
	}
	m->ngaps = k + 1;
	return 0;
}

/* Whether dump d may have skipped routes of key k in table (after mirror_load_end()). */
static int in_gap(const struct mirror *d, uint32_t table, const struct order_key *k)
{
	size_t lo = 0, hi = d->ngaps;
	const struct mgap *g;

	/* the last gap that starts at or before (table, k) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mgap *x = &d->gaps[mid];
		int c = x->table != table ? (x->table < table ? -1 : 1)
			: x->lo_open	  ? -1
					  : order_key_cmp(&x->lo, k);

		if (c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	g = &d->gaps[lo - 1];
	return g->table == table && (g->hi_open || order_key_cmp(k, &g->hi) <= 0);
}

int mirror_load_route(struct mirror *m, const struct nlparse_route *pr)
{
	const struct route *r = &pr->r;
	struct mtable *t = table_get(m, r->table, 0);
	struct order_key k, last;
	struct mpos p;
	int boundary = m->gap_next;

	if (!t)
		return -ENOMEM;
	order_key_of(r, &k);
	if (m->gap_next && gap_close(m, r->table, &k))
		return -ENOMEM;
	m->gap_next = 0;
	m->have_last = 1;
	m->last_table = r->table;
	m->last_key = k;
	p.c = t->nchunks;
	p.i = 0;
	if (t->nchunks) {
		int c;

		last = *chunk_last(t->chunks[t->nchunks - 1]);
		c = order_key_cmp(&last, &k);
		if (c != 0)
			m->redump = 0;
		else if (boundary)
			m->redump = 1;
		if (c > 0 || m->redump) {
			/* a dump taken while routes change can list a route twice (an IPv6 dump
			 * restarts its walk at a node and sets no NLM_F_DUMP_INTR): a route that
			 * comes after routes of a later key, and that the mirror already has, is
			 * the same route again. So is one of the last key at the start of a
			 * datagram (mirror_load_gap()), and the routes of that key after it: a
			 * restart lists a node again from its first route. (Otherwise equal keys
			 * in a row can be two identical routes: the kernel appends a route that is
			 * not ECMP-able even when one just like it exists.) */
			struct mpos lo, hi, q;

			equal_range(t, r, &lo, &hi);
			if (open_range(m, t, lo, hi))
				return -ENOMEM;
			for (q = lo; !pos_eq(q, hi); q = pos_next(t, q))
				if (dump_repeat(at(t, q), pr))
					return mroute_set(m, at_w(t, q), r, pr->nhs,
							  pr->has_metrics ? &pr->m : NULL);
		}
		if (c > 0) {
			log_debug("dump order differs from the key order in table %u", r->table);
			p = bound(t, &k, 1);
		}
	}
	return insert_route(m, t, p, r, pr->nhs, pr->has_metrics ? &pr->m : NULL);
}

/* ---- notifications ---- */

/* Records of one key met in a row before equal_range() searches for the end of the run. */
#define RUN_STEPS 8

/*
 * The routes of r's node and metric: [*lo, *hi). The end is found by stepping from the start
 * over the records of that key (none or one or two, almost always: a second search would read
 * as many chunks again, for every notification); a longer run is searched for.
 */
static void equal_range(struct mtable *t, const struct route *r, struct mpos *lo, struct mpos *hi)
{
	struct order_key k, x;
	struct mpos p;
	int step;

	order_key_of(r, &k);
	*lo = p = bound(t, &k, 0);
	for (step = 0; step < RUN_STEPS && !pos_end(t, p); step++) {
		order_key_of(chunk_key(t->chunks[p.c], p.i), &x);
		if (order_key_cmp(&x, &k) != 0)
			break;
		p = pos_next(t, p);
	}
	if (step == RUN_STEPS)
		p = bound(t, &k, 1);
#ifdef RTSNAP_POISON
	{
		struct mpos q = bound_in(t, &k, 1, 0, t->nchunks);

		if (!pos_eq(p, q)) {
			log_err("mirror: the run of a key ends at %u.%u, not %u.%u", p.c, p.i, q.c,
				q.i);
			abort();
		}
	}
#endif
	*hi = p;
}

/* The attributes of hop i of e: its own where e keeps them, else the record's. */
static void hop_attrs(const struct mroute *e, unsigned int i, struct route_sib *s)
{
	if (e->sib)
		*s = e->sib[i];
	else
		route_sib_of(s, &e->r, e->m);
}

/*
 * e's hops are final and att[0..nh_count) are their attributes (att[0] the record's): keep
 * them in e->sib when they differ, and mark each hop's proc bits (route_nh.sib), or drop them
 * when they are all the same. att is taken (kept or freed).
 */
static void set_sibs(struct mirror *m, struct mroute *e, struct route_sib *att)
{
	unsigned int n = e->r.nh_count, differ = 0;

	if (e->sib) {
		m->extra_bytes -= n * sizeof(*e->sib);
		free(e->sib);
		e->sib = NULL;
	}
	for (unsigned int i = 1; n > 1 && i < n && !differ; i++)
		differ = !route_sib_equal(&att[0], &att[i]);
	for (unsigned int i = 0; n > 1 && i < n; i++)
		e->nhs[i].sib = (uint8_t)((e->nhs[i].sib & ROUTE_SIB_OWN) |
					  (differ ? route_sib_bits(&att[i]) : 0));
	if (!differ) {
		free(att);
		return;
	}
	e->sib = att;
	m->extra_bytes += n * sizeof(*att);
}

/* A group added whole (one route message for all its hops): every hop has the record's
 * attributes, known. */
static void mark_own(struct mroute *e)
{
	for (unsigned int i = 0; e->r.nh_count > 1 && i < e->r.nh_count; i++)
		e->nhs[i].sib = ROUTE_SIB_OWN;
}

/*
 * Join the hops of pr (the whole group as the kernel now has it) into group e: e's hops keep
 * their order, with pr's data; hops only pr has go last, in pr's order.
 *
 * Protocol, preference, expiry, metrics and preferred source are per sibling in the kernel: a
 * message carries those of the route it names (its first hop: an appended sibling, or for a
 * dump the group's first), so that hop takes them; the others keep their own (siblings.h).
 * Hops the group lacked take the message's too: an append's new hops come from its one
 * configuration (notify); a dump's are only guessed, and stay unknown. The record's
 * attributes are its first hop's.
 */
static int merge_group(struct mirror *m, struct mroute *e, const struct nlparse_route *pr,
		       int notify)
{
	unsigned int n = pr->r.nh_count, k = 0;
	const struct route_nh *in = pr->r.nh_count > 1 ? pr->nhs : &pr->r.nh;
	struct route_nh *out = malloc((n ? n : 1) * sizeof(*out));
	struct route_sib *att = malloc((n ? n : 1) * sizeof(*att));
	unsigned char *used = calloc(n ? n : 1, 1);
	struct route r = pr->r;
	struct route_metrics met;
	struct route_sib msg;
	int has_met, ret;

	if (!out || !used || !att) {
		free(out);
		free(used);
		free(att);
		return -ENOMEM;
	}
	route_sib_of(&msg, &pr->r, pr->has_metrics ? &pr->m : NULL);
	for (unsigned int i = 0, next = 0; i < e->r.nh_count; i++) {
		const struct route_nh *h = mroute_nh(e, i);

		/* the kernel keeps its siblings in order (an append goes last), so hop i is
		 * almost always the message's next one: a group of k hops costs O(k), not the
		 * O(k^2) of a search per hop, which thousands of appends to one route make
		 * O(k^3) */
		for (unsigned int t = 0; t < n; t++) {
			unsigned int j = next + t < n ? next + t : next + t - n;

			if (!used[j] && hop_same(h, &in[j])) {
				used[j] = 1;
				next = j + 1 < n ? j + 1 : 0;
				out[k] = in[j];
				if (j == 0) {
					att[k] = msg;
					out[k].sib = ROUTE_SIB_OWN;
				} else {
					hop_attrs(e, i, &att[k]);
					out[k].sib =
					    i == 0 || (h->sib & ROUTE_SIB_OWN) ? ROUTE_SIB_OWN : 0;
				}
				k++;
				break;
			}
		}
	}
	for (unsigned int j = 0; j < n; j++) {
		if (used[j])
			continue;
		out[k] = in[j];
		att[k] = msg;
		out[k].sib = notify || j == 0 ? ROUTE_SIB_OWN : 0;
		k++;
	}
	has_met = route_sib_apply(&att[0], &r, &met);
	if (e->r.nh_count && !hop_same(&out[0], &in[0]))
		r.rtm_flags = (e->r.rtm_flags & ~0xffu) | (r.rtm_flags & 0xffu);
	if (k == 1) {
		r.nh = out[0];
		r.nh.sib = 0;
		r.nh_count = 1;
		r.rtm_flags = (r.rtm_flags & ~0xffu) | out[0].flags;
	}
	r.mpath_one = k == 1 ? pr->r.mpath_one : 0;
	ret = mroute_set(m, e, &r, out, has_met ? &met : NULL);
	if (!ret)
		set_sibs(m, e, att);
	else
		free(att);
	free(out);
	free(used);
	return ret;
}

static const struct route_metrics *pr_metrics(const struct nlparse_route *pr)
{
	return pr->has_metrics ? &pr->m : NULL;
}

/* Insert the route a notification announced at p: a group is added whole (mark_own()). */
static int insert_announced(struct mirror *m, struct mtable *t, struct mpos p,
			    const struct nlparse_route *pr, struct mirror_delta *d)
{
	int ret = insert_route_at(m, t, &p, &pr->r, pr->nhs, pr_metrics(pr));

	if (ret)
		return ret;
	mark_own(at(t, p));
	d->added++;
	return 0;
}

static int apply_new(struct mirror *m, const struct nlparse_route *pr, uint16_t nlflags,
		     int update_only, struct mirror_delta *d)
{
	const struct route *r = &pr->r;
	struct mtable *t = table_get(m, r->table, 1);
	struct mpos lo, hi, p, pick = { UINT32_MAX, 0 }, fallback = { UINT32_MAX, 0 };
	int ecmp = ecmp_able(m, r), ret;

	if (!t)
		return -ENOMEM;
	equal_range(t, r, &lo, &hi);
	if (open_range(m, t, lo, hi))
		return -ENOMEM;
	if (nlflags & NLM_F_REPLACE) {
		/* routes the kernel updates in place announce themselves with NLM_F_REPLACE too
		 * (nexthop object replaced, RA preference changed): those are found by identity */
		int inplace =
		    ra_learned(m, r) || (r->nhid && m->reannounce_id &&
					 (r->nhid == m->reannounce_id || is_group_id(m, r->nhid)));

		if (!(r->nhid && m->reannounce_id))
			m->reannounce_id = 0;
		if (inplace)
			for (p = lo; !pos_eq(p, hi); p = pos_next(t, p))
				if (entry_same(&at(t, p)->r, r)) {
					pick = p;
					break;
				}
		for (p = lo; pick.c == UINT32_MAX && !pos_eq(p, hi); p = pos_next(t, p)) {
			if (ecmp_able(m, &at(t, p)->r) == ecmp)
				pick = p;
			else if (fallback.c == UINT32_MAX)
				fallback = p;
		}
		if (pick.c == UINT32_MAX)
			pick = fallback;
		if (pick.c != UINT32_MAX) {
			struct mroute *e = at_w(t, pick);
			uint64_t fp0 = fingerprint_e(e);
			int64_t exp0 = e->r.expires_ms;

			ret = mroute_set(m, e, r, pr->nhs, pr_metrics(pr));
			if (!ret) {
				mark_own(e); /* a replaced group is added whole */
				count_change(d, e, fp0, exp0);
			}
			return ret;
		}
		return insert_announced(m, t, hi, pr, d);
	}
	m->reannounce_id = 0;
	/* a group announcement: the group it shares a hop with, whatever we thought of its kind
	 * (a route user space added with proto ra and a link-local gateway is ECMP-able) */
	for (p = lo; r->nh_count > 1 && !pos_eq(p, hi); p = pos_next(t, p)) {
		struct mroute *e = at(t, p);

		if (!e->r.nhid && shares_hop(e, pr)) {
			uint64_t fp0 = fingerprint_e(e);
			int64_t exp0 = e->r.expires_ms;

			e = at_w(t, p);
			ret = merge_group(m, e, pr, !update_only);
			if (!ret)
				count_change(d, e, fp0, exp0);
			return ret;
		}
	}
	for (p = lo; !pos_eq(p, hi); p = pos_next(t, p)) {
		struct mroute *e = at(t, p);

		uint64_t fp0 = fingerprint_e(e);
		int64_t exp0 = e->r.expires_ms;

		if (ecmp && ecmp_able(m, &e->r)) {
			e = at_w(t, p);
			ret = merge_group(m, e, pr, !update_only);
			if (!ret)
				count_change(d, e, fp0, exp0);
			return ret;
		}
		if (!ecmp && entry_same(&e->r, r)) {
			/* the same route: RTF_PREFIX_RT (known only from RTM_F_PREFIX dumps) stays */
			uint8_t pfx = e->r.prefix_rt;

			e = at_w(t, p);
			ret = mroute_set(m, e, r, pr->nhs, pr_metrics(pr));
			if (!ret) {
				e->r.prefix_rt |= pfx;
				count_change(d, e, fp0, exp0);
			}
			return ret;
		}
	}
	if (update_only)
		return 0;
	return insert_announced(m, t, hi, pr, d);
}

int mirror_apply_new(struct mirror *m, const struct nlparse_route *pr, uint16_t nlflags,
		     struct mirror_delta *d)
{
	return apply_new(m, pr, nlflags, 0, d);
}

int mirror_apply_update(struct mirror *m, const struct nlparse_route *pr, struct mirror_delta *d)
{
	if (!table_find(m, pr->r.table))
		return 0;
	return apply_new(m, pr, 0, 1, d);
}

/* Routes of (table, oif) to re-read: a group's first hop went and the survivor's own
 * attributes are not known. */
static void want_reread(struct mirror *m, uint32_t table, uint32_t oif, uint32_t why)
{
	for (size_t i = 0; i < m->nrr; i++)
		if (m->rr[3 * i] == table && m->rr[3 * i + 1] == oif && m->rr[3 * i + 2] == why)
			return;
	if (grow((void **)&m->rr, &m->rr_cap, m->nrr, 3 * sizeof(*m->rr)))
		return; /* the next resync will tell */
	m->rr[3 * m->nrr] = table;
	m->rr[3 * m->nrr + 1] = oif;
	m->rr[3 * m->nrr + 2] = why;
	m->nrr++;
}

long mirror_take_rereads(struct mirror *m, uint32_t **out)
{
	long n = (long)m->nrr;

	*out = m->rr;
	m->rr = NULL;
	m->nrr = m->rr_cap = 0;
	return n;
}

/*
 * Remove hop i from group e (nh_count > 1); a group left with one hop becomes a plain route.
 * When the first hop goes, the next takes its place and the record takes that sibling's own
 * attributes (the kernel shows the survivor with its own protocol, preference, expiry,
 * metrics and source): from e->sib, or the record's when the siblings did not differ. When
 * they are not known (a dump, which tells only the first sibling's, built the group) the
 * survivor's routes are queued for a re-read (mirror_take_rereads()).
 */
static void group_drop_hop(struct mirror *m, struct mroute *e, unsigned int i)
{
	struct route_nh *nhs = e->nhs;
	unsigned int n = e->r.nh_count;

	if (i == 0 && e->sib) {
		struct route_metrics met;

		if (route_sib_apply(&e->sib[1], &e->r, &met)) {
			if (!e->m && (e->m = malloc(sizeof(*e->m))))
				m->extra_bytes += sizeof(*e->m);
			if (e->m)
				*e->m = met;
			else
				want_reread(m, e->r.table, nhs[1].ifindex, MIRROR_REREAD_SIBLING);
		} else if (e->m) {
			m->extra_bytes -= sizeof(*e->m);
			free(e->m);
			e->m = NULL;
		}
	}
	if (i == 0 && !(nhs[1].sib & ROUTE_SIB_OWN))
		want_reread(m, e->r.table, nhs[1].ifindex, MIRROR_REREAD_SIBLING);
	if (e->sib) {
		memmove(&e->sib[i], &e->sib[i + 1], (n - i - 1) * sizeof(*e->sib));
		m->extra_bytes -= sizeof(*e->sib);
	}
	if (n == 2) {
		struct route r = e->r;

		r.nh = nhs[1 - i];
		r.nh.sib = 0;
		r.nh_count = 1;
		r.rtm_flags = (r.rtm_flags & ~0xffu) | r.nh.flags;
		r.mpath_one = 0;
		e->nhs = NULL;
		m->extra_bytes -= 2 * sizeof(*nhs);
		free(nhs);
		if (e->sib) {
			m->extra_bytes -= sizeof(*e->sib);
			free(e->sib);
			e->sib = NULL;
		}
		e->r = r;
		return;
	}
	memmove(&nhs[i], &nhs[i + 1], (n - i - 1) * sizeof(*nhs));
	e->r.nh_count--;
	m->extra_bytes -= sizeof(*nhs);
	if (e->sib) {
		/* the rest may all be alike now */
		struct route_sib *att = malloc(e->r.nh_count * sizeof(*att));

		if (att) {
			memcpy(att, e->sib, e->r.nh_count * sizeof(*att));
			set_sibs(m, e, att);
		}
	}
}

/* Delete one hop h (or the route, for a plain one) among the routes of r's node and metric. */
static int del_one(struct mirror *m, struct mtable *t, const struct route *r,
		   const struct route_nh *h, struct mirror_delta *d)
{
	struct mpos lo, hi, p;

	equal_range(t, r, &lo, &hi);
	if (open_range(m, t, lo, hi))
		return -ENOMEM;
	for (p = lo; !pos_eq(p, hi); p = pos_next(t, p)) {
		struct mroute *e = at(t, p);

		if (r->nhid || e->r.nhid) {
			if (e->r.nhid != r->nhid)
				continue;
		} else if (e->r.nh_count > 1) {
			for (unsigned int i = 0; h && i < e->r.nh_count; i++) {
				if (hop_same(&e->nhs[i], h)) {
					d->changed++;
					group_drop_hop(m, at_w(t, p), i);
					return 0;
				}
			}
			continue;
		} else if (h ? !(e->r.nh_count == 1 && hop_same(&e->r.nh, h))
			     : !(e->r.nh_count == 0 && e->r.type == r->type)) {
			continue;
		}
		d->removed++;
		return remove_at(m, t, p);
	}
	d->unknown++;
	return 0;
}

int mirror_apply_del(struct mirror *m, const struct nlparse_route *pr, struct mirror_delta *d)
{
	const struct route *r = &pr->r;
	struct mtable *t = table_find(m, r->table);
	int ret = 0;

	m->reannounce_id = 0;
	if (!t) {
		d->unknown++;
		return 0;
	}
	if (r->nhid)
		return del_one(m, t, r, NULL, d);
	if (r->nh_count > 1) {
		for (unsigned int i = 0; !ret && i < r->nh_count; i++)
			ret = del_one(m, t, r, &pr->nhs[i], d);
		return ret;
	}
	return del_one(m, t, r, r->nh_count == 1 ? &r->nh : NULL, d);
}

/* ---- links ---- */

static size_t link_pos(const struct mirror *m, uint32_t ifindex)
{
	size_t lo = 0, hi = m->nlinks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->links[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h; net/if.h does not define it */
#endif
#define LINK_STATE_FLAGS (IFF_UP | IFF_RUNNING | IFF_LOWER_UP)

int mirror_set_link(struct mirror *m, const struct route_link *l)
{
	size_t i = link_pos(m, l->ifindex);
	int what = 0;

	if (i < m->nlinks && m->links[i].ifindex == l->ifindex) {
		struct route_link *o = &m->links[i];

		if (strcmp(o->name, l->name))
			what |= MIRROR_LINK_RENAMED;
		if ((o->flags ^ l->flags) & LINK_STATE_FLAGS)
			what |= MIRROR_LINK_STATE;
		if (o->mtu != l->mtu && l->mtu)
			what |= MIRROR_LINK_MTU;
		if ((what & MIRROR_LINK_RENAMED) || ((o->flags ^ l->flags) & IFF_LOOPBACK))
			m->ctx_epoch++; /* what routes over it print */
		*o = *l;
		return what;
	}
	if (grow((void **)&m->links, &m->links_cap, m->nlinks, sizeof(*m->links)))
		return -ENOMEM;
	memmove(&m->links[i + 1], &m->links[i], (m->nlinks - i) * sizeof(*m->links));
	m->links[i] = *l;
	m->nlinks++;
	m->ctx_epoch++;
	return MIRROR_LINK_NEW;
}

static const struct route_link *link_of(const struct mirror *m, uint32_t ifindex)
{
	size_t i = link_pos(m, ifindex);

	return i < m->nlinks && m->links[i].ifindex == ifindex ? &m->links[i] : NULL;
}

long mirror_prefsrc_gone(struct mirror *m, const uint8_t addr[16])
{
	long n = 0;

	for (size_t ti = 0; ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];

		for (uint32_t c = 0; c < t->nchunks; c++) {
			struct mchunk *ch = t->chunks[c];

			for (uint32_t i = 0; i < ch->n; i++) {
				struct route tmp;
				/* with its hops: an open chunk's record keeps them apart */
				const struct route *r = chunk_view(ch, i, &tmp);

				if (r->nhid)
					continue;
				if (r->has_prefsrc && !memcmp(r->prefsrc, addr, 16)) {
					want_reread(m, r->table,
						    r->nh_count ? route_nh(r, 0)->ifindex : 0,
						    MIRROR_REREAD_PREFSRC);
					n++;
				}
				/* siblings apart: only in open chunks (a closed one has none) */
				for (unsigned int h = 0; ch->e && ch->e[i].sib && h < r->nh_count;
				     h++) {
					struct route_sib *s = &ch->e[i].sib[h];

					if (s->has_prefsrc && !memcmp(s->prefsrc, addr, 16)) {
						s->has_prefsrc = 0;
						memset(s->prefsrc, 0, 16);
						n++;
					}
				}
			}
		}
	}
	return n;
}

void mirror_forget_siblings(struct mirror *m, uint32_t ifindex)
{
	for (size_t ti = 0; ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];

		for (struct mpos p = { 0, 0 }; !pos_end(t, p); p = pos_next(t, p)) {
			struct route tmp;
			const struct route *v = chunk_view(t->chunks[p.c], p.i, &tmp);
			int hit = 0;
			struct mroute *e;

			for (unsigned int h = 1; !v->nhid && v->nh_count > 1 && h < v->nh_count;
			     h++)
				hit |=
				    v->nhs[h].ifindex == ifindex && (v->nhs[h].sib & ROUTE_SIB_OWN);
			if (!hit || chunk_open(m, t, p.c))
				continue; /* out of memory: a later resync corrects the survivor */
			e = at_w(t, p);	  /* the segment's copy of the bits goes too */
			for (unsigned int h = 1; h < e->r.nh_count; h++)
				if (e->nhs[h].ifindex == ifindex)
					e->nhs[h].sib &= (uint8_t)~ROUTE_SIB_OWN;
		}
	}
}

int mirror_link_has_nhobj(const struct mirror *m, uint32_t ifindex)
{
	for (size_t i = 0; i < m->nnhobjs; i++)
		if (!m->nhobjs[i].is_group && m->nhobjs[i].ifindex == ifindex)
			return 1;
	return 0;
}

void mirror_flush_link_nhobjs(struct mirror *m, uint32_t ifindex, struct mirror_delta *d)
{
	for (size_t k = 0; k < m->nnhobjs;) {
		if (!m->nhobjs[k].is_group && !m->nhobjs[k].blackhole &&
		    m->nhobjs[k].ifindex == ifindex)
			mirror_del_nhobj(m, m->nhobjs[k].id, d);
		else
			k++;
	}
}

void mirror_del_link(struct mirror *m, uint32_t ifindex, struct mirror_delta *d)
{
	size_t i = link_pos(m, ifindex);

	/* the kernel flushes the nexthop objects on the device and the routes over them, without
	 * RTM_DELNEXTHOP, and without RTM_DELROUTE when nexthop_compat_mode is 0 */
	mirror_flush_link_nhobjs(m, ifindex, d);
	if (i < m->nlinks && m->links[i].ifindex == ifindex) {
		memmove(&m->links[i], &m->links[i + 1], (m->nlinks - i - 1) * sizeof(*m->links));
		m->nlinks--;
		m->ctx_epoch++;
	}
	for (size_t ti = 0; ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];
		struct mpos p = { 0, 0 };

		while (!pos_end(t, p)) {
			struct route tmp;
			const struct route *v = chunk_view(t->chunks[p.c], p.i, &tmp);
			struct mroute *e;
			int gone = 0, hit = 0;

			for (unsigned int h = 0; !v->nhid && h < v->nh_count && !hit; h++)
				hit = route_nh(v, h)->ifindex == ifindex;
			if (hit && chunk_open(m, t, p.c)) {
				log_warn(
				    "out of memory: routes over deleted link %u kept until the "
				    "next resync",
				    ifindex);
				hit = 0;
			}
			if (!hit) {
				p = pos_next(t, p);
				continue;
			}
			e = at(t, p);
			if (e->r.nhid) {
				/* routes over nexthop objects go with the object */
			} else if (e->r.nh_count > 1) {
				for (unsigned int h = 0; h < e->r.nh_count;) {
					if (e->nhs[h].ifindex == ifindex && e->r.nh_count > 1) {
						group_drop_hop(m, at_w(t, p), h);
						d->changed++;
						if (e->r.nh_count == 1)
							break;
					} else {
						h++;
					}
				}
				gone = e->r.nh_count == 1 && e->r.nh.ifindex == ifindex;
			} else {
				gone = e->r.nh_count == 1 && e->r.nh.ifindex == ifindex;
			}
			if (gone && !remove_at(m, t, p)) {
				d->removed++;
				p = pos_fix(t, p); /* p now names the next record */
				continue;
			}
			p = pos_next(t, p);
		}
	}
}

/* ---- nexthop objects ---- */

static size_t nhobj_pos(const struct mirror *m, uint32_t id)
{
	size_t lo = 0, hi = m->nnhobjs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->nhobjs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int mirror_set_nhobj(struct mirror *m, const struct route_nhobj *o)
{
	size_t i = nhobj_pos(m, o->id);

	if (i < m->nnhobjs && m->nhobjs[i].id == o->id) {
		m->reannounce_id = o->id;
		if (!memcmp(&m->nhobjs[i], o, sizeof(*o)))
			return 0;
		m->nhobjs[i] = *o;
		m->ctx_epoch++;
		return 1;
	}
	if (grow((void **)&m->nhobjs, &m->nhobjs_cap, m->nnhobjs, sizeof(*m->nhobjs)))
		return -ENOMEM;
	memmove(&m->nhobjs[i + 1], &m->nhobjs[i], (m->nnhobjs - i) * sizeof(*m->nhobjs));
	m->nhobjs[i] = *o;
	m->nnhobjs++;
	m->ctx_epoch++;
	return 1;
}

void mirror_clear_nhobjs(struct mirror *m)
{
	m->nnhobjs = 0;
	m->ctx_epoch++;
}

/* Remove every route for which drop(m, route, arg) is true. */
static void remove_if(struct mirror *m,
		      int (*drop)(const struct mirror *, const struct route *, uint32_t),
		      uint32_t arg, struct mirror_delta *d)
{
	for (size_t ti = 0; ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];
		struct mpos p = { 0, 0 };

		while (!pos_end(t, p)) {
			struct route tmp;

			if (drop(m, chunk_view(t->chunks[p.c], p.i, &tmp), arg) &&
			    !remove_at(m, t, p)) {
				d->removed++;
				p = pos_fix(t, p);
				continue;
			}
			p = pos_next(t, p);
		}
	}
}

/* Over a nexthop object the mirror does not have. */
static int over_unknown_nhobj(const struct mirror *m, const struct route *r, uint32_t unused)
{
	size_t k = nhobj_pos(m, r->nhid);

	(void)unused;
	return r->nhid && !(k < m->nnhobjs && m->nhobjs[k].id == r->nhid);
}

/* Over nexthop object id. */
static int over_nhobj(const struct mirror *m, const struct route *r, uint32_t id)
{
	(void)m;
	return r->nhid == id;
}

void mirror_prune_nhid_routes(struct mirror *m, struct mirror_delta *d)
{
	remove_if(m, over_unknown_nhobj, 0, d);
}

int mirror_has_groups(const struct mirror *m)
{
	for (size_t i = 0; i < m->nnhobjs; i++)
		if (m->nhobjs[i].is_group)
			return 1;
	return 0;
}

static int is_group_id(const struct mirror *m, uint32_t id)
{
	size_t i = nhobj_pos(m, id);

	return i < m->nnhobjs && m->nhobjs[i].id == id && m->nhobjs[i].is_group;
}

int mirror_knows_nhobj(const struct mirror *m, uint32_t id)
{
	size_t i = nhobj_pos(m, id);

	return i < m->nnhobjs && m->nhobjs[i].id == id;
}

int mirror_has_nhobjs(const struct mirror *m)
{
	return m->nnhobjs != 0;
}

/* Tables with a route over a nexthop object (groups only: group_only). */
static long nhid_tables(const struct mirror *m, int group_only, uint32_t **out)
{
	uint32_t *ids = malloc((m->ntables ? m->ntables : 1) * sizeof(*ids));
	long n = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t ti = 0; ti < m->ntables; ti++) {
		const struct mtable *t = &m->tables[ti];
		int hit = 0;

		for (uint32_t c = 0; c < t->nchunks && !hit; c++)
			for (uint32_t i = 0; i < t->chunks[c]->n && !hit; i++)
				hit = chunk_key(t->chunks[c], i)->nhid &&
				      (!group_only ||
				       is_group_id(m, chunk_key(t->chunks[c], i)->nhid));
		if (hit)
			ids[n++] = t->id;
	}
	*out = ids;
	return n;
}

long mirror_group_tables(const struct mirror *m, uint32_t **out)
{
	return nhid_tables(m, 1, out);
}

long mirror_nhid_tables(const struct mirror *m, uint32_t **out)
{
	return nhid_tables(m, 0, out);
}

void mirror_del_nhobj(struct mirror *m, uint32_t id, struct mirror_delta *d)
{
	size_t i = nhobj_pos(m, id);

	if (i < m->nnhobjs && m->nhobjs[i].id == id) {
		memmove(&m->nhobjs[i], &m->nhobjs[i + 1],
			(m->nnhobjs - i - 1) * sizeof(*m->nhobjs));
		m->nnhobjs--;
		m->ctx_epoch++;
	}
	remove_if(m, over_nhobj, id, d);
}

long mirror_ra_links(const struct mirror *m, uint32_t **out)
{
	uint32_t *p = NULL;
	size_t n = 0, cap = 0;

	for (size_t ti = 0; ti < m->ntables; ti++) {
		const struct mtable *t = &m->tables[ti];

		for (uint32_t c = 0; c < t->nchunks; c++) {
			const struct mchunk *ch = t->chunks[c];

			/* a closed chunk's segment counted them: a large table of other routes
			 * costs a pass over its chunks, not over its routes */
			if (!ch->e && !ch->sum.nra)
				continue;
			for (uint32_t i = 0; i < ch->n; i++) {
				const struct route *r = chunk_key(ch, i);
				size_t k;

				if (!ra_learned(m, r))
					continue;
				for (k = 0; k < n; k++)
					if (p[2 * k] == r->table && p[2 * k + 1] == r->nh.ifindex)
						break;
				if (k < n)
					continue;
				if (grow((void **)&p, &cap, n, 2 * sizeof(*p))) {
					free(p);
					return -ENOMEM;
				}
				p[2 * n] = r->table;
				p[2 * n + 1] = r->nh.ifindex;
				n++;
			}
		}
	}
	*out = p;
	return (long)n;
}

/* ---- RTF_PREFIX_RT ---- */

static int pfx_same(const struct prefix_key *a, const struct prefix_key *b)
{
	return a->table == b->table && a->metric == b->metric && a->ifindex == b->ifindex &&
	       a->dst_len == b->dst_len && a->src_len == b->src_len &&
	       !memcmp(a->dst, b->dst, 16) && !memcmp(a->src, b->src, 16);
}

/* Whether k is among the n keys of list. */
static int pfx_in(const struct prefix_key *list, size_t n, const struct prefix_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (pfx_same(&list[i], k))
			return 1;
	return 0;
}

/* Set (on) or clear the mark of the route of key k. 1 if it changed. */
static int set_prefix_mark(struct mirror *m, const struct prefix_key *k, int on)
{
	struct mtable *t = table_find(m, k->table);
	struct route r;
	struct mpos lo, hi, p;

	if (!t)
		return 0;
	memset(&r, 0, sizeof(r));
	memcpy(r.dst, k->dst, 16);
	memcpy(r.src, k->src, 16);
	r.dst_len = k->dst_len;
	r.src_len = k->src_len;
	r.metric = k->metric;
	equal_range(t, &r, &lo, &hi);
	if (open_range(m, t, lo, hi)) {
		log_warn("out of memory: RTF_PREFIX_RT left unmarked until the next resync");
		return 0;
	}
	for (p = lo; !pos_eq(p, hi); p = pos_next(t, p)) {
		struct mroute *e = at(t, p);

		if ((e->r.nh_count == 1 ? e->r.nh.ifindex : 0) != k->ifindex)
			continue;
		if (!e->r.prefix_rt == !on)
			return 0;
		at_w(t, p)->r.prefix_rt = (uint8_t) !!on;
		return 1;
	}
	return 0;
}

int mirror_mark_prefix(struct mirror *m, const struct prefix_key *k)
{
	if (!pfx_in(m->pfx, m->npfx, k) &&
	    !grow((void **)&m->pfx, &m->pfx_cap, m->npfx, sizeof(*m->pfx)))
		m->pfx[m->npfx++] = *k;
	return set_prefix_mark(m, k, 1);
}

void mirror_prefix_begin(struct mirror *m)
{
	struct prefix_key *p = m->pfx_old;
	size_t cap = m->pfx_old_cap;

	m->pfx_old = m->pfx;
	m->pfx_old_cap = m->pfx_cap;
	m->npfx_old = m->npfx;
	m->pfx = p;
	m->pfx_cap = cap;
	m->npfx = 0;
}

int mirror_prefix_end(struct mirror *m, int complete)
{
	int changed = 0;

	for (size_t i = 0; i < m->npfx_old; i++) {
		const struct prefix_key *k = &m->pfx_old[i];

		if (pfx_in(m->pfx, m->npfx, k))
			continue;
		if (complete)
			changed += set_prefix_mark(m, k, 0);
		else if (!grow((void **)&m->pfx, &m->pfx_cap, m->npfx, sizeof(*m->pfx)))
			m->pfx[m->npfx++] = *k; /* not known to be gone */
	}
	m->npfx_old = 0;
	return changed;
}

/* ---- routes a dump cannot carry ---- */

/* A dump message must fit the buffer of one dump batch (netlink_dump: up to 32 KiB with its
 * overhead); a route message is about 100 bytes plus 28 per gateway hop, plus a hop's
 * encapsulation (RTA_ENCAP with its payload, RTA_ENCAP_TYPE: its blob's size and 8). */
#define DUMP_MSG_MAX (32768 - 1024)

static int oversized(const struct route *r)
{
	size_t sz = 160 + (size_t)r->nh_count * 28;

	if (r->nh_count <= 1)
		return 0;
	for (unsigned int i = 0; i < r->nh_count && sz <= DUMP_MSG_MAX; i++)
		if (route_nh(r, i)->encap)
			sz += route_encap_size(route_nh(r, i)->encap) + 8;
	return sz > DUMP_MSG_MAX;
}

int mirror_has_oversized(const struct mirror *m)
{
	for (size_t ti = 0; ti < m->ntables; ti++) {
		const struct mtable *t = &m->tables[ti];

		for (uint32_t c = 0; c < t->nchunks; c++) {
			for (uint32_t i = 0; i < t->chunks[c]->n; i++) {
				struct route tmp;

				if (oversized(chunk_view(t->chunks[c], i, &tmp)))
					return 1;
			}
		}
	}
	return 0;
}

long mirror_keep_oversized(const struct mirror *old, struct mirror *d)
{
	struct mirror_delta dd = { 0 };
	long kept = 0;

	for (size_t ti = 0; ti < old->ntables; ti++) {
		const struct mtable *t = &old->tables[ti];

		for (uint32_t c = 0; c < t->nchunks; c++) {
			for (uint32_t i = 0; i < t->chunks[c]->n; i++) {
				struct route tmp;
				const struct route *r = chunk_view(t->chunks[c], i, &tmp);
				struct mtable *dt;
				struct mpos lo, hi;

				if (!oversized(r))
					continue;
				dt = table_get(d, r->table, 0);
				if (!dt)
					return -ENOMEM;
				equal_range(dt, r, &lo, &hi);
				if (!pos_eq(lo, hi))
					continue; /* the dump has a route there: it wins */
				if (insert_route(d, dt, hi, r, r->nhs, r->metrics))
					return -ENOMEM;
				dd.added++;
				kept++;
			}
		}
	}
	return kept;
}

long mirror_keep_hidden(const struct mirror *old, struct mirror *d)
{
	long kept = 0;

	for (size_t ti = 0; ti < old->ntables; ti++) {
		const struct mtable *t = &old->tables[ti];
		struct order_key run = { 0 };
		int in_run = 0, group = 0;

		for (struct mpos p = { 0, 0 }; !pos_end(t, p); p = pos_next(t, p)) {
			struct route tmp;
			const struct route *r = chunk_view(t->chunks[p.c], p.i, &tmp);
			struct order_key k;
			struct mtable *dt;
			struct mpos lo, hi, q;
			int has_group = 0, has_r = 0;

			order_key_of(r, &k);
			if (!in_run || order_key_cmp(&k, &run)) {
				run = k;
				in_run = 1;
				group = 0;
			}
			if (!r->nhid && r->nh_count > 1 && ecmp_able(old, r)) {
				group = 1;
				continue;
			}
			if (!group || ecmp_able(old, r) || !(dt = table_find(d, r->table)))
				continue;
			/* a route after a group of its key: between its siblings, if the dump
			 * has the group and not the route */
			equal_range(dt, r, &lo, &hi);
			for (q = lo; !pos_eq(q, hi); q = pos_next(dt, q)) {
				const struct route *x = &at(dt, q)->r;

				has_group |= !x->nhid && x->nh_count > 1;
				has_r |= entry_same(x, r);
			}
			if (!has_group || has_r)
				continue;
			if (insert_route(d, dt, hi, r, r->nhs, r->metrics))
				return -ENOMEM;
			kept++;
		}
	}
	return kept;
}

/* Whether a and b know the same links and nexthop objects. */
static int same_links_nhobjs(const struct mirror *a, const struct mirror *b)
{
	if (a->nlinks != b->nlinks || a->nnhobjs != b->nnhobjs)
		return 0;
	if (a->nlinks && memcmp(a->links, b->links, a->nlinks * sizeof(*a->links)))
		return 0;
	return !a->nnhobjs || !memcmp(a->nhobjs, b->nhobjs, a->nnhobjs * sizeof(*a->nhobjs));
}

int mirror_same_outside_routes(const struct mirror *a, const struct mirror *b)
{
	if (!same_links_nhobjs(a, b) || a->ntables != b->ntables)
		return 0;
	for (size_t t = 0; t < a->ntables; t++)
		if (a->tables[t].id != b->tables[t].id)
			return 0;
	return 1;
}

/* ---- sizes ---- */

size_t mirror_routes(const struct mirror *m)
{
	return m->nroutes;
}

size_t mirror_bytes(const struct mirror *m)
{
	size_t b = sizeof(*m) + m->tables_cap * sizeof(*m->tables) +
		   m->links_cap * sizeof(*m->links) + m->nhobjs_cap * sizeof(*m->nhobjs) +
		   m->extra_bytes;

	for (size_t t = 0; t < m->ntables; t++)
		b += m->tables[t].nchunks * sizeof(struct mchunk) +
		     m->tables[t].slots * sizeof(struct mroute) +
		     m->tables[t].cap * sizeof(struct mchunk *);
	return b + mirror_guide_bytes(m);
}

size_t mirror_guide_bytes(const struct mirror *m)
{
	size_t b = 0;

	for (size_t t = 0; t < m->ntables; t++)
		b += m->tables[t].guide_cap * sizeof(struct mguide);
	return b;
}

/* ---- snapshots ---- */

/* The segment of chunk ch of table t, built now if the chunk changed since the last one. */
static int chunk_segment(const struct snapshot *s, const struct mtable *t, struct mchunk *ch,
			 struct segment_in *in)
{
	int ret;

	for (uint32_t i = 0; i < ch->n; i++) {
		in[i].r = &ch->e[i].r;
		in[i].nhs = ch->e[i].nhs;
		in[i].m = ch->e[i].m;
		in[i].src = ch->e[i].src;
	}
	ret = segment_build(&s->ctx, t->id, in, ch->n, ch->prev, &ch->seg);
	if (ret)
		return ret;
	segment_sum(ch->seg, &ch->sum);
	snapshot_defer_put(ch->prev);
	ch->prev = NULL;
	for (uint32_t i = 0; i < ch->n; i++)
		ch->e[i].src = (int32_t)i;
	return 0;
}

/* A closed chunk's segment rendered again from its own records (the context changed). */
static int chunk_rerender(const struct snapshot *s, const struct mtable *t, struct mchunk *ch,
			  struct segment_in *in)
{
	struct segment *g = NULL;
	int ret;

	for (uint32_t i = 0; i < ch->n; i++) {
		in[i].r = &ch->seg->routes[i];
		in[i].nhs = ch->seg->routes[i].nhs;
		in[i].m = ch->seg->routes[i].metrics;
		in[i].src = -1;
	}
	ret = segment_build(&s->ctx, t->id, in, ch->n, NULL, &g);
	if (ret)
		return ret;
	snapshot_defer_put(ch->seg);
	ch->seg = g;
	segment_sum(g, &ch->sum);
	return 0;
}

/* Whether table t's records end with a ::/0 route without source prefix (such routes sort
 * last in the key order): then the kernel has no placeholder row for the table. */
static int has_default(const struct mtable *t)
{
	const struct mchunk *ch = t->nchunks ? t->chunks[t->nchunks - 1] : NULL;

	return ch && ch->n && chunk_key(ch, ch->n - 1)->dst_len == 0 &&
	       chunk_key(ch, ch->n - 1)->src_len == 0;
}

int mirror_add_context(const struct mirror *m, struct snapshot *s)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < m->nlinks; i++)
		ret = snapshot_add_link(s, &m->links[i]);
	for (size_t i = 0; !ret && i < m->nnhobjs; i++)
		ret = snapshot_add_nhobj(s, &m->nhobjs[i]);
	return ret;
}

/*
 * Chunk c of t for snapshot s: build its segment if it changed (all: the rendering context
 * changed, every route is rendered again), and let its records go once its segment has them
 * (a chunk changed for two publications in a row is likely to change again: it stays open
 * until a publication finds it unchanged). *fresh: a segment was built for s.
 */
static int chunk_publish(struct mirror *m, struct snapshot *s, struct mtable *t, uint32_t c,
			 struct segment_in *in, int all, int *fresh)
{
	struct mchunk *ch = t->chunks[c];
	int built = 0, ret = 0;

	*fresh = 0;
	if (all && !ch->e) {
		ret = chunk_rerender(s, t, ch, in);
		*fresh = 1;
	} else if (all || !ch->seg) {
		if (all)
			chunk_forget(ch); /* no text to reuse */
		ret = chunk_segment(s, t, ch, in);
		built = *fresh = 1;
	}
	if (ret)
		return ret;
	if (*fresh) {
		s->segs_built++;
		snapshot_fresh_segment(s, ch->seg);
	}
	if (!(built && ch->hot))
		chunk_close(m, t, ch);
	ch->hot = (uint32_t)built;
	return 0;
}

/*
 * Group g of t for snapshot s (docs/design.md, "Groups of segments"): shared as it is when
 * none of its chunks changed; patched (a copy of the published group with the changed
 * members replaced) when some did; made from its chunks when chunks came or went. Chunks left
 * open are looked at again next time. *shared: bytes of its segments the last snapshot had.
 */
static int group_publish(struct mirror *m, struct snapshot *s, struct mtable *t, struct mgroup *g,
			 struct segment_in *in, int all, size_t *shared)
{
	struct seggroup *ng = NULL;
	uint64_t visit[2] = { 0, 0 };
	size_t fresh_bytes = 0;
	int ret = 0, fresh;

	if (all || g->shape || !g->sg) {
		ret = seggroup_new(t->id, g->nc <= SEGGROUP_MAX ? g->nc : SEGGROUP_MAX, &ng);
		for (uint32_t j = 0; !ret && j < g->nc; j++) {
			uint32_t c = g->c0 + j;

			if (j + 8 < g->nc)
				__builtin_prefetch(t->chunks[c + 8]);
			ret = chunk_publish(m, s, t, c, in, all, &fresh);
			if (ret)
				break;
			seggroup_set(ng, j, t->chunks[c]->seg, &t->chunks[c]->sum);
			if (fresh)
				fresh_bytes += t->chunks[c]->sum.bytes;
			if (t->chunks[c]->e && j < 128)
				visit[j / 64] |= 1ull << (j % 64);
		}
	} else {
		for (int w = 0; !ret && w < 2; w++) {
			for (uint64_t bits = g->visit[w]; !ret && bits; bits &= bits - 1) {
				uint32_t j = (uint32_t)(w * 64 + __builtin_ctzll(bits));
				uint32_t c = g->c0 + j;

				if (j >= g->nc)
					break;
				ret = chunk_publish(m, s, t, c, in, 0, &fresh);
				if (!ret && fresh && !ng)
					ret = seggroup_copy(g->sg, g->sg->nsegs, &ng);
				if (ret)
					break;
				if (fresh) {
					seggroup_set(ng, j, t->chunks[c]->seg, &t->chunks[c]->sum);
					fresh_bytes += t->chunks[c]->sum.bytes;
				}
				if (t->chunks[c]->e)
					visit[j / 64] |= 1ull << (j % 64);
			}
		}
	}
	if (ret) {
		seggroup_put(ng);
		return ret; /* the group is made again next time: chunks may have changed */
	}
	if (ng) {
		seggroup_seal(ng);
		snapshot_fresh_group(s, ng);
		snapshot_defer_put_group(g->sg);
		g->sg = ng;
		g->sum = ng->sum;
		g->nsegs = ng->nsegs;
	}
	g->shape = 0;
	g->visit[0] = visit[0];
	g->visit[1] = visit[1];
	*shared = g->sum.bytes - fresh_bytes;
	return 0;
}

/* Table t's placeholder row for snapshot s, as a group of its own, kept while it is needed and
 * the rendering context does not change. */
static int placeholder_publish(struct snapshot *s, struct mtable *t, int all)
{
	struct segment *g = NULL;
	struct seggroup *pg = NULL;
	struct segment_sum sum;
	int ret;

	if (t->phg && !all)
		return snapshot_add_group(s, t->phg, &t->phg->sum, 1, t->phg->sum.bytes);
	ret = segment_placeholder(&s->ctx, t->id, &g);
	if (!ret)
		ret = seggroup_new(t->id, 1, &pg);
	if (ret) {
		segment_put(g);
		return ret;
	}
	segment_sum(g, &sum);
	seggroup_set(pg, 0, g, &sum);
	seggroup_seal(pg);
	snapshot_defer_put(t->ph);
	snapshot_defer_put_group(t->phg);
	t->ph = g;
	t->phg = pg;
	snapshot_fresh_segment(s, g);
	snapshot_fresh_group(s, pg);
	return snapshot_add_group(s, pg, &pg->sum, 1, 0);
}

int mirror_add_segments(struct mirror *m, struct snapshot *s)
{
	struct segment_in *in = malloc(MIRROR_CHUNK * sizeof(*in));
	uint64_t nh = names_hash(s->ctx.names);
	/* every route may print differently now: every segment is built again */
	int all = m->ctx_epoch != m->pub_epoch || nh != m->pub_names;
	int ret = in ? 0 : -ENOMEM;

	if (!ret && !s->chain)
		ret = -EINVAL; /* its segments are held for it (snapshot_add_group()) */
	if (!ret && !m->chain)
		m->chain = snapshot_chain_get(s->chain);
	if (!ret && m->chain != s->chain)
		ret = -EINVAL; /* one mirror, one chain */
	for (size_t ti = 0; !ret && ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];

		ret = mg_check(t);
		for (uint32_t q = 0; !ret && q < t->ngroups; q++) {
			size_t shared = 0;

			/* a split that found no memory left a group too large: split it now */
			if (t->groups[q].nc > MG_MAX && mg_split(t, q)) {
				ret = -ENOMEM;
				break;
			}

			ret = group_publish(m, s, t, &t->groups[q], in, all, &shared);
			if (!ret)
				ret = snapshot_add_group(s, t->groups[q].sg, &t->groups[q].sum,
							 t->groups[q].nsegs, shared);
		}
		if (!ret && !m->family && !has_default(t)) { /* IPv4 has no placeholder rows */
			ret = placeholder_publish(s, t, all);
		} else if (!ret && t->phg) { /* a ::/0 route now: no placeholder row */
			snapshot_defer_put(t->ph);
			snapshot_defer_put_group(t->phg);
			t->ph = NULL;
			t->phg = NULL;
		}
	}
	free(in);
	return ret;
}

void mirror_published(struct mirror *m, const struct snapshot *s)
{
	m->pub_epoch = m->ctx_epoch;
	m->pub_names = names_hash(s->ctx.names);
}

/* ---- comparison ---- */

/*
 * FNV-1a taken eight bytes at a step (then byte by byte): each step is a bijection of the
 * state, so records that differ in one word never hash alike, and a record costs an eighth
 * of the byte-wise walk (it runs twice per route message, over every hop of a group).
 */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		h ^= w;
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
	}
	for (; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A hop: its bytes with its encapsulation's in place of the pointer. */
static uint64_t fnv_hop(uint64_t h, const struct route_nh *nh)
{
	struct route_nh k = *nh;

	k.encap = NULL;
	k.sib = 0; /* what the mirror knows of the sibling, not what a dump says */
	h = fnv(h, &k, sizeof(k));
	if (nh->encap)
		h = fnv(h, nh->encap, sizeof(*nh->encap) + nh->encap->len);
	return h;
}

/* r's identity and content, as held in a segment or seen through chunk_view(). */
static uint64_t fingerprint(const struct route *r)
{
	struct route k = *r;
	uint64_t h = 0xcbf29ce484222325ULL;

	k.expires_ms = r->expires_ms != 0; /* has a deadline, not where it is */
	k.nhs = NULL;
	k.metrics = NULL;
	k.nh.encap = NULL;
	k.nh.sib = 0;
	h = fnv(h, &k, sizeof(k));
	if (r->nh_count == 1)
		h = fnv_hop(h, &r->nh);
	for (unsigned int i = 0; r->nh_count > 1 && r->nhs && i < r->nh_count; i++)
		h = fnv_hop(h, &r->nhs[i]);
	if (r->metrics)
		h = fnv(h, r->metrics, sizeof(*r->metrics));
	h ^= h >> 29;
	return h ? h : 1;
}

static uint64_t fingerprint_e(const struct mroute *e)
{
	struct route k = e->r;

	k.nhs = e->nhs;
	k.metrics = e->m;
	return fingerprint(&k);
}

static void log_route(const char *what, const char *side, const struct route *r)
{
	char dst[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN] = "";

	inet_ntop(AF_INET6, r->dst, dst, sizeof(dst));
	inet_ntop(AF_INET6, r->src, src, sizeof(src));
	if (r->nh_count >= 1 && route_nh(r, 0)->has_gw)
		inet_ntop(AF_INET6, route_nh(r, 0)->gw, gw, sizeof(gw));
	log_warn("%s: %s: table %u %s/%u from %s/%u metric %u type %u proto %u nhid %u "
		 "nexthops %u first via %s ifindex %u flags 0x%x",
		 what, side, r->table, dst, r->dst_len, src, r->src_len, r->metric, r->type,
		 r->protocol, r->nhid, r->nh_count, gw[0] ? gw : "-",
		 r->nh_count ? route_nh(r, 0)->ifindex : 0, r->rtm_flags);
}

struct fp_set {
	uint64_t *key;
	uint32_t *cnt;
	size_t mask;
};

static int fp_init(struct fp_set *f, size_t n)
{
	size_t cap = 16;

	while (cap < n * 2)
		cap *= 2;
	f->key = calloc(cap, sizeof(*f->key));
	f->cnt = calloc(cap, sizeof(*f->cnt));
	f->mask = cap - 1;
	if (!f->key || !f->cnt) {
		free(f->key);
		free(f->cnt);
		return -ENOMEM;
	}
	return 0;
}

static size_t fp_slot(const struct fp_set *f, uint64_t h)
{
	size_t j;

	for (j = h & f->mask; f->key[j] && f->key[j] != h; j = (j + 1) & f->mask)
		;
	return j;
}

/* Every record of m as e, a route seen through chunk_view() (tmp: its room). */
#define EACH_ROUTE(m, e, tmp)                                                            \
	for (size_t ti_ = 0; ti_ < (m)->ntables; ti_++)                                  \
		for (uint32_t c_ = 0; c_ < (m)->tables[ti_].nchunks; c_++)               \
			for (uint32_t i_ = 0; i_ < (m)->tables[ti_].chunks[c_]->n; i_++) \
				if (((e) = chunk_view((m)->tables[ti_].chunks[c_], i_, &(tmp))), 1)

int mirror_diff(const struct mirror *a, const struct mirror *b, const char *what,
		unsigned int max_log, uint32_t *only_a, uint32_t *only_b)
{
	struct fp_set fa, fb;
	const struct route *e;
	struct route tmp;
	uint32_t na = 0, nb = 0;
	unsigned int logged = 0;

	if (fp_init(&fa, a->nroutes))
		return -ENOMEM;
	if (fp_init(&fb, b->nroutes)) {
		free(fa.key);
		free(fa.cnt);
		return -ENOMEM;
	}
	EACH_ROUTE(a, e, tmp)
	{
		uint64_t h = fingerprint(e);
		size_t j = fp_slot(&fa, h);

		fa.key[j] = h;
		fa.cnt[j]++;
	}
	EACH_ROUTE(b, e, tmp)
	{
		uint64_t h = fingerprint(e);
		size_t j = fp_slot(&fb, h);

		fb.key[j] = h;
		fb.cnt[j]++;
	}
	EACH_ROUTE(a, e, tmp)
	{
		size_t j = fp_slot(&fb, fingerprint(e));

		if (fb.key[j] && fb.cnt[j]) {
			fb.cnt[j]--;
			continue;
		}
		na++;
		if (logged < max_log) {
			logged++;
			log_route(what, "only in the mirror", e);
		}
	}
	EACH_ROUTE(b, e, tmp)
	{
		size_t j = fp_slot(&fa, fingerprint(e));

		if (fa.key[j] && fa.cnt[j]) {
			fa.cnt[j]--;
			continue;
		}
		nb++;
		if (logged < max_log) {
			logged++;
			log_route(what, "only in the kernel", e);
		}
	}
	free(fa.key);
	free(fa.cnt);
	free(fb.key);
	free(fb.cnt);
	*only_a = na;
	*only_b = nb;
	return 0;
}

/* ---- adopting a dump ---- */

/* a and b are the same route as fingerprint() sees them (a deadline: whether, not when;
 * the RTF_PREFIX_RT mark only unless no_mark). */
static int route_same(const struct route *a, const struct route *b, int no_mark)
{
	struct route x = *a, y = *b;

	x.expires_ms = a->expires_ms != 0;
	y.expires_ms = b->expires_ms != 0;
	if (no_mark)
		x.prefix_rt = y.prefix_rt = 0;
	x.nhs = y.nhs = NULL;
	x.metrics = y.metrics = NULL;
	x.nh.encap = y.nh.encap = NULL;
	x.nh.sib = y.nh.sib = 0;
	if (memcmp(&x, &y, sizeof(x)))
		return 0;
	if (a->nh_count == 1 && !route_encap_equal(a->nh.encap, b->nh.encap))
		return 0;
	if (a->nh_count > 1 && (!a->nhs || !b->nhs))
		return a->nhs == b->nhs;
	for (unsigned int i = 0; a->nh_count > 1 && i < a->nh_count; i++) {
		struct route_nh p = a->nhs[i], q = b->nhs[i];

		p.encap = q.encap = NULL;
		p.sib = q.sib = 0;
		if (memcmp(&p, &q, sizeof(p)) ||
		    !route_encap_equal(a->nhs[i].encap, b->nhs[i].encap))
			return 0;
	}
	if (!a->metrics || !b->metrics)
		return a->metrics == b->metrics;
	return !memcmp(a->metrics, b->metrics, sizeof(*a->metrics));
}

/* Let chunk c of dump table dt go (its records were taken). */
static void drop_chunk(struct mirror *d, struct mtable *dt, uint32_t c)
{
	struct mchunk *ch = dt->chunks[c];

	for (uint32_t i = 0; ch->e && i < ch->n; i++)
		mroute_clear(d, &ch->e[i]);
	earray_free(ch->e);
	ch->e = NULL;
	dt->slots -= ch->cap;
	ch->n = ch->cap = 0;
}

/* The end of the run of records of key k from p; *n: how many. */
static struct mpos run_end(const struct mtable *t, struct mpos p, const struct order_key *k,
			   size_t *n)
{
	while (!pos_end(t, p)) {
		struct order_key x;

		order_key_of(chunk_key(t->chunks[p.c], p.i), &x);
		if (order_key_cmp(&x, k))
			break;
		p = pos_next(t, p);
		++*n;
	}
	return p;
}

/* Bytes a record holds beside itself (mirror.extra_bytes). */
static size_t mroute_extra(const struct mroute *e)
{
	return (e->nhs ? e->r.nh_count * sizeof(*e->nhs) : 0) + (e->m ? sizeof(*e->m) : 0) +
	       (e->sib ? e->r.nh_count * sizeof(*e->sib) : 0) +
	       (e->enc ? sizeof(*e->enc) + e->enc->len : 0);
}

/* Table t of m gives its records up for those of dump table dt (which is left empty). */
static void take_chunks(struct mirror *m, struct mtable *t, struct mirror *d, struct mtable *dt,
			struct mirror_delta *delta)
{
	size_t extra = 0;

	delta->removed += t->nroutes;
	delta->added += dt->nroutes;
	m->nroutes = m->nroutes - t->nroutes + dt->nroutes;
	d->nroutes -= dt->nroutes;
	table_free_chunks(m, t);
	for (uint32_t c = 0; c < dt->nchunks; c++)
		for (uint32_t j = 0; j < dt->chunks[c]->n; j++)
			extra += mroute_extra(&dt->chunks[c]->e[j]);
	m->extra_bytes += extra;
	d->extra_bytes -= extra;
	t->chunks = dt->chunks;
	t->nchunks = dt->nchunks;
	t->cap = dt->cap;
	t->slots = dt->slots;
	t->nroutes = dt->nroutes;
	dt->chunks = NULL;
	dt->nchunks = dt->cap = dt->nroutes = 0;
	dt->slots = 0;
	mg_free(dt);
	guide_free(dt);
	t->nguide = 0; /* the guide is built again for the new chunks */
	mg_reset(t);   /* an allocation that fails is made good by mg_check() */
}

/*
 * Insert r at *pp for adopt_table() and leave *pp after it: where the next record of a run
 * goes. A run is appended to the chunk before when that one has room, and one that would go
 * before a full chunk's first record starts a chunk of its own (splitting in halves as a
 * notification's insert does would leave half-full chunks behind a long run).
 */
static int adopt_insert(struct mirror *m, struct mtable *t, struct mpos *pp, const struct route *r)
{
	struct mpos p = *pp;
	int ret;

	if (p.i == 0 && p.c > 0 && t->chunks[p.c - 1]->n < MIRROR_CHUNK) {
		p = (struct mpos){ p.c - 1, t->chunks[p.c - 1]->n };
	} else if (p.i == 0 && p.c < t->nchunks && t->chunks[p.c]->n == MIRROR_CHUNK) {
		size_t cap = t->cap;
		struct mchunk *nc;

		if (grow((void **)&t->chunks, &cap, t->nchunks, sizeof(*t->chunks)))
			return -ENOMEM;
		t->cap = (uint32_t)cap;
		nc = chunk_new(t, MIRROR_CHUNK);
		if (!nc)
			return -ENOMEM;
		memmove(&t->chunks[p.c + 1], &t->chunks[p.c],
			(t->nchunks - p.c) * sizeof(*t->chunks));
		t->chunks[p.c] = nc;
		t->nchunks++;
		mg_insert(t, p.c);
		guide_insert(t, p.c);
	}
	ret = insert_route_at(m, t, &p, r, r->nhs, r->metrics);
	if (ret) {
		if (p.c < t->nchunks && t->chunks[p.c]->n == 0) { /* the chunk made for it */
			struct mchunk *ch = t->chunks[p.c];

			t->slots -= ch->cap;
			earray_free(ch->e);
			free(ch);
			memmove(&t->chunks[p.c], &t->chunks[p.c + 1],
				(t->nchunks - p.c - 1) * sizeof(*t->chunks));
			t->nchunks--;
			mg_remove(t, p.c);
			guide_remove(t, p.c);
		}
		return ret;
	}
	*pp = pos_next(t, p);
	return 0;
}

struct mirror_adoption {
	struct mirror *m, *d;
	size_t ti;	  /* d's table being adopted */
	struct mpos q;	  /* next record of d's table ti */
	uint32_t dropped; /* d's chunks of table ti let go */
	int started;	  /* table ti is adopted up to key last (its records of that key too) */
	struct order_key last;
	struct mirror_adopt_rules rules;
	struct mirror_adopt_count cnt;
	unsigned int logged;
};

static int adopt_touched(const struct mirror_adoption *a, uint32_t table, const struct order_key *k)
{
	return a->rules.touched && a->rules.touched(a->rules.arg, table, k);
}

/* Count (and log, up to the rules' limit) the routes of m's run [p, p2) of t and d's run
 * [q, q2) of dt that the other lacks: the drift an adoption corrects. */
static void adopt_drift(struct mirror_adoption *a, const struct mtable *t, struct mpos p,
			struct mpos p2, const struct mtable *dt, struct mpos q, struct mpos q2)
{
	size_t nq = 0, j;
	uint8_t *used;
	struct route tx, ty;

	for (struct mpos y = q; !pos_eq(y, q2); y = pos_next(dt, y))
		nq++;
	used = calloc(nq ? nq : 1, 1);
	for (struct mpos x = p; !pos_eq(x, p2); x = pos_next(t, x)) {
		const struct route *r = chunk_view(t->chunks[x.c], x.i, &tx);
		int found = 0;

		j = 0;
		for (struct mpos y = q; used && !found && !pos_eq(y, q2); y = pos_next(dt, y), j++)
			if (!used[j] && route_same(r, chunk_view(dt->chunks[y.c], y.i, &ty), 0))
				found = used[j] = 1;
		if (found)
			continue;
		a->cnt.only_m++;
		if (a->logged < a->rules.max_log) {
			a->logged++;
			log_route("resync drift", "only in the mirror", r);
		}
	}
	j = 0;
	for (struct mpos y = q; !pos_eq(y, q2); y = pos_next(dt, y), j++) {
		if (used && used[j])
			continue;
		a->cnt.only_k++;
		if (a->logged < a->rules.max_log) {
			a->logged++;
			log_route("resync drift", "only in the kernel",
				  chunk_view(dt->chunks[y.c], y.i, &ty));
		}
	}
	free(used);
}

/*
 * Give table t of m the records of dump table dt, in dt's order, from where the last step
 * stopped. Both are in key order, so one walk over both finds the runs of equal key that
 * differ, and only those change in t (a run the same in both keeps its records, and its chunk
 * its segment). dt's chunks are let go as the walk leaves them. Stops after a run once
 * *budget records were taken or dropped: returns 1 then, 0 at the table's end, -ENOMEM (t
 * holds part of dt).
 */
static int adopt_table(struct mirror_adoption *a, struct mtable *t, struct mtable *dt,
		       size_t *budget, struct mirror_delta *delta)
{
	struct mirror *m = a->m;
	struct mpos p = { 0, 0 }, q = a->q;
	int ret = 0;

	if (!a->started && (size_t)t->nroutes * 4 < dt->nroutes && !adopt_touched(a, t->id, NULL)) {
		/* mostly new: the dump's chunks are the table (they are full, and few of t's
		 * segments could be kept anyway) */
		a->cnt.only_k += dt->nroutes - t->nroutes; /* at least (not compared) */
		take_chunks(m, t, a->d, dt, delta);
		*budget = *budget > t->nroutes ? *budget - t->nroutes : 0;
		return 0;
	}
	if (a->started)
		p = bound(t, &a->last, 1);
	while (!ret && (!pos_end(t, p) || !pos_end(dt, q))) {
		struct order_key kp = { 0 }, kd = { 0 };
		struct mpos p2 = p, q2 = q;
		size_t np = 0, nq = 0, used;
		int c, same = 0;

		if (*budget == 0)
			break;
		if (!pos_end(t, p))
			order_key_of(chunk_key(t->chunks[p.c], p.i), &kp);
		if (!pos_end(dt, q))
			order_key_of(chunk_key(dt->chunks[q.c], q.i), &kd);
		c = pos_end(dt, q) ? -1 : pos_end(t, p) ? 1 : order_key_cmp(&kp, &kd);
		if (c <= 0)
			p2 = run_end(t, p, &kp, &np);
		if (c >= 0)
			q2 = run_end(dt, q, &kd, &nq);
		if (c == 0 && np == nq) {
			struct mpos x = p, y = q;
			struct route tx, ty;

			for (same = 1; same && !pos_eq(x, p2);
			     x = pos_next(t, x), y = pos_next(dt, y))
				same = route_same(chunk_view(t->chunks[x.c], x.i, &tx),
						  chunk_view(dt->chunks[y.c], y.i, &ty),
						  a->rules.untrusted);
		}
		if (!same && adopt_touched(a, t->id, c < 0 ? &kp : &kd)) {
			/* changed since the dump began: the mirror's routes are newer */
			a->cnt.kept_touched++;
			p = p2;
		} else if (!same && c < 0 && a->rules.untrusted && in_gap(a->d, t->id, &kp)) {
			/* perhaps skipped by the dump: nothing says they are gone */
			a->cnt.kept_gap += (uint32_t)np;
			p = p2;
		} else if (same) {
			/* the same routes: only a deadline may have moved (by more than the
			 * second a dump rounds it to) */
			for (struct mpos x = p, y = q; !ret && !pos_eq(x, p2);
			     x = pos_next(t, x), y = pos_next(dt, y)) {
				int64_t want = chunk_key(dt->chunks[y.c], y.i)->expires_ms;
				int64_t dx = want - chunk_key(t->chunks[x.c], x.i)->expires_ms;

				if (dx <= 1000 && dx >= -1000)
					continue;
				ret = chunk_open(m, t, x.c);
				if (!ret) {
					at_w(t, x)->r.expires_ms = want;
					delta->changed++;
				}
			}
			p = p2;
		} else if (c == 0 && np == nq) {
			/* as many records: each takes its counterpart's place (no records move) */
			adopt_drift(a, t, p, p2, dt, q, q2);
			for (struct mpos y = q; !ret && !pos_eq(y, q2); y = pos_next(dt, y)) {
				struct route ty;
				const struct route *r = chunk_view(dt->chunks[y.c], y.i, &ty);

				ret = chunk_open(m, t, p.c);
				if (!ret)
					ret = mroute_set(m, at_w(t, p), r, r->nhs, r->metrics);
				if (!ret) {
					p = pos_next(t, p);
					delta->changed++;
				}
			}
		} else {
			/* t's run goes (positions after p move as records go), dt's takes its
			 * place */
			adopt_drift(a, t, p, p2, dt, q, q2);
			delta->removed += (uint32_t)np;
			for (size_t k = 0; !ret && k < np; k++) {
				ret = remove_at(m, t, p);
				p = pos_fix(t, p);
			}
			for (struct mpos y = q; !ret && !pos_eq(y, q2); y = pos_next(dt, y)) {
				struct route ty;
				const struct route *r = chunk_view(dt->chunks[y.c], y.i, &ty);

				ret = adopt_insert(m, t, &p, r);
				delta->added += !ret;
			}
		}
		used = nq + (c < 0 ? np : 0);
		*budget = *budget > used ? *budget - used : 0;
		a->last = c < 0 ? kp : kd;
		a->started = 1;
		q = q2;
		while (a->dropped < q.c && a->dropped < dt->nchunks)
			drop_chunk(a->d, dt, a->dropped++);
	}
	a->q = q;
	if (ret)
		return ret;
	return pos_end(t, p) && pos_end(dt, q) ? 0 : 1;
}

int mirror_adopt_begin(struct mirror *m, struct mirror *d, const struct mirror_adopt_rules *rules,
		       struct mirror_adoption **out)
{
	struct mirror_adoption *a = calloc(1, sizeof(*a));
	struct mtable *nt;
	size_t k = 0;

	if (!a) {
		mirror_free(d);
		return -ENOMEM;
	}
	a->m = m;
	a->d = d;
	if (rules)
		a->rules = *rules;
	*out = a;
	for (size_t i = 0; i < d->ntables; i++)
		if (!table_get(m, d->tables[i].id, 0))
			return -ENOMEM;
	/* d's tables first, in d's order; m's others after them, until the end */
	nt = malloc((m->ntables ? m->ntables : 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < d->ntables; i++)
		nt[k++] = *table_find(m, d->tables[i].id);
	for (size_t i = 0; i < m->ntables; i++)
		if (!table_find(d, m->tables[i].id))
			nt[k++] = m->tables[i];
	memcpy(m->tables, nt, k * sizeof(*nt));
	free(nt);
	if (!same_links_nhobjs(m, d)) {
		struct route_link *l = m->links;
		struct route_nhobj *o = m->nhobjs;
		size_t n, cap;

		m->links = d->links;
		d->links = l;
		n = m->nlinks, cap = m->links_cap;
		m->nlinks = d->nlinks, m->links_cap = d->links_cap;
		d->nlinks = n, d->links_cap = cap;
		m->nhobjs = d->nhobjs;
		d->nhobjs = o;
		n = m->nnhobjs, cap = m->nhobjs_cap;
		m->nnhobjs = d->nnhobjs, m->nhobjs_cap = d->nhobjs_cap;
		d->nnhobjs = n, d->nhobjs_cap = cap;
		m->ctx_epoch++; /* what routes print may differ */
	}
	m->reannounce_id = 0;
	if (!a->rules.untrusted) { /* else the mirror keeps its marks, and their list */
		struct prefix_key *pk = m->pfx;
		size_t npk = m->npfx, cpk = m->pfx_cap;

		m->pfx = d->pfx, m->npfx = d->npfx, m->pfx_cap = d->pfx_cap;
		d->pfx = pk, d->npfx = npk, d->pfx_cap = cpk;
	}
	return 0;
}

int mirror_adopt_step(struct mirror_adoption *a, size_t max_routes, struct mirror_delta *delta)
{
	struct mirror *m = a->m;
	size_t budget = max_routes ? max_routes : 1;

	for (; a->ti < a->d->ntables; a->ti++) {
		struct mtable *dt = &a->d->tables[a->ti];
		/* by id: between steps notifications may add tables to m */
		struct mtable *t = table_get(m, dt->id, 0);
		int ret;

		if (!t)
			return -ENOMEM;
		ret = adopt_table(a, t, dt, &budget, delta);
		if (ret)
			return ret;
		while (a->dropped < dt->nchunks)
			drop_chunk(a->d, dt, a->dropped++);
		a->started = 0;
		a->q = (struct mpos){ 0, 0 };
		a->dropped = 0;
	}
	/* the tables the dump did not list (unless a notification made them since it began) */
	for (size_t i = 0; i < m->ntables;) {
		struct mtable *t = &m->tables[i];

		if (table_find(a->d, t->id) || adopt_touched(a, t->id, NULL)) {
			i++;
			continue;
		}
		delta->removed += t->nroutes;
		a->cnt.only_m += t->nroutes;
		m->nroutes -= t->nroutes;
		table_free_chunks(m, t);
		memmove(t, t + 1, (m->ntables - i - 1) * sizeof(*t));
		m->ntables--;
	}
	return 0;
}

void mirror_adopt_counts(const struct mirror_adoption *a, struct mirror_adopt_count *out)
{
	*out = a->cnt;
}

void mirror_adopt_end(struct mirror_adoption *a)
{
	if (!a)
		return;
	mirror_free(a->d);
	free(a);
}

/* ---- editing by key, for the IPv4 rules (mirror_edit.h) ---- */

int mirror_new4(struct mirror **out)
{
	struct mirror *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->family = AF_INET; /* tables come with their first route: main and local too */
	*out = m;
	return 0;
}

int mirror_family(const struct mirror *m)
{
	return m->family;
}

/* Position i of run (i <= run->n): from the run's first record, found again (an edit may have
 * split or freed chunks since). */
static struct mpos run_pos(const struct mtable *t, const struct mirror_run *run, size_t i)
{
	struct mpos p = bound_in(t, &run->k, 0, 0, t->nchunks);

	while (i--)
		p = pos_next(t, p);
	return p;
}

/* The open table of run (mirror_run_find() made or found it). */
static struct mtable *run_table(const struct mirror *m, const struct mirror_run *run)
{
	return table_find(m, run->table);
}

int mirror_run_find(struct mirror *m, const struct route *r, int create, struct mirror_run *run)
{
	struct mtable *t = create ? table_get(m, r->table, 1) : table_find(m, r->table);
	struct mpos lo, hi;

	memset(run, 0, sizeof(*run));
	run->table = r->table;
	order_key_of(r, &run->k);
	if (!t)
		return create ? -ENOMEM : 0;
	equal_range(t, r, &lo, &hi);
	if (open_range(m, t, lo, hi))
		return -ENOMEM;
	for (struct mpos p = lo; !pos_eq(p, hi); p = pos_next(t, p))
		run->n++;
	return 0;
}

const struct route *mirror_run_get(const struct mirror *m, const struct mirror_run *run, size_t i,
				   struct route *tmp)
{
	const struct mtable *t = run_table(m, run);
	struct mpos p = run_pos(t, run, i);

	return chunk_view(t->chunks[p.c], p.i, tmp);
}

int mirror_run_insert(struct mirror *m, struct mirror_run *run, size_t i, const struct route *r,
		      const struct route_nh *nhs, const struct route_metrics *met,
		      struct mirror_delta *d)
{
	struct mtable *t = run_table(m, run);
	struct mpos p;
	int ret;

	if (!t)
		return -EINVAL;
	p = run_pos(t, run, i);
	ret = insert_route_at(m, t, &p, r, nhs, met);
	if (ret)
		return ret;
	run->n++;
	d->added++;
	return 0;
}

int mirror_run_set(struct mirror *m, struct mirror_run *run, size_t i, const struct route *r,
		   const struct route_nh *nhs, const struct route_metrics *met,
		   struct mirror_delta *d)
{
	struct mtable *t = run_table(m, run);
	struct mroute *e;
	uint64_t fp0;
	int64_t exp0;
	int ret;

	if (!t)
		return -EINVAL;
	e = at_w(t, run_pos(t, run, i));
	fp0 = fingerprint_e(e);
	exp0 = e->r.expires_ms;
	ret = mroute_set(m, e, r, nhs, met);
	if (!ret)
		count_change(d, e, fp0, exp0);
	return ret;
}

int mirror_run_remove(struct mirror *m, struct mirror_run *run, size_t i, struct mirror_delta *d)
{
	struct mtable *t = run_table(m, run);
	int ret;

	if (!t)
		return -EINVAL;
	ret = remove_at(m, t, run_pos(t, run, i));
	if (ret)
		return ret;
	run->n--;
	d->removed++;
	return 0;
}

int mirror_edit_all(struct mirror *m, mirror_edit_fn fn, void *arg, struct mirror_delta *d)
{
	struct route_nh *hops = NULL;
	size_t hcap = 0;
	int ret = 0;

	for (size_t ti = 0; !ret && ti < m->ntables; ti++) {
		struct mtable *t = &m->tables[ti];
		struct mpos p = { 0, 0 };

		while (!ret && !pos_end(t, p)) {
			struct route tmp, out;
			const struct route *v = chunk_view(t->chunks[p.c], p.i, &tmp);
			int what;

			if (v->nh_count > hcap || !hops) {
				size_t want =
				    v->nh_count > MIRROR_EDIT_HOPS ? v->nh_count : MIRROR_EDIT_HOPS;
				struct route_nh *h = realloc(hops, want * sizeof(*h));

				if (!h) {
					ret = -ENOMEM;
					break;
				}
				hops = h;
				hcap = want;
			}
			what = fn(arg, v, &out, hops);
			if (what == MIRROR_EDIT_REMOVE) {
				ret = remove_at(m, t, p);
				if (!ret) {
					d->removed++;
					p = pos_fix(t, p); /* p now names the next record */
				}
				continue;
			}
			if (what == MIRROR_EDIT_SET) {
				ret = chunk_open(m, t, p.c);
				if (!ret) {
					struct mroute *e = at_w(t, p);
					const struct route_metrics *met = e->m;
					uint64_t fp0 = fingerprint_e(e);

					/* the metrics stay e's own: mroute_set() copies them first */
					ret = mroute_set(m, e, &out, hops, met);
					if (!ret)
						count_change(d, e, fp0, e->r.expires_ms);
				}
			}
			p = pos_next(t, p);
		}
	}
	free(hops);
	return ret;
}
