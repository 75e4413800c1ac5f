#!/bin/bash
# proc_srcroute.t - source-specific routes (from PREFIX, fib6 subtrees) and their order.
# Builds the case with rk_srcroute (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_srcroute "$NS"
tap_ok $? "build source routes in $NS" || tap_done

# row DST/PLEN [FROM/PLEN]: the dst, plen, src, splen columns of a proc row.
row() {
	local d=$1 f=${2:-::/0}
	printf '%s %02x %s %02x\n' "$(ip6hex "${d%/*}")" "${d#*/}" "$(ip6hex "${f%/*}")" "${f#*/}"
}
# rows ERE: dst..splen of every kernel row whose dst..splen match ERE.
rows() {
	kernel_proc "$NS" | cut -c1-71 | grep -E -- "$1"
}

tap_is "$(rows '^0{32} 00 ')" "$(row ::/0 2001:db8:ff::/48; row ::/0; row ::/0 2001:db8:ff::/48; row ::/0
	row ::/0 2001:db8:dd::/48; row ::/0; row ::/0)" \
	"kernel: ::/0-from routes lead their table (100, 101, main), source-less ::/0 and placeholders end it"
tap_is "$(kernel_proc "$NS" | cut -c1-71 | grep -A1 -E "^$(row ::/0 2001:db8:dd::/48)" | tail -n1)" \
	"$(row ::/1 2001:db8:ee::/48)" "kernel: then the ::/1 node's source routes, before its children"
tap_is "$(proc_get "$NS" 2001:db8:100::/48 2001:db8:bb::/56 gw metric)" \
	$'20010db8000100000000000000000003 00000005\n00000000000000000000000000000000 00000006' \
	"kernel: one source prefix, two routes, by metric"
tap_is "$(rows '^20010db80100')" "$(row 2001:db8:100::/48 2001:db8:aa::/48
	row 2001:db8:100::/48 2001:db8:bb::/56
	row 2001:db8:100::/48 2001:db8:bb::/56
	row 2001:db8:100::/48 2001:db8:bb::/48
	row 2001:db8:100:1::/64
	row 2001:db8:100:8000::/64 2001:db8:cc::/64
	row 2001:db8:100:8000::/64
	row 2001:db8:100::/48)" \
	"kernel: a node's source routes precede its children; its own routes follow them"
tap_is "$(proc_get "$NS" 2001:db8:200::/48 2001:db8:cc::/48 flags)" "00000001" "kernel: subtree-only destination: one row, no placeholder"
tap_is "$(proc_get "$NS" 2001:db8:201::/48 2001:db8:dd::/48)" "00000400 00200200 lo" "kernel: source-specific reject route"
tap_is "$(proc_get "$NS" 2001:db8:300::/48)" "00000400 00000001 r0" "kernel: 'from ::/0' is an ordinary route"
tap_is "$(proc_count "$NS" '^0{32} 00 0{32} 00 0{32} ffffffff ')" 3 \
	"kernel: placeholders in main, table 100 and local (::/0-from routes do not count)"

check_proc_views "$NS"
tap_done
