#!/bin/bash
# events_slow.t - a client that stops reading its /events stream is told to resync and
# dropped once it is --stream-queue bytes (64k here) behind, without delaying publications
# (the publication counter keeps the pace it had before the client stalled) and without
# growing rtsnapd's memory beyond its bounds (--history-bytes 2M; a stream holds no more than
# the event it is sending). A normal client following at the same time is not dropped and
# sees every change. Bounded in time; traffic stays inside the test's namespace.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq python3
require_rtsnapd
SSE="$TOP/tests/lib/sse.py"
T=$RTSNAP_TMP
PHASE=${SLOW_SECONDS:-6}

ns_new NS
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
for i in $(seq 1 200); do echo "route add 2001:db8:ff:$i::/64 via 2001:db8:1::2"; done | ip -6 -n "$NS" -batch -
daemon_start "$NS" --interval 0 --stream-queue 64k --history-bytes 2M || tap_bail "rtsnapd did not start"
PID=${_daemon_pid[$NS]}

get() { # PATH FILE: body into FILE, generation on stdout
	http_get "$NS" "$1" -D "$T/hdr" >"$2" || return 1
	tr -d '\r' <"$T/hdr" | awk -F'"' 'tolower($1) ~ /^etag: /{ print $2 }'
}
metric() { http_get "$NS" /metrics | awk -v m="$1" '$1 == m { print $2 }'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status"; }
# churn SECONDS: 40 routes added and 40 deleted every 50 ms (an event of about 8 KB)
churn() {
	local end=$((SECONDS + $1)) k=${2:-0}
	while [ $SECONDS -lt $end ] && [ $k -lt 100000 ]; do
		k=$((k + 1))
		{
			for j in $(seq 0 39); do echo "route add 2001:db8:c$((k % 2)):$j::/64 via 2001:db8:1::2"; done
			for j in $(seq 0 39); do echo "route del 2001:db8:c$(((k + 1) % 2)):$j::/64"; done
		} | ip -6 -n "$NS" -force -batch - 2>/dev/null
		sleep 0.05
	done
}

G0=$(get /routes "$T/r0.json")
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?since=$G0" "$T/f" --seconds 120 --stop "$T/stop" &
F=$!
bg_register $F
wait_until 10 grep -q '"type": "open"' "$T/f"

# phase A: the pace with a reading client only
p0=$(metric rtsnap_publications_total)
churn "$PHASE" 0
p1=$(metric rtsnap_publications_total)
rss0=$(rss_kb)
tap_diag "phase A: $((p1 - p0)) publications in $PHASE s, VmRSS $rss0 kB"

# phase B: the same with a client that stopped reading
ip netns exec "$NS" python3 "$SSE" stall "$RTSNAP_URL/events" $((PHASE * 3)) &
S=$!
bg_register $S
wait_true 5 'test "$(metric rtsnap_event_streams)" = 2'
tap_is "$(metric rtsnap_event_streams)" 2 "the stalled client's stream is open"
( while :; do rss_kb; sleep 0.25; done >"$T/rss" ) &
M=$!
bg_register $M
churn "$PHASE" 1000
p2=$(metric rtsnap_publications_total)
kill $M
rssmax=$(sort -n "$T/rss" | tail -n1)
tap_diag "phase B: $((p2 - p1)) publications in $PHASE s, VmRSS at most $rssmax kB"
tap_ok "$([ $((p2 - p1)) -ge $(((p1 - p0) * 7 / 10)) ]; echo $?)" \
	"publications keep their pace with a stalled stream ($((p2 - p1)) against $((p1 - p0)))"
tap_ok "$([ "$(metric 'rtsnap_event_streams_dropped_total{reason="slow"}')" -ge 1 ]; echo $?)" \
	"the stalled stream was dropped (rtsnap_event_streams_dropped_total{reason=\"slow\"})"
tap_ok "$(wait_true 5 'test "$(metric rtsnap_event_streams)" = 1'; echo $?)" \
	"only the reading client's stream is left"
tap_ok "$(grep -q '/events: a stream at generation .* bytes behind' "$(daemon_log "$NS")"; echo $?)" \
	"the drop is logged"
# memory: the history (2M) and what libmicrohttpd and the kernel buffer, nothing per event
tap_ok "$([ "$rssmax" -le $((rss0 + 2048 + 16384)) ]; echo $?)" \
	"VmRSS stays within the history bound plus 16 MB ($rssmax kB, $rss0 kB before)"
hb=$(metric rtsnap_events_history_bytes)
tap_ok "$([ "$hb" -le $((2 * 1024 * 1024)) ]; echo $?)" "rtsnap_events_history_bytes $hb <= --history-bytes"

# the reading client saw everything
Gf=$(get /routes "$T/r1.json")
tap_ok "$(wait_until 20 grep -q "\"id\": \"$Gf\"" "$T/f"; echo $?)" "the reading client received generation $Gf"
touch "$T/stop"
wait $F
python3 "$SSE" norm "$T/r1.json" >"$T/want"
python3 "$SSE" apply "$T/r0.json" "$T/f" "$T/got" --from "$G0" --to "$Gf" 2>"$T/err"
tap_ok $? "the reading client: every event applies, no resync, no gap ($(cat "$T/err"))"
tap_diff "$T/want" "$T/got" "the reading client's /routes + events = final /routes"
wait $S
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
