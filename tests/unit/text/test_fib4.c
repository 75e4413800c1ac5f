// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_fib4 - the IPv4 model (fib4.c) against the kernel: recorded notification streams
 * (tests/data/inet-notify-*, tests/data/capture_inet_notify.sh) are replayed onto the first
 * dump, step by step, and after every step the model must equal the kernel's own dump of that
 * moment (routes-steps.nl): the same tables in the same order, the same routes in the same
 * order, each printing the same `ip -j -4` object (render_json4). The streams hold what the
 * kernel announces (add, prepend, append, replace, delete, nexthop object replaces) and what
 * it does not (device down, carrier loss, the last address removed, devices and nexthop
 * objects deleted); the model must get both right with no dump of its own.
 *
 *   test_fib4            the recorded streams under tests/data (RTSNAP_TESTDATA_DIR)
 *   test_fib4 DIR...     those stream directories instead (the live test, inet_notify.t)
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
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "rtsnap/fib4.h"
#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/render4.h"
#include "rtsnap/routectx.h"

static struct nlparse_route s_pr;
static struct nlparse_nh4 s_nh;

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

/* ---- applying messages ---- */

static void apply(struct fib4 *f, const struct nlmsghdr *h, int dump)
{
	switch (h->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE: {
		int r = nlparse_route4(h, &s_pr);

		assert_true(r >= 0);
		if (r == 0)
			return;
		if (dump)
			assert_int_equal(fib4_dump_route(f, &s_pr.r, s_pr.nhs,
							 s_pr.has_metrics ? &s_pr.m : NULL),
					 0);
		else
			assert_int_equal(fib4_route(f, h->nlmsg_type == RTM_DELROUTE,
						    h->nlmsg_flags, &s_pr.r, s_pr.nhs,
						    s_pr.has_metrics ? &s_pr.m : NULL),
					 0);
		return;
	}
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = NLMSG_DATA(h);

		assert_true(h->nlmsg_len >= NLMSG_LENGTH(sizeof(*ifi)));
		if (h->nlmsg_type == RTM_DELLINK)
			assert_int_equal(fib4_link_del(f, (uint32_t)ifi->ifi_index), 0);
		else
			assert_int_equal(fib4_link(f, (uint32_t)ifi->ifi_index, ifi->ifi_flags), 0);
		return;
	}
	case RTM_NEWADDR:
	case RTM_DELADDR: {
		const struct ifaddrmsg *ifa = NLMSG_DATA(h);
		const struct rtattr *a = IFA_RTA(ifa), *local = NULL, *addr = NULL;
		size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));

		if (ifa->ifa_family != AF_INET)
			return;
		for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
			if (a->rta_type == IFA_LOCAL && RTA_PAYLOAD(a) == 4)
				local = a;
			if (a->rta_type == IFA_ADDRESS && RTA_PAYLOAD(a) == 4)
				addr = a;
		}
		if (!local)
			local = addr;
		assert_non_null(local);
		assert_int_equal(fib4_addr(f, ifa->ifa_index, RTA_DATA(local), ifa->ifa_prefixlen,
					   h->nlmsg_type == RTM_DELADDR, dump),
				 0);
		return;
	}
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		assert_int_equal(nlparse_nexthop4(h, &s_nh), 1);
		assert_int_equal(fib4_nexthop(f, &s_nh.o, s_nh.flags, s_nh.memb, s_nh.nmemb,
					      h->nlmsg_type == RTM_DELNEXTHOP),
				 0);
		return;
	}
}

/* Every message of [buf, buf+len) up to an NLMSG_DONE; returns where it stopped. */
static const char *apply_all(struct fib4 *f, const char *buf, size_t len, int dump)
{
	size_t left = len;
	const struct nlmsghdr *h;

	for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE)
			return (const char *)h + NLMSG_ALIGN(h->nlmsg_len);
		apply(f, h, dump);
	}
	return buf + len;
}

static void apply_file(struct fib4 *f, const char *dir, const char *name)
{
	size_t len;
	char *buf = slurp(dir, name, &len);

	assert_non_null(buf);
	apply_all(f, buf, len, 1);
	free(buf);
}

/* ---- comparing ---- */

/* The interface names of the whole stream (start and every RTM_NEWLINK, the last name kept),
 * so devices deleted later still print by name. */
