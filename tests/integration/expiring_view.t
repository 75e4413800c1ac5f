#!/bin/bash
# expiring_view.t - GET /expiring and the expiry refresh.
#
# /expiring lists the routes that carry an expiry (the kernel shows "expires" for them),
# soonest deadline first, each object exactly as /routes and ip -j show it ("expires" is
# the time left at the response, within 1 s of what ip prints), plus "expired": true on the
# routes whose deadline has passed but which the kernel still lists (its GC interval is
# set to an hour here, so overdue routes stay). /routes?expiring=1 is the same set in
# kernel order. A route that expires 3 s after the daemon starts shows "expired": true right
# after its deadline, with no dump of the kernel: everything that depends on the time is
# computed per response, and the kernel itself keeps listing the route until its GC runs.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
rk_expires "$NS"
tap_ok $? "routes with lifetimes in $NS (one already overdue)" || tap_done
sleep 1.2 # let the overdue route (expires 0) be more than a second late
tap_is "$(kernel_json "$NS" | jq '[.[] | select(has("expires") and .expires < 0)] | length')" 1 "kernel: the overdue route is still listed, with negative expires"

daemon_start "$NS" --debounce-ms 20 --interval 0
tap_ok $? "rtsnapd starts (no periodic resync)" || tap_done

MASKJQ='del(.expires, .expired)'
# compare_expiring DESC: /expiring equals the kernel's expiring routes sorted by time left
compare_expiring() {
	local desc=$1 i
	for i in $(seq 10); do
		kernel_json "$NS" >"$RTSNAP_TMP/k.json"
		http_get "$NS" /expiring >"$RTSNAP_TMP/e.json"
		kernel_json "$NS" >"$RTSNAP_TMP/k2.json"
		jq -c "[.[] | select(has(\"expires\"))] | sort_by(.expires) | .[] | $MASKJQ" "$RTSNAP_TMP/k.json" >"$RTSNAP_TMP/want"
		jq -c ".[] | $MASKJQ" "$RTSNAP_TMP/e.json" >"$RTSNAP_TMP/got"
		cmp -s "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" && cmp -s <(jq -c "map($MASKJQ)" "$RTSNAP_TMP/k.json") \
			<(jq -c "map($MASKJQ)" "$RTSNAP_TMP/k2.json") && break
		sleep 0.3
	done
	tap_diff "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" "$desc: the kernel's expiring routes, soonest first, objects as ip prints them"
	paste <(jq '[.[] | select(has("expires"))] | sort_by(.expires) | .[].expires' "$RTSNAP_TMP/k.json") \
		<(jq '.[].expires' "$RTSNAP_TMP/e.json") |
		awk '{ d = $1 - $2; if (NF != 2 || d > 1 || d < -1) bad = 1 } END { exit bad }'
	tap_ok $? "$desc: expires within 1 s of ip's"
	# ip prints whole seconds truncated toward 0: -1 and less is overdue, 2 and more is not
	paste <(jq '[.[] | select(has("expires"))] | sort_by(.expires) | .[].expires' "$RTSNAP_TMP/k.json") \
		<(jq '.[] | .expired // false' "$RTSNAP_TMP/e.json") |
		awk '($1 < 0 && $2 != "true") || ($1 > 1 && $2 != "false") { bad = 1 } END { exit bad }'
	tap_ok $? "$desc: \"expired\": true on the overdue routes and only on them"
	tap_is "$(jq -c '[.[] | select(has("expired") and .expired != true)] | length' "$RTSNAP_TMP/e.json")" 0 \
		"$desc: \"expired\" is only ever true"
}
compare_expiring "initial"

# /routes?expiring=1: the same routes in kernel order, and expires counted at response time
for i in $(seq 10); do
	kernel_json "$NS" | jq -c '[.[] | select(has("expires"))] | map(del(.expires))' >"$RTSNAP_TMP/want"
	http_get "$NS" '/routes?expiring=1' | jq -c 'map(del(.expires))' >"$RTSNAP_TMP/got"
	cmp -s "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" && break
	sleep 0.3
done
tap_diff "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" "/routes?expiring=1 = the kernel's expiring routes in kernel order"
a=$(http_get "$NS" '/routes?prefix=2001:db8:403::/48' | jq '.[0].expires')
sleep 2.2
b=$(http_get "$NS" '/routes?prefix=2001:db8:403::/48' | jq '.[0].expires')
tap_cmd "expires counts down between two responses of one snapshot ($a then $b)" test $((a - b)) -ge 2

# a route that expires in 3 s: right after its deadline it is "expired", with no dump
gen() { ip netns exec "$NS" curl -sg "$RTSNAP_URL/status" | jq "$1"; }
ip -n "$NS" -6 route add 2001:db8:4ff::/48 dev e0 expires 3
wait_until 5 sh -c "ip netns exec $NS curl -sg $RTSNAP_URL/expiring | grep -q 2001:db8:4ff::/48"
tap_ok $? "the new route appears in /expiring"
before=$(gen '[.collector.full_dumps[]] | add')
# the periodic check of the expiring routes (reason "expiring") runs whatever the deadlines
targeted=$(gen '[.collector.targeted_dumps | del(.expiring)[]] | add')
sleep 3.6
tap_is "$(gen '[.collector.full_dumps[]] | add')" "$before" "no full dump for the deadline"
tap_is "$(gen '[.collector.targeted_dumps | del(.expiring)[]] | add')" "$targeted" "no targeted dump for the deadline"
tap_is "$(http_get "$NS" /expiring | jq -c '[.[] | select(.dst == "2001:db8:4ff::/48") | .expired]')" "[true]" \
	"the overdue route shows \"expired\": true"
compare_expiring "after the deadline"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# nothing expires: an empty array
ns_new NS2
rk_static "$NS2"
daemon_start "$NS2"
tap_is "$(http_get "$NS2" /expiring)" "[]" "no expiring routes: []"
daemon_stop "$NS2" >/dev/null
tap_done
