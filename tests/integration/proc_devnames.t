#!/bin/bash
# proc_devnames.t - device names of 1 to 15 characters in the %8s dev column.
# Builds the case with rk_devnames (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
rk_devnames "$NS"
tap_ok $? "build interfaces with 1..15 character names in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:1::/64 line | cut -c115-)" "-------- 00000000 00000001        a" "kernel: 1-character name padded to 8"
tap_is "$(proc_get "$NS" 2001:db8:8::/64 line | cut -c115-)" "-------- 00000000 00000001 abcdefgh" "kernel: 8 characters fill the column"
tap_is "$(proc_get "$NS" 2001:db8:15::/64 line | cut -c115-)" "-------- 00000000 00000001 abcdefghijklmno" "kernel: 15 characters are printed in full"
tap_is "$(proc_get "$NS" 2001:db8:99::/64 dev)" "v.1-2_x" "kernel: other characters in names"

check_proc_views "$NS"
tap_done
