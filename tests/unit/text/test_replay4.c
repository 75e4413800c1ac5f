// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_replay4 - IPv4 dumps recorded from a real kernel (tests/data/inet-*, made by
 * tests/data/capture_inet.sh and capture_inet_notify.sh with build/tools/nlrec4) replayed
 * through nlparse4, order4 and the IPv4 renderers, and compared with what the same kernel
 * printed at the same moment: /proc/net/route byte for byte (header and padding included) and
 * `ip -j -4 route show table all` byte for byte. Also: every table of every dump is in
 * order4's order, the tables in the kernel's (bucket ascending), and the generic key
 * (order_key_of(), which the mirror's chunks sort by) agrees with order4's.
 *
 *   test_replay4            the recorded sets under tests/data (RTSNAP_TESTDATA_DIR)
 *   test_replay4 DIR...     those directories instead, each a state as nlrec4 dump writes one
 *                           or a stream as nlrec4 notify writes one (its steps), for the live
 *                           tests (tests/integration/inet_kinds.t, inet_notify.t)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/rtnetlink.h>

#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/order.h"
#include "rtsnap/order4.h"
#include "rtsnap/render4.h"
#include "rtsnap/route4.h"
#include "rtsnap/routectx.h"

static char *slurp_path(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return slurp_path(path, len);
}

/* A dump's routes as records that own their hops and metrics (r.nhs, r.metrics set). */
struct held {
	struct route r;
	struct route_nh *nhs;
	struct route_metrics *m;
	void *encaps;
};

struct dump {
	struct held *v;
	size_t n;
};

static struct nlparse_route s_pr;

static void hold(struct dump *d)
{
	struct held *h;
	size_t esz;

	d->v = realloc(d->v, (d->n + 1) * sizeof(*d->v));
	assert_non_null(d->v);
	h = &d->v[d->n++];
	memset(h, 0, sizeof(*h));
	h->r = s_pr.r;
	if (s_pr.r.nh_count > 1) {
		h->nhs = malloc(s_pr.r.nh_count * sizeof(*h->nhs));
		assert_non_null(h->nhs);
		memcpy(h->nhs, s_pr.nhs, s_pr.r.nh_count * sizeof(*h->nhs));
	}
	esz = route_encaps_size(&h->r, h->nhs);
	if (esz) {
		h->encaps = malloc(esz);
		assert_non_null(h->encaps);
	}
	route_encaps_copy(&h->r, h->nhs, h->encaps);
	h->r.nhs = h->nhs;
	if (s_pr.has_metrics) {
		h->m = malloc(sizeof(*h->m));
		assert_non_null(h->m);
		*h->m = s_pr.m;
	}
	h->r.metrics = h->m;
}

static void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].nhs);
		free(d->v[i].m);
		free(d->v[i].encaps);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* The routes of [buf, buf+len) up to the first NLMSG_DONE; returns where it stopped. */
static const char *read_dump(const char *buf, size_t len, struct dump *d)
{
	size_t left = len;
	const struct nlmsghdr *h;

	for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE)
			return (const char *)h + NLMSG_ALIGN(h->nlmsg_len);
		assert_int_equal(h->nlmsg_type, RTM_NEWROUTE);
		assert_int_equal(nlparse_route4(h, &s_pr), 1);
		hold(d);
	}
	return buf + len;
}

static void load_ctx(const char *dir, struct route_ctx *c)
{
	size_t len, left;
	char *buf;

	memset(c, 0, sizeof(*c));
	buf = slurp(dir, "links.nl", &len);
	assert_non_null(buf);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		struct route_link l;

		if (h->nlmsg_type == RTM_NEWLINK && nlparse_link(h, &l) == 1)
			assert_int_equal(route_ctx_add_link(c, &l), 0);
	}
	free(buf);
	buf = slurp(dir, "nexthops.nl", &len);
	left = buf ? len : 0;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; buf && NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		struct route_nhobj o;

		if (h->nlmsg_type == RTM_NEWNEXTHOP && nlparse_nexthop(h, &o) == 1)
			assert_int_equal(route_ctx_add_nhobj(c, &o), 0);
	}
	free(buf);
	assert_int_equal(names_load(NULL, &c->names), 0);
	route_ctx_sort(c);
}

/* The generic key (order_key_of(), what the mirror's chunks sort by) orders a and b as
 * order4_route_cmp() does, and is equal exactly for one group. */
