// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * auth.c - basic auth credentials checked with libcrypt's bcrypt, off the HTTP workers (see
 * auth.h for the contract).
 *
 * Why: bcrypt at cost 12 takes 0.27 s here. Checked on the worker threads, 50 clients sending
 * wrong passwords over TLS kept both workers hashing: a scrape with the right password took
 * 7.5-12.3 s, most got nothing within 20 s. Now a worker never hashes:
 *   - verified credentials are remembered (keyed digest HMAC-SHA-256(user NUL password) with a
 *     per-process random key, beside a digest of the user's hash, so a reload that keeps the
 *     hash keeps the entry): a scraper pays for bcrypt once, then never waits again;
 *   - refused credentials are remembered too (for BAD_TTL_MS), so a flood repeating a wrong
 *     password costs one hash; an unknown user is hashed against a dummy setting of the same
 *     cost, so the answer time does not tell which names exist;
 *   - what neither cache knows becomes a check queued to this file's thread; the same
 *     credentials asked again meanwhile wait for the same check (coalesced); the caller gets a
 *     ticket and suspends its connection until done() is called;
 *   - each client address (all unix clients count as one) has a bucket
 *     of FAIL_BURST failures refilled one per FAIL_REFILL_MS: a hash that fails takes one, and
 *     an address with none left is refused (AUTH_LIMITED, 429) before anything is hashed, as a
 *     reverse proxy's rate limit would; an address that failed recently is "suspect": its
 *     checks wait in a second queue that runs only when the first is empty, and it may have
 *     one check queued at a time. A client that never failed (the scraper) waits at most for
 *     the hash in progress;
 *   - at most ADDR_QUEUED_MAX checks wait per clean address (beyond: AUTH_LIMITED), and
 *     QUEUE_MAX in all (beyond: AUTH_BUSY, 503).
 *
 * Threads: any HTTP worker calls auth_check(); one thread hashes. Everything shared is under
 * s_lock, held for table lookups and list moves only (never across a hash or a callback).
 * A ticket belongs to this file from auth_check() until its done() is called, then to the
 * caller. Hashes and digests are compared in constant time; passwords are wiped when freed.
 */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <netinet/in.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "rtsnap/auth.h"
#include "rtsnap/log.h"

#define DG_LEN 32
#define OK_SETS 64     /* verified credentials: OK_SETS x WAYS */
#define BAD_SETS 1024  /* refused credentials */
#define ADDR_SETS 1024 /* client addresses */
#define WAYS 4
#define BAD_TTL_MS (10 * 60 * 1000)
#define FAIL_BURST 5
#define FAIL_REFILL_MS 10000
#define QUEUE_MAX 256
#define ADDR_QUEUED_MAX 8
#define ADDR_KEY_LEN 17 /* family, then up to 16 bytes of address */

struct cred_entry {
	unsigned char dg[DG_LEN], fp[DG_LEN];
	int64_t ms; /* last used (verified), or when refused */
	int valid;
};

struct addr_entry {
	unsigned char key[ADDR_KEY_LEN];
	int valid;
	unsigned int queued; /* checks queued or running */
	double tokens;
	int64_t ms; /* when tokens was last brought up to date */
};

struct check {
	struct check *next; /* in its queue */
	unsigned char dg[DG_LEN], fp[DG_LEN];
	char *password, *setting;
	int known; /* setting is the user's hash (else the dummy: always refused) */
	struct addr_entry *addr;
	struct auth_ticket *tickets;
};

struct auth_ticket {
	struct auth_ticket *next; /* in its check, while pending */
	void (*done)(void *cls);
	void *cls;
	const void *tag;
	int result;
	int64_t start_ms;
};

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t s_key_once = PTHREAD_ONCE_INIT;
static unsigned char s_key[32];
static struct cred_entry s_ok[OK_SETS][WAYS], s_bad[BAD_SETS][WAYS];
static struct addr_entry s_addr[ADDR_SETS][WAYS];
static struct check *s_queue[2], **s_tail[2] = { &s_queue[0], &s_queue[1] }; /* clean, suspect */
static struct check *s_running;
static unsigned int s_nqueued;
static int s_stop, s_started;
static pthread_t s_thread;
static struct auth_stats s_st; /* under s_lock */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void key_init(void)
{
	size_t n = 0;

	while (n < sizeof(s_key)) {
		ssize_t r = getrandom(s_key + n, sizeof(s_key) - n, 0);

		if (r > 0)
			n += (size_t)r;
	}
}

/* Equal strings, in time that depends only on the lengths. */
static int ct_streq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i < lb ? i : 0]);
	return !d;
}

