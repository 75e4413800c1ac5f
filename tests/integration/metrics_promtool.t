#!/bin/bash
# /metrics is clean under `promtool check metrics` (exposition format and naming conventions),
# plain and gzip, for namespaces holding different kinds of routes (odd device names, numeric
# and named tables, reject routes, multipath, nexthop objects, expiring routes); headers,
# Accept-Encoding negotiation, HEAD, bad query; gzip bodies valid under concurrent scrapes; the
# optional per-route series (--metrics-routes, --metrics-route-limit) when the daemon has them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
require_root
require_cmd ip curl jq promtool gzip
require_rtsnapd

KINDS="devnames tables reject multipath nexthop expires"
declare -A NSOF
for kind in $KINDS; do
	ns_new ns
	NSOF[$kind]=$ns
	"rk_$kind" "$ns" >"$RTSNAP_TMP/rk_$kind.log" 2>&1 || tap_bail "rk_$kind failed: $(cat "$RTSNAP_TMP/rk_$kind.log")"
	daemon_start "$ns" --interval 0 || tap_bail "rtsnapd did not start for $kind"
done

# get NS FILE [CURL-ARGS...]: body to FILE, headers (CR stripped, names lowercased) to FILE.h
get() {
	local ns=$1 f=$2
	shift 2
	ip netns exec "$ns" curl -sS -g --max-time 10 -D "$f.h.raw" -o "$f" "$@" "$RTSNAP_URL/metrics"
	tr -d '\r' <"$f.h.raw" | awk -F': ' 'NF > 1 { printf "%s: %s\n", tolower($1), $2 }' >"$f.h"
}
hdr() { awk -F': ' -v h="$2" '$1 == h { print $2 }' "$1.h"; }

# per-snapshot families, to compare plain and gzip bodies (the per-scrape values move)
snap_part() { grep -E '^(rtsnap_routes\{|rtsnap_multipath_|rtsnap_device_|rtsnap_routes_expiring\{|rtsnap_build_info|rtsnap_snapshot_timestamp)' "$1"; }

for kind in $KINDS; do
	ns=${NSOF[$kind]}
	f="$RTSNAP_TMP/$kind"
	get "$ns" "$f.txt"
	promtool_ok "$f.txt" "$kind: promtool check metrics passes (plain)"
	get "$ns" "$f.gz" -H 'Accept-Encoding: gzip'
	tap_is "$(hdr "$f.gz" content-encoding)" gzip "$kind: Content-Encoding: gzip when accepted"
	gzip -dc <"$f.gz" >"$f.gunzip" 2>"$f.gzerr"
	tap_ok $? "$kind: the gzip body decompresses with CRC and length checked $(cat "$f.gzerr")"
	promtool_ok "$f.gunzip" "$kind: promtool check metrics passes (gzip)"
	snap_part "$f.txt" >"$f.p1"
	snap_part "$f.gunzip" >"$f.p2"
	tap_diff "$f.p1" "$f.p2" "$kind: gzip and plain bodies carry the same per-snapshot families"
done

NS=${NSOF[tables]}
F="$RTSNAP_TMP/h"
get "$NS" "$F"
tap_is "$(hdr "$F" content-type)" "text/plain; version=0.0.4; charset=utf-8" "Content-Type is the 0.0.4 text format"
tap_is "$(hdr "$F" content-encoding)" "" "no Content-Encoding without Accept-Encoding"
tap_is "$(hdr "$F" vary)" "Accept-Encoding" "Vary: Accept-Encoding"
tap_ok "$([[ $(hdr "$F" etag) =~ ^\"[0-9]+\"$ ]]; echo $?)" "ETag carries the generation"
# the snapshot's time is when the collector took it: after 2001 and not after now
ts=$(awk '$1 == "rtsnap_snapshot_timestamp_seconds" { print int($2) }' "$F")
tap_ok "$([ "${ts:-0}" -gt 1000000000 ] && [ "${ts:-0}" -le "$(date +%s)" ]; echo $?)" "rtsnap_snapshot_timestamp_seconds is the snapshot's time ($ts)"
for ae in 'gzip;q=0' 'identity' '*;q=0' 'deflate' 'gzip;q=0, *'; do
	get "$NS" "$F" -H "Accept-Encoding: $ae"
	tap_is "$(hdr "$F" content-encoding)" "" "Accept-Encoding: $ae -> not compressed"
	promtool_ok "$F" "Accept-Encoding: $ae -> a valid plain body"
done
for ae in '*' 'deflate, GZIP' 'br;q=1.0, gzip;q=0.5' 'x-gzip' 'gzip;q=0, x-gzip'; do
	get "$NS" "$F" -H "Accept-Encoding: $ae"
	tap_is "$(hdr "$F" content-encoding)" gzip "Accept-Encoding: $ae -> gzip"