static void check_generic_key(const struct route *a, const struct route *b)
{
	int x = order4_route_cmp(a, b), y = order_route_cmp(a, b);

	if ((x > 0) != (y > 0) || (x < 0) != (y < 0))
		fail_msg("order_key_of() and order4_key() disagree (%d, %d)", x, y);
}

/* Tables in bucket order, each table's routes in order4's order (groups: equal keys). */
static void check_order(const struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) /* every route against a few others, both ways */
		for (size_t k = 0; k < d->n; k += 1 + d->n / 16) {
			check_generic_key(&d->v[i].r, &d->v[k].r);
			check_generic_key(&d->v[k].r, &d->v[i].r);
		}
	for (size_t i = 1; i < d->n; i++) {
		const struct route *a = &d->v[i - 1].r, *b = &d->v[i].r;

		if (a->table == b->table) {
			if (order4_route_cmp(a, b) > 0)
				fail_msg("route %zu sorts before route %zu in table %u", i, i - 1,
					 a->table);
			continue;
		}
		assert_true(order_table_bucket(a->table) <= order_table_bucket(b->table));
		for (size_t k = 0; k < i; k++) /* a table is dumped in one piece */
			assert_true(d->v[k].r.table != b->table);
	}
}

static void render_proc(const struct route_ctx *c, const struct dump *d, struct strbuf *sb)
{
	render_proc4_header(sb);
	for (size_t i = 0; i < d->n; i++)
		render_proc4_route(c, &d->v[i].r, sb);
	strbuf_putc(sb, 0);
	assert_false(sb->failed);
}

static void render_json(const struct route_ctx *c, const struct dump *d, struct strbuf *sb)
{
	strbuf_putc(sb, '[');
	for (size_t i = 0; i < d->n; i++) {
		if (i)
			strbuf_putc(sb, ',');
		render_json4_route(c, &d->v[i].r, sb);
	}
	strbuf_puts(sb, "]\n");
	strbuf_putc(sb, 0);
	assert_false(sb->failed);
}

/* The first line where a and b differ, for the failure message. */
static void show_diff(const char *what, const char *ours, const char *theirs)
{
	size_t line = 1, i = 0;

	while (ours[i] && ours[i] == theirs[i]) {
		line += ours[i] == '\n';
		i++;
	}
	while (i && ours[i - 1] != '\n' && ours[i - 1] != ',' && ours[i - 1] != '{')
		i--;
	print_message("# %s: first difference on line %zu:\n#  ours:   %.200s\n#  kernel: %.200s\n",
		      what, line, ours + i, theirs + i);
}

/* One state (a directory as nlrec4 dump writes it): order, proc, JSON. */
static void check_state(const char *dir)
{
	struct route_ctx c;
	struct dump d = { 0 };
	struct strbuf proc = { 0 }, json = { 0 };
	size_t len, plen, jlen;
	char *buf = slurp(dir, "routes.nl", &len), *kproc = slurp(dir, "proc.txt", &plen),
	     *kjson = slurp(dir, "ip.json", &jlen);

	assert_non_null(buf);
	assert_non_null(kproc);
	assert_non_null(kjson);
	load_ctx(dir, &c);
	read_dump(buf, len, &d);
	check_order(&d);
	render_proc(&c, &d, &proc);
	if (strcmp(proc.buf, kproc))
		show_diff("proc", proc.buf, kproc);
	assert_string_equal(proc.buf, kproc);
	render_json(&c, &d, &json);
	if (strcmp(json.buf, kjson))
		show_diff("json", json.buf, kjson);
	assert_string_equal(json.buf, kjson);
	print_message("# %s: %zu routes, %zu proc bytes, %zu JSON bytes match\n", dir, d.n, plen,
		      jlen);
	strbuf_free(&proc);
	strbuf_free(&json);
	dump_free(&d);
	route_ctx_release(&c);
	free(buf);
	free(kproc);
	free(kjson);
}

static const char *datadir(const char *set)
{
	static char dir[4096];
	const char *d = getenv("RTSNAP_TESTDATA_DIR");

	snprintf(dir, sizeof(dir), "%s/%s", d ? d : "tests/data", set);
	return dir;
}

static void test_state(void **state)
{
	check_state(*state);
}

/* The interface names of a whole stream (start/links.nl and every RTM_NEWLINK of notify.nl,
 * the last name kept), so a device deleted later still prints by name. */
