#!/bin/bash
# proc_multipath.t - ECMP routes (RTA_MULTIPATH) with 2..9 nexthops and weights.
# Builds the case with rk_multipath (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_multipath "$NS"
tap_ok $? "build multipath routes in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:30::/64 gw dev)" \
	"20010db8000100000000000000000005 m0
20010db8000100000000000000000002 m0
20010db8000200000000000000000009 m1" "kernel: one line per nexthop, in the order given"
tap_is "$(proc_get "$NS" 2001:db8:31::/64 gw | cut -c29-32 | tr '\n' ' ')" \
	"0008 0007 0006 0004 0003 0002 0009 000a " "kernel: 9 nexthops minus a deleted one, appended one last"
tap_is "$(proc_get "$NS" 2001:db8:32::/64 flags)" $'00000003\n00000007' "kernel: onlink nexthop prints 0x4 on its line only"
tap_is "$(proc_get "$NS" 2001:db8:34::/64 metric flags dev)" \
	"0000000a 00000003 m0
00000014 00000003 m0
00000014 00000003 m1
0000001e 00000001 m1" "kernel: multipath between single routes, by metric"
tap_is "$(proc_get "$NS" ::/0 | grep -v ' lo$')" $'00000400 00000003 m0\n00000400 00000003 m1' "kernel: multipath default route"
tap_is "$(proc_count "$NS" '^0{32} 00 0{32} 00 0{32} ffffffff ')" 2 "kernel: placeholders only in table 300 and local"
tap_is "$(kernel_json "$NS" | jq '[.[] | select(.nexthops)] | length')" 7 "kernel: the dump has one object per multipath route"

check_proc_views "$NS"
tap_done
