#!/bin/bash
# proc_ra_prefix_static.t - an RA on-link prefix route becomes static when an address inside
# the prefix is added by hand: the kernel clears its RA flags (RTF_ADDRCONF|RTF_PREFIX_RT) and
# its expiry with no route message, only RTM_NEWADDR for the address. rtsnapd re-reads the
# device's routes (the expiry, reason="address") and the RTF_PREFIX_RT marks (an RTM_F_PREFIX
# dump, reason="prefix", that also clears the marks it no longer lists) on every RTM_NEWADDR.
# Checked with the daemon running (/ipv6_route and /routes against the kernel) and with a
# fresh dump after.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq radvd
require_rtsnapd

ns_new NS
ns_new PEER
rk_ra "$NS" "$PEER"
tap_ok $? "radvd in $PEER, RA routes learned in $NS" || tap_done
tap_is "$(proc_get "$NS" 2001:db8:a::/64 flags)" 004c0001 "kernel: the finite RA prefix is UP|ADDRCONF|PREFIX_RT|EXPIRES"
daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
fid_check "$NS" "at start, rtsnapd equals the kernel"
ip -n "$NS" addr add 2001:db8:a::5/64 dev h0 nodad
tap_is "$(proc_get "$NS" 2001:db8:a::/64 flags)" 00000001 \
	"kernel: an address added inside it made the prefix route static (00000001)"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:a::/64") | has("expires")]')" '[false]' \
	"kernel: ... and it no longer expires"
fid_check "$NS" "rtsnapd follows (proc flags and expiry)"
ip -n "$NS" addr add 2001:db8:b::5/64 dev h0 nodad
fid_check "$NS" "an address in the infinite RA prefix: rtsnapd follows ($(proc_get "$NS" 2001:db8:b::/64 flags) in the kernel)"
sleep 4.5 # an RA or two: the prefix stays static
fid_check "$NS" "after the next RAs, rtsnapd still equals the kernel"
ip -n "$NS" addr del 2001:db8:a::5/64 dev h0
fid_check "$NS" "the address deleted: rtsnapd follows ($(proc_get "$NS" 2001:db8:a::/64 flags) in the kernel)"
fid_check_once "$NS" "a fresh dump equals the kernel too"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
