// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http_status.c - /status (the snapshot, the collector's counters and health, the web
 * configuration, in JSON) and /healthz (fresh or stale).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtsnap/auth.h"
#include "rtsnap/http_endpoints.h"
#include "rtsnap/http_ns.h"
#include "rtsnap/names.h"
#include "rtsnap/stats.h"
#include "rtsnap/webconfig.h"

static void iso8601(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	int ms = (int)(ts->tv_nsec / 1000000);

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

/* The collector's state besides its counters (those come from the table: stats.h). */
static void status_collector(const struct collector_stats *st, json_t *o, int64_t now_ms)
{
	int64_t overrun = stats_get(st->last_enobufs_mono_ms);

	json_object_set_new(o, "resync_running",
			    stats_get(st->resync_phase) == 2   ? json_string("merge")
			    : stats_get(st->resync_phase) == 1 ? json_string("dump")
							       : json_null());
	json_object_set_new(o, "last_overrun_age_seconds",
			    overrun ? json_real((double)(now_ms - overrun) / 1000.0) : json_null());
}

/* An instance's snapshot s (NULL: none published yet) and counters st into o. */
static void status_snapshot(const struct snapshot *s, const struct collector_stats *st, json_t *o,
			    int64_t now_ms)
{
	json_t *tables = json_array(), *coll = json_object();
	struct timespec at;
	char when[64], b[12];
	size_t routes = 0;

	for (size_t i = 0; s && i < snapshot_ntables(s); i++) {
		const struct snapshot_table *t = snapshot_table_at(s, i);

		routes += t->routes;
		json_array_append_new(
		    tables, json_pack("{s:I,s:s,s:I,s:I}", "id", (json_int_t)t->id, "name",
				      names_table(snapshot_ctx(s)->names, t->id, b), "routes",
				      (json_int_t)t->routes, "proc_lines", (json_int_t)t->lines));
	}
	if (s) {
		at = snapshot_taken_at(s);
		iso8601(&at, when, sizeof(when));
	}
	json_object_set_new(o, "generation",
			    s ? json_integer((json_int_t)snapshot_generation(s)) : json_null());
	json_object_set_new(o, "taken_at", s ? json_string(when) : json_null());
	json_object_set_new(o, "age_seconds",
			    s ? json_real((double)(now_ms - snapshot_taken_mono_ms(s)) / 1000.0)
			      : json_null());
	json_object_set_new(o, "duration_seconds",
			    s ? json_real(snapshot_duration_s(s)) : json_null());
	json_object_set_new(o, "trigger",
			    s ? json_string(stats_trigger_name(snapshot_trigger(s))) : json_null());
	json_object_set_new(o, "stale", json_boolean(!s || !stats_is_fresh(st)));
	json_object_set_new(o, "interval_seconds",
			    json_integer((json_int_t)stats_get(st->interval_s)));
	json_object_set_new(o, "routes", json_integer((json_int_t)routes));
	json_object_set_new(o, "proc_bytes",
			    json_integer(s ? (json_int_t)snapshot_proc_len(s) : 0));
	json_object_set_new(o, "expiring", json_integer(s ? (json_int_t)snapshot_nexpiring(s) : 0));
	json_object_set_new(o, "tables", tables);
	stats_status_json(st, o, coll); /* every counter, from the table */
	status_collector(st, coll, now_ms);
	json_object_set_new(o, "collector", coll);
}

/* st's last error and the faults set now into o. */
static void status_faults(const struct collector_stats *st, json_t *o, int64_t now_ms)
{
	json_t *faults = json_array();

	json_object_set_new(o, "last_error",
			    stats_get(st->last_error)
				? json_string(strerror(-stats_get(st->last_error)))
				: json_null());
	stats_faults_json(st, faults, now_ms); /* every fault set now */
	json_object_set_new(o, "faults", faults);
}

/*
 * The IPv6 instance at the top level (as before there was another), web_config, then with
 * --family all the IPv4 instance's own as "inet": its snapshot (rq->snap2, the one the ETag
 * "G.G4" names), counters and faults. "family" names the top level's instance: with IPv4
 * alone (--family inet) the top level is the IPv4 instance's, which "inet" repeats, so that
 * a client of either layout reads it (the ETag is then its generation alone).
 */
enum MHD_Result http_ep_status(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	enum MHD_Result res;
	json_t *o;
	char *body;

	if (http_args_check(rq, allowed, &res) || http_no_snapshot(rq, &res))
		return res;
	o = json_object();
	json_object_set_new(o, "version", json_string(RTSNAP_VERSION));
	json_object_set_new(o, "family", json_string(rq->no_inet6 ? "inet" : "inet6"));
	if (rq->netns) /* /netns/NAME/status: that namespace's */
		json_object_set_new(o, "netns", json_string(rq->netns));
	status_snapshot(rq->snap, rq->stats, o, rq->now_ms);
	if (rq->web) {
		const struct webconfig *wc = rq->web;
		struct auth_stats as;

		auth_stats(&as);
		json_object_set_new(
		    o, "web_config",
		    json_pack("{s:s,s:b,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "path", wc->path,
			      "tls", wc->tls, "client_auth_type",
			      wc->tls ? webconfig_client_auth_name(wc->client_auth) : "none",
			      "basic_auth_users", (json_int_t)wc->nusers, "bcrypt_checks",
			      (json_int_t)as.bcrypt_runs, "cached_checks",
			      (json_int_t)(as.cached_ok + as.cached_bad), "cached_refusals",
			      (json_int_t)as.cached_bad, "coalesced_checks",
			      (json_int_t)as.coalesced, "limited_checks", (json_int_t)as.limited,
			      "busy_checks", (json_int_t)as.busy, "checks_waiting",
			      (json_int_t)as.queued));
	}
	status_faults(rq->stats, o, rq->now_ms);
	if (rq->chain4 && rq->stats4) { /* rq->snap2: the dispatcher took it for the ETag */
		json_t *o4 = json_object();

		/* IPv4 alone: rq->snap, which the top level shows too */
		status_snapshot(rq->no_inet6 ? rq->snap : rq->snap2, rq->stats4, o4, rq->now_ms);
		status_faults(rq->stats4, o4, rq->now_ms);
		json_object_set_new(o, "inet", o4);
	}
	body = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!body)
		return http_send_error(rq, 500, "out of memory");
	return http_send_buffer(rq, 200, "application/json", body, strlen(body));
}

