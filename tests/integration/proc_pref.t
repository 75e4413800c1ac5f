#!/bin/bash
# proc_pref.t - route preference (pref high|medium|low, RTA_PREF).
# Builds the case with rk_pref (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_pref "$NS"
tap_ok $? "build routes with preferences in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:400::/48 flags)" 08000003 "kernel: pref high is 1 << 27"
tap_is "$(proc_get "$NS" 2001:db8:401::/48 flags)" 18000003 "kernel: pref low is 3 << 27"
tap_is "$(proc_get "$NS" 2001:db8:402::/48 flags)" 00000003 "kernel: pref medium is 0"
tap_is "$(proc_get "$NS" 2001:db8:403::/48 flags)" 08000001 "kernel: pref on a device route"
tap_is "$(proc_get "$NS" 2001:db8:404::/48 flags)" $'18000001\n08000001\n00000003' "kernel: per-route pref, by metric"
tap_is "$(proc_get "$NS" 2001:db8:405::/48 flags)" 00200200 "kernel: reject route drops pref"
tap_is "$(proc_get "$NS" ::/0 flags | head -n1)" 18000003 "kernel: default route with pref low"

check_proc_views "$NS"
tap_done
