#!/bin/bash
# inet_once.t - `rtsnapd --once` for IPv4: --format proc4 and json4 (and --family inet with proc
# and json, and --family all) against what the kernel prints in the same namespace at the
# same moment: /proc/net/route byte for byte (header and padding included) and
# `ip -j -4 route show table all` byte for byte. Cases: every IPv4 route kind this kernel
# accepts (tests/lib/routekinds4.sh rk4_all); the same after the silent flushes (device down,
# carrier lost, an address and a nexthop object removed); namespaces without a main table
# (no header) and with an empty one (the header alone); a random
# table built by add, prepend, append and replace (groups, TOS, metrics); 20 000 routes (the
# output is written in pieces). net-tools: `route -n`, `route -ne` and `netstat -rn` print the
# same reading rtsnapd's text as reading the kernel's file. And the options' errors.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds4.sh"

require_root
require_cmd ip unshare mount cmp
require_rtsnapd

# once4 NS ARGS...: rtsnapd --once ARGS in NS
once4() {
	local ns=$1
	shift
	ip netns exec "$ns" "$RTSNAPD" --once "$@"
}

# check4 NS WHAT: proc4, json4, --family inet (proc, json) against the kernel's texts, each
# read before and after rtsnapd's; a kernel that changed meanwhile is sampled again.
check4() {
	local ns=$1 what=$2 d="$RTSNAP_TMP/c4" i
	for i in 1 2 3 4 5; do
		ip netns exec "$ns" cat /proc/net/route >"$d.kp1"
		ip netns exec "$ns" ip -j -4 route show table all >"$d.kj1"
		once4 "$ns" --format proc4 >"$d.p4" 2>"$d.err"
		once4 "$ns" --format json4 >"$d.j4" 2>>"$d.err"
		once4 "$ns" --family inet >"$d.pf" 2>>"$d.err"
		once4 "$ns" --family inet --format json >"$d.jf" 2>>"$d.err"
		ip netns exec "$ns" cat /proc/net/route >"$d.kp"
		ip netns exec "$ns" ip -j -4 route show table all >"$d.kj"
		cmp -s "$d.kp1" "$d.kp" && cmp -s "$d.kj1" "$d.kj" && break
		sleep 0.5
	done
	tap_diff "$d.kp" "$d.p4" "$what: --format proc4 is the kernel's /proc/net/route"
	tap_diff "$d.kj" "$d.j4" "$what: --format json4 is ip -j -4 route show table all"
	tap_diff "$d.kp" "$d.pf" "$what: --family inet --format proc is the same"
	tap_diff "$d.kj" "$d.jf" "$what: --family inet --format json is the same"
	[ -s "$d.err" ] && tap_diag "rtsnapd stderr:" "$(head -n 20 "$d.err")"
	return 0
}

# check_all NS WHAT: --family all: /proc/net/route then /proc/net/ipv6_route (refcnt masked in
# the IPv6 part); JSON: one array, ip -j -4's objects then ip -j -6's.
check_all() {
	local ns=$1 what=$2 d="$RTSNAP_TMP/ca" i n4
	for i in 1 2 3 4 5; do
		{ ip netns exec "$ns" cat /proc/net/route; kernel_proc "$ns" | proc_masked; } >"$d.kp1"
		{ ip netns exec "$ns" ip -j -4 route show table all; kernel_json "$ns"; } >"$d.kj1"
		once4 "$ns" --family all >"$d.p" 2>"$d.err"
		once4 "$ns" --family all --format json >"$d.j" 2>>"$d.err"
		{ ip netns exec "$ns" cat /proc/net/route; kernel_proc "$ns" | proc_masked; } >"$d.kp"
		{ ip netns exec "$ns" ip -j -4 route show table all; kernel_json "$ns"; } >"$d.kj"
		cmp -s "$d.kp1" "$d.kp" && cmp -s "$d.kj1" "$d.kj" && break
		sleep 0.5
	done
	n4=$(ip netns exec "$ns" cat /proc/net/route | wc -l)
	{ head -n "$n4" "$d.p"; tail -n +"$((n4 + 1))" "$d.p" | proc_masked; } >"$d.pm"
	tap_diff "$d.kp" "$d.pm" "$what: --family all is /proc/net/route, then /proc/net/ipv6_route"
	# the kernel's two arrays joined: "[a,b]\n" + "[c]\n" -> "[a,b,c]\n"
	python3 - "$d.kj" >"$d.kjm" <<'EOF'
import sys
v4, v6 = open(sys.argv[1]).read().split("\n")[:2]
a, b = v4[1:-1], v6[1:-1]
sys.stdout.write("[" + a + ("," if a and b else "") + b + "]\n")
EOF
	tap_diff "$d.kjm" "$d.j" "$what: --family all --format json is ip -j -4's objects, then ip -j -6's"
	return 0
}

# nettools NS WHAT: route -n, route -ne and netstat -rn read /proc/net/route only: each runs
# once over the kernel's file and once over rtsnapd's, in a mount namespace where a tmpfs on
# /proc holds nothing but net/route (a bind mount over /proc/PID/net/route does not hold: proc
# revalidates those entries and the file read stays the kernel's). Their outputs must agree;
# and over the kernel's file copied so, they print what they print over the real /proc.
nettools() {
	local ns=$1 what=$2 d="$RTSNAP_TMP/nt" cmd
	ip netns exec "$ns" cat /proc/net/route >"$d.k"
	once4 "$ns" --format proc4 >"$d.r" 2>/dev/null
	for cmd in "route -n" "route -ne" "netstat -rn"; do
		ip netns exec "$ns" $cmd >"$d.real" 2>&1
		ip netns exec "$ns" unshare -m sh -c \
			'mount -t tmpfs rtsnapt /proc && mkdir /proc/net && cp "$1" /proc/net/route &&
			 exec '"$cmd" sh "$d.k" >"$d.ok" 2>&1
		ip netns exec "$ns" unshare -m sh -c \
			'mount -t tmpfs rtsnapt /proc && mkdir /proc/net && cp "$1" /proc/net/route &&
			 exec '"$cmd" sh "$d.r" >"$d.or" 2>&1
		tap_diff "$d.real" "$d.ok" "$what: $cmd over a copy of the kernel's file prints what it prints over /proc"
		tap_diff "$d.ok" "$d.or" "$what: $cmd prints the same over rtsnapd's text ($(($(wc -l <"$d.or") - 2)) routes)"
	done
}

