#!/bin/bash
# inet_kinds.t - IPv4: every route kind this kernel accepts (tests/lib/routekinds4.sh rk4_all),
# recorded live in fresh namespaces (build/tools/nlrec4 dump: the route dump with the kernel's
# /proc/net/route and `ip -j -4 route show table all` of the same moment) and replayed by
# build/tests/test_replay4 through nlparse4, order4 and the IPv4 renderers, which must produce
# both texts byte for byte and the dump's order. So the kernel this runs on stays the truth,
# not the recording in tests/data/inet-kinds. States: the kinds; the same after a device went
# down, an address and a nexthop object were removed (silent flushes); a random table of
# prefixes sharing addresses, TOS and metrics, built by add, prepend, append and replace.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds4.sh"

require_root
require_cmd ip
[ -x "$TOP/build/tools/nlrec4" ] && [ -x "$TOP/build/tests/test_replay4" ] ||
	tap_skip_all "build/tools/nlrec4 or build/tests/test_replay4 missing (make all)"

replay() { # DIR WHAT
	local out
	if out=$("$TOP/build/tests/test_replay4" "$1" 2>&1); then
		tap_ok 0 "$2: proc text, JSON and order are the kernel's"
		printf '%s\n' "$out" | grep '^# ' | sed 's/^/  /' >&2
	else
		tap_ok 1 "$2: proc text, JSON and order are the kernel's"
		printf '%s\n' "$out" | sed 's/^/# /' >&2
	fi
}

ns_new NS
rk4_all "$NS"
tap_ok $? "build every IPv4 route kind in $NS" || tap_done
sleep 1
ip netns exec "$NS" "$TOP/build/tools/nlrec4" dump "$RTSNAP_TMP/kinds"
tap_ok $? "record the kinds" && replay "$RTSNAP_TMP/kinds" "kinds"

ip -n "$NS" link set dev v1 down &&
	ip -n "$NS" addr del 10.0.0.9/24 dev v0 &&
	ip -n "$NS" nexthop del id 1 &&
	ip -n "$NS" link set dev v3p down
tap_ok $? "device down, carrier lost, an address and a nexthop object removed"
sleep 1
ip netns exec "$NS" "$TOP/build/tools/nlrec4" dump "$RTSNAP_TMP/flushed"
tap_ok $? "record after the flushes" && replay "$RTSNAP_TMP/flushed" "after the flushes"

# A random table: few addresses, many prefix lengths, TOS values and metrics, so that leaves
# hold many aliases and groups form; every command may fail (EEXIST, ESRCH): -force.
ns_new NR
veth_pair "$NR" r0 "" r0p && veth_pair "$NR" r1 "" r1p &&
	ip -n "$NR" addr add 10.0.0.1/16 dev r0 && ip -n "$NR" addr add 10.1.0.1/16 dev r1
tap_ok $? "namespace for the random table"
RANDOM=4242
batch=$RTSNAP_TMP/batch
: >"$batch"
for ((i = 0; i < 3000; i++)); do
	a=$((RANDOM % 4 * 64)) b=$((RANDOM % 3)) len=$((RANDOM % 33))
	case $((RANDOM % 8)) in
	0 | 1 | 2) op=add ;; 3) op=prepend ;; 4) op=append ;; 5) op=replace ;; *) op=del ;;
	esac
	tos=$((RANDOM % 3 * 16)) metric=$((RANDOM % 3))
	case $((RANDOM % 5)) in
	0) via="dev r0" ;; 1) via="dev r1" ;; 2) via="via 10.0.$((RANDOM % 4)).2" ;;
	3) via="nexthop via 10.0.0.2 nexthop via 10.1.0.$((RANDOM % 3 + 2))" ;; *) via="via 10.1.0.9" ;;
	esac
	# the prefix: address 198.18.A.B masked to len (the kernel refuses host bits)
	addr=$(((198 << 24 | 18 << 16 | a << 8 | b) & (len ? 0xffffffff << (32 - len) & 0xffffffff : 0)))
	pfx=$((addr >> 24)).$((addr >> 16 & 255)).$((addr >> 8 & 255)).$((addr & 255))/$len
	echo "route $op $pfx tos $tos metric $metric $via" >>"$batch"
done
ip -n "$NR" -force -batch "$batch" 2>/dev/null
tap_is "$(ip -n "$NR" -4 route show table main | wc -l | awk '{print ($1 > 100)}')" 1 \
	"the random table holds more than 100 lines"
sleep 1
ip netns exec "$NR" "$TOP/build/tools/nlrec4" dump "$RTSNAP_TMP/random"
tap_ok $? "record the random table" && replay "$RTSNAP_TMP/random" "random table"
tap_done
