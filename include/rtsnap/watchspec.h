/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watchspec.h - watched routes as configured (--watch SPEC, --watch-file PATH): the spec
 * grammar (docs/watch.md), an immutable list of them, and the process's current list.
 *
 * A list is built by one thread (main), sealed, then immutable and reference-counted. The
 * process's current list is published with RCU (watch_list_publish(), main only) and read by
 * any thread with watch_list_current(), which returns a reference. Each collector instance
 * evaluates the current list at every publication (watch.h); HTTP renders it.
 */
#ifndef RTSNAP_WATCHSPEC_H
#define RTSNAP_WATCHSPEC_H

#include <stddef.h>
#include <stdint.h>

struct names;

#define WATCH_MAX 10000	   /* watches in a list */
#define WATCH_SPEC_MAX 512 /* bytes of one spec */
#define WATCH_NAME_MAX 128 /* bytes of an explicit NAME= */

enum watch_kind {
	WATCH_ROUTE,  /* an exact route: this prefix in this table */
	WATCH_LOOKUP, /* the route an address resolves to (longest-prefix match) */
};

struct watch_spec {
	char *name;	  /* NAME, or the spec text */
	char *spec;	  /* the spec as given, blanks squeezed */
	char *netns;	  /* the named namespace, "" for the daemon's own */
	char *table_name; /* the table as ip prints it (names at parse time) */
	uint32_t table;
	uint8_t family;	  /* AF_INET6 or AF_INET */
	uint8_t kind;	  /* enum watch_kind */
	uint8_t len;	  /* prefix length (WATCH_ROUTE); 128 or 32 for a lookup */
	uint8_t addr[16]; /* prefix or address; IPv4 in bytes 0..3 */
};

struct watch_list;

/*
 * Any thread. Parse one spec (text without a newline) with the table names n (names.h,
 * which has main, local and default built in; NULL: table numbers only). 0, or -EINVAL with the reason in err. out's strings are
 * malloc()ed (watch_spec_clear() frees them); on error out is left empty.
 */
int watch_spec_parse(const struct names *n, const char *text, struct watch_spec *out, char *err,
		     size_t errlen) __attribute__((warn_unused_result));
void watch_spec_clear(struct watch_spec *w);

/* An empty list, not sealed. *out set only on success; 0 or -ENOMEM. */
int watch_list_new(struct watch_list **out) __attribute__((warn_unused_result));
/* The thread building l: parse text and append it. 0, -EINVAL (reason in err), -E2BIG (more
 * than WATCH_MAX), -ENOMEM. */
int watch_list_add(struct watch_list *l, const struct names *n, const char *text, char *err,
		   size_t errlen) __attribute__((warn_unused_result));
/* The thread building l: append every spec of file path (one a line, '#' comments, blank
 * lines). On error err is "PATH:LINE: reason" or "PATH: reason". */
int watch_list_add_file(struct watch_list *l, const struct names *n, const char *path, char *err,
			size_t errlen) __attribute__((warn_unused_result));
/* The thread building l: index the names; -EINVAL when two watches have the same name (err
 * names it). After 0, l is immutable. */
int watch_list_seal(struct watch_list *l, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Any thread holding a reference. */
size_t watch_list_count(const struct watch_list *l);
const struct watch_spec *watch_list_at(const struct watch_list *l, size_t i);
/* Position of the watch named name, or -1. O(log n). */
long watch_list_find(const struct watch_list *l, const char *name);
/* Another reference (NULL is fine); returns l. */
struct watch_list *watch_list_get(struct watch_list *l);
/* Drop a reference (NULL is fine); the last frees l. */
void watch_list_put(struct watch_list *l);

/*
 * Main thread. Make l (sealed; the caller's reference is taken over) the process's current
 * list and drop the previous one's reference after a grace period. NULL: none.
 */
void watch_list_publish(struct watch_list *l);
/* Any thread but inside an RCU read-side section: the current list with a reference, or
 * NULL when none is configured. */
struct watch_list *watch_list_current(void);
/* Any thread: how many times a list was published (a collector that saw another number
 * evaluates again). */
uint64_t watch_list_serial(void);

#endif
