#!/bin/bash
# proc_mpath_gap.t - a route between two ECMP siblings is invisible to netlink dumps.
# Builds the case with rk_mpath_gap (tests/lib/routekinds.sh); kernel behaviour is
# described in docs/kernel-facts.md (§7.1). What rtsnapd serves (README, "What differs"):
#   - started before the routes were added, it was told of the route between the siblings and
#     keeps it: /ipv6_route lists every line the kernel's file lists, but in the order of its
#     records (the group's lines, then the route), not the file's (sibling, route, sibling);
#     /routes lists it too, beside the group, although `ip -j` (a dump) does not: it is a live,
#     routable route, and hiding it would make the JSON view lie about the table;
#   - a resync keeps it (its dump has the group and not the route: mirror_keep_hidden());
#   - started after, it has only dumps: the route is missing from both views.
# The exact file order and the exact dump are TODOs with that reason.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl
require_rtsnapd
require_cmd jq

ns_new NS
rk_prep "$NS"
daemon_start "$NS" --interval 0
tap_ok $? "rtsnapd started before the routes are added" || tap_done
rk_mpath_gap "$NS"
tap_ok $? "build the sibling gap in $NS" || tap_done

tap_is "$(proc_get "$NS" 2001:db8:20::/64 gw dev)" \
	"20010db8000100000000000000000002 g0
00000000000000000000000000000000 g1
20010db8000100000000000000000003 g0
20010db8000100000000000000000007 g0" "kernel: proc lists sibling, dev route, sibling, nhid route"
tap_is "$(kernel_json "$NS" | jq -c '[.[] | select(.dst == "2001:db8:20::/64") | .dev // "multipath"]')" \
	'["multipath","g0"]' "kernel: the dump shows the multipath route and the nhid route, not the dev route"

sorted_same() {
	kernel_proc "$NS" | proc_masked | sort >"$RTSNAP_TMP/k"
	http_get "$NS" /ipv6_route | proc_masked | sort >"$RTSNAP_TMP/d"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/d"
}
wait_until 5 sorted_same
tap_ok $? "the running daemon's /ipv6_route has every line of the kernel's file, the dev route included"
TAP_TODO="lines of one record stay together: the file's sibling, route, sibling order is not kept" \
	check_proc_http "$NS" /ipv6_route "GET /ipv6_route equals the kernel's ipv6_route, in its order"
got=$(http_get "$NS" /routes | jq -c '[.[] | select(.dst == "2001:db8:20::/64") | .dev // "multipath"]')
tap_is "$got" '["multipath","g1","g0"]' "the running daemon's /routes has the group, the dev route and the nhid route"
want=$(kernel_json "$NS" | jq -c .)
tap_is "$(http_get "$NS" /routes | jq -c 'map(select(.dst != "2001:db8:20::/64" or .dev != "g1"))')" "$want" \
	"... and without the dev route it equals ip -j"
gen=$(http_get "$NS" /status | jq .generation)
kill -HUP "${_daemon_pid[$NS]}"
wait_true 5 '[ "$(http_get "$NS" /status | jq .generation)" -gt "$gen" ]'
wait_until 5 sorted_same
tap_ok $? "after a SIGHUP resync (a dump without the dev route) the daemon still has every line"
tap_is "$(http_get "$NS" /status | jq .collector.resync_drift_routes)" 0 "... and the resync counted no drift"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# A dump-based rtsnapd cannot list the dev-only route; see kernel-facts.md.
check_proc_views "$NS" "a route between ECMP siblings is missing from netlink dumps"
tap_done
