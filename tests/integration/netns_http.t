#!/bin/bash
# netns_http.t - rtsnapd --netns NAME: named namespaces served beside the daemon's own at
# /netns/NAME/... Three named namespaces (a plain name, one with a space and "<script>", one
# with '%' and quotes), each with a route of its own; the daemon runs in a test namespace with
# --netns for each. /netns lists the own namespace first, then the named ones by name, with
# their paths percent-encoded; every per-namespace path answers under /netns/NAME/ (status
# naming the namespace, JSON-escaped); /netns/NAME/ipv6_route and route are that namespace's
# kernel files; an unknown name is a JSON
# 404, /netns/NAME/metrics a 404 pointing to /metrics, "../" does not escape; /metrics labels
# the named namespaces' series netns="NAME" (escaped: promtool accepts it) and caps them with
# --metrics-netns-limit; /healthz is 200 with every namespace fresh; --once --netns prints the
# namespace's table; a bad or missing --netns is refused (exit 2, exit 1); SIGTERM ends it
# cleanly; with --family inet the named namespaces follow IPv4 alone too.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl cmp jq
require_rtsnapd

# code NS PATH [CURL-ARG...]: the HTTP status of GET PATH
code() {
	local ns=$1 path=$2
	shift 2
	ip netns exec "$ns" curl -sg -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$RTSNAP_URL$path"
}
# body NS PATH [CURL-ARG...]: the body of GET PATH, whatever the status
body() {
	local ns=$1 path=$2
	shift 2
	ip netns exec "$ns" curl -sg --max-time 5 "$@" "$RTSNAP_URL$path"
}
# enc NAME: NAME percent-encoded as /netns shows it (every byte but A-Za-z0-9-._~)
enc() {
	local s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}
# named NAME N: add the named namespace NAME (deleted on exit) with a veth pair and routes
# of its own, 2001:db8:N::/64 and 10.N.0.0/16, and 2001:db8::/32 (as in the test namespace:
# /routes/lookup?addr=2001:db8::1 finds it in either)
named() {
	ip netns add "$1" || return 1
	_ns_list+=("$1")
	ip -n "$1" link set lo up &&
		ip -n "$1" link add d0 type veth peer name d1 &&
		ip -n "$1" link set d0 up &&
		ip -n "$1" -6 route add "2001:db8:$2::/64" dev d0 &&
		ip -n "$1" -4 route add "10.$2.0.0/16" dev d0 &&
		ip -n "$1" -6 route add 2001:db8::/32 dev d0
}

ns_new NS
ip -n "$NS" -6 route add 2001:db8::/32 dev lo
N1="rtsnapt-$$-plain"
N2="rtsnapt-$$ a<script>alert(1)"
N3="rtsnapt-$$ 100%41\"q'"
named "$N1" 71 && named "$N2" 72 && named "$N3" 73
tap_ok $? "ip netns add: a plain name, one with a space and <script>, one with % and quotes" || tap_done

# refused before anything starts
ip netns exec "$NS" "$RTSNAPD" --netns 'a/b' --listen "$RTSNAP_LISTEN" >/dev/null 2>&1
tap_is "$?" 2 "--netns a/b (not a name): exit status 2"
ip netns exec "$NS" "$RTSNAPD" --netns "rtsnapt-$$-none" --listen "$RTSNAP_LISTEN" \
	>"$RTSNAP_TMP/none.err" 2>&1
tap_is "$?" 1 "--netns of a namespace that does not exist: exit status 1"
grep -q "/run/netns/rtsnapt-$$-none" "$RTSNAP_TMP/none.err"
tap_ok $? "... naming its path" || tap_diag "$(cat "$RTSNAP_TMP/none.err")"

# --once --netns: that namespace's table, as its kernel shows it
ip netns exec "$NS" "$RTSNAPD" --once --netns "$N2" --format proc | proc_masked >"$RTSNAP_TMP/once"
ip netns exec "$N2" cat /proc/net/ipv6_route | proc_masked >"$RTSNAP_TMP/once.k"
tap_diff "$RTSNAP_TMP/once.k" "$RTSNAP_TMP/once" "--once --netns NAME prints that namespace's ipv6_route"

