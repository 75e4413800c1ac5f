#!/bin/bash
# A real Prometheus server (Debian's prometheus) scrapes rtsnapd every second, both inside one
# network namespace (its loopback). Through Prometheus's HTTP API (/api/v1/query) the route
# counts by table/protocol/type and the expiring routes per table must equal what the kernel
# lists in the namespace; after routes are added and removed, Prometheus must see the new
# values (a vanished table/protocol/type combination goes stale) within a bounded wait.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
require_root
require_cmd ip curl jq prometheus
require_rtsnapd

PROM=127.0.0.1:9090
ns_new NS
rk_static "$NS" >"$RTSNAP_TMP/rk.log" 2>&1 || tap_bail "rk_static failed: $(cat "$RTSNAP_TMP/rk.log")"
ip -n "$NS" -6 route add 2001:db8:e1::/64 via 2001:db8:5::2 table 100 expires 900
ip -n "$NS" -6 route add 2001:db8:e2::/64 via 2001:db8:5::2 expires 1200
daemon_start "$NS" --interval 0 --debounce-ms 50 || tap_bail "rtsnapd did not start"

cat >"$RTSNAP_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rtsnap
    static_configs:
      - targets: ['[::1]:9816']
EOF
ip netns exec "$NS" prometheus --config.file="$RTSNAP_TMP/prometheus.yml" \
	--storage.tsdb.path="$RTSNAP_TMP/prometheus-data" --web.listen-address="$PROM" \
	--log.level=warn >"$RTSNAP_TMP/prometheus.log" 2>&1 </dev/null &
bg_register $!

prom_ready() { ip netns exec "$NS" curl -sf --max-time 2 "http://$PROM/-/ready"; }
# promq QUERY: the JSON answer of an instant query
promq() {
	ip netns exec "$NS" curl -sS --max-time 5 "http://$PROM/api/v1/query" --data-urlencode "query=$1"
}
target_up() { [ "$(promq 'up{job="rtsnap"}' | jq -r '.data.result[0].value[1]')" = 1 ]; }

wait_until 20 prom_ready
tap_ok "$(prom_ready >/dev/null; echo $?)" "Prometheus is ready on $PROM inside the namespace"
prom_ready >/dev/null || tap_diag "$(tail -n 20 "$RTSNAP_TMP/prometheus.log")"
wait_until 20 target_up
tap_ok "$(target_up; echo $?)" "Prometheus scrapes rtsnapd: up{job=\"rtsnap\"} == 1"
targets=$(ip netns exec "$NS" curl -sS --max-time 5 "http://$PROM/api/v1/targets")
tap_is "$(jq -r '.data.activeTargets[0].health' <<<"$targets")" up "target health is up"
tap_is "$(jq -r '.data.activeTargets[0].lastError' <<<"$targets")" "" "no scrape error"

# Both sides as sorted "table protocol type count" lines.
k_routes() {
	kernel_json "$NS" | jq -r '[.[] | "\(.table // "main") \(.protocol // "boot") \(.type // "unicast")"]
		| group_by(.) | .[] | "\(.[0]) \(length)"' | sort
}
p_routes() {
	promq 'rtsnap_routes{job="rtsnap",family="inet6"}' |
		jq -r '.data.result[] | "\(.metric.table) \(.metric.protocol) \(.metric.type) \(.value[1])"' | sort
}
k_expiring() {
	kernel_json "$NS" | jq -r '[.[] | select(.expires != null) | (.table // "main")]
		| group_by(.) | .[] | "\(.[0]) \(length)"' | sort
}
p_expiring() {
	promq 'rtsnap_routes_expiring{job="rtsnap",family="inet6"} > 0' |
		jq -r '.data.result[] | "\(.metric.table) \(.value[1])"' | sort
}
same() { # WHAT: Prometheus's answer equals the kernel's listing right now
	k_$1 >"$RTSNAP_TMP/k.$1"
	p_$1 >"$RTSNAP_TMP/p.$1"
	[ -s "$RTSNAP_TMP/k.$1" ] && cmp -s "$RTSNAP_TMP/k.$1" "$RTSNAP_TMP/p.$1"
}

