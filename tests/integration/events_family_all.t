#!/bin/bash
# events_family_all.t - /events and /changes with family=all (rtsnapd --family all): one
# stream, one answer, carrying both families' changes. IPv4 and IPv6 routes are added,
# replaced and deleted interleaved (each change waits for its family's publication); the
# merged stream reports every change of both families in the order they were made, each
# event naming its family, its id the cursor 4.G4-6.G6 after it. A client cut off in the
# middle resumes with Last-Event-ID (or since=) and loses and repeats nothing: the first
# /routes of each family plus the events of both connections equal /routes now.
# /changes?family=all gives each family's net change. A cursor older than the history is a
# resync event of that family on a stream and 410 on /changes; a malformed one a resync
# (Last-Event-ID) or 400 (since=), JSON errors. A stream beyond --max-streams evicts a
# family=all stream (a resync per family); one that stops reading is dropped once its lag in
# both histories together passes --stream-queue. Single-family streams keep their format. Without
# --family all, family=all is 404 as on /routes. Bounded in time; traffic stays inside the
# namespace. Run it on the sanitizer build with RTSNAPD=build/asan/rtsnapd.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq python3
require_rtsnapd
SSE="$TOP/tests/lib/sse.py"
T=$RTSNAP_TMP

ns_new NS
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 10.0.0.1/24 dev v0
ns_settle "$NS"
daemon_start "$NS" --interval 0 --family all --history 32 --max-streams 1 ||
	tap_bail "rtsnapd did not start"

get() { # PATH FILE: body into FILE, generation (ETag) on stdout
	http_get "$NS" "$1" -D "$T/hdr" >"$2" || return 1
	tr -d '\r' <"$T/hdr" | awk -F'"' 'tolower($1) ~ /^etag: /{ print $2 }'
}
gen4() { get "/routes?family=inet" "$T/g4"; }
gen6() { get /routes "$T/g6"; }
cursor() { echo "4.$(gen4)-6.$(gen6)"; }
# ch4 WHAT... / ch6 WHAT...: one ip command on the family, then wait for its publication
ch4() {
	local g
	g=$(gen4)
	ip -n "$NS" -4 route "$@" || tap_diag "ip -4 route $* failed"
	wait_true 5 'test "$(gen4)" -gt "'"$g"'"' || tap_diag "no IPv4 publication after: $*"
}
ch6() {
	local g
	g=$(gen6)
	ip -n "$NS" -6 route "$@" || tap_diag "ip -6 route $* failed"
	wait_true 5 'test "$(gen6)" -gt "'"$g"'"' || tap_diag "no IPv6 publication after: $*"
}
code_of() { # PATH [CURL-ARG...]: "status error-type" of a request
	local path=$1 code
	shift
	code=$(ip netns exec "$NS" curl -sg -o "$T/body" -w '%{http_code}' --max-time 5 "$@" "$RTSNAP_URL$path")
	echo "$code $(jq -r '.error | type' "$T/body" 2>/dev/null)"
}
: >"$T/want-order"
add4() { ch4 add "10.70.$1.0/24" via 10.0.0.2 && echo "inet 10.70.$1.0/24" >>"$T/want-order"; }
add6() { ch6 add "2001:db8:70:$1::/64" via 2001:db8:1::2 && echo "inet6 2001:db8:70:$1::/64" >>"$T/want-order"; }

G4=$(get "/routes?family=inet" "$T/r4.json")
G6=$(get /routes "$T/r6.json")
C0="4.$G4-6.$G6"

# the first connection, from since=C0, cut off after the first changes
ip netns exec "$NS" python3 "$SSE" follow "$RTSNAP_URL/events?family=all&since=$C0" "$T/f1" \
	--seconds 30 --stop "$T/stop1" &
F=$!
bg_register $F
wait_until 10 grep -q '"type": "open"' "$T/f1"
for k in 1 2 3; do # interleaved, in both orders
	add4 $k
	add6 $k
	add6 $((k + 10))
	add4 $((k + 10))
