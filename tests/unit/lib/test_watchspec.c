// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_watchspec - the --watch spec grammar (docs/watch.md): targets of both families,
 * lookups, tables by number and name, namespaces, names, the refusals and their reasons,
 * --watch-file's comments and line numbers, duplicate names, and the process's list.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "rtsnap/names.h"
#include "rtsnap/watchspec.h"

static struct names *s_names;
static char s_dir[64];

static void ok(const char *text, struct watch_spec *w)
{
	char err[256] = "";

	if (watch_spec_parse(s_names, text, w, err, sizeof(err)))
		fail_msg("'%s' refused: %s", text, err);
}

/* text is refused with a reason that contains want */
static void refused(const char *text, const char *want)
{
	struct watch_spec w;
	char err[256] = "";

	if (!watch_spec_parse(s_names, text, &w, err, sizeof(err)))
		fail_msg("'%s' accepted", text);
	if (!strstr(err, want))
		fail_msg("'%s': reason '%s' does not say '%s'", text, err, want);
	assert_null(w.name);
}

static void test_targets(void **state)
{
	struct watch_spec w;
	uint8_t a[16] = { 0 };

	(void)state;
	ok("default", &w);
	assert_int_equal(w.family, AF_INET6);
	assert_int_equal(w.kind, WATCH_ROUTE);
	assert_int_equal(w.len, 0);
	assert_int_equal(w.table, 254);
	assert_string_equal(w.name, "default");
	assert_string_equal(w.netns, "");
	assert_string_equal(w.table_name, "main");
	watch_spec_clear(&w);

	ok("default4", &w);
	assert_int_equal(w.family, AF_INET);
	assert_int_equal(w.len, 0);
	watch_spec_clear(&w);

	ok("0.0.0.0/0", &w);
	assert_int_equal(w.family, AF_INET);
	assert_int_equal(w.len, 0);
	watch_spec_clear(&w);

	ok("gw=2001:db8::/32", &w);
	assert_int_equal(w.family, AF_INET6);
	assert_int_equal(w.len, 32);
	inet_pton(AF_INET6, "2001:db8::", a);
	assert_memory_equal(w.addr, a, 16);
	assert_string_equal(w.name, "gw");
	assert_string_equal(w.spec, "gw=2001:db8::/32");
	watch_spec_clear(&w);

	ok("10.0.0.0/8", &w);
	assert_int_equal(w.family, AF_INET);
	assert_int_equal(w.len, 8);
	assert_int_equal(w.addr[0], 10);
	watch_spec_clear(&w);

	ok("192.0.2.7", &w); /* a host route */
	assert_int_equal(w.len, 32);
	watch_spec_clear(&w);

	ok("lookup:2001:db8::1", &w);
	assert_int_equal(w.kind, WATCH_LOOKUP);
	assert_int_equal(w.family, AF_INET6);
	assert_int_equal(w.len, 128);
	watch_spec_clear(&w);

	ok("l4=lookup:10.1.2.3 table 100", &w);
	assert_int_equal(w.kind, WATCH_LOOKUP);
	assert_int_equal(w.family, AF_INET);
	assert_int_equal(w.table, 100);
	watch_spec_clear(&w);
}

static void test_words(void **state)
{
	struct watch_spec w;

	(void)state;
	/* blanks squeezed: the default name is the spec as written, once */
	ok("  10.0.0.0/8 \t table   alpha   netns  blue ", &w);
	assert_string_equal(w.name, "10.0.0.0/8 table alpha netns blue");
	assert_string_equal(w.spec, w.name);
	assert_int_equal(w.table, 100);
	assert_string_equal(w.table_name, "alpha");
	assert_string_equal(w.netns, "blue");
	watch_spec_clear(&w);

	ok("x=default netns red table local", &w);
	assert_int_equal(w.table, 255);
	assert_string_equal(w.netns, "red");
	watch_spec_clear(&w);

	ok("t=default table 4000000000", &w);
	assert_int_equal(w.table, 4000000000u);
	assert_string_equal(w.table_name, "4000000000");
	watch_spec_clear(&w);
}