done
code=$(ip netns exec "$NS" curl -sg -o "$F.400" -w '%{http_code}' "$RTSNAP_URL/metrics?foo=1")
tap_is "$code" 400 "/metrics?foo=1 is 400"
tap_ok "$(jq -e '.error | test("foo")' "$F.400" >/dev/null; echo $?)" "the 400 names the parameter"
tap_is "$(ip netns exec "$NS" curl -sg -I -o /dev/null -w '%{http_code}' "$RTSNAP_URL/metrics")" 200 "HEAD /metrics is 200"
tap_is "$(ip netns exec "$NS" curl -sg -X HEAD -o /dev/null -w '%{size_download}' --max-time 5 "$RTSNAP_URL/metrics")" 0 "HEAD /metrics sends no body"

# concurrent gzip scrapes (4 clients x 25) while routes change: every body valid
scraper() {
	local i bad=0
	for i in $(seq 25); do
		ip netns exec "$NS" curl -sg --max-time 5 -H 'Accept-Encoding: gzip' "$RTSNAP_URL/metrics" |
			gzip -dc 2>/dev/null | grep -q '^rtsnap_http_response_bytes_total ' || bad=$((bad + 1))
	done
	echo "$bad" >"$RTSNAP_TMP/scraper.$1"
}
pids=()
for c in 1 2 3 4; do
	scraper "$c" &
	pids+=($!)
done
for i in $(seq 20); do
	ip -n "$NS" -6 route add "2001:db8:cc:$i::/64" dev t0 table 100
	sleep 0.05
done
wait "${pids[@]}" # not a bare wait: the daemons are background jobs too
bad=$(cat "$RTSNAP_TMP"/scraper.* | awk '{ s += $1 } END { print s + 0 }')
tap_is "$bad" 0 "100 concurrent gzip scrapes during changes: all decompress to a complete exposition"

# the optional per-route series
NS=${NSOF[multipath]}
if "$RTSNAPD" --help 2>&1 | grep -q -- '--metrics-route-limit'; then
	ns_new NSR
	rk_multipath "$NSR" >/dev/null 2>&1 || tap_bail "rk_multipath failed"
	nser=$(kernel_json "$NSR" | jq '[.[] | ((.nexthops // []) | length) as $n | if $n > 1 then $n else 1 end] | add')
	nroutes=$(kernel_json "$NSR" | jq length)
	limit=$((nroutes / 2))
	daemon_start "$NSR" --interval 0 --metrics-routes --metrics-route-limit "$limit" || tap_bail "rtsnapd --metrics-routes did not start"
	get "$NSR" "$RTSNAP_TMP/ri"
	promtool_ok "$RTSNAP_TMP/ri" "--metrics-routes: promtool check metrics passes"
	tap_is "$(awk '/^rtsnap_route_info_omitted_routes\{family="inet6"\} / { print $NF }' "$RTSNAP_TMP/ri")" "$((nroutes - limit))" \
		"rtsnap_route_info_omitted_routes = kernel routes - limit"
	daemon_stop "$NSR" >/dev/null
	daemon_start "$NSR" --interval 0 --metrics-routes || tap_bail "rtsnapd --metrics-routes did not start"
	get "$NSR" "$RTSNAP_TMP/ri2"
	tap_is "$(grep -c '^rtsnap_route_info{family="inet6",' "$RTSNAP_TMP/ri2")" "$nser" \
		"rtsnap_route_info: one series per route, per nexthop of a multipath route (kernel: $nser)"
	# one line per series: a multipath route's nexthops each with their gateway and device
	kernel_json "$NSR" | jq -r '.[] | . as $r
		| (if .nexthops then .nexthops[] else $r end)
		| "\($r.table // "main") \($r.dst) \(.gateway // "") \(.dev // "") \($r.protocol // "boot") \($r.type // "unicast") \($r.metric)"' |
		sort >"$RTSNAP_TMP/ri.k"
	sed -n 's/^rtsnap_route_info{family="inet6",table="\([^"]*\)",dst="\([^"]*\)",gateway="\([^"]*\)",dev="\([^"]*\)",protocol="\([^"]*\)",type="\([^"]*\)",metric="\([^"]*\)"} 1$/\1 \2 \3 \4 \5 \6 \7/p' "$RTSNAP_TMP/ri2" |
		sort >"$RTSNAP_TMP/ri.m"
	tap_diff "$RTSNAP_TMP/ri.k" "$RTSNAP_TMP/ri.m" "rtsnap_route_info labels equal the kernel's fields, nexthop by nexthop"
else
	m_off=$(grep -c '^rtsnap_route_info' "$RTSNAP_TMP/multipath.txt")
	tap_is "$m_off" 0 "no rtsnap_route_info without --metrics-routes"
	tap_skip "--metrics-routes / --metrics-route-limit not wired into main.c yet (render_metrics_set_routes/_set_route_limit)"
fi

tap_done
