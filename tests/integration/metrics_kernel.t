#!/bin/bash
# /metrics against the kernel's own listing: for namespaces each holding one kind of routes
# (tests/lib/routekinds.sh), the route gauges by table/protocol/type, multipath routes and
# nexthops, routes per device, expiring routes per table, the next expiry and the routes past
# their deadline must equal what `ip -j -6 route show table all` lists in the same namespace.
# Then, on one daemon: routes added and removed show up in the gauges, the generation and the
# changes of the last publication; the HTTP counters count requests; the process metrics match
# /proc; the error counters and rtsnap_snapshot_fresh follow a failing collector.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
require_root
require_cmd ip curl jq
require_rtsnapd

# ---- local helpers

# m_get NS FILE: the /metrics body of the daemon in NS into FILE.
m_get() {
	http_get "$1" /metrics >"$2"
}

# m_val FILE SERIES: the value of the sample whose name and labels are exactly SERIES.
m_val() {
	awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print $NF; exit }' "$1"
}

# m_labels FILE NAME [FAMILY]: "label-values... value" lines of family NAME whose first label
# is family="FAMILY" (inet6 unless given; that label left out, the others in order), sorted;
# zero values left out (the kernel lists nothing for them).
m_labels() {
	awk -v n="$2" -v f="${3:-inet6}" '
	index($0, n "{family=\"" f "\",") == 1 {
		v = $NF
		if (v + 0 == 0) next
		s = substr($0, length(n) + length(f) + 12)
		out = ""
		while (match(s, /^[a-z_]+="[^"]*"[,}]/)) {
			kv = substr(s, 1, RLENGTH - 1)
			sub(/^[a-z_]+="/, "", kv)
			sub(/"$/, "", kv)
			out = out kv " "
			s = substr(s, RLENGTH + 1)
		}
		print out v
	}' "$1" | sort
}

# k_json NS FILE: the kernel's listing.
k_json() {
	kernel_json "$1" >"$2"
}

# Kernel-side counts in the same "labels... value" form, sorted.
k_routes() {
	jq -r '[.[] | "\(.table // "main") \(.protocol // "boot") \(.type // "unicast")"]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" | sort
}
k_mp_routes() {
	jq -r '[.[] | select((.nexthops // []) | length > 1) | (.table // "main")]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" | sort
}
k_mp_nexthops() {
	jq -r '[.[] | select((.nexthops // []) | length > 1) | {t: (.table // "main"), n: (.nexthops | length)}]
		| group_by(.t) | .[] | "\(.[0].t) \(map(.n) | add)"' "$1" | sort
}
k_devices() {
	jq -r '[.[] | ([.dev] + [(.nexthops // [])[] | .dev]) | map(select(. != null)) | unique[]]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" | sort
}
k_expiring() {
	jq -r '[.[] | select(.expires != null) | (.table // "main")]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" | sort
}

# compare_ns NS KIND: every per-snapshot gauge of the daemon in NS against the kernel.
# The daemon lags the kernel by its debounce; the comparison is retried for up to 5 s.
compare_ns() {
	local ns=$1 kind=$2 d="$RTSNAP_TMP/$2" i f
	for i in $(seq 10); do
		k_json "$ns" "$d.json"
		m_get "$ns" "$d.prom"
		k_routes "$d.json" >"$d.k_routes"
		m_labels "$d.prom" rtsnap_routes >"$d.m_routes"
		cmp -s "$d.k_routes" "$d.m_routes" && break
		sleep 0.5
	done
	tap_diff "$d.k_routes" "$d.m_routes" "$kind: rtsnap_routes{table,protocol,type} equal the kernel's listing"
	k_mp_routes "$d.json" >"$d.k_mp"
	m_labels "$d.prom" rtsnap_multipath_routes >"$d.m_mp"
	tap_diff "$d.k_mp" "$d.m_mp" "$kind: rtsnap_multipath_routes by table equal the kernel's"
	k_mp_nexthops "$d.json" >"$d.k_nh"
	m_labels "$d.prom" rtsnap_multipath_nexthops >"$d.m_nh"
	tap_diff "$d.k_nh" "$d.m_nh" "$kind: rtsnap_multipath_nexthops by table equal the kernel's"
	k_devices "$d.json" >"$d.k_dev"
	m_labels "$d.prom" rtsnap_device_routes >"$d.m_dev"
	tap_diff "$d.k_dev" "$d.m_dev" "$kind: rtsnap_device_routes equal the kernel's routes per device"
	k_expiring "$d.json" >"$d.k_exp"
	m_labels "$d.prom" rtsnap_routes_expiring >"$d.m_exp"
	tap_diff "$d.k_exp" "$d.m_exp" "$kind: rtsnap_routes_expiring by table equal the kernel's"
}

# ---- one namespace per route kind, one daemon each

KINDS="connected static reject multipath mpath_sibling_flags nexthop srcroute pref expires tables empty_tables devnames linkdown"
declare -A NSOF
for kind in $KINDS; do
	ns_new ns
	NSOF[$kind]=$ns
	"rk_$kind" "$ns" >"$RTSNAP_TMP/rk_$kind.log" 2>&1 || tap_bail "rk_$kind failed: $(cat "$RTSNAP_TMP/rk_$kind.log")"
done
for kind in $KINDS; do
	daemon_start "${NSOF[$kind]}" --interval 0 --debounce-ms 50 || tap_bail "rtsnapd did not start for $kind"
done
for kind in $KINDS; do
	compare_ns "${NSOF[$kind]}" "$kind"
done

# ---- expiry values (the expires namespace: routes with lifetimes and one already overdue)
NS=${NSOF[expires]}
k_json "$NS" "$RTSNAP_TMP/e.json"
m_get "$NS" "$RTSNAP_TMP/e.prom"
kmin=$(jq '[.[] | select(.expires != null and .expires > 0) | .expires] | min' "$RTSNAP_TMP/e.json")
got=$(m_val "$RTSNAP_TMP/e.prom" rtsnap_routes_next_expiry_seconds)
tap_ok "$(awk -v g="$got" -v k="$kmin" 'BEGIN { exit !(g != "" && g >= k - 1 && g <= k + 2) }'; echo $?)" \
	"rtsnap_routes_next_expiry_seconds ($got) is the kernel's earliest expires ($kmin s)"
kpast=$(jq '[.[] | select(.expires != null and .expires < 0)] | length' "$RTSNAP_TMP/e.json")
tap_ok "$([ "$kpast" -ge 1 ]; echo $?)" "the kernel still lists an overdue route ($kpast)"
tap_is "$(m_val "$RTSNAP_TMP/e.prom" rtsnap_routes_past_deadline)" "$kpast" \
	"rtsnap_routes_past_deadline equals the kernel's overdue routes"
# a namespace without expiring routes: no next-expiry sample, zero past deadline
m_get "${NSOF[static]}" "$RTSNAP_TMP/s.prom"
tap_is "$(m_val "$RTSNAP_TMP/s.prom" rtsnap_routes_next_expiry_seconds)" "" \
	"no expiring route: no rtsnap_routes_next_expiry_seconds sample"
tap_is "$(m_val "$RTSNAP_TMP/s.prom" rtsnap_routes_past_deadline)" 0 "no expiring route: 0 past deadline"

# ---- changes on one daemon (static namespace, interval 0: publications only on change)
NS=${NSOF[static]}
# the IPv6 instance's route series (the daemon follows IPv4 too: family="inet" ones)
total() { awk '/^rtsnap_routes\{family="inet6",/ { s += $NF } END { print s + 0 }' "$1"; }
total4() { awk '/^rtsnap_routes\{family="inet",/ { s += $NF } END { print s + 0 }' "$1"; }
kernel_total() { kernel_json "$NS" | jq length; }
metrics_match_kernel() {
	m_get "$NS" "$RTSNAP_TMP/c.prom"
	[ "$(total "$RTSNAP_TMP/c.prom")" = "$(kernel_total)" ]
}
m_get "$NS" "$RTSNAP_TMP/c0.prom"
gen0=$(m_val "$RTSNAP_TMP/c0.prom" rtsnap_snapshot_generation)
k0=$(kernel_total)
for i in $(seq 1 25); do
	printf 'route add 2001:db8:e%x::/64 via 2001:db8:5::2 table 700 proto bgp\n' "$i"
done | ip -n "$NS" -6 -batch -
k1=$(kernel_total)
wait_until 10 metrics_match_kernel
m_get "$NS" "$RTSNAP_TMP/c1.prom"
tap_is "$(total "$RTSNAP_TMP/c1.prom")" "$k1" "after adding routes, the sum of rtsnap_routes{family=\"inet6\"} is the kernel's count ($k0 -> $k1)"
tap_is "$(total4 "$RTSNAP_TMP/c1.prom")" "$(ip -n "$NS" -j -4 route show table all | jq length)" \
	"the sum of rtsnap_routes{family=\"inet\"} is ip -4's count"
k_json "$NS" "$RTSNAP_TMP/c1.json"
k_routes "$RTSNAP_TMP/c1.json" >"$RTSNAP_TMP/c1.k"
m_labels "$RTSNAP_TMP/c1.prom" rtsnap_routes >"$RTSNAP_TMP/c1.m"
tap_diff "$RTSNAP_TMP/c1.k" "$RTSNAP_TMP/c1.m" "after adding routes, rtsnap_routes equal the kernel's listing"
gen1=$(m_val "$RTSNAP_TMP/c1.prom" rtsnap_snapshot_generation)
tap_ok "$([ "$gen1" -gt "$gen0" ]; echo $?)" "rtsnap_snapshot_generation advanced ($gen0 -> $gen1)"
# the batch may be published in one go or, as its notifications arrive, in several: the
# gauges are the last publication's change (/changes from the generation before it), and the
# change since gen0 is what the kernel gained
changed() { http_get "$NS" "/changes?since=$1" | jq ".$2 | length"; }
tap_is "$(m_val "$RTSNAP_TMP/c1.prom" 'rtsnap_snapshot_routes_changed{change="added"}')" \
	"$(changed $((gen1 - 1)) added)" "routes added by the last publication = the routes its change added"
tap_is "$(m_val "$RTSNAP_TMP/c1.prom" 'rtsnap_snapshot_routes_changed{change="removed"}')" \
	"$(changed $((gen1 - 1)) removed)" "routes removed by the last publication = the routes its change removed"
tap_is "$(changed "$gen0" added) $(changed "$gen0" removed)" "$((k1 - k0)) 0" \
	"routes added since the batch began = routes the kernel gained, none removed"
ip -n "$NS" -6 route flush table 700
k2=$(kernel_total)
wait_until 10 metrics_match_kernel
m_get "$NS" "$RTSNAP_TMP/c2.prom"
gen2=$(m_val "$RTSNAP_TMP/c2.prom" rtsnap_snapshot_generation)
tap_is "$(m_val "$RTSNAP_TMP/c2.prom" 'rtsnap_snapshot_routes_changed{change="removed"}')" \
	"$(changed $((gen2 - 1)) removed)" "after a flush, routes removed by the last publication = the routes its change removed"
tap_is "$(changed "$gen1" removed)" "$((k1 - k2))" "routes removed since the flush began = routes the kernel lost"
tap_is "$(m_labels "$RTSNAP_TMP/c2.prom" rtsnap_routes | grep -c '^700 ')" 0 "the flushed table has no rtsnap_routes series left"
tap_ok "$([ "$(m_val "$RTSNAP_TMP/c2.prom" 'rtsnap_collections_total{trigger="change"}')" -ge 2 ]; echo $?)" \
	"collections by change notification counted"
tap_ok "$([ "$(m_val "$RTSNAP_TMP/c2.prom" rtsnap_notifications_total)" -ge 1 ]; echo $?)" "notifications counted"
tap_is "$(m_val "$RTSNAP_TMP/c2.prom" rtsnap_collection_duration_seconds_count)" \
	"$(awk '/^rtsnap_collections_total\{trigger=/ { s += $NF } END { print s }' "$RTSNAP_TMP/c2.prom")" \
	"duration histogram count = collections published (the IPv6 instance's, unlabelled)"
tap_is "$(m_val "$RTSNAP_TMP/c2.prom" 'rtsnap_collection_duration_seconds_bucket{le="+Inf"}')" \
	"$(m_val "$RTSNAP_TMP/c2.prom" rtsnap_collection_duration_seconds_count)" "+Inf bucket = count"
tap_ok "$(awk '/^rtsnap_collection_duration_seconds_bucket\{le=/ { if ($NF + 0 < prev) bad = 1; prev = $NF + 0 } END { exit bad }' "$RTSNAP_TMP/c2.prom"; echo $?)" \
	"histogram buckets are cumulative"

# ---- HTTP counters
a=$(m_val "$RTSNAP_TMP/c2.prom" 'rtsnap_http_requests_total{endpoint="/healthz",code="200"}')
for i in 1 2 3 4 5; do http_get "$NS" /healthz >/dev/null; done
for i in 1 2 3; do ip netns exec "$NS" curl -sg -o /dev/null "$RTSNAP_URL/no/such/path"; done
m_get "$NS" "$RTSNAP_TMP/h.prom"
tap_is "$(m_val "$RTSNAP_TMP/h.prom" 'rtsnap_http_requests_total{endpoint="/healthz",code="200"}')" "$((a + 5))" \
	"rtsnap_http_requests_total counts 5 more /healthz 200"
tap_ok "$([ "$(m_val "$RTSNAP_TMP/h.prom" 'rtsnap_http_requests_total{endpoint="other",code="404"}')" -ge 3 ]; echo $?)" \
	"unknown paths counted as endpoint=other code=404"
b1=$(m_val "$RTSNAP_TMP/h.prom" rtsnap_http_response_bytes_total)
len=$(http_get "$NS" /ipv6_route | wc -c)
m_get "$NS" "$RTSNAP_TMP/h2.prom"
b2=$(m_val "$RTSNAP_TMP/h2.prom" rtsnap_http_response_bytes_total)
tap_ok "$([ $((b2 - b1)) -ge "$len" ]; echo $?)" "rtsnap_http_response_bytes_total grew by at least a /ipv6_route body ($((b2 - b1)) >= $len)"

# ---- process metrics against /proc
pid=$(ip netns pids "$NS" | while read -r p; do [ "$(readlink /proc/$p/exe)" = "$(readlink -f "$RTSNAPD")" ] && echo "$p"; done | head -1)
m_get "$NS" "$RTSNAP_TMP/p.prom"
fds=$(ls /proc/"$pid"/fd | wc -l)
got=$(m_val "$RTSNAP_TMP/p.prom" process_open_fds)
tap_ok "$([ $((got - fds)) -le 3 ] && [ $((fds - got)) -le 3 ]; echo $?)" "process_open_fds ($got) matches /proc/PID/fd ($fds)"
rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' /proc/"$pid"/status)
got=$(m_val "$RTSNAP_TMP/p.prom" process_resident_memory_bytes)
tap_ok "$(awk -v g="$got" -v r="$rss" 'BEGIN { exit !(g > r * 0.7 && g < r * 1.3) }'; echo $?)" \
	"process_resident_memory_bytes ($got) matches VmRSS ($rss)"
start=$(awk -v hz="$(getconf CLK_TCK)" -v bt="$(awk '/^btime/ { print $2 }' /proc/stat)" \
	'{ sub(/.*\) /, ""); split($0, f, " "); printf "%.2f", bt + f[20] / hz }' /proc/"$pid"/stat)
got=$(m_val "$RTSNAP_TMP/p.prom" process_start_time_seconds)
tap_ok "$(awk -v g="$got" -v s="$start" 'BEGIN { d = g - s; exit !(d > -0.02 && d < 0.02) }'; echo $?)" \
	"process_start_time_seconds ($got) is the process start in /proc ($start)"
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.2f", (f[12] + f[13]) / hz }' /proc/"$pid"/stat)
got=$(m_val "$RTSNAP_TMP/p.prom" process_cpu_seconds_total)
tap_ok "$(awk -v g="$got" -v c="$cpu" 'BEGIN { exit !(g >= c - 0.05 && g <= c + 1) }'; echo $?)" \
	"process_cpu_seconds_total ($got) matches /proc utime+stime ($cpu)"

# ---- a failing collector: error counter, stale flag; the snapshot part stays
ns_new NSF
ip -n "$NSF" -6 route add 2001:db8:5::/64 dev lo
RTSNAP_TEST_FAIL_AFTER=1 daemon_start "$NSF" --interval 0 || tap_bail "failing daemon did not start"
m_get "$NSF" "$RTSNAP_TMP/f0.prom"
tap_is "$(m_val "$RTSNAP_TMP/f0.prom" rtsnap_snapshot_fresh)" 1 "fresh before any failure"
pidf=${_daemon_pid[$NSF]}
kill -HUP "$pidf"
fail_seen() { m_get "$NSF" "$RTSNAP_TMP/f1.prom" && [ "$(m_val "$RTSNAP_TMP/f1.prom" rtsnap_snapshot_fresh)" = 0 ]; }
wait_until 5 fail_seen
tap_is "$(m_val "$RTSNAP_TMP/f1.prom" rtsnap_snapshot_fresh)" 0 "rtsnap_snapshot_fresh is 0 after a failed collection"
m_labels "$RTSNAP_TMP/f0.prom" rtsnap_routes >"$RTSNAP_TMP/f0.r"
m_labels "$RTSNAP_TMP/f1.prom" rtsnap_routes >"$RTSNAP_TMP/f1.r"
tap_diff "$RTSNAP_TMP/f0.r" "$RTSNAP_TMP/f1.r" "the previous snapshot's gauges are still served"
tap_is "$(m_val "$RTSNAP_TMP/f1.prom" 'rtsnap_collections_total{trigger="signal"}')" 0 "the failed resync is not counted as a collection"

tap_done
