// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_count.c - the HTTP front door's counters: rtsnap_http_requests_total{endpoint,code}
 * (the endpoints' paths and the status codes counted one by one) and the connection-level
 * counters, each described once in s_desc (its family, help and label) and rendered from that
 * table. One front door per process serves every instance, so the counters are this module's
 * own; other modules count through http_count*() and read through http_count_get(). Any
 * thread; relaxed atomics.
 */
#include <string.h>

#include "rtsnap/http_count.h"
#include "rtsnap/render_metrics.h"
#include "rtsnap/stats.h"

static uint64_t s_requests[HTTP_EP__MAX][HTTP_CODE__MAX]; /* atomic: by endpoint, code idx */
static uint64_t s_counts[HTTP_C__COUNT];		  /* atomic: enum http_counter */

/* One family per entry; consecutive entries with the same metric are its labelled samples. */
static const struct {
	const char *metric, *help, *label; /* label: NULL, or the sample's label pair */
} s_desc[HTTP_C__COUNT] = {
	[HTTP_C_BYTES] = { "rtsnap_http_response_bytes_total",
			   "Bytes of HTTP response bodies sent (after compression).", NULL },
	[HTTP_C_HEADER_TIMEOUTS] = { "rtsnap_http_header_timeouts_total",
				     "Connections answered 408: no complete request head within "
				     "--header-timeout.",
				     NULL },
	[HTTP_C_SHED] = { "rtsnap_http_shed_connections_total",
			  "Connections still waiting for their request closed to make room for "
			  "new ones.",
			  NULL },
	[HTTP_C_BUSY] = { "rtsnap_http_busy_total",
			  "Requests refused because every connection slot (--max-connections) was "
			  "in use.",
			  NULL },
	[HTTP_C_REQUEST_TIMEOUT_FIRST] = { "rtsnap_http_request_timeouts_total",
					   "Connections closed after the handover because a "
					   "request was not complete within --header-timeout "
					   "(first: the rest of the first request; later: a later "
					   "request on a kept-alive connection).",
					   "request=\"first\"" },
	[HTTP_C_REQUEST_TIMEOUT_LATER] = { "rtsnap_http_request_timeouts_total", NULL,
					   "request=\"later\"" },
	[HTTP_C_EVICTED] = { "rtsnap_http_evicted_connections_total",
			     "Connections waiting for their client's next request closed to let a "
			     "new request in while every slot (--max-connections) was in use.",
			     NULL },
	[HTTP_C_DROPPED_PINNED] = { "rtsnap_http_responses_dropped_total",
				    "Responses closed before they were sent, by reason "
				    "(pinned_bytes: replaced snapshots kept alive by responses in "
				    "flight went over --max-pinned-bytes; those holding the oldest "
				    "snapshot went first).",
				    "reason=\"pinned_bytes\"" },
};

void http_count_add(enum http_counter c, uint64_t v)
{
	if ((unsigned int)c < HTTP_C__COUNT)
		stats_add(s_counts[c], v);
}

uint64_t http_count_get(enum http_counter c)
{
	return (unsigned int)c < HTTP_C__COUNT ? stats_get(s_counts[c]) : 0;
}

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
	"/netns",
	"/watch",
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
	stats_inc(s_requests[ep][ci]);
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

void http_count_render(struct strbuf *sb)
{
	unsigned int nep = http_endpoint_count();

	strbuf_puts(sb, "# HELP rtsnap_http_requests_total HTTP requests answered, by endpoint "
			"and status code (other: a code not listed separately).\n"
			"# TYPE rtsnap_http_requests_total counter\n");
	for (unsigned int e = 0; e <= nep; e++) {
		int ep = e < nep ? (int)e : HTTP_EP_OTHER;

		for (unsigned int c = 0; c < HTTP_CODE__MAX; c++) {
			unsigned int code = http_status_code(c);
			uint64_t v = stats_get(s_requests[ep][c]);

			/* every endpoint's 200 from the start, other codes once they happen */
			if (!v && (code != 200 || ep == HTTP_EP_OTHER))
				continue;
			strbuf_puts(sb, "rtsnap_http_requests_total{endpoint=\"");
			render_metrics_label(sb, http_endpoint_name(ep));
			if (!code)
				strbuf_appendf(sb, "\",code=\"other\"} %llu\n",
					       (unsigned long long)v);
			else
				strbuf_appendf(sb, "\",code=\"%u\"} %llu\n", code,
					       (unsigned long long)v);
		}
	}
	for (unsigned int i = 0; i < HTTP_C__COUNT; i++) {
		if (s_desc[i].help)
			strbuf_appendf(sb, "# HELP %s %s\n# TYPE %s counter\n", s_desc[i].metric,
				       s_desc[i].help, s_desc[i].metric);
		if (s_desc[i].label)
			strbuf_appendf(sb, "%s{%s} %llu\n", s_desc[i].metric, s_desc[i].label,
				       (unsigned long long)stats_get(s_counts[i]));
		else
			strbuf_appendf(sb, "%s %llu\n", s_desc[i].metric,
				       (unsigned long long)stats_get(s_counts[i]));
	}
}
