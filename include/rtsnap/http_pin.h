/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_pin.h - the registry of in-flight responses that hold a snapshot reference, and the
 * bound on the bytes of replaced snapshots they keep alive (see http_pin.c).
 */
#ifndef RTSNAP_HTTP_PIN_H
#define RTSNAP_HTTP_PIN_H

#include <stdint.h>
#include <microhttpd.h>

#include "rtsnap/snapshot.h"

struct http_pin {
	struct http_pin *prev, *next; /* under the registry's lock */
	struct snapshot *snap;	      /* the response's reference (owned by the response) */
	uint64_t gen;		      /* snap's generation */
	int fd;			      /* the connection's socket; -1: unknown, never dropped */
	int dropped;		      /* shut down by the bound */
	int listed;		      /* worker thread only */
	int64_t start_ms;
	uint64_t body_bytes;
};
struct http_pin_stats {
	unsigned long responses;	 /* in flight, holding a snapshot */
	unsigned long responses_retired; /* ... a replaced one */
	uint64_t limit_bytes;		 /* now; 0: no bound */
	long snapshots_retired;		 /* the chain's replaced snapshots still held */
	uint64_t retired_bytes, current_bytes;
};
/* Main thread, before http_start(). Bound what responses pin of chain's snapshots:
 * bytes != 0: that limit; else factor x the current snapshot's bytes; both 0: no bound. */
void http_pin_set_limit(struct snapshot_chain *chain, uint64_t bytes, unsigned int factor);
/* Any thread. The limit in bytes now (0: no bound). */
uint64_t http_pin_limit(void);
/* Worker thread, when a response holding snap is created for conn. p lives in the response.
 * snap NULL (a body that holds no snapshot): p is not listed. */
void http_pin_add(struct http_pin *p, struct MHD_Connection *conn, struct snapshot *snap,
		  uint64_t body_bytes);
/* The response's free callback, before the snapshot reference is dropped. Fine if never added. */
void http_pin_del(struct http_pin *p);
/* Any thread. */
void http_pin_stats(struct http_pin_stats *st);
/* The snapshot retire hook (collector thread): enforce the limit. */
void http_pin_retired(uint64_t current_generation);

#endif