wait_until 10 same routes
tap_diff "$RTSNAP_TMP/k.routes" "$RTSNAP_TMP/p.routes" "Prometheus: rtsnap_routes by table/protocol/type = the kernel's listing"
wait_until 5 same expiring
tap_diff "$RTSNAP_TMP/k.expiring" "$RTSNAP_TMP/p.expiring" "Prometheus: rtsnap_routes_expiring by table = the kernel's"
ktotal=$(kernel_json "$NS" | jq length)
tap_is "$(promq 'sum(rtsnap_routes{job="rtsnap",family="inet6"})' | jq -r '.data.result[0].value[1]')" "$ktotal" \
	"Prometheus: sum(rtsnap_routes{family=\"inet6\"}) = routes the kernel lists ($ktotal)"
k4total=$(ip -n "$NS" -j -4 route show table all | jq length)
tap_is "$(promq 'sum(rtsnap_routes{job="rtsnap",family="inet"})' | jq -r '.data.result[0].value[1]')" "$k4total" \
	"Prometheus: sum(rtsnap_routes{family=\"inet\"}) = the IPv4 routes ip -4 lists ($k4total)"
gen0=$(promq 'rtsnap_snapshot_generation{family=""}' | jq -r '.data.result[0].value[1]')

# change the tables: a new table with bgp routes, blackholes in another, expiring routes,
# and remove the only proto-99 route (its series must go stale)
{
	for i in $(seq 1 30); do
		printf 'route add 2001:db8:b%x::/64 via 2001:db8:5::2 table 4242 proto bgp\n' "$i"
	done
	for i in $(seq 1 5); do
		printf 'route add blackhole 2001:db8:d%x::/64 table 100\n' "$i"
	done
	for i in $(seq 1 3); do
		printf 'route add 2001:db8:f%x::/64 via 2001:db8:5::2 table 4242 expires %d\n' "$i" $((600 + i))
	done
	echo 'route del 2001:db8:17::/64 dev s0 proto 99'
} | ip -n "$NS" -6 -batch - || tap_bail "cannot change the routes"
tap_ok "$(k_routes | grep -q '^main 99 '; [ $? = 1 ]; echo $?)" "the kernel no longer lists a proto 99 route"

wait_until 20 same routes
tap_diff "$RTSNAP_TMP/k.routes" "$RTSNAP_TMP/p.routes" "after the change, Prometheus's rtsnap_routes = the kernel's listing"
tap_ok "$(grep -q '^4242 bgp unicast 30$' "$RTSNAP_TMP/p.routes"; echo $?)" "Prometheus sees the 30 new bgp routes in table 4242"
tap_ok "$(! grep -q '^main 99 ' "$RTSNAP_TMP/p.routes"; echo $?)" "the vanished proto 99 series is stale in Prometheus"
wait_until 10 same expiring
tap_diff "$RTSNAP_TMP/k.expiring" "$RTSNAP_TMP/p.expiring" "after the change, Prometheus's rtsnap_routes_expiring = the kernel's"
gen1=$(promq 'rtsnap_snapshot_generation{family=""}' | jq -r '.data.result[0].value[1]')
tap_ok "$([ "$gen1" -gt "$gen0" ]; echo $?)" "Prometheus sees the generation advance ($gen0 -> $gen1)"
next=$(promq 'rtsnap_routes_next_expiry_seconds' | jq -r '.data.result[0].value[1]')
kmin=$(kernel_json "$NS" | jq '[.[] | select(.expires != null and .expires > 0) | .expires] | min')
tap_ok "$(awk -v g="$next" -v k="$kmin" 'BEGIN { exit !(g >= k - 3 && g <= k + 3) }'; echo $?)" \
	"Prometheus: rtsnap_routes_next_expiry_seconds ($next) ~ the kernel's earliest expires ($kmin)"

# what Prometheus stored about rtsnapd itself
p_scrapes() { promq 'rtsnap_http_requests_total{endpoint="/metrics",code="200"}' | jq -r '.data.result[0].value[1] // 0'; }
scraped3() { [ "$(p_scrapes)" -ge 3 ]; }
wait_until 10 scraped3
scrapes=$(p_scrapes)
tap_ok "$([ "${scrapes:-0}" -ge 3 ]; echo $?)" "rtsnapd counted Prometheus's scrapes ($scrapes)"
tap_is "$(promq 'count(process_start_time_seconds{job="rtsnap"}) + count(process_resident_memory_bytes{job="rtsnap"}) + count(rtsnap_build_info{job="rtsnap"})' | jq -r '.data.result[0].value[1]')" 3 \
	"process metrics and rtsnap_build_info stored"
tap_is "$(promq 'histogram_quantile(0.5, rtsnap_collection_duration_seconds_bucket{job="rtsnap",family=""}) >= 0' | jq -r '.data.result | length')" 1 \
	"the duration histogram is usable by histogram_quantile"

tap_done
