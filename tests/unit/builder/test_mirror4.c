// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_mirror4 - the IPv4 mirror (mirror4.c) against the kernel, as the daemon will run it:
 * the recorded streams (tests/data/inet-notify-*, tests/data/capture_inet_notify.sh) replayed
 * onto their first dump message by message, and after every step a snapshot composed by a
 * builder and published on a chain, as the collector publishes. Each snapshot must be the
 * kernel's state of that moment: its proc text the kernel's /proc/net/route after the step
 * (proc-steps.txt) byte for byte, and its routes, table by table in order, the objects
 * `ip -j -4` prints for the kernel's dump of the step (routes-steps.nl), rendered in the
 * snapshot's own context. Segments must be shared between publications: a step that changes
 * a few routes builds a few segments.
 *
 *   test_mirror4           the recorded streams under tests/data (RTSNAP_TESTDATA_DIR)
 *   test_mirror4 DIR...    those stream directories instead (the live test, inet_notify.t)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "instance.h"
#include "rtsnap/snapshot_impl.h"
#include "rtsnap/mirror4.h"
#include "rtsnap/names.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/nlparse4.h"
#include "rtsnap/render.h"
#include "rtsnap/render4.h"

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

/* ---- applying messages, as the collector will ---- */

static void apply(struct mirror4 *x, const struct nlmsghdr *h, int dump, struct mirror_delta *d)
{
	switch (h->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE: {
		int r = nlparse_route4(h, &s_pr);

		assert_true(r >= 0);
		if (r == 0)
			return;
		if (dump)
			assert_int_equal(mirror4_dump_route(x, &s_pr), 0);
		else
			assert_int_equal(mirror4_route(x, h->nlmsg_type == RTM_DELROUTE,
						       h->nlmsg_flags, &s_pr, d),
					 0);
		return;
	}
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = NLMSG_DATA(h);
		struct route_link l;

		assert_true(h->nlmsg_len >= NLMSG_LENGTH(sizeof(*ifi)));
		if (h->nlmsg_type == RTM_DELLINK) {
			assert_int_equal(mirror4_link_del(x, (uint32_t)ifi->ifi_index, d), 0);
			return;
		}
		assert_int_equal(nlparse_link(h, &l), 1);
		assert_int_equal(mirror4_link(x, &l, d), 0);
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
		assert_int_equal(mirror4_addr(x, ifa->ifa_index, RTA_DATA(local),
					      ifa->ifa_prefixlen, h->nlmsg_type == RTM_DELADDR,
					      dump, d),
				 0);
		return;
	}
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		assert_int_equal(nlparse_nexthop4(h, &s_nh), 1);
		assert_int_equal(mirror4_nexthop(x, &s_nh, h->nlmsg_type == RTM_DELNEXTHOP, d), 0);
		return;
	}
}

static void apply_file(struct mirror4 *x, const char *dir, const char *name)
{
	struct mirror_delta d = { 0 };
	size_t len, left;
	char *buf = slurp(dir, name, &len);

	assert_non_null(buf);
	left = len;
	for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left))
		apply(x, h, 1, &d);
	free(buf);
}

/* ---- comparing ---- */

/* Publish a snapshot of x's mirror on the test chain, as the collector does. */
static struct snapshot *publish(struct mirror4 *x)
{
	struct snapshot *s = NULL;

	assert_int_equal(builder_compose(test_builder(), mirror4_mirror(x), test_chain(), &s), 0);
	clock_gettime(CLOCK_REALTIME, &s->taken_at);
	snapshot_publish(s);
	return snapshot_acquire(test_chain());
}

/* "table: object" lines of the snapshot's routes, in its context. */
static void text_of_snapshot(const struct snapshot *s, struct strbuf *sb)
{
	for (size_t i = 0; i < s->nroutes; i++) {
		const struct route *r = snapshot_route(s, i);

		strbuf_appendf(sb, "%u: ", r->table);
		render_json4_route(&s->ctx, r, sb);
		strbuf_putc(sb, '\n');
	}
	strbuf_putc(sb, 0);
	assert_false(sb->failed);
}

/* The same lines for the kernel's dump at [*p, end), up to its NLMSG_DONE (advanced past). */
static void text_of_dump(const struct snapshot *s, const char **p, const char *end,
			 struct strbuf *sb)
{
	size_t left = (size_t)(end - *p);
	const struct nlmsghdr *h;

	for (h = (const struct nlmsghdr *)*p; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE) {
			*p = (const char *)h + NLMSG_ALIGN(h->nlmsg_len);
			break;
		}
		assert_int_equal(nlparse_route4(h, &s_pr), 1);
		{
			struct route r = s_pr.r;

			r.nhs = r.nh_count > 1 ? s_pr.nhs : NULL;
			r.metrics = s_pr.has_metrics ? &s_pr.m : NULL;
			strbuf_appendf(sb, "%u: ", r.table);
			render_json4_route(&s->ctx, &r, sb);
			strbuf_putc(sb, '\n');
		}
	}
	if (!NLMSG_OK(h, left))
		*p = end;
	strbuf_putc(sb, 0);
	assert_false(sb->failed);
}