/* Is every instance of a served namespace fresh (a snapshot published, stats fresh)? */
static int ns_fresh(const struct http_ns_view *v)
{
	struct snapshot *s = snapshot_acquire(v->chain);
	int fresh = s && stats_is_fresh(v->stats) && (!v->stats4 || stats_is_fresh(v->stats4));

	snapshot_release(s);
	return fresh;
}

/*
 * "ok" (200) when every instance followed is fresh; else "stale" (503). The generation is the
 * IPv6 instance's (the IPv4 one's when it is followed alone). Of the daemon's own namespace
 * (/healthz): its instances and those of every named namespace served (--netns), the stale
 * ones named in "stale_netns"; of a named one (/netns/NAME/healthz): its own.
 */
enum MHD_Result http_ep_healthz(struct http_req *rq)
{
	static const char *const allowed[] = { NULL };
	enum MHD_Result res;
	int fresh =
	    rq->snap && stats_is_fresh(rq->stats) && (!rq->stats4 || stats_is_fresh(rq->stats4));
	json_t *stale = NULL;
	char *body, *list = NULL;

	if (http_args_check(rq, allowed, &res))
		return res;
	if (!rq->netns) {
		struct http_ns **v = NULL;
		size_t n = 0;

		if (http_ns_list(&v, &n))
			return http_send_error(rq, 500, "out of memory");
		for (size_t i = 0; i < n; i++) {
			const struct http_ns_view *nv = http_ns_view(v[i]);

			if (ns_fresh(nv))
				continue;
			fresh = 0;
			if (!stale)
				stale = json_array();
			json_array_append_new(stale, json_string(nv->text));
		}
		http_ns_list_free(v, n);
		if (stale) {
			list = json_dumps(stale, JSON_COMPACT);
			json_decref(stale);
			if (!list)
				return http_send_error(rq, 500, "out of memory");
		}
	}
	if (asprintf(&body, "{\"status\":\"%s\",\"generation\":%llu%s%s}\n", fresh ? "ok" : "stale",
		     rq->snap ? (unsigned long long)snapshot_generation(rq->snap) : 0ULL,
		     list ? ",\"stale_netns\":" : "", list ? list : "") < 0) {
		free(list);
		return MHD_NO;
	}
	free(list);
	return http_send_buffer(rq, fresh ? 200 : 503, "application/json", body, strlen(body));
}
