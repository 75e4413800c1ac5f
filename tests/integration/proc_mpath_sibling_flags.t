#!/bin/bash
# proc_mpath_sibling_flags.t - ECMP siblings with their own pref/expires flags.
# Builds the case with rk_mpath_sibling_flags (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_mpath_sibling_flags "$NS"
tap_ok $? "build siblings with different flags in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:21::/64 flags)" $'18000003\n08400003\n00000003' "kernel: each sibling prints its own flags"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:21::/64") | [.pref, (.expires // 0 | . > 0), (.nexthops | length)]]')" \
	'[["low",false,3]]' "kernel: the dump has the first sibling's pref and no expiry for all three"

check_proc_views "$NS" "RTA_MULTIPATH carries only the first sibling's pref and expiry"
tap_done
