#!/bin/bash
# json_kinds.t - rtsnapd's JSON (GET /routes and --once --format json) is the array
# `ip -j -6 route show table all` prints, byte for byte, for every route kind of
# tests/lib/routekinds.sh plus RTAX metrics in every form (locked, features ecn,
# congctl, rtt/rttvar scaling, hoplimit, fastopen_no_cookie). The only tolerance:
# "expires" (seconds left, computed when each side answers) may differ by 1.
# Each kind gets its own namespace and its own daemon; iproute2 runs in the same
# namespace, so both read the same kernel and the same /etc/iproute2.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

# rk_metrics NS: every RTAX metric form print_rta_metrics knows.
rk_metrics_local() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" x0 "" x1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:70::/64 dev x0 mtu lock 1300 rtt 100ms rttvar 50ms || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:71::/64 dev x0 features ecn initcwnd 10 initrwnd 20 quickack 1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:72::/64 dev x0 congctl cubic || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:73::/64 dev x0 congctl lock reno hoplimit lock 5 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:74::/64 dev x0 window 1000 cwnd 5 ssthresh 7 reordering 3 rto_min 20ms || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:75::/64 dev x0 fastopen_no_cookie 1 advmss lock 1220 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:76::/64 via fe80::1 dev x0 hoplimit 255 mtu 9000 metric 9 proto 250 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:77::/64 dev x0 rtt 3s expires 800 pref low || return 1
}


KINDS="static connected reject multipath mpath_gap mpath_sibling_flags nexthop srcroute pref
	expires tables empty_tables devnames linkdown metrics_local pmtu encap"
declare -A KNS
for k in $KINDS; do
	ns_new n
	KNS[$k]=$n
	if [ "$k" = pmtu ]; then
		ns_new peer
		rk_pmtu "$n" "$peer" 2>"$RTSNAP_TMP/rk-$k.err"
	else
		"rk_$k" "$n" 2>"$RTSNAP_TMP/rk-$k.err"
	fi
	tap_ok $? "build $k routes" || tap_diag "$(cat "$RTSNAP_TMP/rk-$k.err")"
done

# the kinds that matter show up in the kernel's JSON at all
kj() { kernel_json "${KNS[$1]}"; }
tap_is "$(kj multipath | jq '[.[] | .nexthops // empty | .[] | select(.weight == 256)] | length > 0')" true \
	"kernel: multipath routes carry nexthops (one of weight 256)"
tap_is "$(kj nexthop | jq '[.[] | select(.nhid and (.nexthops | length) == 1)] | length > 0')" true \
	"kernel: nhid routes, one a group of one nexthop"
tap_is "$(kj srcroute | jq '[.[] | select(.from)] | length > 0')" true "kernel: source-specific routes"
tap_is "$(kj linkdown | jq '[.[] | select(.flags | index("linkdown"))] | length > 0')" true "kernel: linkdown flags"
tap_is "$(kj metrics_local | jq -c '[.[] | .metrics // empty | .[0] | keys[]] | unique')" \
	'["advmss","congestion","cwnd","ecn","fastopen_no_cookie","hoplimit","initcwnd","initrwnd","mtu","quickack","reordering","rto_min","rtt","rttvar","ssthresh","window"]' \
	"kernel: every metric key form"

for k in $KINDS; do
	ns=${KNS[$k]}
	json_compare "$ns" "$k: --once --format json equals ip -j -6 route show table all" \
		ip netns exec "$ns" "$RTSNAPD" --once --format json
	daemon_start "$ns" --debounce-ms 20
	tap_ok $? "$k: rtsnapd starts" || continue
	json_compare "$ns" "$k: GET /routes equals ip -j -6 route show table all" http_get "$ns" /routes
	daemon_stop "$ns" >/dev/null
	tap_ok $? "$k: rtsnapd exits 0 on SIGTERM"
done
tap_done
