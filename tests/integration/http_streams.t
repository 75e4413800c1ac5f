#!/bin/bash
# Streams have their own budget: with --max-connections 32, /events streams are capped at a
# quarter (8 per listener, --max-streams' default); 40 clients open streams one after the
# other: the oldest are told to resync (reason "evicted") and end, at most 8 stay open, and
# /healthz, /metrics and /routes keep being answered 200 (before, streams took every slot and
# short requests got 503). When the clients hang up, their streams end at once (the socket is
# watched), not at their next heartbeat (--stream-heartbeat 30): the time is compared with the
# heartbeat, not asserted alone. Under `ulimit -n 64` (one connection slot) /events is refused
# and /healthz still answered.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl python3
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "$NS" v1 || tap_bail "cannot create a veth pair"
daemon_start "$NS" --max-connections 32 --stream-heartbeat 30 || tap_bail "daemon did not start"

metric() {
	ip netns exec "$NS" curl -sg --max-time 5 "$RTSNAP_URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

pids=()
for i in $(seq 40); do
	ip netns exec "$NS" curl -sgN --max-time 60 "$RTSNAP_URL/events" >"$RTSNAP_TMP/s$i" 2>/dev/null &
	pids+=($!)
	bg_register $!
	sleep 0.05
done
wait_true 10 '[ "$(metric rtsnap_event_streams)" -le 8 ] && [ "$(metric "rtsnap_event_streams_dropped_total{reason=\"evicted\"}")" -ge 32 ]'
open=$(metric rtsnap_event_streams)
evicted=$(metric 'rtsnap_event_streams_dropped_total{reason="evicted"}')
tap_ok "$([ "$open" -le 8 ] && echo 0 || echo 1)" "40 clients, --max-connections 32: $open streams open (at most a quarter)"
tap_is "$evicted" 32 "the 32 oldest were evicted"
told=$(grep -l '"reason":"evicted"' "$RTSNAP_TMP"/s* | wc -l)
tap_is "$told" 32 "... each told so with a resync event first"
bad=0
for i in $(seq 10); do
	for p in /healthz /metrics /routes; do
		c=$(ip netns exec "$NS" curl -sg --max-time 5 -o /dev/null -w '%{http_code}' "$RTSNAP_URL$p")
		[ "$c" = 200 ] || bad=$((bad + 1))
	done
done
tap_is "$bad" 0 "with the streams at their cap, 30 short requests are all answered 200"

# the clients hang up: their slots come back at once
kill "${pids[@]}" 2>/dev/null
t0=$(date +%s.%N)
wait_true 10 '[ "$(metric rtsnap_event_streams)" = 0 ]'
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
tap_ok "$(awk -v s="$secs" 'BEGIN { exit !(s < 30 / 10) }' && echo 0 || echo 1)" \
	"the hung-up streams ended after $secs s, less than a tenth of their heartbeat (30 s)"
tap_ok "$([ "$(metric rtsnap_event_stream_hangups_total)" -ge 8 ] && echo 0 || echo 1)" "... counted as hang-ups"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"

# one file descriptor budget for a single slot: no stream may take it
ip netns exec "$NS" bash -c 'ulimit -n 64; exec "$0" --listen "$1" --log-level debug' "$RTSNAPD" \
	"$RTSNAP_LISTEN" >"$RTSNAP_TMP/small.log" 2>&1 </dev/null &
small=$!
bg_register $small
wait_until 10 ip netns exec "$NS" curl -sgf --max-time 1 "$RTSNAP_URL/healthz" -o /dev/null
c=$(ip netns exec "$NS" curl -sg --max-time 5 -o /dev/null -w '%{http_code}' "$RTSNAP_URL/events")
tap_is "$c" 503 "ulimit -n 64 (one connection slot): /events is refused"
c=$(ip netns exec "$NS" curl -sg --max-time 5 -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")
tap_is "$c" 200 "... and /healthz answered"
kill -TERM $small
wait $small
tap_is "$?" 0 "that rtsnapd exits 0"
tap_done
