// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_netns.c - /netns: the namespaces served, the daemon's own first, then the named ones
 * (--netns) by name, each with where it is served, its generations and route counts per family
 * followed and whether it is healthy (as its /healthz decides). The registry is http_ns.c.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/stats.h"

/* "/netns/NAME/" with NAME percent-encoded (every byte but RFC 3986's unreserved ones). */
static char *ns_path(const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(name);
	char *p = malloc(sizeof("/netns//") + 3 * len), *o = p;

	if (!p)
		return NULL;
	o += strlen(strcpy(o, "/netns/"));
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
			*o++ = (char)*c;
		} else {
			*o++ = '%';
			*o++ = hex[*c >> 4];
			*o++ = hex[*c & 15];
		}
	}
	*o++ = '/';
	*o = '\0';
	return p;
}

/* An instance's generation and routes into o as gk and rk (null when not followed). */
static void inst_json(json_t *o, const char *gk, const char *rk, const struct snapshot *s,
		      int followed)
{
	json_object_set_new(
	    o, gk, followed && s ? json_integer((json_int_t)snapshot_generation(s)) : json_null());
	json_object_set_new(
	    o, rk, followed && s ? json_integer((json_int_t)snapshot_nroutes(s)) : json_null());
}

/* One namespace: s6/st6 its IPv6 instance's (NULL: not followed), s4/st4 its IPv4 one's. */
static json_t *ns_json(const char *name, const char *path, const struct snapshot *s6,
		       const struct collector_stats *st6, const struct snapshot *s4,
		       const struct collector_stats *st4)
{
	json_t *o = json_object(), *fam = json_array();
	int healthy = 1;

	if (st6) {
		json_array_append_new(fam, json_string("inet6"));
		healthy &= s6 && stats_is_fresh(st6);
	}
	if (st4) {
		json_array_append_new(fam, json_string("inet"));
		healthy &= s4 && stats_is_fresh(st4);
	}
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "own", json_boolean(!*name));
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "families", fam);
	inst_json(o, "generation", "routes", s6, st6 != NULL);
	inst_json(o, "generation4", "routes4", s4, st4 != NULL);
	json_object_set_new(o, "healthy", json_boolean(healthy));
	return o;
}

enum MHD_Result http_ep_netns(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	struct http_ns **v = NULL;
	struct snapshot *s4 = NULL;
	enum MHD_Result res;
	json_t *o, *arr;
	size_t n = 0;
	char *body;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	if (http_ns_list(&v, &n))
		return http_send_error(rq, 500, "out of memory");
	arr = json_array();
	if (rq->no_inet6) /* rq->snap is the IPv4 instance's */
		json_array_append_new(arr, ns_json("", "/", NULL, NULL, rq->snap, rq->stats4));
	else {
		s4 = rq->chain4 ? snapshot_acquire(rq->chain4) : NULL;
		json_array_append_new(arr, ns_json("", "/", rq->snap, rq->stats, s4, rq->stats4));
		snapshot_release(s4);
	}
	for (size_t i = 0; i < n; i++) {
		const struct http_ns_view *nv = http_ns_view(v[i]);
		struct snapshot *s = snapshot_acquire(nv->chain);
		char *path = ns_path(nv->name);

		s4 = nv->chain4 && !nv->no_inet6 ? snapshot_acquire(nv->chain4) : NULL;
		if (path)
			json_array_append_new(
			    arr, nv->no_inet6
				     ? ns_json(nv->text, path, NULL, NULL, s, nv->stats4)
				     : ns_json(nv->text, path, s, nv->stats, s4, nv->stats4));
		free(path);
		snapshot_release(s4);
		snapshot_release(s);
	}
	http_ns_list_free(v, n);
	o = json_pack("{s:o}", "namespaces", arr);
	body = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (!body)
		return http_send_error(rq, 500, "out of memory");
	{
		size_t l = strlen(body);
		char *b = realloc(body, l + 2);

		if (b) {
			body = b;
			body[l++] = '\n';
			body[l] = '\0';
		}
		return http_send_buffer(rq, 200, "application/json", body, l);
	}
}
