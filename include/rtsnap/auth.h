/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.h - basic auth against the bcrypt hashes of a web configuration (webconfig.h).
 */
#ifndef RTSNAP_AUTH_H
#define RTSNAP_AUTH_H

#include "rtsnap/webconfig.h"

/*
 * Any thread (HTTP workers). 1 if user and password match a user of wc, 0 if not, -EBUSY if
 * the answer needs bcrypt and another thread's bcrypt did not finish within 250 ms (the caller
 * answers 503: a worker thread is never held longer, so a flood of wrong passwords cannot
 * take every worker from clients whose credentials are cached).
 * - bcrypt runs at most once at a time per process (libcrypt's crypt_rn, ~70 ms at cost 10),
 *   so a flood of wrong passwords costs one core, not all of them;
 * - an unknown user is checked against a dummy setting of the same cost, so the answer
 *   time does not tell which user names exist; hashes and digests are compared in constant
 *   time;
 * - a verified password is remembered per user as a keyed digest (HMAC-SHA-256 with a
 *   per-process random key), so a scraper that sends the same credentials every few seconds
 *   pays for bcrypt once per configuration, not per request.
 */
int auth_check(struct webconfig *wc, const char *user, const char *password);

/* Counters, for tests and logs: bcrypt computations, cache hits and -EBUSY answers. */
unsigned long long auth_bcrypt_runs(void);
unsigned long long auth_busy(void);
unsigned long long auth_cache_hits(void);

#endif
