#!/bin/bash
# A storm on a small table: while rtsnapd runs on 2 000 routes, two `ip -batch` add 30 000
# routes each, in parallel, as fast as the kernel takes them (a bulk load, a BGP session coming
# up). Following them would cost more than one dump of the result, so the collector gives up
# once more than a quarter of its mirror's routes wait in the socket (a "storm", counted apart
# from the kernel's overruns), stops listening until the storm pauses, and resyncs. Either way
# it must then serve exactly what the kernel has: /routes equal to `ip -j -6 route show table
# all`, /ipv6_route equal to the kernel's file, and a SIGHUP resync afterwards finds no drift.
# Bounded: 3 batches.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
require_root
require_cmd ip curl jq awk
require_rtsnapd
N=${STORM_ROUTES:-30000} # per batch

tap_plan 8
ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
for ((i = 0; i < 2000; i++)); do
	printf 'route add 2001:db8:%x:%x::/64 via 2001:db8:1::2\n' $((0x100 + i / 256)) $((i % 256))
done | ip -6 -n "$NS" -batch - || tap_bail "could not add the first 2 000 routes"
for t in 10 11; do
	awk -v n="$N" -v t="$t" 'BEGIN {
		for (k = 0; k < n; k++)
			printf "route add 2001:db8:%x:%x::/64 dev v1 table %d\n", 0x1000 * (t - 9) + int(k / 65536), k % 65536, t
	}' >"$RTSNAP_TMP/batch-$t"
done

st() { http_get "$NS" /status | jq -r "$1"; }
daemon_start "$NS" || tap_bail "daemon did not start"
wait_true 30 'test "$(st .routes)" -ge 2000'
PID=${_daemon_pid[$NS]}

ip -6 -n "$NS" -batch "$RTSNAP_TMP/batch-10" 2>"$RTSNAP_TMP/err-10" &
a=$!
ip -6 -n "$NS" -batch "$RTSNAP_TMP/batch-11" 2>"$RTSNAP_TMP/err-11" &
b=$!
wait $a
ra=$?
wait $b
rb=$?
[ $ra = 0 ] && [ $rb = 0 ]
tap_ok $? "the kernel took $((2 * N)) adds in two parallel batches while rtsnapd ran" ||
	tap_diag "$(head -n 5 "$RTSNAP_TMP/err-10" "$RTSNAP_TMP/err-11")"

want=$(ip -n "$NS" -6 route show table all | wc -l)
wait_true 60 'test "$(st .routes)" = "$want"'
tap_is "$(st .routes)" "$want" "rtsnapd serves as many routes as the kernel lists ($want)"
storms=$(st .collector.notification_storms)
ov=$(st .collector.notification_overruns)
tap_diag "storms given up on: $storms; overruns: $ov; full dumps: $(st '.collector.full_dumps | tostring')"
if [ "$storms" -ge 1 ]; then
	tap_ok 0 "the collector gave up following the storm ($storms times) instead of applying it"
	[ "$(st '.collector.full_dumps.resync // 0')" -ge 1 ]
	tap_ok $? "a resync followed the storm"
else
	# the collector kept up with the writers (a fast machine): the checks below still
	# hold, for the ordinary path
	tap_skip "the collector kept up: no storm to give up on"
	tap_skip "no storm, so no resync for it"
fi

json_compare "$NS" "GET /routes equals ip -j -6 route show table all after the storm" \
	http_get "$NS" /routes
http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/ours"
kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/kernel"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/ours" "/ipv6_route equals the kernel's file after the storm"

d0=$(st .collector.resync_drift_routes)
s0=$(st '.collector.full_dumps.signal // 0')
kill -HUP "$PID"
wait_true 60 'test "$(st ".collector.full_dumps.signal // 0")" -gt "$s0"'
tap_is "$(($(st .collector.resync_drift_routes) - d0))" 0 \
	"a SIGHUP resync afterwards finds no drift between the mirror and the kernel"
daemon_stop "$NS"
tap_done
