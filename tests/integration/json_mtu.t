#!/bin/bash
# json_mtu.t - a device's MTU change rewrites the mtu metric of the IPv6 routes through it, in
# place and without a route message (rt6_mtu_change: lowered to the device's, or raised back
# when it had been the device's; "mtu lock" routes and routes through other devices keep
# theirs; a multipath leg on the device too, which a dump shows only when it is the first).
# rtsnapd re-reads the device's routes when RTM_NEWLINK brings another IFLA_MTU
# (targeted_dumps{reason="mtu"}). Checked with the daemon running through each change
# (/ipv6_route and /routes against the kernel) and with a fresh dump after them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" a0 "" a1 || tap_bail "veth"
veth_pair "$NS" b0 "" b1 || tap_bail "veth"
r() { ip -n "$NS" -6 route "$@" || tap_bail "ip -6 route $*"; }
r add 2001:db8:1::/64 dev a0 mtu 1400
r add 2001:db8:2::/64 dev a0
r add 2001:db8:3::/64 dev a0 mtu lock 1400
r add 2001:db8:4::/64 via fe80::9 dev a0 mtu 1480
r add 2001:db8:5::/64 mtu 1400 nexthop via fe80::1 dev a0 nexthop via fe80::2 dev b0
r add 2001:db8:6::/64 via fe80::2 dev b0 mtu 1400
r append 2001:db8:6::/64 via fe80::1 dev a0 mtu 1400
r add 2001:db8:7::/64 dev b0 mtu 1400 table 100

daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
fid_check "$NS" "at start, rtsnapd equals the kernel"
ip -n "$NS" link set a0 mtu 1300
tap_is "$(ip -n "$NS" -j -6 route show 2001:db8:1::/64 | jq -c '.[0].metrics')" '[{"mtu":1300}]' \
	"kernel: lowering a0's MTU to 1300 rewrote the route's mtu 1400"
tap_is "$(ip -n "$NS" -j -6 route show 2001:db8:3::/64 | jq -c '.[0].metrics')" '[{"mtu":1400}]' \
	"kernel: ... but not an mtu lock route"
fid_check "$NS" "a0 at MTU 1300: rtsnapd follows"
ip -n "$NS" link set a0 mtu 1450
tap_is "$(ip -n "$NS" -j -6 route show 2001:db8:1::/64 | jq -c '.[0].metrics')" '[{"mtu":1450}]' \
	"kernel: raising it to 1450 raised the route's mtu with it"
fid_check "$NS" "a0 at MTU 1450: rtsnapd follows"
ip -n "$NS" link set b0 mtu 1280
fid_check "$NS" "b0 at MTU 1280 (another table, a first leg): rtsnapd follows"
wait_true 3 '[ "$(fid_tdumps "$NS" mtu)" -ge 3 ]' # the counters may trail the views
tap_ok "$([ "$(fid_tdumps "$NS" mtu)" -ge 3 ]; echo $?)" \
	"each change re-read its device's routes (targeted_dumps{reason=\"mtu\"} = $(fid_tdumps "$NS" mtu))"
fid_check_once "$NS" "a fresh dump equals the kernel too"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
