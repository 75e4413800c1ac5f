#!/bin/bash
# inet_alone.t - rtsnapd --family inet: the daemon follows IPv4 alone, in a namespace that has
# IPv6 routes too. /route, /proc/net/route and the --proc-file4 file are the kernel's
# /proc/net/route byte for byte; /routes without family= and with family=inet are
# `ip -j -4 route show table all` byte for byte (the default family is the only one
# followed), as /routes/lookup, /events and /changes without family= read IPv4; every IPv6
# path (/ipv6_route, /proc/net/ipv6_route, /expiring, family=inet6 and all, an IPv6 address on
# /routes/lookup) is a JSON 404; a route added while running appears; /metrics has the IPv4
# series, labelled family="inet", and nothing of IPv6; /status's top level and its "inet"
# are the IPv4 instance's ("family": "inet"); /healthz is IPv4's freshness; no netlink socket
# of the daemon joined the IPv6 route group; --proc-file (IPv6's file) is refused with exit
# status 2; SIGTERM ends it cleanly.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds4.sh"
. "$(dirname "$0")/../lib/cdp.sh"

require_root
require_cmd ip curl cmp jq
require_rtsnapd

# etag4 NS: the IPv4 snapshot's generation, as /route's ETag says it
etag4() {
	ip netns exec "$1" curl -sgI --max-time 5 "$RTSNAP_URL/route" | tr -d '\r' |
		awk -F': ' 'tolower($1)=="etag"{print $2}'
}
# code NS PATH: the HTTP status of GET PATH
code() {
	ip netns exec "$1" curl -sg -o /dev/null -w '%{http_code}' --max-time 5 "$RTSNAP_URL$2"
}

# check NS WHAT: the served IPv4 views against the kernel's, read before and after them;
# while they differ (the daemon has not caught up) read again, a bounded number of times
check() {
	local ns=$1 what=$2 p="$RTSNAP_TMP/v" i
	for i in $(seq 25); do
		ip netns exec "$ns" cat /proc/net/route >"$p.akp"
		ip netns exec "$ns" ip -j -4 route show table all >"$p.akj"
		http_get "$ns" /route >"$p.dp"
		http_get "$ns" /proc/net/route >"$p.dpp"
		http_get "$ns" /routes >"$p.dj"
		http_get "$ns" "/routes?family=inet" >"$p.dj4"
		cat "$RTSNAP_TMP/route4" >"$p.dpf" 2>/dev/null
		ip netns exec "$ns" cat /proc/net/route >"$p.kp"
		ip netns exec "$ns" ip -j -4 route show table all >"$p.kj"
		cmp -s "$p.akp" "$p.kp" && cmp -s "$p.akj" "$p.kj" && cmp -s "$p.kp" "$p.dp" &&
			cmp -s "$p.kp" "$p.dpp" && cmp -s "$p.kp" "$p.dpf" && cmp -s "$p.kj" "$p.dj" &&
			cmp -s "$p.kj" "$p.dj4" && break
		sleep 0.2
	done
	tap_diff "$p.kp" "$p.dp" "$what: /route is /proc/net/route ($(($(wc -l <"$p.kp") - 1)) routes)"
	tap_diff "$p.kp" "$p.dpp" "$what: /proc/net/route is the kernel's"
	tap_diff "$p.kp" "$p.dpf" "$what: the --proc-file4 file is the kernel's /proc/net/route"
	tap_diff "$p.kj" "$p.dj" "$what: /routes (no family=) is ip -j -4 route show table all"
	tap_diff "$p.kj" "$p.dj4" "$what: /routes?family=inet is ip -j -4 route show table all"
}

# not6 NS PATH: PATH is a 404 whose JSON error says IPv6 is not followed
not6() {
	local body
	body=$(ip netns exec "$1" curl -sg --max-time 5 -w ' %{http_code}' "$RTSNAP_URL$2" | tr -d '\n')
	tap_is "$body" '{"error":"IPv6 is not followed: start rtsnapd with --family all"} 404' \
		"$2: JSON 404, IPv6 is not followed"
}

ns_new NS
rk4_all "$NS"
tap_ok $? "build every IPv4 route kind in $NS" || tap_done
n="ip -n $NS"
$n -6 route add 2001:db8:77::/48 via 2001:db8:4::2 &&
	$n -6 route add 2001:db8:78::/48 dev v0 expires 600
