#!/bin/bash
# proc_expires.t - routes with a lifetime (expires N, RTF_EXPIRES), including an overdue one.
# Builds the case with rk_expires (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_expires "$NS"
tap_ok $? "build expiring routes in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:403::/48 flags)" 00400001 "kernel: RTF_EXPIRES on a device route"
tap_is "$(proc_get "$NS" 2001:db8:404::/48 flags)" 08400003 "kernel: RTF_EXPIRES with pref high"
tap_is "$(proc_get "$NS" 2001:db8:405::/48 flags)" 00000003 "kernel: expires 2^32-1 means no lifetime"
tap_is "$(proc_get "$NS" 2001:db8:406::/48 flags)" 00400003 "kernel: an overdue route is still listed until GC"
tap_is "$(proc_get "$NS" 2001:db8:407::/48 flags)" $'00400003\n00000001' "kernel: expiring and permanent route of one prefix"
tap_is "$(proc_get "$NS" 2001:db8:408::/48 flags)" 00400003 "kernel: expiring route in table 100"
tap_is "$(proc_get "$NS" ::/0 flags dev | grep -v ' lo$')" "00400003 e0" "kernel: expiring default route"

check_proc_views "$NS"
tap_done
