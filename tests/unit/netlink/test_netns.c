// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_netns - names of network namespaces, and the watch that follows a directory like
 * /run/netns (a temporary one here: files stand for namespaces; entering one needs a real
 * namespace and is tested where the daemon uses it).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "rtsnap/netns.h"

static char s_top[64], s_dir[128];

/* What the watch reported, as "+name" / "-name" lines. */
static char s_log[4096];

static void on_change(void *arg, const char *name, int added)
{
	(void)arg;
	snprintf(s_log + strlen(s_log), sizeof(s_log) - strlen(s_log), "%c%s\n", added ? '+' : '-',
		 name);
}

static void touch(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void rm(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", s_dir, name);
	assert_int_equal(unlink(path), 0);
}

/* Wait for the watch's descriptor (at most a second) and read what it says. */
static const char *settle(struct netns_watch *w)
{
	struct pollfd p = { .fd = netns_watch_fd(w), .events = POLLIN };

	s_log[0] = 0;
	while (poll(&p, 1, 200) > 0)
		assert_int_equal(netns_watch_read(w), 0);
	return s_log;
}

static void test_names(void **state)
{
	char longest[NETNS_NAME_MAX + 2];

	(void)state;
	assert_true(netns_name_valid("blue"));
	assert_true(netns_name_valid("a name with spaces <script>"));
	assert_true(netns_name_valid("..."));
	assert_false(netns_name_valid(""));
	assert_false(netns_name_valid("."));
	assert_false(netns_name_valid(".."));
	assert_false(netns_name_valid("../x"));
	assert_false(netns_name_valid("a/b"));
	assert_false(netns_name_valid(NULL));
	memset(longest, 'x', sizeof(longest));
	longest[NETNS_NAME_MAX] = 0;
	assert_true(netns_name_valid(longest));
	longest[NETNS_NAME_MAX] = 'x';
	longest[NETNS_NAME_MAX + 1] = 0;
	assert_false(netns_name_valid(longest));
}

static void test_enter_refuses(void **state)
{
	int saved = -1;

	(void)state;
	assert_int_equal(mkdir(s_dir, 0755), 0);
	touch("plain");
	/* a file that is not (yet) a namespace, as between `ip netns add`'s create and mount */
	assert_int_equal(netns_enter(s_dir, "plain", &saved), -EINVAL);
	assert_int_equal(netns_enter(s_dir, "missing", &saved), -ENOENT);
	assert_int_equal(netns_enter(s_dir, "../plain", &saved), -EINVAL);
	assert_int_equal(saved, -1);
	rm("plain");
	assert_int_equal(rmdir(s_dir), 0);
}

static void test_watch(void **state)
{
	struct netns_watch *w = NULL;
	char from[512], to[512];

	(void)state;
	/* the directory does not exist yet: its parent is watched */
	assert_int_equal(netns_watch_new(s_dir, on_change, NULL, &w), 0);
	assert_string_equal(settle(w), "");
	assert_int_equal(mkdir(s_dir, 0755), 0);
	touch("red");
	assert_string_equal(settle(w), "+red\n");
	touch("green");
	touch("blue");
	assert_string_equal(settle(w), "+green\n+blue\n");
	touch("blue"); /* opened again: nothing new */
	assert_string_equal(settle(w), "");
	rm("green");
	assert_string_equal(settle(w), "-green\n");
	snprintf(from, sizeof(from), "%s/red", s_dir);
	snprintf(to, sizeof(to), "%s/crimson", s_dir);
	assert_int_equal(rename(from, to), 0);
	assert_string_equal(settle(w), "-red\n+crimson\n");
	snprintf(to, sizeof(to), "%s/sub", s_dir);
	assert_int_equal(mkdir(to, 0755), 0); /* a directory is no namespace */
	assert_string_equal(settle(w), "");
	assert_int_equal(rmdir(to), 0);
	/* the whole directory goes: every name with it; it comes back: read again */
	rm("blue");
	rm("crimson");
	assert_string_equal(settle(w), "-blue\n-crimson\n");
	touch("late");
	assert_int_equal(settle(w)[0], '+');
	rm("late");
	assert_int_equal(rmdir(s_dir), 0);
	assert_string_equal(settle(w), "-late\n");
	assert_int_equal(mkdir(s_dir, 0755), 0);
	touch("again");
	assert_string_equal(settle(w), "+again\n");
	netns_watch_free(w);

	/* a new watch reports what is there */
	touch("second");
	assert_int_equal(netns_watch_new(s_dir, on_change, NULL, &w), 0);
	s_log[0] = 0;
	netns_watch_free(w);
	rm("again");
	rm("second");
	assert_int_equal(rmdir(s_dir), 0);
}

static void test_watch_lists_at_start(void **state)
{
	struct netns_watch *w = NULL;

	(void)state;
	assert_int_equal(mkdir(s_dir, 0755), 0);
	touch("one");
	touch("two");
	s_log[0] = 0;
	assert_int_equal(netns_watch_new(s_dir, on_change, NULL, &w), 0);
	assert_string_equal(s_log, "+one\n+two\n");
	netns_watch_free(w);
	rm("one");
	rm("two");
	assert_int_equal(rmdir(s_dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_enter_refuses),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_watch_lists_at_start),
	};
	int ret;

	snprintf(s_top, sizeof(s_top), "/tmp/rtsnap-netns-XXXXXX");
	if (!mkdtemp(s_top))
		return 1;
	snprintf(s_dir, sizeof(s_dir), "%s/netns", s_top);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(s_dir);
	rmdir(s_top);
	return ret;
}
