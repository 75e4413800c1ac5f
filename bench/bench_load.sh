#!/usr/bin/env bash
# bench/bench_load.sh [N...] — how fast can the benchmark namespace be filled?
# For each N (default 10000 100000 1000000) loads the same generated routes
# (bench_gen_routes in bench/lib.sh) into a fresh namespace with each loader
# and prints a markdown table of wall seconds, plus the kernel's unreclaimable
# slab growth per route (measured with the default loader).
#
#   nlload xJ   bench/nlload.c, J = BENCH_LOAD_JOBS parallel processes (default)
#   nlload x1   one process
#   ip -batch   `ip -6 -batch -`, one process (parallel ip -batch is slower)
#
# Environment: LOADERS="nlload ip" (which loaders), IP_MAX=1000000 (skip
# ip -batch above this many routes).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IP_MAX=${IP_MAX:-1000000}
[ $# -gt 0 ] || set -- 10000 100000 1000000
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"

slab_kb() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }

# load_once LOADER JOBS N: prints seconds, or "failed".
load_once() {
	local s
	bench_ns_create
	if BENCH_LOADER=$1 BENCH_LOAD_JOBS=$2 bench_load_routes "$BENCH_NS" "$3" &&
		[ "$(bench_count_routes "$BENCH_NS")" -ge "$3" ]; then
		s=$(bench_fmt "$BENCH_LOAD_SECONDS")
	else
		s=failed
	fi
	bench_ns_delete "$BENCH_NS"
	bench_settle
	echo "$s"
}

echo
echo "rtsnap bench_load — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r), $(ip -V | sed 's/ip utility, //; s/,.*//'), loadavg $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
echo "| routes | nlload x$BENCH_LOAD_JOBS s | nlload x1 s | ip -batch s | kernel slab B/route |"
echo "|---:|---:|---:|---:|---:|"
for n in "$@"; do
	case $n in '' | *[!0-9]*) bench_die "not a route count: $n" ;; esac
	bench_log "N=$n"
	# slab growth, measured on its own namespace
	bench_settle
	s0=$(slab_kb)
	bench_ns_create
	bench_load_routes "$BENCH_NS" "$n"
	par=$(bench_fmt "$BENCH_LOAD_SECONDS")
	slab=$(awk -v a="$s0" -v b="$(slab_kb)" -v n="$n" 'BEGIN { printf "%.0f", (b - a) * 1024 / n }')
	bench_ns_delete "$BENCH_NS"
	bench_settle
	one=$(load_once nlload 1 "$n")
	if [ "$n" -le "$IP_MAX" ]; then ipb=$(load_once ip 1 "$n"); else ipb="skipped (>$IP_MAX)"; fi
	echo "| $n | $par | $one | $ipb | $slab |"
done
