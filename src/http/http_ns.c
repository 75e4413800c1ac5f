// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_ns.c - the registry of the named namespaces served beside the daemon's own (--netns):
 * found by name at /netns/NAME/..., listed at /netns and in /metrics.
 *
 * Threads and ownership:
 *   - The main thread alone adds and removes. The registry is an immutable array of pointers
 *     sorted by name, published with rcu_xchg_pointer(): a change builds a new array, publishes
 *     it, waits a grace period and frees the old one (main only, so writers never race).
 *   - Readers (HTTP workers, the fan-out thread) look a name up inside an RCU read-side
 *     critical section (bsearch) and take a reference only if the count is not zero yet
 *     (compare-and-swap): a namespace whose last reference is being dropped is never revived.
 *   - A namespace holds one reference for its maker (main), one while it is in the registry,
 *     one per request that found it (until its handler returns) and one per /events stream.
 *     The last put frees what it took over: its chains (snapshot_chain_free(), which waits a
 *     grace period: that put must not hold an RCU read lock), histories and counters. main
 *     stops the collectors before its own put, so when a worker's put is the last nothing
 *     writes them any more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "rtsnap/events.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/netns.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/stats.h"
#include "rtsnap/utf8.h"

struct http_ns {
	long refs;		   /* atomic */
	struct http_ns *next_dead; /* on the list of namespaces to free (s_dead) */
	int gone;		   /* atomic: removed from the registry */
	struct http_ns_view v;
	struct http_instance inst[2];
	unsigned int ninst;
	char name[];
};

/* The registry: immutable once published. */
struct ns_table {
	size_t n;
	struct http_ns *ns[];
};

/*
 * As snapshot.c: TSan cannot see liburcu's barriers, C11 atomics of the same meaning then. Nor
 * can it see the grace period: every reader's unlock is told to it as a release, and the
 * writer's return from synchronize_rcu() as the acquire of them all, which is what the grace
 * period guarantees (the old array and a removed namespace are freed after it).
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
static char s_grace; /* TSan's name for the grace period */
#define table_xchg(v) __atomic_exchange_n(&s_table, (v), __ATOMIC_ACQ_REL)
#define table_load() __atomic_load_n(&s_table, __ATOMIC_ACQUIRE)
#define read_unlock() (__tsan_release(&s_grace), urcu_bp_read_unlock())
#define synchronize() (urcu_bp_synchronize_rcu(), __tsan_acquire(&s_grace))
#else
#define table_xchg(v) rcu_xchg_pointer(&s_table, (v))
#define table_load() rcu_dereference(s_table)
#define read_unlock() urcu_bp_read_unlock()
#define synchronize() urcu_bp_synchronize_rcu()
#endif

static struct ns_table *s_table; /* NULL: none served */
static void (*s_notify)(void);	 /* the fan-out's wake-up (main thread) */
static unsigned int s_metrics_limit = HTTP_NS_METRICS_LIMIT; /* set before the workers start */

static void ns_free(struct http_ns *ns)
{
	for (unsigned int i = 0; i < ns->ninst; i++) {
		snapshot_chain_free(ns->inst[i].chain);
		events_free(ns->inst[i].history);
		free(ns->inst[i].stats);
	}
	free(ns);
}

int http_ns_new(const char *name, const struct http_instance *inst, unsigned int n,
		struct http_ns **out)
{
	size_t len = name ? strlen(name) : 0;
	struct http_ns *ns;

