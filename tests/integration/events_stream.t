#!/bin/bash
# events_stream.t - /events follows the kernel exactly. Two clients follow the stream (one
# with since=, one filtered on table=100 with Last-Event-ID) while a script adds, replaces,
# appends to and deletes routes in the namespace, with expiring and reject routes, a link
# losing its carrier, a rename (every route on the device prints differently), a device
# deleted (the kernel flushes its routes) and a SIGHUP (a publication with no change).
# Applying every event in order to the first /routes each client read reproduces the final
# /routes exactly (objects compared without "expires"), with no gap and no resync, and that
# final /routes equals `ip -j -6 route show table all`. /changes?since= gives the same net
# change in one document; heartbeats arrive on an idle stream; the streams are counted in
# /metrics. Bounded in time; traffic stays inside the test's namespace.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
require_root
require_cmd ip curl jq python3
require_rtsnapd
SSE="$TOP/tests/lib/sse.py"
T=$RTSNAP_TMP

ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
veth_pair "$NS" w0 "$NS" w1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev w0 nodad
{
	for i in $(seq 1 60); do echo "route add 2001:db8:a0:$i::/64 via 2001:db8:1::2"; done
	for i in $(seq 1 30); do echo "route add 2001:db8:b0:$i::/64 dev v1 table 100"; done
	for i in $(seq 1 10); do echo "route add 2001:db8:c0:$i::/64 via 2001:db8:2::2 table 100"; done
	echo "route add 2001:db8:d0::/48 nexthop via 2001:db8:1::3 nexthop via 2001:db8:2::3"
	echo "route add unreachable 2001:db8:e0::/48"
} | ip -6 -n "$NS" -batch - || tap_bail "cannot set up the routes"

daemon_start "$NS" --interval 0 --stream-heartbeat 1 || tap_bail "rtsnapd did not start"

# get PATH FILE: the body into FILE, the generation (ETag) on stdout
get() {
	http_get "$NS" "$1" -D "$T/hdr" >"$2" || return 1
	tr -d '\r' <"$T/hdr" | awk -F'"' 'tolower($1) ~ /^etag: /{ print $2 }'
}

# the first state and the followers
G0=$(get /routes "$T/r0.json")
G0f=$(get '/routes?table=100' "$T/r0f.json")
tap_ok "$([ -n "$G0" ] && [ "$G0" = "$G0f" ]; echo $?)" "first /routes read at generation $G0"
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?since=$G0" "$T/f1" --seconds 90 --stop "$T/stop" &
F1=$!
bg_register $F1
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?table=100" "$T/f2" --last-event-id "$G0" \
	--seconds 90 --stop "$T/stop" &
F2=$!
bg_register $F2
wait_until 10 grep -q '"type": "open"' "$T/f1"
wait_until 10 grep -q '"type": "open"' "$T/f2"
tap_is "$(head -n1 "$T/f1" | jq -r '.status, .headers["content-type"]' | paste -sd' ')" "200 text/event-stream" \
	"GET /events: 200, text/event-stream"
streams=$(http_get "$NS" /metrics | awk '$1 == "rtsnap_event_streams" { print $2 }')
tap_is "$streams" 2 "rtsnap_event_streams counts the two streams"

# the churn: every kind of change the kernel announces (or not)
churn() {
	local k
	for k in $(seq 1 6); do
		{
			for i in $(seq 1 8); do echo "route add 2001:db8:f$k:$i::/64 via 2001:db8:1::2 table $((k % 2 ? 254 : 100))"; done
			for i in $(seq $((k * 5)) $((k * 5 + 4))); do echo "route replace 2001:db8:a0:$i::/64 via 2001:db8:1::9"; done
			for i in $((k * 2)) $((k * 2 + 1)); do echo "route append 2001:db8:c0:$i::/64 via 2001:db8:2::7 table 100"; done
			for i in $((k * 3)) $((k * 3 + 1)); do echo "route del 2001:db8:b0:$i::/64 table 100"; done
		} | ip -6 -n "$NS" -batch - 2>>"$T/churn.err"
		sleep 0.1
	done
	ip -n "$NS" -6 route add 2001:db8:e1::/64 dev v0 expires 300
	ip -n "$NS" -6 route add blackhole 2001:db8:e2::/64 table 100
	sleep 0.1
	ip -n "$NS" -6 route replace 2001:db8:e1::/64 dev v0 expires 900 # the deadline moved
	ip -n "$NS" -6 route replace 2001:db8:d0::/48 nexthop via 2001:db8:1::4 nexthop via 2001:db8:2::4 weight 3
	sleep 0.1
	ip -n "$NS" link set w1 down # routes over w0 become linkdown, without a route message
	sleep 0.3
	ip -n "$NS" link set v1 down
	ip -n "$NS" link set v1 name v1renamed
	ip -n "$NS" link set v1renamed up
	sleep 0.3
	kill -HUP "${_daemon_pid[$NS]}" # a generation with no change
	sleep 0.3
	ip -n "$NS" -6 route del 2001:db8:a0:1::/64
	ip -n "$NS" link del w0 # the kernel flushes every route over w0
	sleep 0.2
	for i in $(seq 1 5); do echo "route add 2001:db8:f9:$i::/64 dev v0 metric $((100 + i))"; done | ip -6 -n "$NS" -batch -
}
churn
# wait until the daemon has caught up with the kernel
json_compare "$NS" "the final /routes equals ip -j -6 route show table all" http_get "$NS" /routes
# a heartbeat on the idle stream: within a second or two of the last event (the fan-out
# thread looks every second)
wait_until 5 sh -c "[ \$(grep -c '\"type\": \"comment\"' '$T/f1') -ge 2 ]"
Gf=$(get /routes "$T/r1.json")
get '/routes?table=100' "$T/r1f.json" >/dev/null
tap_ok "$(wait_until 20 grep -q "\"id\": \"$Gf\"" "$T/f1"; echo $?)" "follower 1 received generation $Gf"
tap_ok "$(wait_until 20 grep -q "\"id\": \"$Gf\"" "$T/f2"; echo $?)" "the filtered follower received generation $Gf"
touch "$T/stop"
wait $F1 $F2

