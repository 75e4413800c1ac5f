// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_web.c - the web page: "/" and the files under /web/, compiled into the binary
 * (build/gen/web_assets.c), and /web/about.json (host name and network namespace, which
 * the snapshot does not know).
 *
 * Assets are static and pre-compressed at build time, so a request copies nothing: the
 * body points at the generated arrays. Their ETag is a hash of the content, not the
 * snapshot generation (the page does not change with the routes; its data comes from
 * the other endpoints). Every response carries a strict Content-Security-Policy.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "rtsnap/http_web.h"

#define ABOUT_PATH "/web/about.json"

const struct web_asset *http_web_asset(const char *url)
{
	for (unsigned int i = 0; i < web_nassets; i++)
		if (strcmp(url, web_assets[i].path) == 0)
			return &web_assets[i];
	return NULL;
}

int http_web_path(const char *url)
{
	return strcmp(url, ABOUT_PATH) == 0 || http_web_asset(url) != NULL;
}

/*
 * The name under which `ip netns` knows the namespace this process runs in: the entry of
 * /run/netns that is the same nsfs inode as /proc/self/ns/net. NULL if there is none
 * (the initial namespace, or one created without ip netns). A readdir of a small tmpfs
 * directory; the page asks once per load.
 */
static char *netns_name(struct stat *self)
{
	struct dirent *de;
	char *name = NULL;
	DIR *d;

	if (stat("/proc/self/ns/net", self) != 0)
		return NULL;
	d = opendir("/run/netns");
	if (!d)
		return NULL;
	while (!name && (de = readdir(d)) != NULL) {
		char path[300];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (stat(path, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
			name = strdup(de->d_name);
	}
	closedir(d);
	return name;
}

static enum MHD_Result send_about(struct http_req *rq, const char *const *hdrs)
{
	struct stat self = { 0 }, init;
	struct utsname u;
	char *ns = netns_name(&self), *body;
	int is_init = self.st_ino && stat("/proc/1/ns/net", &init) == 0 &&
		      init.st_dev == self.st_dev && init.st_ino == self.st_ino;
	json_t *o = json_object();

	if (uname(&u) != 0)
		u.nodename[0] = 0;
	/* jansson refuses invalid UTF-8: such a name becomes null rather than failing */
	json_object_set_new(o, "hostname", json_string(u.nodename));
	json_object_set_new(o, "netns", ns ? json_string(ns) : json_null());
	json_object_set_new(o, "netns_inode", json_integer((json_int_t)self.st_ino));
	json_object_set_new(o, "netns_initial", json_boolean(is_init));
	json_object_set_new(o, "version", json_string(RTSNAP_VERSION));
	free(ns);
	body = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!body)
		return http_send_error(rq, 500, "out of memory");
	rq->headers = hdrs;
	return http_send_buffer(rq, 200, "application/json", body, strlen(body));
}

enum MHD_Result http_ep_web(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	static const char *const hdr_about[] = { "Content-Security-Policy", HTTP_WEB_CSP,
						 "X-Content-Type-Options", "nosniff", NULL };
	const char *hdrs[] = { "Content-Security-Policy",
			       HTTP_WEB_CSP,
			       "X-Content-Type-Options",
			       "nosniff",
			       "Referrer-Policy",
			       "no-referrer",
			       "Vary",
			       "Accept-Encoding",
			       "ETag",
			       NULL,
			       NULL, /* Content-Encoding */
			       NULL,
			       NULL };
	const struct web_asset *a;
	struct render_seg *seg;
	enum MHD_Result res;
	const char *inm;

	/* the page's bytes do not depend on the snapshot: no generation ETag */
	snapshot_release(rq->snap);
	rq->snap = NULL;
	if (http_args_check(rq, allowed, &res))
		return res;
	if (strcmp(rq->path, ABOUT_PATH) == 0)
		return send_about(rq, hdr_about);
	a = http_web_asset(rq->path);
	if (!a)
		return http_send_error(rq, 404, "no such file: %.128s", rq->path);
	hdrs[9] = a->etag;
	rq->headers = hdrs;
	inm = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (inm && (strcmp(inm, "*") == 0 || strstr(inm, a->etag))) {
		char *empty = malloc(1);

		if (!empty)
			return MHD_NO;
		res = http_send_buffer(rq, 304, NULL, empty, 0);
		rq->headers = NULL;
		return res;
	}
	seg = malloc(sizeof(*seg));
	if (!seg)
		return MHD_NO;
	if (http_accepts_gzip(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_ACCEPT_ENCODING))) {
		hdrs[10] = "Content-Encoding";
		hdrs[11] = "gzip";
		seg->p = (const char *)a->gz;
		seg->len = a->gz_len;
	} else {
		seg->p = (const char *)a->plain;
		seg->len = a->plain_len;
	}
	/* no snapshot reference to hold: the segment is static */
	res = http_send_snapshot_segs(rq, 200, a->ctype, seg, 1, NULL);
	rq->headers = NULL;
	return res;
}
