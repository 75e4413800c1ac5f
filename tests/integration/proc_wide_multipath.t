#!/bin/bash
# proc_wide_multipath.t - multipath routes wider than 1 024 nexthops (issue 12, item 5).
#
# The kernel accepts any number of siblings through `ip route append`. It announces such a route
# in one RTM_NEWROUTE sized to fit, and /proc/net/ipv6_route lists one line per hop; a dump
# message must fit one dump buffer (about 32 KiB, some 1 100 hops with gateways), and a route
# wider than that stops the dump of its table early without an error (seen with 2 200 hops:
# `ip -6 route show` prints nothing at all then). So:
#   - 1 100 hops: the daemon and --once equal the kernel's file;
#   - 2 200 hops: the daemon, which follows notifications, equals the kernel's file; a resync
#     is skipped (it could only be wrong) and says so; --once, which only has a dump, cannot
#     (TODO: a kernel limit);
#   - 600 hops with an encapsulation each (400 ip6 tunnels where the kernel has no seg6): as wide for a dump as 2 200 plain ones (a seg6
#     encapsulation adds 44 bytes to a hop), so the same.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

wide() { # NS N: 2001:db8::/64 with N gateway hops
	for i in $(seq 1 "$2"); do printf 'route append 2001:db8::/64 via fe80::%x dev v0\n' "$i"; done |
		ip -n "$1" -6 -batch -
}

ns_new NS
veth_pair "$NS" v0 "" v1 || tap_bail "veth"
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
wide "$NS" 1100
tap_is "$(proc_count "$NS" '^20010db8')" 1100 "kernel: 1 100 lines for the route"
check_proc_http "$NS" /ipv6_route "1 100 hops: /ipv6_route equals the kernel's file"
check_proc_once "$NS" "1 100 hops: --once equals the kernel's file"
ip -n "$NS" -6 route del 2001:db8::/64
wide "$NS" 2200
tap_is "$(proc_count "$NS" '^20010db8')" 2200 "kernel: 2 200 lines for the route"
check_proc_http "$NS" /ipv6_route "2 200 hops: /ipv6_route equals the kernel's file"
kill -HUP "${_daemon_pid[$NS]}"
wait_until 5 grep -q 'resync (signal) skipped' "${_daemon_log[$NS]}"
tap_ok $? "the resync is skipped, and logged"
check_proc_http "$NS" /ipv6_route "2 200 hops after the skipped resync: /ipv6_route equals the kernel's file"
tap_is "$(http_get "$NS" /status | jq .malformed_messages)" 0 "no message counted as malformed"
TAP_TODO="a dump stops at a route too large for one dump message; --once has only a dump" \
	check_proc_once "$NS" "2 200 hops: --once equals the kernel's file"
ip -n "$NS" -6 route del 2001:db8::/64
# A kernel without segment routing tunnels gets an ip6 tunnel per hop: 88 bytes in a message,
# 116 with the hop, so 400 hops (the kernel cannot announce more than 564 of them: a
# message's RTA_MULTIPATH is limited to 64 KiB, and past that the append is not notified).
enc='seg6 mode encap segs' hops=600
ip -n "$NS" -6 route add 2001:db8:ffff::/64 encap seg6 mode encap segs fc00::1 dev lo 2>/dev/null ||
	enc='ip6 dst' hops=400
ip -n "$NS" -6 route del 2001:db8:ffff::/64 2>/dev/null
for i in $(seq 1 "$hops"); do
	printf 'route append 2001:db8::/64 encap %s fc00::%x via fe80::%x dev v0\n' "$enc" "$i" "$i"
done | ip -n "$NS" -6 -batch -
tap_is "$(proc_count "$NS" '^20010db8')" "$hops" "kernel: $hops lines for the route with encapsulations"
tap_is "$(kernel_json "$NS" | jq '[.[] | select(.dst == "2001:db8::/64")] | length')" 0 \
	"kernel: no dump can carry it (ip -j shows nothing of it)"
check_proc_http "$NS" /ipv6_route "$hops encapsulated hops: /ipv6_route equals the kernel's file"
kill -HUP "${_daemon_pid[$NS]}"
wait_until 5 sh -c "[ \$(grep -c 'resync (signal) skipped' '${_daemon_log[$NS]}') -ge 2 ]"
tap_ok $? "the resync is skipped again: encapsulations count in a route's dump size"
check_proc_http "$NS" /ipv6_route "$hops encapsulated hops after the skipped resync: /ipv6_route equals the kernel's file"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
