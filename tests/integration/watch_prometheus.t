#!/bin/bash
# watch_prometheus.t - the watched-route alert rules (packaging/prometheus/rtsnapd.rules.yml,
# group rtsnap-watch) in a real Prometheus (Debian's prometheus) that scrapes rtsnapd and
# evaluates the rules every second, both inside one network namespace. rtsnapd watches the
# namespace's default route (gw6=default), its connected /64 (lan) and a lookup the default
# route covers (svc=lookup:...). Prometheus stores rtsnap_watch_present and
# rtsnap_watch_route_info as the kernel has them; the default route deleted, the missing alert
# goes pending then firing for gw6 and svc (never for lan), with the watch and family in its
# summary; the route added back through another gateway, the missing alert resolves and the
# moved alert fires with the new gateway in its labels; the route flapping (deleted and added
# again three more times), the flapping alert fires. The dashboard's watch panels' queries are
# valid PromQL that answer. The rules are the shipped file, with the
# missing alert's "for" cut from 1m to 3s (the only change) so that firing comes quickly.
# Skipped when this rtsnapd has no --watch.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq prometheus
require_rtsnapd
"$RTSNAPD" --help 2>&1 | grep -q -- --watch ||
	tap_skip_all "this rtsnapd has no --watch (the daemon side of watched routes is not built in)"

PROM=127.0.0.1:9090
RULES=$TOP/packaging/prometheus/rtsnapd.rules.yml
ns_new NS
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1 && ip -n "$NS" -6 addr add 2001:db8:5::1/64 dev v0 nodad &&
	ip -n "$NS" -6 route add default via 2001:db8:5::2 dev v0 metric 1024 ||
	tap_bail "cannot set up the namespace"

# the shipped rules, RtsnapWatchedRouteMissing's "for: 1m" made "for: 3s"
awk '/alert: RtsnapWatchedRouteMissing/ { m = 1 } m && /^ *for: 1m$/ { sub(/1m/, "3s"); m = 0 } { print }' \
	"$RULES" >"$RTSNAP_TMP/rules.yml"
tap_is "$(diff "$RULES" "$RTSNAP_TMP/rules.yml" | grep -c '^[<>]')" 2 "the rules under test: the shipped file, one 'for' changed"
cat >"$RTSNAP_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RTSNAP_TMP/rules.yml
scrape_configs:
  - job_name: rtsnap
    static_configs:
      - targets: ['[::1]:9816']
EOF

daemon_start "$NS" --interval 0 --debounce-ms 50 --watch 'gw6=default' --watch 'lan=2001:db8:5::/64' \
	--watch 'svc=lookup:2001:db8:99::1'
tap_ok $? "rtsnapd starts with three --watch" || tap_done

ip netns exec "$NS" prometheus --config.file="$RTSNAP_TMP/prometheus.yml" \
	--storage.tsdb.path="$RTSNAP_TMP/prometheus-data" --web.listen-address="$PROM" \
	--log.level=warn >"$RTSNAP_TMP/prometheus.log" 2>&1 </dev/null &
bg_register $!

prom_ready() { ip netns exec "$NS" curl -sf --max-time 2 "http://$PROM/-/ready"; }
promget() { ip netns exec "$NS" curl -sS --max-time 5 "http://$PROM$1"; }
# promq QUERY: the JSON answer of an instant query
promq() {
	ip netns exec "$NS" curl -sS --max-time 5 "http://$PROM/api/v1/query" --data-urlencode "query=$1"
}
# val QUERY: the value of its first sample ('' if none)
val() { promq "$1" | jq -r '.data.result[0].value[1] // empty'; }
target_up() { [ "$(val 'up{job="rtsnap"}')" = 1 ]; }
# alert NAME WATCH: the state of alert NAME for watch WATCH ('' when it is not active)
alert() {
	promget /api/v1/alerts | jq -r --arg a "$1" --arg w "$2" \
		'[.data.alerts[] | select(.labels.alertname == $a and .labels.watch == $w) | .state] | first // empty'
}
alert_json() {
	promget /api/v1/alerts | jq -c --arg a "$1" --arg w "$2" \
		'[.data.alerts[] | select(.labels.alertname == $a and .labels.watch == $w)] | first // empty'
}
# watch_alerts: the active alerts of the rtsnap-watch group, "NAME WATCH STATE" lines
watch_alerts() {
	promget /api/v1/alerts | jq -r '.data.alerts[] | select(.labels.alertname | startswith("RtsnapWatched"))
		| "\(.labels.alertname) \(.labels.watch) \(.state)"' | sort
}

