#!/bin/bash
# json_encap.t - lightweight tunnel encapsulations (issue 12, item 1): every kind this kernel
# accepts on IPv6 routes (tests/lib/routekinds.sh rk_encap: seg6 in each mode and with HMAC,
# seg6local actions and their attributes, ip6 and ip tunnels, bpf), on single routes, per
# multipath nexthop and on nexthop objects. rtsnapd's JSON must be ip -j's byte for byte
# (including its quirk of a second "dst" key for ip and ip6 tunnels), its proc text the
# kernel's file (an encapsulation changes nothing there), through --once and over HTTP while
# the daemon follows changes: routes added, replaced and deleted; a hop that differs from a
# sibling only by its encapsulation (the kernel keeps both: rt6_duplicate_nexthop compares
# encapsulations); nexthop objects replaced (nexthop_compat_mode 1 re-announces their routes)
# and deleted. seg6local packet counters change with traffic and no message: they must not
# count as drift at a resync. The types this kernel refuses are skipped with the reason.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
rk_seg6_ok "$NS" || tap_skip_all "this kernel has no segment routing tunnels (CONFIG_IPV6_SEG6_LWTUNNEL is not set): the steps below change seg6 routes; json_kinds.t compares the ip and ip6 tunnels here"
ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode=1
OBJ=
if rk_bpf_obj "$RTSNAP_TMP"; then
	OBJ=$RTSNAP_TMP/lwt.o
fi
rk_encap "$NS" $OBJ 2>"$RTSNAP_TMP/rk.err"
tap_ok $? "build the encapsulated routes" || tap_diag "$(cat "$RTSNAP_TMP/rk.err")"
n() { ip -n "$NS" "$@"; }

# ---- what the kernel takes and shows
types=$(kernel_json "$NS" | jq -c '[.[] | (., .nexthops[]?) | .encap // empty] | unique')
want='["ip","ip6","seg6","seg6local"]'
[ -n "$OBJ" ] && want='["bpf","ip","ip6","seg6","seg6local"]'
tap_is "$types" "$want" "kernel: ip -j shows every type built"
[ -n "$OBJ" ] || tap_skip "encap bpf: clang cannot build a BPF object here"
# Refused by this kernel (docs/kernel-facts.md §11): each needs an option it lacks. Should a
# kernel take one, its route stays and is compared with the others below.
while read -r t cfg args; do
	if n -6 route add 2001:db8:7f::/64 encap $t $args dev e0 2>/dev/null; then
		n -6 route del 2001:db8:7f::/64
		n -6 route add "2001:db8:7f:$t::/64" encap $t $args dev e0
		tap_ok $? "kernel: encap $t accepted here: compared below"
	else
		tap_skip "encap $t: this kernel refuses it ($cfg is not set)"
	fi
done <<'EOF'
mpls CONFIG_MPLS_IPTUNNEL 100/200 ttl 5
rpl CONFIG_IPV6_RPL_LWTUNNEL segs fc00::1,fc00::2
ioam6 CONFIG_IPV6_IOAM6_LWTUNNEL trace prealloc type 0x800000 ns 1 size 12
xfrm CONFIG_XFRM_INTERFACE if_id 7
ila CONFIG_IPV6_ILA 2001:0:0:1 csum-mode adj-transport
EOF
tap_is "$(kernel_json "$NS" | grep -o '{"dst":"2001:db8:61::1",[^}]*}' | grep -o '"dst"' | wc -l)" 2 \
	"kernel: ip -j prints an ip6 tunnel's \"dst\" in the route's object: it holds \"dst\" twice"
tap_is "$(proc_get "$NS" fc00::f0/128 flags dev)" "00200200 lo" \
	"kernel: on the loopback device an encapsulated route is a reject line in proc"
tap_is "$(kernel_json "$NS" | jq -c '.[] | select(.dst == "2001:db8:67::/64") | .encap')" null \
	"kernel: a reject route drops its encapsulation"

# ---- --once
check_proc_once "$NS" "--once --format proc equals the kernel's ipv6_route"
json_compare "$NS" "--once --format json equals ip -j -6 route show table all" \
	ip netns exec "$NS" "$RTSNAPD" --once --format json

# ---- the daemon, and changes while it runs
daemon_start "$NS" --debounce-ms 20 --interval 0
tap_ok $? "rtsnapd starts" || tap_done
check_proc_http "$NS" /ipv6_route "GET /ipv6_route equals the kernel's file"
json_compare "$NS" "GET /routes equals ip -j" http_get "$NS" /routes

# step DESC CMD...: run the ip commands (one per argument, in NS), then compare both views
step() {
	local desc=$1 c
	shift
	for c in "$@"; do
		# shellcheck disable=SC2086
		n $c >/dev/null 2>"$RTSNAP_TMP/step.err" || {
			tap_ok 1 "$desc: ip $c"
			tap_diag "$(cat "$RTSNAP_TMP/step.err")"
			return
		}
	done
	check_proc_http "$NS" /ipv6_route "$desc: /ipv6_route equals the kernel's file"
	json_compare "$NS" "$desc: /routes equals ip -j" http_get "$NS" /routes
}

