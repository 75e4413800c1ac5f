#!/bin/bash
# events_resume.t - a client that reconnects with Last-Event-ID gets every change it missed
# while the history (--history 16 here) reaches back, and a resync event (re-read /routes,
# and from which generation) when it does not: never a silent gap. A generation never
# published (a restarted daemon) is a resync too. /changes?since= answers 410 Gone with the
# current generation outside the history, 400 on bad arguments (JSON errors like every other
# endpoint). A web configuration reload (SIGHUP) ends the open streams, which resume on the
# new configuration without a gap. Bounded in time; traffic stays inside the namespace.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq python3
require_rtsnapd
SSE="$TOP/tests/lib/sse.py"
T=$RTSNAP_TMP

ns_new NS
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
for i in $(seq 1 20); do echo "route add 2001:db8:a0:$i::/64 via 2001:db8:1::2"; done | ip -6 -n "$NS" -batch -
ns_settle "$NS"
printf 'http_server_config:\n  headers:\n    X-Frame-Options: one\n' >"$T/web.yml"
daemon_start "$NS" --interval 0 --history 16 --web-config-file "$T/web.yml" || tap_bail "rtsnapd did not start"

get() { # PATH FILE: body into FILE, generation on stdout
	http_get "$NS" "$1" -D "$T/hdr" >"$2" || return 1
	tr -d '\r' <"$T/hdr" | awk -F'"' 'tolower($1) ~ /^etag: /{ print $2 }'
}
gen() { http_get "$NS" /status | jq .generation; }
# change N: N publications, one route added each (waits for each to be published)
change() {
	local n=$1 g i
	for i in $(seq 1 "$n"); do
		g=$(gen)
		K=$((K + 1))
		ip -n "$NS" -6 route add "2001:db8:b0:$K::/64" via 2001:db8:1::2
		wait_true 5 'test "$(gen)" -gt "$g"'
	done
}
follow() { # OUT ARGS...: follow until the current generation is received
	local out=$1 until
	shift
	until=$(gen)
	ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events" "$out" --seconds 20 \
		--until-gen "$until" "$@"
}
K=0

G0=$(get /routes "$T/r0.json")
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?since=$G0" "$T/f1" --seconds 30 \
	--until-gen $((G0 + 3)) &
F=$!
bg_register $F
wait_until 10 grep -q '"type": "open"' "$T/f1"
change 3
wait $F
Gc=$(jq -r 'select(.type == "message") | .id' "$T/f1" | tail -n1)
tap_is "$Gc" $((G0 + 3)) "the first connection followed to generation $((G0 + 3))"

# inside the window: every change since Last-Event-ID, then the new ones
change 5
follow "$T/f2" --last-event-id "$Gc"
tap_is "$(jq -s -c '[.[] | select(.type == "message")][0].data.previous' "$T/f2")" "$Gc" \
	"Last-Event-ID $Gc inside the history: the stream resumes right after it"
tap_is "$(jq -s '[.[] | select(.type == "resync")] | length' "$T/f2")" 0 "no resync inside the history"
cat "$T/f1" "$T/f2" >"$T/f12"
Gn=$(get /routes "$T/r1.json")
python3 "$SSE" norm "$T/r1.json" >"$T/want"
python3 "$SSE" apply "$T/r0.json" "$T/f12" "$T/got" --from "$G0" --to "$Gn" 2>"$T/err"
tap_ok $? "both connections' events apply without a gap ($(cat "$T/err"))"
tap_diff "$T/want" "$T/got" "first /routes + the events of both connections = /routes now"

# outside the window: a resync event naming the generation to re-read from
Gold=$Gn
change 20
Gnow=$(gen)
follow "$T/f3" --last-event-id "$Gold"
first=$(jq -s -c '[.[] | select(.type == "message" or .type == "resync")][0] | [.type, .id, .data.reason]' "$T/f3")
tap_is "$first" '["resync",null,"history"]' \
	"Last-Event-ID $Gold, older than the 16 generations kept: a resync event first (no id)"
R=$(jq -s '[.[] | select(.type == "resync")][0].data.generation' "$T/f3")
Gafter=$(gen)
tap_ok "$([ "$R" -ge $((Gnow - 1)) ] && [ "$R" -le "$Gafter" ]; echo $?)" \
	"the resync names the generation to re-read /routes from ($R, newest $Gnow before, $Gafter after)"
