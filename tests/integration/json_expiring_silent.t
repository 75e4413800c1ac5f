#!/bin/bash
# json_expiring_silent.t - an expiring route changed without a message. `ip -6 route append` (or
# prepend) of a route identical to an existing expiring one fails with EEXIST, yet the kernel
# moves the existing route's expiry to the new one's, or clears it when the append has none
# (fib6_add_rt2node, the duplicate-nexthop branch), and announces nothing. rtsnapd checks the
# expiring routes of its published snapshot every 2 s (a strict dump per table, device and
# protocol among them, reason="expiring"), so such a change is served within about 2 s plus a
# publication; with no expiring route it does nothing at all. Checked with the daemon running
# and with a fresh dump after.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" a0 "" a1 || tap_bail "veth"
ip netns exec "$NS" sysctl -qw net.ipv6.route.gc_interval=3600
ip -n "$NS" -6 route add 2001:db8:1::/64 dev a0
daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
sleep 5
tap_is "$(fid_tdumps "$NS" expiring)" 0 "no expiring route: no check ran in 5 s"

exp_of() { kernel_json "$NS" | jq -c "[.[] | select(.dst == \"$1\") | .expires // 0]"; }
ip -n "$NS" -6 route add 2001:db8:2::/64 dev a0 metric 3000 expires 600
ip -n "$NS" -6 route add 2001:db8:3::/64 via fe80::1 dev a0 metric 3000 expires 600 table 100
ip -n "$NS" -6 route add 2001:db8:4::/64 dev a1 metric 3000 expires 600 proto static
fid_check "$NS" "three expiring routes added: rtsnapd equals the kernel"
ip -n "$NS" -6 route append 2001:db8:2::/64 dev a0 metric 3000 expires 100 2>/dev/null
tap_is "$?" 2 "kernel: append of an identical route answers EEXIST"
tap_ok "$(exp_of 2001:db8:2::/64 | jq -e '.[0] <= 100 and .[0] > 90' >/dev/null; echo $?)" \
	"kernel: ... and moved the expiry to 100 s ($(exp_of 2001:db8:2::/64))"
t0=$(date +%s%N)
fid_check "$NS" "rtsnapd follows the moved expiry"
tap_diag "served after $((($(date +%s%N) - t0) / 1000000)) ms"
ip -n "$NS" -6 route append 2001:db8:3::/64 via fe80::1 dev a0 metric 3000 table 100 2>/dev/null
tap_is "$(exp_of 2001:db8:3::/64)" "[0]" "kernel: an append without expires cleared the expiry (EEXIST again)"
t0=$(date +%s%N)
fid_check "$NS" "rtsnapd follows the cleared expiry (proc flags too)"
tap_diag "served after $((($(date +%s%N) - t0) / 1000000)) ms"
ip -n "$NS" -6 route prepend 2001:db8:4::/64 dev a1 metric 3000 expires 2000 proto static 2>/dev/null
fid_check "$NS" "a prepend that lengthens an expiry: rtsnapd follows"
wait_true 3 '[ "$(fid_tdumps "$NS" expiring)" -ge 3 ]' # the counters may trail the views
tap_ok "$([ "$(fid_tdumps "$NS" expiring)" -ge 3 ]; echo $?)" \
	"the checks ran (targeted_dumps{reason=\"expiring\"} = $(fid_tdumps "$NS" expiring))"
fid_check_once "$NS" "a fresh dump equals the kernel too"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
