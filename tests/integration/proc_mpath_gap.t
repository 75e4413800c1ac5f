#!/bin/bash
# proc_mpath_gap.t - a route between two ECMP siblings is invisible to netlink dumps.
# Builds the case with rk_mpath_gap (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_mpath_gap "$NS"
tap_ok $? "build the sibling gap in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:20::/64 gw dev)" \
	"20010db8000100000000000000000002 g0
00000000000000000000000000000000 g1
20010db8000100000000000000000003 g0
20010db8000100000000000000000007 g0" "kernel: proc lists sibling, dev route, sibling, nhid route"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:20::/64") | .dev // "multipath"]')" \
	'["multipath","g0"]' "kernel: the dump shows the multipath route and the nhid route, not the dev route"

# A dump-based rtsnapd cannot list the dev-only route; see kernel-facts.md.
check_proc_views "$NS" "a route between ECMP siblings is missing from netlink dumps"
tap_done
