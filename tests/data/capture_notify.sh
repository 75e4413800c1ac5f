#!/bin/bash
# Record notification streams for tests/unit/test_mirror.c: for each stream, a fresh network
# namespace is set up, then build/tools/nlnotify (subscribed before it dumps) records the
# first dump, every notification while the stream's steps run, a final dump and
# /proc/net/ipv6_route; then `ip -j -6 route show table all` is saved and proc is read once
# more to prove nothing moved. Formats: tests/data/README.md.
#
# Usage (as root, from the top of the tree, after `make all`):
#   tests/data/capture_notify.sh [STREAM...]      streams: ecmp nexthops links misc edge
#                                                 nhid-replace proto-ra encap compat0 ra
#                                                 ra-rtinfo
#                                                 (default: all)
#
# Every step must succeed, except those written "! CMD", which must fail (nlnotify stops
# otherwise). The steps avoid what the
# mirror cannot know without a targeted dump (carrier or admin state flips, which kill
# multipath legs silently; a nexthop group losing a member): the integration tests cover those.
set -eu
bin=build/tools/nlnotify
[ -x "$bin" ] || { echo "capture_notify.sh: build $bin first (make all)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "capture_notify.sh: run as root" >&2; exit 1; }
ns=
cleanup() {
	ra_cleanup
	[ -z "$ns" ] || ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
n() { ip -n "$ns" "$@"; }

# A fresh namespace: no DAD (addresses usable at once, no late notifications), nexthop compat
# mode 1 (the default: route messages carry the object's hops and replaces re-notify routes).
fresh_ns() {
	ns=rtsnap-notify-$1-$$
	ip netns add "$ns"
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 net.ipv4.nexthop_compat_mode=1 \
		net.ipv6.route.skip_notify_on_dev_down=0
	n link set lo up
}

# veth NAME PEER ADDR: a veth pair, both ends up, ADDR/64 on NAME.
veth() {
	n link add "$1" type veth peer name "$2"
	n link set "$1" up
	n link set "$2" up
	n -6 addr add "$3/64" dev "$1" nodad
}

# ---- (a) ECMP life in one table: add, append, prepend, replace, one-hop and whole deletes
setup_ecmp() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
	n -6 route add 2001:db8:ff::/64 via 2001:db8:1::fe dev v1
}
steps_ecmp() {
	cat <<'EOF'
# a route, then a sibling, then two at once (the kernel announces new hops first)
ip -6 route add 2001:db8:a::/64 via 2001:db8:1::2 dev v1
ip -6 route append 2001:db8:a::/64 via 2001:db8:1::3 dev v1
ip -6 route append 2001:db8:a::/64 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:2::3 dev v2
# prepend (NLM_F_CREATE alone) of an ECMP-able route joins the group too
ip -6 route prepend 2001:db8:a::/64 via 2001:db8:2::4 dev v2
# the same prefix at another metric, before and after
ip -6 route add 2001:db8:a::/64 via 2001:db8:1::7 dev v1 metric 100
ip -6 route add 2001:db8:a::/64 via 2001:db8:1::8 dev v1 metric 2000
# replace: a single route over the group, then a group over the single route
ip -6 route replace 2001:db8:a::/64 via 2001:db8:1::9 dev v1
ip -6 route replace 2001:db8:a::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:2::3 dev v2
# one hop of three, then one of two (the group becomes a plain route)
ip -6 route del 2001:db8:a::/64 via 2001:db8:2::2 dev v2
ip -6 route del 2001:db8:a::/64 via 2001:db8:1::2 dev v1
# grow it again; delete two hops in one request; grow; delete the whole group
ip -6 route append 2001:db8:a::/64 via 2001:db8:1::4 dev v1
ip -6 route append 2001:db8:a::/64 via 2001:db8:1::5 dev v1
ip -6 route del 2001:db8:a::/64 nexthop via 2001:db8:1::4 dev v1 nexthop via 2001:db8:2::3 dev v2
ip -6 route append 2001:db8:a::/64 nexthop via 2001:db8:2::6 dev v2 nexthop via 2001:db8:1::6 dev v1
ip -6 route del 2001:db8:a::/64 metric 1024
# a delete naming no metric takes the node's first route (metric 100)
ip -6 route del 2001:db8:a::/64
# multipath with weights, and a group replaced by a group
ip -6 route add 2001:db8:c::/64 nexthop via 2001:db8:1::2 dev v1 weight 3 nexthop via 2001:db8:2::2 dev v2
ip -6 route replace 2001:db8:c::/64 nexthop via 2001:db8:2::5 dev v2 nexthop via 2001:db8:1::5 dev v1 weight 2
# dev-only routes of equal metric on two devices, then a replace of one of them
ip -6 route add 2001:db8:b::/64 dev v1
ip -6 route append 2001:db8:b::/64 dev v2
ip -6 route replace 2001:db8:b::/64 dev v1 proto static
ip -6 route replace 2001:db8:b::/64 dev v2
# a gateway route beside dev-only ones of the same metric; replace each kind
ip -6 route append 2001:db8:b::/64 via 2001:db8:1::2 dev v1
ip -6 route replace 2001:db8:b::/64 via 2001:db8:2::9 dev v2
ip -6 route replace 2001:db8:b::/64 dev v1 proto boot
ip -6 route del 2001:db8:b::/64 dev v2
# the same operations again, each left in place on its own prefix so the final state shows
# the result of each: append and prepend order
ip -6 route add 2001:db8:11::/64 via 2001:db8:1::2 dev v1
ip -6 route append 2001:db8:11::/64 via 2001:db8:1::3 dev v1
ip -6 route append 2001:db8:11::/64 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:2::3 dev v2
ip -6 route prepend 2001:db8:11::/64 via 2001:db8:2::4 dev v2
ip -6 route prepend 2001:db8:11::/64 nexthop via 2001:db8:1::5 dev v1 nexthop via 2001:db8:2::5 dev v2
# a single route over a group; a group over a single route
ip -6 route add 2001:db8:12::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2
ip -6 route replace 2001:db8:12::/64 via 2001:db8:2::3 dev v2
ip -6 route add 2001:db8:13::/64 via 2001:db8:1::2 dev v1
ip -6 route replace 2001:db8:13::/64 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:1::3 dev v1
# one hop of three (the middle one); one hop of two (the first one)
ip -6 route add 2001:db8:14::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:1::3 dev v1
ip -6 route del 2001:db8:14::/64 via 2001:db8:2::2 dev v2
ip -6 route add 2001:db8:15::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2
ip -6 route del 2001:db8:15::/64 via 2001:db8:1::2 dev v1
# device routes around a group at one metric: replace the group, then the first device route
ip -6 route add 2001:db8:16::/64 dev v1
ip -6 route append 2001:db8:16::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2
ip -6 route append 2001:db8:16::/64 dev v2
ip -6 route replace 2001:db8:16::/64 via 2001:db8:2::9 dev v2
ip -6 route replace 2001:db8:16::/64 dev v2 proto static
# a replace that finds nothing to replace adds
ip -6 route replace 2001:db8:17::/64 via 2001:db8:1::2 dev v1
ip -6 route replace 2001:db8:17::/64 dev v2 metric 10
# reject routes
ip -6 route add unreachable 2001:db8:d::/64
ip -6 route replace blackhole 2001:db8:d::/64
ip -6 route del 2001:db8:ff::/64
EOF
}

# ---- (b) nexthop objects and groups, several tables, a rule naming a new table
setup_nexthops() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
	n -6 route add 2001:db8:ff::/64 via 2001:db8:1::fe dev v1 table 100
}
steps_nexthops() {
	cat <<'EOF'
ip -6 nexthop add id 1 via 2001:db8:1::2 dev v1
ip -6 nexthop add id 2 via 2001:db8:2::2 dev v2
ip -6 nexthop add id 3 via 2001:db8:1::3 dev v1
ip -6 nexthop add id 4 dev v2
ip nexthop add id 10 group 1/2
ip nexthop add id 11 group 3,2/4
ip nexthop add id 12 group 1/3
ip -6 nexthop add id 20 blackhole
ip -6 route add 2001:db8:c::/64 nhid 1
ip -6 route add 2001:db8:c::/64 nhid 3 metric 50
ip -6 route add 2001:db8:d::/64 nhid 10
ip -6 route add 2001:db8:d::/64 nhid 4 metric 2000
ip -6 route add 2001:db8:e::/64 nhid 10 table 100
ip -6 route add 2001:db8:f::/64 nhid 11 table 200
ip -6 route add 2001:db8:f::/64 nhid 3 table 100
ip -6 route add 2001:db8:9::/64 nhid 20
ip -6 route add 2001:db8:8::/64 nhid 2 table 200
ip -6 route add 2001:db8:6::/64 nhid 11
ip -6 route add 2001:db8:5::/64 nhid 12 table 100
# nexthop replace: routes over the object are re-notified (compat mode 1); 1 and 3 are
# also members of groups 10, 11 and 12
ip -6 nexthop replace id 1 via 2001:db8:1::7 dev v1
ip -6 nexthop replace id 3 via 2001:db8:2::7 dev v2
# a group replaced (its first member changes: proc shows the first member)
ip nexthop replace id 10 group 2/1
# routes replaced onto other objects, and a plain route replaced by an nhid route
ip -6 route replace 2001:db8:c::/64 nhid 2
ip -6 route add 2001:db8:7::/64 via 2001:db8:1::2 dev v1 table 200
ip -6 route replace 2001:db8:7::/64 nhid 1 table 200
# nexthop delete: the routes over it go
ip -6 nexthop del id 20
ip nexthop del id 12
ip -6 route del 2001:db8:d::/64 nhid 4 metric 2000
# a rule naming a new table, then routes in it; a rule naming an empty new table
ip -6 rule add from 2001:db8:99::/64 table 300 priority 1000
ip -6 route add 2001:db8:30::/64 nhid 1 table 300
ip -6 route add default via 2001:db8:2::1:1 dev v2 table 300
ip -6 rule add to 2001:db8:98::/64 table 45 priority 1001
# a table emptied
ip -6 route del 2001:db8:8::/64 table 200
ip -6 route del 2001:db8:f::/64 table 200
EOF
}