daemon_start "$NS" --netns "$N1" --netns "$N2" --netns "$N3" --metrics-netns-limit 2
tap_ok $? "rtsnapd --netns x3 starts" || tap_done

# /netns: own first, then by name (strcmp: "rtsnapt-$$ 1..." < "rtsnapt-$$ a..." < "-plain")
http_get "$NS" /netns >"$RTSNAP_TMP/netns"
tap_ok $? "/netns answers"
tap_is "$(jq -r '[.namespaces[] | .own] | map(tostring) | join(",")' "$RTSNAP_TMP/netns")" \
	"true,false,false,false" "/netns: the own namespace first, then three named ones"
tap_is "$(jq -r '.namespaces[1:] | map(.name) | join("|")' "$RTSNAP_TMP/netns")" "$N3|$N2|$N1" \
	"/netns: the named ones by name, names JSON-escaped and intact"
tap_is "$(jq -r '.namespaces | map(.path) | join("|")' "$RTSNAP_TMP/netns")" \
	"/|/netns/$(enc "$N3")/|/netns/$(enc "$N2")/|/netns/$(enc "$N1")/" \
	"/netns: paths percent-encoded"
tap_is "$(jq -r '[.namespaces[] | .healthy and (.generation >= 1) and (.generation4 >= 1)] | all' "$RTSNAP_TMP/netns")" \
	true "/netns: every namespace healthy, with both families' generations"
grep -q '<script>' "$RTSNAP_TMP/netns" && ! grep -q '"name": "rtsnapt-[0-9]* 100%41"q' "$RTSNAP_TMP/netns"
tap_ok $? "/netns: the quote in a name is escaped"

for name in "$N1" "$N2" "$N3"; do
	p="/netns/$(enc "$name")"
	bad=''
	for path in ipv6_route proc/net/ipv6_route route proc/net/route routes "routes?family=all" \
		"routes/lookup?addr=2001:db8::1" expiring status healthz "changes?since=1" \
		"changes?family=all&since=4.1-6.1"; do
		c=$(code "$NS" "$p/$path")
		[ "$c" = 200 ] || bad+=" $path:$c"
	done
	tap_is "$bad" "" "every path under /netns/$name/ answers 200"
	st=$(http_get "$NS" "$p/status")
	tap_is "$(jq -r .netns <<<"$st")" "$name" "/netns/.../status names its namespace (JSON-escaped)"
	ip netns exec "$NS" curl -sgN --max-time 1 "$RTSNAP_URL$p/events?family=all" >"$RTSNAP_TMP/ev" 2>/dev/null
	grep -q "change stream after generation" "$RTSNAP_TMP/ev"
	tap_ok $? "/netns/.../events streams"
	tap_is "$(code "$NS" "$p/metrics")" 404 "/netns/.../metrics is a 404"
	tap_is "$(code "$NS" "$p/")" 404 "/netns/.../ (the web page) is a 404"

	# the routes are the namespace's
	ip netns exec "$name" cat /proc/net/ipv6_route | proc_masked >"$RTSNAP_TMP/k6"
	http_get "$NS" "$p/ipv6_route" | proc_masked >"$RTSNAP_TMP/d6"
	tap_diff "$RTSNAP_TMP/k6" "$RTSNAP_TMP/d6" "/netns/.../ipv6_route is that namespace's /proc/net/ipv6_route"
	ip netns exec "$name" cat /proc/net/route >"$RTSNAP_TMP/k4"
	http_get "$NS" "$p/route" >"$RTSNAP_TMP/d4"
	tap_diff "$RTSNAP_TMP/k4" "$RTSNAP_TMP/d4" "/netns/.../route is that namespace's /proc/net/route"
done

# unknown names, escapes
b=$(body "$NS" /netns/nope/status)
tap_is "$(code "$NS" /netns/nope/status) $(jq -r .error <<<"$b")" "404 no such namespace: nope" \
	"an unknown namespace: a JSON 404"
