# tests/lib/routekinds.sh - builders for every kind of IPv6 route rtsnap must
# render. Source after common.sh (uses veth_pair, bg_register, wait_until).
#
# rk_<kind> NS [PEER_NS] builds the kind inside namespace NS (PEER_NS only for
# kinds that need a second host) and returns non-zero if the kernel refused a
# step. What /proc/net/ipv6_route and the netlink dump show for each kind, and
# how to rebuild the proc line from netlink alone, is in docs/kernel-facts.md;
# the comment above each builder gives the short version.
#
# Conventions: documentation prefixes 2001:db8::/32 only; every address is
# added with `nodad` and DAD is also disabled for link-local addresses (so no
# route appears late); device names are always given as `dev NAME` (a bare
# `a` would parse as `address`).

# _rk ...: run one ip(8) command, report the failing command on stderr.
_rk() {
	"$@" || { echo "routekinds: failed: $*" >&2; return 1; }
}

# rk_prep NS: sysctls every builder wants: no DAD (link-local addresses and
# their local-table routes exist at once), and a slow route GC so overdue
# RTF_EXPIRES routes stay put while a test compares.
rk_prep() {
	ip netns exec "$1" sysctl -qw \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.route.gc_interval=3600 >/dev/null
}

# rk_connected NS: connected (proto kernel) routes, link-local fe80::/64,
# multicast ff00::/8, and the local table's local and anycast routes,
# including subnet-router anycast (forwarding=1).
# proc: prefix routes "00000001 dev" metric 256 (an address metric overrides
# it; a finite valid_lft adds EXPIRES 00400001); local addresses "80200001"
# metric 0; anycast "00300001" metric 0; ff00::/8 "00000001" metric 256; an
# address on lo makes its prefix route a reject route (00200200 lo).
rk_connected() {
	local ns=$1
	rk_prep "$ns"
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	veth_pair "$ns" c0 "" c1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:c0::1/64 dev c0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:c1::5/48 dev c1 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:c2::1/128 dev c0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:c3::1/64 dev c0 nodad noprefixroute || return 1
	_rk ip -n "$ns" addr add 2001:db8:c4::1/64 dev c1 nodad valid_lft 3000 preferred_lft 3000 || return 1
	_rk ip -n "$ns" addr add 2001:db8:c5::1/64 dev c0 nodad metric 300 || return 1
	_rk ip -n "$ns" addr add 2001:db8:c6::1/64 dev lo || return 1
}

# rk_static NS: static unicast routes with and without gateway, onlink,
# link-local gateway, metrics 0..2^32-1, several routes for one prefix with
# different metrics (walked in ascending metric), a default route, protocols,
# RTAX metrics, prefsrc, a host route, ::1 via lo (not a reject route).
# proc: "00000001" dev-only, "00000003" with gateway, "00000007" onlink;
# metrics/protocol/prefsrc do not show; main has no placeholder row because
# it has a ::/0 route.
rk_static() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" s0 "" s1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:5::1/64 dev s0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:6::1/64 dev s1 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:10::/64 via 2001:db8:5::2 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:10::/64 via 2001:db8:5::3 metric 100 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:10::/64 dev s1 metric 2000 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:10::/64 via 2001:db8:5::4 metric 5 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:11::/64 dev s0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:12::/64 via 2001:db8:99::1 dev s0 onlink || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:13::/64 via fe80::1 dev s0 metric 0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:14::/64 via fe80::1 dev s1 metric 4294967295 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:15::/64 dev s0 mtu 1400 hoplimit 10 advmss 1300 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:16::/64 dev s0 proto static || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:17::/64 dev s0 proto 99 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:18::/64 dev s0 src 2001:db8:5::1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:19::7/128 via 2001:db8:6::9 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:1a::/48 dev s0 metric 1 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:1a::/48 dev s1 metric 1 || return 1
	_rk ip -n "$ns" -6 route add ::1/128 dev lo || return 1
	_rk ip -n "$ns" -6 route add default via 2001:db8:5::1:1 || return 1
}