# ---- (c) links: renames, a link deleted with routes and a multipath leg on it
setup_links() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
	veth v3 p3 2001:db8:3::1
}
steps_links() {
	cat <<'EOF'
ip -6 route add 2001:db8:40::/64 dev v3
ip -6 route add 2001:db8:41::/64 via 2001:db8:3::2 dev v3
ip -6 route add 2001:db8:41::/64 via 2001:db8:1::2 dev v1 metric 10
ip -6 route add 2001:db8:42::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:3::2 dev v3 nexthop via 2001:db8:2::2 dev v2
ip -6 route add 2001:db8:43::/64 nexthop via 2001:db8:3::2 dev v3 nexthop via 2001:db8:1::2 dev v1
ip -6 route add 2001:db8:44::/64 via 2001:db8:3::2 dev v3 table 100
ip -6 route add 2001:db8:45::/64 dev v2 table 100
ip -6 addr add 2001:db8:5::1/64 dev v2 nodad
# renames: no route message, proc shows the new name
ip link set dev v2 name renamed-v2
ip link set dev p1 name a-fifteen-chars
# a link deleted (with its veth peer): its routes, its addresses' routes, its legs
ip link del v3
ip -6 addr del 2001:db8:5::1/64 dev renamed-v2
ip link set dev renamed-v2 name v2again
EOF
}

