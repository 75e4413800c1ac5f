// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_mirror - the mirror's kernel semantics, without root.
 *
 * Recorded streams (tests/data/notify-*, made by tests/data/capture_notify.sh with
 * build/tools/nlnotify; formats in tests/data/README.md): the first dump is loaded into a
 * mirror as collector.c's full_dump() loads it, every recorded notification is applied in
 * order as collector.c's apply_message() applies it, and the result must equal what the same
 * kernel showed at the end:
 *   - its proc text (refcnt masked, as tests/lib/common.sh proc_masked does) is the kernel's
 *     /proc/net/ipv6_route, byte for byte;
 *   - its JSON is what `ip -j -6 route show table all` printed;
 *   - mirror_diff() against a mirror loaded from the final dump finds no route on either side.
 * A check that the final dump alone reproduces the kernel's proc text comes first, so a
 * failure of the replay points at the notification semantics, not at the renderers (that
 * check adds the empty tables a resync would probe, see below).
 *
 * Targeted dumps (where the kernel is silent the collector re-reads, once its socket is
 * drained, what can have changed): the RTM_F_PREFIX dump is replayed from the one recorded
 * after each step (prefix-steps.nl), and so are the strict dumps of a device's routes the
 * collector runs after an address or RA message (RTM_NEWADDR/DELADDR, RTM_NEWPREFIX,
 * RTM_NEWNDUSEROPT, RTM_NEWROUTE of a route learned from an RA), from oif-steps.nl where the
 * stream has one (older streams need none). A rule naming an unknown table makes the collector probe
 * the table and add it, newest in its bucket: the replay adds it without the probe (the kernel
 * creates the table with the rule). The others (routes of a device whose state changed,
 * nexthop objects after a device flush, tables over a group that lost a member) are not
 * replayed: the streams avoid the cases where they would change anything, and each replay
 * prints how many the collector would have run, so a stream that needs one shows at once.
 * Expiry deadlines are compared as present or not (an RA refreshes them silently).
 *
 * Hand-built records check the rules the streams rely on, one at a time: append order,
 * which route a replace takes, a one-hop delete of a two-hop group.
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
#include <net/if.h>
#include <linux/fib_rules.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rtsnap/snapshot_impl.h"
#include "rtsnap/builder.h"
#include "rtsnap/events.h"
#include "rtsnap/log.h"
#include "rtsnap/mirror.h"
#include "rtsnap/nlparse.h"
#include "rtsnap/order.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"

#include "instance.h"

#define NOW_MS 1000000 /* any fixed time: expiry deadlines are compared as "has one" */

static struct nlparse_route s_pr;

/* ---- files ---- */

static const char *datadir(void)
{
	const char *d = getenv("RTSNAP_TESTDATA_DIR");

	return d ? d : "tests/data";
}

/* The file, NUL-terminated; NULL if it does not exist and optional is set. */
static char *slurp_opt(const char *stream, const char *name, size_t *len, int optional)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s/%s", datadir(), stream, name);
	f = fopen(path, "rb");
	if (!f && optional) {
		*len = 0;
		return NULL;
	}
	if (!f)
		fail_msg("cannot open %s", path);
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

static char *slurp(const char *stream, const char *name, size_t *len)
{
	return slurp_opt(stream, name, len, 0);
}

/* ---- loading a recorded dump the way collector.c's full_dump() does ---- */

/* The table a rule points to, 0 if none (collector.c rule_table()). */
static uint32_t rule_table(const struct nlmsghdr *h)
{
	const struct fib_rule_hdr *frh = NLMSG_DATA(h);
	const struct rtattr *a;
	size_t left;
	uint32_t table;

	assert_true(h->nlmsg_len >= NLMSG_LENGTH(sizeof(*frh)));
	if (frh->family != AF_INET6 || frh->action != FR_ACT_TO_TBL)
		return 0;
	table = frh->table;
	left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*frh));
	for (a = (const struct rtattr *)((const char *)frh + NLMSG_ALIGN(sizeof(*frh)));
	     RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == FRA_TABLE && RTA_PAYLOAD(a) == sizeof(uint32_t))
			memcpy(&table, RTA_DATA(a), sizeof(table));
	return table;
}

enum part { P_LINKS, P_NEXTHOPS, P_ROUTES, P_PREFIX, P_RULES };

static void load_part(struct mirror *m, const char *stream, const char *phase, enum part part)
{
	static const char *const files[] = { "links.nl", "nexthops.nl", "routes.nl", "prefix.nl",
					     "rules.nl" };
	char name[256];
	size_t len, left;
	char *buf;

	snprintf(name, sizeof(name), "%s/%s", phase, files[part]);
	buf = slurp(stream, name, &len);
	left = len;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		struct route_link l;
		struct route_nhobj o;
		struct prefix_key k;
		uint32_t t;

		/* a refused request (no nexthop objects in this kernel) ends like a dump */
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
			break;
		switch (part) {
		case P_LINKS:
			assert_int_equal(nlparse_link(h, &l), 1);
			assert_true(mirror_set_link(m, &l) >= 0);
			break;
		case P_NEXTHOPS:
			assert_int_equal(nlparse_nexthop(h, &o), 1);
			assert_true(mirror_set_nhobj(m, &o) >= 0);
			break;
		case P_ROUTES:
			if (nlparse_route(h, NOW_MS, &s_pr) == 1) /* 0: an RTM_F_CLONED exception */
				assert_int_equal(mirror_load_route(m, &s_pr), 0);
			break;
		case P_PREFIX:
			if (nlparse_prefix_key(h, &s_pr, &k) == 1)
				mirror_mark_prefix(m, &k);
			break;
		case P_RULES:
			/* find_empty_tables(): a table a rule names exists (the rule made it) */
			t = rule_table(h);
			if (t && t != RT_TABLE_MAIN && t != RT_TABLE_LOCAL &&
			    !mirror_has_table(m, t))
				assert_int_equal(mirror_add_table(m, t, 0), 0);
			break;
		}
	}
	free(buf);
}

static struct mirror *load_dump(const char *stream, const char *phase)
{
	struct mirror *m = NULL;

	assert_int_equal(mirror_new(&m), 0);
	load_part(m, stream, phase, P_LINKS);
	load_part(m, stream, phase, P_NEXTHOPS);
	load_part(m, stream, phase, P_ROUTES);
	load_part(m, stream, phase, P_PREFIX);
	load_part(m, stream, phase, P_RULES);
	return m;
}

/* ---- applying notifications the way collector.c's apply_message() does ---- */

/* Targeted dumps the collector would run once the socket is drained (see the top). */
enum { W_LINK = 1, W_PREFIX = 2, W_NEXTHOPS = 4, W_GROUPS = 8, W_PROBE = 16, W_OIF = 32 };
struct wants {
	unsigned int need;			     /* W_* since the end of the last step */
	unsigned int link, prefix, nexthops, groups; /* steps that needed one */
	unsigned int probes;			     /* tables probed */
	unsigned int oif;			     /* steps that re-read devices' routes */
};

