// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_replay - replay netlink dumps recorded from a real kernel (tests/data/DIR/ files, made
 * by tests/data/capture.sh: mixed/, and capture_encap.sh: encap/) through nlparse, snapshot
 * and the renderers, and compare with what the same kernel printed at the same moment
 * (proc.txt, ip.json; encap/'s JSON byte for byte, since ip prints "dst" twice for some
 * tunnels and a JSON parser keeps one). synthetic/ is no recording: messages with what the
 * kernel here cannot hold (capture_synthetic.sh), and what Debian's ip printed for them. Also feeds corrupted copies of the messages to the
 * parser: they must be rejected or parsed, never crash, and what parses must render (ASan
 * build: no read outside what nlparse checked).
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
#include <jansson.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

static const char *s_set = "mixed"; /* the recorded set under test (tests/data/SET) */

static const char *datadir(void)
{
	static char dir[4096];
	const char *d = getenv("RTSNAP_TESTDATA_DIR");

	snprintf(dir, sizeof(dir), "%s/%s", d ? d : "tests/data", s_set);
	return dir;
}

static char *slurp(const char *name, size_t *len)
{
	char path[4096 + 256];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", datadir(), name);
	f = fopen(path, "rb");
	assert_non_null(f);
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

/* Feed every message of a recorded dump to fn. Returns the number of messages. */
static int replay(const char *name, int (*fn)(const struct nlmsghdr *, void *), void *ctx)
{
	size_t len;
	char *buf = slurp(name, &len);
	size_t left = len;
	int n = 0;

	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE)
			break;
		assert_int_equal(fn(h, ctx), 0);
		n++;
	}
	free(buf);
	return n;
}

static struct nlparse_route s_pr;

static int add_link(const struct nlmsghdr *h, void *ctx)
{
	struct route_link l;

	assert_int_equal(nlparse_link(h, &l), 1);
	return snapshot_add_link(ctx, &l);
}

static int add_route(const struct nlmsghdr *h, void *ctx)
{
	int r = nlparse_route(h, 0, &s_pr);

	assert_true(r >= 0);
	if (r == 0)
		return 0;
	return snapshot_add_route(ctx, &s_pr.r, s_pr.nhs, s_pr.r.nh_count,
				  s_pr.has_metrics ? &s_pr.m : NULL);
}

static int add_prefix(const struct nlmsghdr *h, void *ctx)
{
	struct prefix_key k;
	int r = nlparse_prefix_key(h, &s_pr, &k);

	assert_true(r >= 0);
	return r ? snapshot_add_prefix_key(ctx, &k) : 0;
}

static struct snapshot *build(void)
{
	struct snapshot *s = NULL;

	assert_int_equal(snapshot_new(NULL, &s), 0);
	assert_true(replay("links.nl", add_link, s) > 0);
	assert_true(replay("routes.nl", add_route, s) > 0);
	replay("prefix.nl", add_prefix, s);
	assert_int_equal(names_load(NULL, &s->ctx.names), 0);
	assert_int_equal(snapshot_finish(s), 0);
	return s;
}

/* Blank the refcnt column (the only one netlink cannot give) of every line. */
static void mask_refcnt(char *text)
{
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');

		if ((nl ? (size_t)(nl - line) : strlen(line)) > 122)
			memset(line + 114, '-', 8);
		if (!nl)
			break;
		line = nl + 1;
	}
}

static void test_proc_matches_kernel(void **state)
{
	struct snapshot *s;

	s_set = *state;
	s = build();
	size_t klen;
	char *kernel = slurp("proc.txt", &klen);
	size_t olen;
	char *ours = render_proc_text(s, &olen);

	mask_refcnt(kernel);
	mask_refcnt(ours);
	if (strcmp(kernel, ours) != 0)
		fprintf(stderr, "# kernel:\n%s# ours:\n%s", kernel, ours);
	assert_string_equal(ours, kernel);
	free(kernel);
	free(ours);
	snapshot_free(s);
}

/* The whole JSON array of s as a response would send it, NUL-terminated, into all. */
static void render_all(const struct snapshot *s, struct strbuf *all)
{
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 };
	int n = render_json_all(s, s->taken_mono_ms, &segs, &dyn);

	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		strbuf_append(all, segs[i].p, segs[i].len);
	strbuf_putc(all, 0);
	assert_false(all->failed);
	free(segs);
	strbuf_free(&dyn);
}