# ---- (d) route attributes, source routes, route types, addresses, a table emptied
setup_misc() {
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.default.forwarding=1
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
}
steps_misc() {
	cat <<'EOF'
# metrics, preference, protocol: replaced and changed
ip -6 route add 2001:db8:20::/64 via 2001:db8:1::2 dev v1 mtu 1400 hoplimit 10
ip -6 route replace 2001:db8:20::/64 via 2001:db8:1::2 dev v1 mtu 1300
ip -6 route change 2001:db8:20::/64 via 2001:db8:1::3 dev v1 advmss 1200
ip -6 route add 2001:db8:21::/64 via 2001:db8:1::2 dev v1 pref high
ip -6 route replace 2001:db8:21::/64 via 2001:db8:1::2 dev v1 pref low proto static
ip -6 route add 2001:db8:22::/64 dev v2 pref low proto 99
# expiry: added, replaced by a permanent route; a permanent one given an expiry
ip -6 route add 2001:db8:23::/64 via 2001:db8:2::2 dev v2 expires 3600
ip -6 route replace 2001:db8:23::/64 via 2001:db8:2::2 dev v2
ip -6 route add 2001:db8:24::/64 dev v1
ip -6 route replace 2001:db8:24::/64 dev v1 expires 7200
# an expiring group (an expiry does not keep a route out of ECMP)
ip -6 route add 2001:db8:25::/64 via 2001:db8:1::2 dev v1 expires 3600
ip -6 route append 2001:db8:25::/64 via 2001:db8:2::2 dev v2 expires 3600
# source routes around a plain one of the same destination
ip -6 route add 2001:db8:26::/64 from 2001:db8:1::/64 via 2001:db8:1::2 dev v1
ip -6 route add 2001:db8:26::/64 from 2001:db8:2::/64 via 2001:db8:2::2 dev v2
ip -6 route add 2001:db8:26::/64 via 2001:db8:1::3 dev v1
ip -6 route append 2001:db8:26::/64 from 2001:db8:1::/64 via 2001:db8:1::4 dev v1
ip -6 route del 2001:db8:26::/64 from 2001:db8:2::/64
# route types: a reject route replaced by a unicast one, throw, via loopback, local
ip -6 route add prohibit 2001:db8:27::/64
ip -6 route replace 2001:db8:27::/64 via 2001:db8:1::2 dev v1
ip -6 route add throw 2001:db8:28::/64 table 100
ip -6 route add 2001:db8:29::/64 dev lo
ip -6 route add local 2001:db8:2a::1 dev v1
# host routes and the default route
ip -6 route add 2001:db8:2b::1 via 2001:db8:1::2 dev v1
ip -6 route add default via 2001:db8:1::2 dev v1 metric 10
ip -6 route add default via 2001:db8:2::2 dev v2
# addresses (forwarding on: subnet-router anycast routes too)
ip -6 addr add 2001:db8:30::1/64 dev v2 nodad
ip -6 addr add 2001:db8:31::1/64 dev v1 nodad noprefixroute
ip -6 addr add 2001:db8:30::2/64 dev v2 nodad
ip -6 addr del 2001:db8:30::1/64 dev v2
# a table made and emptied (its placeholder row stays)
ip -6 route add 2001:db8:40::/64 via 2001:db8:1::2 dev v1 table 1000
ip -6 route del 2001:db8:40::/64 table 1000
EOF
}