have_nettools=1
command -v route >/dev/null && command -v netstat >/dev/null || have_nettools=0

ns_new NS
rk4_all "$NS"
tap_ok $? "build every IPv4 route kind in $NS" || tap_done
sleep 1 # carrier and DAD settle
check4 "$NS" "kinds"
check_all "$NS" "kinds"
if [ "$have_nettools" = 1 ]; then
	nettools "$NS" "kinds"
else
	tap_skip "net-tools (route, netstat) not installed"
fi

ip -n "$NS" link set dev v1 down &&
	ip -n "$NS" addr del 10.0.0.9/24 dev v0 &&
	ip -n "$NS" nexthop del id 1 &&
	ip -n "$NS" link set dev v3p down &&
	ip -n "$NS" addr flush dev a-fifteen-chars
tap_ok $? "device down, carrier lost, addresses and a nexthop object removed"
sleep 1
check4 "$NS" "after the flushes"
[ "$have_nettools" = 1 ] && nettools "$NS" "after the flushes"

# no IPv4 route at all: lo down, nothing else
ip netns add "rtsnapt-$$-empty" && _ns_list+=("rtsnapt-$$-empty")
check4 "rtsnapt-$$-empty" "a namespace without routes"
tap_is "$(once4 "rtsnapt-$$-empty" --format json4)" "[]" "no routes: json4 prints []"
tap_is "$(once4 "rtsnapt-$$-empty" --format proc4 | wc -c)" 0 \
	"no main table: /proc/net/route is empty, without its header"
# routes in table 100 only: still no main table; then main emptied: the header alone
veth_pair "rtsnapt-$$-empty" e0 "" e0p && ip -n "rtsnapt-$$-empty" route add 10.0.0.0/8 dev e0 table 100
check4 "rtsnapt-$$-empty" "routes in table 100 only"
ip -n "rtsnapt-$$-empty" route add 10.0.0.0/8 dev e0 && ip -n "rtsnapt-$$-empty" route del 10.0.0.0/8 dev e0
check4 "rtsnapt-$$-empty" "the main table emptied"
tap_is "$(once4 "rtsnapt-$$-empty" --format proc4 | wc -l)" 1 "an empty main table: the header alone"

# A random table: few addresses, many prefix lengths, TOS values and metrics, so that leaves
# hold many aliases and groups form; every command may fail (EEXIST, ESRCH): -force.
ns_new NR
veth_pair "$NR" r0 "" r0p && veth_pair "$NR" r1 "" r1p &&
	ip -n "$NR" addr add 10.0.0.1/16 dev r0 && ip -n "$NR" addr add 10.1.0.1/16 dev r1
tap_ok $? "namespace for the random table"
RANDOM=2525
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
	addr=$(((198 << 24 | 18 << 16 | a << 8 | b) & (len ? 0xffffffff << (32 - len) & 0xffffffff : 0)))
	pfx=$((addr >> 24)).$((addr >> 16 & 255)).$((addr >> 8 & 255)).$((addr & 255))/$len
	echo "route $op $pfx tos $tos metric $metric $via" >>"$batch"
done
ip -n "$NR" -force -batch "$batch" 2>/dev/null
tap_is "$(ip -n "$NR" -4 route show table main | wc -l | awk '{print ($1 > 100)}')" 1 \
	"the random table holds more than 100 lines"
check4 "$NR" "random table"

# 20 000 routes in two tables: more text than one write
ns_new NL
veth_pair "$NL" l0 "" l0p && ip -n "$NL" addr add 10.0.0.1/16 dev l0
for ((i = 0; i < 20000; i++)); do
	echo "route add 172.$((16 + i / 65536 % 16)).$((i / 256 % 256)).$((i % 256))/32 via 10.0.$((i % 7)).2 table $((i % 2 ? 254 : 300)) metric $((i % 5))"
done >"$RTSNAP_TMP/large"
ip -n "$NL" -batch "$RTSNAP_TMP/large"
tap_ok $? "20 000 routes in main and table 300"
check4 "$NL" "20 000 routes"
[ "$have_nettools" = 1 ] && nettools "$NL" "20 000 routes"

# the options
once4 "$NS" --format proc4 --family inet6 >/dev/null 2>&1
tap_is "$?" 2 "--format proc4 with --family inet6 is refused"
once4 "$NS" --family inet4 >/dev/null 2>&1
tap_is "$?" 2 "--family takes inet6, inet or all only"
timeout 10 "$RTSNAPD" --family inet --proc-file "$RTSNAP_TMP/x" --listen "127.0.0.1:1" >/dev/null 2>&1
tap_is "$?" 2 "the daemon refuses --proc-file (IPv6's text) with --family inet (IPv4 alone)"
tap_is "$(once4 "$NS" | head -c 200 | md5sum)" "$(once4 "$NS" --family inet6 | head -c 200 | md5sum)" \
	"--once without --family prints IPv6, as before"
tap_done