static void test_json_matches_iproute2(void **state)
{
	struct snapshot *s;
	struct strbuf all = { 0 };
	json_t *ours, *theirs;
	json_error_t err;
	size_t len;
	char *ip;

	s_set = *state;
	s = build();
	ip = slurp("ip.json", &len);
	render_all(s, &all);
	ours = json_loads(all.buf, 0, &err);
	assert_non_null(ours);
	theirs = json_loads(ip, 0, &err);
	assert_non_null(theirs);
	assert_int_equal(json_array_size(ours), json_array_size(theirs));
	for (size_t i = 0; i < json_array_size(theirs); i++) {
		json_t *a = json_array_get(ours, i), *b = json_array_get(theirs, i);
		json_t *ea = json_object_get(a, "expires"), *eb = json_object_get(b, "expires");

		/* expires counts down: recorded and rendered a moment apart, allow 1 s */
		if (ea && eb) {
			assert_true(llabs(json_integer_value(ea) - json_integer_value(eb)) <= 1);
			json_object_del(a, "expires");
			json_object_del(b, "expires");
		}
		if (!json_equal(a, b)) {
			char *x = json_dumps(a, JSON_COMPACT), *y = json_dumps(b, JSON_COMPACT);

			fprintf(stderr, "# route %zu\n#  ours: %s\n#    ip: %s\n", i, x, y);
			free(x);
			free(y);
		}
		assert_true(json_equal(a, b));
	}
	json_decref(ours);
	json_decref(theirs);
	free(ip);
	strbuf_free(&all);
	snapshot_free(s);
}

/* A set without expiring routes renders to ip's bytes exactly (duplicate keys included; and
 * jansson cannot read an "id" of 2^64 - 1, so this is the only JSON check of encap/). */
static void test_json_bytes_match_iproute2(void **state)
{
	struct snapshot *s;
	struct strbuf all = { 0 };
	size_t len;
	char *ip;

	s_set = *state;
	s = build();
	ip = slurp("ip.json", &len);
	render_all(s, &all);
	if (strcmp(all.buf, ip) != 0)
		fprintf(stderr, "# ours:\n%s# ip:\n%s", all.buf, ip);
	assert_string_equal(all.buf, ip);
	free(ip);
	strbuf_free(&all);
	snapshot_free(s);
}

/* Render the route s_pr holds (just parsed) on its own: JSON and proc. */
static void render_one(void)
{
	struct snapshot *s = NULL;
	struct strbuf all = { 0 };

	assert_int_equal(snapshot_new(NULL, &s), 0);
	assert_int_equal(snapshot_add_route(s, &s_pr.r, s_pr.nhs, s_pr.r.nh_count,
					    s_pr.has_metrics ? &s_pr.m : NULL),
			 0);
	assert_int_equal(names_load(NULL, &s->ctx.names), 0);
	assert_int_equal(snapshot_finish(s), 0);
	render_all(s, &all);
	strbuf_free(&all);
	snapshot_free(s);
}

/* Every truncation and a sweep of byte flips of each recorded message: the parser must
 * either parse or reject (-EBADMSG), and never read out of bounds (ASan build). */
static void test_corrupted_messages(void **state)
{
	size_t len;
	char *buf;
	size_t left;
	int rejected = 0, parsed = 0;

	s_set = *state;
	buf = slurp("routes.nl", &len);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		uint32_t mlen = h->nlmsg_len;
		char *copy = malloc(mlen);

		if (h->nlmsg_type != RTM_NEWROUTE) {
			free(copy);
			continue;
		}
		for (uint32_t cut = NLMSG_HDRLEN; cut < mlen; cut++) {
			struct nlmsghdr *c;

			/* a fresh heap block of exactly cut bytes, so ASan sees overreads */
			c = malloc(cut);
			memcpy(c, h, cut);
			c->nlmsg_len = cut;
			int r = nlparse_route(c, 0, &s_pr);
			assert_true(r == -EBADMSG || r == 0 || r == 1);
			rejected += r == -EBADMSG;
			if (r == 1)
				render_one();
			free(c);
		}
		for (uint32_t pos = NLMSG_HDRLEN; pos < mlen; pos++) {
			int r;

			memcpy(copy, h, mlen);
			copy[pos] ^= (char)0xa5;
			r = nlparse_route((struct nlmsghdr *)copy, 0, &s_pr);
			assert_true(r == -EBADMSG || r == 0 || r == 1);
			parsed += r == 1;
			if (r == 1)
				render_one();
		}
		free(copy);
	}
	assert_true(rejected > 0);
	assert_true(parsed > 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "mixed: proc text is the kernel's", test_proc_matches_kernel, NULL, NULL,
		  "mixed" },
		{ "mixed: JSON is ip -j's", test_json_matches_iproute2, NULL, NULL, "mixed" },
		{ "mixed: corrupted messages are parsed or rejected", test_corrupted_messages, NULL,
		  NULL, "mixed" },
		{ "encap: proc text is the kernel's", test_proc_matches_kernel, NULL, NULL,
		  "encap" },
		{ "encap: JSON is ip -j's, byte for byte", test_json_bytes_match_iproute2, NULL,
		  NULL, "encap" },
		{ "encap: corrupted messages are parsed and rendered, or rejected",
		  test_corrupted_messages, NULL, NULL, "encap" },
		{ "synthetic: JSON is ip -j's, byte for byte", test_json_bytes_match_iproute2, NULL,
		  NULL, "synthetic" },
		{ "synthetic: corrupted messages are parsed and rendered, or rejected",
		  test_corrupted_messages, NULL, NULL, "synthetic" },
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
