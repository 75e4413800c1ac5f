// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_events - the change history (events.c) as the collector fills it.
 *
 * A random mirror is published generation after generation with random kernel changes in
 * between, exactly as collector.c publishes (snapshot_acquire the previous one, publish,
 * events_record). Then:
 *   - every event, applied in order to the routes of the first snapshot (remove the
 *     removed objects, which must be there, add the added ones), gives the routes of the
 *     last snapshot; objects compared without "expires";
 *   - /changes since the first generation (events_changes) gives the same net change;
 *   - a filtered rendering holds exactly the unfiltered event's routes that match;
 *   - a family=all stream's rendering is the single-family event with its family and the
 *     stream's cursor as id;
 *   - a history of 16 generations no longer reaches back further (-ERANGE), and a change
 *     larger than an event may be is recorded as a resync, never as a gap.
 */
#include <arpa/inet.h>
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
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/builder.h"
#include "rtsnap/compose.h"
#include "rtsnap/events.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

/* The history this file records into (configure()). */
static struct events_history *s_hist;

#include "instance.h"

static struct nlparse_route s_pr;
static uint64_t s_rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	s_rng ^= s_rng << 13;
	s_rng ^= s_rng >> 7;
	s_rng ^= s_rng << 17;
	return (uint32_t)(s_rng % n);
}

static const uint32_t s_tables[] = { RT_TABLE_MAIN, 100, 1000 };

/* A random route into s_pr: few prefixes, so that changes hit existing routes. */
static void random_route(int with_deadline)
{
	struct route *r = &s_pr.r;

	memset(r, 0, sizeof(*r));
	s_pr.has_metrics = 0;
	r->dst[0] = 0x20;
	r->dst[1] = 0x01;
	r->dst[2] = 0x0d;
	r->dst[3] = 0xb8;
	r->dst[4] = (uint8_t)rnd(8);
	r->dst[5] = (uint8_t)rnd(200);
	r->dst_len = 48;
	r->table = s_tables[rnd(3)];
	r->metric = 1024;
	r->protocol = rnd(2) ? RTPROT_STATIC : RTPROT_BOOT;
	r->type = RTN_UNICAST;
	r->pref = 0;
	r->nh_count = 1;
	r->nh.ifindex = 2 + rnd(3);
	r->nh.weight = 1;
	if (with_deadline && rnd(8) == 0)
		r->expires_ms = snapshot_now_ms() + 600000 + rnd(100000);
	s_pr.nhs[0] = r->nh;
}

static struct mirror *new_mirror(unsigned int n)
{
	struct mirror *m = NULL;
	struct route_link l = { .flags = 0x11043 };
	struct mirror_delta d = { 0 };

	assert_int_equal(mirror_new(&m), 0);
	for (uint32_t i = 2; i <= 4; i++) {
		l.ifindex = i;
		snprintf(l.name, sizeof(l.name), "eth%u", i);
		assert_true(mirror_set_link(m, &l) >= 0);
	}
	for (unsigned int i = 0; i < n; i++) {
		random_route(1);
		assert_int_equal(mirror_apply_new(m, &s_pr, NLM_F_CREATE | NLM_F_REPLACE, &d), 0);
	}
	return m;
}

static void random_changes(struct mirror *m, unsigned int n)
{
	struct mirror_delta d = { 0 };

	for (unsigned int i = 0; i < n; i++) {
		random_route(1);
		if (rnd(3) == 0)
			assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
		else
			assert_int_equal(
			    mirror_apply_new(m, &s_pr, NLM_F_CREATE | NLM_F_REPLACE, &d), 0);
	}
}

/* Publish a snapshot of m as the collector does; returns its generation. */
static uint64_t publish(struct mirror *m)
{
	struct snapshot *s = NULL, *prev;

	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	clock_gettime(CLOCK_REALTIME, &s->taken_at);
	prev = snapshot_acquire(test_chain());
	snapshot_publish(s);
	events_record(s_hist, prev, s);
	snapshot_release(prev);
	return s->generation;
}

/* ---- route objects as strings: sorted keys, no "expires" ---- */

