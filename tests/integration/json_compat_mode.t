#!/bin/bash
# json_compat_mode.t - net.ipv4.nexthop_compat_mode (it applies to IPv6 routes too) switched off
# and on again. With 1 the messages of routes over nexthop objects carry the objects' gateway
# and device (a group's members in RTA_MULTIPATH), with 0 only RTA_NH_ID; switching it sends no
# message at all. rtsnapd reads the sysctl once a second while nexthop objects exist and
# re-reads the tables with routes over them when it changes
# (targeted_dumps{reason="compat"}). Checked with the daemon running through each switch and
# with a fresh dump after them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" a0 "" a1 || tap_bail "veth"
veth_pair "$NS" b0 "" b1 || tap_bail "veth"
compat() { ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode="$1"; }
compat 1 || tap_skip_all "no net.ipv4.nexthop_compat_mode in this kernel"
{
	echo "nexthop add id 1 via fe80::1 dev a0"
	echo "nexthop add id 2 via fe80::2 dev b0"
	echo "nexthop add id 10 group 1/2"
	echo "route add 2001:db8:1::/64 nhid 1"
	echo "route add 2001:db8:2::/64 nhid 10"
	echo "route add 2001:db8:3::/64 nhid 2 table 100"
	echo "route add 2001:db8:4::/64 via fe80::3 dev a0"
} | ip -n "$NS" -batch - || tap_bail "set-up"

daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
fid_check "$NS" "compat mode 1: rtsnapd equals the kernel"
compat 0
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:2::/64") | has("nexthops")]')" '[false]' \
	"kernel: with compat mode 0 the group's route lists no nexthops"
fid_check "$NS" "compat mode 0: rtsnapd follows"
ip -n "$NS" -6 route add 2001:db8:5::/64 nhid 10
fid_check "$NS" "compat mode 0, a route added over the group: rtsnapd follows"
compat 1
fid_check "$NS" "compat mode 1 again: rtsnapd follows"
wait_true 3 '[ "$(fid_tdumps "$NS" compat)" -ge 3 ]' # the counters may trail the views
tap_ok "$([ "$(fid_tdumps "$NS" compat)" -ge 3 ]; echo $?)" \
	"each switch re-read the two tables with routes over objects (targeted_dumps{reason=\"compat\"} = $(fid_tdumps "$NS" compat))"
compat 0
fid_check_once "$NS" "compat mode 0: a fresh dump equals the kernel"
compat 1
fid_check_once "$NS" "compat mode 1: a fresh dump equals the kernel"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
