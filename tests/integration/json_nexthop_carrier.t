#!/bin/bash
# json_nexthop_carrier.t - a device that goes down, or only loses its carrier, takes its nexthop
# objects with it: the kernel flushes them (and shrinks the groups that held them) without
# RTM_DELNEXTHOP, and the routes over them go with a RTM_DELROUTE each only while
# net.ipv4.nexthop_compat_mode is 1. rtsnapd re-dumps the nexthop objects when a device that
# carries some goes down or loses its carrier (reason="nexthop"), drops the routes over objects
# that are gone and re-reads the tables with routes over groups (reason="group"). Checked with
# compat mode 1 and 0, with the daemon running (both views against the kernel) and with a fresh
# dump after.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

for mode in 1 0; do
	ns_new NS
	ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode=$mode || tap_skip_all "no compat mode sysctl"
	veth_pair "$NS" a0 "" a1 || tap_bail "veth"
	veth_pair "$NS" b0 "" b1 || tap_bail "veth"
	veth_pair "$NS" c0 "" c1 || tap_bail "veth"
	{
		echo "nexthop add id 1 via fe80::1 dev a0"
		echo "nexthop add id 2 via fe80::2 dev b0"
		echo "nexthop add id 3 via fe80::3 dev c0"
		echo "nexthop add id 10 group 1/2/3"
		echo "route add 2001:db8:1::/64 nhid 1"
		echo "route add 2001:db8:2::/64 nhid 10"
		echo "route add 2001:db8:3::/64 nhid 3 table 100"
		echo "route add 2001:db8:4::/64 nhid 2"
	} | ip -n "$NS" -batch - || tap_bail "set-up"
	daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
	fid_check "$NS" "compat $mode: at start, rtsnapd equals the kernel"
	ip -n "$NS" link set a1 down # a0 loses its carrier, stays up
	wait_true 3 '! ip -n "$NS" nexthop show id 1 >/dev/null 2>&1'
	tap_is "$(ip -n "$NS" nexthop show id 10 | tr -s ' ' | cut -d' ' -f1-4)" "id 10 group 2/3" \
		"compat $mode kernel: a0's carrier loss flushed object 1 and shrank group 10"
	fid_check "$NS" "compat $mode: carrier loss: rtsnapd follows"
	ip -n "$NS" link set b0 down
	fid_check "$NS" "compat $mode: b0 set down: rtsnapd follows"
	ip -n "$NS" link set a1 up
	ip -n "$NS" link set b0 up
	fid_check "$NS" "compat $mode: both back (the objects stay gone): rtsnapd follows"
	fid_check_once "$NS" "compat $mode: a fresh dump equals the kernel"
	daemon_stop "$NS" >/dev/null
	tap_ok $? "compat $mode: clean exit"
done
tap_done
