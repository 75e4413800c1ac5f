#!/bin/bash
# proc_addr_lifetime.t - an address's lifetime is its prefix route's (issue 12, item 7): `ip -6
# addr change ... valid_lft` sets or clears the route's expiry (RTF_EXPIRES in the proc file,
# "expires" in ip -j) and the kernel announces only RTM_NEWADDR, no route message. rtsnapd
# re-reads that device's routes (a strict dump filtered on the device, counted as
# targeted_dumps{reason="address"}) and must equal the kernel after each change.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "" v1 || tap_bail "veth"
ip -n "$NS" -6 addr add 2001:db8:5::1/64 dev v0 valid_lft 1000 preferred_lft 1000 nodad
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
flags() { kernel_proc "$NS" | awk '$1 == "20010db8000500000000000000000000" { print $9 }'; }
tap_is "$(flags)" 00400001 "kernel: the prefix route of an address with a lifetime expires"
check_proc_http "$NS" /ipv6_route "lifetime 1000: /ipv6_route equals the kernel's file"
ip -n "$NS" -6 addr change 2001:db8:5::1/64 dev v0 valid_lft forever preferred_lft forever
tap_is "$(flags)" 00000001 "kernel: valid_lft forever clears the route's expiry (no route message)"
check_proc_http "$NS" /ipv6_route "lifetime forever: /ipv6_route equals the kernel's file"
json_compare "$NS" "lifetime forever: /routes equals ip -j" http_get "$NS" /routes
ip -n "$NS" -6 addr change 2001:db8:5::1/64 dev v0 valid_lft 500 preferred_lft 500
check_proc_http "$NS" /ipv6_route "lifetime 500 again: /ipv6_route equals the kernel's file"
json_compare "$NS" "lifetime 500: /routes equals ip -j (expires within 1 s)" http_get "$NS" /routes
tap_cmd "counted as targeted dumps for addresses" \
	sh -c "ip netns exec $NS curl -s $RTSNAP_URL/status | jq -e '.collector.targeted_dumps.address >= 2'"
tap_is "$(http_get "$NS" /status | jq '[.collector.full_dumps[]] | add')" 1 "no full dump besides the one at start"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
