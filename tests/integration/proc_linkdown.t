#!/bin/bash
# proc_linkdown.t - routes over interfaces without carrier or administratively down.
# Builds the case with rk_linkdown (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_linkdown "$NS"
tap_ok $? "build routes over down links in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:20::/64)" "00000400 00000001 nc0" "kernel: no carrier: route listed, flags unchanged"
tap_is "$(proc_get "$NS" 2001:db8:22::/64)" "00000100 00000001 nc0" "kernel: connected route of a carrier-less device"
tap_is "$(proc_get "$NS" 2001:db8:30::/64)" "" "kernel: routes via an admin-down device are deleted"
tap_is "$(proc_get "$NS" 2001:db8:31::/64)" "" "kernel: ... and so is its connected route"
tap_is "$(proc_get "$NS" 2001:db8:41::/64 dev | tr '\n' ' ')" "dn0 up0 nc0 " "kernel: a dead multipath nexthop stays listed"
tap_is "$(kernel_json "$NS" | jq -c '.[] | select(.dst == "2001:db8:41::/64") | [.nexthops[].flags]')" \
	'[["dead","linkdown"],[],["linkdown"]]' "kernel: netlink marks it dead,linkdown"
tap_is "$(kernel_json "$NS" | jq -c '.[] | select(.dst == "2001:db8:20::/64") | .flags')" \
	'["linkdown"]' "kernel: RTNH_F_LINKDOWN in rtm_flags"

check_proc_views "$NS"
tap_done
