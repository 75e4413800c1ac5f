/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_auth.h - who may ask (see http_auth.c): the dispatcher's check of a request's client
 * certificate and basic auth credentials against the web configuration of its connection.
 */
#ifndef RTSNAP_HTTP_AUTH_H
#define RTSNAP_HTTP_AUTH_H

#include "rtsnap/http_reply.h"

struct webconfig;

/*
 * Worker thread, when rq's head is complete (and again, for the same request, after a
 * suspension). 0: the request may go on (or wc is NULL); 1: a refusal (401, 403, 429, 503) is
 * queued, its result in *res; 2: the connection is suspended while the password is checked
 * (return MHD_YES: the dispatcher is called again when it is resumed).
 */
int http_auth_check(struct http_req *rq, struct webconfig *wc, enum MHD_Result *res);

/* Main thread, before the daemons of owner (an HTTP generation) stop: its requests no longer
 * wait for a password check, and those waiting are answered (their connections resumed).
 * http_auth_closed() once they are stopped. */
void http_auth_close(const void *owner);
void http_auth_closed(const void *owner);

#endif
