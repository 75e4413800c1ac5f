# tests/lib/routekinds4.sh - every kind of IPv4 route this kernel accepts, built in one
# namespace, for the recorded dump tests/data/inet-kinds (tests/data/capture_inet.sh) and the
# live test tests/integration/inet_kinds.t. Source after common.sh (uses veth_pair).
# docs/kernel-facts.md section 12 says what the kernel prints for each.
#
# Addresses: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and 198.18.0.0/15 only; devices are
# always named with `dev NAME`.

_rk4() {
	"$@" || { echo "routekinds4: failed: $*" >&2; return 1; }
}

# rk4_all NS: links (one with a 15-character name, one without carrier), addresses of every
# shape (their local, broadcast and prefix routes), and routes of every type, TOS, scope,
# metric, metrics, realms, protocol, table, multipath (weights, realms, IPv6 gateways),
# onlink, IPv6 gateways, nexthop objects and groups (IPv4, IPv6, mixed, blackhole), groups of
# one key built by add, prepend and append, and dead and linkdown hops.
rk4_all() {
	local ns=$1
	local n="ip -n $ns"
	veth_pair "$ns" v0 "" v0p || return 1
	veth_pair "$ns" v1 "" v1p || return 1
	veth_pair "$ns" a-fifteen-chars "" v2p || return 1
	veth_pair "$ns" v3 "" v3p || return 1
	_rk4 $n link add v4 type veth peer name v4p || return 1
	_rk4 $n link set dev v4 up || return 1 # no carrier: its peer stays down
	_rk4 $n addr add 10.0.0.1/24 dev v0 || return 1
	_rk4 $n addr add 10.0.0.9/24 dev v0 || return 1        # secondary
	_rk4 $n addr add 10.1.0.1/24 dev v1 metric 50 || return 1
	_rk4 $n addr add 10.2.0.1/31 dev a-fifteen-chars || return 1
	_rk4 $n addr add 10.3.0.1/32 dev v3 || return 1
	_rk4 $n addr add 10.3.1.1 peer 10.3.1.2/32 dev v3 || return 1
	_rk4 $n addr add 10.3.2.1/24 dev v3 noprefixroute || return 1
	_rk4 $n addr add 10.4.0.1/24 dev v4 || return 1
	_rk4 $n -6 addr add 2001:db8:4::1/64 dev v0 nodad || return 1
	# unicast: gateways, devices, host, default, metrics of every size
	_rk4 $n route add default via 10.0.0.254 || return 1
	_rk4 $n route add default via 10.1.0.254 metric 20 || return 1
	_rk4 $n route add 192.168.1.0/24 via 10.0.0.2 || return 1
	_rk4 $n route add 192.168.1.0/24 via 10.0.0.3 metric 5 || return 1
	_rk4 $n route add 192.168.1.0/24 via 10.0.0.4 metric 4294967295 || return 1
	_rk4 $n route add 192.168.0.0/16 dev v1 || return 1
	_rk4 $n route add 192.168.1.7 via 10.0.0.2 || return 1
	_rk4 $n route add 192.168.1.0/25 dev v0 || return 1
	_rk4 $n route add 192.168.1.128/25 dev v0 || return 1
	_rk4 $n route add 192.168.0.0/24 dev a-fifteen-chars || return 1
	_rk4 $n route add 0.0.0.0/1 via 10.0.0.2 || return 1
	_rk4 $n route add 128.0.0.0/1 via 10.0.0.2 || return 1
	_rk4 $n route add 255.255.255.254/32 dev v0 || return 1
	# groups of one key: add, prepend (first), append (last), replace of the first
	_rk4 $n route add 192.168.2.0/24 via 10.0.0.2 || return 1
	_rk4 $n route prepend 192.168.2.0/24 via 10.0.0.3 || return 1
	_rk4 $n route append 192.168.2.0/24 via 10.0.0.4 || return 1
	_rk4 $n route append 192.168.2.0/24 dev v1 || return 1
	_rk4 $n route replace 192.168.2.0/24 via 10.0.0.5 || return 1
	_rk4 $n route prepend blackhole 192.168.2.0/24 || return 1
	# TOS: a key of its own, named (rt_dsfield) and not
	_rk4 $n route add 192.168.3.0/24 tos 0x10 via 10.0.0.2 || return 1
	_rk4 $n route add 192.168.3.0/24 tos 0xb8 via 10.0.0.3 || return 1
	_rk4 $n route add 192.168.3.0/24 via 10.0.0.4 || return 1
	_rk4 $n route add 192.168.3.0/24 tos 0x10 via 10.0.0.5 metric 7 || return 1
	# types
	_rk4 $n route add blackhole 172.16.0.0/16 || return 1
	_rk4 $n route add blackhole 172.16.1.0/24 realm 4 || return 1
	_rk4 $n route add unreachable 172.17.0.0/16 || return 1
	_rk4 $n route add prohibit 172.18.0.0/16 metric 9 || return 1
	_rk4 $n route add throw 172.19.0.0/16 || return 1
	_rk4 $n route add local 172.20.0.1 dev v0 table main || return 1
	_rk4 $n route add broadcast 172.20.0.255 dev v0 table main || return 1
	_rk4 $n route add multicast 224.1.0.0/16 dev v0 || return 1
	_rk4 $n route add anycast 172.20.1.0/24 dev v0 || return 1
	_rk4 $n route add unreachable 172.21.0.0/16 table 100 || return 1
	# scope, src, protocol, onlink
	_rk4 $n route add 172.22.0.0/16 dev v0 scope link src 10.0.0.1 proto static || return 1
	_rk4 $n route add 172.22.1.0/24 dev v0 scope host || return 1
	_rk4 $n route add 172.22.2.0/24 dev v0 scope 200 proto 99 || return 1
	_rk4 $n route add 172.22.3.0/24 via 10.0.0.2 proto bird || return 1
	_rk4 $n route add 172.22.4.0/24 via 10.0.0.2 proto zebra src 10.0.0.9 || return 1
	_rk4 $n route add 172.22.5.0/24 via 10.9.9.9 dev v0 onlink || return 1
	# metrics
	_rk4 $n route add 172.23.0.0/16 via 10.0.0.2 mtu 1400 advmss 1300 window 3000 rtt 10ms \
		rttvar 5ms || return 1
	_rk4 $n route add 172.23.1.0/24 via 10.0.0.2 mtu lock 1280 hoplimit 7 initcwnd 10 \
		initrwnd 20 ssthresh 30 cwnd 40 reordering 5 rto_min 200ms quickack 1 \
		features ecn congctl reno fastopen_no_cookie 1 || return 1
	# realms
	_rk4 $n route add 172.24.0.0/16 via 10.0.0.2 realms 3/4 || return 1
	_rk4 $n route add 172.24.1.0/24 via 10.0.0.2 realm 5 || return 1
	_rk4 $n route add 172.24.2.0/24 via 10.0.0.2 realms 9/0 || return 1
	# multipath: weights, realms, IPv6 gateways, a dead and a linkdown hop
	_rk4 $n route add 172.25.0.0/16 nexthop via 10.0.0.2 weight 2 \
		nexthop via 10.1.0.2 weight 1 nexthop via 10.2.0.0 dev a-fifteen-chars weight 255 \
		|| return 1
	_rk4 $n route add 172.25.1.0/24 nexthop via 10.0.0.2 realms 1/2 \
		nexthop via inet6 fe80::1 dev v1 realm 6 || return 1
	_rk4 $n route add 172.25.2.0/24 nexthop via 10.0.0.2 nexthop via 10.4.0.2 || return 1
	_rk4 $n route add 172.25.3.0/24 nexthop via 10.0.0.2 nexthop via 10.3.2.2 dev v3 onlink || return 1
	# IPv6 gateways
	_rk4 $n route add 172.26.0.0/16 via inet6 fe80::1 dev v0 || return 1
	_rk4 $n route add 172.26.1.0/24 via inet6 2001:db8:4::2 || return 1
	_rk4 $n route add 172.26.2.0/24 via inet6 ::a00:2 dev v0 onlink || return 1
	_rk4 $n route add 172.26.3.0/24 via inet6 fe80::2 dev v1 realms 7/8 || return 1
	# a route through the device without carrier
	_rk4 $n route add 172.27.0.0/16 via 10.4.0.2 || return 1
	# nexthop objects: IPv4, IPv6, device only, blackhole, groups (mixed families, weights)
	_rk4 $n nexthop add id 1 via 10.0.0.2 dev v0 || return 1
	_rk4 $n nexthop add id 2 via fe80::2 dev v1 || return 1
	_rk4 $n nexthop add id 3 dev a-fifteen-chars || return 1
	_rk4 $n nexthop add id 4 blackhole || return 1
	_rk4 $n nexthop add id 5 via 10.1.0.2 dev v1 || return 1
	_rk4 $n nexthop add id 10 group 1/2 || return 1
	_rk4 $n nexthop add id 11 group 1,3/5,1 || return 1
	_rk4 $n nexthop add id 12 group 2 || return 1
	_rk4 $n route add 198.18.1.0/24 nhid 1 || return 1
	_rk4 $n route add 198.18.2.0/24 nhid 2 || return 1
	_rk4 $n route add 198.18.3.0/24 nhid 3 || return 1
	_rk4 $n route add 198.18.4.0/24 nhid 4 || return 1
	_rk4 $n route add 198.18.10.0/24 nhid 10 || return 1
	_rk4 $n route add 198.18.11.0/24 nhid 11 metric 3 || return 1
	_rk4 $n route add 198.18.12.0/24 nhid 12 table 100 || return 1
	_rk4 $n -6 route add 2001:db8:12::/64 nhid 2 || return 1
	# several tables: two of one hash bucket (100, 356), a large id, a named one
	_rk4 $n route add 10.7.0.0/16 via 10.0.0.2 table 100 || return 1
	_rk4 $n route add 10.7.0.0/16 via 10.0.0.2 table 356 || return 1
	_rk4 $n route add default via 10.0.0.2 table 356 || return 1
	_rk4 $n route add 10.8.0.0/16 dev v1 table 2147483647 proto static || return 1
	_rk4 $n route add 10.9.0.0/16 via 10.1.0.2 table 1000 || return 1
	_rk4 $n route add 10.9.0.0/16 via 10.1.0.2 table default || return 1
	_rk4 $n rule add from 10.0.0.0/8 table 100 || return 1
	# last: one multipath hop dies with its device (dead linkdown); the route stays
	_rk4 $n link add v5 type veth peer name v5p || return 1
	_rk4 $n link set dev v5 up || return 1
	_rk4 $n link set dev v5p up || return 1
	_rk4 $n addr add 10.5.0.1/24 dev v5 || return 1
	_rk4 $n route add 172.28.0.0/16 nexthop via 10.0.0.2 nexthop via 10.5.0.2 || return 1
	_rk4 $n route add 172.28.1.0/24 via 10.5.0.2 || return 1
	_rk4 $n link set dev v5 down || return 1
}
