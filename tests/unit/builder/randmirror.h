/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * randmirror.h - for the unit tests that compare two snapshots of a mirror changed at random
 * (test_diff, test_watch): routes generated over four tables (equal-key groups, source
 * routes, multipath groups, reject types, deadlines), remembered so that they can be deleted,
 * replaced or announced again, and random kernel changes applied with the mirror's own
 * semantics. A fixed xorshift stream: every run makes the same routes and changes. Include
 * after cmocka.h, rtsnap/mirror.h and rtsnap/nlparse.h, once per test file.
 */
#ifndef RTSNAP_TEST_RANDMIRROR_H
#define RTSNAP_TEST_RANDMIRROR_H

static struct nlparse_route s_pr;
static uint64_t s_rng = 0x243f6a8885a308d3ULL;
static int64_t s_now;

static uint32_t rnd(uint32_t n)
{
	s_rng ^= s_rng << 13;
	s_rng ^= s_rng >> 7;
	s_rng ^= s_rng << 17;
	return (uint32_t)(s_rng % n);
}

/* ---- routes ---- */

/* What identifies a generated route: enough to delete, replace or re-announce it. */
struct spec {
	uint8_t dst[16], src[16];
	uint8_t dst_len, src_len;
	uint32_t table, metric, ifindex;
	uint8_t gw_low; /* 0: no gateway */
	uint8_t type;
	int64_t expires_ms;
};

static struct spec *s_specs;
static size_t s_nspecs, s_cap;

static const uint32_t s_tables[] = { RT_TABLE_MAIN, 100, 1000, 70000 };

static void random_spec(struct spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->dst[0] = 0x20;
	sp->dst[1] = 0x01;
	sp->dst[2] = 0x0d;
	sp->dst[3] = 0xb8;
	sp->dst[4] = (uint8_t)rnd(4); /* few /40s: nested prefixes */
	sp->dst[5] = (uint8_t)rnd(64);
	sp->dst[6] = (uint8_t)rnd(3);
	sp->dst[7] = (uint8_t)rnd(256);
	sp->dst_len = (uint8_t)(40 + 8 * rnd(4)); /* /40 .. /64 */
	for (unsigned int i = sp->dst_len / 8; i < 16; i++)
		sp->dst[i] = 0;
	if (rnd(20) == 0) { /* source-specific */
		sp->src[0] = 0x20;
		sp->src[1] = 0x01;
		sp->src[2] = 0x0d;
		sp->src[3] = 0xb8;
		sp->src[4] = 0xff;
		sp->src[5] = (uint8_t)rnd(4);
		sp->src_len = 48;
	}
	sp->table = s_tables[rnd(4)];
	sp->metric = rnd(3) ? 1024 : 100 * (1 + rnd(3));
	sp->ifindex = 2 + rnd(4);
	sp->gw_low = rnd(2) ? (uint8_t)(1 + rnd(8)) : 0;
	sp->type = rnd(30) ? RTN_UNICAST : RTN_UNREACHABLE;
	if (sp->type != RTN_UNICAST) {
		sp->gw_low = 0;
		sp->ifindex = 1;
	}
	sp->expires_ms = rnd(10) == 0 ? s_now + 100000 + rnd(1000000) : 0;
}

/* s_pr from sp. */
static void to_pr(const struct spec *sp)
{
	struct route *r = &s_pr.r;

	memset(r, 0, sizeof(*r));
	s_pr.has_metrics = 0;
	memcpy(r->dst, sp->dst, 16);
	memcpy(r->src, sp->src, 16);
	r->dst_len = sp->dst_len;
	r->src_len = sp->src_len;
	r->table = sp->table;
	r->metric = sp->metric;
	r->protocol = RTPROT_STATIC;
	r->type = sp->type;
	r->scope = RT_SCOPE_UNIVERSE;
	r->pref = 0;
	r->expires_ms = sp->expires_ms;
	r->nh_count = 1;
	r->nh.ifindex = sp->ifindex;
	r->nh.weight = 1;
	if (sp->gw_low) {
		r->nh.has_gw = 1;
		r->nh.gw[0] = 0x20;
		r->nh.gw[1] = 0x01;
		r->nh.gw[2] = 0x0d;
		r->nh.gw[3] = 0xb8;
		r->nh.gw[15] = sp->gw_low;
	}
	s_pr.nhs[0] = r->nh;
}

