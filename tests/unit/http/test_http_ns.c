// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_http_ns - the registry of named namespaces (http_ns.c): names checked, kept sorted,
 * found while served and not after, references that outlive the removal, what a namespace took
 * over freed with its last reference (ASan's leak check tells), and lookups racing adds and
 * removals (run under TSan by make check).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "rtsnap/events.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

/* A namespace named name with n instances (IPv6, then IPv4), each with its chain, history and
 * counters, as main makes them. */
static struct http_ns *make(const char *name, unsigned int n)
{
	const struct events_opts eo = { .generations = EVENTS_HISTORY_MIN,
					.bytes = EVENTS_HISTORY_BYTES_MIN };
	struct http_instance inst[2] = { { 0 }, { 0 } };
	struct http_ns *ns = NULL;

	for (unsigned int i = 0; i < n; i++) {
		inst[i].family = i == 0 ? AF_INET6 : AF_INET;
		inst[i].stats = calloc(1, sizeof(*inst[i].stats));
		assert_non_null(inst[i].stats);
		assert_int_equal(snapshot_chain_new(&inst[i].chain), 0);
		assert_int_equal(events_new(&eo, &inst[i].history), 0);
	}
	assert_int_equal(http_ns_new(name, inst, n, &ns), 0);
	return ns;
}

static void test_new_rejects(void **state)
{
	struct http_instance inst[2] = { { .family = AF_INET6 }, { .family = AF_INET6 } };
	struct http_ns *ns = NULL;

	(void)state;
	assert_int_equal(http_ns_new("a/b", inst, 1, &ns), -EINVAL);
	assert_int_equal(http_ns_new("..", inst, 1, &ns), -EINVAL);
	assert_int_equal(http_ns_new("", inst, 1, &ns), -EINVAL);
	assert_int_equal(http_ns_new("x", inst, 0, &ns), -EINVAL);
	assert_int_equal(http_ns_new("x", inst, 2, &ns), -EINVAL); /* one family twice */
	assert_null(ns);
}

static void test_views(void **state)
{
	struct http_ns *a = make("both", 2), *b = make("v4 \xff<x>", 1);
	const struct http_ns_view *v;

	(void)state;
	v = http_ns_view(a);
	assert_string_equal(v->name, "both");
	assert_non_null(v->chain);
	assert_non_null(v->chain4);
	assert_ptr_not_equal(v->chain, v->chain4);
	assert_non_null(v->hist);
	assert_non_null(v->hist4);
	assert_int_equal(v->no_inet6, 0);
	http_ns_put(a);
	/* a family alone is served as IPv6's place, as the own namespace's with --family inet */
	{
		const struct events_opts eo = { .generations = EVENTS_HISTORY_MIN,
						.bytes = EVENTS_HISTORY_BYTES_MIN };
		struct http_instance i4 = { .family = AF_INET };
		struct http_ns *c = NULL;

		i4.stats = calloc(1, sizeof(*i4.stats));
		assert_int_equal(snapshot_chain_new(&i4.chain), 0);
		assert_int_equal(events_new(&eo, &i4.history), 0);
		assert_int_equal(http_ns_new("inet", &i4, 1, &c), 0);
		v = http_ns_view(c);
		assert_int_equal(v->no_inet6, 1);
		assert_ptr_equal(v->chain, v->chain4);
		assert_null(v->hist);
		assert_non_null(v->hist4);
		http_ns_put(c);
	}
	v = http_ns_view(b);
	assert_string_equal(v->name, "v4 \xff<x>");
	assert_string_equal(v->text, "v4 ?<x>"); /* valid UTF-8 for JSON */
	http_ns_put(b);
}

static void test_registry(void **state)
{
	struct http_ns *c = make("c", 1), *a = make("a b", 1), *b = make("b%\"", 1),
		       *dup = make("c", 1);
	struct http_ns **v, *g;
	size_t n;

	(void)state;
	assert_null(http_ns_get("c"));
	assert_int_equal(http_ns_count(), 0);
	assert_int_equal(http_ns_add(c), 0);
	assert_int_equal(http_ns_add(a), 0);
	assert_int_equal(http_ns_add(b), 0);
	assert_int_equal(http_ns_add(dup), -EEXIST);
	http_ns_put(dup);
	assert_int_equal(http_ns_count(), 3);
	assert_int_equal(http_ns_list(&v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(http_ns_view(v[0])->name, "a b"); /* by strcmp */
	assert_string_equal(http_ns_view(v[1])->name, "b%\"");
	assert_string_equal(http_ns_view(v[2])->name, "c");
	http_ns_list_free(v, n);

	g = http_ns_get("b%\"");
	assert_ptr_equal(g, b);
	assert_null(http_ns_get("b"));
	assert_null(http_ns_get("d"));
	/* removed: no longer found, listed or counted; a reference taken before still reads it */
	http_ns_remove(b);
	assert_true(http_ns_gone(g));
	assert_null(http_ns_get("b%\""));
	assert_int_equal(http_ns_count(), 2);
	assert_int_equal(http_ns_list(&v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(http_ns_view(v[0])->name, "a b");
	assert_string_equal(http_ns_view(v[1])->name, "c");
	http_ns_list_free(v, n);
	assert_non_null(http_ns_view(g)->chain);
	http_ns_remove(b); /* not served: nothing happens */
	http_ns_put(b); /* main's */
	{
		struct pollfd p = { .fd = http_ns_reap_fd(), .events = POLLIN };

		assert_true(p.fd >= 0);
		assert_int_equal(poll(&p, 1, 0), 0);
		http_ns_put(g); /* the last: handed to main, which is woken */
		assert_int_equal(poll(&p, 1, 0), 1);
		http_ns_reap(); /* frees it (ASan: no leak, no use after) */
		assert_int_equal(poll(&p, 1, 0), 0);
	}
	/* a name can be served again once removed */
	http_ns_remove(c);
	http_ns_put(c);
	c = make("c", 2);
	assert_int_equal(http_ns_add(c), 0);
	g = http_ns_get("c");
	assert_ptr_equal(g, c);
	http_ns_put(g);
	http_ns_remove(c);
	http_ns_put(c);
	http_ns_remove(a);
	http_ns_put(a);
	assert_int_equal(http_ns_count(), 0);
	assert_int_equal(http_ns_list(&v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
}

static int s_stop;

/* A worker: look names up and list, reading what it found, until told to stop. */
static void *reader(void *arg)
{
	unsigned long found = 0;

	(void)arg;
	while (!__atomic_load_n(&s_stop, __ATOMIC_ACQUIRE)) {
		struct http_ns *g = http_ns_get("n3"), **v;
		size_t n;

		if (g) {
			found += http_ns_view(g)->chain != NULL;
			http_ns_put(g);
		}
		if (http_ns_list(&v, &n) == 0) {
			for (size_t i = 0; i < n; i++)
				found += strlen(http_ns_view(v[i])->name) == 2;
			http_ns_list_free(v, n);
		}
	}
	return (void *)found;
}

static void test_race(void **state)
{
	pthread_t t[2];
	char name[16];

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, NULL), 0);
	for (int round = 0; round < 200; round++) {
		struct http_ns *ns[5];

		for (int k = 0; k < 5; k++) {
			snprintf(name, sizeof(name), "n%d", k);
			ns[k] = make(name, 1 + (round & 1));
			assert_int_equal(http_ns_add(ns[k]), 0);
		}
		for (int k = 4; k >= 0; k--) {
			http_ns_remove(ns[k]);
			http_ns_put(ns[k]);
		}
	}
	__atomic_store_n(&s_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(http_ns_count(), 0);
}

/* what the tests' last references handed to main */
static int reap(void **state)
{
	(void)state;
	http_ns_reap();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_rejects),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_race),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, reap);
}
