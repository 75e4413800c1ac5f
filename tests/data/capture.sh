#!/bin/bash
# Re-record tests/data/mixed/: raw netlink dumps (build/tools/nlcapture) plus the kernel's own
# /proc/net/ipv6_route and `ip -j -6 route show table all`, taken together in one namespace
# holding a mix of route kinds. The unit test test_replay replays the dumps through nlparse,
# snapshot and the renderers and compares with the kernel's files. Run as root from the top.
set -eu
out=${1:-tests/data/mixed}
ns=rtsnap-capture-$$
mkdir -p "$out"
ip netns add $ns
trap 'ip netns del $ns' EXIT
n() { ip -n $ns "$@"; }
n link set lo up
n link add v0 type veth peer name a-fifteen-chars
n link add dummy0 type veth peer name dpeer
for d in v0 a-fifteen-chars dummy0 dpeer; do n link set $d up; done
n addr add 2001:db8:1::1/64 dev v0 nodad
n addr add 2001:db8:2::1/64 dev dummy0 nodad
n addr add 2001:db8:3::1/64 dev a-fifteen-chars nodad
n -6 route add 2001:db8:10::/48 via 2001:db8:1::2
n -6 route add 2001:db8:10::/48 via 2001:db8:1::3 metric 200
n -6 route add 2001:db8:11::/64 dev dummy0 metric 5
n -6 route add 2001:db8:12::1 via 2001:db8:1::2 mtu 1400 hoplimit 10
n -6 route add 2001:db8:13::/64 via 2001:db8:99::1 dev v0 onlink
n -6 route add 2001:db8:14::/64 pref high via 2001:db8:1::2
n -6 route add 2001:db8:15::/64 pref low dev dummy0
n -6 route add unreachable 2001:db8:20::/48
n -6 route add blackhole 2001:db8:21::/48
n -6 route add prohibit 2001:db8:22::/48
n -6 route add throw 2001:db8:23::/48
n -6 route add 2001:db8:24::/48 dev lo
n -6 route add 2001:db8:30::/48 nexthop via 2001:db8:1::2 weight 1 nexthop via 2001:db8:1::3 weight 3 nexthop via 2001:db8:2::9 dev dummy0
n -6 route add 2001:db8:40::/64 from 2001:db8:1::/64 via 2001:db8:1::2
n -6 route add default via 2001:db8:1::1:1 dev v0 metric 10
n -6 route add 2001:db8:50::/64 via 2001:db8:1::2 table 100
n -6 route add default via 2001:db8:1::2 table 100
n -6 route add 2001:db8:51::/64 dev dummy0 table 356 proto static
n -6 route add 2001:db8:52::/64 dev dummy0 table 2147483647 proto 99
n -6 route add 2001:db8:53::/64 dev dummy0 table 1000 expires 3600
sleep 1
ip netns exec $ns build/tools/nlcapture "$out"
ip netns exec $ns cat /proc/net/ipv6_route > "$out/proc.txt"
ip netns exec $ns ip -j -6 route show table all > "$out/ip.json"
echo "recorded $(wc -l < "$out/proc.txt") proc lines into $out"