# rk_reject NS: unreachable, blackhole, prohibit, throw, unicast via lo, a
# reject route given expires/pref/a device, and user-added local, anycast and
# multicast routes (anycast/multicast on lo become reject routes).
# proc: every reject route prints "00200200", zero gateway, dev "lo", keeps
# its metric, and loses RTF_UP, RTF_EXPIRES and the preference; netlink keeps
# the rtm_type (unicast for "dev lo") and reports RTA_OIF = lo.
# User local routes print "80000001" (no NONEXTHOP), user anycast/multicast
# on a real device "00000001".
rk_reject() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" j0 "" j1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:5::1/64 dev j0 nodad || return 1
	_rk ip -n "$ns" -6 route add unreachable 2001:db8:40::/64 || return 1
	_rk ip -n "$ns" -6 route add blackhole 2001:db8:41::/64 metric 50 || return 1
	_rk ip -n "$ns" -6 route add prohibit 2001:db8:42::/64 || return 1
	_rk ip -n "$ns" -6 route add throw 2001:db8:43::/64 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:44::/64 dev lo || return 1
	_rk ip -n "$ns" -6 route add unreachable 2001:db8:45::/64 expires 3000 pref high || return 1
	_rk ip -n "$ns" -6 route add unreachable 2001:db8:46::/64 dev j0 || return 1
	_rk ip -n "$ns" -6 route add blackhole 2001:db8:47::/64 metric 7 table 100 || return 1
	_rk ip -n "$ns" -6 route add unreachable default metric 4278198272 table 100 || return 1
	_rk ip -n "$ns" -6 route add local 2001:db8:48::1 dev lo table local || return 1
	_rk ip -n "$ns" -6 route add local 2001:db8:49::1 dev j0 table local || return 1
	_rk ip -n "$ns" -6 route add local 2001:db8:4b::1 dev lo table main || return 1
	_rk ip -n "$ns" -6 route add anycast 2001:db8:4a::1 dev j0 table local || return 1
	_rk ip -n "$ns" -6 route add anycast 2001:db8:4c::1 dev lo table local || return 1
	_rk ip -n "$ns" -6 route add multicast ff0e::/16 dev j0 table local || return 1
	_rk ip -n "$ns" -6 route add multicast ff0e:1::/32 dev lo table local || return 1
}

# rk_multipath NS: ECMP routes with 2..9 nexthops, weights 1..256, nexthops
# on two devices, an onlink nexthop, siblings added one by one with
# `ip route append`, a multipath default route, a multipath route in
# another table, and a multipath route next to single routes of the same
# prefix with other metrics.
# proc: one line per sibling, flags "00000003" (onlink "00000007"), in
# RTA_MULTIPATH order (= insertion order); netlink: ONE message per
# multipath route, RTA_MULTIPATH carrying gateway, ifindex, weight and
# RTNH_F_ONLINK per nexthop.
rk_multipath() {
	local ns=$1 i
	rk_prep "$ns"
	veth_pair "$ns" m0 "" m1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev m0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:2::1/64 dev m1 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:30::/64 \
		nexthop via 2001:db8:1::5 weight 3 \
		nexthop via 2001:db8:1::2 weight 1 \
		nexthop via 2001:db8:2::9 dev m1 weight 200 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:31::/64 metric 77 \
		$(for i in 8 7 6 5 4 3 2 9; do echo nexthop via 2001:db8:1::$i weight $i; done) || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:31::/64 metric 77 \
		nexthop via 2001:db8:2::a dev m1 weight 256 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:32::/64 \
		nexthop via 2001:db8:1::3 dev m0 \
		nexthop via 2001:db8:99::1 dev m0 onlink || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:33::/64 via 2001:db8:1::2 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:33::/64 via 2001:db8:1::3 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:33::/64 via fe80::1 dev m1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:34::/64 via 2001:db8:1::4 metric 10 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:34::/64 metric 20 \
		nexthop via 2001:db8:1::2 nexthop via 2001:db8:2::2 dev m1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:34::/64 dev m1 metric 30 || return 1
	_rk ip -n "$ns" -6 route add default \
		nexthop via fe80::1 dev m0 nexthop via fe80::2 dev m1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:35::/64 table 300 \
		nexthop via 2001:db8:1::2 weight 2 nexthop via 2001:db8:1::3 weight 5 || return 1
	# delete a middle sibling: the survivors stay consecutive
	_rk ip -n "$ns" -6 route del 2001:db8:31::/64 via 2001:db8:1::5 metric 77 || return 1
}

# rk_mpath_gap NS: a route that qualifies for ECMP (gateway, not RA, no
# nexthop object) appended after a non-ECMP route of the same prefix and
# metric. proc prints all four routes in list order (sibling, dev-only,
# sibling, nhid); the netlink dump prints the siblings as one RTA_MULTIPATH
# message and then skips to the last sibling's successor, so the dev-only
# route BETWEEN the siblings is missing from every dump.
# See "Routes the dump cannot see" in docs/kernel-facts.md.
rk_mpath_gap() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" g0 "" g1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev g0 nodad || return 1
	_rk ip -n "$ns" -6 nexthop add id 7 via 2001:db8:1::7 dev g0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:20::/64 via 2001:db8:1::2 dev g0 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:20::/64 dev g1 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:20::/64 via 2001:db8:1::3 dev g0 || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:20::/64 nhid 7 || return 1
}

