#!/bin/bash
# A resync runs beside the notifications: while its full dump of a large table runs (SIGHUP,
# as --interval and an overflow do), routes are added, deleted (before and after the dump's
# position) and replaced. A probe route added meanwhile is served before the resync is over,
# and afterwards the mirror equals the kernel: /routes equals `ip -j -6 route show table all`
# (the routes deleted during the dump are gone, the dump's older copy of a replaced route did
# not win), no drift is counted for what changed during the dump, and a quiet SIGHUP resync
# afterwards finds none either. Bounded: ROUNDS batches of 301 changes.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
require_root
require_cmd ip curl jq awk
require_rtsnapd
N=${RESYNC_ROUTES:-200000}
ROUNDS=${RESYNC_ROUNDS:-3}

tap_plan $((ROUNDS * 4 + 2))
ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev v1 nodad
# route i: 2001:db8:(0x100 + i / 65536):(i % 65536)::/64, in main (and every 16th in table 100)
awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "route add 2001:db8:%x:%x::/64 via 2001:db8:1::2%s\n", 256 + int(i / 65536),
			i % 65536, i % 16 ? "" : " table 100"
}' | ip -6 -n "$NS" -batch - || tap_bail "could not add the $N routes"

st() { http_get "$NS" /status | jq -r "$1"; }
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
want=$(ip -n "$NS" -6 route show table all | wc -l)
wait_true 120 'test "$(st .routes)" = "$want"' || tap_bail "rtsnapd serves $(st .routes) routes, not $want"
PID=${_daemon_pid[$NS]}

# changes R: routes j = R, R + N/100, ... deleted, the next ones replaced (via ::9), a /80
# added under a third set (all over the key space), and the probe
changes() {
	awk -v n="$N" -v r="$1" 'function p(i) {
		return sprintf("2001:db8:%x:%x::", 256 + int(i / 65536), i % 65536) }
	function q(i) {
		return sprintf("2001:db8:%x:%x:1::", 256 + int(i / 65536), i % 65536) }
	BEGIN {
		for (k = 0; k < 100; k++) {
			j = r * 3 + k * int(n / 100)
			printf "route del %s/64 via 2001:db8:1::2%s\n", p(j), j % 16 ? "" : " table 100"
			printf "route replace %s/64 via 2001:db8:1::9%s\n", p(j + 1),
				(j + 1) % 16 ? "" : " table 100"
			printf "route add %s/80 dev v1\n", q(j + 2)
		}
		printf "route add 2001:db8:feed:%x::/64 via 2001:db8:2::2\n", r
	}'
}

seen_during=0
for ((r = 1; r <= ROUNDS; r++)); do
	d0=$(st .collector.resync_drift_routes)
	f0=$(st '.collector.full_dumps.signal // 0')
	kill -HUP "$PID"
	phase=
	for ((i = 0; i < 500; i++)); do # the dump starts within a few ms; wait at most ~5 s
		phase=$(st '.collector.resync_running // empty')
		[ "$phase" = dump ] && break
		sleep 0.01
	done
	changes "$r" | ip -6 -n "$NS" -force -batch - 2>"$RTSNAP_TMP/batch.err" ||
		tap_diag "round $r: some changes failed:" "$(head -n 5 "$RTSNAP_TMP/batch.err")"
	phase_after=$(st '.collector.resync_running // empty')
	t0=$(date +%s%N)
	seen=
	for ((i = 0; i < 1000; i++)); do
		if http_get "$NS" "/routes/lookup?addr=2001:db8:feed:$(printf %x "$r")::1" 2>/dev/null |
			grep -q "\"dst\":\"2001:db8:feed:$(printf %x "$r")::/64\""; then
			seen=$(st '.collector.resync_running // "over"')
			break
		fi
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$phase" != dump ] || [ -z "$phase_after" ]; then
		tap_skip "round $r: the resync was over before the changes were made (phase '$phase', then '$phase_after'): raise RESYNC_ROUTES"
	else
		[ -n "$seen" ] && [ "$seen" != over ]
		tap_ok $? "round $r: the probe added during the resync was served ${ms} ms later, the resync still running (${seen:-never seen})"
		[ -n "$seen" ] && [ "$seen" != over ] && seen_during=$((seen_during + 1))
	fi
	wait_true 120 'test "$(st ".collector.full_dumps.signal // 0")" -gt "$f0" && test "$(st ".collector.resync_running")" = null'
	json_compare "$NS" "round $r: after the resync, /routes equals ip -j -6 route show table all" \
		http_get "$NS" /routes
	tap_is "$(($(st .collector.resync_drift_routes) - d0))" 0 \
		"round $r: the changes made during the resync are not counted as drift"
done
tap_diag "the probe was served while the resync ran in $seen_during of $ROUNDS rounds"

d0=$(st .collector.resync_drift_routes)
f0=$(st '.collector.full_dumps.signal // 0')
kill -HUP "$PID"
wait_true 120 'test "$(st ".collector.full_dumps.signal // 0")" -gt "$f0" && test "$(st ".collector.resync_running")" = null'
tap_is "$(($(st .collector.resync_drift_routes) - d0))" 0 "a quiet SIGHUP resync afterwards finds no drift"
tap_is "$(st .routes)" "$(ip -n "$NS" -6 route show table all | wc -l)" "rtsnapd serves as many routes as the kernel lists"
daemon_stop "$NS"
tap_done