done
Cmid=$(cursor)
wait_until 10 grep -qF "\"id\": \"$Cmid\"" "$T/f1"
tap_ok $? "the family=all stream reaches the cursor of both families' publications ($Cmid)"
touch "$T/stop1"
wait $F
Clast=$(jq -r 'select(.type == "message") | .id' "$T/f1" | tail -n1)
tap_is "$Clast" "$Cmid" "its last event's id is the cursor 4.G4-6.G6 of both families"
tap_is "$(grep -c '"type": "open"' "$T/f1")" 1 "it opened once"
tap_is "$(jq -s -c '[.[] | select(.type == "message") | .data.family] | unique' "$T/f1")" '["inet","inet6"]' \
	"every event names its family (inet, inet6)"
tap_is "$(jq -s -c '[.[] | select(.type == "resync")] | length' "$T/f1")" 0 "no resync"

# while it is away: more changes, a replace and deletes of both families
add6 4
add4 4
ch4 replace 10.70.2.0/24 via 10.0.0.3 && echo "inet 10.70.2.0/24" >>"$T/want-order"
ch6 del 2001:db8:70:1::/64
ch4 del 10.70.1.0/24
ch6 replace 2001:db8:70:2::/64 via 2001:db8:1::3 && echo "inet6 2001:db8:70:2::/64" >>"$T/want-order"
add4 5
Cend=$(cursor)
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all" "$T/f2" \
	--seconds 20 --last-event-id "$Clast" --until-id "$Cend"
g4mid=${Cmid#4.}
g4mid=${g4mid%%-6.*}
g6mid=${Cmid##*-6.}
first=$(jq -s -c '[.[] | select(.type == "message")][0].data | [.family, .previous]' "$T/f2")
case $first in
*'"inet"'*) want="[\"inet\",$g4mid]" ;;
*) want="[\"inet6\",$g6mid]" ;;
esac
tap_is "$first" "$want" "Last-Event-ID $Clast: the stream resumes right after it"
cat "$T/f1" "$T/f2" >"$T/f12"
R4=$(get "/routes?family=inet" "$T/e4.json")
R6=$(get /routes "$T/e6.json")
tap_is "4.$R4-6.$R6" "$Cend" "nothing published since ($Cend)"
{ python3 "$SSE" norm "$T/e4.json"; python3 "$SSE" norm "$T/e6.json"; } >"$T/want"
python3 "$SSE" apply-all "$T/r4.json" "$T/r6.json" "$T/f12" "$T/got" --from "$C0" >"$T/got-order" 2>"$T/err"
tap_ok $? "both connections' events apply without a gap or a repeat, ids the cursors ($(cat "$T/err"))"
tap_diff "$T/want" "$T/got" "first /routes of each family + the events = /routes of each family now"
tap_diff "$T/want-order" "$T/got-order" "the routes were added in the order the changes were made, across families"

# since= instead of Last-Event-ID: the same events
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all&since=$Clast" "$T/f3" \
	--seconds 20 --until-id "$Cend"
tap_diff <(jq -c 'select(.type == "message") | [.id, .data]' "$T/f2") \
	<(jq -c 'select(.type == "message") | [.id, .data]' "$T/f3") "since=$Clast gives the events Last-Event-ID gave"

# a filtered merged stream: an address of one family leaves the other's events empty
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all&since=$C0&prefix=10.70.0.0/16" \
	"$T/f4" --seconds 20 --until-id "$Cend"
tap_is "$(jq -s -c '[.[] | select(.type == "message")] | [length, ([.[] | select(.data.family == "inet6") | .data.added + .data.removed | length] | add), ([.[] | select(.data.family == "inet") | .data.added | length] | add)]' "$T/f4")" \
	"$(jq -s -c '[.[] | select(.type == "message")] | [length, 0, ([.[] | select(.data.family == "inet") | .data.added | length] | add)]' "$T/f12")" \
	"prefix=10.70.0.0/16: one event per publication, the IPv6 ones empty, the IPv4 ones all there"

