// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_names - iproute2's names read from a directory, and the cache that reads the files
 * again only when one of them was added, changed or removed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "rtsnap/names.h"

static char s_dir[64];

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *table(const struct names *n, uint32_t id)
{
	static char buf[12];

	return names_table(n, id, buf);
}

static void test_cache_reads_on_change(void **state)
{
	struct names_cache *c = NULL;
	struct names *a = NULL, *b = NULL, *d = NULL, *e = NULL, *f = NULL;
	char path[256];

	(void)state;
	write_file("rt_tables", "100 alpha\n");
	assert_int_equal(names_cache_new(s_dir, &c), 0);
	assert_int_equal(names_cache_get(c, &a), 0);
	assert_string_equal(table(a, 100), "alpha");
	assert_string_equal(table(a, 254), "main");

	/* nothing changed: the same object, no read */
	assert_int_equal(names_cache_get(c, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(names_cache_loads(c), 1);

	/* a file changed */
	write_file("rt_tables", "100 alpha\n101 beta\n");
	assert_int_equal(names_cache_get(c, &d), 0);
	assert_ptr_not_equal(d, a);
	assert_string_equal(table(d, 101), "beta");
	assert_string_equal(table(a, 101), "101"); /* a is immutable, still held */
	assert_int_equal(names_cache_loads(c), 2);

	/* a file added to a .d directory */
	snprintf(path, sizeof(path), "%s/rt_tables.d", s_dir);
	assert_int_equal(mkdir(path, 0755), 0);
	write_file("rt_tables.d/x.conf", "102 gamma\n");
	assert_int_equal(names_cache_get(c, &e), 0);
	assert_string_equal(table(e, 102), "gamma");
	assert_int_equal(names_cache_loads(c), 3);

	/* removed again */
	snprintf(path, sizeof(path), "%s/rt_tables.d/x.conf", s_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(names_cache_get(c, &f), 0);
	assert_string_equal(table(f, 102), "102");
	assert_int_equal(names_cache_loads(c), 4);
	snprintf(path, sizeof(path), "%s/rt_tables.d", s_dir);
	assert_int_equal(rmdir(path), 0);

	/* nothing changed since a get: no stat at all (the directory's watch saw nothing) */
	{
		unsigned long stamps, loads;
		struct names *g, *h;

		assert_int_equal(names_cache_get(c, &g), 0); /* sees the rmdir */
		stamps = names_cache_stamps(c);
		loads = names_cache_loads(c);
		for (int i = 0; i < 100; i++) {
			assert_int_equal(names_cache_get(c, &h), 0);
			assert_ptr_equal(g, h);
			names_free(h);
		}
		assert_int_equal(names_cache_stamps(c), stamps);
		assert_int_equal(names_cache_loads(c), loads);
		names_free(g);
	}

	/* replaced by a rename, as editors save: seen at the next get */
	write_file("rt_tables.new", "100 alpha\n103 delta\n");
	{
		char to[256];
		struct names *g;

		snprintf(path, sizeof(path), "%s/rt_tables.new", s_dir);
		snprintf(to, sizeof(to), "%s/rt_tables", s_dir);
		assert_int_equal(rename(path, to), 0);
		assert_int_equal(names_cache_get(c, &g), 0);
		assert_string_equal(table(g, 103), "delta");
		assert_string_equal(table(g, 101), "101");
		names_free(g);
	}

	/* every reference is the caller's own: dropping them in any order is fine */
	names_cache_free(c);
	names_free(b);
	names_free(a);
	names_free(f);
	names_free(e);
	names_free(d);
}

/* A file that is a symbolic link: the watch does not see its target change, so every get
 * stats the files, and a change of the target is still seen. */
static void test_cache_symlink(void **state)
{
	char target[256], path[256];
	struct names_cache *c = NULL;
	struct names *a = NULL, *b = NULL;
	unsigned long stamps;
	FILE *f;

	(void)state;
	snprintf(target, sizeof(target), "%s-target", s_dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("100 alpha\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/rt_tables", s_dir);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(names_cache_new(s_dir, &c), 0);
	assert_int_equal(names_cache_get(c, &a), 0);
	assert_string_equal(table(a, 100), "alpha");
	stamps = names_cache_stamps(c);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("100 omega\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(names_cache_get(c, &b), 0);
	assert_string_equal(table(b, 100), "omega");
	assert_int_equal(names_cache_stamps(c), stamps + 1);
	names_free(a);
	names_free(b);
	names_cache_free(c);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(target), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_reads_on_change),
		cmocka_unit_test(test_cache_symlink),
	};
	char path[256];
	int ret;

	snprintf(s_dir, sizeof(s_dir), "/tmp/rtsnap-names-XXXXXX");
	if (!mkdtemp(s_dir))
		return 1;
	cmocka_set_message_output(CM_OUTPUT_TAP);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(path, sizeof(path), "%s/rt_tables", s_dir);
	unlink(path);
	rmdir(s_dir);
	return ret;
}