# rk_mpath_sibling_flags NS: siblings of one multipath route that differ in
# RTF_EXPIRES, preference and protocol (each added with `ip route append`).
# proc prints each sibling's own flags (e.g. 18000003 then 08400003 then
# 00000003); the dump carries only the first sibling's RTA_PREF,
# RTA_CACHEINFO expiry, protocol and metrics for the whole RTA_MULTIPATH.
rk_mpath_sibling_flags() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" f0 "" f1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev f0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:21::/64 via 2001:db8:1::2 pref low || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:21::/64 via 2001:db8:1::3 pref high expires 3000 proto static || return 1
	_rk ip -n "$ns" -6 route append 2001:db8:21::/64 via 2001:db8:1::4 || return 1
}

# rk_nexthop NS: routes using nexthop objects: single gateway, device-only,
# onlink, blackhole, an ECMP group with weights, a resilient group, a group
# of one blackhole, and an nhid route with expires and pref.
# proc: ONE line per route even for groups, showing the FIRST group member's
# gateway and device; flags from the route only: no ONLINK bit even when
# netlink reports RTNH_F_ONLINK, and a blackhole nexthop prints "00000001 lo"
# although netlink reports rtm_type blackhole. With
# net.ipv4.nexthop_compat_mode=0 the dump carries only RTA_NH_ID, so the
# nexthop objects (RTM_GETNEXTHOP) are needed to print gateway and device.
rk_nexthop() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" n0 "" n1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev n0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:2::1/64 dev n1 nodad || return 1
	_rk ip -n "$ns" -6 nexthop add id 1 via 2001:db8:1::2 dev n0 || return 1
	_rk ip -n "$ns" -6 nexthop add id 2 via 2001:db8:2::2 dev n1 || return 1
	_rk ip -n "$ns" -6 nexthop add id 3 dev n0 || return 1
	_rk ip -n "$ns" -6 nexthop add id 4 blackhole || return 1
	_rk ip -n "$ns" -6 nexthop add id 5 via fe80::99 dev n0 onlink || return 1
	# groups take no address family
	_rk ip -n "$ns" nexthop add id 10 group 1/2 || return 1
	_rk ip -n "$ns" nexthop add id 11 group 2,5/1,3 || return 1
	_rk ip -n "$ns" nexthop add id 12 group 5/1 type resilient buckets 8 || return 1
	_rk ip -n "$ns" nexthop add id 13 group 4 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:50::/64 nhid 1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:51::/64 nhid 10 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:52::/64 nhid 11 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:53::/64 nhid 3 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:54::/64 nhid 4 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:55::/64 nhid 5 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:56::/64 nhid 12 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:57::/64 nhid 13 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:58::/64 nhid 1 expires 3000 pref low || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:58::/64 nhid 2 metric 2000 || return 1
	_rk ip -n "$ns" -6 route add default nhid 10 table 200 || return 1
}

# rk_srcroute NS: source-specific routes (`from PREFIX`, the fib6 subtrees).
# proc and netlink: src and src_len columns filled; order: at each
# destination node the source routes (themselves walked post-order by source
# prefix, then metric) come BEFORE the node's left/right children and before
# the node's own source-less routes. So "::/0 from X" is the FIRST row of its
# table, and the table still gets a placeholder row when it has no
# source-less ::/0 route. `from ::/0` is an ordinary route (src_len 0).
rk_srcroute() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" r0 "" r1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev r0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100::/48 dev r0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100::/48 from 2001:db8:bb::/48 via 2001:db8:1::3 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100::/48 from 2001:db8:aa::/48 via 2001:db8:1::2 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100::/48 from 2001:db8:bb::/56 via 2001:db8:1::3 metric 5 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100::/48 from 2001:db8:bb::/56 dev r1 metric 6 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100:1::/64 dev r0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100:8000::/64 dev r0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:100:8000::/64 from 2001:db8:cc::/64 dev r1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:200::/48 from 2001:db8:cc::/48 dev r0 || return 1
	_rk ip -n "$ns" -6 route add unreachable 2001:db8:201::/48 from 2001:db8:dd::/48 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:300::/48 from ::/0 dev r0 || return 1
	_rk ip -n "$ns" -6 route add default from 2001:db8:dd::/48 via 2001:db8:1::4 || return 1
	_rk ip -n "$ns" -6 route add ::/1 from 2001:db8:ee::/48 via 2001:db8:1::4 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:400::/48 from 2001:db8:ff::/48 dev r0 table 100 || return 1
	_rk ip -n "$ns" -6 route add default from 2001:db8:ff::/48 dev r0 table 100 || return 1
	_rk ip -n "$ns" -6 route add default dev r0 table 101 || return 1
	_rk ip -n "$ns" -6 route add default from 2001:db8:ff::/48 dev r0 table 101 || return 1
}