tap_ok $? "IPv6 routes beside them (one expiring)"
ns_settle "$NS"
sleep 1 # carrier settles

ip netns exec "$NS" "$RTSNAPD" --family inet --proc-file "$RTSNAP_TMP/x" \
	--listen 127.0.0.1:1 >/dev/null 2>"$RTSNAP_TMP/refused"
tap_is "$?" 2 "--family inet --proc-file is refused with exit status 2"
tap_is "$(grep -c -- '--proc-file needs IPv6' "$RTSNAP_TMP/refused")" 1 "... saying --proc-file needs IPv6"
[ -e "$RTSNAP_TMP/x" ]
tap_is "$?" 1 "... and writes nothing"

daemon_start "$NS" --family inet --proc-file4 "$RTSNAP_TMP/route4"
tap_ok $? "rtsnapd --family inet --proc-file4 starts" || tap_done
check "$NS" "every kind"

# the collector of IPv6 is not started: no netlink socket in the namespace (the daemon's are
# the only ones) is in RTNLGRP_IPV6_ROUTE (group 11: bit 0x400 of /proc/net/netlink's Groups),
# while one is in RTNLGRP_IPV4_ROUTE (group 7: 0x40)
groups=$(ip netns exec "$NS" awk 'NR > 1 && $2 == 0 { print $4 }' /proc/net/netlink)
g6=0 g4=0
for g in $groups; do
	(((0x$g & 0x400) != 0)) && g6=$((g6 + 1))
	(((0x$g & 0x40) != 0)) && g4=$((g4 + 1))
done
tap_is "$((g4 > 0)) $g6" "1 0" "a socket in the IPv4 route group, none in the IPv6 one ($g4)"

# the IPv6 paths, and family= values that name IPv6
for p in /ipv6_route /proc/net/ipv6_route /expiring "/routes?family=inet6" "/routes?family=all" \
	"/routes/lookup?addr=2001:db8:77::1" "/events?family=inet6" "/events?family=all" \
	"/changes?family=inet6&since=1" "/changes?family=all&since=1"; do
	not6 "$NS" "$p"
done
tap_is "$(ip netns exec "$NS" curl -sg -w ' %{http_code}' "$RTSNAP_URL/routes?family=inet4" | tr -d '\n')" \
	'{"error":"bad value for '"'family'"': inet (the default), inet6 or all"} 400' \
	"/routes?family=inet4: 400 naming inet the default"
look=$(http_get "$NS" "/routes/lookup?addr=192.168.1.7" | jq -r '[.gateway, .dev] | join(" ")')
tap_is "$look" "10.0.0.2 v0" "/routes/lookup with an IPv4 address answers from IPv4"

# /status, /healthz
g=$(etag4 "$NS" | tr -d '"')
http_get "$NS" /status >"$RTSNAP_TMP/status"
nr=$(ip netns exec "$NS" ip -j -4 route show table all | jq length)
tap_is "$(jq -r '[.family, .generation, .routes, .stale, .inet.generation, .inet.routes, .inet.stale]
	| map(tostring) | join(" ")' "$RTSNAP_TMP/status")" "inet $g $nr false $g $nr false" \
	"/status: family inet; its top level and its inet are the IPv4 instance's ($nr routes)"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' -H "If-None-Match: \"$g\"" \
	"$RTSNAP_URL/status")" 304 "/status: If-None-Match with the IPv4 generation is 304"
tap_is "$(http_get "$NS" /healthz | tr -d '\n')" "{\"status\":\"ok\",\"generation\":$g}" \
	"/healthz: ok, the IPv4 generation"
tap_is "$(code "$NS" /)" 200 "/ (the web page) is served"
# the page after its scripts ran: the IPv4 routes and tables, the family switch not offered
if command -v "$CHROMIUM" >/dev/null 2>&1; then
	# shellcheck disable=SC2046
	ip netns exec "$NS" timeout 60 "$CHROMIUM" $(chromium_flags) \
		--user-data-dir="$(mktemp -d "$RTSNAP_TMP/dump.XXXXXX")" --virtual-time-budget=3000 \
		--dump-dom "$RTSNAP_URL/" >"$RTSNAP_TMP/dom.html" 2>"$RTSNAP_TMP/dom.err"
	has() { grep -q -- "$1" "$RTSNAP_TMP/dom.html" && echo yes || echo no; }
	tap_is "$(has '<fieldset id="family" class="family" hidden') $(has 'ip -4 route show table all') $(has '>192\.168\.1\.0/24<')" \
		"yes yes yes" "web page: IPv4 routes and tables (ip -4), no family switch"
