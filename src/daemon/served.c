// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * served.c - the named namespaces served beside the daemon's own (served.h).
 *
 * A list of entries, one per name served or waiting to be: an entry holds the namespace's
 * http_ns (its chains, histories and counters) and its collectors once started, or the time
 * of its next try while its name is not a namespace yet. Looked up by name linearly: names
 * come and go one at a time, and thousands of them cost microseconds per event.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rtsnap/collector.h"
#include "rtsnap/events.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/log.h"
#include "rtsnap/netns.h"
#include "rtsnap/once.h"
#include "rtsnap/served.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"

#define RETRY_MIN_MS 10	  /* `ip netns add` mounts the name right after creating it */
#define RETRY_MAX_MS 5000 /* a name that never becomes a namespace: tried this often */

struct served_ns {
	char *name;
	struct http_ns *ns; /* NULL: not started (waiting for its next try) */
	struct collector *coll[2];
	int64_t retry_at_ms; /* not started: the next try */
	int64_t retry_ms;    /* not started: the wait after that one */
	int warned;	     /* not started: its failure was logged */
};

static unsigned int s_families;
static struct collector_opts s_co;
static struct events_opts s_eo;
static struct served_ns **s_list;
static size_t s_n, s_cap;
static struct netns_watch *s_watch; /* --netns all */

void served_init(unsigned int families, const struct collector_opts *co,
		 const struct events_opts *eo)
{
	s_families = families;
	s_co = *co;
	s_eo = *eo;
	if (http_ns_reap_fd() < 0)
		log_warn("no eventfd: a deleted namespace's memory is freed at the next change");
}

/* Stop serving sn, stop its collectors, drop main's reference (http_ns.h's order). */
static void stop(struct served_ns *sn)
{
	http_ns_remove(sn->ns);
	for (unsigned int i = 0; i < 2; i++)
		collector_stop(sn->coll[i]);
	http_ns_put(sn->ns);
	http_ns_reap(); /* now, unless a request or stream still reads it */
	sn->ns = NULL;
	sn->coll[0] = sn->coll[1] = NULL;
}

/* Start sn's instances and serve it. 0 or a negative errno (then nothing of it is left). */
static int start(struct served_ns *sn)
{
	struct http_instance inst[2] = { { 0 }, { 0 } };
	unsigned int n = 0;
	int ret = 0;

	for (unsigned int f = 0; f < 2 && !ret; f++) {
		int af = f == 0 ? AF_INET6 : AF_INET;

		if (!(s_families & (af == AF_INET6 ? ONCE_INET6 : ONCE_INET)))
			continue;
		inst[n].family = af;
		inst[n].stats = calloc(1, sizeof(*inst[n].stats));
		ret = inst[n].stats ? snapshot_chain_new(&inst[n].chain) : -ENOMEM;
		if (!ret)
			ret = events_new(&s_eo, &inst[n].history);
		n++;
	}
	if (ret) {
		for (unsigned int i = 0; i < n; i++) {
			snapshot_chain_free(inst[i].chain);
			events_free(inst[i].history);
			free(inst[i].stats);
		}
		return ret;
	}
	ret = http_ns_new(sn->name, inst, n, &sn->ns); /* takes them over, on failure too */
	for (unsigned int i = 0; i < n && !ret; i++) {
		struct collector_opts co = s_co;

		co.family = inst[i].family;
		co.netns = sn->name;
		co.chain = inst[i].chain;
		co.history = inst[i].history;
		co.stats = inst[i].stats;
		ret = collector_start(&co, &sn->coll[i]);
	}
	if (!ret)
		ret = http_ns_add(sn->ns);
	if (ret)
		stop(sn);
	return ret;
}

static long find(const char *name)
{
	for (size_t i = 0; i < s_n; i++)
		if (!strcmp(s_list[i]->name, name))
			return (long)i;
	return -1;
}

static void drop(size_t i)
{
	struct served_ns *sn = s_list[i];

	if (sn->ns)
		stop(sn);
	free(sn->name);
	free(sn);
	memmove(&s_list[i], &s_list[i + 1], (s_n - i - 1) * sizeof(*s_list));
	s_n--;
}

/* A new entry for name, not started. NULL when out of memory. */
static struct served_ns *entry_new(const char *name)
{
	struct served_ns *sn;

