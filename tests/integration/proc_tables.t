#!/bin/bash
# proc_tables.t - many routing tables: hash-bucket order, newest first, placeholder rows.
# Builds the case with rk_tables (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_tables "$NS"
tap_ok $? "build routes in many tables in $NS" || tap_done

# The /80 of table ID is 2001:db8:ab:LO:HI::/80; read the table order back.
order=$(kernel_proc "$NS" | awk '$1 ~ /^20010db800ab/ && $2 == "50" { print substr($1, 13, 4), substr($1, 17, 4) }' |
	while read -r lo hi; do printf '%d ' $((0x$lo + 65536 * 0x$hi)); done)
want="65536 512 768 256 1 257 300 100 1000 252 253 510 4294967295 511 2147483647 "
tap_is "$order" "$want" "kernel: proc table order: bucket id%256, newest first in a bucket"
jorder=$(kernel_json "$NS" | jq -r '.[] | select(.dst | test("^2001:db8:ab:")) | .table // "main" | if . == "default" then "253" else . end' | tr '\n' ' ')
tap_is "$jorder" "${want}" "kernel: the dump lists tables in the same order"
tap_is "$(proc_count "$NS" '^0{32} 00 0{32} 00 0{32} ffffffff ')" 14 \
	"kernel: placeholder in every table without ::/0 (17 tables, 3 with ::/0)"
tap_is "$(kernel_proc "$NS" | proc_masked | tail -n1 | cut -c106-)" \
	"ffffffff -------- 00000000 00200200       lo" "kernel: local (oldest in bucket 255) is last"

check_proc_views "$NS"
tap_done
