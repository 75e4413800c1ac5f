#!/bin/bash
# json_ra.t - routes learned from router advertisements (radvd in a peer namespace):
# default router with preference and lifetime, prefix routes, route-information
# options with and without lifetime, a ::/0 route-information option. rtsnapd's
# JSON (--once and GET /routes) must be the bytes `ip -j -6 route show table all`
# prints in the same namespace, "expires" within 1 s.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq radvd
require_rtsnapd


ns_new NS
ns_new PEER
ns_new NS2
ns_new PEER2
rk_ra "$NS" "$PEER"
tap_ok $? "radvd in $PEER, RA routes learned in $NS"
rk_ra_rtinfo_default "$NS2" "$PEER2"
tap_ok $? "radvd in $PEER2 (route information for ::/0), learned in $NS2"

tap_is "$(kernel_json "$NS" | jq '[.[] | select(.protocol == "ra" and .expires)] | length > 0')" true \
	"kernel: RA routes carry protocol ra and expires"
tap_is "$(kernel_json "$NS" | jq -r '[.[] | select(.protocol == "ra") | .pref] | unique | join(",")')" \
	"high,low,medium" "kernel: RA routes carry every preference"

for ns in "$NS" "$NS2"; do
	json_compare "$ns" "$ns: --once --format json equals ip -j -6 route show table all" \
		ip netns exec "$ns" "$RTSNAPD" --once --format json
	daemon_start "$ns" --debounce-ms 20
	tap_ok $? "$ns: rtsnapd starts" || continue
	json_compare "$ns" "$ns: GET /routes equals ip -j -6 route show table all" http_get "$ns" /routes
	JSON_FILTER='[.[] | select(.protocol == "ra")]' json_compare "$ns" \
		"$ns: GET /routes?protocol=ra equals the kernel's routes with protocol ra" \
		http_get "$ns" '/routes?protocol=ra'
	daemon_stop "$ns" >/dev/null
	tap_ok $? "$ns: rtsnapd exits 0 on SIGTERM"
done
tap_done