/* Apply one message; 0, or a negative errno for a message the mirror refused. */
static int apply_one(struct mirror *m, const struct nlmsghdr *h, struct wants *w)
{
	struct mirror_delta d = { 0 };
	struct route_link l;
	struct route_nhobj o;
	const struct route *r = &s_pr.r;
	int ret;

	switch (h->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		ret = nlparse_route(h, NOW_MS, &s_pr);
		if (ret <= 0)
			return ret;
		if (h->nlmsg_type == RTM_DELROUTE)
			return mirror_apply_del(m, &s_pr, &d);
		if (r->protocol == RTPROT_KERNEL && r->type == RTN_UNICAST && r->nh_count == 1 &&
		    !r->nh.has_gw && r->dst_len && !r->src_len)
			w->need |= W_PREFIX;
		if (route_ra_shape(r))
			w->need |= W_OIF;
		return mirror_apply_new(m, &s_pr, h->nlmsg_flags, &d);
	case RTM_NEWLINK:
		ret = nlparse_link(h, &l);
		if (ret <= 0)
			return ret ? ret : -EBADMSG;
		ret = mirror_set_link(m, &l);
		if (ret < 0)
			return ret;
		if (ret & MIRROR_LINK_STATE) {
			w->need |= W_LINK;
			if (!(l.flags & IFF_UP) && mirror_link_has_nhobj(m, l.ifindex))
				w->need |= W_NEXTHOPS | W_GROUPS;
		}
		return 0;
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = NLMSG_DATA(h);

		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) || ifi->ifi_index <= 0)
			return -EBADMSG;
		if (mirror_link_has_nhobj(m, (uint32_t)ifi->ifi_index))
			w->need |= W_NEXTHOPS | W_GROUPS;
		mirror_del_link(m, (uint32_t)ifi->ifi_index, &d);
		return 0;
	}
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		ret = nlparse_nexthop(h, &o);
		if (ret <= 0)
			return ret ? ret : -EBADMSG;
		if (h->nlmsg_type == RTM_NEWNEXTHOP)
			return mirror_set_nhobj(m, &o) < 0 ? -ENOMEM : 0;
		if (mirror_has_groups(m))
			w->need |= W_GROUPS;
		mirror_del_nhobj(m, o.id, &d);
		return 0;
	case RTM_NEWRULE: {
		uint32_t t = rule_table(h);

		/* run_targeted(): the probe finds the table (the rule created it) */
		if (t && !mirror_has_table(m, t)) {
			w->probes++;
			return mirror_add_table(m, t, 1);
		}
		return 0;
	}
	case RTM_NEWPREFIX:
		w->need |= W_PREFIX | W_OIF;
		return 0;
	case RTM_NEWADDR:
	case RTM_DELADDR:
	case RTM_NEWNDUSEROPT:
		w->need |= W_OIF;
		return 0;
	default:
		return 0;
	}
}

/* The recorded step (steps.txt) during which message i arrived. */
static const char *step_of(const char *steps, long i, char *out, size_t outsz)
{
	const char *line = steps, *best = NULL;

	while (line && *line) {
		char *end;
		long first = strtol(line, &end, 10);

		if (first > i)
			break;
		best = end + 1;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!best)
		return "(before the first step)";
	snprintf(out, outsz, "%.*s", (int)strcspn(best, "\n"), best);
	return out;
}

/* The recorded strict dumps of devices' routes after one step (oif-steps.nl: each ends with
 * NLMSG_DONE, the step with NLMSG_NOOP), applied as the collector applies a targeted dump. */
static void oif_step(struct mirror *m, struct wants *w, const struct nlmsghdr **oif, size_t *oleft)
{
	const struct nlmsghdr *h = *oif;
	int any = 0;

	if (!h)
		return; /* a stream recorded before oif-steps.nl: it needs none */
	for (; NLMSG_OK(h, *oleft); h = NLMSG_NEXT(h, *oleft)) {
		struct mirror_delta d = { 0 };

		if (h->nlmsg_type == NLMSG_NOOP) {
			h = NLMSG_NEXT(h, *oleft);
			break;
		}
		any = 1;
		if (h->nlmsg_type == RTM_NEWROUTE && nlparse_route(h, NOW_MS, &s_pr) == 1)
			assert_int_equal(mirror_apply_update(m, &s_pr, &d), 0);
	}
	/* the recording and the replay agree on which steps re-read devices */
	assert_int_equal(any, !!(w->need & W_OIF));
	*oif = h;
}

/*
 * The end of a step: the collector's socket is drained and it runs its targeted dumps. The
 * prefix dump is replayed from the one recorded after the step (*pfx, advanced past it), and
 * the devices' dumps from oif-steps.nl (*oif, NULL if the stream has none); the others are
 * only counted.
 */
static void end_step(struct mirror *m, struct wants *w, const struct nlmsghdr **pfx, size_t *pleft,
		     const struct nlmsghdr **oif, size_t *oleft)
{
	const struct nlmsghdr *h = *pfx;
	int marks = w->need & W_PREFIX;
	struct prefix_key k;

	oif_step(m, w, oif, oleft); /* run_targeted(): devices before the prefix marks */
	for (; NLMSG_OK(h, *pleft); h = NLMSG_NEXT(h, *pleft)) {
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
			h = NLMSG_NEXT(h, *pleft);
			break;
		}
		if (marks && nlparse_prefix_key(h, &s_pr, &k) == 1)
			mirror_mark_prefix(m, &k);
	}
	*pfx = h;
	w->oif += !!(w->need & W_OIF);
	w->link += !!(w->need & W_LINK);
	w->prefix += !!(w->need & W_PREFIX);
	w->nexthops += !!(w->need & W_NEXTHOPS);
	w->groups += !!(w->need & W_GROUPS);
	w->need = 0;
}

/* The first dump with every notification applied; report: say which targeted dumps the
 * collector would have run. */
/* A recorded stream being replayed into a mirror, one message at a time. */
struct replay {
	const char *stream;
	struct mirror *m;
	struct wants w;
	char *buf, *steps, *pbuf, *obuf;
	const struct nlmsghdr *pfx, *oif;
	struct nlmsghdr *h;
	size_t left, pleft, oleft;
	const char *next;
	long n;
};

static void replay_open(struct replay *r, const char *stream)
{
	size_t len, slen, plen, olen;

	memset(r, 0, sizeof(*r));
	r->stream = stream;
	r->m = load_dump(stream, "start");
	r->buf = slurp(stream, "notify.nl", &len);
	r->steps = slurp(stream, "steps.txt", &slen);
	r->pbuf = slurp(stream, "prefix-steps.nl", &plen);
	r->pfx = (const struct nlmsghdr *)r->pbuf;
	r->obuf = slurp_opt(stream, "oif-steps.nl", &olen, 1);
	r->oif = (const struct nlmsghdr *)r->obuf;
	r->h = (struct nlmsghdr *)r->buf;
	r->left = len;
	r->pleft = plen;
	r->oleft = olen;
	r->next = strchr(r->steps, '\n') + 1; /* the first step starts at message 0 */
}

/* Apply the next message (after the end of the steps that ended before it); 0 when there
 * was none left (the remaining steps are ended then). */
static int replay_step(struct replay *r)
{
	char cmd[512];
	int ret;

	if (!NLMSG_OK(r->h, r->left)) {
		for (; *r->next; r->next = strchr(r->next, '\n') + 1)
			end_step(r->m, &r->w, &r->pfx, &r->pleft, &r->oif, &r->oleft);
		end_step(r->m, &r->w, &r->pfx, &r->pleft, &r->oif, &r->oleft); /* the last */
		return 0;
	}
	while (*r->next && strtol(r->next, NULL, 10) <= r->n) {
		end_step(r->m, &r->w, &r->pfx, &r->pleft, &r->oif, &r->oleft);
		r->next = strchr(r->next, '\n') + 1;
	}
	ret = apply_one(r->m, r->h, &r->w);
	if (ret)
		fail_msg("%s: message %ld (notify.txt; step: %s) refused: %s", r->stream, r->n,
			 step_of(r->steps, r->n, cmd, sizeof(cmd)), strerror(-ret));
	r->h = NLMSG_NEXT(r->h, r->left);
	r->n++;
	return 1;
}

/* After the last replay_step(): the mirror, with every recorded message consumed. */
static struct mirror *replay_close(struct replay *r, int report)
{
	const struct wants *w = &r->w;