# rk_pref NS: route preferences (RTA_PREF) high, medium, low on gateway and
# device routes, and for several routes of one prefix.
# proc: PREF bits 27-28: high 0x08000000, low 0x18000000, medium 0; i.e.
# flags |= RTA_PREF << 27. Reject routes drop the preference.
rk_pref() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" p0 "" p1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev p0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:400::/48 via 2001:db8:1::2 pref high || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:401::/48 via 2001:db8:1::2 pref low || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:402::/48 via 2001:db8:1::2 pref medium || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:403::/48 dev p1 pref high || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:404::/48 dev p1 pref low metric 1 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:404::/48 dev p0 pref high metric 2 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:404::/48 via 2001:db8:1::3 metric 3 || return 1
	_rk ip -n "$ns" -6 route add prohibit 2001:db8:405::/48 pref low || return 1
	_rk ip -n "$ns" -6 route add default via fe80::1 dev p0 pref low || return 1
}

# rk_expires NS: routes with a lifetime (RTF_EXPIRES, RTA_CACHEINFO
# rta_expires in USER_HZ ticks), with pref, on gateway and device routes,
# an infinite lifetime (no RTF_EXPIRES), and an overdue route (`expires 0`:
# rta_expires negative; the kernel keeps printing it until its GC runs, which
# rk_prep delays to 3600 s).
# proc: "00400001"/"00400003" (+ PREF bits); no column shows the time left.
rk_expires() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" e0 "" e1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev e0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:403::/48 dev e0 expires 600 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:404::/48 via 2001:db8:1::2 expires 1200 pref high || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:405::/48 via 2001:db8:1::2 expires 4294967295 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:406::/48 via 2001:db8:1::2 expires 0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:407::/48 via 2001:db8:1::2 expires 2000 metric 10 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:407::/48 dev e1 metric 20 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:408::/48 via 2001:db8:1::2 expires 900 table 100 || return 1
	_rk ip -n "$ns" -6 route add default via 2001:db8:1::3 expires 1800 || return 1
	# The "expires 0" route is due at once. A dump within the same USER_HZ tick (10 ms)
	# reports 0 ticks left, which netlink cannot tell from "no expiry" (rtsnapd would keep
	# it as permanent until its next snapshot, while later kernel dumps show it overdue).
	# Let that tick pass before anyone dumps.
	sleep 0.1
}

# _rk_radvd PEER CONF: start radvd inside PEER with config text CONF;
# registered for cleanup.
_rk_radvd() {
	local peer=$1 conf="$RTSNAP_TMP/radvd-$1.conf" pid
	printf '%s\n' "$2" >"$conf"
	ip netns exec "$peer" radvd -n -C "$conf" -p "$RTSNAP_TMP/radvd-$peer.pid" \
		-m logfile -l "$RTSNAP_TMP/radvd-$peer.log" </dev/null >/dev/null 2>&1 &
	pid=$!
	bg_register "$pid"
	sleep 0.2
	kill -0 "$pid" 2>/dev/null || { cat "$RTSNAP_TMP/radvd-$peer.log" >&2; return 1; }
}

# _rk_ra_link NS PEER: veth h0 (NS, host) <-> r0 (PEER, router) with the
# sysctls RA processing needs on the host side.
_rk_ra_link() {
	local ns=$1 peer=$2
	rk_prep "$ns"
	rk_prep "$peer"
	ip netns exec "$peer" sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	# forwarding=1 on the host too: RA routes are then only accepted with
	# accept_ra=2, which is what a router learning from an upstream uses.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.default.accept_ra=2 \
		net.ipv6.conf.default.accept_ra_rt_info_max_plen=64 \
		net.ipv6.conf.default.accept_ra_rtr_pref=1 || return 1
	veth_pair "$ns" h0 "$peer" r0
}