# /changes?family=all: each family's net change
http_get "$NS" "/changes?family=all&since=$C0" >"$T/ch.json"
tap_is "$(jq -c '[.generation, .previous, [.changes[].family]]' "$T/ch.json")" "[\"$Cend\",\"$C0\",[\"inet\",\"inet6\"]]" \
	"/changes?family=all&since=$C0: generation and previous are cursors, one change per family"
python3 "$SSE" apply-all "$T/r4.json" "$T/r6.json" "$T/ch.json" "$T/gotc" --from "$C0" --changes >/dev/null 2>"$T/err"
tap_ok $? "its changes apply ($(cat "$T/err"))"
tap_diff "$T/want" "$T/gotc" "first /routes of each family + /changes?family=all = /routes now"
tap_is "$(http_get "$NS" "/changes?family=all&since=$C0&prefix=2001:db8:70::/48" | jq -c '[.changes[] | [.family, (.added | length)]]')" \
	'[["inet",0],["inet6",6]]' "/changes?family=all&prefix=2001:db8:70::/48: the IPv6 routes only"
tap_is "$(http_get "$NS" "/changes?family=all&since=$Cend" | jq -c '[.changes[] | .added + .removed | length]')" '[0,0]' \
	"/changes?family=all&since= the newest cursor: nothing"

# single-family streams and answers keep their format
tap_is "$(http_get "$NS" "/changes?family=inet&since=$G4" | jq -c '[has("family"), (.generation | type)]')" '[false,"number"]' \
	"/changes?family=inet: no family key, a numeric generation, as before"
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=inet&since=$G4" "$T/f5" \
	--seconds 20 --until-gen "$R4"
tap_is "$(jq -s -c '[.[] | select(.type == "message") | (.id | test("^[0-9]+$")) and (.data | has("family") | not)] | unique' "$T/f5")" '[true]' \
	"/events?family=inet: numeric ids, no family key, as before"

# bad values: 400 with a JSON error
for q in "/events?family=all&since=5" "/events?family=all&since=4.1-6.x" "/events?family=all&since=4.1" \
	"/events?family=all&since=6.1-4.1" "/events?family=all&prefix=bogus" "/events?family=all&table=nosuch" \
	"/changes?family=all" "/changes?family=all&since=4.1" "/changes?family=all&since=4.-6.1" \
	"/changes?family=all&since=4.1-6.1&limit=5" "/changes?family=all&since=4.1-6.1&gateway=10.0.0.0/8" \
	"/changes?family=bogus&since=1" "/changes?family=all&since=4.1-6.1&family=all"; do
	tap_is "$(code_of "$q")" "400 string" "$q: 400 with a JSON error"
done

# outside the history (--history 32): a resync of that family; 410 on /changes
for k in $(seq 20 53); do
	ch4 add "10.71.$k.0/24" via 10.0.0.2
done
Cnow=$(cursor)
tap_is "$(code_of "/changes?family=all&since=$C0")" "410 string" \
	"/changes?family=all&since=$C0, IPv4 older than the history: 410 with a JSON error"
tap_is "$(jq -r .generation "$T/body")" "$Cnow" "the 410 names the current cursor"
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all" "$T/f6" \
	--seconds 3 --last-event-id "$C0"
