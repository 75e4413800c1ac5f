#!/bin/bash
# inet_daemon_random.t - the running daemon's IPv4 instance against the kernel under 5 000
# random operations in 50 batches (the generator of capture_inet_notify.sh bulk, another
# seed): routes of every placement, TOS and metric, multipath, IPv6 gateways, nexthop objects
# and groups (replaced, deleted, flushed with their device), links down and up, carriers lost
# and back, addresses added and removed (a device's last one included). After each batch the
# served /route and /routes?family=inet must equal the kernel's /proc/net/route and
# `ip -j -4 route show table all` (read again while the kernel or the daemon still move, a
# bounded number of times); at the end a SIGHUP resync must find no drift.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl cmp
require_rtsnapd

ns_new NS
ip netns exec "$NS" sysctl -qw net.ipv4.nexthop_compat_mode=1 net.ipv6.conf.all.accept_dad=0 \
	net.ipv6.conf.default.accept_dad=0
for i in 0 1 2; do
	veth_pair "$NS" "v$i" "" "v${i}p" && ip -n "$NS" addr add "10.$i.0.1/24" dev "v$i" || break
done
tap_ok $? "three devices with addresses in $NS" || tap_done
daemon_start "$NS" --family all
tap_ok $? "rtsnapd --family all starts" || tap_done

# same NS: 0 when the served IPv4 views equal the kernel's, read before and after them
same() {
	local ns=$1 p="$RTSNAP_TMP/r"
	ip netns exec "$ns" cat /proc/net/route >"$p.kp1"
	ip netns exec "$ns" ip -j -4 route show table all >"$p.kj1"
	http_get "$ns" /route >"$p.dp" || return 1
	http_get "$ns" "/routes?family=inet" >"$p.dj" || return 1
	ip netns exec "$ns" cat /proc/net/route >"$p.kp"
	ip netns exec "$ns" ip -j -4 route show table all >"$p.kj"
	cmp -s "$p.kp1" "$p.kp" && cmp -s "$p.kj1" "$p.kj" && cmp -s "$p.kp" "$p.dp" &&
		cmp -s "$p.kj" "$p.dj"
}

RANDOM=${SEED:-4242}
bad=0 ops=0
for ((b = 0; b < 50; b++)); do
	for ((i = 0; i < 100; i++)); do
		a=$((RANDOM % 4)) len=$((RANDOM % 4 * 8 + 8)) tos=0x$((RANDOM % 2))0
		metric=$((RANDOM % 3)) id=$((RANDOM % 4 + 1))
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
	done >"$RTSNAP_TMP/batch"
	ops=$((ops + 100))
	# a batch goes on past its failing commands (EEXIST, ESRCH, ENETUNREACH)
	ip -n "$NS" -force -batch "$RTSNAP_TMP/batch" >/dev/null 2>&1
	if ! wait_until 10 same "$NS"; then
		bad=$((bad + 1))
		[ "$bad" = 1 ] && tap_diag "batch $b differs:" "$(diff "$RTSNAP_TMP/r.kp" "$RTSNAP_TMP/r.dp" | head -n 20)" \
			"$(diff <(tr '{' '\n' <"$RTSNAP_TMP/r.kj") <(tr '{' '\n' <"$RTSNAP_TMP/r.dj") | head -n 20)" \
			"--- batch:" "$(cat "$RTSNAP_TMP/batch")"
	fi
done
tap_is "$bad" 0 "$ops random operations in 50 batches: the served IPv4 views equal the kernel's after each"
tap_diag "main table at the end: $(($(wc -l <"$RTSNAP_TMP/r.kp") - 1)) routes in /proc/net/route"

log=$(daemon_log "$NS")
before=$(grep -c 'IPv4: resync (signal): merged;' "$log")
kill -HUP "${_daemon_pid[$NS]}"
wait_true 10 '[ "$(grep -c "IPv4: resync (signal): merged;" "'"$log"'")" -gt '"$before"' ]'
tap_ok $? "SIGHUP resyncs the IPv4 instance"
tap_is "$(grep -c 'differed from the kernel' "$log")" 0 "no resync found drift"
tap_is "$(grep -c 'IPv4: resync.*postponed' "$log")" 0 "the resync was not postponed"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits cleanly"
tap_done
