#!/bin/bash
# proc_reject.t - unreachable, blackhole, prohibit, throw, via lo; user local/anycast/multicast.
# Builds the case with rk_reject (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_reject "$NS"
tap_ok $? "build reject routes in $NS" || tap_done

for p in 2001:db8:40::/64 2001:db8:42::/64 2001:db8:43::/64 2001:db8:44::/64; do
	tap_is "$(proc_get "$NS" $p gw metric flags dev)" \
		"00000000000000000000000000000000 00000400 00200200 lo" "kernel: $p is REJECT|NONEXTHOP via lo"
done
tap_is "$(proc_get "$NS" 2001:db8:41::/64)" "00000032 00200200 lo" "kernel: blackhole keeps its metric"
tap_is "$(proc_get "$NS" 2001:db8:45::/64)" "00000400 00200200 lo" "kernel: reject route loses RTF_EXPIRES and pref"
tap_is "$(proc_get "$NS" 2001:db8:46::/64)" "00000400 00200200 lo" "kernel: reject route given a device prints lo"
tap_is "$(proc_get "$NS" ::/0)" $'ff002000 00200200 lo\nffffffff 00200200 lo\nffffffff 00200200 lo' \
	"kernel: table 100 ends with its unreachable default, main and local with placeholders"
tap_is "$(proc_get "$NS" 2001:db8:48::1/128)" "00000400 80000001 lo" "kernel: user local route: RTF_LOCAL without RTF_NONEXTHOP"
tap_is "$(proc_get "$NS" 2001:db8:4b::1/128)" "00000400 80000001 lo" "kernel: user local route in main"
tap_is "$(proc_get "$NS" 2001:db8:4a::1/128)" "00000400 00000001 j0" "kernel: user anycast route: no RTF_ANYCAST"
tap_is "$(proc_get "$NS" 2001:db8:4c::1/128)" "00000400 00200200 lo" "kernel: user anycast route on lo is a reject route"
tap_is "$(proc_get "$NS" ff0e::/16)" "00000400 00000001 j0" "kernel: user multicast route"
tap_is "$(proc_get "$NS" ff0e:1::/32)" "00000400 00200200 lo" "kernel: user multicast route on lo is a reject route"

check_proc_views "$NS"
tap_done
