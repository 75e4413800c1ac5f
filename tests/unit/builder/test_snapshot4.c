// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_snapshot4 - IPv4 records in snapshots: the recorded dumps (tests/data/inet-kinds and the
 * first and last states of the inet-notify-* streams, with the kernel's /proc/net/route and
 * `ip -j -4 route show table all` of the same moment) added to a snapshot of family AF_INET
 * record by record, sealed into segments of SEGMENT_MAX routes, and read back through the
 * views every IPv6 snapshot is read through: the proc reader (render_proc_text(),
 * render_proc_write(), render_proc_read() in small pieces) must give the kernel's file byte for
 * byte, header included, and render_json_all() `ip -j -4`'s text. Also: no placeholder rows,
 * the tables in the kernel's order, and a namespace without a main table (nothing at all).
 *
 *   test_snapshot4           the recorded sets under tests/data (RTSNAP_TESTDATA_DIR)
 *   test_snapshot4 DIR...    those state directories (as nlrec4 dump writes them) instead
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/compose.h"
#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/render.h"
#include "rtsnap/route4.h"
#include "rtsnap/snapshot.h"

static struct nlparse_route s_pr;

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
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

/* The snapshot of state dir: its links, nexthop objects and routes, sealed. Returns the
 * routes added. */
static size_t load(const char *dir, struct snapshot **out)
{
	struct snapshot *s;
	size_t len, left, n = 0;
	char *buf;

	assert_int_equal(snapshot_new(NULL, &s), 0);
	s->family = AF_INET;
	buf = slurp(dir, "links.nl", &len);
	assert_non_null(buf);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		struct route_link l;

		if (h->nlmsg_type == RTM_NEWLINK && nlparse_link(h, &l) == 1)
			assert_int_equal(snapshot_add_link(s, &l), 0);
	}
	free(buf);
	buf = slurp(dir, "nexthops.nl", &len);
	left = buf ? len : 0;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; buf && NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		struct route_nhobj o;

		if (h->nlmsg_type == RTM_NEWNEXTHOP && nlparse_nexthop(h, &o) == 1)
			assert_int_equal(snapshot_add_nhobj(s, &o), 0);
	}
	free(buf);
	buf = slurp(dir, "routes.nl", &len);
	assert_non_null(buf);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type != RTM_NEWROUTE)
			continue;
		assert_int_equal(nlparse_route4(h, &s_pr), 1);
		s->has_main |= s_pr.r.table == RT_TABLE_MAIN;
		assert_int_equal(snapshot_add_route(s, &s_pr.r, s_pr.nhs, s_pr.r.nh_count,
						    s_pr.has_metrics ? &s_pr.m : NULL),
				 0);
		n++;
	}
	free(buf);
	assert_int_equal(names_load(NULL, &s->ctx.names), 0);
	assert_int_equal(snapshot_finish(s), 0);
	*out = s;
	return n;
}

static void show_diff(const char *what, const char *ours, const char *theirs)
{
	size_t i = 0;

	while (ours[i] && ours[i] == theirs[i])
		i++;
	print_message("# %s: first difference at byte %zu:\n#  ours:   %.120s\n#  kernel: %.120s\n",
		      what, i, ours + i, theirs + i);
}

/* The proc text through the reader in pieces of 7 bytes (a read cuts anywhere). */
static char *read_pieces(const struct snapshot *s, size_t *len)
{
	struct render_proc_reader rd;
	char *p = malloc(s->proc_len + 8);
	size_t n = 0;
	ssize_t k;

	assert_non_null(p);
	render_proc_reader_init(&rd, s);
	while ((k = render_proc_read(&rd, p + n, 7)) > 0)
		n += (size_t)k;
	assert_true(k == 0);
	render_proc_reader_free(&rd);
	p[n] = 0;
	*len = n;
	return p;
}