struct bag {
	char **v;
	size_t n, cap;
};

static char *norm(json_t *o)
{
	json_t *c = json_deep_copy(o);
	char *s;

	json_object_del(c, "expires");
	s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(c);
	assert_non_null(s);
	return s;
}

static void bag_add(struct bag *b, char *s)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
		assert_non_null(b->v);
	}
	b->v[b->n++] = s;
}

static void bag_del(struct bag *b, const char *s)
{
	for (size_t i = 0; i < b->n; i++) {
		if (strcmp(b->v[i], s) == 0) {
			free(b->v[i]);
			b->v[i] = b->v[--b->n];
			return;
		}
	}
	fail_msg("removed route not in the state: %s", s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bag_free(struct bag *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i]);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

/* The routes of the current snapshot, as /routes shows them. */
static void current_routes(struct bag *b)
{
	struct snapshot *s = snapshot_acquire(test_chain());
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 }, all = { 0 };
	json_t *arr;
	size_t i;
	json_t *o;
	int n = render_json_all(s, snapshot_now_ms(), &segs, &dyn);

	for (int k = 0; k < n; k++)
		strbuf_append(&all, segs[k].p, segs[k].len);
	arr = json_loadb(all.buf, all.len, 0, NULL);
	assert_non_null(arr);
	json_array_foreach(arr, i, o) bag_add(b, norm(o));
	json_decref(arr);
	free(segs);
	strbuf_free(&dyn);
	strbuf_free(&all);
	snapshot_release(s);
}

/* The JSON of an event's data line; NULL for a resync. */
static json_t *event_data(const char *text, size_t len, uint64_t *id)
{
	const char *d = memmem(text, len, "\ndata: ", 7);
	json_t *o;

	if (strncmp(text, "id: ", 4) != 0)
		return NULL;
	*id = strtoull(text + 4, NULL, 10);
	assert_non_null(d);
	o = json_loadb(d + 7, len - (size_t)(d + 7 - text), JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(o);
	return o;
}

static void apply(struct bag *b, json_t *data)
{
	size_t i;
	json_t *o;

	json_array_foreach(json_object_get(data, "removed"), i, o)
	{
		char *s = norm(o);

		bag_del(b, s);
		free(s);
	}
	json_array_foreach(json_object_get(data, "added"), i, o) bag_add(b, norm(o));
}

static void same_bags(struct bag *x, struct bag *y)
{
	qsort(x->v, x->n, sizeof(*x->v), cmp_str);
	qsort(y->v, y->n, sizeof(*y->v), cmp_str);
	assert_int_equal(x->n, y->n);
	for (size_t i = 0; i < x->n; i++)
		assert_string_equal(x->v[i], y->v[i]);
}

/* Net counts: "+obj" / "-obj" entries, an opposite one cancels. */
static void count(struct bag *b, char *s, int sign)
{
	char *t = malloc(strlen(s) + 2);

	assert_non_null(t);
	sprintf(t, "%c%s", sign > 0 ? '-' : '+', s); /* the opposite */
	for (size_t k = 0; k < b->n; k++) {
		if (strcmp(b->v[k], t) == 0) {
			free(b->v[k]);
			b->v[k] = b->v[--b->n];
			free(t);
			free(s);
			return;
		}
	}
	t[0] = sign > 0 ? '+' : '-';
	bag_add(b, t);
	free(s);
}

/* ---- tests ---- */

static void configure(unsigned int gens, size_t bytes, size_t max_event)
{
	struct events_opts o = { .generations = gens, .bytes = bytes, .max_event = max_event };

	events_free(s_hist);
	s_hist = NULL;
	assert_int_equal(events_new(&o, &s_hist), 0);
}

static void test_events_replay(void **state)
{
	struct mirror *m;
	struct bag st = { 0 }, want = { 0 };
	struct strbuf sb = { 0 };
	uint64_t first, last, gen, after;
	struct events_change *c;
	json_t *doc;
	int events = 0;

	(void)state;
	configure(4096, 64 << 20, 0);
	m = new_mirror(3000);
	first = publish(m);
	current_routes(&st);
	for (int i = 0; i < 60; i++) {
		random_changes(m, i % 10 == 0 ? 200 : 1 + rnd(8));
		last = publish(m);
	}
	/* every event in order */
	for (after = first; events_next(s_hist, after, &c) == 0;
	     after = c->generation, events_put(c)) {
		uint64_t id = 0;
		json_t *d = event_data(c->text, c->len, &id);

		assert_int_equal(c->kind, EVENTS_DIFF);
		assert_int_equal(id, c->generation);
		assert_int_equal(c->previous, after);
		assert_int_equal(json_integer_value(json_object_get(d, "generation")), id);
		assert_int_equal(json_integer_value(json_object_get(d, "previous")), after);
		apply(&st, d);
		json_decref(d);
		events++;
	}
	assert_int_equal(after, last);
	assert_int_equal(events, 60);
	current_routes(&want);
	same_bags(&st, &want);
	/* the same as one document */
	assert_int_equal(events_changes(s_hist, first, NULL, &sb, &gen), 0);
	assert_int_equal(gen, last);
	doc = json_loadb(sb.buf, sb.len, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "previous")), first);
	bag_free(&st);
	mirror_free(m);
	json_decref(doc);
	strbuf_free(&sb);
	bag_free(&want);
}

