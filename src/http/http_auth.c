// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_auth.c - who may ask: the client certificate (client_auth_type) and basic auth
 * (auth.c checks the password), before what is asked.
 *
 * A password that auth.c's caches do not know is hashed on auth.c's thread, never on a
 * worker: the request's connection is suspended (MHD_suspend_connection, from the request
 * callback as libmicrohttpd allows) until the ticket's done() resumes it and wakes its worker;
 * the dispatcher is then called again for the same request and finds the verdict in the
 * connection's record. s_lock orders the worker's suspension against done(), which may come
 * first (then the worker reads the verdict at once and does not suspend). Lock order: s_lock,
 * then libmicrohttpd's own. Before a generation's daemons stop, http_auth_close() makes its
 * requests refuse rather than suspend and cancels its tickets (resuming their connections).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <gnutls/gnutls.h>

#include "rtsnap/auth.h"
#include "rtsnap/http_auth.h"
#include "rtsnap/http_conn.h"
#include "rtsnap/webconfig.h"

/*
 * The client certificate, when client_auth_type asks for one: 0 if the request may go on,
 * else the reason to refuse it. libmicrohttpd requests a certificate when it has a CA (and
 * GnuTLS verifies nothing on the server side by itself): the verdict is taken here, per
 * request, against the CA of the configuration the connection's daemon was started with.
 */
static const char *client_cert_refusal(const struct webconfig *wc, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t ses;
	unsigned int ncerts = 0, status = 0;
	int have, verify;

	if (!wc->tls || wc->client_auth == WC_NO_CLIENT_CERT ||
	    wc->client_auth == WC_REQUEST_CLIENT_CERT)
		return NULL;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return "no TLS session";
	ses = (gnutls_session_t)ci->tls_session;
	have = gnutls_certificate_get_peers(ses, &ncerts) != NULL && ncerts > 0;
	if (!have)
		return wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN
			   ? NULL
			   : "a client certificate is required";
	verify = wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN ||
		 wc->client_auth == WC_REQUIRE_AND_VERIFY_CLIENT_CERT;
	if (verify && (gnutls_certificate_verify_peers2(ses, &status) < 0 || status))
		return "the client certificate is not signed by the client CA (or not valid now)";
	return NULL;
}

static enum MHD_Result send_401(struct http_req *rq)
{
	static const char msg[] = "{\"error\":\"authentication required\"}\n";
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	http_conn_request_complete(rq->conn);
	ret = MHD_queue_basic_auth_fail_response(rq->conn, "rtsnapd", r);
	MHD_destroy_response(r);
	http_count(rq->ep, 401);
	return ret;
}

/* s_lock: a ticket's answer against its connection's suspension (see resume_cb). The
 * generations whose checks must not suspend any more: their daemons are about to stop. */
#define MAX_CLOSING 64
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *s_closing[MAX_CLOSING];

/* The ticket's done(), on auth.c's thread (or the main thread in auth_cancel): resume the
 * connection if the worker has suspended it already, else it finds the answer itself. */
static void resume_cb(void *cls)
{
	struct http_conn *c = cls;

	pthread_mutex_lock(&s_lock);
	c->auth_ready = 1;
	if (c->auth_suspended) {
		c->auth_suspended = 0;
		MHD_resume_connection(c->mhd);
		c->auth_wake.fn(c->auth_wake.cls);
	}
	pthread_mutex_unlock(&s_lock);
}

static int closing_locked(const void *owner)
{
	for (int i = 0; i < MAX_CLOSING; i++)
		if (s_closing[i] == owner)
			return 1;
	return 0;
}

void http_auth_close(const void *owner)
{
	pthread_mutex_lock(&s_lock);
	if (!closing_locked(owner)) {
		for (int i = 0; i < MAX_CLOSING; i++) {
			if (!s_closing[i]) {
				s_closing[i] = owner;
				break;
			}
		}
	}
	pthread_mutex_unlock(&s_lock);
	auth_cancel(owner); /* their suspended connections are resumed now */
}