	assert_int_equal(r->pleft, 0);
	assert_int_equal(r->oleft, 0);
	assert_int_equal(r->left, 0);
	assert_true(r->n > 0);
	if (report && (w->link || w->prefix || w->nexthops || w->groups || w->probes || w->oif))
		fprintf(stderr,
			"# %s: targeted dumps the collector would have run: %u for link state, "
			"%u for prefix marks, %u for addresses and RAs (both replayed from the "
			"recorded ones%s), %u for nexthop objects, %u for groups (not replayed); "
			"%u table probes (replayed as a table add)\n",
			r->stream, w->link, w->prefix, w->oif,
			r->obuf || !w->oif ? "" : "; this stream has no devices' dumps",
			w->nexthops, w->groups, w->probes);
	free(r->steps);
	free(r->pbuf);
	free(r->obuf);
	free(r->buf);
	return r->m;
}

static struct mirror *replay_stream(const char *stream, int report)
{
	struct replay r;

	replay_open(&r, stream);
	while (replay_step(&r))
		;
	return replay_close(&r, report);
}

/* ---- comparisons ---- */

/* Blank the refcnt column (bytes 115-122 of a line), as proc_masked does. */
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

/* Print the first lines of a and b that differ, line by line. */
static void show_diff(const char *a, const char *b)
{
	int ln = 1, shown = 0;

	while ((*a || *b) && shown < 8) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

		if (la != lb || memcmp(a, b, la)) {
			fprintf(stderr, "#  line %d\n#   kernel: %.*s\n#   mirror: %.*s\n", ln,
				(int)la, a, (int)lb, b);
			shown++;
		}
		a += la + (a[la] == '\n');
		b += lb + (b[lb] == '\n');
		ln++;
	}
}

/* Whether s's proc text differs from the kernel's at the end of stream (the differences are
 * printed). */
static int proc_differs(const struct snapshot *s, const char *stream, const char *what)
{
	size_t klen;
	char *kernel = slurp(stream, "proc.txt", &klen);
	char *ours;
	size_t olen;
	int differs;

	ours = render_proc_text(s, &olen);
	mask_refcnt(kernel);
	mask_refcnt(ours);
	differs = strcmp(kernel, ours) != 0;
	if (differs) {
		fprintf(stderr, "# %s: %s: proc text differs from the kernel's:\n", stream, what);
		show_diff(kernel, ours);
	}
	free(kernel);
	free(ours);
	return differs;
}

/* Whether m's proc text differs from the kernel's (the differences are printed). */
static int check_proc(struct mirror *m, const char *stream, const char *what)
{
	struct snapshot *s = NULL;
	int differs;

	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	differs = proc_differs(s, stream, what);
	snapshot_free(s);
	return differs;
}

/* ---- two instances side by side ---- */

/* One instance as the daemon runs it: a mirror with its own builder, snapshot chain and
 * change history, fed by its own recorded stream. */
struct instance {
	struct replay r;
	struct builder *b;
	struct snapshot_chain *c;
	struct events_history *h;
	uint64_t published;
};

/* Publish a snapshot of the instance's mirror as the collector does. */
static void instance_publish(struct instance *in)
{
	struct snapshot *s = NULL, *prev;

	assert_int_equal(builder_compose(in->b, in->r.m, in->c, &s), 0);
	clock_gettime(CLOCK_REALTIME, &s->taken_at);
	prev = snapshot_acquire(in->c);
	snapshot_publish(s);
	events_record(in->h, prev, s);
	snapshot_release(prev);
	in->published++;
}

/*
 * Two instances in one process, each replaying its own recorded stream message by message,
 * interleaved, and publishing at its own pace: each ends equal to its own kernel, with its
 * own generations and change history; neither sees the other's routes.
 */
static void test_two_instances(void **state)
{
	static const char *const streams[2] = { "notify-ecmp", "notify-links" };
	struct events_opts eo = { .generations = 4096, .bytes = 4u << 20 };
	struct instance in[2];
	int more[2] = { 1, 1 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		memset(&in[i], 0, sizeof(in[i]));
		replay_open(&in[i].r, streams[i]);
		assert_int_equal(builder_new(NULL, &in[i].b), 0);
		assert_int_equal(snapshot_chain_new(&in[i].c), 0);
		assert_int_equal(events_new(&eo, &in[i].h), 0);
		instance_publish(&in[i]);
	}
	for (unsigned int k = 0; more[0] || more[1]; k++)
		for (int i = 0; i < 2; i++) {
			if (!more[i])
				continue;
			more[i] = replay_step(&in[i].r);
			if (k % (2u + (unsigned int)i) == 0 || !more[i])
				instance_publish(&in[i]);
		}
	for (int i = 0; i < 2; i++) {
		struct events_window w;
		struct snapshot *s;

		replay_close(&in[i].r, 0);
		s = snapshot_acquire(in[i].c);
		assert_non_null(s);
		assert_int_equal(s->generation, in[i].published);
		events_window(in[i].h, &w);
		assert_int_equal(w.head, in[i].published);
		assert_false(proc_differs(s, streams[i], "two instances"));
		snapshot_release(s);
	}
	assert_int_not_equal(in[0].published, in[1].published);
	for (int i = 0; i < 2; i++) {
		events_free(in[i].h);
		mirror_free(in[i].r.m); /* gives its segments up to the chain's snapshots: first */
		snapshot_chain_free(in[i].c);
		builder_free(in[i].b);
	}
}

/* Whether m's JSON differs from what ip -j printed (the differing routes are printed). */
static int check_json(struct mirror *m, const char *stream)
{
	struct snapshot *s = NULL;
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 }, all = { 0 };
	json_t *ours, *theirs;
	json_error_t err;
	size_t len, bad = 0;
	char *ip = slurp(stream, "ip.json", &len);
	int n;

	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	n = render_json_all(s, NOW_MS, &segs, &dyn);
	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		strbuf_append(&all, segs[i].p, segs[i].len);
	strbuf_putc(&all, 0);
	ours = json_loads(all.buf, 0, &err);
	theirs = json_loads(ip, 0, &err);
	assert_non_null(ours);
	assert_non_null(theirs);
	for (size_t i = 0; i < json_array_size(theirs) || i < json_array_size(ours); i++) {
		json_t *a = json_array_get(ours, i), *b = json_array_get(theirs, i);

		if (a && b) {
			/* the recorded ones count down from the capture; ours from NOW_MS */
			json_object_del(a, "expires");
			json_object_del(b, "expires");
		}
		if (!a || !b || !json_equal(a, b)) {
			char *x = a ? json_dumps(a, JSON_COMPACT) : NULL;
			char *y = b ? json_dumps(b, JSON_COMPACT) : NULL;

			fprintf(stderr, "# %s: route %zu\n#  mirror: %s\n#      ip: %s\n", stream,
				i, x ? x : "(none)", y ? y : "(none)");
			free(x);
			free(y);
			bad++;
		}
	}
	json_decref(ours);
	json_decref(theirs);
	free(ip);
	free(segs);
	strbuf_free(&dyn);
	strbuf_free(&all);
	snapshot_free(s);
	return bad != 0;
}

/* ---- the recorded streams ---- */

/*
 * A recorded stream, and the disagreements with the kernel that it shows and that were
 * reported (to be fixed in src/, not here): known_dump for the final dump's own rendering,
 * known_replay for the replay. A known check must still fail, with its reason printed; when
 * it passes, the fix is in and the mark must go.
 */
struct stream {
	const char *dir;
	const char *known_dump;
	const char *known_replay;
};

static void verdict(const struct stream *st, const char *check, int differs, const char *known)
{
	if (!known) {
		if (differs)
			fail_msg("%s: %s: the mirror disagrees with the kernel", st->dir, check);
		return;
	}
	if (!differs)
		fail_msg("%s: %s: passes now; remove its known-failure mark (%s)", st->dir, check,
			 known);
	fprintf(stderr, "# %s: %s: KNOWN FAILURE, reported: %s\n", st->dir, check, known);
}

