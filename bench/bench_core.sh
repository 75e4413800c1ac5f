#!/usr/bin/env bash
# bench/bench_core.sh [N...] — cost of reading the IPv6 routing tables:
# kernel proc file, iproute2 netlink dumps, and rtsnapd (snapshot build,
# HTTP read, --once) at N routes each (default 10000 40000 100000 1000000).
#
# Prints a markdown table on stdout (one row per N, as soon as it is done);
# progress and details (system CPU, byte counts) go to stderr.
# Needs root. Each N gets a fresh namespace rtsnapb-<pid>, removed on exit.
#
# Environment:
#   PROC_MAX=100000   skip `cat /proc/net/ipv6_route` above this many routes
#                     (its cost grows faster than linearly: ~24 s at 100k)
#   RUNS=3            runs per measurement; the median is reported. A
#                     measurement whose first run takes >= SLOW seconds is
#                     run only once.
#   SLOW=2
#   BENCH_TIMEOUT=600 per-command limit in seconds ("timeout" in the cell)
#   RTSNAPD=build/rtsnapd, LISTEN, STATUS_FIELD, HEALTH_TIMEOUT: see below
#   OUT=FILE          also append the table to FILE
#   loader knobs (BENCH_LOADER, BENCH_LOAD_JOBS): see bench/lib.sh
set -u

# jq path of the collect+publish duration (seconds) in GET /status.
STATUS_FIELD=${STATUS_FIELD:-.duration_seconds}

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
LISTEN=${LISTEN:-[::1]:9816}
URL=http://$LISTEN
PROC_MAX=${PROC_MAX:-100000}
RUNS=${RUNS:-3}
SLOW=${SLOW:-2}
HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-300} # seconds to wait for the first snapshot
OUT=${OUT:-}

if [ $# -eq 0 ]; then set -- 10000 40000 100000 1000000; fi
for n in "$@"; do
	case $n in '' | *[!0-9]*) bench_die "not a route count: $n" ;; esac
done
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
for tool in ip curl jq awk; do
	command -v "$tool" >/dev/null || bench_die "missing $tool"
done

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}

# GET URL with curl inside NS; sets CURL_T (curl's time_total, or
# "failed (http CODE)") and CURL_BYTES.
ns_curl_time() {
	local code
	read -r code CURL_BYTES CURL_T < <(ip netns exec "$1" curl -sg -o /dev/null \
		-w '%{http_code} %{size_download} %{time_total}\n' \
		--max-time "${BENCH_TIMEOUT:-600}" "$2")
	if [ "${code:-}" != 200 ]; then
		CURL_T="failed (http ${code:-?})"
		return 1
	fi
}

# Start rtsnapd in NS, wait for /healthz and a snapshot; sets DAEMON_PID.
daemon_start() {
	local ns=$1 deadline st
	mkdir -p "$BENCH_TMP"
	bench_bg ip netns exec "$ns" "$RTSNAPD" --listen "$LISTEN" 2>>"$BENCH_TMP/rtsnapd.log"
	DAEMON_PID=$BENCH_BG_PID
	deadline=$((SECONDS + HEALTH_TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			bench_log "rtsnapd exited; see $BENCH_TMP/rtsnapd.log"
			return 1
		fi
		if ip netns exec "$ns" curl -sgf -o /dev/null --max-time 5 "$URL/healthz"; then
			st=$(ip netns exec "$ns" curl -sgf --max-time 5 "$URL/status" |
				jq -r "$STATUS_FIELD // empty" 2>/dev/null)
			[ -z "$st" ] || return 0
		fi
		sleep 0.2
	done
	bench_log "rtsnapd not ready after ${HEALTH_TIMEOUT}s; see $BENCH_TMP/rtsnapd.log"
	return 1
}

bench_log "machine: $(nproc) cores, kernel $(uname -r), $(ip -V)"
emit ""
emit "rtsnap bench_core — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r)," \
	"$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"loader ${BENCH_LOADER}, median of $RUNS (single run when >= ${SLOW}s), loadavg $(cut -d" " -f1-3 /proc/loadavg) at start"
emit ""
emit "| routes | load s | proc s | ip s | ip -j s | rtsnapd collect+publish s | HTTP /ipv6_route s | proc/HTTP | --once s | proc/--once | RSS B/route |"
emit "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

for n in "$@"; do
	bench_ns_create
	ns=$BENCH_NS
	bench_log "N=$n: loading into $ns"
	if ! bench_load_routes "$ns" "$n"; then
		emit "| $n | load failed | | | | | | | | | |"
		bench_ns_delete "$ns"
		continue
	fi
	load=$(bench_fmt "$BENCH_LOAD_SECONDS")
	rows=$(bench_count_routes "$ns")
	bench_log "N=$n: loaded in ${load}s, kernel lists $rows routes"

	if [ "$n" -gt "$PROC_MAX" ]; then
		proc="skipped (>$PROC_MAX)"
	else
		bench_median_ns "$RUNS" "$SLOW" "$ns" cat /proc/net/ipv6_route
		proc=$(bench_fmt "$BENCH_T")
		bench_log "N=$n: cat /proc/net/ipv6_route ${proc}s wall, ${BENCH_SYS}s sys"
	fi
	bench_median_ns "$RUNS" "$SLOW" "$ns" ip -6 route show table all
	iptext=$(bench_fmt "$BENCH_T")
	bench_log "N=$n: ip -6 route show table all ${iptext}s wall, ${BENCH_SYS}s sys"
	bench_median_ns "$RUNS" "$SLOW" "$ns" ip -j -6 route show table all
	ipjson=$(bench_fmt "$BENCH_T")
	bench_log "N=$n: ip -j -6 route show table all ${ipjson}s wall," \
		"$(ip -n "$ns" -j -6 route show table all | wc -c) bytes"

	collect="n/a (not built)" http=$collect ratio=n/a once=$collect ratio_once=n/a rss=$collect
	if [ -x "$RTSNAPD" ]; then
		if daemon_start "$ns"; then
			collect=$(bench_fmt "$(ip netns exec "$ns" curl -sg --max-time 10 "$URL/status" |
				jq -r "$STATUS_FIELD")")
			times=()
			for ((r = 0; r < RUNS; r++)); do
				ns_curl_time "$ns" "$URL/ipv6_route" || break
				times+=("$CURL_T")
			done
			if [ "${#times[@]}" -eq "$RUNS" ]; then
				http=$(bench_fmt "$(bench_median "${times[@]}")")
				bench_log "N=$n: GET /ipv6_route ${http}s, $CURL_BYTES bytes"
			else
				http=$CURL_T
			fi
			rss=$(awk -v n="$n" '/^VmRSS:/ { printf "%.0f", $2 * 1024 / n }' "/proc/$DAEMON_PID/status")
			bench_log "N=$n: rtsnapd $(grep -E '^Vm(RSS|HWM)' "/proc/$DAEMON_PID/status" | tr -s ' \n' ' ')"
		else
			collect="failed" http=failed rss=failed
		fi
		[ -z "${DAEMON_PID:-}" ] || bench_stop "$DAEMON_PID"
		DAEMON_PID=
		bench_median_ns "$RUNS" "$SLOW" "$ns" "$RTSNAPD" --once --format proc
		once=$(bench_fmt "$BENCH_T")
		ratio=$(bench_ratio "$proc" "$http")
		ratio_once=$(bench_ratio "$proc" "$once")
	fi

	emit "| $n | $load | $proc | $iptext | $ipjson | $collect | $http | $ratio | $once | $ratio_once | $rss |"
	bench_ns_delete "$ns"
	bench_settle
done