/* HMAC-SHA-256(key, a NUL b); 0 or -1. */
static int digest2(const char *a, const char *b, unsigned char out[DG_LEN])
{
	size_t la = strlen(a), lb = strlen(b);
	char *m = malloc(la + 1 + lb);
	int ret;

	if (!m)
		return -1;
	memcpy(m, a, la + 1);
	memcpy(m + la + 1, b, lb);
	ret = gnutls_hmac_fast(GNUTLS_MAC_SHA256, s_key, sizeof(s_key), m, la + 1 + lb, out);
	explicit_bzero(m, la + 1 + lb);
	free(m);
	return ret < 0 ? -1 : 0;
}

/* ---- the caches (s_lock held) ---- */

static struct cred_entry *cred_find(struct cred_entry set[WAYS], const unsigned char *dg,
				    const unsigned char *fp)
{
	for (int w = 0; w < WAYS; w++)
		if (set[w].valid && gnutls_memcmp(set[w].dg, dg, DG_LEN) == 0 &&
		    gnutls_memcmp(set[w].fp, fp, DG_LEN) == 0)
			return &set[w];
	return NULL;
}

static void cred_put(struct cred_entry set[WAYS], const unsigned char *dg, const unsigned char *fp,
		     int64_t now)
{
	struct cred_entry *e = cred_find(set, dg, fp);

	if (!e) { /* a free way, else the least recently used */
		e = &set[0];
		for (int w = 1; w < WAYS && e->valid; w++)
			if (!set[w].valid || set[w].ms < e->ms)
				e = &set[w];
	}
	memcpy(e->dg, dg, DG_LEN);
	memcpy(e->fp, fp, DG_LEN);
	e->ms = now;
	e->valid = 1;
}

static unsigned int set_of(const unsigned char *dg, unsigned int nsets)
{
	return ((unsigned int)dg[0] | (unsigned int)dg[1] << 8 | (unsigned int)dg[2] << 16) % nsets;
}

/* The address key of addr: family, then the address (an IPv4-mapped one as IPv4). The whole
 * address, not its /64: a scraper and a flooding host may share a LAN's prefix. */
static void addr_key(const struct sockaddr *addr, socklen_t alen, unsigned char key[ADDR_KEY_LEN])
{
	memset(key, 0, ADDR_KEY_LEN);
	if (addr && addr->sa_family == AF_INET6 && alen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;

		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
			key[0] = AF_INET;
			memcpy(key + 1, a->sin6_addr.s6_addr + 12, 4);
		} else {
			key[0] = AF_INET6;
			memcpy(key + 1, a->sin6_addr.s6_addr, 16);
		}
	} else if (addr && addr->sa_family == AF_INET && alen >= sizeof(struct sockaddr_in)) {
		key[0] = AF_INET;
		memcpy(key + 1, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else {
		key[0] = addr ? (unsigned char)addr->sa_family : 0;
	}
}

/* The entry of key, brought up to date (made if needed); NULL when its set is all busy. */
static struct addr_entry *addr_get(const unsigned char key[ADDR_KEY_LEN], int64_t now)
{
	unsigned char dg[DG_LEN];
	struct addr_entry *set, *e = NULL, *old = NULL;

	/* a keyed hash, so that nobody picks addresses that share a set */
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, s_key, sizeof(s_key), key, ADDR_KEY_LEN, dg) < 0)
		memset(dg, 0, sizeof(dg));
	set = s_addr[set_of(dg, ADDR_SETS)];
	for (int w = 0; w < WAYS && !e; w++)
		if (set[w].valid && memcmp(set[w].key, key, ADDR_KEY_LEN) == 0)
			e = &set[w];
	if (!e) { /* a free way, else the least recently seen that has no check queued */
		for (int w = 0; w < WAYS && !old; w++)
			if (!set[w].valid)
				old = &set[w];
		for (int w = 0; w < WAYS && (!old || old->valid); w++)
			if (!set[w].queued && (!old || set[w].ms < old->ms))
				old = &set[w];
		if (!old)
			return NULL;
		e = old;
		memcpy(e->key, key, ADDR_KEY_LEN);
		e->valid = 1;
		e->queued = 0;
		e->tokens = FAIL_BURST;
		e->ms = now;
	}
	e->tokens += (double)(now - e->ms) / FAIL_REFILL_MS;
	if (e->tokens > FAIL_BURST)
		e->tokens = FAIL_BURST;
	e->ms = now;
	return e;
}

/* ---- checks ---- */

static void check_free(struct check *c)
{
	if (!c)
		return;
	if (c->password) {
		explicit_bzero(c->password, strlen(c->password));
		free(c->password);
	}
	free(c->setting);
	free(c);
}