G2=$(get /routes "$T/r2.json")
tap_ok "$([ "$G2" -ge "$R" ]; echo $?)" "/routes read after the resync is at generation $G2 >= $R"
# the stream goes on after the resync: re-read, then apply what follows
change 2
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events" "$T/f4" --seconds 20 \
	--last-event-id "$G2" --until-gen "$(gen)"
Gl=$(get /routes "$T/r3.json")
python3 "$SSE" norm "$T/r3.json" >"$T/want3"
python3 "$SSE" apply "$T/r2.json" "$T/f4" "$T/got3" --from "$G2" --to "$Gl" 2>"$T/err"
tap_ok $? "after re-reading, the events apply from there ($(cat "$T/err"))"
tap_diff "$T/want3" "$T/got3" "re-read /routes + the events since = /routes now"

# a generation never published here (rtsnapd restarted)
follow "$T/f5" --last-event-id 999999
tap_is "$(jq -s -c '[.[] | select(.type == "resync")][0].data.reason' "$T/f5")" '"unknown"' \
	"Last-Event-ID 999999 (never published): a resync event, reason unknown"
follow "$T/f6" --last-event-id garbage
tap_is "$(jq -s -c '[.[] | select(.type == "resync")][0].data.reason' "$T/f6")" '"unknown"' \
	"Last-Event-ID that is not a generation: a resync event"

# /changes outside the history: 410 with the current generation
code=$(ip netns exec "$NS" curl -sg -o "$T/gone" -w '%{http_code} %{content_type}' "$RTSNAP_URL/changes?since=$G0")
tap_is "$code" "410 application/json" "/changes?since=$G0 (older than the history): 410 Gone, JSON"
tap_is "$(jq -c '[(.error | type), .generation]' "$T/gone")" "[\"string\",$(gen)]" \
	"the 410 names the current generation"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/changes?since=999999")" 410 \
	"/changes?since= a generation never published: 410"
tap_is "$(http_get "$NS" "/changes?since=$((Gl - 2))" | jq -c '[.previous, (.added | length)]')" "[$((Gl - 2)),2]" \
	"/changes inside the history: the two routes added since"
for q in "" "since=abc" "since=-1" "since=1&limit=5" "since=1&bogus=1" "since=1&since=2"; do
	code=$(ip netns exec "$NS" curl -sg -o "$T/bad" -w '%{http_code}' "$RTSNAP_URL/changes?$q")
	tap_is "$code $(jq -r '.error | type' "$T/bad" 2>/dev/null)" "400 string" "/changes?$q: 400 with a JSON error"
done
code=$(ip netns exec "$NS" curl -sg -o "$T/bad" -w '%{http_code}' "$RTSNAP_URL/events?since=x")
tap_is "$code $(jq -r '.error | type' "$T/bad" 2>/dev/null)" "400 string" "/events?since=x: 400 with a JSON error"

# a web configuration reload ends the streams; they resume on the new one without a gap
G5=$(get /routes "$T/r5.json")
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?since=$G5" "$T/f7" --seconds 20 &
F=$!
bg_register $F
wait_until 10 grep -q '"type": "open"' "$T/f7"
tap_is "$(head -n1 "$T/f7" | jq -r '.headers["x-frame-options"]')" one "the stream is served with the first configuration"
printf 'http_server_config:\n  headers:\n    X-Frame-Options: two\n' >"$T/web.yml"
kill -HUP "${_daemon_pid[$NS]}"
tap_ok "$(wait_until 10 grep -q '"type": "end"' "$T/f7"; echo $?)" "SIGHUP with a new web configuration ends the open stream"
wait $F
last=$(jq -r 'select(.type == "message") | .id' "$T/f7" | tail -n1)
change 1
follow "$T/f8" --last-event-id "${last:-$G5}"
tap_is "$(head -n1 "$T/f8" | jq -r '.headers["x-frame-options"]')" two "the client reconnects to the new configuration"
cat "$T/f7" "$T/f8" >"$T/f78"
G6=$(get /routes "$T/r6.json")
python3 "$SSE" norm "$T/r6.json" >"$T/want6"
python3 "$SSE" apply "$T/r5.json" "$T/f78" "$T/got6" --from "$G5" --to "$G6" 2>"$T/err"
tap_ok $? "no gap across the reload ($(cat "$T/err"))"
tap_diff "$T/want6" "$T/got6" "the events before and after the reload apply to /routes now"
resyncs=$(http_get "$NS" /metrics | awk '$1 ~ /^rtsnap_event_resyncs_total/ { s = s " " $1 "=" $2 } END { print s }')
tap_diag "metrics:$resyncs"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
