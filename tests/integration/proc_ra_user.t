#!/bin/bash
# proc_ra_user.t - routes that user space adds with proto ra (issue 12, item 2), as RA clients
# such as systemd-networkd and NetworkManager do. The kernel gives them none of the flags of
# the routes it learns from RAs itself (RTF_ADDRCONF, RTF_DEFAULT, RTF_ROUTEINFO), and netlink
# reports neither kind's flags. rtsnapd tells them apart where netlink allows: a kernel RA
# route has one nexthop, a link-local gateway (the router's address), no nexthop object, and
# lives in the main table (or a VRF's); so a multipath, gateway-less, global-gateway, nexthop
# object or non-main-table route with proto ra is a user's, in proc and in how it groups into
# multipath routes (only a user's can: the kernel keeps RA routes apart). The case netlink
# cannot tell (one link-local gateway in main) is checked as TODO: README, known gaps.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

# user_ra NS: two links, and the routes user space adds with proto ra that rtsnapd can tell
user_ra() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" u0 "" u1 || return 1
	veth_pair "$ns" u2 "" u3 || return 1
	_rk ip -n "$ns" -6 addr add 2001:db8:1::1/64 dev u0 nodad || return 1
	_rk ip -n "$ns" -6 addr add 2001:db8:2::1/64 dev u2 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:50::/64 via 2001:db8:1::2 dev u0 proto ra || return 1
	_rk ip -n "$ns" -6 route add default via 2001:db8:1::2 dev u0 proto ra metric 50 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:51::/64 proto ra nexthop via fe80::1 dev u0 \
		nexthop via fe80::2 dev u2 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:52::/64 dev u0 proto ra || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:53::/64 via fe80::1 dev u0 proto ra table 100 || return 1
	_rk ip -n "$ns" -6 route add default via fe80::1 dev u0 proto ra table 100 expires 600 || return 1
	_rk ip -n "$ns" -6 nexthop add id 1 via fe80::1 dev u0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:55::/64 nhid 1 proto ra
}

ns_new NS
user_ra "$NS" 2>"$RTSNAP_TMP/rk.err"
tap_ok $? "user routes with proto ra" || tap_diag "$(cat "$RTSNAP_TMP/rk.err")"
tap_is "$(kernel_proc "$NS" | awk '($1 ~ /^20010db8005/ || $1 == "00000000000000000000000000000000") && $10 != "lo" { print $9 }' | sort -u)" \
	"00000001
00000003
00400003" "kernel: none of them has RA flags (UP, GATEWAY, EXPIRES only)"
check_proc_once "$NS" "--once --format proc equals the kernel's ipv6_route"
json_compare "$NS" "--once --format json equals ip -j" ip netns exec "$NS" "$RTSNAPD" --once \
	--format json
daemon_start "$NS" --interval 0 --debounce-ms 20
tap_ok $? "rtsnapd starts" || tap_done
check_proc_http "$NS" /ipv6_route "GET /ipv6_route equals the kernel's file"
json_compare "$NS" "GET /routes equals ip -j" http_get "$NS" /routes
# a user's proto ra gateway routes group into multipath routes, in table 100 as anywhere
ip -n "$NS" -6 route append 2001:db8:53::/64 via fe80::2 dev u2 proto ra table 100
ip -n "$NS" -6 route append 2001:db8:50::/64 via 2001:db8:2::2 dev u2 proto ra
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:53::/64" or .dst == "2001:db8:50::/64") | .nexthops | length]')" \
	"[2,2]" "kernel: appended proto ra routes join their group (a user's, not RA-learned)"
check_proc_http "$NS" /ipv6_route "appended: GET /ipv6_route equals the kernel's file"
json_compare "$NS" "appended: GET /routes equals ip -j" http_get "$NS" /routes
ip -n "$NS" -6 route replace 2001:db8:53::/64 via fe80::3 dev u0 proto ra table 100
check_proc_http "$NS" /ipv6_route "replaced: GET /ipv6_route equals the kernel's file"
json_compare "$NS" "replaced: GET /routes equals ip -j" http_get "$NS" /routes
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# the case netlink cannot tell: one link-local gateway, main table
ns_new NS2
rk_prep "$NS2"
veth_pair "$NS2" u0 "" u1
ip -n "$NS2" -6 route add 2001:db8:54::/64 via fe80::1 dev u0 proto ra
ip -n "$NS2" -6 route add default via fe80::1 dev u0 proto ra
tap_is "$(proc_get "$NS2" 2001:db8:54::/64 flags) $(proc_get "$NS2" ::/0 flags | head -n1)" \
	"00000003 00000003" "kernel: a user's proto ra route with a link-local gateway in main: no RA flags"
TAP_TODO="a user's proto ra route with one link-local gateway in main looks like a kernel RA route on netlink (README)" \
	check_proc_once "$NS2" "--once --format proc equals the kernel's ipv6_route"
tap_done
