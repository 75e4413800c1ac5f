#!/bin/bash
# Readers hammer every endpoint while the collector republishes many times a second (route churn
# with no debounce, plus SIGHUP), against the ASan+UBSan and the TSan builds (retired snapshots
# are poisoned before free there) and under valgrind. Every response must be complete and well
# formed, the daemon must report no sanitizer error and exit 0 on SIGTERM. Bounded in count and
# time; traffic stays inside the test's namespace.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq

DURATION=${STRESS_SECONDS:-8}
READERS=4
PROC_RE='^[0-9a-f]{32} [0-9a-f]{2} [0-9a-f]{32} [0-9a-f]{2} [0-9a-f]{32} [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} +[^ ]+$'

variants=()
[ -x "$TOP/build/asan/rtsnapd" ] && variants+=(asan)
[ -x "$TOP/build/tsan/rtsnapd" ] && variants+=(tsan)
command -v valgrind >/dev/null && [ -x "$TOP/build/rtsnapd" ] && variants+=(valgrind)
[ ${#variants[@]} -gt 0 ] || tap_skip_all "no sanitizer build (make asan tsan) and no valgrind"

reader() { # NS OUTFILE: bounded loop over the endpoints, one line per bad response
	local ns=$1 out=$2 end=$((SECONDS + DURATION)) i=0 body
	while [ $SECONDS -lt $end ] && [ $i -lt 3000 ]; do
		i=$((i + 1))
		body=$(ip netns exec "$ns" curl -sgf --max-time 10 "$RTSNAP_URL/ipv6_route") || { echo "ipv6_route: curl failed" >>"$out"; continue; }
		[ -n "$body" ] && ! grep -qvE "$PROC_RE" <<<"$body" || echo "ipv6_route: malformed body" >>"$out"
		ip netns exec "$ns" curl -sgf --max-time 10 "$RTSNAP_URL/routes" | jq -e 'type == "array" and length > 0' >/dev/null ||
			echo "routes: bad JSON" >>"$out"
		ip netns exec "$ns" curl -sgf --max-time 10 "$RTSNAP_URL/status" | jq -e '.generation > 0' >/dev/null ||
			echo "status: bad" >>"$out"
		echo ok >>"$out.count"
	done
}

churn() { # NS: add and delete a block of routes, and SIGHUP, until the time is up
	local ns=$1 pid=$2 end=$((SECONDS + DURATION)) k=0
	while [ $SECONDS -lt $end ] && [ $k -lt 2000 ]; do
		k=$((k + 1))
		{
			# every other route with an encapsulation (records owning blobs, copied and freed)
			for j in $(seq 0 19); do
				e=''
				[ $((j % 2)) = 1 ] && e="encap seg6 mode encap segs fc00::$j,fc00::$k "
				echo "route add 2001:db8:$((k % 2)):$j::/64 ${e}via 2001:db8:1::2 table $((100 + j % 3))"
			done
			for j in $(seq 0 19); do echo "route del 2001:db8:$(((k + 1) % 2)):$j::/64 table $((100 + j % 3))"; done
		} | ip -6 -n "$ns" -force -batch - 2>/dev/null
		kill -HUP "$pid" 2>/dev/null
		sleep 0.05
	done
}

for v in "${variants[@]}"; do
	ns_new NS
	veth_pair "$NS" v0 "$NS" v1
	ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
	for i in $(seq 1 200); do echo "route add 2001:db8:ff:$i::/64 via 2001:db8:1::2"; done | ip -6 -n "$NS" -batch -
	ip -6 -n "$NS" route add 2001:db8:fe::/64 nexthop encap ip6 dst 2001:db8:1::9 via 2001:db8:1::2 \
		dev v0 nexthop encap seg6local action End via 2001:db8:1::3 dev v0
	case $v in
	asan) RTSNAPD=$TOP/build/asan/rtsnapd; wrap=() ;;
	tsan) RTSNAPD=$TOP/build/tsan/rtsnapd; wrap=() ;;
	valgrind) RTSNAPD=$TOP/build/rtsnapd; wrap=(valgrind -q --fair-sched=yes --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99) ;;
	esac
	log="$RTSNAP_TMP/$v.log"
	if [ ${#wrap[@]} -gt 0 ]; then
		# valgrind: start by hand (daemon_start does not wrap commands)
		ip netns exec "$NS" "${wrap[@]}" "$RTSNAPD" --listen "$RTSNAP_LISTEN" --debounce-ms 0 --interval 1 >"$log" 2>&1 </dev/null &
		pid=$!
		wait_until 30 ip netns exec "$NS" curl -sgf --max-time 2 "$RTSNAP_URL/healthz"
	else
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 TSAN_OPTIONS=halt_on_error=0:exitcode=66 \
			daemon_start "$NS" --debounce-ms 0 --interval 1 || tap_bail "$v daemon did not start"
		pid=${_daemon_pid[$NS]}
		log=$(daemon_log "$NS")
	fi
	gen0=$(http_get "$NS" /status | jq .generation)
	rm -f "$RTSNAP_TMP/bad"* "$RTSNAP_TMP/bad"*.count
	churn "$NS" "$pid" &
	cpid=$!
	rpids=()
	for r in $(seq $READERS); do
		reader "$NS" "$RTSNAP_TMP/bad$r" &
		rpids+=($!)
	done
	wait "${rpids[@]}" "$cpid"
	gen1=$(http_get "$NS" /status | jq .generation)
	served=$(cat "$RTSNAP_TMP"/bad*.count 2>/dev/null | wc -l)
	bad=$(cat "$RTSNAP_TMP"/bad? 2>/dev/null | wc -l)
	tap_diag "$v: $((gen1 - gen0)) publications in ${DURATION}s while serving $served rounds of 3 requests"
	tap_is "$bad" 0 "$v: every response complete and well formed"
	[ "$bad" = 0 ] || tap_diag "$(sort "$RTSNAP_TMP"/bad? | uniq -c | head)"
	tap_ok "$([ $((gen1 - gen0)) -ge $((DURATION * 2)) ]; echo $?)" "$v: republished continuously ($((gen1 - gen0)) times)" ||
		tap_diag "$(http_get "$NS" /metrics | grep -E '^rtsnap_(publications|full_dumps|resyncs_postponed|notifications_total|collector)')"
	tap_ok "$([ "$served" -gt 0 ]; echo $?)" "$v: readers were served"
	if [ ${#wrap[@]} -gt 0 ]; then
		kill -TERM "$pid"
		wait "$pid"
		st=$?
	else
		daemon_stop "$NS" >/dev/null
		st=$?
	fi
	tap_is "$st" 0 "$v: clean exit on SIGTERM"
	if grep -qE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|LeakSanitizer|definitely lost|Invalid (read|write)' "$log"; then
		tap_ok 1 "$v: no sanitizer or memcheck report"
		tap_diag "$(grep -A12 -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|LeakSanitizer|definitely lost|Invalid (read|write)' "$log" | head -60)"
	else
		tap_ok 0 "$v: no sanitizer or memcheck report"
	fi
done
tap_done