else
	tap_skip "chromium not installed"
fi

# /metrics: the IPv4 series, labelled family="inet", nothing of IPv6
http_get "$NS" /metrics >"$RTSNAP_TMP/m.prom"
tap_is "$(awk -F'[{}]' '/^rtsnap_routes\{family="inet",/ { s += $NF } END { print s + 0 }' \
	"$RTSNAP_TMP/m.prom")" "$nr" "/metrics: rtsnap_routes{family=\"inet\"} counts ip -j -4's routes"
tap_is "$(grep -c 'family="inet6"' "$RTSNAP_TMP/m.prom")" 0 "/metrics: no family=\"inet6\" series"
tap_is "$(grep -cE '^rtsnap_(snapshot_generation|snapshot_fresh|collections_total|routes_expiring)( |\{[^f])' \
	"$RTSNAP_TMP/m.prom")" 0 "/metrics: no unlabelled instance series (they were IPv6's)"
tap_is "$(sed -n 's/^rtsnap_snapshot_generation{family="inet"} //p' "$RTSNAP_TMP/m.prom") $(sed -n 's/^rtsnap_snapshot_fresh{family="inet"} //p' "$RTSNAP_TMP/m.prom")" \
	"$g 1" "/metrics: the IPv4 generation and freshness, labelled family=\"inet\""
lim=$(sed -n 's/^rtsnap_http_pinned_bytes_limit //p' "$RTSNAP_TMP/m.prom")
cur=$(sed -n 's/^rtsnap_snapshot_bytes //p' "$RTSNAP_TMP/m.prom")
tap_ok $((cur > 0 && lim == 2 * cur + cur / 16 ? 0 : 1)) \
	"/metrics: --max-pinned-bytes (2x) bounds the IPv4 snapshot ($cur bytes, limit $lim)"
if command -v promtool >/dev/null; then
	promtool check metrics <"$RTSNAP_TMP/m.prom" >"$RTSNAP_TMP/m.lint" 2>&1
	tap_ok $? "/metrics passes promtool check metrics" || tap_diag "$(head "$RTSNAP_TMP/m.lint")"
else
	tap_skip "promtool not installed"
fi

# a route added while running: on /routes, on the default change stream and /changes
ip netns exec "$NS" curl -sgN --max-time 20 "$RTSNAP_URL/events" >"$RTSNAP_TMP/ev" 2>/dev/null &
ev_pid=$!
wait_true 10 'grep -q "change stream after generation" "$RTSNAP_TMP/ev"'
$n route add 10.60.0.0/16 via 10.0.0.2
tap_ok $? "add 10.60.0.0/16 while running"
wait_true 10 '[ "$(etag4 '"$NS"')" != "\"'"$g"'\"" ]' || tap_diag "the IPv4 generation stayed $g"
check "$NS" "a route added"
obj=$($n -j -4 route show 10.60.0.0/16 | jq -c '.[0]')
wait_true 10 'grep -qF "$obj" "$RTSNAP_TMP/ev"'
tap_ok $? "/events (no family=) streams the added route as ip -j -4 prints it"
kill "$ev_pid" 2>/dev/null
wait "$ev_pid" 2>/dev/null
tap_is "$(http_get "$NS" "/changes?since=$g" | grep -cF "\"added\":[$obj]")" 1 \
	"/changes?since=$g (no family=) lists it as added"
tap_is "$(http_get "$NS" "/changes?family=inet&since=$g&prefix=10.60.0.0/16" | grep -cF "\"added\":[$obj]")" 1 \
	"/changes?family=inet&prefix=10.60.0.0/16 lists it"
$n -6 route add 2001:db8:79::/48 dev v0
sleep 1
tap_is "$(http_get "$NS" /routes | grep -c 2001:db8:79)" 0 \
	"an IPv6 route added is not served"

daemon_stop "$NS"
tap_is "$?" 0 "SIGTERM: clean exit"
tap_done
