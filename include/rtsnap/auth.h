/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.h - basic auth against the bcrypt hashes of a web configuration (webconfig.h), checked
 * off the threads that serve connections (see auth.c for the policy).
 *
 * A request's credentials are looked up in two caches first (passwords verified, passwords
 * refused; keyed digests, process-wide, kept across reloads while a user's hash is the same).
 * Only what neither knows costs a bcrypt, which runs on auth.c's own thread: the caller gets a
 * ticket and is called back when the verdict is in (it suspends its connection meanwhile).
 * Client addresses whose checks keep failing are refused before they cost a hash.
 */
#ifndef RTSNAP_AUTH_H
#define RTSNAP_AUTH_H

#include <sys/socket.h>

#include "rtsnap/webconfig.h"

enum auth_result {
	AUTH_OK = 1,	     /* the user and password match */
	AUTH_BAD = 0,	     /* they do not (or no such user) */
	AUTH_PENDING = -1,   /* a bcrypt is needed: the ticket's done() will tell */
	AUTH_LIMITED = -2,   /* the client's address failed too often: refused, no hash */
	AUTH_BUSY = -3,	     /* too many checks wait: refused, no hash */
	AUTH_CANCELLED = -4, /* the check was abandoned (auth_cancel, auth_stop) */
};

struct auth_ticket;

/* Main thread, before any check: start the bcrypt thread. 0 or a negative errno. */
int auth_start(void) __attribute__((warn_unused_result));
/* Main thread, after the HTTP server stopped: cancel what waits, join the thread. */
void auth_stop(void);

/*
 * Any thread (HTTP workers). The verdict on user and password for wc, from the client at addr
 * (alen bytes; NULL: unknown). AUTH_OK, AUTH_BAD, AUTH_LIMITED and AUTH_BUSY are final
 * (*retry_s: when an AUTH_LIMITED or AUTH_BUSY client may try again). AUTH_PENDING: *ticket is
 * set, and done(cls) is called once, on the bcrypt thread (or in auth_cancel() for tag), when
 * auth_ticket_result() has the verdict; the caller then frees the ticket. tag groups tickets
 * for auth_cancel() (the HTTP generation).
 */
int auth_check(struct webconfig *wc, const char *user, const char *password,
	       const struct sockaddr *addr, socklen_t alen, const void *tag,
	       void (*done)(void *cls), void *cls, struct auth_ticket **ticket,
	       unsigned int *retry_s);
/* After done(): AUTH_OK, AUTH_BAD or AUTH_CANCELLED. */
int auth_ticket_result(const struct auth_ticket *t);
/* After done() (or never handed out). Accepts NULL. */
void auth_ticket_free(struct auth_ticket *t);
/* Main thread: every ticket of tag that has not been answered is answered AUTH_CANCELLED now
 * (done() called from here); returns once no bcrypt for tag runs either. */
void auth_cancel(const void *tag);

struct auth_stats {
	unsigned long long bcrypt_runs;	  /* hashes computed */
	unsigned long long cached_ok;	  /* answered from the verified cache */
	unsigned long long cached_bad;	  /* answered from the refused cache */
	unsigned long long coalesced;	  /* waited for a hash of the same credentials */
	unsigned long long limited;	  /* AUTH_LIMITED answers */
	unsigned long long busy;	  /* AUTH_BUSY answers */
	unsigned long long waited_ms_sum; /* time tickets waited for their verdict */
	unsigned long long waited;	  /* tickets answered by the thread */
	unsigned int queued;		  /* checks waiting now */
};
/* Any thread. */
void auth_stats(struct auth_stats *st);

#endif