# rk_ra NS PEER: radvd in PEER advertises a default router (lifetime 600,
# preference high), an on-link autonomous prefix with finite lifetimes, an
# on-link non-autonomous prefix with infinite lifetime, an off-link
# autonomous prefix, and three route-information options; NS learns them.
# Waits (<= 20 s) until the RA routes are in NS's main table.
# proc (flags):
#   default router  ::/0 via fe80::..  08450003 UP|GATEWAY|DEFAULT|ADDRCONF|EXPIRES|PREF_HIGH
#   prefix (finite)                    004c0001 UP|ADDRCONF|PREFIX_RT|EXPIRES, metric 256
#   prefix (infinite)                  000c0001 UP|ADDRCONF|PREFIX_RT
#   route info (finite, low)           18c40003 UP|GATEWAY|ADDRCONF|EXPIRES|ROUTEINFO|PREF_LOW
#   route info (infinite)              00840003 UP|GATEWAY|ADDRCONF|ROUTEINFO
# netlink: prefix routes are proto kernel (ADDRCONF|PREFIX_RT only visible
# through an RTM_F_PREFIX dump); default and route-info routes are proto ra.
rk_ra() {
	local ns=$1 peer=$2
	_rk_ra_link "$ns" "$peer" || return 1
	_rk_radvd "$peer" 'interface r0 {
  AdvSendAdvert on;
  MinRtrAdvInterval 3;
  MaxRtrAdvInterval 4;
  AdvDefaultLifetime 600;
  AdvDefaultPreference high;
  prefix 2001:db8:a::/64 { AdvOnLink on; AdvAutonomous on; AdvValidLifetime 3600; AdvPreferredLifetime 1800; };
  prefix 2001:db8:b::/64 { AdvOnLink on; AdvAutonomous off; AdvValidLifetime infinity; AdvPreferredLifetime infinity; };
  prefix 2001:db8:e::/64 { AdvOnLink off; AdvAutonomous on; AdvValidLifetime 7200; AdvPreferredLifetime 7200; };
  route 2001:db8:c::/48 { AdvRoutePreference low; AdvRouteLifetime 900; };
  route 2001:db8:d::/64 { AdvRouteLifetime infinity; };
  route 2001:db8:f::/56 { AdvRoutePreference high; AdvRouteLifetime 1000; };
};' || return 1
	wait_until 20 _rk_have_routes "$ns" 'proto ra' 4 || {
		echo "routekinds: RA routes did not appear in $ns" >&2
		return 1
	}
	wait_until 5 _rk_have_routes "$ns" '2001:db8:[ab]::/64' 2
}

# rk_ra_rtinfo_default NS PEER: a route-information option for ::/0 from a
# router that is not a default router (router lifetime 0).
# proc: ::/0 "00c50003" UP|GATEWAY|DEFAULT|ADDRCONF|EXPIRES|ROUTEINFO; netlink
# shows the same as for an RA default router (proto ra, ::/0, expires), so
# RTF_ROUTEINFO cannot be told apart from netlink data.
rk_ra_rtinfo_default() {
	local ns=$1 peer=$2
	_rk_ra_link "$ns" "$peer" || return 1
	_rk_radvd "$peer" 'interface r0 {
  AdvSendAdvert on;
  MinRtrAdvInterval 3;
  MaxRtrAdvInterval 4;
  AdvDefaultLifetime 0;
  prefix 2001:db8:a::/64 { AdvOnLink on; AdvAutonomous on; };
  route ::/0 { AdvRouteLifetime 1200; };
  route 2001:db8:c::/48 { AdvRouteLifetime 900; };
};' || return 1
	wait_until 20 _rk_have_routes "$ns" 'proto ra' 2
}

# _rk_have_routes NS ERE N: at least N lines of `ip -6 route` in NS match ERE.
_rk_have_routes() {
	[ "$(ip -n "$1" -6 route show table all | grep -cE -- "$2")" -ge "$3" ]
}

# rk_table_prefix ID: the /80 rk_tables puts in table ID: 2001:db8:ab:LO:HI::/80
# where LO and HI are the low and high 16 bits of ID.
rk_table_prefix() {
	printf '2001:db8:ab:%x:%x::/80\n' $(($1 % 65536)) $(($1 / 65536))
}

# rk_tables NS: one /80 (rk_table_prefix) in each of the tables 1, 100, 252,
# 253, 256, 257, 300, 510, 511, 512, 768, 1000, 65536, 2^31-1 and 2^32-1,
# created in a mixed order, plus main and local; some with a ::/0 route.
# proc and dump: tables in fib_table_hash order: bucket id % 256 ascending,
# within a bucket newest table first (so 510, created after main, comes
# before main; local, created at namespace birth, is always last); a table
# without a source-less ::/0 route ends with the placeholder row.
rk_tables() {
	local ns=$1 t
	rk_prep "$ns"
	veth_pair "$ns" t0 "" t1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev t0 nodad || return 1
	for t in 257 1000 1 2147483647 511 100 256 768 4294967295 512 253 252 510 65536 300; do
		_rk ip -n "$ns" -6 route add "$(rk_table_prefix $t)" dev t0 table $t || return 1
	done
	_rk ip -n "$ns" -6 route add default via 2001:db8:1::2 table 100 || return 1
	_rk ip -n "$ns" -6 route add default via 2001:db8:1::2 table 1000 || return 1
	_rk ip -n "$ns" -6 route add unreachable default table 2147483647 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:ff::/64 dev t1 table 1 metric 5 || return 1
}

