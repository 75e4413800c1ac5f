#!/bin/bash
# proc_ra.t - routes learned from router advertisements (radvd in a peer namespace).
# Builds the case with rk_ra (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd radvd jq

ns_new NS
ns_new PEER
rk_ra "$NS" "$PEER"
tap_ok $? "radvd in $PEER, RA routes learned in $NS" || tap_done

gwdev() { proc_get "$NS" "$1" flags dev; }
tap_is "$(proc_get "$NS" ::/0 metric flags dev | head -n1)" "00000400 08450003 h0" \
	"kernel: default router: UP|GATEWAY|DEFAULT|ADDRCONF|EXPIRES|PREF_HIGH"
tap_is "$(gwdev 2001:db8:a::/64)" "004c0001 h0" "kernel: prefix, finite lifetime: UP|ADDRCONF|PREFIX_RT|EXPIRES"
tap_is "$(gwdev 2001:db8:b::/64)" "000c0001 h0" "kernel: prefix, infinite lifetime: UP|ADDRCONF|PREFIX_RT"
tap_is "$(gwdev 2001:db8:e::/64)" "" "kernel: off-link prefix: no route"
tap_is "$(gwdev 2001:db8:c::/48)" "18c40003 h0" "kernel: route info, low: UP|GATEWAY|ADDRCONF|EXPIRES|ROUTEINFO|PREF_LOW"
tap_is "$(gwdev 2001:db8:d::/64)" "00840003 h0" "kernel: route info, infinite: UP|GATEWAY|ADDRCONF|ROUTEINFO"
tap_is "$(gwdev 2001:db8:f::/56)" "08c40003 h0" "kernel: route info, high"
tap_is "$(kernel_json "$NS" | jq '[.[] | select(.protocol == "ra")] | length')" 4 "kernel: default and route-info routes are proto ra"

check_proc_views "$NS"
tap_done
