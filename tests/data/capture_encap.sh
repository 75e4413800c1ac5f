#!/bin/bash
# Re-record tests/data/encap/: like capture.sh, for the lightweight tunnel encapsulations of
# tests/lib/routekinds.sh rk_encap (every kind this kernel accepts, the BPF ones when clang can
# build a BPF object). test_replay renders them and compares with the kernel's proc.txt and,
# byte for byte, with ip.json. Run as root from the top, after `make all`.
set -e
out=${1:-tests/data/encap}
. tests/lib/common.sh
. tests/lib/routekinds.sh
mkdir -p "$out"
ns_new ns
obj=
rk_bpf_obj "$RTSNAP_TMP" && obj=$RTSNAP_TMP/lwt.o
rk_encap "$ns" $obj
sleep 1
ip netns exec "$ns" build/tools/nlcapture "$out"
ip netns exec "$ns" cat /proc/net/ipv6_route >"$out/proc.txt"
ip netns exec "$ns" ip -j -6 route show table all >"$out/ip.json"
# nothing moved meanwhile
ip netns exec "$ns" cat /proc/net/ipv6_route | cmp -s - "$out/proc.txt"
echo "recorded $(wc -l <"$out/proc.txt") proc lines into $out${obj:+ (with BPF)}"
