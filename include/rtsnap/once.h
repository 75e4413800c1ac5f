/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * once.h - `rtsnapd --once`: one dump of the namespace the process runs in, printed to a file
 * descriptor as the kernel prints it, and nothing kept. IPv6 as /proc/net/ipv6_route or
 * `ip -j -6 route show table all`; IPv4 as /proc/net/route or `ip -j -4 route show table all`
 * (dump4.h, render4.h); both: the IPv4 text first, then the IPv6 text (JSON: one array, the
 * IPv4 objects first). The calling thread, no other thread needed.
 */
#ifndef RTSNAP_ONCE_H
#define RTSNAP_ONCE_H

/* Families, as a set: --family inet, inet6 or all. */
#define ONCE_INET 1u
#define ONCE_INET6 2u
#define ONCE_ALL (ONCE_INET | ONCE_INET6)

/* Parse "inet", "inet6" or "all" into *out. 0 or -EINVAL. */
int once_family_parse(const char *s, unsigned int *out) __attribute__((warn_unused_result));

/*
 * Dump the families of the set and write their text to fd: proc text (json 0) or JSON (1).
 * 0 or a negative errno; what failed is logged (log.h).
 */
int once_write(int fd, unsigned int families, int json) __attribute__((warn_unused_result));

#endif
