/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query.h - route queries on a snapshot: the /routes filters, /routes/lookup and /expiring.
 * No HTTP here: parameters arrive as (key, value) strings, results leave as segments over
 * snapshot memory plus a small per-request buffer.
 *
 * Any thread holding a snapshot reference may call these; they never block and never write
 * the snapshot. A filtered query costs a logarithmic search plus time proportional to the
 * routes it visits, and it visits only what an index cannot exclude: prefix=, covers=,
 * table= and expiring=1 are served by the indexes of index.h; dev=, protocol=, type=,
 * gateway= and metric= are checked on what those leave (all routes when used alone).
 */
#ifndef RTSNAP_QUERY_H
#define RTSNAP_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "rtsnap/index.h"
#include "rtsnap/names.h"
#include "rtsnap/render.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

#define QUERY_VALUE_MAX 256  /* longer parameter values are refused */
#define QUERY_CURSOR_LEN 132 /* hex characters of a paging cursor */

enum query_field {
	QF_TABLE = 1u << 0,
	QF_DEV = 1u << 1,
	QF_PROTOCOL = 1u << 2,
	QF_TYPE = 1u << 3,
	QF_PREFIX = 1u << 4,
	QF_COVERS = 1u << 5,
	QF_GATEWAY = 1u << 6,
	QF_METRIC = 1u << 7,
	QF_EXPIRING = 1u << 8,
	QF_LIMIT = 1u << 9,
	QF_AFTER = 1u << 10,
};

/*
 * A parsed /routes query. Zero-initialise, set family for an IPv4 snapshot, then feed every
 * parameter to query_parse_arg().
 */
struct query {
	unsigned int set;     /* QF_* present */
	uint8_t family;	      /* 0: IPv6 values and routes; AF_INET: prefix=, covers= and
				 gateway= take IPv4 values (in bytes 0..3), for the routes of
				 an AF_INET snapshot */
	uint8_t gateway_kind; /* AF_INET: which hops gateway= names (has_gw: 1 an IPv4 gateway,
				 ROUTE_GW_VIA6 an IPv6 one, route4.h) */
	uint32_t table;
	char dev[16];
	uint8_t protocol, type;
	uint8_t prefix[16], prefix_len; /* routes whose destination lies inside */
	uint8_t covers[16], covers_len; /* routes whose destination contains */
	uint8_t gateway[16];
	uint32_t metric;
	int expiring;		   /* 1: only routes with an expiry; 0: only routes without */
	uint32_t limit;		   /* at most this many routes */
	struct index_cursor after; /* start after this route */
};

/* The /routes parameter names, NULL-terminated. */
extern const char *const query_params[];

/*
 * Parse one /routes parameter into q (addresses of q->family). names (table and protocol names) may be NULL.
 * Returns 0, or -EINVAL with a message naming the parameter in err (for a 400).
 */
int query_parse_arg(struct query *q, const struct names *names, const char *key, const char *val,
		    char *err, size_t errlen) __attribute__((warn_unused_result));

/* The body of a /routes answer: segments over snapshot memory and over dyn. */
struct query_result {
	struct render_seg *segs; /* malloc()ed */
	size_t nseg;
	struct strbuf dyn; /* routes rendered for this response (those with an expiry) */
	size_t count;	   /* routes in the body */
	char next[QUERY_CURSOR_LEN + 1]; /* cursor for the next page, "" if this is the last */
};

/*
 * Run q on s at time now_ms (CLOCK_MONOTONIC ms, for "expires"). The body is a JSON array of
 * route objects exactly as `ip -j -6 route show table all` prints them, in kernel order.
 * Returns 0 or -ENOMEM; on success the caller owns res (query_result_free, or hand segs and
 * dyn to the HTTP layer).
 */
int query_run(const struct snapshot *s, const struct query *q, int64_t now_ms,
	      struct query_result *res) __attribute__((warn_unused_result));
void query_result_free(struct query_result *res);

/*
 * Any thread. Whether route r passes every filter of q but limit= and after= (what /routes,
 * /events and /changes select). dev_ifindex is q->dev resolved in the snapshot r comes from
 * (query_find_ifindex; 0: no such device). A placeholder row never matches. The hops of a
 * multipath r must be reachable through r->nhs.
 */
int query_match(const struct query *q, const struct route *r, uint32_t dev_ifindex);
/* The ifindex of the link called name among links[0..n) (any order), 0 if none. */
uint32_t query_find_ifindex(const struct route_link *links, size_t n, const char *name);

/* A parsed /routes/lookup query. */
struct lookup_query {
	unsigned int have_addr;
	unsigned int have_src; /* from= given */
	uint8_t family;	       /* of addr: AF_INET6, or AF_INET (addr in bytes 0..3) */
	uint8_t addr[16];
	uint8_t src[16]; /* from=; :: when absent */
	uint32_t table;	 /* default main */
};

/* The /routes/lookup parameter names, NULL-terminated. */
extern const char *const query_lookup_params[];

/* Initialise lq (table main, source ::). */
void query_lookup_init(struct lookup_query *lq);
/* Parse one /routes/lookup parameter; 0 or -EINVAL with a message in err. addr= is an IPv6
 * or an IPv4 address; from= is IPv6 (query_lookup_check() refuses it beside an IPv4 addr=). */
int query_lookup_parse_arg(struct lookup_query *lq, const struct names *names, const char *key,
			   const char *val, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/* After every parameter: 0, or -EINVAL with a message in err (addr= missing, from= with an
 * IPv4 address). */
int query_lookup_check(const struct lookup_query *lq, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/* The record index the kernel's FIB would choose (index_lookup; for an IPv4 address
 * index_lookup4 in s, which must then be the IPv4 snapshot), or -ENOENT. */
long query_lookup(const struct snapshot *s, const struct lookup_query *lq, int64_t now_ms);

/* Append route i as its JSON object, "expires" computed for now_ms. */
void query_render_route(const struct snapshot *s, size_t i, int64_t now_ms, struct strbuf *sb);

/*
 * Append the /expiring body: the routes that carry an expiry, soonest deadline first, each
 * as /routes shows it at now_ms, with "expired":true added when the deadline has passed
 * but the route is still in the snapshot. Work is proportional to the expiring routes.
 */
void query_render_expiring(const struct snapshot *s, int64_t now_ms, struct strbuf *sb);

/* Parse an IPv6 address (no zone, no brackets). 0 or -EINVAL. */
int query_parse_addr(const char *s, uint8_t out[16]) __attribute__((warn_unused_result));
/* Parse ADDR[/LEN] ("default" = ::/0); host bits are cleared. 0 or -EINVAL. */
int query_parse_prefix(const char *s, uint8_t out[16], uint8_t *len)
    __attribute__((warn_unused_result));
/* The same for IPv4 (dotted quad as inet_pton() takes it, LEN 0-32, "default" = 0.0.0.0/0),
 * into out[0..3], out[4..15] zeroed. 0 or -EINVAL. */
int query_parse_addr4(const char *s, uint8_t out[16]) __attribute__((warn_unused_result));
int query_parse_prefix4(const char *s, uint8_t out[16], uint8_t *len)
    __attribute__((warn_unused_result));
/* Encode / decode a paging cursor (QUERY_CURSOR_LEN hex characters). */
void query_cursor_encode(const struct index_cursor *c, char out[QUERY_CURSOR_LEN + 1]);
int query_cursor_decode(const char *s, struct index_cursor *c) __attribute__((warn_unused_result));

#endif