# rk_empty_tables NS: tables that exist but hold no route: one created by
# an `ip -6 rule ... table 300` (fib6_rules creates the table), one whose
# routes were all deleted (tables are never freed), next to non-empty ones.
# proc prints a lone placeholder row for each; the dump shows nothing. A
# strict per-table dump (RTA_TABLE) tells them apart from absent tables: it
# ends with NLMSG_DONE error 0, an absent table with -ENOENT.
rk_empty_tables() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" t0 "" t1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev t0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:64::/64 dev t0 table 100 || return 1
	_rk ip -n "$ns" -6 route add default via 2001:db8:1::2 table 100 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:65::/64 dev t0 table 101 || return 1
	_rk ip -n "$ns" -6 rule add from 2001:db8:77::/48 table 300 || return 1
	_rk ip -n "$ns" -6 route flush table 100 || return 1
}

# rk_devnames NS: interfaces whose names are 1 to 15 characters long, name
# number i (1..15) with a route 2001:db8:i::/64 and an address in
# 2001:db8:ai::/64 (i written in decimal digits).
# proc: the dev column is "%8s": names shorter than 8 are right-aligned in 8
# columns, longer names are printed in full (the line gets longer).
rk_devnames() {
	local ns=$1 name i=1
	rk_prep "$ns"
	for name in a ab abc abcd abcde abcdef abcdefg abcdefgh abcdefghi \
		abcdefghij abcdefghijk abcdefghijkl abcdefghijklm abcdefghijklmn \
		abcdefghijklmno; do
		veth_pair "$ns" "$name" "" "q$i" || return 1
		_rk ip -n "$ns" -6 route add "2001:db8:$i::/64" dev "$name" || return 1
		_rk ip -n "$ns" addr add "2001:db8:a$i::1/64" dev "$name" nodad || return 1
		i=$((i + 1))
	done
	# characters other than letters are allowed too
	veth_pair "$ns" v.1-2_x "" q99 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:99::/64 dev v.1-2_x
}

# rk_linkdown NS: routes over a device without carrier (its veth peer is
# down), a multipath route with one nexthop without carrier, a device taken
# administratively down (its routes vanish; a multipath route keeps the
# nexthop as dead), and the connected routes of the carrier-less device.
# proc: flags unchanged ("00000001"/"00000003"); netlink: RTNH_F_LINKDOWN
# (0x10) in rtm_flags / rtnh_flags, RTNH_F_DEAD (0x1) for dead nexthops.
rk_linkdown() {
	local ns=$1
	rk_prep "$ns"
	veth_pair "$ns" up0 "" up1 || return 1
	veth_pair "$ns" nc0 "" nc1 || return 1
	veth_pair "$ns" dn0 "" dn1 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev up0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:22::1/64 dev nc0 nodad || return 1
	_rk ip -n "$ns" addr add 2001:db8:31::1/64 dev dn0 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:20::/64 dev nc0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:21::/64 via fe80::1 dev nc0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:30::/64 dev dn0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:40::/64 \
		nexthop via fe80::1 dev nc0 nexthop via fe80::2 dev up0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:41::/64 \
		nexthop via fe80::1 dev dn0 nexthop via fe80::2 dev up0 nexthop via fe80::3 dev nc0 || return 1
	_rk ip -n "$ns" link set dev nc1 down || return 1
	_rk ip -n "$ns" link set dev dn0 down || return 1
}

# rk_pmtu NS PEER: NS sends a 1400-byte datagram through router PEER onto a
# 1280-byte link; PEER answers Packet Too Big and NS caches a PMTU exception
# (`ip -6 route show cache`, RTM_F_CLONED). Waits (<= 10 s) for it.
# proc never prints exceptions; a non-strict dump (libnl's default) DOES
# return them, inline after their parent route, with RTM_F_CLONED (0x200) in
# rtm_flags and an RTA_CACHEINFO expiry; a strict dump returns them only
# when RTM_F_CLONED is requested (and then nothing else).
rk_pmtu() {
	local ns=$1 peer=$2
	rk_prep "$ns"
	rk_prep "$peer"
	ip netns exec "$peer" sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	veth_pair "$ns" a0 "$peer" r0 || return 1
	veth_pair "$peer" r1 "" r2 || return 1
	_rk ip -n "$peer" link set dev r1 mtu 1280 || return 1
	_rk ip -n "$ns" addr add 2001:db8:1::1/64 dev a0 nodad || return 1
	_rk ip -n "$peer" addr add 2001:db8:1::2/64 dev r0 nodad || return 1
	_rk ip -n "$peer" addr add 2001:db8:2::1/64 dev r1 nodad || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:2::/64 via 2001:db8:1::2 || return 1
	wait_until 10 _rk_send_big "$ns" 2001:db8:2::2
}

