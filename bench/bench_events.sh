#!/usr/bin/env bash
# bench/bench_events.sh — the change stream /events under churn (issue 11).
#
# One markdown table on stdout (details on stderr). At ROUTES routes, windows of T seconds
# on one daemon:
#   idle        nothing: rtsnapd's RSS and CPU at rest
#   held        CLIENTS streams open, no change: RSS per stream
#   churn       RATE changes/s (nlload -c), a probe route every 0.5 s, no stream: the
#               collector's pacing and CPU without readers of the stream
#   churn+1     the same with one stream: delivery latency
#   churn+C     the same with CLIENTS streams: delivery latency, CPU, RSS
# Delivery latency: from the kernel's ack of the probe's RTM_NEWROUTE to the moment each
# stream's client (nlload -e: one epoll loop reading every stream) has the event with the
# probe's object; percentiles over every (probe, stream) pair, by nearest rank.
# With BASE_RTSNAPD=/path/to/an/older/rtsnapd, BASE_WINDOWS (idle and three churn windows,
# as many as the first run has) are also run on that binary in a fresh namespace with the
# same routes: the publication pacing, CPU and RSS without the change stream.
#
# Needs root. Every namespace and process it starts is removed by the trap in bench/lib.sh.
# See bench/README.md, "The change stream".
#
# Environment (defaults in brackets; QUICK=1: ROUTES=20000 T=5 CLIENTS=20):
#   ROUTES        [1000000]          RATE   changes/s [1000]
#   CLIENTS       streams [100]      T      seconds per window [20]
#   RTSNAPD       [build/rtsnapd]    RTSNAPD_ARGS ["--interval 0"]
#   BASE_RTSNAPD  an rtsnapd to compare the churn window with [none]
#   PORT [9816]   READY_TIMEOUT [600]   PROBE_TIMEOUT ms [10000]   OUT=FILE (append)
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUTES=${ROUTES:-20000} T=${T:-5} CLIENTS=${CLIENTS:-20}
else
	ROUTES=${ROUTES:-1000000} T=${T:-20} CLIENTS=${CLIENTS:-100}
fi
RATE=${RATE:-1000}
RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
RTSNAPD_ARGS=${RTSNAPD_ARGS:-"--interval 0"}
BASE_RTSNAPD=${BASE_RTSNAPD:-}
BASE_WINDOWS=${BASE_WINDOWS:-"idle churn churn churn"} # as many churn windows as the first run
PORT=${PORT:-9816}
URL="http://[::1]:$PORT"
READY_TIMEOUT=${READY_TIMEOUT:-600}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-10000}
OUT=${OUT:-}
HZ=$(getconf CLK_TCK)

for v in $ROUTES $RATE $CLIENTS $T; do
	case $v in '' | *[!0-9]*) bench_die "not a whole number: '$v'" ;; esac
done
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
for tool in ip curl jq awk; do
	command -v "$tool" >/dev/null || bench_die "missing $tool"
done
[ -x "$RTSNAPD" ] || bench_die "no $RTSNAPD (make -C $BENCH_ROOT all)"
mkdir -p "$BENCH_TMP"
NLLOAD=$(bench_nlload) || bench_die "cannot build bench/nlload.c (see $BENCH_TMP/nlload.log)"

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}

status() { ip netns exec "$1" curl -sgf --max-time 5 "$URL/status" 2>/dev/null; }
metrics() { ip netns exec "$1" curl -sgf --max-time 5 "$URL/metrics" 2>/dev/null; }
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$1/stat"; }
vm_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
pct() { awk -v t="$1" -v s="$2" -v hz="$HZ" 'BEGIN { printf "%.1f", (s > 0 ? 100 * t / hz / s : 0) }'; }

# counters NS: "publications latency_sum latency_count diff_seconds stream_bytes
# event_routes" from /metrics
counters() {
	metrics "$1" | awk '
		$1 == "rtsnap_publications_total" { p = $2 }
		$1 == "rtsnap_publication_latency_seconds_sum" { ls = $2 }
		$1 == "rtsnap_publication_latency_seconds_count" { lc = $2 }
		$1 == "rtsnap_events_diff_seconds_total" { d = $2 }
		$1 == "rtsnap_event_stream_bytes_total" { b = $2 }
		$1 ~ /^rtsnap_events_routes_total/ { r += $2 }
		END { printf "%s %s %s %s %s %s\n", p + 0, ls + 0, lc + 0, d + 0, b + 0, r + 0 }'
}