void http_auth_closed(const void *owner)
{
	pthread_mutex_lock(&s_lock);
	for (int i = 0; i < MAX_CLOSING; i++)
		if (s_closing[i] == owner)
			s_closing[i] = NULL;
	pthread_mutex_unlock(&s_lock);
}

/* The answer to a final verdict r (auth.h) other than AUTH_OK. */
static enum MHD_Result refuse(struct http_req *rq, int r, unsigned int retry_s)
{
	char retry[16];
	enum MHD_Result res;

	if (r == AUTH_BAD)
		return send_401(rq);
	snprintf(retry, sizeof(retry), "%u", retry_s ? retry_s : 1);
	rq->headers = (const char *const[]){ "Retry-After", retry, NULL };
	if (r == AUTH_LIMITED)
		res = http_send_error(rq, 429,
				      "too many failed password checks from this address: "
				      "retry later");
	else
		res = http_send_error(rq, 503, "password checks are busy: retry");
	rq->headers = NULL;
	return res;
}

/* Start the check of rq's credentials; 0 (go on), 1 (answered) or 2 (suspended). */
static int basic_auth(struct http_req *rq, struct webconfig *wc, struct http_conn *c,
		      enum MHD_Result *res)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *addr = ci ? ci->client_addr : NULL;
	socklen_t alen = !addr			       ? 0
			 : addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
			 : addr->sa_family == AF_INET  ? sizeof(struct sockaddr_in)
						       : sizeof(addr->sa_family);
	struct auth_ticket *t = NULL;
	unsigned int retry_s = 1;
	char *pass = NULL, *user;
	int r;

	user = MHD_basic_auth_get_username_password(rq->conn, &pass);
	if (!user || !pass)
		r = AUTH_BAD;
	else if (!c) /* no record to suspend with: only the caches answer */
		r = auth_check(wc, user, pass, addr, alen, rq->owner, NULL, NULL, NULL, &retry_s);
	else
		r = auth_check(wc, user, pass, addr, alen, rq->owner, resume_cb, c, &t, &retry_s);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	if (r == AUTH_OK)
		return 0;
	if (r != AUTH_PENDING) {
		*res = refuse(rq, r, retry_s);
		return 1;
	}
	pthread_mutex_lock(&s_lock);
	c->auth = t;
	if (!c->auth_ready) { /* wait off the worker: resume_cb() resumes it */
		c->mhd = rq->conn;
		c->auth_wake = rq->wake;
		c->auth_suspended = 1;
		MHD_suspend_connection(rq->conn);
		pthread_mutex_unlock(&s_lock);
		return 2;
	}
	pthread_mutex_unlock(&s_lock);
	return 3; /* answered already: the caller reads the ticket */
}

int http_auth_check(struct http_req *rq, struct webconfig *wc, enum MHD_Result *res)
{
	struct http_conn *c = http_conn_of(rq->conn);
	const char *why;
	int r, ret;

	if (!wc)
		return 0;
	if (!c || !c->auth) { /* a new request, not one resumed with its verdict */
		why = client_cert_refusal(wc, rq->conn);
		if (why) {
			*res = http_send_error(rq, 403, "%s", why);
			return 1;
		}
		if (!wc->nusers)
			return 0;
		pthread_mutex_lock(&s_lock);
		r = closing_locked(rq->owner);
		pthread_mutex_unlock(&s_lock);
		if (r) { /* its daemons stop: nothing may be suspended now */
			*res = refuse(rq, AUTH_BUSY, 1);
			return 1;
		}
		ret = basic_auth(rq, wc, c, res);
		if (ret < 3)
			return ret;
	}
	pthread_mutex_lock(&s_lock);
	if (!c->auth_ready) { /* resumed before its verdict (never seen): wait again */
		c->auth_suspended = 1;
		MHD_suspend_connection(rq->conn);
		pthread_mutex_unlock(&s_lock);
		return 2;
	}
	r = auth_ticket_result(c->auth);
	auth_ticket_free(c->auth);
	c->auth = NULL;
	c->auth_ready = 0;
	pthread_mutex_unlock(&s_lock);
	if (r == AUTH_OK)
		return 0;
	*res = refuse(rq, r == AUTH_BAD ? AUTH_BAD : AUTH_BUSY, 1);
	return 1;
}