static void remember(const struct spec *sp)
{
	if (s_nspecs == s_cap) {
		s_cap = s_cap ? 2 * s_cap : 1024;
		s_specs = realloc(s_specs, s_cap * sizeof(*s_specs));
		assert_non_null(s_specs);
	}
	s_specs[s_nspecs++] = *sp;
}

static void apply_new(struct mirror *m, uint16_t flags)
{
	struct mirror_delta d = { 0 };

	assert_int_equal(mirror_apply_new(m, &s_pr, flags, &d), 0);
}

static struct mirror *random_mirror(unsigned int n)
{
	struct mirror *m = NULL;
	struct route_link l = { .flags = 0x11043 };

	assert_int_equal(mirror_new(&m), 0);
	l.ifindex = 1;
	l.flags = 0x10049; /* lo */
	snprintf(l.name, sizeof(l.name), "lo");
	assert_true(mirror_set_link(m, &l) >= 0);
	l.flags = 0x11043;
	for (uint32_t i = 2; i <= 5; i++) {
		l.ifindex = i;
		snprintf(l.name, sizeof(l.name), "eth%u", i);
		assert_true(mirror_set_link(m, &l) >= 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(mirror_add_table(m, s_tables[i], 0), 0);
	s_nspecs = 0;
	for (unsigned int i = 0; i < n; i++) {
		struct spec sp;

		random_spec(&sp);
		to_pr(&sp);
		apply_new(m, NLM_F_CREATE | NLM_F_EXCL);
		remember(&sp);
	}
	return m;
}

/* One random kernel change. */
static void random_change(struct mirror *m)
{
	struct mirror_delta d = { 0 };
	struct spec sp;
	uint32_t k = rnd(100);

	if (!s_nspecs || k < 30) { /* add */
		random_spec(&sp);
		to_pr(&sp);
		apply_new(m, NLM_F_CREATE | NLM_F_EXCL);
		remember(&sp);
		return;
	}
	sp = s_specs[rnd((uint32_t)s_nspecs)];
	if (k < 55) { /* delete */
		to_pr(&sp);
		assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
	} else if (k < 70) { /* replace: another device or gateway */
		sp.ifindex = sp.type == RTN_UNICAST ? 2 + rnd(4) : 1;
		if (sp.gw_low)
			sp.gw_low = (uint8_t)(1 + rnd(8));
		to_pr(&sp);
		apply_new(m, NLM_F_CREATE | NLM_F_REPLACE);
		remember(&sp);
	} else if (k < 80 && sp.gw_low) { /* append a hop: the kernel announces the group */
		struct route_nh h;

		to_pr(&sp);
		h = s_pr.r.nh;
		h.gw[15] = (uint8_t)(sp.gw_low + 1 + rnd(5));
		h.ifindex = 2 + rnd(4);
		s_pr.nhs[0] = s_pr.r.nh;
		s_pr.nhs[1] = h;
		memset(&s_pr.r.nh, 0, sizeof(s_pr.r.nh));
		s_pr.r.nh_count = 2;
		apply_new(m, NLM_F_CREATE | NLM_F_APPEND);
	} else if (k < 90 && sp.expires_ms) {	      /* re-announced with a deadline moved */
		sp.expires_ms += rnd(2) ? 300 : 5000; /* within a dump's rounding, or not */
		to_pr(&sp);
		apply_new(m, NLM_F_CREATE | NLM_F_REPLACE);
	} else { /* the same route again, unchanged (a targeted dump re-reads it) */
		to_pr(&sp);
		assert_int_equal(mirror_apply_update(m, &s_pr, &d), 0);
	}
}

#endif