/*
 * The final dump alone, with the tables a resync would probe: find_empty_tables() probes the
 * tables the previous mirror knew (here the replayed one), and the kernel never frees a table,
 * so each of them exists and is added (last in its bucket) if the dump showed no route of it.
 */
static void test_final_dump_is_kernel_proc(void **state)
{
	const struct stream *st = *state;
	struct mirror *m = load_dump(st->dir, "end"), *prev = replay_stream(st->dir, 0);
	uint32_t *ids = NULL;
	long n = mirror_table_ids(prev, &ids);

	assert_true(n >= 0);
	for (long i = 0; i < n; i++)
		if (ids[i] != RT_TABLE_MAIN && ids[i] != RT_TABLE_LOCAL &&
		    !mirror_has_table(m, ids[i]))
			assert_int_equal(mirror_add_table(m, ids[i], 0), 0);
	free(ids);
	mirror_free(prev);
	verdict(st, "final dump proc", check_proc(m, st->dir, "final dump"), st->known_dump);
	mirror_free(m);
}

static void test_replay_proc(void **state)
{
	const struct stream *st = *state;
	struct mirror *m = replay_stream(st->dir, 1);

	verdict(st, "replay proc", check_proc(m, st->dir, "replay"), st->known_replay);
	mirror_free(m);
}

static void test_replay_json(void **state)
{
	const struct stream *st = *state;
	struct mirror *m = replay_stream(st->dir, 0);

	verdict(st, "replay JSON", check_json(m, st->dir), st->known_replay);
	mirror_free(m);
}

static void test_replay_equals_final_dump(void **state)
{
	const struct stream *st = *state;
	struct mirror *m = replay_stream(st->dir, 0), *end = load_dump(st->dir, "end");
	uint32_t only_replay = 0, only_dump = 0;

	assert_int_equal(mirror_diff(m, end, st->dir, 50, &only_replay, &only_dump), 0);
	if (only_replay || only_dump)
		fprintf(stderr, "# %s: %u routes only in the replay, %u only in the final dump\n",
			st->dir, only_replay, only_dump);
	verdict(st, "replay against the final dump", only_replay || only_dump, st->known_replay);
	mirror_free(end);
	mirror_free(m);
}

/* ---- hand-built records ---- */

static void mk_route(struct nlparse_route *pr, const char *dst, unsigned int plen, uint32_t metric)
{
	memset(&pr->r, 0, sizeof(pr->r));
	pr->has_metrics = 0;
	assert_int_equal(inet_pton(AF_INET6, dst, pr->r.dst), 1);
	pr->r.dst_len = (uint8_t)plen;
	pr->r.metric = metric;
	pr->r.table = RT_TABLE_MAIN;
	pr->r.protocol = RTPROT_BOOT;
	pr->r.type = RTN_UNICAST;
	pr->r.pref = 0;
	pr->r.metrics = NULL;
}

/* Add a hop (gw NULL: device only) as nlparse would: inline for one, RTA_MULTIPATH above. */
static void add_hop(struct nlparse_route *pr, const char *gw, uint32_t ifindex)
{
	struct route_nh h = { .ifindex = ifindex, .weight = 1 };

	if (gw) {
		assert_int_equal(inet_pton(AF_INET6, gw, h.gw), 1);
		h.has_gw = 1;
	}
	if (pr->r.nh_count == 0) {
		pr->r.nh = h;
		pr->nhs[0] = h;
	} else {
		pr->nhs[pr->r.nh_count] = h;
		memset(&pr->r.nh, 0, sizeof(pr->r.nh));
	}
	pr->r.nh_count++;
}

static struct mirror *new_mirror(void)
{
	struct mirror *m = NULL;
	struct route_link l = { .ifindex = 2, .flags = 0x11043 };

	assert_int_equal(mirror_new(&m), 0);
	for (uint32_t i = 2; i <= 4; i++) {
		l.ifindex = i;
		snprintf(l.name, sizeof(l.name), "eth%u", i);
		assert_true(mirror_set_link(m, &l) >= 0);
	}
	return m;
}

/* The gateways of the real routes of table main, in order, as "gw%dev" words. */
static void routes_of(struct mirror *m, char *out, size_t outsz)
{
	struct snapshot *s = NULL;
	size_t used = 0;

	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	out[0] = 0;
	for (size_t i = 0; i < s->nroutes; i++) {
		const struct route *r = snapshot_route(s, i);

		if (r->placeholder || r->table != RT_TABLE_MAIN)
			continue;
		used += (size_t)snprintf(out + used, outsz - used, "%s[", used ? " " : "");
		for (unsigned int k = 0; k < r->nh_count; k++) {
			const struct route_nh *h = snapshot_route_nh(s, r, k);
			char a[INET6_ADDRSTRLEN] = "-";

			if (h->has_gw)
				inet_ntop(AF_INET6, h->gw, a, sizeof(a));
			used += (size_t)snprintf(out + used, outsz - used, "%s%s%%%u", k ? " " : "",
						 a, h->ifindex);
		}
		used += (size_t)snprintf(out + used, outsz - used, "]");
	}
	snapshot_free(s);
}

static void apply(struct mirror *m, uint16_t flags)
{
	struct mirror_delta d = { 0 };

	assert_int_equal(mirror_apply_new(m, &s_pr, flags, &d), 0);
}

static void test_append_puts_new_hop_last(void **state)
{
	struct mirror *m = new_mirror();
	char got[1024];

	(void)state;
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	apply(m, NLM_F_CREATE | NLM_F_EXCL);
	/* the kernel announces the whole group, the new hop first */
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, "2001:db8::3", 3);
	add_hop(&s_pr, "2001:db8::2", 2);
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, "2001:db8::4", 4);
	add_hop(&s_pr, "2001:db8::2", 2);
	add_hop(&s_pr, "2001:db8::3", 3);
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[2001:db8::2%2 2001:db8::3%3 2001:db8::4%4]");
	mirror_free(m);
}

static void test_replace_takes_first_of_same_kind(void **state)
{
	struct mirror *m = new_mirror();
	char got[1024];

	(void)state;
	/* dev-only eth2, a group, dev-only eth3, all metric 1024 */
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, NULL, 2);
	apply(m, NLM_F_CREATE | NLM_F_EXCL);
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, "2001:db8::3", 3);
	add_hop(&s_pr, "2001:db8::2", 2);
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, NULL, 3);
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[-%2] [2001:db8::2%2 2001:db8::3%3] [-%3]");
	/* a gateway route replaces the group, siblings and all */
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, "2001:db8::9", 4);
	apply(m, NLM_F_REPLACE);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[-%2] [2001:db8::9%4] [-%3]");
	/* a device route replaces the first device route */
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, NULL, 4);
	apply(m, NLM_F_REPLACE);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[-%4] [2001:db8::9%4] [-%3]");
	mirror_free(m);
}