wait_until 20 prom_ready
tap_ok "$(prom_ready >/dev/null; echo $?)" "Prometheus is ready on $PROM inside the namespace" ||
	{ tap_diag "$(tail -n 20 "$RTSNAP_TMP/prometheus.log")"; tap_done; }
wait_until 20 target_up
tap_ok "$(target_up; echo $?)" "Prometheus scrapes rtsnapd: up{job=\"rtsnap\"} == 1"
tap_is "$(promget /api/v1/rules | jq -r '[.data.groups[] | select(.name == "rtsnap-watch") | .rules[] | select(.health == "ok") | .name] | join(" ")')" \
	"RtsnapWatchedRouteMissing RtsnapWatchedRouteMoved RtsnapWatchedRouteFlapping" \
	"Prometheus loaded the rtsnap-watch group's three rules, healthy"

# what Prometheus stores about the watches
present() { promq 'rtsnap_watch_present{job="rtsnap"}' | jq -r '.data.result[] | "\(.metric.watch) \(.metric.family) \(.metric.netns // "") \(.value[1])"' | sort; }
wait_true 20 '[ "$(present | wc -l)" = 3 ]'
tap_is "$(present | tr '\n' ';')" "gw6 inet6  1;lan inet6  1;svc inet6  1;" \
	"rtsnap_watch_present: the three watches present (family inet6, no netns label)"
tap_is "$(val 'rtsnap_watches{job="rtsnap"}')" 3 "rtsnap_watches = 3"
info() { # WATCH: its rtsnap_watch_route_info labels dst|gateway|dev|table|nexthops
	promq "rtsnap_watch_route_info{job=\"rtsnap\",watch=\"$1\"} == 1" |
		jq -r '.data.result[] | .metric | "\(.dst | if . == "::/0" then "default" else . end)|\(.gateway)|\(.dev)|\(.table)|\(.nexthops)"'
}
tap_is "$(info gw6)" "default|2001:db8:5::2|v0|main|1" "rtsnap_watch_route_info for gw6: default (::/0) via 2001:db8:5::2 dev v0, table main, 1 next hop"
tap_is "$(info svc)" "default|2001:db8:5::2|v0|main|1" "... for svc (a lookup the default route answers): the same route"
tap_is "$(info lan | cut -d'|' -f1,3)" "2001:db8:5::/64|v0" "... for lan: 2001:db8:5::/64 dev v0"
# the dashboard's watch panels: each query (the variables for every job and instance) is valid
# PromQL and answers, and the table's four queries give the three watches
dash=$TOP/packaging/grafana/rtsnapd.json
dash_ok() { # the queries that do not answer, in $RTSNAP_TMP/dash.bad; their count in n
	local q r
	n=0
	: >"$RTSNAP_TMP/dash.bad"
	while IFS= read -r q; do
		n=$((n + 1))
		r=$(promq "$(sed 's/\$job/.*/g; s/\$instance/.*/g' <<<"$q")")
		[ "$(jq -r '.status' <<<"$r")" = success ] && [ "$(jq '.data.result | length' <<<"$r")" -gt 0 ] ||
			echo "[$q] $(jq -c '.error // .data.result' <<<"$r")" >>"$RTSNAP_TMP/dash.bad"
	done < <(jq -r '.panels[] | select(any(.targets[]; .expr | contains("rtsnap_watch"))) | .targets[].expr' "$dash")
	[ ! -s "$RTSNAP_TMP/dash.bad" ]
}
wait_until 15 dash_ok # increase() needs two samples
dash_ok
tap_is "$(cat "$RTSNAP_TMP/dash.bad")" "" "the dashboard's watch panels: their $n queries are valid and answer"
tap_is "$(promq 'count(rtsnap_watch_present) + count(rtsnap_watch_route_info) + count(rtsnap_watch_last_change_timestamp_seconds) + count(rtsnap_watch_changes_total)' |
	jq -r '.data.result[0].value[1]')" 12 "... the table's four series, one per watch each"
sleep 5 # some evaluations with everything present
tap_is "$(watch_alerts)" "" "every watched route present: no watch alert is active"
changes0=$(val 'rtsnap_watch_changes_total{job="rtsnap",watch="gw6"}')

# ---------------------------------------------------------------- missing
ip -n "$NS" -6 route del default via 2001:db8:5::2 dev v0 || tap_bail "cannot delete the default route"
wait_true 20 '[ "$(val "rtsnap_watch_present{job=\"rtsnap\",watch=\"gw6\"}")" = 0 ]'
tap_is "$(val 'rtsnap_watch_present{job="rtsnap",watch="gw6"}')" 0 "the default route deleted: Prometheus has rtsnap_watch_present{watch=\"gw6\"} 0"
tap_is "$(info gw6)" "" "... and no rtsnap_watch_route_info for it"
seen=''
for _ in $(seq 100); do # pending first, for 3 s; then firing
	s=$(alert RtsnapWatchedRouteMissing gw6)
	[ -n "$s" ] && [[ " $seen " != *" $s "* ]] && seen="$seen $s"
	[ "$s" = firing ] && break
	sleep 0.2
