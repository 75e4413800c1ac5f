/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_listen.h - listen sockets (see http_listen.c). Main thread only.
 */
#ifndef RTSNAP_HTTP_LISTEN_H
#define RTSNAP_HTTP_LISTEN_H

#include <sys/stat.h>

struct http_opts;

/* A unix socket file this process created (path[0] == 0: none). */
struct http_unix_sock {
	char path[108];
	struct stat st; /* removed only if the file is still this one */
};

/* Open, bind and listen on spec (a --listen value), non-blocking; a unix socket gets o's mode
 * and group and is recorded in *us. The fd, or a negative errno. */
int http_listen_open(const struct http_opts *o, const char *spec, struct http_unix_sock *us);
/* Remove the unix socket file recorded in *us if it is still the one created. */
void http_listen_unlink(struct http_unix_sock *us);

#endif