/* What render_proc_write() writes, through a file. */
static char *written(const struct snapshot *s, size_t *len)
{
	FILE *f = tmpfile();
	char *p;
	long n;

	assert_non_null(f);
	assert_int_equal(render_proc_write(s, fileno(f)), 0);
	n = lseek(fileno(f), 0, SEEK_END);
	assert_true(n >= 0);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(pread(fileno(f), p, (size_t)n, 0), n);
	p[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void test_state(void **state)
{
	const char *dir = *state;
	struct snapshot *s;
	size_t n = load(dir, &s), klen, jlen, len;
	char *kproc = slurp(dir, "proc.txt", &klen), *kjson = slurp(dir, "ip.json", &jlen);
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 }, json = { 0 };
	char *ours;
	int nseg;

	assert_non_null(kproc);
	assert_non_null(kjson);
	assert_int_equal(s->nroutes, n); /* no placeholder rows */
	for (size_t t = 1; t < s->ntables; t++)
		assert_true(s->tables[t - 1].id % 256 <= s->tables[t].id % 256);

	ours = render_proc_text(s, &len);
	assert_non_null(ours);
	assert_int_equal(len, s->proc_len);
	if (strcmp(ours, kproc))
		show_diff("render_proc_text", ours, kproc);
	assert_string_equal(ours, kproc);
	free(ours);
	ours = read_pieces(s, &len);
	assert_string_equal(ours, kproc);
	free(ours);
	ours = written(s, &len);
	assert_string_equal(ours, kproc);
	free(ours);

	nseg = render_json_all(s, s->taken_mono_ms, &segs, &dyn);
	assert_true(nseg > 0);
	for (int i = 0; i < nseg; i++)
		strbuf_append(&json, segs[i].p, segs[i].len);
	strbuf_putc(&json, 0);
	assert_false(json.failed);
	if (strcmp(json.buf, kjson))
		show_diff("render_json_all", json.buf, kjson);
	assert_string_equal(json.buf, kjson);
	print_message("# %s: %zu routes in %zu segments, %zu proc bytes, %zu JSON bytes match\n",
		      dir, n, s->nsegs, klen, jlen);
	free(segs);
	strbuf_free(&dyn);
	strbuf_free(&json);
	free(kproc);
	free(kjson);
	snapshot_free(s);
}

/* No main table: the proc text is empty (the kernel prints not even its header); with one,
 * and no route, the header alone. */
static void test_no_main(void **state)
{
	struct snapshot *s;
	size_t len;
	char *p;

	(void)state;
	for (int main_exists = 0; main_exists < 2; main_exists++) {
		assert_int_equal(snapshot_new(NULL, &s), 0);
		s->family = AF_INET;
		s->has_main = (uint8_t)main_exists;
		assert_int_equal(names_load(NULL, &s->ctx.names), 0);
		assert_int_equal(snapshot_finish(s), 0);
		assert_int_equal(s->nroutes, 0);
		p = render_proc_text(s, &len);
		assert_non_null(p);
		assert_int_equal(len, main_exists ? 128 : 0);
		assert_int_equal(s->proc_len, len);
		if (main_exists)
			assert_true(!strncmp(p, "Iface\tDestination\t", 18) && p[127] == '\n');
		free(p);
		snapshot_free(s);
	}
}

int main(int argc, char **argv)
{
	static const char *const sets[] = { "inet-kinds",
					    "inet-notify-routes/start",
					    "inet-notify-routes/end",
					    "inet-notify-links/start",
					    "inet-notify-links/end",
					    "inet-notify-random/start",
					    "inet-notify-random/end" };
	static char dirs[64][4096 + 64];
	struct CMUnitTest tests[65];
	const char *d = getenv("RTSNAP_TESTDATA_DIR");
	size_t n = 0;

	cmocka_set_message_output(CM_OUTPUT_TAP);
	for (int i = 1; i < argc && n < 64; i++)
		tests[n++] = (struct CMUnitTest){ argv[i], test_state, NULL, NULL, argv[i] };
	for (size_t i = 0; argc == 1 && i < sizeof(sets) / sizeof(sets[0]); i++) {
		snprintf(dirs[n], sizeof(dirs[n]), "%s/%s", d ? d : "tests/data", sets[i]);
		tests[n] = (struct CMUnitTest){ sets[i], test_state, NULL, NULL, dirs[n] };
		n++;
	}
	if (argc == 1)
		tests[n++] = (struct CMUnitTest){ "no main table", test_no_main, NULL, NULL, NULL };
	return _cmocka_run_group_tests("snapshot4", tests, n, NULL, NULL);
}
