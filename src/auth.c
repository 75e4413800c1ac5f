// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * auth.c - basic auth credentials checked with libcrypt's bcrypt (see auth.h for the
 * contract). Threads: any HTTP worker. s_bcrypt_lock serialises bcrypt; each user's cache
 * slot has its own lock, held only to copy 32 bytes, so a cache hit never waits for a
 * bcrypt computation in progress.
 */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "rtsnap/auth.h"

#define AUTH_WAIT_MS 250 /* longest a worker waits for another thread's bcrypt */

static pthread_mutex_t s_bcrypt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t s_key_once = PTHREAD_ONCE_INIT;
static unsigned char s_key[32];
static unsigned long long s_runs, s_hits, s_busy; /* atomic */

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

/* HMAC-SHA-256(key, user NUL password) */
static int digest(const char *user, const char *password, unsigned char out[WC_DIGEST_LEN])
{
	size_t lu = strlen(user), lp = strlen(password);
	char *m = malloc(lu + 1 + lp);
	int ret;

	if (!m)
		return -1;
	memcpy(m, user, lu + 1);
	memcpy(m + lu + 1, password, lp);
	ret = gnutls_hmac_fast(GNUTLS_MAC_SHA256, s_key, sizeof(s_key), m, lu + 1 + lp, out);
	explicit_bzero(m, lu + 1 + lp);
	free(m);
	return ret < 0 ? -1 : 0;
}

int auth_check(struct webconfig *wc, const char *user, const char *password)
{
	struct webconfig_user *u = NULL;
	unsigned char dg[WC_DIGEST_LEN];
	struct crypt_data *cd;
	const char *res;
	int have_dg, hit = 0, ok = 0;

	if (!wc || !wc->nusers || !user || !password)
		return 0;
	pthread_once(&s_key_once, key_init);
	for (unsigned int i = 0; i < wc->nusers; i++) /* no early exit: every name compared */
		if (ct_streq(wc->users[i].name, user))
			u = &wc->users[i];
	have_dg = digest(user, password, dg) == 0;
	if (u && have_dg) {
		pthread_mutex_lock(&u->lock);
		hit = u->have_ok && gnutls_memcmp(u->ok_digest, dg, sizeof(dg)) == 0;
		pthread_mutex_unlock(&u->lock);
		if (hit) {
			__atomic_add_fetch(&s_hits, 1, __ATOMIC_RELAXED);
			return 1;
		}
	}
	cd = calloc(1, sizeof(*cd)); /* 32 KiB: not on a worker's stack */
	if (!cd)
		return 0;
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += AUTH_WAIT_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (pthread_mutex_timedlock(&s_bcrypt_lock, &until)) {
			__atomic_add_fetch(&s_busy, 1, __ATOMIC_RELAXED);
			free(cd);
			explicit_bzero(dg, sizeof(dg));
			return -EBUSY;
		}
	}
	res = crypt_rn(password, u ? u->hash : wc->dummy_salt, cd, (int)sizeof(*cd));
	__atomic_add_fetch(&s_runs, 1, __ATOMIC_RELAXED);
	if (res && u && res[0] != '*')
		ok = strlen(res) == strlen(u->hash) &&
		     gnutls_memcmp(res, u->hash, strlen(u->hash)) == 0;
	pthread_mutex_unlock(&s_bcrypt_lock);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok && have_dg) {
		pthread_mutex_lock(&u->lock);
		memcpy(u->ok_digest, dg, sizeof(dg));
		u->have_ok = 1;
		pthread_mutex_unlock(&u->lock);
	}
	explicit_bzero(dg, sizeof(dg));
	return ok;
}

unsigned long long auth_bcrypt_runs(void)
{
	return __atomic_load_n(&s_runs, __ATOMIC_RELAXED);
}

unsigned long long auth_busy(void)
{
	return __atomic_load_n(&s_busy, __ATOMIC_RELAXED);
}

unsigned long long auth_cache_hits(void)
{
	return __atomic_load_n(&s_hits, __ATOMIC_RELAXED);
}