	if (s_n == s_cap) {
		size_t cap = s_cap ? s_cap * 2 : 16;
		struct served_ns **v = realloc(s_list, cap * sizeof(*v));

		if (!v)
			return NULL;
		s_list = v;
		s_cap = cap;
	}
	sn = calloc(1, sizeof(*sn));
	if (!sn || !(sn->name = strdup(name))) {
		free(sn);
		return NULL;
	}
	sn->retry_ms = RETRY_MIN_MS;
	s_list[s_n++] = sn;
	return sn;
}

int served_add(const char *name)
{
	struct served_ns *sn;
	int ret;

	if (find(name) >= 0)
		return -EEXIST;
	sn = entry_new(name);
	if (!sn)
		return -ENOMEM;
	ret = start(sn);
	if (ret)
		drop(s_n - 1);
	return ret;
}

/* Try to start sn (a followed name): on failure, again later, less often each time. */
static void try_start(struct served_ns *sn)
{
	int64_t now = snapshot_now_ms();
	int ret = start(sn);

	if (!ret) {
		log_info("netns %s: served at /netns/%s/", sn->name, sn->name);
		return;
	}
	/* -EINVAL: created, not mounted yet (or a stray file); -ENOENT: gone meanwhile */
	if (!sn->warned && ret != -EINVAL && ret != -ENOENT) {
		log_warn("netns %s: cannot follow it: %s; trying again", sn->name, strerror(-ret));
		sn->warned = 1;
	} else if (!sn->warned && sn->retry_ms >= RETRY_MAX_MS) {
		log_warn("netns %s: not a namespace yet; trying again every %d s", sn->name,
			 RETRY_MAX_MS / 1000);
		sn->warned = 1;
	}
	sn->retry_at_ms = now + sn->retry_ms;
	sn->retry_ms = sn->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : sn->retry_ms * 2;
}

/* The watch's report: name appeared or went in /run/netns. */
static void on_name(void *arg, const char *name, int added)
{
	long i = find(name);

	(void)arg;
	if (!added) {
		if (i >= 0) {
			log_info("netns %s: deleted; no longer served", name);
			drop((size_t)i);
		}
		return;
	}
	if (i >= 0)
		return; /* reported again (an overflow): it stays as it is */
	{
		struct served_ns *sn = entry_new(name);

		if (!sn) {
			log_warn("netns %s: out of memory; not served", name);
			return;
		}
		try_start(sn);
	}
}

int served_follow_all(void)
{
	return netns_watch_new(NULL, on_name, NULL, &s_watch);
}

int served_fds(struct pollfd pfd[2])
{
	pfd[0] = (struct pollfd){ .fd = s_watch ? netns_watch_fd(s_watch) : -1, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = http_ns_reap_fd(), .events = POLLIN };
	return 2;
}

int served_timeout_ms(void)
{
	int64_t now = snapshot_now_ms(), first = INT64_MAX;

	for (size_t i = 0; i < s_n; i++)
		if (!s_list[i]->ns && s_list[i]->retry_at_ms < first)
			first = s_list[i]->retry_at_ms;
	if (first == INT64_MAX)
		return -1;
	return first <= now ? 0 : (int)(first - now);
}

void served_poll(void)
{
	int64_t now = snapshot_now_ms();

	http_ns_reap(); /* the last reference of a namespace deleted was a request's */
	if (s_watch) {
		int ret = netns_watch_read(s_watch);

		if (ret && ret != -EAGAIN)
			log_warn("following %s: %s", NETNS_DIR, strerror(-ret));
	}
	for (size_t i = 0; i < s_n; i++)
		if (!s_list[i]->ns && s_list[i]->retry_at_ms <= now)
			try_start(s_list[i]);
}

void served_resync(void)
{
	for (size_t i = 0; i < s_n; i++)
		for (unsigned int k = 0; k < 2; k++)
			collector_request_resync(s_list[i]->coll[k]);
}

void served_stop_all(void)
{
	netns_watch_free(s_watch);
	s_watch = NULL;
	while (s_n)
		drop(s_n - 1);
	http_ns_reap();
	free(s_list);
	s_list = NULL;
	s_cap = 0;
}
