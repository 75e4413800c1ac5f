#!/bin/bash
# proc_empty_tables.t - tables without routes (created by a rule, or emptied) still print a placeholder.
# Builds the case with rk_empty_tables (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md. Compares rtsnapd's proc view with the
# kernel's /proc/net/ipv6_route (refcnt masked): --once and over HTTP.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_empty_tables "$NS"
tap_ok $? "build empty tables in $NS" || tap_done

tap_is "$(proc_count "$NS" '^0{32} 00 0{32} 00 0{32} ffffffff ')" 5 \
	"kernel: placeholders for main, local, 101, and the empty tables 100 and 300"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | .table // "main"] | unique')" '["101","local","main"]' \
	"kernel: the dump shows nothing of tables 100 and 300"

check_proc_views "$NS" "empty tables are invisible to a route dump"
tap_done
