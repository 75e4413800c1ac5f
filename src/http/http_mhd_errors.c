// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_mhd_errors.c - libmicrohttpd's own error answers, in JSON like every other.
 *
 * libmicrohttpd 0.9.75 answers a request it cannot parse itself (transmit_error_response in
 * connection.c: 400 malformed, 413, 414/431 too big, 500, 505) with a fixed HTML page; no
 * option or callback changes it, and it happens where rtsnapd has no say: on a kept-alive
 * connection's later requests (the gate sees only the first) and on TLS listeners (the gate
 * cannot read the head). What it does do is queue that page through its own exported
 * MHD_queue_response(), and the library calls it through its PLT like any caller (Debian's
 * build: no -Bsymbolic, default visibility), so a definition in the executable comes first
 * (ELF symbol interposition). This one passes every response on, except an error page made
 * by libmicrohttpd, which it replaces by {"error": ...} with the same status.
 *
 * Telling the two apart: every error rtsnapd answers has a Content-Type (http_send_error(),
 * send_405(), send_401()); libmicrohttpd's pages have none. The replacement is queued in the
 * page's place (libmicrohttpd then drops its page, which it only created to queue), and it
 * closes the connection afterwards as it would have.
 *
 * If a build of libmicrohttpd binds its internal calls directly (-Bsymbolic, LTO, a static
 * library), this function is simply never called for them and the HTML pages come back:
 * tests/integration/hostile_requests.t checks that they are JSON.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <microhttpd.h>

#include "rtsnap/http_count.h"

typedef enum MHD_Result (*queue_fn)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static const char *mhd_error_text(unsigned int status)
{
	switch (status) {
	case 400:
		return "{\"error\":\"malformed request\"}\n";
	case 413:
		return "{\"error\":\"request body too large\"}\n";
	case 414:
		return "{\"error\":\"request target too long\"}\n";
	case 431:
		return "{\"error\":\"request header fields too large\"}\n";
	case 505:
		return "{\"error\":\"HTTP version not supported (HTTP/1.0 and 1.1 are)\"}\n";
	}
	return "{\"error\":\"the request could not be processed\"}\n";
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
				   struct MHD_Response *response)
{
	static queue_fn real;
	queue_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	struct MHD_Response *json;
	const char *text;
	enum MHD_Result ret;
	size_t len = 0;

	if (!fn) { /* racing threads find the same address */
		fn = (queue_fn)dlsym(RTLD_NEXT, "MHD_queue_response");
		if (!fn)
			return MHD_NO;
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	if (status_code < 400 || !response ||
	    MHD_get_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE))
		return fn(connection, status_code, response);
	text = mhd_error_text(status_code);
	while (text[len])
		len++;
	json = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!json)
		return fn(connection, status_code, response);
	MHD_add_response_header(json, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(json, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	ret = fn(connection, status_code, json);
	MHD_destroy_response(json); /* the connection holds its own reference */
	if (ret == MHD_YES)
		http_count_status(NULL, 0, status_code);
	return ret;
}
