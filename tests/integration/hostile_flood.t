#!/bin/bash
# Connection floods from one local user (issue 13, item 2): /healthz from another client is
# answered while 5 000 idle connections are held (with the default limits, and with
# --max-pending 1000 so that the oldest waiting connections are shed), and while 1 100
# slowloris connections trickle one header byte a second. Latencies are reported as
# diagnostics only (no wall-clock assertion). Traffic stays on the namespace's loopback.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl python3 timeout
require_rtsnapd
[ "$(ulimit -Hn)" -ge 12000 ] || tap_skip_all "the flood client needs 12000 file descriptors (hard limit $(ulimit -Hn))"
ulimit -n "$(ulimit -Hn)"

ns_new NS
FLOOD="$TOP/tests/lib/flood.py"

# probe N: N sequential /healthz requests; prints "answered p50 p99 max" (seconds).
probe() {
	local n=$1 i
	for i in $(seq "$n"); do
		ip netns exec "$NS" curl -sg -o /dev/null --max-time 15 -w '%{http_code} %{time_total}\n' "$RTSNAP_URL/healthz"
	done | awk '$1 == 200 { t[++n] = $2 } END {
		if (!n) { print 0, "-", "-", "-"; exit }
		# insertion sort: n is small
		for (i = 2; i <= n; i++) { v = t[i]; for (j = i - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
		p50 = t[int((n + 1) * 0.5) > 0 ? int((n + 1) * 0.5) : 1]; p99 = t[int(n * 0.99) > 0 ? int(n * 0.99) : 1]
		printf "%d %.4f %.4f %.4f\n", n, p50, p99, t[n] }'
}

# flood_case DESC MODE N DAEMON-ARG...: start a daemon, hold the flood, probe during it.
flood_case() {
	local desc=$1 mode=$2 n=$3 out=$RTSNAP_TMP/flood.$2.$3 pid res
	shift 3
	daemon_start "$NS" "$@" || { tap_ok 1 "$desc: daemon starts"; return; }
	read -r res < <(probe 5)
	tap_diag "$desc: before the flood /healthz answered/p50/p99/max: $res"
	ip netns exec "$NS" python3 "$FLOOD" ::1 9816 "$mode" "$n" 25 >"$out" 2>&1 &
	pid=$!
	bg_register $pid
	wait_until 20 grep -q '^ready' "$out"
	tap_diag "$desc: flood client $(head -1 "$out")"
	sleep 2
	read -r res < <(probe 20)
	tap_is "${res%% *}" 20 "$desc: 20 of 20 /healthz requests answered during the flood"
	tap_diag "$desc: during the flood /healthz answered/p50/p99/max: $res"
	http_get "$NS" /metrics | grep -E '^rtsnap_http_(shed_connections|header_timeouts|busy)_total' | tap_diag "$(cat)"
	wait "$pid" 2>/dev/null
	tap_diag "$desc: flood client $(tail -1 "$out")"
	daemon_stop "$NS" >/dev/null
	tap_ok $? "$desc: rtsnapd exits 0"
}

flood_case "5000 idle, default limits" idle 5000
flood_case "5000 idle, --max-pending 1000" idle 5000 --max-pending 1000
flood_case "1100 slowloris, --header-timeout 3" slowloris 1100 --header-timeout 3
tap_done
