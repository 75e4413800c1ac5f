/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render_json_int.h - the pieces of an `ip -j` route object that IPv6 (render_json.c) and IPv4
 * (render_json4.c) print alike; for the text layer only. Each appends ,"key":value to an
 * object being written (*first: nothing written yet, no comma). Pure, any thread.
 */
#ifndef RTSNAP_RENDER_JSON_INT_H
#define RTSNAP_RENDER_JSON_INT_H

#include <stdint.h>
#include "rtsnap/route.h"
#include "rtsnap/routectx.h"
#include "rtsnap/strbuf.h"

/* "key":"val", val JSON-escaped. */
void render_json_put_str(struct strbuf *sb, int *first, const char *key, const char *val);
/* "flags":[...] as print_rt_flags() names RTNH_F_* and RTM_F_* bits. */
void render_json_put_flags(struct strbuf *sb, int *first, uint32_t flags);
/* "metrics":[{...}] as print_rta_metrics(). */
void render_json_put_metrics(struct strbuf *sb, int *first, const struct route_metrics *m);
/* "encap":"TYPE" and the type's keys, as lwt_print_encap(); e->type an LWTUNNEL_ENCAP_*. */
void render_json_put_encap(struct strbuf *sb, int *first, const struct route_ctx *c,
			   const struct route_encap *e);

#endif