/* s_lock held: a queued or running check of the same credentials, or NULL. */
static struct check *check_find(const unsigned char *dg, const unsigned char *fp)
{
	if (s_running && memcmp(s_running->dg, dg, DG_LEN) == 0 &&
	    memcmp(s_running->fp, fp, DG_LEN) == 0)
		return s_running;
	for (int q = 0; q < 2; q++)
		for (struct check *c = s_queue[q]; c; c = c->next)
			if (memcmp(c->dg, dg, DG_LEN) == 0 && memcmp(c->fp, fp, DG_LEN) == 0)
				return c;
	return NULL;
}

/* Answer tickets (a list no longer reachable from any check) with result. */
static void answer(struct auth_ticket *t, int result)
{
	int64_t now = now_ms();

	while (t) {
		struct auth_ticket *next = t->next; /* t is the caller's once done() runs */

		t->result = result;
		t->next = NULL;
		pthread_mutex_lock(&s_lock);
		s_st.waited++;
		s_st.waited_ms_sum += (unsigned long long)(now - t->start_ms);
		pthread_mutex_unlock(&s_lock);
		t->done(t->cls);
		t = next;
	}
}

static void *auth_main(void *arg)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd)); /* 32 KiB: not on the stack */

	(void)arg;
	pthread_mutex_lock(&s_lock);
	while (!s_stop) {
		struct check *c = s_queue[0] ? s_queue[0] : s_queue[1];
		int q = s_queue[0] ? 0 : 1, ok = 0;
		struct auth_ticket *t;
		const char *res;

		if (!c) {
			pthread_cond_wait(&s_cond, &s_lock);
			continue;
		}
		s_queue[q] = c->next;
		if (!s_queue[q])
			s_tail[q] = &s_queue[q];
		s_nqueued--;
		s_running = c;
		pthread_mutex_unlock(&s_lock);

		res = cd ? crypt_rn(c->password, c->setting, cd, (int)sizeof(*cd)) : NULL;
		if (res && c->known && res[0] != '*')
			ok = strlen(res) == strlen(c->setting) &&
			     gnutls_memcmp(res, c->setting, strlen(c->setting)) == 0;
		if (cd)
			explicit_bzero(cd, sizeof(*cd));

		pthread_mutex_lock(&s_lock);
		s_st.bcrypt_runs++;
		if (res || !cd) {
			int64_t now = now_ms();

			if (ok) {
				cred_put(s_ok[set_of(c->dg, OK_SETS)], c->dg, c->fp, now);
			} else {
				cred_put(s_bad[set_of(c->dg, BAD_SETS)], c->dg, c->fp, now);
				if (c->addr && c->addr->tokens >= 1)
					c->addr->tokens -= 1;
			}
		}
		if (c->addr)
			c->addr->queued--;
		t = c->tickets;
		c->tickets = NULL;
		s_running = NULL;
		pthread_mutex_unlock(&s_lock);
		answer(t, ok ? AUTH_OK : AUTH_BAD);
		check_free(c);
		pthread_mutex_lock(&s_lock);
	}
	pthread_mutex_unlock(&s_lock);
	free(cd);
	return NULL;
}

int auth_start(void)
{
	int ret;

	pthread_once(&s_key_once, key_init);
	if (s_started)
		return 0;
	s_stop = 0;
	ret = pthread_create(&s_thread, NULL, auth_main, NULL);
	if (ret)
		return -ret;
	s_started = 1;
	return 0;
}

void auth_cancel(const void *tag)
{
	struct auth_ticket *cancelled = NULL;
	struct check *drop = NULL;

	pthread_mutex_lock(&s_lock);
	for (int q = 0; q < 2; q++) {
		struct check **pc = &s_queue[q];

		s_tail[q] = &s_queue[q];
		while (*pc) {
			struct check *c = *pc;
			struct auth_ticket **pt = &c->tickets;

			while (*pt) {
				struct auth_ticket *t = *pt;

				if (tag && t->tag != tag) {
					pt = &t->next;
					continue;
				}
				*pt = t->next;
				t->next = cancelled;
				cancelled = t;
			}
			if (!c->tickets) { /* nobody waits for it any more */
				*pc = c->next;
				s_nqueued--;
				if (c->addr)
					c->addr->queued--;
				c->next = drop;
				drop = c;
				continue;
			}
			s_tail[q] = &c->next;
			pc = &c->next;
		}
	}
	if (s_running) { /* it runs to its end; the cancelled tickets are not answered twice */
		struct auth_ticket **pt = &s_running->tickets;

		while (*pt) {
			struct auth_ticket *t = *pt;

			if (tag && t->tag != tag) {
				pt = &t->next;
				continue;
			}
			*pt = t->next;
			t->next = cancelled;
			cancelled = t;
		}
	}
	pthread_mutex_unlock(&s_lock);
	answer(cancelled, AUTH_CANCELLED);
	while (drop) {
		struct check *c = drop;

		drop = c->next;
		check_free(c);
	}
}

