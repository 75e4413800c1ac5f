#!/bin/bash
# packaging/prometheus and packaging/grafana: the alert rules pass `promtool check rules`
# and their unit tests (`promtool test rules`); every metric the rules and the Grafana
# dashboard name is one that a running rtsnapd's /metrics exposes, and `promtool check
# metrics` finds nothing to say about that exposition. The rtsnap_watch* series need a watch:
# rtsnapd runs with --watch on the namespace's default route (an rtsnapd without --watch: their
# names are left out, and a skip says so).
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq promtool
require_rtsnapd

P=$TOP/packaging/prometheus
G=$TOP/packaging/grafana
tap_cmd "promtool check rules rtsnapd.rules.yml" promtool check rules "$P/rtsnapd.rules.yml"
tap_cmd "promtool test rules rtsnapd.rules.test.yml" sh -c "cd '$P' && promtool test rules rtsnapd.rules.test.yml"
tap_ok "$(jq -e '.panels | length > 0' "$G/rtsnapd.json" >/dev/null; echo $?)" "the dashboard is JSON with panels"

ns_new NS
# an expiring route, so that the expiry series have samples
veth_pair "$NS" v0 "$NS" v1 && ip -n "$NS" addr add 2001:db8:5::1/64 dev v0 nodad &&
	ip -n "$NS" -6 route add 2001:db8:e1::/64 via 2001:db8:5::2 expires 900 ||
	tap_bail "cannot set up the namespace"
# a watched route (present: the rtsnap_watch_* series the rules and dashboard name), when the
# daemon knows --watch; without it those names are left out of the comparison below
if "$RTSNAPD" --help 2>&1 | grep -q -- --watch; then
	WATCH=(--watch 'gw6=default')
	ip -n "$NS" -6 route add default via 2001:db8:5::2 || tap_bail "cannot add the default route"
else
	WATCH=()
fi
daemon_start "$NS" --interval 0 "${WATCH[@]}" || tap_bail "rtsnapd did not start"
http_get "$NS" /metrics >"$RTSNAP_TMP/metrics" || tap_bail "no /metrics"
# exposed names: every sample's name (histograms give _bucket, _sum, _count)
sed -n 's/^\([a-zA-Z_:][a-zA-Z0-9_:]*\)[{ ].*/\1/p' "$RTSNAP_TMP/metrics" | sort -u >"$RTSNAP_TMP/exposed"
tap_ok "$([ -s "$RTSNAP_TMP/exposed" ]; echo $?)" "/metrics exposes $(wc -l <"$RTSNAP_TMP/exposed") metric names"

# named: identifiers starting with rtsnap_ or process_ in the rules' expressions and
# annotations, and in the dashboard's targets
names() { grep -o '\b\(rtsnap\|process\)_[a-z0-9_]*' | sort -u; }
grep -E '^\s+(expr|description):' "$P/rtsnapd.rules.yml" | names >"$RTSNAP_TMP/rules.names"
jq -r '.panels[].targets[].expr' "$G/rtsnapd.json" | names >"$RTSNAP_TMP/dash.names"
jq -r '.templating.list[].query // empty' "$G/rtsnapd.json" | names >>"$RTSNAP_TMP/dash.names"
for what in rules dash; do
	[ ${#WATCH[@]} -gt 0 ] || sed -i '/^rtsnap_watch/d' "$RTSNAP_TMP/$what.names"
	missing=$(comm -23 <(sort -u "$RTSNAP_TMP/$what.names") "$RTSNAP_TMP/exposed")
	tap_is "$missing" "" "every metric the $what name is exposed ($(sort -u "$RTSNAP_TMP/$what.names" | wc -l) names)"
done
[ ${#WATCH[@]} -gt 0 ] || tap_skip "the rtsnap_watch* names: this rtsnapd has no --watch"
tap_cmd "promtool check metrics: the exposition is clean" sh -c "promtool check metrics <'$RTSNAP_TMP/metrics'"
daemon_stop "$NS"
tap_done
