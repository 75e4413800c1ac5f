#!/bin/bash
# proc_pmtu.t - PMTU exceptions (ip -6 route show cache) never appear in the proc file.
# Builds the case with rk_pmtu (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
ns_new PEER
rk_pmtu "$NS" "$PEER"
tap_ok $? "PMTU exception for 2001:db8:2::2 in $NS" || tap_done

tap_is "$(ip -n "$NS" -6 route show cache | grep -c 'mtu 1280')" 1 "kernel: the exception exists"
tap_is "$(proc_get "$NS" 2001:db8:2::2/128)" "" "kernel: proc does not list it"
tap_is "$(proc_get "$NS" 2001:db8:2::/64)" "00000400 00000003 a0" "kernel: its parent route is listed"

check_proc_views "$NS"
tap_done
