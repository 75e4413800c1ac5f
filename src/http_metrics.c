// SPDX-License-Identifier: GPL-2.0-or-later
/* http_metrics.c - /metrics: the per-snapshot exposition plus the per-scrape values. */
#include "rtsnap/http_internal.h"

enum MHD_Result http_ep_metrics(struct http_req *rq)
{
	return http_send_error(rq, 501, "not implemented yet");
}
