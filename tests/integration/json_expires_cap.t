#!/bin/bash
# json_expires_cap.t - lifetimes beyond the kernel's reporting cap (issue 12, item 6).
#
# rta_expires is clamped to INT_MAX ticks (about 248 days): a route with a longer lifetime is
# reported with exactly the cap, again and again, until less than that is left. `ip -j` prints
# the cap / USER_HZ each time; rtsnapd must print the same, not count down from it. A lifetime
# under the cap counts down as usual.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "" v1 || tap_bail "veth"
ip -n "$NS" -6 route add 2001:db8::/64 dev v0 expires 4000000000
ip -n "$NS" -6 route add 2001:db8:1::/64 dev v0 expires 30000000
ip -n "$NS" -6 route add 2001:db8:2::/64 dev v0 expires 20000000
# one read of the kernel for both sides: the third lifetime counts down between two reads
k=$(kernel_json "$NS")
tap_is "$(jq -c '[.[] | select(.dst | startswith("2001:db8")) | .expires]' <<<"$k")" \
	"[21474836,21474836,$(jq '.[] | select(.dst == "2001:db8:2::/64") | .expires' <<<"$k")]" \
	"kernel: the two long lifetimes are reported as the cap"
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
json_compare "$NS" "/routes equals ip -j at start" http_get "$NS" /routes
sleep 2.5
got=$(http_get "$NS" /routes | jq -c '[.[] | select(.dst | startswith("2001:db8")) | .expires]')
want=$(kernel_json "$NS" | jq -c '[.[] | select(.dst | startswith("2001:db8")) | .expires]')
tap_diag "2.5 s later: kernel $want, rtsnapd $got"
json_compare "$NS" "/routes equals ip -j 2.5 s later (the cap does not count down)" http_get "$NS" /routes
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
