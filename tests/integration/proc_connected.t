#!/bin/bash
# proc_connected.t - connected/kernel routes, fe80::/64, ff00::/8, local and anycast routes.
# Builds the case with rk_connected (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_connected "$NS"
tap_ok $? "build connected routes in $NS" || tap_done

# kernel facts the comparison relies on
tap_is "$(proc_get "$NS" 2001:db8:c0::/64)" "00000100 00000001 c0" "kernel: prefix route, metric 256, RTF_UP"
tap_is "$(proc_get "$NS" 2001:db8:c4::/64)" "00000100 00400001 c1" "kernel: prefix of an address with finite valid_lft has RTF_EXPIRES"
tap_is "$(proc_get "$NS" 2001:db8:c5::/64)" "0000012c 00000001 c0" "kernel: address metric becomes the prefix route metric"
tap_is "$(proc_get "$NS" 2001:db8:c3::/64)" "" "kernel: noprefixroute address has no prefix route"
tap_is "$(proc_get "$NS" 2001:db8:c2::1/128)" $'00000100 00000001 c0\n00000000 80200001 c0' \
	"kernel: /128 address: connected host route in main, local route in local"
tap_is "$(proc_get "$NS" 2001:db8:c1::/128)" "00000000 00300001 c1" "kernel: subnet-router anycast, RTF_ANYCAST|RTF_NONEXTHOP"
tap_is "$(proc_get "$NS" 2001:db8:c3::/128)" "00000000 00300001 c0" "kernel: anycast also for a noprefixroute address"
tap_is "$(proc_get "$NS" 2001:db8:c6::/64)" "00000100 00200200 lo" "kernel: prefix route of an address on lo is a reject route"
tap_is "$(proc_get "$NS" 2001:db8:c6::/128)" "00000000 00300001 lo" "kernel: kernel anycast on lo is not a reject route"
tap_is "$(proc_get "$NS" fe80::/64 dev | sort | tr '\n' ' ')" "c0 c1 " "kernel: fe80::/64 per interface"
tap_is "$(proc_get "$NS" ff00::/8 flags | sort -u)" "00000001" "kernel: ff00::/8 multicast routes print RTF_UP only"
tap_is "$(proc_get "$NS" ::/0)" $'ffffffff 00200200 lo\nffffffff 00200200 lo' "kernel: placeholder row in main and local"

check_proc_views "$NS"
tap_done