# ---- (e) corners of the kernel's rules where a simpler model would go wrong
setup_edge() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
	veth v3 p3 2001:db8:3::1
	n -6 route add 2001:db8:ff::/64 via 2001:db8:1::fe dev v1 table 100
}
steps_edge() {
	cat <<'EOF'
ip -6 nexthop add id 1 via 2001:db8:1::2 dev v1
ip -6 nexthop add id 5 via 2001:db8:3::2 dev v3
# a replace over an nhid route that is the first non-ECMP route of its metric
ip -6 route add 2001:db8:50::/64 nhid 1
ip -6 route append 2001:db8:50::/64 dev v2
ip -6 route replace 2001:db8:50::/64 nhid 1 proto static
# a multipath append failing on its second hop (a duplicate): the first is added and removed
ip -6 route add 2001:db8:52::/64 via 2001:db8:1::2 dev v1
! ip -6 route append 2001:db8:52::/64 nexthop via 2001:db8:1::3 dev v1 nexthop via 2001:db8:1::2 dev v1
# the first sibling deleted: the group's next hop leads
ip -6 route add 2001:db8:53::/64 nexthop via 2001:db8:1::2 dev v1 nexthop via 2001:db8:2::2 dev v2 nexthop via 2001:db8:1::3 dev v1
ip -6 route del 2001:db8:53::/64 via 2001:db8:1::2 dev v1
ip -6 route append 2001:db8:53::/64 via 2001:db8:1::2 dev v1
# onlink gateway; metric 0 (the kernel makes it 1024)
ip -6 route add 2001:db8:54::/64 via 2001:db8:99::1 dev v1 onlink
ip -6 route add 2001:db8:55::/64 via 2001:db8:1::2 dev v1 metric 0
# tables of one hash bucket (100, 356, 612): newest first
ip -6 route add 2001:db8:56::/64 via 2001:db8:1::2 dev v1 table 356
ip -6 rule add from 2001:db8:97::/64 table 612 priority 900
ip -6 route add 2001:db8:57::/64 dev v2 table 612
# a device deleted under a route over a nexthop object (the kernel flushes the object)
ip -6 route add 2001:db8:58::/64 nhid 5
ip link del v3
EOF
}