static void load_ctx(const char *dir, struct route_ctx *c)
{
	static struct route_link seen[1024];
	size_t n = 0;
	const char *files[] = { "start/links.nl", "notify.nl" };

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

/* The routes of f as "table: object" lines, non-empty tables in order. */
static void text_of(const struct route_ctx *c, const struct fib4 *f, struct strbuf *sb)
{
	for (size_t i = 0; i < fib4_ntables(f); i++) {
		const struct route *const *v;
		size_t n;
		uint32_t id = fib4_table(f, i, &v, &n);

		for (size_t k = 0; k < n; k++) {
			strbuf_appendf(sb, "%u: ", id);
			render_json4_route(c, v[k], sb);
			strbuf_putc(sb, '\n');
		}
	}
	strbuf_putc(sb, 0);
	assert_false(sb->failed);
}

/* 0 when model and kernel print alike; else the first difference is shown. */
static int compare(const struct route_ctx *c, const struct fib4 *model, const struct fib4 *kernel,
		   const char *what)
{
	struct strbuf a = { 0 }, b = { 0 };
	int ret;

	text_of(c, model, &a);
	text_of(c, kernel, &b);
	ret = strcmp(a.buf, b.buf) != 0;
	if (ret) {
		size_t i = 0, line = 1;

		while (a.buf[i] && a.buf[i] == b.buf[i])
			line += a.buf[i++] == '\n';
		while (i && a.buf[i - 1] != '\n')
			i--;
		print_message(
		    "# %s: route line %zu differs\n#  model:  %.300s\n#  kernel: %.300s\n", what,
		    line, a.buf + i, b.buf + i);
	}
	strbuf_free(&a);
	strbuf_free(&b);
	return ret;
}

static void test_stream(void **state)
{
	const char *dir = *state;
	struct route_ctx c;
	struct fib4 *model, *kernel;
	struct fib4_stats st;
	size_t nlen, slen, dlen;
	char *notify = slurp(dir, "notify.nl", &nlen), *steps = slurp(dir, "steps.txt", &slen),
	     *dumps = slurp(dir, "routes-steps.nl", &dlen);
	const char *dp, *line;
	long at = 0, msgs = 0;
	int nsteps = 0, bad = 0;
	const struct nlmsghdr *h;
	size_t left;

	if (!notify || !steps || !dumps)
		skip();
	load_ctx(dir, &c);
	assert_int_equal(fib4_new(&model), 0);
	{
		char start[4096 + 8];

		snprintf(start, sizeof(start), "%s/start", dir);
		apply_file(model, start, "links.nl");
		apply_file(model, start, "addrs.nl");
		apply_file(model, start, "nexthops.nl");
		apply_file(model, start, "routes.nl");
	}
	h = (const struct nlmsghdr *)notify;
	left = nlen;
	dp = dumps;
	/* steps.txt: "<index of the step's first message>\t<command>", then "<n>\t# settle" */
	for (line = steps; *line;) {
		const char *next = strchr(line, '\n'), *cmd = strchr(line, '\t') + 1;
		long until;

		next = next ? next + 1 : line + strlen(line);
		/* the messages of this step: up to the next line's index */
		until = *next ? strtol(next, NULL, 10) : (long)1 << 40;
		for (; at < until && NLMSG_OK(h, left); h = NLMSG_NEXT(h, left), at++, msgs++)
			apply(model, h, 0);
		if (strncmp(cmd, "# settle", 8) && dp < dumps + dlen) {
			char what[256];

			assert_int_equal(fib4_new(&kernel), 0);
			dp = apply_all(kernel, dp, (size_t)(dumps + dlen - dp), 1);
			snprintf(what, sizeof(what), "step %d (%.*s)", nsteps,
				 (int)(next - cmd - 1), cmd);
			bad += compare(&c, model, kernel, what);
			fib4_free(kernel);
			nsteps++;
		}
		line = next;
	}
	/* and the last dump */
	{
		char end[4096 + 8];

		snprintf(end, sizeof(end), "%s/end", dir);
		assert_int_equal(fib4_new(&kernel), 0);
		apply_file(kernel, end, "routes.nl");
		bad += compare(&c, model, kernel, "end");
		fib4_free(kernel);
	}
	fib4_get_stats(model, &st);
	print_message("# %s: %ld notifications, %d steps, %d differ; silent removals %llu, "
		      "silent changes %llu, replaces in place %llu, unknown deletes %llu\n",
		      dir, msgs, nsteps, bad, (unsigned long long)st.silent_removals,
		      (unsigned long long)st.silent_changes,
		      (unsigned long long)st.replace_in_place,
		      (unsigned long long)st.unknown_deletes);
	assert_int_equal(bad, 0);
	fib4_free(model);
	route_ctx_release(&c);
	free(notify);
	free(steps);
	free(dumps);
}

int main(int argc, char **argv)
{
	static const char *const sets[] = { "inet-notify-routes", "inet-notify-links",
					    "inet-notify-random" };
	static char dirs[64][4096];
	struct CMUnitTest tests[64];
	size_t n = 0;
	const char *d = getenv("RTSNAP_TESTDATA_DIR");

	cmocka_set_message_output(CM_OUTPUT_TAP);
	if (argc > 1) {
		for (int i = 1; i < argc && n < 64; i++)
			tests[n++] =
			    (struct CMUnitTest){ argv[i], test_stream, NULL, NULL, argv[i] };
		return _cmocka_run_group_tests("fib4", tests, n, NULL, NULL);
	}
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		snprintf(dirs[n], sizeof(dirs[n]), "%s/%s", d ? d : "tests/data", sets[i]);
		tests[n] = (struct CMUnitTest){ sets[i], test_stream, NULL, NULL, dirs[n] };
		n++;
	}
	return _cmocka_run_group_tests("fib4", tests, n, NULL, NULL);
}