	if (!name || !netns_name_valid(name) || !n || n > 2 ||
	    (n == 2 && inst[0].family == inst[1].family)) {
		for (unsigned int i = 0; i < n && i < 2; i++) {
			snapshot_chain_free(inst[i].chain);
			events_free(inst[i].history);
			free(inst[i].stats);
		}
		return -EINVAL;
	}
	ns = calloc(1, sizeof(*ns) + 2 * (len + 1));
	if (!ns) {
		for (unsigned int i = 0; i < n; i++) {
			snapshot_chain_free(inst[i].chain);
			events_free(inst[i].history);
			free(inst[i].stats);
		}
		return -ENOMEM;
	}
	memcpy(ns->name, name, len + 1);
	ns->refs = 1;
	ns->ninst = n;
	ns->v.name = ns->name;
	ns->v.text = ns->name + len + 1;
	for (size_t i = 0; i < len;) { /* JSON wants UTF-8: any other byte becomes '?' */
		size_t k = utf8_len((const unsigned char *)name + i);

		if (k) {
			memcpy(ns->name + len + 1 + i, name + i, k);
			i += k;
		} else {
			ns->name[len + 1 + i++] = '?';
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		ns->inst[i] = inst[i];
		if (inst[i].family == AF_INET) {
			ns->v.chain4 = inst[i].chain;
			ns->v.stats4 = inst[i].stats;
			ns->v.hist4 = inst[i].history;
		} else {
			ns->v.chain = inst[i].chain;
			ns->v.stats = inst[i].stats;
			ns->v.hist = inst[i].history;
		}
	}
	/* as http_start(): without IPv6 the IPv4 instance serves every path */
	ns->v.no_inet6 = !ns->v.chain;
	if (ns->v.no_inet6) {
		ns->v.chain = ns->v.chain4;
		ns->v.stats = ns->v.stats4;
	}
	*out = ns;
	return 0;
}

static void ns_get(struct http_ns *ns)
{
	__atomic_add_fetch(&ns->refs, 1, __ATOMIC_RELAXED);
}

/* Inside a read-side critical section: a reference unless the last one is being dropped. */
static int ns_tryget(struct http_ns *ns)
{
	long r = __atomic_load_n(&ns->refs, __ATOMIC_RELAXED);

	while (r > 0)
		if (__atomic_compare_exchange_n(&ns->refs, &r, r + 1, 1, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 1;
	return 0;
}

/*
 * The last reference may be a worker's or the fan-out thread's (a request or stream that
 * outlived the namespace's removal), which must not wait for a grace period (freeing a chain
 * does): the namespace goes on a list main frees from (http_ns_reap()), woken by s_reap_fd.
 */
static pthread_mutex_t s_dead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_ns *s_dead; /* under s_dead_lock */
static int s_reap_fd = -1;     /* made by main (http_ns_reap_fd()) before any namespace */

void http_ns_put(struct http_ns *ns)
{
	uint64_t one = 1;

	if (!ns || __atomic_sub_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&s_dead_lock);
	ns->next_dead = s_dead;
	s_dead = ns;
	pthread_mutex_unlock(&s_dead_lock);
	if (s_reap_fd >= 0 && write(s_reap_fd, &one, sizeof(one)) < 0) {
		/* eventfd full: a wake-up is pending anyway */
	}
}

int http_ns_reap_fd(void)
{
	if (s_reap_fd < 0)
		s_reap_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return s_reap_fd;
}

void http_ns_reap(void)
{
	struct http_ns *dead;
	uint64_t v;

	if (s_reap_fd >= 0 && read(s_reap_fd, &v, sizeof(v)) < 0) {
		/* nothing pending: EAGAIN */
	}
	pthread_mutex_lock(&s_dead_lock);
	dead = s_dead;
	s_dead = NULL;
	pthread_mutex_unlock(&s_dead_lock);
	while (dead) {
		struct http_ns *next = dead->next_dead;

		ns_free(dead);
		dead = next;
	}
}

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, (*(struct http_ns *const *)elem)->name);
}

/* Main thread: publish t (NULL: empty) and free the previous array after a grace period. */
static void table_publish(struct ns_table *t)
{
	struct ns_table *old = table_xchg(t);

	synchronize();
	free(old);
}

static void set_notify(struct http_ns *ns, void (*fn)(void))
{
	for (unsigned int i = 0; i < ns->ninst; i++)
		if (ns->inst[i].history)
			events_set_notify(ns->inst[i].history, fn);
}

int http_ns_add(struct http_ns *ns)
{
	struct ns_table *cur = s_table, *t; /* main alone writes it */
	size_t n = cur ? cur->n : 0, at = 0;

	while (at < n && strcmp(cur->ns[at]->name, ns->name) < 0)
		at++;
	if (at < n && !strcmp(cur->ns[at]->name, ns->name))
		return -EEXIST;
	t = malloc(sizeof(*t) + (n + 1) * sizeof(t->ns[0]));
	if (!t)
		return -ENOMEM;
	t->n = n + 1;
	if (at)
		memcpy(t->ns, cur->ns, at * sizeof(t->ns[0]));
	t->ns[at] = ns;
	if (n > at)
		memcpy(t->ns + at + 1, cur->ns + at, (n - at) * sizeof(t->ns[0]));
	ns_get(ns); /* the registry's */
	__atomic_store_n(&ns->gone, 0, __ATOMIC_RELAXED);
	set_notify(ns, s_notify);
	table_publish(t);
	return 0;
}

void http_ns_remove(struct http_ns *ns)
{
	struct ns_table *cur = s_table, *t = NULL;
	size_t n = cur ? cur->n : 0, at;

	for (at = 0; at < n && cur->ns[at] != ns; at++)
		;
	if (at == n)
		return;
	if (n > 1) {
		t = malloc(sizeof(*t) + (n - 1) * sizeof(t->ns[0]));
		if (!t) {
			/* keep the array and its reference (it still points at ns), mark the
			 * entry gone: lookups and lists skip it, its streams end */
			__atomic_store_n(&ns->gone, 1, __ATOMIC_RELEASE);
			set_notify(ns, NULL);
			if (s_notify)
				s_notify();
			return;
		}
		t->n = n - 1;
		memcpy(t->ns, cur->ns, at * sizeof(t->ns[0]));
		memcpy(t->ns + at, cur->ns + at + 1, (n - at - 1) * sizeof(t->ns[0]));
	}
	__atomic_store_n(&ns->gone, 1, __ATOMIC_RELEASE);
	set_notify(ns, NULL);
	table_publish(t);
	if (s_notify)
		s_notify(); /* its streams end at the fan-out's next sweep */
	http_ns_put(ns);
}

void http_ns_set_notify(void (*fn)(void))
{
	struct ns_table *t = s_table;

	s_notify = fn;
	for (size_t i = 0; t && i < t->n; i++)
		set_notify(t->ns[i], fn);
}

struct http_ns *http_ns_get(const char *name)
{
	struct http_ns *ns = NULL, **p;
	struct ns_table *t;