static int differ(const char *what, const char *kind, const char *ours, const char *theirs)
{
	size_t i = 0, line = 1;

	if (!strcmp(ours, theirs))
		return 0;
	while (ours[i] && ours[i] == theirs[i])
		line += ours[i++] == '\n';
	while (i && ours[i - 1] != '\n')
		i--;
	print_message("# %s: %s line %zu differs\n#  mirror: %.300s\n#  kernel: %.300s\n", what,
		      kind, line, ours + i, theirs + i);
	return 1;
}

static void test_stream(void **state)
{
	const char *dir = *state;
	struct mirror4 *x;
	struct mirror4_stats st;
	struct snapshot *s;
	size_t nlen, slen, dlen, plen;
	char *notify = slurp(dir, "notify.nl", &nlen), *steps = slurp(dir, "steps.txt", &slen),
	     *dumps = slurp(dir, "routes-steps.nl", &dlen),
	     *kproc = slurp(dir, "proc-steps.txt", &plen);
	const char *dp, *line, *kp;
	long at = 0, msgs = 0;
	int nsteps = 0, bad = 0;
	size_t built = 0, segs = 0;
	const struct nlmsghdr *h;
	size_t left;

	if (!notify || !steps || !dumps || !kproc)
		skip();
	assert_int_equal(mirror4_new(&x), 0);
	{
		char start[4096 + 8];

		snprintf(start, sizeof(start), "%s/start", dir);
		apply_file(x, start, "links.nl");
		apply_file(x, start, "addrs.nl");
		apply_file(x, start, "nexthops.nl");
		apply_file(x, start, "routes.nl");
	}
	snapshot_release(publish(x));
	h = (const struct nlmsghdr *)notify;
	left = nlen;
	dp = dumps;
	kp = kproc;
	/* steps.txt: "<index of the step's first message>\t<command>", then "<n>\t# settle" */
	for (line = steps; *line;) {
		const char *next = strchr(line, '\n'), *cmd = strchr(line, '\t') + 1;
		struct mirror_delta d = { 0 };
		long until;

		next = next ? next + 1 : line + strlen(line);
		until = *next ? strtol(next, NULL, 10) : (long)1 << 40;
		for (; at < until && NLMSG_OK(h, left); h = NLMSG_NEXT(h, left), at++, msgs++)
			apply(x, h, 0, &d);
		if (strncmp(cmd, "# settle", 8) && dp < dumps + dlen) {
			struct strbuf a = { 0 }, b = { 0 };
			const char *knext = strstr(kp + 1, "\n== "), *body = strchr(kp, '\n') + 1;
			size_t klen = knext ? (size_t)(knext + 1 - body) : strlen(body), olen;
			char what[256], *ours, *k;

			assert_true(!strncmp(kp, "== ", 3));
			snprintf(what, sizeof(what), "%s step %d (%.*s)", dir, nsteps,
				 (int)(next - cmd - 1), cmd);
			s = publish(x);
			built += s->segs_built;
			segs += s->nsegs;
			text_of_snapshot(s, &a);
			text_of_dump(s, &dp, dumps + dlen, &b);
			bad += differ(what, "route", a.buf, b.buf);
			ours = render_proc_text(s, &olen);
			assert_non_null(ours);
			k = strndup(body, klen);
			bad += differ(what, "proc", ours, k);
			free(ours);
			free(k);
			strbuf_free(&a);
			strbuf_free(&b);
			snapshot_release(s);
			kp = knext ? knext + 1 : kp + strlen(kp);
			nsteps++;
		}
		line = next;
	}
	mirror4_get_stats(x, &st);
	print_message("# %s: %ld notifications, %d steps, %d differ; %zu of %zu segments built; "
		      "silent removals %llu, silent changes %llu, replaces in place %llu, unknown "
		      "deletes %llu\n",
		      dir, msgs, nsteps, bad, built, segs, (unsigned long long)st.silent_removals,
		      (unsigned long long)st.silent_changes,
		      (unsigned long long)st.replace_in_place,
		      (unsigned long long)st.unknown_deletes);
	assert_int_equal(bad, 0);
	assert_true(nsteps > 0);
	mirror4_free(x);
	free(notify);
	free(steps);
	free(dumps);
	free(kproc);
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
	for (int i = 1; i < argc && n < 64; i++)
		tests[n++] = (struct CMUnitTest){ argv[i], test_stream, NULL, NULL, argv[i] };
	for (size_t i = 0; argc == 1 && i < sizeof(sets) / sizeof(sets[0]); i++) {
		snprintf(dirs[n], sizeof(dirs[n]), "%s/%s", d ? d : "tests/data", sets[i]);
		tests[n] = (struct CMUnitTest){ sets[i], test_stream, NULL, NULL, dirs[n] };
		n++;
	}
	return _cmocka_run_group_tests("mirror4", tests, n, NULL, NULL);
}