static void test_refused(void **state)
{
	char big[WATCH_SPEC_MAX + 8];

	(void)state;
	refused("", "empty");
	refused("   ", "empty");
	refused("default6x", "not a prefix");
	refused("2001:db8::/129", "prefix length");
	refused("10.0.0.0/33", "prefix length");
	refused("10.0.0.0/", "prefix length");
	refused("10.0.0.0/8x", "prefix length");
	refused("10.0.0.1/8", "host bits");
	refused("2001:db8::1/32", "host bits");
	refused("lookup:10.0.0.0/8", "not a prefix");
	refused("lookup:nowhere", "not an IPv6 or IPv4 address");
	refused("default table", "needs a value");
	refused("default table nosuch", "table 'nosuch'");
	refused("default table 0", "table '0'");
	refused("default table 1 table 2", "table given twice");
	refused("default netns a netns b", "netns given twice");
	refused("default netns a/b", "not a namespace name");
	refused("default netns ..", "not a namespace name");
	refused("default via fe80::1", "unknown word 'via'");
	refused("=default", "empty NAME");
	refused("gw=", "no TARGET");
	refused("g\"w=default", "NAME");
	refused("default\n", "control character");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	refused(big, "longer than");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_file(void **state)
{
	struct watch_list *l = NULL;
	char path[128], err[512] = "";

	(void)state;
	snprintf(path, sizeof(path), "%s/watches", s_dir);
	write_file(path, "# routes the site needs\n"
			 "\n"
			 "gw6=default   # the IPv6 default\n"
			 "  gw4=default4\n"
			 "tunnel=10.0.0.0/8 table alpha\n");
	assert_int_equal(watch_list_new(&l), 0);
	assert_int_equal(watch_list_add(l, s_names, "first=lookup:2001:db8::1", err, sizeof(err)),
			 0);
	assert_int_equal(watch_list_add_file(l, s_names, path, err, sizeof(err)), 0);
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), 0);
	assert_int_equal(watch_list_count(l), 4);
	assert_string_equal(watch_list_at(l, 0)->name, "first");
	assert_string_equal(watch_list_at(l, 1)->name, "gw6");
	assert_string_equal(watch_list_at(l, 3)->spec, "tunnel=10.0.0.0/8 table alpha");
	assert_int_equal(watch_list_find(l, "gw4"), 2);
	assert_int_equal(watch_list_find(l, "first"), 0);
	assert_int_equal(watch_list_find(l, "nope"), -1);
	watch_list_put(l);

	/* a bad line: its number and the reason */
	write_file(path, "gw6=default\n# fine\n\nbad=10.0.0.0/99\n");
	assert_int_equal(watch_list_new(&l), 0);
	assert_int_equal(watch_list_add_file(l, s_names, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":4: bad prefix length"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	watch_list_put(l);

	/* a missing file */
	assert_int_equal(watch_list_new(&l), 0);
	assert_true(watch_list_add_file(l, s_names, "/nonexistent/watches", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/watches: "));
	watch_list_put(l);

	/* duplicate names, across the command line and the file */
	write_file(path, "a=default\nb=default4\n");
	assert_int_equal(watch_list_new(&l), 0);
	assert_int_equal(watch_list_add(l, s_names, "b=10.0.0.0/8", err, sizeof(err)), 0);
	assert_int_equal(watch_list_add_file(l, s_names, path, err, sizeof(err)), 0);
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'b' given twice"));
	watch_list_put(l);
	unlink(path);
}

static void test_limit_and_current(void **state)
{
	struct watch_list *l = NULL, *cur;
	char err[256], spec[64];
	uint64_t serial = watch_list_serial();

	(void)state;
	assert_null(watch_list_current());
	assert_int_equal(watch_list_new(&l), 0);
	for (int i = 0; i < WATCH_MAX; i++) {
		snprintf(spec, sizeof(spec), "w%d=10.%d.%d.0/24", i, i / 256, i % 256);
		assert_int_equal(watch_list_add(l, s_names, spec, err, sizeof(err)), 0);
	}
	assert_int_equal(watch_list_add(l, s_names, "one=default", err, sizeof(err)), -E2BIG);
	assert_int_equal(watch_list_seal(l, err, sizeof(err)), 0);
	assert_int_equal(watch_list_find(l, "w9999"), 9999);
	watch_list_publish(l);
	assert_true(watch_list_serial() == serial + 1);
	cur = watch_list_current();
	assert_ptr_equal(cur, l);
	watch_list_publish(NULL); /* the reader's reference keeps it */
	assert_null(watch_list_current());
	assert_string_equal(watch_list_at(cur, 5)->name, "w5");
	watch_list_put(cur);
}

static int setup(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	snprintf(s_dir, sizeof(s_dir), "/tmp/test_watchspec.XXXXXX");
	if (!mkdtemp(s_dir))
		return -1;
	snprintf(path, sizeof(path), "%s/rt_tables", s_dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("100 alpha\n", f);
	fclose(f);
	return names_load(s_dir, &s_names);
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	names_free(s_names);
	snprintf(path, sizeof(path), "%s/rt_tables", s_dir);
	unlink(path);
	rmdir(s_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets),		  cmocka_unit_test(test_words),
		cmocka_unit_test(test_refused),		  cmocka_unit_test(test_file),
		cmocka_unit_test(test_limit_and_current),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