# ---- (f) a user's replace naming the nhid of a route that is not the first non-ECMP route
# of its metric: the kernel replaces the first one (docs: known disagreement, test_mirror)
setup_nhid_replace() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
}
steps_nhid_replace() {
	cat <<'EOF'
ip -6 nexthop add id 1 via 2001:db8:1::2 dev v1
ip -6 route add 2001:db8:50::/64 dev v2
ip -6 route append 2001:db8:50::/64 nhid 1
ip -6 route replace 2001:db8:50::/64 nhid 1 proto static
EOF
}

# ---- (g) gateway routes a user (or a userspace RA client such as systemd-networkd) marks
# proto ra: the kernel keys ECMP on RTF_ADDRCONF, not on the protocol
setup_proto_ra() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
}
steps_proto_ra() {
	cat <<'EOF'
ip -6 route add 2001:db8:51::/64 via 2001:db8:1::2 dev v1 proto ra
ip -6 route append 2001:db8:51::/64 via 2001:db8:2::3 dev v2 proto ra
ip -6 route add default via 2001:db8:1::1:1 dev v1 proto ra metric 100 expires 1800
ip -6 route append default via 2001:db8:2::1:1 dev v2 proto ra metric 100 expires 1800
EOF
}

# ---- (h) lightweight tunnel encapsulations: a route differing from another only by its
# encap is a different route for the kernel (rt6_duplicate_nexthop compares encaps)
setup_encap() {
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
}
steps_encap() {
	cat <<'EOF'
ip -6 route add 2001:db8:60::/64 encap seg6 mode encap segs fc00::1 dev v1
ip -6 route append 2001:db8:60::/64 dev v1
ip -6 route add 2001:db8:61::/64 encap ip6 dst 2001:db8:1::9 dev v1
ip -6 route replace 2001:db8:61::/64 encap ip6 dst 2001:db8:1::8 dev v1
ip -6 route add 2001:db8:62::/64 via 2001:db8:1::2 dev v1
ip -6 route append 2001:db8:62::/64 encap seg6 mode encap segs fc00::2 via 2001:db8:1::2 dev v1
EOF
}

# ---- (i) nexthop objects with net.ipv4.nexthop_compat_mode=0: route messages carry only
# the object's id, a nexthop replace re-notifies no route, routes over a deleted object go
# without RTM_DELROUTE
setup_compat0() {
	ip netns exec "$ns" sysctl -qw net.ipv4.nexthop_compat_mode=0
	veth v1 p1 2001:db8:1::1
	veth v2 p2 2001:db8:2::1
	veth v3 p3 2001:db8:3::1
}
steps_compat0() {
	cat <<'EOF'
ip -6 nexthop add id 1 via 2001:db8:1::2 dev v1
ip -6 nexthop add id 2 via 2001:db8:2::2 dev v2
ip -6 nexthop add id 3 via 2001:db8:3::2 dev v3
ip nexthop add id 10 group 1/2
ip -6 route add 2001:db8:70::/64 nhid 1
ip -6 route add 2001:db8:71::/64 nhid 10
ip -6 route add 2001:db8:72::/64 nhid 2 table 100
ip -6 route add 2001:db8:73::/64 nhid 3
ip -6 nexthop replace id 1 via 2001:db8:1::7 dev v1
ip nexthop replace id 10 group 2/1
ip -6 nexthop del id 2
ip link del v3
EOF
}