static void load_stream_ctx(const char *dir, struct route_ctx *c)
{
	static struct route_link seen[1024];
	static const char *const files[] = { "start/links.nl", "notify.nl" };
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	for (int fi = 0; fi < 2; fi++) {
		size_t len, left;
		char *buf = slurp(dir, files[fi], &len);

		assert_non_null(buf);
		left = len;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			struct route_link l;
			size_t k;

			if (h->nlmsg_type != RTM_NEWLINK || nlparse_link(h, &l) != 1)
				continue;
			for (k = 0; k < n && seen[k].ifindex != l.ifindex; k++)
				;
			if (k == n && n < 1024)
				n++;
			if (k < n)
				seen[k] = l;
		}
		free(buf);
	}
	for (size_t k = 0; k < n; k++)
		assert_int_equal(route_ctx_add_link(c, &seen[k]), 0);
	assert_int_equal(names_load(NULL, &c->names), 0);
	route_ctx_sort(c);
}

/*
 * The per-step dumps of a notification stream (routes-steps.nl) against the kernel's
 * /proc/net/route after each step (proc-steps.txt): order and proc text at every step, and
 * the start's and end's states whole.
 */
static void test_steps(void **state)
{
	char dir[4096];
	struct route_ctx c;
	size_t len, plen;
	char *buf, *kproc;
	const char *p, *end, *kp;
	int steps = 0;

	snprintf(dir, sizeof(dir), "%s", (const char *)*state);
	buf = slurp(dir, "routes-steps.nl", &len);
	kproc = slurp(dir, "proc-steps.txt", &plen);
	if (!buf || !kproc)
		skip();
	load_stream_ctx(dir, &c);
	p = buf;
	end = buf + len;
	kp = kproc;
	while (p < end) {
		struct dump d = { 0 };
		struct strbuf proc = { 0 };
		const char *next = strstr(kp + 1, "\n== "), *body = strchr(kp, '\n') + 1;
		size_t klen = next ? (size_t)(next + 1 - body) : strlen(body);

		assert_true(!strncmp(kp, "== ", 3));
		p = read_dump(p, (size_t)(end - p), &d);
		check_order(&d);
		render_proc(&c, &d, &proc);
		if (strlen(proc.buf) != klen || memcmp(proc.buf, body, klen)) {
			char *k = strndup(body, klen);

			print_message("# step %d (%.*s)\n", steps, (int)(strchr(kp, '\n') - kp),
				      kp);
			show_diff("proc", proc.buf, k);
			fail();
		}
		strbuf_free(&proc);
		dump_free(&d);
		kp = next ? next + 1 : kp + strlen(kp);
		steps++;
	}
	print_message("# %s: %d steps match\n", dir, steps);
	route_ctx_release(&c);
	free(buf);
	free(kproc);
}

int main(int argc, char **argv)
{
	static const char *const sets[] = { "inet-kinds" };
	static const char *const streams[] = { "inet-notify-routes", "inet-notify-links",
					       "inet-notify-random" };
	struct CMUnitTest tests[64];
	size_t n = 0;
	static char dirs[64][4096 + 16];

	cmocka_set_message_output(CM_OUTPUT_TAP);
	if (argc > 1) {
		for (int i = 1; i < argc && n < 64; i++) {
			char path[4096 + 32];
			FILE *f;

			/* a stream's directory: its steps; else one state */
			snprintf(path, sizeof(path), "%.4000s/routes-steps.nl", argv[i]);
			f = fopen(path, "rb");
			tests[n++] = (struct CMUnitTest){ argv[i], f ? test_steps : test_state,
							  NULL, NULL, argv[i] };
			if (f)
				fclose(f);
		}
		return _cmocka_run_group_tests("replay4", tests, n, NULL, NULL);
	}
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		snprintf(dirs[n], sizeof(dirs[n]), "%s", datadir(sets[i]));
		tests[n] = (struct CMUnitTest){ sets[i], test_state, NULL, NULL, dirs[n] };
		n++;
	}
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		const char *sub[] = { "start", "end" };

		snprintf(dirs[n], sizeof(dirs[n]), "%s", datadir(streams[i]));
		tests[n] = (struct CMUnitTest){ streams[i], test_steps, NULL, NULL, dirs[n] };
		n++;
		for (int k = 0; k < 2; k++) {
			snprintf(dirs[n], sizeof(dirs[n]), "%.4000s/%s", datadir(streams[i]),
				 sub[k]);
			tests[n] = (struct CMUnitTest){ dirs[n], test_state, NULL, NULL, dirs[n] };
			n++;
		}
	}
	return _cmocka_run_group_tests("replay4", tests, n, NULL, NULL);
}
