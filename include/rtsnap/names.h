/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.h - the names iproute2 gives to table, protocol, scope and type numbers
 * (built-in names plus /etc/iproute2/{rt_tables,rt_protos,rt_scopes} and their .d/ *.conf files,
 * and rt_realms and rt_dsfield for IPv4).
 * A names object is immutable once loaded and reference-counted: the snapshots rendered with
 * it share it. A names cache reads the files again only when one of them changed.
 */
#ifndef RTSNAP_NAMES_H
#define RTSNAP_NAMES_H

#include <stdint.h>

struct names;

/* Load from dir (NULL = /etc/iproute2). Missing files are fine. *out set only on success. */
int names_load(const char *dir, struct names **out) __attribute__((warn_unused_result));
/* Any thread holding a reference. Another reference on n (NULL is fine); returns n. */
struct names *names_get(struct names *n);
/* Drop a reference (NULL is fine); the last one frees n. */
void names_free(struct names *n);

/*
 * The names of one directory (NULL = /etc/iproute2) for one thread (a builder):
 * names_cache_get() reads the files names_load() reads again only when one was added,
 * removed or changed (identity, size, modification or change time). It stats them (and the
 * *.conf files of the .d directories) only when the process's inotify watch on the directory
 * saw a change since the last time, or when it cannot rely on the watch (no inotify, a
 * symbolic link among them): otherwise a get is one read() of the watch's descriptor (one
 * descriptor for the process, kept for its life). *out gets a reference; 0 or a negative
 * errno (the files could not be read: nothing is cached then).
 */
struct names_cache;
int names_cache_new(const char *dir, struct names_cache **out) __attribute__((warn_unused_result));
int names_cache_get(struct names_cache *c, struct names **out) __attribute__((warn_unused_result));
/* How many times the files were read (for tests and /status). */
unsigned long names_cache_loads(const struct names_cache *c);
/* How many times the files were stat'ed (for tests). */
unsigned long names_cache_stamps(const struct names_cache *c);
void names_cache_free(struct names_cache *c);
/* A hash of every name n holds, computed once when n was loaded: equal for names that print
 * alike (0 for NULL). O(1). */
uint64_t names_hash(const struct names *n);

/* Name for a number as `ip` prints it; falls back to the decimal number in buf. */
const char *names_table(const struct names *n, uint32_t id, char buf[12]);
const char *names_protocol(const struct names *n, uint8_t id, char buf[12]);
const char *names_scope(const struct names *n, uint8_t id, char buf[12]);
const char *names_type(uint8_t type, char buf[12]);
/* IPv4: a realm (rt_realms; ids past 255 as numbers) and a TOS value (rt_dsfield, else
 * "0x%02x"), as `ip` prints them. */
const char *names_realm(const struct names *n, uint32_t id, char buf[12]);
const char *names_dsfield(const struct names *n, uint8_t id, char buf[12]);

/* Reverse lookups for filters: name or decimal number. 0 or -EINVAL. */
int names_table_id(const struct names *n, const char *s, uint32_t *id);
int names_protocol_id(const struct names *n, const char *s, uint8_t *id);
int names_type_id(const char *s, uint8_t *id);

#endif
