#!/usr/bin/env bash
# bench/bench_metrics.sh [N...] — cost of a Prometheus scrape of rtsnapd's /metrics at N routes
# (default 1000 100000 1000000), beside what an exporter that dumps the table per scrape pays
# (node_exporter's network_route collector does one netlink dump per scrape): the netlink dump
# `ip -6 route show table all` of the same namespace.
#
# For each N: a fresh namespace (bench/lib.sh) with N routes over five tables plus EXPIRING
# routes with a lifetime (so the per-scrape expiry lookup has work), rtsnapd in it, then
#   - bytes per scrape, plain and gzip (curl size_download);
#   - latency per scrape with one client (wrk -c1, median and p99), plain and gzip;
#   - scrapes/s with CONNS concurrent clients (gzip), and rtsnapd CPU time per scrape
#     (utime+stime of the daemon over that run / requests);
#   - the netlink dump: `ip -6 route show table all >/dev/null`, median of RUNS, and its text size.
# The last columns compare: dump time / scrape time.
#
# Prints a markdown table on stdout (one row per N when done); progress on stderr. Needs root
# and wrk. Environment: DURATION=3 (seconds per wrk run), CONNS=8, EXPIRING=500, RUNS=3,
# SLOW=2, HEALTH_TIMEOUT=300, RTSNAPD=build/rtsnapd, OUT=FILE (also append the table there),
# loader knobs: see bench/lib.sh.
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
LISTEN=127.0.0.1:9816
URL=http://$LISTEN/metrics
DURATION=${DURATION:-3}
CONNS=${CONNS:-8}
EXPIRING=${EXPIRING:-500}
RUNS=${RUNS:-3}
SLOW=${SLOW:-2}
HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-300}
OUT=${OUT:-}

if [ $# -eq 0 ]; then set -- 1000 100000 1000000; fi
for n in "$@"; do
	case $n in '' | *[!0-9]*) bench_die "not a route count: $n" ;; esac
done
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
for tool in ip curl wrk awk; do
	command -v "$tool" >/dev/null || bench_die "missing $tool"
done
[ -x "$RTSNAPD" ] || bench_die "$RTSNAPD not built (make)"

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}

# wrk_run NS CONNS [HEADER]: wrk against $URL for $DURATION s; sets W_P50, W_P99 (ms),
# W_RPS and W_REQS.
wrk_run() {
	local ns=$1 c=$2 out
	shift 2
	out=$(ip netns exec "$ns" wrk -t"$((c < 2 ? 1 : 2))" -c"$c" -d"${DURATION}s" --latency \
		"${@/#/-H}" "$URL" 2>&1)
	# latency lines look like "50%  123.45us"; convert us/ms/s to ms
	W_P50=$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)
	W_P99=$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)
	W_RPS=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
	W_REQS=$(awk '/requests in/ { print $1 }' <<<"$out")
	if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
		bench_log "wrk reported errors: $(grep 'Non-2xx\|Socket errors' <<<"$out")"
	fi
}
to_ms() {
	awk '{ v = $1 + 0
		if ($1 ~ /us$/) v /= 1000; else if ($1 ~ /ms$/) v += 0; else if ($1 ~ /s$/) v *= 1000
		printf "%.3f\n", v }'
}

# CPU ticks (utime + stime) of PID
cpu_ticks() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }

# Start rtsnapd in NS and wait for its first snapshot; sets DAEMON_PID (the rtsnapd process).
start_daemon() {
	local ns=$1 deadline
	mkdir -p "$BENCH_TMP"
	bench_bg ip netns exec "$ns" "$RTSNAPD" --listen "$LISTEN" --interval 0 \
		2>>"$BENCH_TMP/rtsnapd-metrics.log"
	DAEMON_PID=$BENCH_BG_PID # ip netns exec execs rtsnapd: same pid
	deadline=$((SECONDS + HEALTH_TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		kill -0 "$DAEMON_PID" 2>/dev/null || { bench_log "rtsnapd exited"; return 1; }
		ip netns exec "$ns" curl -sf -o /dev/null --max-time 5 "http://$LISTEN/healthz" && return 0
		sleep 0.2
	done
	bench_log "rtsnapd not ready after ${HEALTH_TIMEOUT}s"
	return 1
}

bench_log "machine: $(nproc) cores, kernel $(uname -r), $(wrk --version 2>&1 | head -1)"
emit ""
emit "rtsnap bench_metrics — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r)," \
	"wrk ${DURATION}s per cell, $EXPIRING expiring routes added, dump: median of $RUNS"
emit ""
emit "| routes | scrape B plain | scrape B gzip | scrape ms p50 plain | p50 gzip | p99 gzip | scrapes/s ($CONNS clients, gzip) | rtsnapd CPU µs/scrape | netlink dump s | dump text B | dump/scrape |"
emit "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

for n in "$@"; do
	bench_ns_create
	ns=$BENCH_NS
	bench_log "N=$n: loading into $ns"
	if ! bench_load_routes "$ns" "$n" || ! bench_add_expiring "$ns" "$EXPIRING" 3600; then
		emit "| $n | load failed | | | | | | | | | |"
		bench_ns_delete "$ns"
		continue
	fi
	rows=$(bench_count_routes "$ns")
	bench_log "N=$n: kernel lists $rows routes"

	# the per-scrape exporter's cost: one netlink dump of every table
	bench_median_ns "$RUNS" "$SLOW" "$ns" ip -6 route show table all
	dump=$BENCH_T
	dumpb=$(ip -n "$ns" -6 route show table all | wc -c)
	bench_log "N=$n: ip -6 route show table all ${dump}s wall, ${BENCH_SYS}s sys, $dumpb bytes"

	if ! start_daemon "$ns"; then
		emit "| $n | daemon failed | | | | | | | $(bench_fmt "$dump") | $dumpb | |"
		bench_ns_delete "$ns"
		continue
	fi
	bplain=$(ip netns exec "$ns" curl -s -o /dev/null -w '%{size_download}' "$URL")
	bgzip=$(ip netns exec "$ns" curl -s -o /dev/null -H 'Accept-Encoding: gzip' -w '%{size_download}' "$URL")
	ip netns exec "$ns" curl -s --compressed "$URL" | grep -q '^rtsnap_routes{' ||
		bench_log "N=$n: warning: the gzip body does not decompress to an exposition"
	wrk_run "$ns" 1
	p50plain=$W_P50
	wrk_run "$ns" 1 'Accept-Encoding: gzip'
	p50gz=$W_P50 p99gz=$W_P99
	t0=$(cpu_ticks "$DAEMON_PID")
	wrk_run "$ns" "$CONNS" 'Accept-Encoding: gzip'
	t1=$(cpu_ticks "$DAEMON_PID")
	rps=$W_RPS
	cpu=$(awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v r="$W_REQS" \
		'BEGIN { if (r > 0) printf "%.0f", t / hz / r * 1e6; else print "n/a" }')
	bench_log "N=$n: /metrics $bplain B plain, $bgzip B gzip; p50 ${p50plain} ms plain," \
		"${p50gz} ms gzip (p99 ${p99gz}); $rps scrapes/s with $CONNS clients; ${cpu} us CPU/scrape;" \
		"rtsnapd $(grep -E '^VmRSS' "/proc/$DAEMON_PID/status" | tr -s ' \t' ' ')"
	ratio=$(awk -v d="$dump" -v s="$p50gz" 'BEGIN {
		if (d !~ /^[0-9.]+$/ || s + 0 == 0) print "n/a"; else printf "%.0f×\n", d * 1000 / s }')
	emit "| $n | $bplain | $bgzip | $p50plain | $p50gz | $p99gz | $rps | $cpu | $(bench_fmt "$dump") | $dumpb | $ratio |"
	bench_stop "$DAEMON_PID"
	DAEMON_PID=
	bench_ns_delete "$ns"
	bench_settle
done
