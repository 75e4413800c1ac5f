/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.h - the names iproute2 gives to table, protocol, scope and type numbers
 * (built-in names plus /etc/iproute2/{rt_tables,rt_protos,rt_scopes} and their .d/ *.conf files).
 * A names object is loaded by the collector for each snapshot and is immutable afterwards.
 */
#ifndef RTSNAP_NAMES_H
#define RTSNAP_NAMES_H

#include <stdint.h>

struct names;

/* Load from dir (NULL = /etc/iproute2). Missing files are fine. *out set only on success. */
int names_load(const char *dir, struct names **out) __attribute__((warn_unused_result));
void names_free(struct names *n);
/* A hash of every name n holds: equal for tables that print alike (0 for NULL). */
uint64_t names_hash(const struct names *n);

/* Name for a number as `ip` prints it; falls back to the decimal number in buf. */
const char *names_table(const struct names *n, uint32_t id, char buf[12]);
const char *names_protocol(const struct names *n, uint8_t id, char buf[12]);
const char *names_scope(const struct names *n, uint8_t id, char buf[12]);
const char *names_type(uint8_t type, char buf[12]);

/* Reverse lookups for filters: name or decimal number. 0 or -EINVAL. */
int names_table_id(const struct names *n, const char *s, uint32_t *id);
int names_protocol_id(const struct names *n, const char *s, uint8_t *id);
int names_type_id(const char *s, uint8_t *id);

#endif
