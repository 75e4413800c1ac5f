#!/bin/bash
# proc_nexthop.t - routes using nexthop objects (nhid), single and groups, compat mode on and off.
# Builds the case with rk_nexthop (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_nexthop "$NS"
tap_ok $? "build nexthop-object routes in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:50::/64 gw flags dev)" "20010db8000100000000000000000002 00000003 n0" "kernel: nhid with gateway"
tap_is "$(proc_get "$NS" 2001:db8:51::/64 gw flags dev)" "20010db8000100000000000000000002 00000003 n0" "kernel: group prints one line, first member"
tap_is "$(proc_get "$NS" 2001:db8:52::/64 gw flags dev)" "20010db8000200000000000000000002 00000003 n1" "kernel: weighted group prints its first member"
tap_is "$(proc_get "$NS" 2001:db8:53::/64)" "00000400 00000001 n0" "kernel: device-only nexthop"
tap_is "$(proc_get "$NS" 2001:db8:54::/64)" "00000400 00000001 lo" "kernel: blackhole nexthop prints 00000001 lo, not 00200200"
tap_is "$(proc_get "$NS" 2001:db8:55::/64)" "00000400 00000003 n0" "kernel: onlink nexthop object sets no 0x4 in proc"
tap_is "$(proc_get "$NS" 2001:db8:56::/64 gw)" "fe800000000000000000000000000099" "kernel: resilient group prints its first member"
tap_is "$(proc_get "$NS" 2001:db8:57::/64)" "00000400 00000001 lo" "kernel: group of a blackhole nexthop"
tap_is "$(proc_get "$NS" 2001:db8:58::/64)" $'00000400 18400003 n0\n000007d0 00000003 n1' "kernel: nhid route keeps EXPIRES and pref"
tap_is "$(kernel_json "$NS" | jq '[.[] | select(.type == "blackhole")] | length')" 2 "kernel: netlink reports blackhole nexthops as rtm_type blackhole"

check_proc_views "$NS"

# Same routes, but the dump no longer expands nexthop objects.
ns_exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode=0
tap_ok $? "nexthop_compat_mode=0 in $NS"
tap_is "$(kernel_json "$NS" | jq '[.[] | select(.gateway or .nexthops)] | length')" 0 \
	"kernel: compat mode 0: no gateway, device or nexthops in the dump"
tap_is "$(proc_get "$NS" 2001:db8:51::/64 gw)" "20010db8000100000000000000000002" "kernel: compat mode 0: proc still prints the gateway"
check_proc_views "$NS"
tap_done
