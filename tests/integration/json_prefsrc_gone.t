#!/bin/bash
# json_prefsrc_gone.t - deleting an address clears it as the preferred source (`src`) of every
# route that named it, on any device and siblings included, without a route message
# (rt6_remove_prefsrc); only RTM_DELADDR arrives. rtsnapd re-reads the routes that named it
# (targeted_dumps{reason="prefsrc"}) and clears it from the siblings it keeps apart. Checked
# with the daemon running and with a fresh dump after.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" a0 "" a1 || tap_bail "veth"
veth_pair "$NS" b0 "" b1 || tap_bail "veth"
for i in 1 2; do ip -n "$NS" addr add 2001:db8:ff::$i/128 dev lo; done
r() { ip -n "$NS" -6 route "$@" || tap_bail "ip -6 route $*"; }
daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
r add 2001:db8:1::/64 via fe80::1 dev a0 src 2001:db8:ff::1
r add 2001:db8:2::/64 dev b0 src 2001:db8:ff::1 table 100
r add 2001:db8:3::/64 via fe80::1 dev a0 src 2001:db8:ff::2
r append 2001:db8:3::/64 via fe80::2 dev b0 src 2001:db8:ff::1
r add 2001:db8:4::/64 via fe80::1 dev a0 src 2001:db8:ff::2
fid_check "$NS" "routes with a preferred source: rtsnapd equals the kernel"
ip -n "$NS" addr del 2001:db8:ff::1/128 dev lo
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:1::/64" or .dst == "2001:db8:2::/64") | .prefsrc // "none"]')" \
	'["none","none"]' "kernel: the address deleted, the routes that named it have no prefsrc any more"
fid_check "$NS" "rtsnapd follows"
wait_true 3 '[ "$(fid_tdumps "$NS" prefsrc)" -ge 1 ]' # the counters may trail the views
tap_ok "$([ "$(fid_tdumps "$NS" prefsrc)" -ge 1 ]; echo $?)" "counted (targeted_dumps{reason=\"prefsrc\"} = $(fid_tdumps "$NS" prefsrc))"
r del 2001:db8:3::/64 via fe80::1 dev a0
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:3::/64") | .prefsrc // "none"]')" '["none"]' \
	"kernel: the sibling that named it, now alone, has none either"
fid_check "$NS" "rtsnapd follows (the sibling kept apart lost it too)"
fid_check_once "$NS" "a fresh dump equals the kernel too"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
