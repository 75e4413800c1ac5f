#!/bin/bash
# Record IPv4 notification streams for test_fib4 (and test_nlparse4, test_replay4): for each
# stream a fresh namespace is set up, then build/tools/nlrec4 notify (subscribed before it
# dumps) records the first state, every notification while the steps run, the route dump and
# /proc/net/route after every step, and the last state. Formats: tests/data/README.md.
#
# Usage (as root, from the top of the tree, after `make all`):
#   tests/data/capture_inet_notify.sh [STREAM...]   streams: routes links random (default), bulk
#   INET_NOTIFY_OUT=DIR ...                         record into DIR/inet-notify-STREAM instead
#                                                   (the live test tests/integration/inet_notify.t)
#
# Every step must succeed, except those written "! CMD", which must fail.
set -eu
bin=build/tools/nlrec4
[ -x "$bin" ] || { echo "capture_inet_notify.sh: build $bin first (make all)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "capture_inet_notify.sh: run as root" >&2; exit 1; }
ns=
cleanup() { [ -z "$ns" ] || ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
n() { ip -n "$ns" "$@"; }

fresh_ns() {
	ns=rtsnap-inet-$1-$$
	ip netns add "$ns"
	ip netns exec "$ns" sysctl -qw net.ipv4.nexthop_compat_mode=1 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	n link set lo up
}

# veth NAME PEER ADDR/LEN: a veth pair, both ends up, the address on NAME.
veth() {
	n link add "$1" type veth peer name "$2"
	n link set "$1" up
	n link set "$2" up
	n addr add "$3" dev "$1"
}

# ---- routes: the fib alias rules, tables, types, realms, IPv6 gateways, nexthop objects
setup_routes() {
	veth v0 v0p 10.0.0.1/24
	veth v1 v1p 10.1.0.1/24
	n -6 addr add 2001:db8:4::1/64 dev v0 nodad
}
steps_routes() {
	cat <<'EOF'
# a group of one key built by add, prepend, append, replace of its first alias
ip route add 192.168.1.0/24 via 10.0.0.2
ip route prepend 192.168.1.0/24 via 10.0.0.3
ip route append 192.168.1.0/24 via 10.0.0.4
ip route append 192.168.1.0/24 dev v1
ip route prepend blackhole 192.168.1.0/24
ip route replace 192.168.1.0/24 via 10.0.0.5
ip route replace 192.168.1.0/24 via 10.0.0.5
! ip route replace 192.168.1.0/24 via 10.0.0.4
ip route del 192.168.1.0/24 via 10.0.0.2
ip route del 192.168.1.0/24
# keys beside it: metric, TOS, prefix lengths of one address
ip route add 192.168.1.0/24 via 10.0.0.6 metric 5
ip route add 192.168.1.0/24 tos 0x10 via 10.0.0.7
ip route add 192.168.1.0/24 tos 0xb8 via 10.0.0.8 metric 5
ip route add 192.168.1.0/25 via 10.0.0.9
ip route add 192.168.0.0/23 via 10.0.0.9
ip route add 192.168.0.0/16 dev v1
ip route del 192.168.1.0/24 tos 0x10
ip route replace 192.168.1.0/24 tos 0xb8 metric 5 via 10.1.0.2
ip route add default via 10.0.0.254
ip route add default via 10.1.0.254 metric 10
ip route append default via 10.1.0.253 metric 10
ip route add 0.0.0.0/1 via 10.0.0.2
# multipath: whole-route replace and delete, realms per hop
ip route add 172.16.0.0/16 nexthop via 10.0.0.2 weight 3 nexthop via 10.1.0.2
ip route append 172.16.0.0/16 via 10.0.0.3
ip route replace 172.16.0.0/16 nexthop via 10.0.0.4 nexthop via 10.1.0.4 realms 4/5
! ip route del 172.16.0.0/16 nexthop via 10.0.0.4
ip route del 172.16.0.0/16 nexthop via 10.0.0.4 nexthop via 10.1.0.4 realms 4/5
# IPv6 gateways, metrics, types, protocols
ip route add 172.17.0.0/16 via inet6 fe80::1 dev v1
ip route add 172.17.0.0/16 via inet6 fe80::2 dev v1 metric 1 realm 7
ip route add 172.17.1.0/24 via inet6 2001:db8:4::2
ip route add 172.18.0.0/16 via 10.0.0.2 mtu 1400 advmss 1360 window 9000 rtt 20ms
ip route replace 172.18.0.0/16 via 10.0.0.2 mtu 1300
ip route add unreachable 172.19.0.0/16
ip route add prohibit 172.19.0.0/16 metric 1
ip route add throw 172.19.0.0/16 metric 2
ip route add 172.20.0.0/16 via 10.0.0.2 proto bird src 10.0.0.1
ip route add local 172.21.0.1 dev v0 table main
ip route add broadcast 172.21.0.255 dev v0 table main
ip route add multicast 224.2.0.0/16 dev v0
# tables: three of one bucket (100, 356, 612), one emptied and used again
ip route add 10.7.0.0/16 via 10.0.0.2 table 100
ip route add 10.7.0.0/16 via 10.0.0.2 table 356
ip route add 10.7.0.0/16 via 10.0.0.2 table 612
ip route add default via 10.0.0.2 table 1000
ip route flush table 356
ip route add 10.8.0.0/16 via 10.0.0.2 table 356
# nexthop objects of both families, groups, aliases over them, object replaces
ip nexthop add id 1 via 10.0.0.2 dev v0
ip nexthop add id 2 via fe80::2 dev v1
ip nexthop add id 3 via 10.1.0.2 dev v1
ip nexthop add id 10 group 1/2
ip nexthop add id 11 group 1,2/3,5
ip route add 198.18.1.0/24 nhid 1
ip route add 198.18.2.0/24 nhid 2
ip route add 198.18.10.0/24 nhid 10
ip route add 198.18.11.0/24 nhid 11
ip route append 198.18.11.0/24 nhid 1
ip route add 198.18.11.0/24 nhid 10 metric 1
ip nexthop replace id 1 via 10.0.0.3 dev v0
ip nexthop replace id 10 group 1/3
ip route replace 198.18.11.0/24 nhid 2
ip nexthop del id 2
ip nexthop del id 11
ip route del 198.18.1.0/24
EOF
}

# ---- links: what the kernel flushes or flags without a route message
setup_links() {
	veth v0 v0p 10.0.0.1/24
	veth v1 v1p 10.1.0.1/24
	veth v2 v2p 10.2.0.1/24
}
steps_links() {
	cat <<'EOF'
ip route add 192.168.1.0/24 via 10.1.0.2
ip route add 192.168.2.0/24 nexthop via 10.0.0.2 nexthop via 10.1.0.2
ip route add 192.168.3.0/24 dev v1 src 10.1.0.1
ip route add 192.168.4.0/24 dev v1 scope host
ip route add local 192.168.5.1 dev v1 table main
ip route add 192.168.6.0/24 nexthop via 10.1.0.2 nexthop via 10.2.0.2
ip nexthop add id 1 via 10.1.0.2 dev v1
ip nexthop add id 2 via 10.0.0.2 dev v0
ip nexthop add id 3 group 1/2
ip route add 198.18.1.0/24 nhid 1
ip route add 198.18.3.0/24 nhid 3
# carrier lost on v1: linkdown, objects on v1 flushed, group 3 shrinks
ip link set v1p down
ip link set v2p down
ip link set v1p up
ip link set v2p up
# v1 down: its routes flushed (not scope host), multipath hops dead
ip link set v1 down
ip link set v1 up
ip route add 192.168.1.0/24 via 10.1.0.2
ip route add 192.168.7.0/24 via 10.1.0.2 src 10.1.0.1
ip addr add 10.1.0.9/24 dev v1
ip route add 192.168.8.0/24 via 10.1.0.2 src 10.1.0.9
ip addr del 10.1.0.9/24 dev v1
# the last address of v1: everything through v1 goes, the multipath hop dies
ip addr del 10.1.0.1/24 dev v1
ip addr add 10.1.0.1/24 dev v1
ip nexthop add id 4 via 10.2.0.2 dev v2
ip nexthop add id 5 group 2/4
ip route add 198.18.5.0/24 nhid 5
ip route add 192.168.9.0/24 nexthop via 10.0.0.2 nexthop via 10.2.0.2
ip route add 192.168.10.0/24 via 10.2.0.2
# v2 deleted: multipath routes with a hop on it go whole, object 4 goes, group 5 shrinks
ip link del v2
ip link set v0 down
ip link set v0 up
ip route add 192.168.11.0/24 via 10.0.0.2
ip link set v0p down
ip route add 192.168.12.0/24 via 10.0.0.3
ip link set v0p up
# every NETDEV_CHANGE without carrier evaluates the device's routes again: an IPv6-gateway hop
# added without carrier (no linkdown yet), a multipath route whose other hop died since
ip route add 192.168.13.0/24 nexthop via 10.0.0.2 nexthop via 10.1.0.2
ip link set v0p down
ip route add 192.168.14.0/24 via inet6 fe80::2 dev v0
ip link set v1 down
ip link set v0 arp off
# a promiscuity change alone is no NETDEV_CHANGE: this hop keeps no linkdown
ip route add 192.168.15.0/24 via inet6 fe80::3 dev v0
ip link set v0 promisc on
ip link set v1 up
ip link set v0p up
EOF
}

# ---- random: route operations and link, carrier and address changes, mixed
setup_random() {
	veth v0 v0p 10.0.0.1/24
	veth v1 v1p 10.1.0.1/24
	veth v2 v2p 10.2.0.1/24
}
steps_random() {
	RANDOM=${SEED:-2718}
	for ((i = 0; i < 160; i++)); do
		local a=$((RANDOM % 4)) len=$((RANDOM % 3 * 8 + 16)) tos=0x$((RANDOM % 2))0
		local metric=$((RANDOM % 2)) op via pfx
		case $((RANDOM % 4)) in
		0) via="via 10.0.0.$((RANDOM % 3 + 2))" ;;
		1) via="via 10.1.0.$((RANDOM % 3 + 2))" ;;
		2) via="dev v2" ;;
		*) via="nexthop via 10.0.0.2 nexthop via 10.$((RANDOM % 2 + 1)).0.2" ;;
		esac
		pfx=198.$((18 + a % 2)).$((a / 2 * 128)).0/$len
		[ "$len" = 16 ] && pfx=198.$((18 + a % 2)).0.0/16
		case $((RANDOM % 16)) in
		0 | 1 | 2 | 3) op="ip route add $pfx tos $tos metric $metric $via" ;;
		4 | 5) op="ip route prepend $pfx tos $tos metric $metric $via" ;;
		6 | 7) op="ip route append $pfx tos $tos metric $metric $via" ;;
		8 | 9) op="ip route replace $pfx tos $tos metric $metric $via" ;;
		10 | 11) op="ip route del $pfx tos $tos metric $metric" ;;
		12) op="ip link set v$((RANDOM % 3)) $([ $((RANDOM % 2)) = 0 ] && echo down || echo up)" ;;
		13) op="ip link set v$((RANDOM % 3))p $([ $((RANDOM % 2)) = 0 ] && echo down || echo up)" ;;
		14) op="ip addr add 10.$((RANDOM % 3)).0.1/24 dev v$((RANDOM % 3))" ;;
		*) op="ip addr del 10.$((RANDOM % 3)).0.1/24 dev v$((RANDOM % 3))" ;;
		esac
		# a step may fail (EEXIST, ESRCH, ENETUNREACH): that is recorded too
		echo "$op || true"
	done
}