step "replace a seg6 route's segments" \
	"-6 route replace 2001:db8:60::/64 encap seg6 mode encap segs fc00::9,fc00::a dev e0"
step "a route without encapsulation beside it (same device: the kernel keeps both)" \
	"-6 route append 2001:db8:60::/64 dev e0"
step "replace that plain one with an encapsulated one" \
	"-6 route replace 2001:db8:60::/64 encap ip6 dst 2001:db8:1::7 dev e0"
step "delete routes with an encapsulation" \
	"-6 route del 2001:db8:60::1/128" "-6 route del fc00::e9/128"
step "siblings that differ only by their encapsulation" \
	"-6 route add 2001:db8:80::/64 via 2001:db8:1::2 dev e0" \
	"-6 route append 2001:db8:80::/64 encap seg6 mode encap segs fc00::2 via 2001:db8:1::2 dev e0" \
	"-6 route append 2001:db8:80::/64 encap ip6 dst 2001:db8:1::9 via 2001:db8:1::2 dev e0"
tap_is "$(kernel_json "$NS" | jq -c '.[] | select(.dst == "2001:db8:80::/64") | [.nexthops[] | .encap]')" \
	'[null,"seg6","ip6"]' "kernel: three hops with one gateway, told apart by their encapsulation"
step "delete the middle one of them" \
	"-6 route del 2001:db8:80::/64 encap seg6 mode encap segs fc00::2 via 2001:db8:1::2 dev e0"
step "delete one more: a group of one left is a plain route, its encapsulation kept" \
	"-6 route del 2001:db8:80::/64 via 2001:db8:1::2 dev e0"
step "a multipath route with an encapsulation per hop, replaced by another" \
	"-6 route add 2001:db8:81::/64 nexthop encap seg6 mode inline segs fc00::3 via 2001:db8:1::2 dev e0 nexthop encap seg6local action End via 2001:db8:1::3 dev e0" \
	"-6 route replace 2001:db8:81::/64 nexthop via 2001:db8:1::4 dev e0 nexthop encap ip dst 10.9.9.9 via 2001:db8:1::5 dev e0"
step "append a hop with an encapsulation to a multipath route" \
	"-6 route append 2001:db8:81::/64 encap seg6 mode encap segs fc00::4 via 2001:db8:1::4 dev e0"
step "replace nexthop objects' encapsulations (their routes are re-announced)" \
	"nexthop replace id 1 encap seg6 mode encap segs fc00::8 via 2001:db8:1::2 dev e0" \
	"-6 nexthop replace id 5 encap seg6local action End.X nh6 2001:db8:1::5 dev e0"
step "a nexthop object without an encapsulation gets one, in a group" \
	"-6 nexthop replace id 2 encap ip6 dst 2001:db8:1::6 via 2001:db8:1::3 dev e0"
step "delete a nexthop object with an encapsulation" "nexthop del id 4"

# ---- counters: traffic to an End SID without an SRH counts errors, silently
mac=$(n link show e1 | awk '/ether/ { print $2 }')
n -6 neigh replace fc00::ec lladdr "$mac" dev e0
for _ in 1 2 3; do ip netns exec "$NS" bash -c 'echo x >/dev/udp/fc00::ec/9' 2>/dev/null; done
wait_until 3 sh -c "ip -n $NS -s -6 route show fc00::ec | grep -q 'errors [1-9]'"
tap_ok $? "kernel: seg6local counters moved with traffic (no route message)"
st() { http_get "$NS" /status | jq -c "$1"; }
kill -HUP "${_daemon_pid[$NS]}"
wait_until 10 sh -c "ip netns exec $NS curl -sg $RTSNAP_URL/status | jq -e '.collector.full_dumps.signal >= 1'"
tap_ok $? "SIGHUP ran a resync"
tap_is "$(st .collector.resync_drift_routes)" 0 "the resync found no drift (counters are no part of a route)"
json_compare "$NS" "after the resync: /routes equals ip -j" http_get "$NS" /routes
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# ---- nexthop_compat_mode 0: the route message names the object only, and ip -j prints nhid
ns_new NS0
ip netns exec "$NS0" sysctl -qw net.ipv4.nexthop_compat_mode=0
veth_pair "$NS0" e0 "" e1
ip -n "$NS0" -6 addr add 2001:db8:1::1/64 dev e0 nodad
ip -n "$NS0" -6 nexthop add id 1 encap seg6 mode encap segs fc00::7 via 2001:db8:1::2 dev e0
ip -n "$NS0" -6 route add 2001:db8:69::/64 nhid 1
tap_is "$(kernel_json "$NS0" | jq -c '.[] | select(.dst == "2001:db8:69::/64") | [.nhid, .encap]')" \
	'[1,null]' "compat mode 0: ip -j shows the route's nhid, not the object's encapsulation"
check_proc_once "$NS0" "compat mode 0: --once --format proc equals the kernel's ipv6_route"
json_compare "$NS0" "compat mode 0: --once --format json equals ip -j" \
	ip netns exec "$NS0" "$RTSNAPD" --once --format json
tap_done