# the checks
python3 "$SSE" norm "$T/r1.json" >"$T/want"
python3 "$SSE" apply "$T/r0.json" "$T/f1" "$T/got" --from "$G0" --to "$Gf" 2>"$T/apply1.err"
tap_ok $? "every event applies: no gap, no resync, every removed route was there ($(cat "$T/apply1.err"))" ||
	tap_diag "$(cat "$T/apply1.err")"
tap_diff "$T/want" "$T/got" "first /routes + every event = final /routes"
n1=$(jq -s '[.[] | select(.type == "message")] | length' "$T/f1")
tap_ok "$([ "$n1" -ge $((Gf - G0)) ]; echo $?)" "one event per publication: $n1 events for generations $G0..$Gf"
tap_is "$(jq -s -c '[.[] | select(.type == "message") | .data.generation] | . as $g | [range(1; length) | select($g[.] != $g[. - 1] + 1)] | length' "$T/f1")" 0 \
	"ids are consecutive"
tap_is "$(jq -s '[.[] | select(.type == "message" and (.data.added | length) == 0 and (.data.removed | length) == 0)] | length > 0' "$T/f1")" true \
	"the SIGHUP publication is an event with nothing added or removed"
tap_is "$(jq -s '[.[] | select(.type == "message") | .data | select((.added + .removed) | map(.dev) | index("v1renamed"))] | length > 0' "$T/f1")" true \
	"the rename shows as the device's routes removed and added under the new name"
tap_is "$(jq -s '[.[] | select(.type == "message") | .data | select(any(.removed[]; .dst == "2001:db8:e1::/64" and .expires <= 300)
	and any(.added[]; .dst == "2001:db8:e1::/64" and .expires > 800))] | length' "$T/f1")" 1 \
	"an expiring route whose deadline moved is a change (removed with the old expires, added with the new)"
tap_ok "$(jq -s -e '[.[] | select(.type == "comment")] | length >= 2' "$T/f1" >/dev/null; echo $?)" \
	"heartbeat comments on the idle stream"

python3 "$SSE" norm "$T/r1f.json" >"$T/wantf"
python3 "$SSE" apply "$T/r0f.json" "$T/f2" "$T/gotf" --from "$G0" --to "$Gf" 2>"$T/apply2.err"
tap_ok $? "filtered stream: every event applies ($(cat "$T/apply2.err"))"
tap_diff "$T/wantf" "$T/gotf" "first /routes?table=100 + every filtered event = final /routes?table=100"
tap_is "$(jq -s '[.[] | select(.type == "message") | .data | (.added + .removed)[] | select(.table != "100")] | length' "$T/f2")" 0 \
	"the filtered stream sees only routes of table 100"
tap_is "$(jq -s '[.[] | select(.type == "message")] | length' "$T/f2")" "$n1" \
	"the filtered stream gets an event for every publication too"

get "/changes?since=$G0" "$T/ch.json" >/dev/null
tap_ok $? "GET /changes?since=$G0"
python3 "$SSE" apply "$T/r0.json" "$T/ch.json" "$T/gotc" --changes 2>/dev/null
tap_diff "$T/want" "$T/gotc" "first /routes + /changes?since=$G0 = final /routes"
tap_is "$(jq -c '[.generation >= '"$Gf"', .previous]' "$T/ch.json")" "[true,$G0]" "/changes names the generations it spans"
get "/changes?since=$G0&table=100" "$T/chf.json" >/dev/null
python3 "$SSE" apply "$T/r0f.json" "$T/chf.json" "$T/gotcf" --changes 2>/dev/null
tap_diff "$T/wantf" "$T/gotcf" "filtered /changes: table 100 only"
tap_is "$(http_get "$NS" "/changes?since=$Gf" | jq -c '[.added, .removed]')" "[[],[]]" "/changes since the newest: nothing"
tap_ok "$(http_get "$NS" /metrics | awk '$1 == "rtsnap_event_stream_bytes_total" && $2 > 0 { ok = 1 } END { exit !ok }'; echo $?)" \
	"rtsnap_event_stream_bytes_total counts what the streams sent"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
