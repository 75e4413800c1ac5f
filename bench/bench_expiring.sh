#!/usr/bin/env bash
# bench/bench_expiring.sh — what the check of the expiring routes costs (src/collector/silent.c).
#
# An append that duplicates an expiring route moves or clears its expiry with EEXIST and no
# message; rtsnapd re-reads the expiring routes of its published snapshot every 2 s (one strict
# dump per distinct table, device and protocol among them), rounds spaced at least 20 times
# their own duration. For each BASE permanent routes and K expiring ones (bench_gen_expiring:
# /64s alternating main and table 100, via d0, which also carries a third of the permanent
# routes), with rtsnapd at rest for W seconds: the rounds run, the dumps per round, a round's
# duration (median, from the daemon's debug log), rtsnapd's CPU (user + system, which includes
# the kernel's side of the dumps), and how long a silent change (an append moving one route's
# expiry from an hour to 100 s) took to be served by /routes. A markdown table on stdout.
#
# Needs root; run under `flock /work/heavy.lock`. Environment: BASES ["100000 500000"],
# KS ["0 1000 10000"], W [30], RTSNAPD [build/rtsnapd], PORT [9816].
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BASES=${BASES:-"100000 500000"}
KS=${KS:-"0 1000 10000"}
W=${W:-30}
RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
PORT=${PORT:-9816}
HZ=$(getconf CLK_TCK)
[ "$(id -u)" = 0 ] || bench_die "needs root"
mkdir -p "$BENCH_TMP"

status() { ip netns exec "$1" curl -sf -g --max-time 2 "http://[::1]:$PORT/status"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo "| permanent routes | expiring routes | rounds in ${W} s | dumps per round | round ms (median) | rtsnapd CPU % | silent change served after ms |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for base in $BASES; do
	for k in $KS; do
		bench_ns_create
		ns=$BENCH_NS
		bench_load_routes "$ns" "$base" || bench_die "load failed"
		[ "$k" = 0 ] || bench_add_expiring "$ns" "$k" 3600 || bench_die "expiring routes"
		want=$(bench_count_routes "$ns")
		log=$BENCH_TMP/expiring.$base.$k.log
		bench_bg ip netns exec "$ns" "$RTSNAPD" --listen "[::1]:$PORT" --interval 0 \
			--log-level debug 2>"$log"
		pid=$BENCH_BG_PID
		for _ in $(seq 600); do
			n=$(status "$ns" | jq -r '.routes // 0' 2>/dev/null)
			[ "${n:-0}" -ge $((want * 9 / 10)) ] && break
			sleep 0.2
		done
		sleep 3 # the start-up's publications and reclaim
		d0=$(status "$ns" | jq '.collector.targeted_dumps.expiring')
		r0=$(grep -c 'expiring routes checked' "$log")
		t0=$(ticks "$pid")
		sleep "$W"
		t1=$(ticks "$pid")
		d1=$(status "$ns" | jq '.collector.targeted_dumps.expiring')
		rounds=$(($(grep -c 'expiring routes checked' "$log") - r0))
		ms=$(grep -o 'checked: [0-9]* dumps in [0-9]* ms' "$log" | tail -n "+$((r0 + 1))" |
			awk '{ print $5 }' | sort -g | awk '{ v[NR] = $0 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }')
		cpu=$(awk -v t=$((t1 - t0)) -v s="$W" -v hz="$HZ" 'BEGIN { printf "%.1f", 100 * t / hz / s }')
		per=$(awk -v d=$((d1 - d0)) -v r="$rounds" 'BEGIN { print (r ? d / r : "-") }')
		served=-
		if [ "$k" != 0 ]; then
			# the first expiring route (bench_gen_expiring: main, d0, via ff00::2)
			ip -n "$ns" -6 route append 2001:db8:e000::/64 dev d0 via 2001:db8:ff00::2 table 254 \
				expires 100 2>/dev/null
			s0=$EPOCHREALTIME
			for _ in $(seq 400); do
				e=$(ip netns exec "$ns" curl -sf -g "http://[::1]:$PORT/routes?prefix=2001:db8:e000::/64" |
					jq '.[0].expires // 0')
				[ "${e:-0}" -gt 0 ] && [ "${e:-0}" -le 100 ] && break
				sleep 0.05
			done
			served=$(awk -v a="$s0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", 1000 * (b - a) }')
		fi
		echo "| $base | $k | $rounds | $per | $ms | $cpu | $served |"
		bench_stop "$pid"
		bench_cleanup
		bench_settle 2>/dev/null
	done
done
