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

# _json_masked FILE: the bytes with every "expires" value replaced by E, and a newline
# after every "}," (so that a difference shows as the objects that differ).
_json_masked() {
	sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' "$1"
}

# _json_expires_close WANT GOT: the "expires" values, in order, differ by at most 1.
_json_expires_close() {
	paste <(grep -oE '"expires":-?[0-9]+' "$1" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$2" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -1 || d > 1 || NF != 2) bad = 1 } END { exit bad }'
}

# _json_kernel NS: `ip -j -6 route show table all` in NS, through jq -c "$JSON_FILTER"
# when that is set.
_json_kernel() {
	if [ -n "${JSON_FILTER:-}" ]; then
		kernel_json "$1" | jq -c "$JSON_FILTER"
	else
		kernel_json "$1"
	fi
}

# json_compare NS DESC CMD...: CMD's output (run in NS) equals `ip -j -6 route show
# table all` (expires within 1 s), byte for byte; with JSON_FILTER set, the kernel's
# array goes through that jq filter and CMD's through `jq -c .`. The kernel is read
# before and after; if it changed meanwhile (RA refresh, DAD, daemon lag) the sample is
# retried, up to 10 times.
json_compare() {
	local ns=$1 desc=$2 d="$RTSNAP_TMP/json" i
	shift 2
	for i in $(seq 10); do
		_json_kernel "$ns" >"$d.k1"
		if [ -n "${JSON_FILTER:-}" ]; then
			"$@" 2>"$d.err" | jq -c . >"$d.got"
		else
			"$@" >"$d.got" 2>"$d.err"
		fi
		_json_kernel "$ns" >"$d.want"
		_json_masked "$d.k1" >"$d.k1m"
		_json_masked "$d.want" >"$d.wantm"
		_json_masked "$d.got" >"$d.gotm"
		cmp -s "$d.k1m" "$d.wantm" && cmp -s "$d.wantm" "$d.gotm" && break
		sleep 0.5
	done
	tap_diff "$d.wantm" "$d.gotm" "$desc"
	_json_expires_close "$d.want" "$d.got"
	tap_ok $? "$desc: expires within 1 s ($(grep -c '"expires"' <(tr '}' '\n' <"$d.want")) routes expire)"
	[ -s "$d.err" ] && tap_diag "stderr:" "$(head -n 5 "$d.err")"
	return 0
}

KINDS="static connected reject multipath mpath_gap mpath_sibling_flags nexthop srcroute pref
	expires tables empty_tables devnames linkdown metrics_local pmtu"
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