# ---- bulk: 5 000 random operations in 50 batches (ip -batch), the state compared after each
# batch: routes of every placement, TOS and metric, multipath, nexthop objects and groups
# (replaced, deleted, flushed with their device), links down and up, carrier lost and back,
# addresses added and removed (the last one of a device included). For the live test
# tests/integration/inet_random.t; too large to keep in tests/data.
setup_bulk() {
	veth v0 v0p 10.0.0.1/24
	veth v1 v1p 10.1.0.1/24
	veth v2 v2p 10.2.0.1/24
	bulk_dir=$(mktemp -d)
}
steps_bulk() {
	RANDOM=${SEED:-5000}
	for ((b = 0; b < 50; b++)); do
		for ((i = 0; i < 100; i++)); do
			local a=$((RANDOM % 4)) len=$((RANDOM % 4 * 8 + 8)) tos=0x$((RANDOM % 2))0
			local metric=$((RANDOM % 3)) via pfx id=$((RANDOM % 4 + 1))
			case $((RANDOM % 6)) in
			0) via="via 10.0.0.$((RANDOM % 3 + 2))" ;;
			1) via="via 10.1.0.$((RANDOM % 3 + 2))" ;;
			2) via="dev v2" ;;
			3) via="nhid $((RANDOM % 2 ? id : id + 10))" ;;
			4) via="via inet6 fe80::$((RANDOM % 2 + 1)) dev v$((RANDOM % 3))" ;;
			*) via="nexthop via 10.0.0.2 nexthop via 10.$((RANDOM % 2 + 1)).0.2 weight 2" ;;
			esac
			pfx=198.$((18 + a % 2)).$((a / 2 * 128)).0/$len
			[ "$len" -le 16 ] && pfx=198.$((18 + a % 2)).0.0/16
			case $((RANDOM % 24)) in
			0 | 1 | 2 | 3 | 4) echo "route add $pfx tos $tos metric $metric $via" ;;
			5 | 6) echo "route prepend $pfx tos $tos metric $metric $via" ;;
			7 | 8) echo "route append $pfx tos $tos metric $metric $via" ;;
			9 | 10) echo "route replace $pfx tos $tos metric $metric $via" ;;
			11 | 12 | 13) echo "route del $pfx tos $tos metric $metric" ;;
			14) echo "link set v$((RANDOM % 3)) $([ $((RANDOM % 2)) = 0 ] && echo down || echo up)" ;;
			15) echo "link set v$((RANDOM % 3))p $([ $((RANDOM % 2)) = 0 ] && echo down || echo up)" ;;
			16) echo "addr add 10.$((RANDOM % 3)).0.$((RANDOM % 2 * 8 + 1))/24 dev v$((RANDOM % 3))" ;;
			17) echo "addr del 10.$((RANDOM % 3)).0.$((RANDOM % 2 * 8 + 1))/24 dev v$((RANDOM % 3))" ;;
			18 | 19) echo "nexthop replace id $id via 10.$((id % 3)).0.$((RANDOM % 2 + 2)) dev v$((id % 3))" ;;
			20) echo "nexthop replace id $((id + 10)) group $id/$((id % 4 + 1)),2" ;;
			21) echo "nexthop del id $((RANDOM % 2 ? id : id + 10))" ;;
			22) echo "nexthop replace id $id via fe80::$((RANDOM % 2 + 1)) dev v$((id % 3))" ;;
			*) echo "route flush 198.18.0.0/16" ;;
			esac
		done >"$bulk_dir/batch$b"
		# a batch goes on past its failing commands (EEXIST, ESRCH, ENETUNREACH)
		echo "ip -force -batch $bulk_dir/batch$b >/dev/null 2>&1 || true"
	done
}

record() {
	local s=$1 out=${INET_NOTIFY_OUT:-tests/data}/inet-notify-$1 steps
	rm -rf "$out"
	fresh_ns "$s"
	"setup_$s"
	steps=$(mktemp)
	"steps_$s" | sed "s|^\(!\? *\)ip |\1ip -n $ns |" >"$steps"
	ip netns exec "$ns" "$bin" notify "$out" "$steps"
	# the recorded steps without the namespace's name
	sed -i "s| -n $ns||" "$out/steps.txt"
	sed -i "s| -n $ns||" "$out/proc-steps.txt"
	"$bin" --print "$out/notify.nl" >"$out/notify.txt"
	[ -z "${bulk_dir:-}" ] || rm -rf "$bulk_dir"
	bulk_dir=
	rm -f "$steps"
	ip netns del "$ns"
	ns=
}

for s in "${@:-routes links random}"; do
	for t in $s; do record "$t"; done
done