b=$(body "$NS" "/netns/$(enc 'x"<y>')/status")
tap_is "$(jq -r .error <<<"$b")" 'no such namespace: x"<y>' "... its name JSON-escaped"
tap_is "$(code "$NS" /netns/../status --path-as-is)" 404 "/netns/../status: a 404"
tap_is "$(code "$NS" "/netns/$(enc "$N1")/../status" --path-as-is)" 404 "/netns/NAME/../status: a 404"
tap_is "$(code "$NS" "/netns/$(enc "$N1")/../../metrics" --path-as-is)" 404 "/netns/NAME/../../metrics: a 404"
tap_is "$(code "$NS" /netns/%2e%2e/status)" 404 "/netns/%2e%2e/status: a 404"

# the own namespace is unchanged
tap_is "$(http_get "$NS" /status | jq -r 'has("netns")')" false "/status has no netns field"
tap_is "$(code "$NS" /healthz)" 200 "/healthz: 200 with every namespace fresh"
kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/own.k"
http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/own.d"
tap_diff "$RTSNAP_TMP/own.k" "$RTSNAP_TMP/own.d" "/ipv6_route is still the own namespace's"

# /metrics: the two lowest names labelled, the third counted
http_get "$NS" /metrics >"$RTSNAP_TMP/m.prom"
tap_ok $? "/metrics answers"
if command -v promtool >/dev/null; then
	promtool check metrics <"$RTSNAP_TMP/m.prom" >"$RTSNAP_TMP/m.lint" 2>&1
	tap_ok $? "/metrics passes promtool check metrics" || tap_diag "$(head "$RTSNAP_TMP/m.lint")"
else
	tap_skip "promtool not installed"
fi
lbl3="rtsnapt-$$ 100%41\\\"q'"
grep -qF "rtsnap_snapshot_fresh{netns=\"$lbl3\"} 1" "$RTSNAP_TMP/m.prom"
tap_ok $? "/metrics: netns=\"...\" with the quote escaped"
grep -qF "rtsnap_routes{family=\"inet6\",netns=\"$N2\"," "$RTSNAP_TMP/m.prom"
tap_ok $? "/metrics: per-snapshot series labelled too"
tap_is "$(grep -cF "netns=\"$N1\"" "$RTSNAP_TMP/m.prom")" 0 \
	"/metrics: the third name is beyond --metrics-netns-limit 2"
tap_is "$(grep -E '^rtsnap_netns_(served|omitted) ' "$RTSNAP_TMP/m.prom" | tr '\n' ' ')" \
	"rtsnap_netns_served 3 rtsnap_netns_omitted 1 " "/metrics: rtsnap_netns_served and rtsnap_netns_omitted"
tap_is "$(awk '$1 == "rtsnap_netns_omitted_routes" { print ($2 > 0) }' "$RTSNAP_TMP/m.prom")" 1 \
	"/metrics: rtsnap_netns_omitted_routes counts its routes"
tap_is "$(grep -c '^rtsnap_snapshot_fresh 1$' "$RTSNAP_TMP/m.prom")" 1 \
	"/metrics: the own namespace's series keep their labels"
ip netns exec "$NS" curl -sg --max-time 5 -H 'Accept-Encoding: gzip' "$RTSNAP_URL/metrics" |
	gunzip >"$RTSNAP_TMP/m.gz.prom" 2>/dev/null
tap_is "$(grep -c netns= "$RTSNAP_TMP/m.gz.prom")" "$(grep -c netns= "$RTSNAP_TMP/m.prom")" \
	"/metrics with gzip: the same series"

daemon_stop "$NS"
tap_is "$?" 0 "SIGTERM: clean exit"

# the same --family for the named namespaces: IPv4 alone
daemon_start "$NS" --family inet --netns "$N1"
tap_ok $? "rtsnapd --family inet --netns starts" || tap_done
p="/netns/$(enc "$N1")"
tap_is "$(code "$NS" "$p/route") $(code "$NS" "$p/ipv6_route") $(code "$NS" "$p/routes?family=inet6")" \
	"200 404 404" "--family inet: /netns/NAME/route 200, its IPv6 paths 404"
tap_is "$(http_get "$NS" /netns | jq -c '.namespaces[1] | [.families, .generation, (.generation4 >= 1)]')" \
	'[["inet"],null,true]' "/netns: the named namespace follows IPv4 alone"
tap_is "$(http_get "$NS" "$p/status" | jq -r '[.family, .netns] | join(" ")')" "inet $N1" \
	"/netns/NAME/status: its top level is its IPv4 instance's"
daemon_stop "$NS"
tap_is "$?" 0 "SIGTERM: clean exit"
tap_done