	urcu_bp_read_lock();
	t = table_load();
	p = t ? bsearch(name, t->ns, t->n, sizeof(t->ns[0]), cmp_name) : NULL;
	if (p && !__atomic_load_n(&(*p)->gone, __ATOMIC_ACQUIRE) && ns_tryget(*p))
		ns = *p;
	read_unlock();
	return ns;
}

int http_ns_list(struct http_ns ***out, size_t *count)
{
	struct http_ns **v;
	struct ns_table *t;
	size_t n = 0, cap;

	*out = NULL;
	*count = 0;
	for (;;) {
		urcu_bp_read_lock();
		t = table_load();
		cap = t ? t->n : 0;
		read_unlock();
		if (!cap)
			return 0;
		v = malloc(cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		urcu_bp_read_lock();
		t = table_load();
		if (!t || t->n <= cap)
			break;
		read_unlock(); /* grew meanwhile: again with room for it */
		free(v);
	}
	for (size_t i = 0; t && i < t->n; i++)
		if (!__atomic_load_n(&t->ns[i]->gone, __ATOMIC_ACQUIRE) && ns_tryget(t->ns[i]))
			v[n++] = t->ns[i];
	read_unlock();
	if (!n) {
		free(v);
		v = NULL;
	}
	*out = v;
	*count = n;
	return 0;
}

void http_ns_list_free(struct http_ns **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		http_ns_put(v[i]);
	free(v);
}

size_t http_ns_count(void)
{
	struct ns_table *t;
	size_t n;

	urcu_bp_read_lock();
	t = table_load();
	n = t ? t->n : 0;
	read_unlock();
	return n;
}

void http_ns_set_metrics_limit(unsigned int n)
{
	s_metrics_limit = n;
}

unsigned int http_ns_metrics_limit(void)
{
	return s_metrics_limit;
}

void http_ns_hold(struct http_ns *ns)
{
	ns_get(ns);
}

int http_ns_gone(const struct http_ns *ns)
{
	return __atomic_load_n(&ns->gone, __ATOMIC_ACQUIRE);
}

const struct http_ns_view *http_ns_view(const struct http_ns *ns)
{
	return &ns->v;
}