void auth_stop(void)
{
	if (!s_started)
		return;
	pthread_mutex_lock(&s_lock);
	s_stop = 1;
	pthread_cond_broadcast(&s_cond);
	pthread_mutex_unlock(&s_lock);
	pthread_join(s_thread, NULL);
	s_started = 0;
	auth_cancel(NULL);
}

int auth_check(struct webconfig *wc, const char *user, const char *password,
	       const struct sockaddr *addr, socklen_t alen, const void *tag,
	       void (*done)(void *cls), void *cls, struct auth_ticket **ticket,
	       unsigned int *retry_s)
{
	struct webconfig_user *u = NULL;
	unsigned char dg[DG_LEN], fp[DG_LEN], akey[ADDR_KEY_LEN];
	struct auth_ticket *t;
	struct check *c, *same;
	struct addr_entry *a;
	struct cred_entry *hit;
	int64_t now;
	int suspect;

	*retry_s = 1;
	if (!wc || !wc->nusers || !user || !password)
		return AUTH_BAD;
	pthread_once(&s_key_once, key_init);
	for (unsigned int i = 0; i < wc->nusers; i++) /* no early exit: every name compared */
		if (ct_streq(wc->users[i].name, user))
			u = &wc->users[i];
	/* the hash in fp: a reload that changes it (or adds the user) forgets the verdicts */
	if (digest2(user, password, dg) < 0 ||
	    digest2(u ? u->hash : "", u ? "" : wc->dummy_salt, fp) < 0)
		return AUTH_BUSY;
	addr_key(addr, alen, akey);
	t = calloc(1, sizeof(*t));
	c = calloc(1, sizeof(*c));
	if (c) {
		c->password = strdup(password);
		c->setting = strdup(u ? u->hash : wc->dummy_salt);
	}
	if (!t || !c || !c->password || !c->setting) {
		free(t);
		check_free(c);
		return AUTH_BUSY;
	}
	t->done = done;
	t->cls = cls;
	t->tag = tag;

	pthread_mutex_lock(&s_lock);
	now = now_ms();
	t->start_ms = now;
	hit = cred_find(s_ok[set_of(dg, OK_SETS)], dg, fp);
	if (hit) { /* a verified password is welcome from anywhere */
		hit->ms = now;
		s_st.cached_ok++;
		pthread_mutex_unlock(&s_lock);
		free(t);
		check_free(c);
		return AUTH_OK;
	}
	a = addr_get(akey, now);
	if (a && a->tokens < 1) {
		*retry_s = (unsigned int)((1 - a->tokens) * FAIL_REFILL_MS / 1000) + 1;
		s_st.limited++;
		pthread_mutex_unlock(&s_lock);
		free(t);
		check_free(c);
		return AUTH_LIMITED;
	}
	hit = cred_find(s_bad[set_of(dg, BAD_SETS)], dg, fp);
	if (hit && now - hit->ms < BAD_TTL_MS) {
		s_st.cached_bad++;
		pthread_mutex_unlock(&s_lock);
		free(t);
		check_free(c);
		return AUTH_BAD;
	}
	same = check_find(dg, fp);
	if (same) {
		t->next = same->tickets;
		same->tickets = t;
		s_st.coalesced++;
		pthread_mutex_unlock(&s_lock);
		check_free(c);
		*ticket = t;
		return AUTH_PENDING;
	}
	suspect = !a || a->tokens < FAIL_BURST;
	if (a && a->queued >= (suspect ? 1u : ADDR_QUEUED_MAX)) { /* the client's own doing */
		s_st.limited++;
		pthread_mutex_unlock(&s_lock);
		free(t);
		check_free(c);
		return AUTH_LIMITED;
	}
	if (!s_started || s_nqueued >= QUEUE_MAX || !a) {
		s_st.busy++;
		pthread_mutex_unlock(&s_lock);
		free(t);
		check_free(c);
		return AUTH_BUSY;
	}
	memcpy(c->dg, dg, DG_LEN);
	memcpy(c->fp, fp, DG_LEN);
	c->known = u != NULL;
	c->addr = a;
	c->tickets = t;
	a->queued++;
	*s_tail[suspect] = c;
	s_tail[suspect] = &c->next;
	s_nqueued++;
	pthread_cond_signal(&s_cond);
	pthread_mutex_unlock(&s_lock);
	explicit_bzero(dg, sizeof(dg));
	*ticket = t;
	return AUTH_PENDING;
}

int auth_ticket_result(const struct auth_ticket *t)
{
	return t->result;
}

void auth_ticket_free(struct auth_ticket *t)
{
	free(t);
}

void auth_stats(struct auth_stats *st)
{
	pthread_mutex_lock(&s_lock);
	*st = s_st;
	st->queued = s_nqueued + (s_running != NULL);
	pthread_mutex_unlock(&s_lock);
}
