// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_proc.c - /ipv6_route and /proc/net/ipv6_route: the kernel's file, rendered from the
 * snapshot's records as libmicrohttpd asks for it (http_send_proc), holding the snapshot until
 * the last byte is sent.
 */
#include "rtsnap/http_endpoints.h"

enum MHD_Result http_ep_proc(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	enum MHD_Result res;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	return http_send_proc(rq);
}
