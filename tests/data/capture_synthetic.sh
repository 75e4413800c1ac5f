#!/bin/bash
# Re-record tests/data/synthetic/: NOT a kernel recording. The route messages in routes.nl are
# made by synthetic_routes.py: encapsulations the test kernel cannot hold (mpls, rpl, ioam6,
# xfrm, ila, unknown types) and values it refuses. ip.json is what Debian's own `ip -j -6 route
# show table all` prints for them, reading routes.nl instead of the kernel's dump
# (LD_PRELOAD=fakedump.so); links.nl and prefix.nl are a real namespace's, where ip ran.
# test_replay renders routes.nl and compares with ip.json byte for byte. Run as root from the
# top, after `make all`.
set -e
out=${1:-tests/data/synthetic}
. tests/lib/common.sh
mkdir -p "$out"
ns_new ns
veth_pair "$ns" s0 "" s1
cc -shared -fPIC -o "$RTSNAP_TMP/fakedump.so" tests/data/fakedump.c -ldl
ip netns exec "$ns" build/tools/nlcapture "$RTSNAP_TMP"
cp "$RTSNAP_TMP/links.nl" "$RTSNAP_TMP/prefix.nl" "$out/"
python3 tests/data/synthetic_routes.py "$out/routes.nl" "$(ip netns exec "$ns" cat /sys/class/net/s0/ifindex)"
ip netns exec "$ns" env LD_PRELOAD="$RTSNAP_TMP/fakedump.so" RTSNAP_FAKE_DUMP="$out/routes.nl" \
	ip -j -6 route show table all >"$out/ip.json"
echo "recorded $(grep -o '"dst":"2001' "$out/ip.json" | wc -l) synthetic routes into $out"
