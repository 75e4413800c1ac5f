#!/bin/bash
# events_stress.t - 50 /events streams (some filtered, some reading slowly, a third of them
# cutting their connection and resuming with Last-Event-ID every 40 events) while routes
# churn with no debounce, SIGHUP resyncs, heartbeats every second and /routes readers,
# against the ASan+UBSan and the TSan builds (tests/integration/core_stress.t's way: retired
# snapshots poisoned, sanitizer reports fail the test). Every stream must see its events
# follow one another (previous = the last generation it saw, or the generation a resync
# named), every event must be well-formed JSON, the daemon must report no sanitizer error
# and exit 0 on SIGTERM with the streams open. Bounded in time; traffic stays inside the
# test's namespace.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq python3
SSE="$TOP/tests/lib/sse.py"
T=$RTSNAP_TMP
DURATION=${STRESS_SECONDS:-10}
CLIENTS=${STRESS_CLIENTS:-50}

variants=()
[ -x "$TOP/build/asan/rtsnapd" ] && variants+=(asan)
[ -x "$TOP/build/tsan/rtsnapd" ] && variants+=(tsan)
[ ${#variants[@]} -gt 0 ] || tap_skip_all "no sanitizer build (make asan tsan)"

churn() { # NS PID: blocks of routes come and go in tables main and 100, and SIGHUP
	local ns=$1 pid=$2 end=$((SECONDS + DURATION)) k=0
	while [ $SECONDS -lt $end ] && [ $k -lt 3000 ]; do
		k=$((k + 1))
		{
			for j in $(seq 0 9); do echo "route add 2001:db8:c$((k % 2)):$j::/64 via 2001:db8:1::2 proto static"; done
			for j in $(seq 0 9); do echo "route del 2001:db8:c$(((k + 1) % 2)):$j::/64"; done
			echo "route replace 2001:db8:e0:$((k % 5))::/64 via 2001:db8:1::$((k % 3 + 2)) table 100"
		} | ip -6 -n "$ns" -force -batch - 2>/dev/null
		[ $((k % 20)) = 0 ] && kill -HUP "$pid" 2>/dev/null
		sleep 0.03
	done
}

reader() { # NS OUT: /routes and /changes while the streams run
	local ns=$1 out=$2 end=$((SECONDS + DURATION)) i=0 g
	while [ $SECONDS -lt $end ] && [ $i -lt 500 ]; do
		i=$((i + 1))
		ip netns exec "$ns" curl -sgf --max-time 10 "$RTSNAP_URL/routes" | jq -e 'type == "array"' >/dev/null ||
			echo "routes: bad" >>"$out"
		g=$(ip netns exec "$ns" curl -sgf --max-time 10 "$RTSNAP_URL/status" | jq .generation)
		ip netns exec "$ns" curl -sg --max-time 10 -o /dev/null -w '%{http_code}\n' \
			"$RTSNAP_URL/changes?since=$((g > 5 ? g - 5 : 1))" | grep -qE '^(200|410)$' ||
			echo "changes: bad" >>"$out"
		sleep 0.1
	done
}

for v in "${variants[@]}"; do
	ns_new NS
	veth_pair "$NS" v0 "$NS" v1
	ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
	for i in $(seq 1 300); do echo "route add 2001:db8:ff:$i::/64 via 2001:db8:1::2"; done | ip -6 -n "$NS" -batch -
	RTSNAPD=$TOP/build/$v/rtsnapd
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 TSAN_OPTIONS=halt_on_error=0:exitcode=66 \
		daemon_start "$NS" --debounce-ms 0 --interval 2 --stream-heartbeat 1 --history 32 \
		--stream-queue 64k ||
		tap_bail "$v daemon did not start"
	pid=${_daemon_pid[$NS]}
	log=$(daemon_log "$NS")
	rm -f "$T/bad"
	ip netns exec "$NS" python3 "$SSE" multi "$RTSNAP_URL/events" "$CLIENTS" $((DURATION + 2)) "$T/multi.json" &
	mpid=$!
	sleep 1
	churn "$NS" "$pid" &
	cpid=$!
	reader "$NS" "$T/bad" &
	rpid=$!
	sleep $((DURATION / 2))
	open=$(http_get "$NS" /metrics | awk '$1 == "rtsnap_event_streams" { print $2 }')
	wait "$cpid" "$rpid" "$mpid"
	st=$(jq -c '{streams: length, events: (map(.events) | add), min: (map(.events) | min),
		gaps: (map(.gaps) | add), bad: (map(.bad) | add), resyncs: (map(.resyncs) | add),
		reconnects: (map(.reconnects) | add), errors: (map(.errors) | add)}' "$T/multi.json")
	tap_diag "$v: $st; $open streams open midway"
	tap_ok "$([ "${open:-0}" -ge $((CLIENTS * 2 / 3)) ]; echo $?)" "$v: the streams were open at once ($open)"
	tap_is "$(jq -c '[(map(.gaps) | add), (map(.bad) | add)]' "$T/multi.json")" "[0,0]" \
		"$v: every stream's events follow one another, every event is well-formed"
	tap_ok "$(jq -e 'map(.events) | min > 0' "$T/multi.json" >/dev/null; echo $?)" "$v: every stream received events"
	tap_is "$(cat "$T/bad" 2>/dev/null | wc -l)" 0 "$v: /routes and /changes answered during the streams"
	# stop with streams open: suspended connections must be resumed before libmicrohttpd stops
	ip netns exec "$NS" python3 "$SSE" multi "$RTSNAP_URL/events" 10 30 "$T/m2.json" &
	m2=$!
	wait_true 10 'test "$(http_get "$NS" /metrics | awk "\$1 == \"rtsnap_event_streams\" { print \$2 }")" -ge 10'
	daemon_stop "$NS" >/dev/null
	st=$?
	tap_is "$st" 0 "$v: clean exit on SIGTERM with 10 streams open"
	kill "$m2" 2>/dev/null
	wait "$m2" 2>/dev/null
	if grep -qE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|LeakSanitizer' "$log"; then
		tap_ok 1 "$v: no sanitizer report"
		tap_diag "$(grep -A14 -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|LeakSanitizer' "$log" | head -80)"
	else
		tap_ok 0 "$v: no sanitizer report"
	fi
done
tap_done