g4now=${Cnow#4.}
g4now=${g4now%%-6.*}
tap_is "$(jq -s -c '[.[] | select(.type == "resync" or .type == "message")][0] | [.type, .id, .data.family, .data.reason, .data.generation]' "$T/f6")" \
	"[\"resync\",null,\"inet\",\"history\",$g4now]" "Last-Event-ID $C0: a resync of the IPv4 family first (history, no id)"
tap_is "$(jq -s -c '[.[] | select(.type == "resync")] | length' "$T/f6")" 1 "... and none of the IPv6 one (still in its history)"
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all" "$T/f7" \
	--seconds 3 --last-event-id garbage
tap_is "$(jq -s -c '[.[] | select(.type == "resync") | [.data.family, .data.reason]]' "$T/f7")" \
	'[["inet","unknown"],["inet6","unknown"]]' "Last-Event-ID that is not a cursor: a resync of each family (unknown)"

# --max-streams 1: a new stream evicts a family=all one, which is told to resync both families
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events?family=all" "$T/f8" --seconds 8 &
F=$!
bg_register $F
wait_until 10 grep -q '"type": "open"' "$T/f8"
sleep 0.3
ip netns exec "$NS" timeout 30 python3 "$SSE" follow "$RTSNAP_URL/events" "$T/f9" --seconds 2
wait $F
tap_is "$(jq -s -c '[.[] | select(.type == "resync") | [.data.family, .data.reason]]' "$T/f8")" \
	'[["inet","evicted"],["inet6","evicted"]]' "a stream beyond --max-streams evicts the family=all stream: a resync per family"
tap_is "$(jq -s -c '[.[] | select(.type == "end")] | length' "$T/f8")" 1 "... which then ends"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits cleanly"
tap_cmd "no sanitizer report in its log (RTSNAPD=build/asan/rtsnapd)" \
	sh -c "! grep -E 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' '$(daemon_log "$NS")'"

# --stream-queue counts the lag in both histories: a family=all stream that stopped reading
# is dropped under IPv4 churn alone
daemon_start "$NS" --interval 0 --family all --stream-queue 64k || tap_bail "rtsnapd did not start"
metric() { http_get "$NS" /metrics | awk -v m="$1" '$1 == m { print $2 }'; }
ip netns exec "$NS" python3 "$SSE" stall "$RTSNAP_URL/events?family=all" 20 &
S=$!
bg_register $S
wait_true 5 'test "$(metric rtsnap_event_streams)" = 1'
end=$((SECONDS + 15))
k=0
while [ $SECONDS -lt $end ] && [ "$(metric 'rtsnap_event_streams_dropped_total{reason="slow"}')" = 0 ]; do
	k=$((k + 1))
	{
		for j in $(seq 0 39); do echo "route add 10.8$((k % 2)).$j.0/24 via 10.0.0.2"; done
		for j in $(seq 0 39); do echo "route del 10.8$(((k + 1) % 2)).$j.0/24"; done
	} | ip -4 -n "$NS" -force -batch - 2>/dev/null
	sleep 0.05
done
tap_is "$(metric 'rtsnap_event_streams_dropped_total{reason="slow"}')" 1 \
	"a stalled family=all stream is dropped as slow under IPv4 churn ($k batches)"
tap_ok "$(wait_true 5 'test "$(metric rtsnap_event_streams)" = 0'; echo $?)" "its slot is free"
kill $S 2>/dev/null
daemon_stop "$NS"
tap_ok $? "rtsnapd exits cleanly"
tap_cmd "no sanitizer report in its log" \
	sh -c "! grep -E 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' '$(daemon_log "$NS")'"

# with --family inet6: family=all is 404, as on /routes
ns_new N6
daemon_start "$N6" --family inet6 || tap_bail "rtsnapd (IPv6 only) did not start"
for q in "/events?family=all" "/changes?family=all&since=4.1-6.1" "/routes?family=all"; do
	code=$(ip netns exec "$N6" curl -sg -o "$T/body" -w '%{http_code}' --max-time 5 "$RTSNAP_URL$q")
	tap_is "$code $(jq -r '.error | type' "$T/body" 2>/dev/null)" "404 string" "IPv6 only: $q is 404 with a JSON error"
done
daemon_stop "$N6"
tap_done
