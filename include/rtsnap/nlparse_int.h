/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nlparse_int.h - the checks of nlparse.c that the IPv4 parser (nlparse4.c) shares; for the
 * netlink layer only. Pure functions, any thread.
 */
#ifndef RTSNAP_NLPARSE_INT_H
#define RTSNAP_NLPARSE_INT_H

#include <linux/rtnetlink.h>
#include "rtsnap/nlparse.h"

/* RTA_METRICS a into *m, every metric's size checked. 0 or -EBADMSG. */
int nlparse_metrics(const struct rtattr *a, struct route_metrics *m)
    __attribute__((warn_unused_result));

/*
 * The encapsulation RTA_ENCAP_TYPE ta + RTA_ENCAP ea (either NULL: none), checked as for IPv6
 * routes and copied into out->encap_buf; *res is the copy or NULL. 0 or -EBADMSG.
 */
int nlparse_encap(const struct rtattr *ta, const struct rtattr *ea, struct nlparse_route *out,
		  const struct route_encap **res) __attribute__((warn_unused_result));

#endif