# ---- (j) routes learned from router advertisements (radvd in a second namespace): default
# router, on-link prefixes (RTF_PREFIX_RT: the collector's targeted RTM_F_PREFIX dump is
# replayed from the one nlnotify records after each step), route information; then radvd
# reloads a second configuration
rns=
radvd_pid=
tmpd=
ra_cleanup() {
	[ -z "$radvd_pid" ] || [ ! -s "$radvd_pid" ] || kill "$(cat "$radvd_pid")" 2>/dev/null || true
	[ -z "$rns" ] || ip netns del "$rns" 2>/dev/null || true
	[ -z "$tmpd" ] || rm -rf "$tmpd"
	rns=
	radvd_pid=
	tmpd=
}
# ra_link CONF1 CONF2: the router namespace, the link, and radvd's two configurations
ra_link() {
	rns=$ns-r
	ip netns add "$rns"
	ip netns exec "$rns" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.forwarding=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.default.accept_ra=2 net.ipv6.conf.default.accept_ra_rt_info_max_plen=64 \
		net.ipv6.conf.default.accept_ra_rtr_pref=1
	ip link add h0 netns "$ns" type veth peer name r0 netns "$rns"
	n link set h0 up
	ip -n "$rns" link set r0 up
	tmpd=$(mktemp -d)
	radvd_pid=$tmpd/radvd.pid
	printf '%s\n' "$1" >"$tmpd/radvd1.conf"
	printf '%s\n' "$2" >"$tmpd/radvd2.conf"
	chmod 0644 "$tmpd"/*.conf
}
ra_conf() { # ra_conf DEFAULT_PREFERENCE EXTRA...: a router's configuration
	local pref=$1
	shift
	printf 'interface r0 {\n  AdvSendAdvert on;\n  MinRtrAdvInterval 3;\n  MaxRtrAdvInterval 4;\n'
	printf '  AdvDefaultLifetime 600;\n  AdvDefaultPreference %s;\n' "$pref"
	printf '  prefix 2001:db8:a::/64 { AdvOnLink on; AdvAutonomous on; AdvValidLifetime 3600; AdvPreferredLifetime 1800; };\n'
	printf '  prefix 2001:db8:b::/64 { AdvOnLink on; AdvAutonomous off; };\n'
	printf '  %s\n' "$@"
	printf '};\n'
}
# a default router whose preference changes (announced with NLM_F_REPLACE), prefixes, a
# route withdrawn (lifetime 0)
setup_ra() {
	ra_link "$(ra_conf high 'route 2001:db8:c::/48 { AdvRoutePreference low; AdvRouteLifetime 900; };' \
		'route 2001:db8:d::/64 { AdvRouteLifetime infinity; };')" \
		"$(ra_conf low 'route 2001:db8:c::/48 { AdvRoutePreference low; AdvRouteLifetime 0; };' \
			'route 2001:db8:d::/64 { AdvRouteLifetime infinity; };')"
}
# route information changed by a later RA: a preference raised, a finite route added (the
# kernel announces neither the preference nor the new route's lifetime: the collector re-reads
# the device, and oif-steps.nl records those dumps)
setup_ra_rtinfo() {
	ra_link "$(ra_conf medium 'route 2001:db8:d::/64 { AdvRouteLifetime infinity; };')" \
		"$(ra_conf medium 'route 2001:db8:d::/64 { AdvRoutePreference high; AdvRouteLifetime infinity; };' \
			'route 2001:db8:f::/56 { AdvRouteLifetime 1000; };')"
}
steps_ra_rtinfo() { steps_ra; }
steps_ra() {
	cat <<EOF
# the router starts; wait for its RAs
ip netns exec $rns radvd -n -C $tmpd/radvd1.conf -p $radvd_pid -m logfile -l $tmpd/radvd.log </dev/null >/dev/null 2>&1 &
sleep 9
# the second configuration
cp $tmpd/radvd2.conf $tmpd/radvd1.conf && kill -HUP \$(cat $radvd_pid)
sleep 9
EOF
}

record() {
	local s=$1 out=tests/data/notify-$1 steps fn=${1//-/_}
	steps=$(mktemp)
	fresh_ns "$s"
	"setup_$fn"
	"steps_$fn" >"$steps"
	rm -rf "$out"
	mkdir -p "$out"
	ip netns exec "$ns" "$bin" "$out" "$steps"
	rm -f "$steps"
	ip netns exec "$ns" ip -j -6 route show table all >"$out/ip.json"
	if ! ip netns exec "$ns" cat /proc/net/ipv6_route | cmp -s - "$out/proc.txt"; then
		echo "capture_notify.sh: $s: the tables changed after the final dump" >&2
		exit 1
	fi
	"$bin" --print "$out/notify.nl" >"$out/notify.txt"
	ra_cleanup
	ip netns del "$ns"
	ns=
	echo "recorded $s: $(wc -l <"$out/notify.txt") notifications, $(wc -l <"$out/proc.txt") proc lines"
}

for s in ${*:-ecmp nexthops links misc edge nhid-replace proto-ra encap compat0 ra ra-rtinfo}; do
	record "$s"
done