/* /changes since G for every G of the history equals replaying the events from G. */
static void test_changes_is_the_sum(void **state)
{
	struct mirror *m;
	uint64_t first, last;

	(void)state;
	configure(4096, 64 << 20, 0);
	m = new_mirror(800);
	first = publish(m);
	for (int i = 0; i < 25; i++) {
		random_changes(m, 1 + rnd(20));
		last = publish(m);
	}
	for (uint64_t g = first; g <= last; g += 3) {
		struct bag a = { 0 }, b = { 0 };
		struct strbuf sb = { 0 };
		struct events_change *c;
		uint64_t gen, after;
		json_t *doc;
		size_t i;
		json_t *o;

		/* the net count of every object over the events from g, against the document */
		for (after = g; events_next(s_hist, after, &c) == 0;
		     after = c->generation, events_put(c)) {
			uint64_t id;
			json_t *d = event_data(c->text, c->len, &id);

			json_array_foreach(json_object_get(d, "added"), i, o) count(&a, norm(o), 1);
			json_array_foreach(json_object_get(d, "removed"), i, o)
			    count(&a, norm(o), -1);
			json_decref(d);
		}
		assert_int_equal(events_changes(s_hist, g, NULL, &sb, &gen), 0);
		doc = json_loadb(sb.buf, sb.len, 0, NULL);
		assert_non_null(doc);
		json_array_foreach(json_object_get(doc, "added"), i, o) count(&b, norm(o), 1);
		json_array_foreach(json_object_get(doc, "removed"), i, o) count(&b, norm(o), -1);
		same_bags(&a, &b);
		json_decref(doc);
		strbuf_free(&sb);
		bag_free(&a);
		bag_free(&b);
	}
	mirror_free(m);
}

