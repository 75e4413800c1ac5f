#!/bin/bash
# proc_ra_rtinfo_default.t - an RA route-information option for ::/0 (RTF_ROUTEINFO on ::/0).
# Builds the case with rk_ra_rtinfo_default (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd radvd

ns_new NS
ns_new PEER
rk_ra_rtinfo_default "$NS" "$PEER"
tap_ok $? "radvd in $PEER, RA routes learned in $NS" || tap_done

# The route is deleted and re-added on every RA (router lifetime 0 finds it as
# a "default router"), so look for it for a few seconds.
rtinfo_row() { [ "$(proc_get "$NS" ::/0 flags dev | head -n1)" = "00c50003 h0" ]; }
wait_until 10 rtinfo_row
tap_ok $? "kernel: route info ::/0: UP|GATEWAY|DEFAULT|ADDRCONF|EXPIRES|ROUTEINFO (00c50003)"

check_proc_views "$NS" "RTF_ROUTEINFO on ::/0 is not visible in netlink"
tap_done
