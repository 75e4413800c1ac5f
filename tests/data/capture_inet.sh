#!/bin/bash
# Re-record tests/data/inet-kinds/: every IPv4 route kind of tests/lib/routekinds4.sh rk4_all
# in one namespace, recorded by build/tools/nlrec4 (links, nexthop objects and routes as raw
# netlink dumps, with the kernel's /proc/net/route and `ip -j -4 route show table all` of the
# same moment). test_replay4 replays them. Run as root from the top, after `make all`.
set -e
out=${1:-tests/data/inet-kinds}
. tests/lib/common.sh
. tests/lib/routekinds4.sh
mkdir -p "$out"
ns_new ns
rk4_all "$ns"
sleep 1
ip netns exec "$ns" build/tools/nlrec4 dump "$out"
echo "recorded $(($(wc -l <"$out/proc.txt") - 1)) proc lines into $out"
