#!/bin/bash
# proc_lo_renamed.t - the loopback device renamed (issue 12, item 3): the kernel prints the
# loopback's current name for reject routes and placeholder rows, and so must rtsnapd, at start
# and after a rename while it runs.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "" v1 || tap_bail "veth"
ip -n "$NS" link set lo down && ip -n "$NS" link set lo name lo0 && ip -n "$NS" link set lo0 up ||
	tap_bail "cannot rename lo"
ip -n "$NS" -6 route add unreachable 2001:db8:1::/64
ip -n "$NS" -6 route add blackhole 2001:db8:2::/64 table 100
tap_cmd "kernel: reject rows and placeholders name lo0" sh -c "ip netns exec $NS cat /proc/net/ipv6_route | grep -q ' lo0\$'"
check_proc_once "$NS" "--once equals the kernel's file with lo renamed"
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
ip -n "$NS" link set lo0 down && ip -n "$NS" link set lo0 name loopback1 && ip -n "$NS" link set loopback1 up
ip -n "$NS" -6 route add unreachable 2001:db8:3::/64
check_proc_http "$NS" /ipv6_route "renamed again while rtsnapd runs: /ipv6_route equals the kernel's file"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