# _rk_send_big NS ADDR: send one 1400-byte UDP datagram to ADDR port 9, then
# succeed if NS has a cached route for ADDR.
_rk_send_big() {
	ip netns exec "$1" bash -c "printf '%1400s' x >/dev/udp/$2/9" 2>/dev/null
	sleep 0.2
	ip -n "$1" -6 route show cache | grep -q "^$2 "
}

# rk_bpf_obj DIR: compile a BPF object with one trivial program per LWT hook (sections
# lwt_in, lwt_out, lwt_xmit, lwt_seg6local) into DIR/lwt.o for `encap bpf` and End.BPF.
# Fails when clang cannot target BPF.
rk_bpf_obj() {
	cat >"$1/lwt.c" <<'BPF'
#include <linux/bpf.h>
#define SEC(x) __attribute__((section(x), used))
SEC("lwt_in") int do_in(struct __sk_buff *skb) { return BPF_OK; }
SEC("lwt_out") int do_out(struct __sk_buff *skb) { return BPF_OK; }
SEC("lwt_xmit") int do_xmit(struct __sk_buff *skb) { return BPF_OK; }
SEC("lwt_seg6local") int do_end(struct __sk_buff *skb) { return BPF_OK; }
char _license[] SEC("license") = "GPL";
BPF
	command -v clang >/dev/null 2>&1 &&
		clang -O2 -target bpf -I/usr/include/"$(uname -m)"-linux-gnu -c "$1/lwt.c" \
			-o "$1/lwt.o" 2>/dev/null
}

# rk_encap NS [BPFOBJ]: lightweight tunnel encapsulations this kernel accepts on IPv6 routes
# (docs/kernel-facts.md §11): seg6 in every mode, with HMAC, inline (whose SRH gets a
# reserved first segment); seg6local actions with their attributes (nh4, nh6, table, oif,
# srh with and without HMAC, counters, flavors, BPF endpoint); ip6 and ip tunnels with keys,
# flags and vxlan/erspan options; bpf (with BPFOBJ); per multipath nexthop; on nexthop
# objects (single and in a group); reject, local and anycast routes with an encap (a reject
# route drops it); on the loopback device (proc: a reject line).
# proc: like the same route without its encapsulation. ip -j: "encap" and the type's keys
# after "nhid" (before "gateway") or first in a nexthop; ip and ip6 tunnels print their own
# "src"/"dst", so the route's object has "dst" twice.
#
# A kernel without segment routing tunnels (CONFIG_IPV6_SEG6_LWTUNNEL not set: "lwt
# encapsulation type not supported") gets the same routes with an ip6 tunnel to the first
# segment instead of each seg6 encapsulation (distinct, so siblings stay apart), an ip6 tunnel
# instead of seg6local on the routes that are not SIDs, and no SIDs (rk_seg6_ok).
rk_encap() {
	local ns=$1 obj=${2:-} r seg6=1
	rk_prep "$ns"
	veth_pair "$ns" e0 "" e1 || return 1
	_rk ip -n "$ns" -6 addr add 2001:db8:1::1/64 dev e0 nodad || return 1
	rk_seg6_ok "$ns" || seg6=0
	while read -r r; do
		[ -n "$r" ] || continue
		if [ "$seg6" = 0 ]; then
			case $r in *"add fc00::"*) continue ;; esac
			r=$(sed -E -e 's/encap seg6 mode [^ ]+ segs ([^ ,]+)[^ ]*( hmac [0-9]+)?/encap ip6 dst \1/' \
				-e 's/encap seg6local action End /encap ip6 dst 2001:db8:1::8 /' <<<"$r")
		fi
		# shellcheck disable=SC2086
		_rk ip -n "$ns" -6 $r || return 1
	done <<'ROUTES'