daemon_start() { # NS BINARY: sets DAEMON_PID
	local ns=$1 bin=$2 deadline
	# shellcheck disable=SC2086 # RTSNAPD_ARGS is a list of options
	bench_bg ip netns exec "$ns" "$bin" --listen "[::1]:$PORT" $RTSNAPD_ARGS 2>>"$BENCH_TMP/rtsnapd.log"
	DAEMON_PID=$BENCH_BG_PID
	deadline=$((SECONDS + READY_TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		kill -0 "$DAEMON_PID" 2>/dev/null || { bench_log "rtsnapd exited; see $BENCH_TMP/rtsnapd.log"; return 1; }
		[ -z "$(status "$ns")" ] || return 0
		sleep 0.05
	done
	return 1
}

wait_routes() { # NS COUNT
	local deadline=$((SECONDS + READY_TIMEOUT)) n
	while [ $SECONDS -lt $deadline ]; do
		n=$(status "$1" | jq -r '.routes // 0' 2>/dev/null)
		[ "${n:-0}" -lt "$2" ] || return 0
		sleep 0.1
	done
	return 1
}

# start_churn NS: nlload -c RATE for T + 10 s in the background; sets CHURN_PID
start_churn() {
	local i
	: >"$BENCH_TMP/churn.out"
	# a seed per window: with the same one a window would replay the previous one's toggles,
	# most of which the kernel already has (no change, no event)
	ip netns exec "$1" "$NLLOAD" -c "$RATE" -T $((T + 10)) -s "$((ROUTES + RATE + 7919 * PROBE_K))" \
		<"$BENCH_TMP/events-routes.txt" >"$BENCH_TMP/churn.out" 2>"$BENCH_TMP/churn.err" &
	CHURN_PID=$!
	BENCH_PIDS+=("$CHURN_PID")
	for ((i = 0; i < 1200; i++)); do
		grep -q '^churn ready' "$BENCH_TMP/churn.out" && return 0
		kill -0 "$CHURN_PID" 2>/dev/null || return 1
		sleep 0.05
	done
}

PROBE_K=0
# window NS LABEL CLIENTS CHURN(0/1) PROBES(0/1): one row
window() {
	local ns=$1 label=$2 nc=$3 churn=$4 probes=$5 eout=$BENCH_TMP/events.out i epid=
	local c0 c1 tk0 tk1 tw0 tw rss p50=n/a p99=n/a max=n/a seen=0 to=0
	[ "$churn" = 0 ] || start_churn "$ns" || bench_log "churn did not start: $(head -c 300 "$BENCH_TMP/churn.err")"
	: >"$eout"
	if [ "$nc" -gt 0 ] || [ "$probes" = 1 ]; then
		ip netns exec "$ns" "$NLLOAD" -e "$nc" -p "$PORT" -T "$T" -i $((probes ? 500 : 0)) \
			-k $((PROBE_K * 100000)) -x "$PROBE_TIMEOUT" >"$eout" 2>"$BENCH_TMP/events.err" &
		epid=$!
		BENCH_PIDS+=("$epid")
		for ((i = 0; i < 600; i++)); do
			grep -q '^events ready' "$eout" && break
			sleep 0.05
		done
	fi
	PROBE_K=$((PROBE_K + 1))
	c0=$(counters "$ns")
	tk0=$(cpu_ticks "$DAEMON_PID")
	tw0=$EPOCHREALTIME
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	sleep $((T / 2))
	rss=$(vm_kb "$DAEMON_PID" VmRSS)
	if [ -n "${epid:-}" ]; then
		wait "$epid"
	else
		sleep $((T - T / 2))
	fi
	tk1=$(cpu_ticks "$DAEMON_PID")
	tw=$(bench_elapsed "$tw0")
	c1=$(counters "$ns")
	if [ "$churn" = 1 ]; then
		bench_stop "$CHURN_PID"
	fi
	[ "$probes" = 0 ] || read -r p50 p99 max seen to < <(bench_percentiles "$eout" event)
	[ "$to" = 0 ] || max="$max ($to of $((seen + to)) not seen in ${PROBE_TIMEOUT} ms)"
	local d
	d=$(awk -v a="$c0" -v b="$c1" -v tw="$tw" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		np = y[1] - x[1]; nl = y[3] - x[3]
		printf "%.1f %s %s %.2f %.0f", np / tw, nl ? sprintf("%.1f", 1000 * (y[2] - x[2]) / nl) : "n/a",
			np ? sprintf("%.2f", 1000 * (y[4] - x[4]) / np) : "n/a", (y[5] - x[5]) / tw / 1048576,
			(y[6] - x[6]) / tw }')
	local pubs lat diffms mbs evr
	read -r pubs lat diffms mbs evr <<<"$d"
	local perstream=n/a
	if [ "$label" = held ] && [ -n "${RSS_IDLE:-}" ] && [ "$nc" -gt 0 ]; then
		perstream=$(awk -v a="$rss" -v b="$RSS_IDLE" -v n="$nc" 'BEGIN { printf "%.1f", (a - b) / n }')
	fi
	[ "$label" != idle ] || RSS_IDLE=$rss
	emit "| $BIN_LABEL | $ROUTES | $([ "$churn" = 1 ] && echo "$RATE" || echo 0) | $nc | $((seen + to)) | $p50 | $p99 | $max" \
		"| $(pct "$((${tk1% *} - ${tk0% *}))" "$tw") | $(pct "$((${tk1#* } - ${tk0#* }))" "$tw")" \
		"| $pubs | $evr | $lat | $diffms | $mbs | $((rss / 1024)) | $perstream | $load |"
	bench_log "$label: $(tail -n1 "$eout" 2>/dev/null), VmRSS $rss kB, window ${tw}s"
	sleep 1
}

run() { # BINARY LABEL WINDOWS...
	local bin=$1 ns kernel
	BIN_LABEL=$2
	shift 2
	bench_ns_create
	ns=$BENCH_NS
	bench_log "$BIN_LABEL: loading $ROUTES routes into $ns"
	bench_load_routes "$ns" "$ROUTES" || { bench_log "load failed"; return 1; }
	kernel=$(bench_count_routes "$ns")
	daemon_start "$ns" "$bin" && wait_routes "$ns" "$kernel" || { bench_log "rtsnapd not ready"; return 1; }
	bench_log "$BIN_LABEL: rtsnapd serves $kernel routes, VmRSS $(vm_kb "$DAEMON_PID" VmRSS) kB"
	for w in "$@"; do
		case $w in
		idle) window "$ns" idle 0 0 0 ;;
		held) window "$ns" held "$CLIENTS" 0 0 ;;
		churn) window "$ns" churn 0 1 1 ;;
		churn1) window "$ns" churn+1 1 1 1 ;;
		churnC) window "$ns" churn+C "$CLIENTS" 1 1 ;;
		esac
	done
	bench_stop "$DAEMON_PID"
	bench_ns_delete "$ns"
	bench_settle
}

bench_gen_routes "$ROUTES" >"$BENCH_TMP/events-routes.txt"
emit ""
emit "rtsnap bench_events (T=${T}s per window, $RATE changes/s, probe every 0.5 s) — $(date -u '+%Y-%m-%d %H:%M UTC')," \
	"$(nproc) cores, kernel $(uname -r), rtsnapd $RTSNAPD_ARGS, loadavg $(cut -d' ' -f1-3 /proc/loadavg) at start"
emit ""
emit "| rtsnapd | routes | churn/s | streams | probes x streams | delivery p50 ms | p99 ms | max ms | CPU user % | CPU sys % | publications/s | routes in events/s | publication latency ms (mean) | diff+render ms/publication | stream MB/s | RSS MB | RSS KB/stream | loadavg |"
emit "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
run "$RTSNAPD" "$(basename "$(dirname "$RTSNAPD")")/$(basename "$RTSNAPD")" idle held churn churn1 churnC
# shellcheck disable=SC2086 # a list of windows
[ -z "$BASE_RTSNAPD" ] || run "$BASE_RTSNAPD" "base" $BASE_WINDOWS
