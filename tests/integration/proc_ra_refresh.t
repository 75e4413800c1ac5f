#!/bin/bash
# proc_ra_refresh.t - what a router advertisement changes without a route message (issue 12,
# item 7), with RAs sent one at a time by tests/tools/rasend from a router namespace:
#   - an RA that repeats what the host knows refreshes the lifetimes of its default router
#     and route-information routes (rt6_route_rcv, ndisc_router_discovery: fib6_set_expires)
#     and announces nothing at all, nor does a changed route-information preference, a
#     lifetime made finite, or a new hop limit (RTAX_HOPLIMIT of the default route);
#   - a new route-information route is announced (RTM_NEWROUTE) before its lifetime is set;
#   - an RA with a user option (RDNSS, DNSSL, prefix information, ...) sends RTM_NEWNDUSEROPT,
#     one with a prefix option RTM_NEWPREFIX (and refreshes the prefix route silently);
#   - a default router preference change is announced (RTM_NEWROUTE, NLM_F_REPLACE), a
#     lifetime of 0 deletes (RTM_DELROUTE).
# rtsnapd re-reads the routes of the device (a strict dump filtered on it,
# targeted_dumps{reason="ra"}) at once for what is announced, and every --ra-refresh seconds
# for what is not; proc text and JSON (expires within 1 s) must equal the kernel's after each
# RA. With --ra-refresh 0 a silent change of a route that expires (every route an RA teaches
# has a lifetime) is still found by the re-read of the expiring routes, every 2 s.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd
RASEND=$TOP/build/tools/rasend
[ -x "$RASEND" ] || tap_skip_all "build/tools/rasend not built"

ns_new H
ns_new R
_rk_ra_link "$H" "$R" || tap_bail "veth"
wait_until 5 sh -c "ip -n $R -6 addr show dev r0 | grep -q 'inet6 fe80'" || tap_bail "no link-local address"
ra() { ip netns exec "$R" "$RASEND" r0 "$@"; }
st() { http_get "$H" /status | jq -c "$1"; }
flags() { proc_get "$H" "$1" flags; }
exp_of() { kernel_json "$H" | jq ".[] | select(.dst == \"$1\") | .expires"; }
views() {
	check_proc_http "$H" /ipv6_route "$1: /ipv6_route equals the kernel's file"
	json_compare "$H" "$1: /routes equals ip -j" http_get "$H" /routes
}
BASE=(--lifetime 600 --hoplimit 64 --route 2001:db8:c::/48,900,low --route 2001:db8:d::/64,inf)

# ---- periodic re-read (--ra-refresh 1)
daemon_start "$H" --interval 0 --ra-refresh 1 || tap_bail "daemon"
ra "${BASE[@]}"
wait_until 5 _rk_have_routes "$H" 'proto ra' 3
tap_ok $? "kernel: the first RA adds a default router and two route-information routes"
views "first RA"
sleep 3
before=$(exp_of default)
ra "${BASE[@]}"
sleep 0.3
tap_ok "$([ "$(exp_of default)" -gt "$before" ] && echo 0 || echo 1)" \
	"kernel: the same RA again refreshed the default router's lifetime ($before s left, then $(exp_of default) s; no message)"
sleep 2
views "refreshed lifetimes (found by the periodic re-read)"
ra --lifetime 600 --pref high --hoplimit 32 --route 2001:db8:c::/48,900,high --route 2001:db8:d::/64,500
sleep 0.3
tap_is "$(flags 2001:db8:c::/48) $(flags 2001:db8:d::/64)" "08c40003 00c40003" \
	"kernel: route information made high and finite, silently (PREF and EXPIRES in proc)"
tap_is "$(kernel_json "$H" | jq -c '.[] | select(.dst == "default") | .metrics')" '[{"hoplimit":32}]' \
	"kernel: the default route's hop limit follows the RA's, silently"
sleep 2
views "preference, lifetime and hop limit"
tap_cmd "counted as targeted dumps for RAs" \
	sh -c "ip netns exec $H curl -s $RTSNAP_URL/status | jq -e '.collector.targeted_dumps.ra >= 3'"
ra --lifetime 0 --route 2001:db8:c::/48,0
wait_until 3 sh -c "! ip -n $H -6 route show | grep -q '^default'"
tap_ok $? "kernel: lifetime 0 removes the default router and the route (announced)"
views "lifetime 0"
daemon_stop "$H" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# ---- what announces itself (--ra-refresh 0: no periodic re-read)
daemon_start "$H" --interval 0 --ra-refresh 0 --debounce-ms 20 || tap_bail "daemon"
ra --lifetime 600 --route 2001:db8:f::/56,1000
wait_until 3 _rk_have_routes "$H" '2001:db8:f::/56' 1
tap_ok $? "kernel: a new route-information route (announced before its lifetime is set)"
views "a new route-information route (the device re-read after its RTM_NEWROUTE)"
ra --lifetime 600 --route 2001:db8:f::/56,1000,low --rdnss 2001:db8::53,300
views "an RA with an RDNSS option (RTM_NEWNDUSEROPT)"
tap_cmd "RTM_NEWNDUSEROPT counted" \
	sh -c "ip netns exec $H curl -s $RTSNAP_URL/status | jq -e '.collector.notifications_applied.nd_useropt >= 1'"
ra --lifetime 600 --route 2001:db8:f::/56,1000,high --prefix 2001:db8:a::/64,3600,1800
wait_until 3 _rk_have_routes "$H" '2001:db8:a::/64' 1
views "an RA with a prefix option (RTM_NEWPREFIX)"
ra --lifetime 600 --route 2001:db8:f::/56,1000,high --prefix 2001:db8:a::/64,7200,3600
views "the prefix route's lifetime refreshed (RTM_NEWPREFIX)"
ra --lifetime 600 --route 2001:db8:f::/56,1000,low
same_proc() {
	kernel_proc "$H" | proc_masked >"$RTSNAP_TMP/k"
	http_get "$H" /ipv6_route | proc_masked >"$RTSNAP_TMP/d"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/d"
}
wait_until 6 same_proc
tap_ok $? "--ra-refresh 0: a preference changed silently on a route that expires is seen by the re-read of the expiring routes"
tap_cmd "the expiring routes' re-read counted" \
	sh -c "ip netns exec $H curl -s $RTSNAP_URL/status | jq -e '.collector.targeted_dumps.expiring >= 1'"
kill -HUP "${_daemon_pid[$H]}"
wait_until 10 sh -c "ip netns exec $H curl -sg $RTSNAP_URL/status | jq -e '.collector.full_dumps.signal >= 1'"
views "after a resync"
tap_is "$(st .collector.resync_drift_routes)" 0 "the resync found nothing the collector had missed"
daemon_stop "$H" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