route add 2001:db8:60::/64 encap seg6 mode encap segs fc00::1 dev e0
route add 2001:db8:60::1/128 encap seg6 mode inline segs fc00::1,fc00::2 dev e0
route add 2001:db8:60::2/128 encap seg6 mode l2encap segs fc00::1 dev e0
route add 2001:db8:60::3/128 encap seg6 mode encap.red segs fc00::1,fc00::2 dev e0
route add 2001:db8:60::4/128 encap seg6 mode l2encap.red segs fc00::1 dev e0
route add 2001:db8:60::5/128 encap seg6 mode encap segs fc00::1,fc00::5 hmac 7 dev e0
route add 2001:db8:60::6/128 encap seg6 mode inline segs fc00::1 hmac 0 dev e0
route add 2001:db8:61::/64 encap ip6 dst 2001:db8:1::9 dev e0
route add 2001:db8:61::1/128 encap ip6 id 77 src 2001:db8:1::1 dst 2001:db8:1::9 hoplimit 9 tc 3 key csum seq dev e0
route add 2001:db8:61::2/128 encap ip6 id 18446744073709551615 dst 2001:db8:1::9 vxlan_opts 77 dev e0
route add 2001:db8:61::3/128 encap ip6 dst 2001:db8:1::9 erspan_opts 1:12:0:0 dev e0
route add 2001:db8:61::4/128 encap ip6 dst 2001:db8:1::9 erspan_opts 2:0:1:7 dev e0
route add 2001:db8:62::/64 encap ip id 5 src 10.0.0.1 dst 10.0.0.2 ttl 4 tos 3 key dev e0
route add 2001:db8:62::1/128 encap ip dst 10.0.0.2 csum dev e0
route add fc00::e/128 encap seg6local action End dev e0
route add fc00::e1/128 encap seg6local action End.X nh6 2001:db8:1::2 dev e0
route add fc00::e2/128 encap seg6local action End.T table 100 dev e0
route add fc00::e3/128 encap seg6local action End.DX6 nh6 2001:db8:1::2 dev e0
route add fc00::e4/128 encap seg6local action End.DX4 nh4 10.0.0.2 dev e0
route add fc00::e5/128 encap seg6local action End.DT6 table main dev e0
route add fc00::e8/128 encap seg6local action End.B6 srh segs fc00::1,fc00::2 dev e0
route add fc00::e9/128 encap seg6local action End.B6.Encaps srh segs fc00::1 dev e0
route add fc00::ea/128 encap seg6local action End.B6.Encaps srh segs fc00::1 hmac 9 dev e0
route add fc00::eb/128 encap seg6local action End.DX2 oif e1 dev e0
route add fc00::ec/128 encap seg6local action End count dev e0
route add fc00::ed/128 encap seg6local action End flavors psp dev e0
route add fc00::ee/128 encap seg6local action End flavors next-csid lblen 32 nflen 16 dev e0
route add fc00::ef/128 encap seg6local action End.X nh6 2001:db8:1::2 flavors next-csid dev e0
route add fc00::f0/128 encap seg6local action End dev lo
route add 2001:db8:63::/64 encap seg6 mode encap segs fc00::1 dev lo
route add 2001:db8:64::/64 nexthop encap seg6 mode encap segs fc00::1 via 2001:db8:1::2 dev e0 nexthop via 2001:db8:1::3 dev e0 nexthop encap ip6 dst 2001:db8:1::9 via 2001:db8:1::4 dev e0 weight 3
route add 2001:db8:65::/64 encap seg6 mode encap segs fc00::1 via 2001:db8:1::2 dev e0
route append 2001:db8:65::/64 via 2001:db8:1::2 dev e0
route append 2001:db8:65::/64 encap seg6 mode encap segs fc00::2 via 2001:db8:1::2 dev e0
route add 2001:db8:66::/64 encap seg6local action End dev e0
route append 2001:db8:66::/64 dev e0
route add unreachable 2001:db8:67::/64 encap seg6 mode encap segs fc00::1
route add local 2001:db8:68::1 encap seg6local action End dev e0
route add anycast 2001:db8:68::2 encap seg6local action End dev e0 table main
nexthop add id 1 encap seg6 mode encap segs fc00::7 via 2001:db8:1::2 dev e0
nexthop add id 2 via 2001:db8:1::3 dev e0
nexthop add id 4 encap seg6local action End dev e0
nexthop add id 5 encap ip6 dst 2001:db8:1::9 dev e0
route add 2001:db8:69::/64 nhid 1
route add 2001:db8:6a::/64 nhid 4
route add 2001:db8:6b::/64 nhid 5
ROUTES
	_rk ip -n "$ns" nexthop add id 3 group 1/2 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:6c::/64 nhid 3 || return 1
	[ -n "$obj" ] || return 0
	_rk ip -n "$ns" -6 route add 2001:db8:6d::/64 encap bpf in obj "$obj" sec lwt_in dev e0 || return 1
	_rk ip -n "$ns" -6 route add 2001:db8:6d::1/128 encap bpf in obj "$obj" sec lwt_in \
		out obj "$obj" sec lwt_out xmit obj "$obj" sec lwt_xmit headroom 32 dev e0 || return 1
	[ "$seg6" = 1 ] || return 0
	_rk ip -n "$ns" -6 route add fc00::f1/128 encap seg6local action End.BPF endpoint \
		obj "$obj" sec lwt_seg6local dev e0
}

# rk_seg6_ok NS: whether this kernel takes seg6 encapsulations on IPv6 routes (a probe route
# on NS's loopback, removed again).
rk_seg6_ok() {
	ip -n "$1" -6 route add 2001:db8:ffff:ffff::/64 encap seg6 mode encap segs fc00::1 \
		dev lo 2>/dev/null || return 1
	ip -n "$1" -6 route del 2001:db8:ffff:ffff::/64
}
