#!/usr/bin/env bash
# bench/bench_http.sh — the HTTP front door under many connections, A/B in one run.
#
# Loads ROUTES routes (bench_gen_routes) into one namespace, then for each rtsnapd binary in
# BINARIES ("NAME=PATH ...", each in turn, ROUNDS times, a fresh daemon each) runs wrk for
# DURATION seconds per cell against /healthz, /metrics and /routes/lookup at CONNS connections,
# and against /ipv6_route (a full read) at FULL_CONNS. Prints a markdown table: requests/s,
# p50 and p99 latency, wrk's socket errors (timeouts), and the ratio of requests/s to the same
# endpoint at the first connection count of the same daemon. wrk shares the machine's cores
# with rtsnapd: compare rows of one run, not runs of different machines.
#
# Needs root, wrk, curl. Environment: BINARIES [new=build/rtsnapd], ROUTES [100000],
# CONNS ["32 256 1024"], FULL_CONNS ["8 64"], DURATION [3], ROUNDS [1], OUT=FILE (append the
# table).
set -u
BENCH_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$BENCH_ROOT/bench/lib.sh"
cd "$BENCH_ROOT" || exit 1

BINARIES=${BINARIES:-"new=build/rtsnapd"}
ROUTES=${ROUTES:-100000}
CONNS=${CONNS:-"32 256 1024"}
FULL_CONNS=${FULL_CONNS:-"8 64"}
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-1}
OUT=${OUT:-}
LISTEN='[::1]:9816'
[ "$(id -u)" = 0 ] || bench_die "needs root"
for tool in ip curl wrk awk; do command -v "$tool" >/dev/null || bench_die "missing $tool"; done
# as many descriptors as allowed: wrk needs one per connection
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}
to_ms() {
	awk '{ v = $1 + 0
		if ($1 ~ /us$/) v /= 1000; else if ($1 ~ /ms$/) v += 0; else if ($1 ~ /s$/) v *= 1000
		printf "%.2f\n", v }'
}

# cell NS PATH CONNS: one wrk run; prints "rps p50 p99 errors"
cell() {
	local ns=$1 path=$2 c=$3 out rps p50 p99 err
	out=$(ip netns exec "$ns" wrk -t2 -c"$c" -d"${DURATION}s" --timeout 2s --latency \
		"http://$LISTEN$path" 2>&1)
	rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
	p50=$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)
	p99=$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)
	err=$(awk '/Socket errors/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' <<<"$out")
	echo "${rps:-0} ${p50:--} ${p99:--} ${err:-0}"
}

bench_ns_create
ns=$BENCH_NS
bench_log "loading $ROUTES routes into $ns"
bench_load_routes "$ns" "$ROUTES" || bench_die "load failed"
emit ""
emit "rtsnap bench_http — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r)," \
	"$ROUTES routes, wrk ${DURATION}s per cell (2 threads, 2 s timeout)"
emit ""
emit "| daemon | round | path | conns | req/s | p50 ms | p99 ms | socket errors | req/s vs first |"
emit "|---|---:|---|---:|---:|---:|---:|---:|---:|"
for ((round = 1; round <= ROUNDS; round++)); do
	for b in $BINARIES; do
		name=${b%%=*} bin=${b#*=}
		[ -x "$bin" ] || bench_die "no executable $bin"
		bench_bg ip netns exec "$ns" "$bin" --listen "$LISTEN" --interval 0 \
			2>>"${TMPDIR:-/tmp}/bench_http-$name.log"
		pid=$BENCH_BG_PID
		for i in $(seq 1 300); do
			ip netns exec "$ns" curl -sf -o /dev/null --max-time 5 "http://$LISTEN/healthz" && break
			sleep 0.2
		done
		for path in /healthz /metrics "/routes/lookup?addr=2001:db8:ff00::5" /ipv6_route; do
			conns=$CONNS
			[ "$path" = /ipv6_route ] && conns=$FULL_CONNS
			first=
			for c in $conns; do
				read -r rps p50 p99 err <<<"$(cell "$ns" "$path" "$c")"
				[ -n "$first" ] || first=$rps
				emit "| $name | $round | ${path%%\?*} | $c | $rps | $p50 | $p99 | $err | $(bench_ratio "$rps" "$first") |"
				sleep 1
			done
		done
		bench_stop "$pid"
		sleep 2
	done
done