done
tap_is "${seen# }" "pending firing" "RtsnapWatchedRouteMissing for gw6 goes pending, then firing (/api/v1/alerts)"
a=$(alert_json RtsnapWatchedRouteMissing gw6)
tap_is "$(jq -r '[.labels.severity, .labels.family, .labels.netns // "-", .labels.instance] | join(" ")' <<<"$a")" \
	"critical inet6 - [::1]:9816" "its labels: severity critical, family inet6, no netns, the instance"
tap_is "$(jq -r .annotations.summary <<<"$a")" "rtsnapd on [::1]:9816: watched route gw6 (inet6) is missing" \
	"its summary names the instance, the watch and the family"
wait_true 10 '[ "$(alert RtsnapWatchedRouteMissing svc)" = firing ]'
tap_is "$(alert RtsnapWatchedRouteMissing svc)" firing "the lookup no route answers now (svc): firing too"
tap_is "$(alert RtsnapWatchedRouteMissing lan)" "" "the connected route, still there (lan): no alert"
changes1=$(val 'rtsnap_watch_changes_total{job="rtsnap",watch="gw6"}')
tap_ok "$([ "${changes1:-0}" -gt "${changes0:-0}" ]; echo $?)" "rtsnap_watch_changes_total{watch=\"gw6\"} rose ($changes0 -> $changes1)"

# ---------------------------------------------------------------- back, through another gateway
ip -n "$NS" -6 route add default via 2001:db8:5::3 dev v0 metric 1024 || tap_bail "cannot add the default route"
wait_true 20 '[ -z "$(alert RtsnapWatchedRouteMissing gw6)" ] && [ -z "$(alert RtsnapWatchedRouteMissing svc)" ]'
tap_is "$(alert RtsnapWatchedRouteMissing gw6)|$(alert RtsnapWatchedRouteMissing svc)" "|" \
	"the default route back: the missing alerts resolve"
tap_is "$(info gw6)" "default|2001:db8:5::3|v0|main|1" "rtsnap_watch_route_info for gw6: via 2001:db8:5::3 now"
wait_true 10 '[ "$(alert RtsnapWatchedRouteMoved gw6)" = firing ]'
a=$(alert_json RtsnapWatchedRouteMoved gw6)
tap_is "$(jq -r '.state + " " + .labels.gateway + " " + .labels.dev' <<<"$a")" "firing 2001:db8:5::3 v0" \
	"another gateway within 10 minutes: RtsnapWatchedRouteMoved fires for gw6, on the new next hop"
tap_is "$(jq -r .annotations.summary <<<"$a")" "rtsnapd on [::1]:9816: watched route gw6 (inet6) moved to via 2001:db8:5::3 dev v0" \
	"its summary names the watch and the new next hop"
tap_is "$(alert RtsnapWatchedRouteMoved lan)" "" "lan did not move: no alert"
tap_is "$(alert RtsnapWatchedRouteFlapping gw6)" "" "2 changes: not flapping"

# ---------------------------------------------------------------- flapping
for _ in 1 2 3; do
	ip -n "$NS" -6 route del default via 2001:db8:5::3 dev v0 && sleep 0.5 &&
		ip -n "$NS" -6 route add default via 2001:db8:5::3 dev v0 metric 1024 && sleep 0.5
done
wait_true 20 '[ "$(alert RtsnapWatchedRouteFlapping gw6)" = firing ]'
tap_is "$(alert RtsnapWatchedRouteFlapping gw6)" firing \
	"deleted and added again 3 more times (rtsnap_watch_changes_total $changes0 -> $(val 'rtsnap_watch_changes_total{job="rtsnap",watch="gw6"}')): RtsnapWatchedRouteFlapping fires for gw6"
tap_is "$(alert RtsnapWatchedRouteFlapping lan)" "" "... not for lan"
# the last add may be newer than Prometheus's last scrape when the alert fires
wait_true 10 '[ "$(val '"'"'rtsnap_watch_present{job="rtsnap",watch="gw6"}'"'"')" = 1 ]'
tap_is "$(val 'rtsnap_watch_present{job="rtsnap",watch="gw6"}')" 1 "gw6 present at the end"

daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"
tap_done
