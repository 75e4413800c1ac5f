// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_count.c - the request counters (rtsnap_http_requests_total{endpoint,code}): the
 * endpoints' paths and the status codes counted one by one. Any thread; relaxed atomics.
 */
#include <string.h>

#include "rtsnap/http_count.h"
#include "rtsnap/stats.h"

/* Paths of enum http_ep, for the counters' labels. */
static const char *const s_ep_paths[HTTP_EP__COUNT] = {
	"/ipv6_route",
	"/proc/net/ipv6_route",
	"/routes",
	"/routes/lookup",
	"/expiring",
	"/metrics",
	"/status",
	"/healthz",
	"/",
	"/events",
	"/changes",
	"/route",
	"/proc/net/route",
};

/* Status codes counted one by one; anything else is counted as "other" (the last column). */
static const unsigned int s_codes[HTTP_CODE__MAX - 1] = { 200, 304, 400, 401, 403, 404, 405, 408,
							  413, 414, 429, 431, 500, 503, 505 };

void http_count(int ep, unsigned int status)
{
	unsigned int ci = HTTP_CODE__MAX - 1;

	for (unsigned int i = 0; i < HTTP_CODE__MAX - 1; i++)
		if (s_codes[i] == status)
			ci = i;
	if (ep < 0 || ep >= HTTP_EP__MAX)
		ep = HTTP_EP__MAX - 1;
	stats_inc(g_stats.http_requests_code[ep][ci]);
}

const char *http_endpoint_name(int ep)
{
	if (ep >= 0 && (size_t)ep < HTTP_EP__COUNT)
		return s_ep_paths[ep];
	return "other";
}

unsigned int http_endpoint_count(void)
{
	return (unsigned int)HTTP_EP__COUNT;
}

int http_endpoint_of(const char *path, size_t len)
{
	for (int i = 0; path && i < HTTP_EP__COUNT; i++)
		if (strlen(s_ep_paths[i]) == len && memcmp(s_ep_paths[i], path, len) == 0)
			return i;
	return HTTP_EP_OTHER;
}

void http_count_status(const char *path, size_t len, unsigned int status)
{
	http_count(http_endpoint_of(path, len), status);
}

unsigned int http_status_code(unsigned int idx)
{
	return idx < HTTP_CODE__MAX - 1 ? s_codes[idx] : 0;
}
