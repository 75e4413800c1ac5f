// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_watch - watched routes evaluated at publication (watch.h): over random mirrors and
 * random kernel changes (the generator of test_diff), the answers of a state that evaluates
 * only the watches a changed route can answer (the diff with the snapshot replaced) are
 * those of a state that evaluates every watch at every publication: present, route object,
 * route_info labels, change counts and histories. And the first answers, a reload that keeps
 * a watch's state, the /watch and /metrics text of a reading.
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
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtsnap/builder.h"
#include "rtsnap/compose.h"
#include "rtsnap/diff.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/watch.h"
#include "rtsnap/watchspec.h"

#include "instance.h"
#include "randmirror.h"

/* ---- watches ---- */

/* A list of about n watches over the routes in s_specs: exact prefixes (existing ones and a
 * few that never exist) and lookups of addresses inside them. */
static struct watch_list *random_list(unsigned int n)
{
	struct watch_list *l = NULL;
	char text[256], a[INET6_ADDRSTRLEN], err[256];

	assert_int_equal(watch_list_new(&l), 0);
	for (unsigned int i = 0; i < n; i++) {
		struct spec sp = s_specs[rnd((uint32_t)s_nspecs)];

		if (sp.src_len || rnd(10) == 0)
			random_spec(&sp); /* maybe never there */
		if (i % 2) {
			uint8_t x[16];

			memcpy(x, sp.dst, 16);
			x[15] = (uint8_t)rnd(256);
			x[9] = (uint8_t)rnd(256);
			inet_ntop(AF_INET6, x, a, sizeof(a));
			snprintf(text, sizeof(text), "w%u=lookup:%s table %u", i, a, sp.table);
		} else {
			inet_ntop(AF_INET6, sp.dst, a, sizeof(a));
			snprintf(text, sizeof(text), "w%u=%s/%u table %u", i, a, sp.dst_len,
				 sp.table);
		}
		if (watch_list_add(l, NULL, text, err, sizeof(err)))
			fail_msg("%s: %s", text, err);
	}
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), 0);
	return l;
}

/* The object without its "expires" (rendered for the time of the evaluation that made it:
 * an answer kept from an earlier publication shows the time left then). */
static void same_object(const char *x, const char *y)
{
	size_t xo, xl, yo, yl;

	diff_expires_span(x, strlen(x), &xo, &xl);
	diff_expires_span(y, strlen(y), &yo, &yl);
	if (!xl)
		xo = strlen(x);
	if (!yl)
		yo = strlen(y);
	assert_int_equal(xo, yo);
	assert_memory_equal(x, y, xo);
	assert_string_equal(x + xo + xl, y + yo + yl);
}

static void same_answers(const struct watch_view *x, const struct watch_view *y)
{
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(x->n, y->n);
	for (size_t k = 0; k < x->n; k++) {
		const struct watch_answer *a = x->ans[k], *b = y->ans[k];

		assert_int_equal(x->pos[k], y->pos[k]);
		assert_int_equal(a->present, b->present);
		if (a->present) {
			same_object(a->route, b->route);
			assert_string_equal(a->info, b->info);
		}
		assert_int_equal(a->changes, b->changes);
		assert_int_equal(a->nhist, b->nhist);
		for (unsigned int h = 0; h < a->nhist; h++) {
			assert_int_equal(a->hist[h].generation, b->hist[h].generation);
			assert_int_equal(!a->hist[h].route, !b->hist[h].route);
		}
	}
}

/* Incremental evaluation equals evaluating everything, publication after publication. */
static void test_incremental_equals_full(void **state)
{
	struct mirror *m = random_mirror(3000);
	struct watch_state inc, full;
	struct snapshot *s = NULL, *prev;
	uint64_t changes = 0, evaluated_inc = 0, evaluated_full = 0;

	(void)state;
	watch_list_publish(random_list(400));
	assert_int_equal(watch_state_init(&inc, AF_INET6, NULL), 0);
	assert_int_equal(watch_state_init(&full, AF_INET6, ""), 0);
	for (int round = 0; round < 300; round++) {
		struct watch_view *vi;
		unsigned int nch = round ? 1 + rnd(round % 10 ? 8 : 200) : 0;

		for (unsigned int i = 0; i < nch; i++)
			random_change(m);
		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
		prev = snapshot_acquire(test_chain());
		assert_int_equal(watch_eval(&inc, s, prev, 1000 * round), 0);
		vi = snapshot_views(s)->watch;
		snapshot_views(s)->watch = NULL;
		assert_int_equal(watch_eval(&full, s, NULL, 1000 * round), 0);
		same_answers(vi, snapshot_views(s)->watch);
		watch_view_free(vi);
		snapshot_release(prev);
		snapshot_publish(s);
	}
	for (size_t k = 0; k < full.n; k++)
		changes += full.ans[k]->changes;
	evaluated_inc = inc.evaluated;
	evaluated_full = full.evaluated;
	print_message("# %llu changes of 400 watches over 300 publications; %llu evaluations "
		      "instead of %llu\n",
		      (unsigned long long)changes, (unsigned long long)evaluated_inc,
		      (unsigned long long)evaluated_full);
	assert_true(changes > 0);
	assert_true(evaluated_inc < evaluated_full / 4);
	watch_state_free(&inc);
	watch_state_free(&full);
	mirror_free(m);
	watch_list_publish(NULL);
}