static void test_one_hop_delete_of_two(void **state)
{
	struct mirror *m = new_mirror(), *want = new_mirror();
	struct mirror_delta d = { 0 };
	uint32_t a = 0, b = 0;
	char got[1024];

	(void)state;
	mk_route(&s_pr, "2001:db8:c::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	add_hop(&s_pr, "2001:db8::3", 3);
	apply(m, NLM_F_CREATE | NLM_F_EXCL);
	mk_route(&s_pr, "2001:db8:c::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
	assert_int_equal(d.changed, 1);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[2001:db8::3%3]");
	/* and it is the plain route a dump would show */
	mk_route(&s_pr, "2001:db8:c::", 64, 1024);
	add_hop(&s_pr, "2001:db8::3", 3);
	assert_int_equal(mirror_load_route(want, &s_pr), 0);
	assert_int_equal(mirror_diff(m, want, "one-hop delete", 5, &a, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	mirror_free(want);
	mirror_free(m);
}

/* The first main-table record of m's snapshot, copied to *out (its hops into nhs). */
static void first_main(struct mirror *m, struct route *out, struct route_nh *nhs)
{
	struct snapshot *s = NULL;

	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	for (size_t i = 0; i < s->nroutes; i++) {
		const struct route *r = snapshot_route(s, i);

		if (r->placeholder || r->table != RT_TABLE_MAIN)
			continue;
		*out = *r;
		for (unsigned int k = 0; k < r->nh_count && k < 8; k++)
			nhs[k] = *snapshot_route_nh(s, r, k);
		out->nhs = NULL;
		out->metrics = NULL;
		snapshot_free(s);
		return;
	}
	fail_msg("no route in main");
}

/* Each sibling keeps its own attributes; the survivor of a deleted first leg takes its own. */
static void test_siblings_keep_their_own(void **state)
{
	struct mirror *m = new_mirror();
	struct mirror_delta d = { 0 };
	struct route r;
	struct route_nh nhs[8];
	uint32_t *rr = NULL;

	(void)state;
	mk_route(&s_pr, "2001:db8:d::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	s_pr.r.protocol = 188;
	s_pr.r.pref = 3; /* low */
	s_pr.r.expires_ms = snapshot_now_ms() + 60000;
	apply(m, NLM_F_CREATE | NLM_F_EXCL);
	/* the append announces the group, its own attributes with it */
	mk_route(&s_pr, "2001:db8:d::", 64, 1024);
	add_hop(&s_pr, "2001:db8::3", 3);
	add_hop(&s_pr, "2001:db8::2", 2);
	s_pr.r.protocol = 77;
	s_pr.r.pref = 1;       /* high */
	s_pr.m.mask = 1u << 2; /* RTAX_MTU */
	s_pr.m.val[2] = 1300;
	s_pr.has_metrics = 1;
	apply(m, NLM_F_CREATE | NLM_F_APPEND);
	first_main(m, &r, nhs);
	assert_int_equal(r.nh_count, 2);
	assert_int_equal(r.protocol, 188); /* the record is the first sibling's, as a dump */
	assert_int_equal(r.pref, 3);
	assert_int_equal(nhs[0].sib & (ROUTE_SIB_SET | ROUTE_SIB_EXPIRES | ROUTE_SIB_PREF),
			 ROUTE_SIB_SET | ROUTE_SIB_EXPIRES | 3);
	assert_int_equal(nhs[1].sib & (ROUTE_SIB_SET | ROUTE_SIB_EXPIRES | ROUTE_SIB_PREF),
			 ROUTE_SIB_SET | 1);
	assert_true(nhs[1].sib & ROUTE_SIB_OWN);
	/* the first leg goes: the survivor shows its own */
	mk_route(&s_pr, "2001:db8:d::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
	first_main(m, &r, nhs);
	assert_int_equal(r.nh_count, 1);
	assert_int_equal(r.protocol, 77);
	assert_int_equal(r.pref, 1);
	assert_int_equal(r.expires_ms, 0);
	assert_int_equal(mirror_take_rereads(m, &rr), 0);
	free(rr);
	mirror_free(m);

	/* a group a dump built: the second sibling's own attributes are unknown, so the
	 * survivor's routes are to be re-read */
	m = new_mirror();
	mk_route(&s_pr, "2001:db8:e::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	add_hop(&s_pr, "2001:db8::3", 3);
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
	mk_route(&s_pr, "2001:db8:e::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
	rr = NULL;
	assert_int_equal(mirror_take_rereads(m, &rr), 1);
	assert_int_equal(rr[0], RT_TABLE_MAIN);
	assert_int_equal(rr[1], 3);
	assert_int_equal(rr[2], MIRROR_REREAD_SIBLING);
	free(rr);
	mirror_free(m);
}

/* Fixed in mirror.c and render_proc.c after this test reported them: a user's replace naming
 * an nhid (streams notify-nhid-replace), gateway routes with proto ra (notify-proto-ra), nhid
 * routes flushed with their device under nexthop_compat_mode=0 (notify-compat0), routes that
 * differ only by their encapsulation (notify-encap: nlparse, mirror.c hop_same()), route
 * information whose lifetime and preference an RA sets without a message (notify-ra-rtinfo:
 * the collector re-reads the device after an RA route's RTM_NEWROUTE and RTM_NEWPREFIX). */

/* A dump taken during changes can list a route again: it stays one route. */
static void test_dump_repeat_is_one_route(void **state)
{
	struct mirror *m = new_mirror();
	char got[1024];

	(void)state;
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
	mk_route(&s_pr, "2001:db8:b::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	add_hop(&s_pr, "2001:db8::3", 3);
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
	/* the walk restarts at the first (after a route of a later key), then a route of
	 * another device with the first's key comes: new */
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, "2001:db8::2", 2);
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
	mk_route(&s_pr, "2001:db8:a::", 64, 1024);
	add_hop(&s_pr, NULL, 4);
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
	routes_of(m, got, sizeof(got));
	assert_string_equal(got, "[2001:db8::2%2] [-%4] [2001:db8::2%2 2001:db8::3%3]");
	assert_int_equal(mirror_routes(m), 3);
	mirror_free(m);
}

/* ---- shared segments ---- */

/* Route i of a generated table: 2001:db8:<i>::/64 via 2001:db8::<gw> on eth2..eth4. */
static void gen_route(unsigned int i, unsigned int gw)
{
	char dst[64], via[64];

	snprintf(dst, sizeof(dst), "2001:db8:%x::", i);
	snprintf(via, sizeof(via), "2001:db8::%x", gw);
	mk_route(&s_pr, dst, 64, 1024);
	add_hop(&s_pr, via, 2 + i % 3);
}

/* The proc text and the /routes body of s. */
static char *views(const struct snapshot *s)
{
	struct render_seg *segs = NULL;
	struct strbuf dyn = { 0 }, all = { 0 };
	size_t len;
	char *proc;
	int n;

	proc = render_proc_text(s, &len);
	strbuf_append(&all, proc, len);
	n = render_json_all(s, NOW_MS, &segs, &dyn);
	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		strbuf_append(&all, segs[i].p, segs[i].len);
	strbuf_putc(&all, 0);
	free(segs);
	strbuf_free(&dyn);
	free(proc);
	return all.buf;
}

/* The views of a new snapshot of m, which is kept in *s. */
static char *views_of(struct mirror *m, struct snapshot **s)
{
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), s), 0);
	return views(*s);
}

/* m shows exactly what fresh shows (proc text and /routes); both are freed. */
static void assert_views_equal_free(struct mirror *m, struct mirror *fresh)
{
	struct snapshot *s = NULL, *f = NULL;
	char *vm = views_of(m, &s), *vf = views_of(fresh, &f);

	assert_string_equal(vm, vf);
	free(vm);
	free(vf);
	snapshot_free(s);
	snapshot_free(f);
	mirror_free(m);
	mirror_free(fresh);
}

/* A publication after one change builds the changed segment only, shares every other one with
 * the previous snapshot, and shows exactly what a mirror built from scratch shows. */
static void test_publication_shares_segments(void **state)
{
	struct mirror *m = new_mirror(), *fresh = new_mirror();
	struct snapshot *a = NULL, *b = NULL, *f = NULL;
	const unsigned int n = 3000, changed = 1234;
	size_t shared = 0, placeholders = 0, sharedg = 0;
	char *va, *vb, *vf, *vf2;

	(void)state;
	for (unsigned int i = 0; i < n; i++) {
		gen_route(i, 2);
		assert_int_equal(mirror_load_route(m, &s_pr), 0);
		gen_route(i, i == changed ? 9 : 2);
		assert_int_equal(mirror_load_route(fresh, &s_pr), 0);
	}
	va = views_of(m, &a);
	/* loaded in order, the chunks are full: 256 records each */
	assert_int_equal(a->segs_built, (n + SEGMENT_MAX - 1) / SEGMENT_MAX);
	gen_route(changed, 9);
	apply(m, NLM_F_REPLACE);
	vb = views_of(m, &b);
	vf = views_of(fresh, &f);
	assert_int_equal(b->segs_built, 1);
	for (size_t k = 0; k < b->nsegs; k++) {
		const struct segment *g = snapshot_seg(b, k, NULL);

		placeholders += g->n == 1 && g->routes[0].placeholder;
		for (size_t j = 0; j < a->nsegs; j++)
			shared += g == snapshot_seg(a, j, NULL);
	}
	/* every segment but the changed one, the placeholder rows too; and the groups of
	 * segments but the changed one's */
	assert_true(placeholders >= 1);
	assert_int_equal(shared, b->nsegs - 1);
	for (size_t q = 0; q < b->ngroups; q++)
		for (size_t j = 0; j < a->ngroups; j++)
			sharedg += b->groups[q] == a->groups[j];
	assert_int_equal(sharedg, b->ngroups - 1);
	assert_string_equal(vb, vf);
	assert_true(strcmp(va, vb) != 0);
	/* the old snapshot still reads as it was, now that the new one shares its segments */
	vf2 = views(a);
	assert_string_equal(va, vf2);
	free(va);
	free(vf2);
	snapshot_free(a);
	snapshot_free(b);
	snapshot_free(f);
	free(vb);
	free(vf);
	mirror_free(m);
	mirror_free(fresh);
}

/*
 * Snapshots the mirror composes hold no reference on the segments and groups they share: a
 * segment or group the mirror lets go waits (snapshot_defer_put(), snapshot_defer_put_group())
 * until every snapshot sealed since it was first published is freed.
 * Two snapshots, every chunk changed between them, the mirror freed while both are alive,
 * then freed newest first: each keeps reading what it read when it was built (in the
 * sanitizer builds a freed segment is poisoned and ASan reports the read), a snapshot holds
 * back exactly the segments it contains, and everything is dropped at the end.
 */
static void test_held_segments_wait_for_snapshots(void **state)
{
	struct mirror *m = new_mirror();
	struct snapshot *a = NULL, *b = NULL;
	const unsigned int n = 3000;
	long live0 = segment_live_count(), def0 = snapshot_deferred_count(test_chain()), chunks;
	long glive0 = seggroup_live_count();
	char *va, *vb, *v;

	(void)state;
	for (unsigned int i = 0; i < n; i++) {
		gen_route(i, 2);
		assert_int_equal(mirror_load_route(m, &s_pr), 0);
	}
	va = views_of(m, &a);
	chunks = (long)a->segs_built;
	assert_int_equal(a->nown, 0); /* it owns no segment: the mirror holds them, and its
				       * placeholder rows */
	assert_true(a->nsegs > (size_t)chunks);
	for (unsigned int i = 0; i < n; i++) {
		gen_route(i, 7);
		apply(m, NLM_F_REPLACE);
	}
	vb = views_of(m, &b);
	assert_int_equal(b->segs_built, chunks);
	/* a's chunk segments wait for a */
	assert_int_equal(snapshot_deferred_count(test_chain()) - def0, chunks);
	mirror_free(m); /* now both hold back their segments, and the placeholder rows */
	assert_int_equal(snapshot_deferred_count(test_chain()) - def0,
			 2 * chunks + 2 * ((long)a->nsegs - chunks));
	/* and their groups: every chunk changed, so a and b share only the placeholder rows' */
	assert_int_equal(seggroup_live_count() - glive0,
			 (long)a->ngroups + (long)b->ngroups - ((long)a->nsegs - chunks));
	v = views(a);
	assert_string_equal(v, va);
	free(v);
	snapshot_free(b); /* b's own segments go; a holds back only what it contains */
	assert_int_equal(snapshot_deferred_count(test_chain()) - def0, (long)a->nsegs);
	assert_int_equal(seggroup_live_count() - glive0, (long)a->ngroups);
	assert_true(segment_live_count() >= live0 + chunks);
	v = views(a);
	assert_string_equal(v, va);
	free(v);
	assert_true(strcmp(va, vb) != 0);
	snapshot_free(a);
	assert_int_equal(snapshot_deferred_count(test_chain()), def0);
	assert_int_equal(segment_live_count(), live0);
	assert_int_equal(seggroup_live_count(), glive0);
	free(va);
	free(vb);
}

/*
 * Churn through chunk splits and shrinks: random adds and deletes over 4 096 keys (every
 * chunk splits, many empty), each published; the views equal a mirror loaded from scratch
 * with the final routes, and the mirror's memory follows its routes down.
 */
static void test_churn_splits_and_shrinks(void **state)
{
	enum { KEYS = 4096, OPS = 20000 };
	static unsigned char live[KEYS];
	struct mirror *m = new_mirror(), *fresh = new_mirror();
	struct snapshot *s = NULL;
	struct mirror_delta d = { 0 };
	unsigned int x = 12345, n = 0;
	size_t full_bytes, end_bytes;

	(void)state;
	memset(live, 0, sizeof(live));
	for (unsigned int i = 0; i < KEYS; i += 2) { /* half the keys, loaded as by a dump */
		gen_route(i, 2);
		assert_int_equal(mirror_load_route(m, &s_pr), 0);
		live[i] = 1;
		n++;
	}
	full_bytes = mirror_bytes(m) - mirror_guide_bytes(m);
	for (unsigned int op = 0; op < OPS; op++) {
		unsigned int k;

		x = x * 1103515245u + 12345u;
		k = (x >> 8) % KEYS;
		gen_route(k, 2);
		if (live[k]) {
			assert_int_equal(mirror_apply_del(m, &s_pr, &d), 0);
			live[k] = 0;
			n--;
		} else if (op < OPS / 2 || (x >> 4) % 4 == 0) { /* then mostly deletes */
			apply(m, NLM_F_CREATE | NLM_F_EXCL);
			live[k] = 1;
			n++;
		}
		if (op % 997 == 0) {
			assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
			snapshot_free(s);
			s = NULL;
		}
	}
	assert_int_equal(mirror_routes(m), n);
	for (unsigned int i = 0; i < KEYS; i++)
		if (live[i]) {
			gen_route(i, 2);
			assert_int_equal(mirror_load_route(fresh, &s_pr), 0);
		}
	/* fewer routes than at the start, in split and shrunk chunks: memory per route within
	 * twice that of the full chunks a dump makes (the chunks' memory: the search guide, 16
	 * bytes a chunk, is there only once a table has enough chunks) */
	end_bytes = mirror_bytes(m) - mirror_guide_bytes(m);
	assert_true(n < KEYS / 2);
	print_message("# DEBUG end %zu full %zu n %u\n", end_bytes, full_bytes, n);
	assert_true(end_bytes * (KEYS / 2) < 2 * full_bytes * n);
	/* small neighbours were merged: segments hold a quarter of their room at least, on
	 * average (a chunk under a quarter full takes in the next one when they fit) */
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	print_message("# %zu routes in %zu segments after the churn\n", (size_t)n, s->nsegs);
	assert_true(s->nsegs * (SEGMENT_MAX / 4) <= (size_t)n + 2 * SEGMENT_MAX);
	snapshot_free(s);
	assert_views_equal_free(m, fresh);
}

/* What the adoption tests load: route i of table main (or of table tab) with gateway gw. */
static void load_gen(struct mirror *m, unsigned int i, unsigned int gw, uint32_t tab)
{
	gen_route(i, gw);
	s_pr.r.table = tab;
	assert_int_equal(mirror_load_route(m, &s_pr), 0);
}

/* The dump of the adoption tests, into d: keys of old with some gone, some new, some changed,
 * one deadline moved, one table gone and one new. kind 0: changes everywhere; 1: changes in one
 * key range only. */
static void adopt_dump(struct mirror *d, int kind)
{
	for (unsigned int i = 0; i < 6000; i++) {
		int in_old = i % 3 != 0, near = i >= 3000 && i < 3100;
		int gone = kind ? near && i % 2 : i % 7 == 0;
		int added = kind ? near && i % 3 == 0 : i % 11 == 0;
		unsigned int gw = (kind ? near : 1) && i % 13 == 0 ? 9 : 2;

		if ((in_old && !gone) || (!in_old && added)) {
			gen_route(i, gw);
			if (i == 1000)
				s_pr.r.expires_ms = NOW_MS + 500000;
			assert_int_equal(mirror_load_route(d, &s_pr), 0);
		}
	}
	for (unsigned int i = 0; i < 100; i++)
		load_gen(d, i, 2, 200);
}

/* m's routes before the adoption tests' dump: published, so its chunks are closed. */
static struct mirror *adopt_old(struct snapshot **s)
{
	struct mirror *m = new_mirror();

	for (unsigned int i = 0; i < 6000; i++)
		if (i % 3 != 0) {
			gen_route(i, 2);
			if (i == 1000)
				s_pr.r.expires_ms = NOW_MS + 100000;
			assert_int_equal(mirror_load_route(m, &s_pr), 0);
		}
	for (unsigned int i = 0; i < 300; i++)
		load_gen(m, i, 2, 100);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), s), 0);
	return m;
}

/* Adopt the adoption tests' dump into a mirror in steps of step routes, each published;
 * the result shows exactly what the dump shows. Returns the segments the last publication
 * built, and in *shared those it shares with the snapshot before the adoption. */
static size_t adopt_run(int kind, size_t step, size_t *shared)
{
	struct snapshot *before = NULL, *s = NULL, *f = NULL;
	struct mirror *m = adopt_old(&before), *d = new_mirror(), *fresh = new_mirror();
	struct mirror_adoption *a = NULL;
	struct mirror_delta delta = { 0 };
	uint32_t only_m = 1, only_d = 1;
	char *vm, *vf;
	size_t built, steps = 0;
	int ret;

	adopt_dump(d, kind);
	adopt_dump(fresh, kind);
	assert_int_equal(mirror_adopt_begin(m, d, NULL, &a), 0);
	while ((ret = mirror_adopt_step(a, step, &delta)) == 1) {
		/* a publication between steps, as the collector makes */
		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
		snapshot_free(s);
		s = NULL;
		steps++;
	}
	assert_int_equal(ret, 0);
	mirror_adopt_end(a);
	if (step < 1000)
		assert_true(steps > 3);
	assert_int_equal(mirror_diff(m, fresh, "adopt", 5, &only_m, &only_d), 0);
	assert_int_equal(only_m + only_d, 0);
	assert_int_equal(mirror_routes(m), mirror_routes(fresh));
	vm = views_of(m, &s);
	vf = views_of(fresh, &f);
	assert_string_equal(vm, vf); /* order, tables, the moved deadline */
	built = s->segs_built;
	*shared = 0;
	for (size_t k = 0; k < s->nsegs; k++)
		for (size_t j = 0; j < before->nsegs; j++)
			*shared += snapshot_seg(s, k, NULL) == snapshot_seg(before, j, NULL);
	free(vm);
	free(vf);
	snapshot_free(before);
	snapshot_free(s);
	snapshot_free(f);
	mirror_free(m);
	mirror_free(fresh);
	return built;
}

/* A dump that differs everywhere, adopted in small steps and in one. */
static void test_adopt_everywhere(void **state)
{
	size_t shared;

	(void)state;
	adopt_run(0, 500, &shared);
	adopt_run(0, 1000000, &shared);
}

/* A dump that differs in one key range: only the chunks of that range are built again, every
 * other segment of table main stays shared with the snapshot from before the resync. */
static void test_adopt_keeps_unchanged_chunks(void **state)
{
	size_t shared, built;

	(void)state;
	built = adopt_run(1, 1000000, &shared);
	/* 4 000 routes of main in 16 chunks: the range 3000-3100 touches two or three of them,
	 * the moved deadline one. Built besides: the new table's chunk, and the placeholder
	 * rows of both tables */
	assert_true(built <= 3 + 1 + 1 + 2);
	assert_true(shared >= 16 - 4);
}

/* A table the mirror holds little of takes the dump's chunks whole (the result is the same). */
static void test_adopt_mostly_new_table(void **state)
{
	struct mirror *m = new_mirror(), *d = new_mirror(), *fresh = new_mirror();
	struct mirror_adoption *a = NULL;
	struct mirror_delta delta = { 0 };
	struct snapshot *s = NULL;

	(void)state;
	for (unsigned int i = 0; i < 3000; i += 50)
		load_gen(m, i, 2, RT_TABLE_MAIN);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
	snapshot_free(s);
	for (unsigned int i = 0; i < 3000; i++) {
		load_gen(d, i, i % 5 ? 2 : 3, RT_TABLE_MAIN);
		load_gen(fresh, i, i % 5 ? 2 : 3, RT_TABLE_MAIN);
	}
	assert_int_equal(mirror_adopt_begin(m, d, NULL, &a), 0);
	assert_int_equal(mirror_adopt_step(a, 100, &delta), 0); /* whole, in one step */
	mirror_adopt_end(a);
	assert_int_equal(delta.added, 3000);
	assert_int_equal(delta.removed, 60);
	assert_views_equal_free(m, fresh);
}

/* The keys a test says were changed since a dump began (struct mirror_adopt_rules). */
struct test_touched {
	unsigned int ids[64];
	unsigned int n;
};

static int test_touched_has(void *arg, uint32_t table, const struct order_key *k)
{
	const struct test_touched *t = arg;
	struct order_key x;
	unsigned int i;

	if (!k)
		return table == RT_TABLE_MAIN;
	for (unsigned int j = 0; j < t->n; j++) {
		gen_route(t->ids[j], 2);
		order_key_of(&s_pr.r, &x);
		if (!order_key_cmp(&x, k))
			return 1;
	}
	/* gen_route(i): dst 2001:db8:i::/64 */
	i = k->a_hi >> 16 & 0xffff;
	return i < 2000 ? i % 10 == 3 : i % 2 == 0;
}

/* A dump taken while notifications kept coming, merged beside them: the keys changed since it
 * began keep the mirror's routes (also one changed between two steps, ahead of the merge and
 * behind it); the mirror's routes the dump lacks where it resumed after a datagram stay; every
 * other difference is the dump's, and counted. */
static void test_adopt_beside_notifications(void **state)
{
	struct mirror *m = new_mirror(), *d = new_mirror(), *fresh = new_mirror();
	struct test_touched tt = { { 0 }, 0 };
	struct mirror_adopt_rules rules = { .touched = test_touched_has,
					    .arg = &tt,
					    .untrusted = 1 };
	struct mirror_adoption *a = NULL;
	struct mirror_adopt_count n;
	struct mirror_delta delta = { 0 };
	struct snapshot *s = NULL;
	int ret, steps = 0;

	(void)state;
	for (unsigned int i = 0; i < 2000; i++)
		load_gen(m, i, 2, RT_TABLE_MAIN);
	assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s),
			 0); /* closed chunks, as at rest */
	snapshot_free(s);
	s = NULL;
	for (unsigned int i = 0; i < 2000; i++) {
		if (i % 10 == 1 || (i % 20 == 3))
			continue; /* gone (touched ones: the mirror's stay) */
		if (i % 100 == 2)
			mirror_load_gap(d); /* the dump resumed here: i - 1 may be skipped */
		load_gen(d, i, i % 10 == 3 || i % 10 == 5 ? 9 : 2, RT_TABLE_MAIN);
	}
	for (unsigned int j = 0; j < 40; j++)
		load_gen(d, 2000 + j, 2, RT_TABLE_MAIN);
	assert_int_equal(mirror_load_end(d, 1), 0);
	/* what the mirror must end with */
	for (unsigned int i = 0; i < 2040; i++) {
		if (i >= 2000 ? i % 2 == 0 : i % 10 == 1 && i % 100 != 1)
			continue;
		load_gen(fresh, i,
			 i == 10		   ? 8
			 : i == 1500		   ? 7
			 : i < 2000 && i % 10 == 5 ? 9
						   : 2,
			 RT_TABLE_MAIN);
	}
	assert_int_equal(mirror_adopt_begin(m, d, &rules, &a), 0);
	while ((ret = mirror_adopt_step(a, 300, &delta)) == 1) {
		if (++steps == 2) {
			/* notifications between steps: one behind the merge, one ahead */
			gen_route(10, 8);
			assert_int_equal(mirror_apply_new(m, &s_pr, NLM_F_REPLACE, &delta), 0);
			gen_route(1500, 7);
			assert_int_equal(mirror_apply_new(m, &s_pr, NLM_F_REPLACE, &delta), 0);
			tt.ids[tt.n++] = 10;
			tt.ids[tt.n++] = 1500;
		}
		assert_int_equal(builder_compose(test_builder(), m, test_chain(), &s), 0);
		snapshot_free(s);
		s = NULL;
	}
	assert_int_equal(ret, 0);
	assert_true(steps >= 4);
	mirror_adopt_counts(a, &n);
	mirror_adopt_end(a);
	assert_int_equal(n.kept_gap, 20);			  /* 1, 101, ..., 1901 */
	assert_int_equal(n.only_m, 200 - 20 + 200);		  /* gone; and 5, 15, ... before */
	assert_int_equal(n.only_k, 200 + 20);			  /* 5, 15, ... after; 2001, ... */
	assert_true(n.kept_touched >= 200 + 20);		  /* 3, 13, ...; 2000, 2002, ... */
	assert_int_equal(mirror_routes(m), mirror_routes(fresh)); /* and the same order: */
	assert_views_equal_free(m, fresh);
}