/* A filtered rendering is the unfiltered event without the routes that do not match. */
static void test_filtered(void **state)
{
	static const char *const params[][2] = {
		{ "table", "100" },	  { "dev", "eth3" },
		{ "protocol", "static" }, { "prefix", "2001:db8:300::/40" },
		{ "expiring", "1" },	  { "table", "main" },
	};
	struct mirror *m;
	uint64_t first;

	(void)state;
	configure(4096, 64 << 20, 0);
	m = new_mirror(1000);
	first = publish(m);
	for (int i = 0; i < 10; i++) {
		random_changes(m, 30);
		publish(m);
	}
	for (size_t p = 0; p < sizeof(params) / sizeof(params[0]); p++) {
		struct query q = { 0 };
		struct events_change *c;
		uint64_t after;
		char err[128];

		struct snapshot *cur = snapshot_acquire(test_chain());

		assert_int_equal(query_parse_arg(&q, cur->ctx.names, params[p][0], params[p][1],
						 err, sizeof(err)),
				 0);
		snapshot_release(cur);
		for (after = first; events_next(s_hist, after, &c) == 0;
		     after = c->generation, events_put(c)) {
			struct strbuf sb = { 0 };
			uint64_t id, id2;
			json_t *all = event_data(c->text, c->len, &id), *f;
			const char *sides[] = { "added", "removed" };

			events_render(c, &q, &sb);
			f = event_data(sb.buf, sb.len, &id2);
			assert_int_equal(id, id2);
			for (int k = 0; k < 2; k++) {
				json_t *va = json_object_get(all, sides[k]);
				json_t *vf = json_object_get(f, sides[k]);
				size_t i, j = 0;
				json_t *o;

				json_array_foreach(va, i, o)
				{
					const char *tb =
					    json_string_value(json_object_get(o, "table"));
					const char *dev =
					    json_string_value(json_object_get(o, "dev"));
					const char *pr =
					    json_string_value(json_object_get(o, "protocol"));
					const char *dst =
					    json_string_value(json_object_get(o, "dst"));
					int want;

					switch (p) {
					case 0:
						want = tb && !strcmp(tb, "100");
						break;
					case 1:
						want = dev && !strcmp(dev, "eth3");
						break;
					case 2:
						want = pr && !strcmp(pr, "static");
						break;
					case 3: {
						char a[64];
						uint8_t b[16];

						snprintf(a, sizeof(a), "%s", dst);
						if (strchr(a, '/'))
							*strchr(a, '/') = 0;
						assert_int_equal(inet_pton(AF_INET6, a, b), 1);
						want = b[4] == 3; /* all are /48s */
						break;
					}
					case 4:
						want = json_object_get(o, "expires") != NULL;
						break;
					default:
						want = !tb;
						break;
					}
					if (!want)
						continue;
					assert_true(j < json_array_size(vf));
					if (!json_equal(o, json_array_get(vf, j))) {
						char *x = json_dumps(o, 0),
						     *y = json_dumps(json_array_get(vf, j), 0);

						fail_msg("filter %s=%s: %s, got %s", params[p][0],
							 params[p][1], x, y);
					}
					j++;
				}
				assert_int_equal(j, json_array_size(vf));
			}
			json_decref(all);
			json_decref(f);
			strbuf_free(&sb);
		}
	}
	mirror_free(m);
}

/*
 * A change as a family=all stream sends it: the id line is the cursor given, the data are
 * the single-family event's with "family" first (filtered, unfiltered, or none when a filter
 * names the other family's address), and /changes' document for one member of the answer.
 */
static void test_family_render(void **state)
{
	struct mirror *m;
	struct query q = { 0 };
	struct events_change *c;
	struct strbuf one = { 0 }, fam = { 0 };
	uint64_t first, after, id, gen, gen2;
	char err[128];

	(void)state;
	configure(4096, 64 << 20, 0);
	m = new_mirror(500);
	first = publish(m);
	for (int i = 0; i < 5; i++) {
		random_changes(m, 20);
		publish(m);
	}
	{
		struct snapshot *cur = snapshot_acquire(test_chain());

		assert_int_equal(
		    query_parse_arg(&q, cur->ctx.names, "table", "100", err, sizeof(err)), 0);
		snapshot_release(cur);
	}
	for (after = first; events_next(s_hist, after, &c) == 0;
	     after = c->generation, events_put(c)) {
		static const char head[] = "id: 4.7-6.9\ndata: {\"family\":\"inet6\",";

		for (int k = 0; k < 3; k++) { /* unfiltered, filtered, none */
			const struct query *qk = k == 1 ? &q : NULL;
			json_t *a, *b;
			const char *d;

			one.len = fam.len = 0;
			one.failed = fam.failed = 0;
			events_render(c, qk, &one);
			events_render_family(c, qk, k == 2, "inet6", "4.7-6.9", &fam);
			assert_false(fam.failed);
			assert_memory_equal(fam.buf, head, sizeof(head) - 1);
			assert_memory_equal(fam.buf + fam.len - 3, "}\n\n", 3);
			a = event_data(one.buf, one.len, &id);
			d = memmem(fam.buf, fam.len, "\ndata: ", 7);
			b = json_loadb(d + 7, fam.len - (size_t)(d + 7 - fam.buf),
				       JSON_DISABLE_EOF_CHECK, NULL);
			assert_non_null(b);
			assert_string_equal(json_string_value(json_object_get(b, "family")),
					    "inet6");
			json_object_del(b, "family");
			if (k == 2) {
				json_object_set_new(a, "added", json_array());
				json_object_set_new(a, "removed", json_array());
			}
			assert_true(json_equal(a, b));
			json_decref(a);
			json_decref(b);
		}
	}
	/* /changes: one member of a family=all answer */
	one.len = fam.len = 0;
	assert_int_equal(events_changes(s_hist, first, NULL, &one, &gen), 0);
	assert_int_equal(events_changes_family(s_hist, first, NULL, 0, "inet", &fam, &gen2), 0);
	assert_int_equal(gen, gen2);
	assert_memory_equal(fam.buf, "{\"family\":\"inet\",", 17);
	assert_int_equal(fam.buf[fam.len - 1], '}'); /* no newline: a member of an array */
	assert_int_equal(fam.len, one.len - 1 + 16);
	assert_memory_equal(fam.buf + 17, one.buf + 1, one.len - 2);
	strbuf_free(&one);
	strbuf_free(&fam);
	mirror_free(m);
}