/* A reload: a watch of the same name and spec keeps its state; a new one starts at 0; a
 * reading of a snapshot evaluated with the old list finds the kept ones by name. */
static void test_reload_and_reading(void **state)
{
	struct mirror *m = random_mirror(200);
	struct watch_list *l = NULL;
	struct watch_state st;
	struct watch_reading r;
	struct snapshot *s = NULL, *prev, *old;
	struct strbuf sb = { 0 };
	char err[256], a[INET6_ADDRSTRLEN], text[256];
	const struct spec sp = s_specs[0];

	(void)state;
	inet_ntop(AF_INET6, sp.dst, a, sizeof(a));
	assert_int_equal(watch_list_new(&l), 0);
	snprintf(text, sizeof(text), "gw=%s/%u table %u", a, sp.dst_len, sp.table);
	assert_int_equal(watch_list_add(l, NULL, text, err, sizeof(err)), 0);
	assert_int_equal(watch_list_add(l, NULL, "v4=default4", err, sizeof(err)), 0);
	assert_int_equal(watch_list_add(l, NULL, "far=default netns elsewhere", err, sizeof(err)),
			 0);
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), 0);
	watch_list_publish(l);
	assert_int_equal(watch_state_init(&st, AF_INET6, NULL), 0);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	prev = snapshot_acquire(test_chain());
	assert_int_equal(watch_eval(&st, s, prev, 5000), 0);
	snapshot_release(prev);
	snapshot_publish(s);
	assert_int_equal(st.n, 1); /* v4 and far are other instances' */
	assert_int_equal(st.ans[0]->present, 1);
	assert_int_equal(st.ans[0]->changes, 0);

	/* the route deleted: one change */
	to_pr(&sp);
	{
		struct mirror_delta d = { 0 };

		assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
	}
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	prev = snapshot_acquire(test_chain());
	assert_int_equal(watch_eval(&st, s, prev, 7000), 0);
	snapshot_release(prev);
	snapshot_publish(s);
	assert_int_equal(st.ans[0]->present, 0);
	assert_int_equal(st.ans[0]->changes, 1);
	assert_int_equal(st.ans[0]->changed_ms, 7000);
	assert_int_equal(st.ans[0]->nhist, 1);
	assert_null(st.ans[0]->hist[0].route);

	/* a reload: gw kept (its spec unchanged), a new watch; the current snapshot still holds
	 * the answers of the old list until the next publication */
	assert_int_equal(watch_list_new(&l), 0);
	assert_int_equal(watch_list_add(l, NULL, "new=default", err, sizeof(err)), 0);
	assert_int_equal(watch_list_add(l, NULL, text, err, sizeof(err)), 0);
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), 0);
	watch_list_publish(l);
	assert_true(watch_state_stale(&st));
	old = snapshot_acquire(test_chain());
	assert_int_equal(watch_reading_init(&r), 0);
	watch_reading_add(&r, old);
	assert_null(r.ans[0]);			/* new: absent until evaluated */
	assert_int_equal(r.ans[1]->changes, 1); /* gw, found by name and spec */
	watch_reading_free(&r);
	snapshot_release(old);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	prev = snapshot_acquire(test_chain());
	assert_int_equal(watch_eval(&st, s, prev, 9000), 0);
	snapshot_release(prev);
	snapshot_publish(s);
	assert_false(watch_state_stale(&st));
	assert_int_equal(st.n, 2);
	assert_int_equal(st.ans[1]->changes, 1);
	assert_int_equal(st.ans[1]->changed_ms, 7000);

	/* the text */
	old = snapshot_acquire(test_chain());
	assert_int_equal(watch_reading_init(&r), 0);
	watch_reading_add(&r, old);
	watch_render_metrics(&r, &sb);
	strbuf_putc(&sb, '\0');
	assert_non_null(strstr(sb.buf, "rtsnap_watches 2\n"));
	assert_non_null(strstr(sb.buf, "rtsnap_watch_present{watch=\"gw\",family=\"inet6\"} 0\n"));
	assert_non_null(
	    strstr(sb.buf, "rtsnap_watch_changes_total{watch=\"gw\",family=\"inet6\"} 1\n"));
	assert_non_null(strstr(
	    sb.buf,
	    "rtsnap_watch_last_change_timestamp_seconds{watch=\"gw\",family=\"inet6\"} 7.000\n"));
	sb.len = 0;
	watch_render_json(&r, &sb);
	strbuf_putc(&sb, '\0');
	assert_non_null(strstr(
	    sb.buf,
	    "{\"watches\":[{\"name\":\"new\",\"spec\":\"new=default\",\"kind\":\"route\",\"family\":\"inet6\",\"netns\":\"\",\"table\":\"254\",\"target\":\"::/0\""));
	assert_non_null(strstr(sb.buf, "\"changed_at\":\"1970-01-01T00:00:07Z\",\"changes\":1"));
	assert_non_null(strstr(sb.buf, "\"history\":[{\"generation\":"));
	strbuf_free(&sb);
	watch_reading_free(&r);
	snapshot_release(old);
	watch_state_free(&st);
	mirror_free(m);
	watch_list_publish(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incremental_equals_full),
		cmocka_unit_test(test_reload_and_reading),
	};

	log_set_level(LOG_LVL_WARN);
	s_now = snapshot_now_ms();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