/* Gaps: a datagram boundary where the dump went on in another table covers the rest of the
 * one before and the start of the next; a dump that resumed before its last route (it repeats
 * routes) skipped nothing, and a route it lists again is loaded once. */
static void test_dump_gaps(void **state)
{
	struct mirror *m = new_mirror(), *d = new_mirror();
	struct test_touched tt = { { 0 }, 0 };
	struct mirror_adopt_rules rules = { .touched = test_touched_has,
					    .arg = &tt,
					    .untrusted = 1 };
	struct mirror_adoption *a = NULL;
	struct mirror_adopt_count n;
	struct mirror_delta delta = { 0 };
	int ret;

	(void)state;
	/* m: 100-199 in tables 100 and main; d: 100-149 of 100, then (a new datagram) 160-199 of
	 * main, with 150 of main again (repeated: before its last route) after a boundary */
	for (unsigned int i = 100; i < 200; i++) {
		load_gen(m, i, 2, 100);
		load_gen(m, i, 2, RT_TABLE_MAIN);
	}
	for (unsigned int i = 100; i < 150; i++)
		load_gen(d, i, 2, 100);
	mirror_load_gap(d);
	for (unsigned int i = 160; i < 200; i++)
		load_gen(d, i, 2, RT_TABLE_MAIN);
	mirror_load_gap(d);
	load_gen(d, 199, 2, RT_TABLE_MAIN); /* the last node again: the same route, once */
	mirror_load_gap(d);
	load_gen(d, 150, 2, RT_TABLE_MAIN);
	assert_int_equal(mirror_load_end(d, 1), 0);
	assert_int_equal(mirror_routes(d), 50 + 40 + 1);
	rules.touched = NULL;
	assert_int_equal(mirror_adopt_begin(m, d, &rules, &a), 0);
	while ((ret = mirror_adopt_step(a, 1000, &delta)) == 1)
		;
	assert_int_equal(ret, 0);
	mirror_adopt_counts(a, &n);
	mirror_adopt_end(a);
	/* kept: 150-199 of table 100 (after its last route), 100-159 of main but 150 (before
	 * its first, which the repeat does not move); the last route's gap runs to the end */
	assert_int_equal(n.kept_gap, 50 + 59);
	assert_int_equal(n.only_m, 0);
	assert_int_equal(mirror_routes(m), 200);
	mirror_free(m);
}