/* A short history forgets; a large change is a resync; nothing is ever a gap. */
static void test_bounds(void **state)
{
	struct mirror *m;
	struct events_change *c;
	struct events_window w;
	struct strbuf sb = { 0 };
	uint64_t first, last = 0, gen;

	(void)state;
	configure(16, 1 << 20, 2000);
	m = new_mirror(500);
	first = publish(m);
	for (int i = 0; i < 40; i++) {
		random_changes(m, 1);
		last = publish(m);
	}
	events_window(s_hist, &w);
	assert_int_equal(w.head, last);
	assert_int_equal(w.base, last - 16);
	assert_int_equal(events_next(s_hist, first, &c), -ERANGE);
	assert_int_equal(events_changes(s_hist, first, NULL, &sb, &gen), -ERANGE);
	assert_int_equal(events_next(s_hist, w.base, &c), 0);
	assert_int_equal(c->generation, w.base + 1);
	events_put(c);
	/* 2000 bytes per event at most: 200 changed routes do not fit */
	random_changes(m, 200);
	last = publish(m);
	assert_int_equal(events_next(s_hist, last - 1, &c), 0);
	assert_int_equal(c->kind, EVENTS_RESYNC);
	assert_non_null(strstr(c->text, "event: resync\n"));
	assert_non_null(strstr(c->text, "\"reason\":\"too_large\""));
	events_render_family(c, NULL, 0, "inet", "4.1-6.1", &sb); /* no id: a resync */
	assert_memory_equal(sb.buf, "event: resync\ndata: {\"family\":\"inet\",", 37);
	assert_non_null(strstr(sb.buf, "\"reason\":\"too_large\"}\n\n"));
	sb.len = 0;
	events_put(c);
	/* a poller asking across it is told to re-read */
	strbuf_free(&sb);
	assert_int_equal(events_changes(s_hist, last - 1, NULL, &sb, &gen), -ERANGE);
	/* after it, changes go on */
	random_changes(m, 1);
	last = publish(m);
	assert_int_equal(events_next(s_hist, last - 1, &c), 0);
	assert_int_equal(c->kind, EVENTS_DIFF);
	events_put(c);
	strbuf_free(&sb);
	mirror_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_replay), cmocka_unit_test(test_changes_is_the_sum),
		cmocka_unit_test(test_filtered),      cmocka_unit_test(test_family_render),
		cmocka_unit_test(test_bounds),
	};
	int ret;

	log_set_level(LOG_LVL_WARN);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snapshot_chain_free(s_chain);
	s_chain = NULL;
	events_free(s_hist);
	return ret;
}
