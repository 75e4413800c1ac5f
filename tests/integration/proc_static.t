#!/bin/bash
# proc_static.t - static unicast routes: gateways, onlink, metrics, several routes per prefix.
# Builds the case with rk_static (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_static "$NS"
tap_ok $? "build static routes in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:10::/64 metric flags gw)" \
	"00000005 00000003 20010db8000500000000000000000004
00000064 00000003 20010db8000500000000000000000003
00000400 00000003 20010db8000500000000000000000002
000007d0 00000001 00000000000000000000000000000000" "kernel: one prefix, four routes, ascending metric"
tap_is "$(proc_get "$NS" 2001:db8:12::/64)" "00000400 00000007 s0" "kernel: onlink sets 0x4 (RTNH_F_ONLINK == RTF_HOST)"
tap_is "$(proc_get "$NS" 2001:db8:14::/64)" "ffffffff 00000003 s1" "kernel: metric 2^32-1"
tap_is "$(proc_get "$NS" 2001:db8:1a::/48)" $'00000001 00000001 s0\n00000001 00000001 s1' \
	"kernel: equal-metric device routes stay separate, insertion order"
tap_is "$(proc_get "$NS" ::1/128 | head -n1)" "00000400 00000001 lo" "kernel: ::1 via lo is not a reject route"
tap_is "$(proc_get "$NS" ::/0)" $'00000400 00000003 s0\nffffffff 00200200 lo' \
	"kernel: main has a default route and no placeholder; local has the placeholder"

check_proc_views "$NS"
tap_done