static const struct stream s_streams[] = {
	{ "notify-ecmp", NULL, NULL },	    { "notify-nexthops", NULL, NULL },
	{ "notify-links", NULL, NULL },	    { "notify-misc", NULL, NULL },
	{ "notify-edge", NULL, NULL },	    { "notify-nhid-replace", NULL, NULL },
	{ "notify-proto-ra", NULL, NULL },  { "notify-encap", NULL, NULL },
	{ "notify-compat0", NULL, NULL },   { "notify-ra", NULL, NULL },
	{ "notify-ra-rtinfo", NULL, NULL },
};

/* Every check of s_streams[i], named after it in the TAP output. */
#define STREAM_TESTS(i, name)                                                                   \
	{ name ": the final dump gives the kernel's proc text", test_final_dump_is_kernel_proc, \
	  NULL, NULL, (void *)&s_streams[i] },                                                  \
	    { name ": replay: proc text is the kernel's", test_replay_proc, NULL, NULL,         \
	      (void *)&s_streams[i] },                                                          \
	    { name ": replay: JSON is ip -j's", test_replay_json, NULL, NULL,                   \
	      (void *)&s_streams[i] },                                                          \
	{                                                                                       \
		name ": replay: no route differs from the final dump",                          \
		    test_replay_equals_final_dump, NULL, NULL, (void *)&s_streams[i]            \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_instances),
		cmocka_unit_test(test_append_puts_new_hop_last),
		cmocka_unit_test(test_replace_takes_first_of_same_kind),
		cmocka_unit_test(test_one_hop_delete_of_two),
		cmocka_unit_test(test_siblings_keep_their_own),
		cmocka_unit_test(test_publication_shares_segments),
		cmocka_unit_test(test_held_segments_wait_for_snapshots),
		cmocka_unit_test(test_dump_repeat_is_one_route),
		cmocka_unit_test(test_churn_splits_and_shrinks),
		cmocka_unit_test(test_adopt_everywhere),
		cmocka_unit_test(test_adopt_keeps_unchanged_chunks),
		cmocka_unit_test(test_adopt_mostly_new_table),
		cmocka_unit_test(test_adopt_beside_notifications),
		cmocka_unit_test(test_dump_gaps),
		STREAM_TESTS(0, "notify-ecmp"),
		STREAM_TESTS(1, "notify-nexthops"),
		STREAM_TESTS(2, "notify-links"),
		STREAM_TESTS(3, "notify-misc"),
		STREAM_TESTS(4, "notify-edge"),
		STREAM_TESTS(5, "notify-nhid-replace"),
		STREAM_TESTS(6, "notify-proto-ra"),
		STREAM_TESTS(7, "notify-encap"),
		STREAM_TESTS(8, "notify-compat0"),
		STREAM_TESTS(9, "notify-ra"),
		STREAM_TESTS(10, "notify-ra-rtinfo"),
	};

	log_set_level(LOG_LVL_WARN);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
