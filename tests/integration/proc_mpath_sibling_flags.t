#!/bin/bash
# proc_mpath_sibling_flags.t - ECMP siblings with their own pref/expires flags.
# Builds the case with rk_mpath_sibling_flags (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md (§7.2). A daemon running while the siblings are appended
# learns each one's RTA_PREF and expiry from its append notification and prints them on its own
# proc line; a daemon started afterwards has only a dump, which carries the first sibling's
# for the whole group (a documented gap: TODO).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_prep "$NS"
daemon_start "$NS" --interval 0
tap_ok $? "rtsnapd started before the siblings are added" || tap_done
rk_mpath_sibling_flags "$NS"
tap_ok $? "build siblings with different flags in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:21::/64 flags)" $'18000003\n08400003\n00000003' "kernel: each sibling prints its own flags"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:21::/64") | [.pref, (.expires // 0 | . > 0), (.nexthops | length)]]')" \
	'[["low",false,3]]' "kernel: the dump has the first sibling's pref and no expiry for all three"
check_proc_http "$NS" /ipv6_route "the running daemon's /ipv6_route prints each sibling's flags (from the append notifications)"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

check_proc_views "$NS" "RTA_MULTIPATH carries only the first sibling's pref and expiry"
tap_done
