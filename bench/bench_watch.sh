#!/usr/bin/env bash
# bench/bench_watch.sh — what watched routes (--watch-file) cost.
#
# Two parts, each a markdown table on stdout (details on stderr):
#   churn   bench_churn.sh's churn part at ROUTES routes and RATE changes/s, on one loaded
#           namespace, with rtsnapd run twice: without watches and with WATCHES watches
#           (half exact prefixes, half lookups of an address inside a route, spread evenly
#           over the routes the churn picks from, so some of them are churned): publications,
#           build ms (mean; the watches are evaluated inside it), CPU, probe latency.
#   scrape  on a namespace loaded with ROUTES routes, at rest: the time of GET /metrics and
#           GET /watch (curl's time_total, median of SCRAPES), without and with the watches.
#
# Needs root. See bench/README-watch.md.
#
# Environment (defaults in brackets):
#   ROUTES [1000000]  RATE [1000]  WATCHES [1000]  T seconds per churn window [20]
#   SCRAPES [21]      PARTS ["churn scrape"]
#   RTSNAPD [build/rtsnapd]  PORT [9816]  OUT=FILE also append the tables to FILE
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUTES=${ROUTES:-1000000} RATE=${RATE:-1000} WATCHES=${WATCHES:-1000} T=${T:-20}
SCRAPES=${SCRAPES:-21} PARTS=${PARTS:-"churn scrape"}
RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
PORT=${PORT:-9816}
URL="http://[::1]:$PORT"
OUT=${OUT:-}
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
[ -x "$RTSNAPD" ] || bench_die "no $RTSNAPD (make -C $BENCH_ROOT all)"
mkdir -p "$BENCH_TMP"
F=$BENCH_TMP/watches

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}

# gen_watches: WATCHES specs over bench_gen_routes' routes, evenly spaced: even ones the
# route itself (its prefix in its table), odd ones a lookup of its first address there.
gen_watches() {
	bench_gen_routes "$ROUTES" | awk -v N="$ROUTES" -v W="$WATCHES" '
	BEGIN { step = int(N / W); if (step < 1) step = 1 }
	(NR - 1) % step == 0 && k < W {
		split($1, a, "/")
		if (k % 2 == 0) printf "p%d=%s table %s\n", k, $1, $2
		else printf "l%d=lookup:%s table %s\n", k, a[1], $2
		k++
	}'
}

gen_watches >"$F"
bench_log "$(wc -l <"$F") watches in $F ($(grep -c '^p' "$F") prefixes, $(grep -c '^l' "$F") lookups)"

churn_part() {
	local here
	here=$(dirname "${BASH_SOURCE[0]}")
	PARTS=churn ROUTES=$ROUTES RATES="0 $RATE" T=$T OUT=$OUT QUICK=0 \
		VARIANTS="watches0=$RTSNAPD --interval 0; watches$WATCHES=$RTSNAPD --interval 0 --watch-file $F" \
		bash "$here/bench_churn.sh" | grep -v '^$' | grep -v '^rtsnap bench_churn' |
		sed 's/^| build |/| watches |/'
}

# scrape_ms NS PATH: median of SCRAPES times of GET PATH, ms.
scrape_ms() {
	local ns=$1 path=$2 i all=()
	for ((i = 0; i < SCRAPES; i++)); do
		all+=("$(ip netns exec "$ns" curl -sg -o /dev/null -w '%{time_total}' "$URL$path")")
	done
	bench_median "${all[@]}" | awk '{ printf "%.2f", 1000 * $1 }'
}

scrape_part() {
	local ns pid n args bytes
	bench_ns_create
	ns=$BENCH_NS
	bench_log "scrape: loading $ROUTES routes into $ns"
	bench_load_routes "$ns" "$ROUTES" || bench_die "load failed"
	n=$(bench_count_routes "$ns")
	emit ""
	emit "rtsnap bench_watch scrape — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $n routes at rest, median of $SCRAPES"
	emit ""
	emit "| watches | GET /metrics ms | /metrics bytes | GET /watch ms | /watch bytes |"
	emit "|---:|---:|---:|---:|---:|"
	for args in "" "--watch-file $F"; do
		# shellcheck disable=SC2086 # the options, split
		bench_bg ip netns exec "$ns" "$RTSNAPD" --interval 0 --listen "[::1]:$PORT" $args \
			2>>"$BENCH_TMP/rtsnapd.log"
		pid=$BENCH_BG_PID
		local got=0
		while [ "${got:-0}" -lt "$n" ]; do
			got=$(ip netns exec "$ns" curl -sgf "$URL/status" 2>/dev/null | jq -r '.routes // 0')
			kill -0 "$pid" 2>/dev/null || bench_die "rtsnapd exited"
			sleep 0.2
		done
		sleep 2
		ip netns exec "$ns" curl -sg -o /dev/null "$URL/metrics" # the cached per-snapshot part
		bytes=$(ip netns exec "$ns" curl -sg "$URL/metrics" | wc -c)
		emit "| $([ -n "$args" ] && wc -l <"$F" || echo 0) | $(scrape_ms "$ns" /metrics) | $bytes" \
			"| $(scrape_ms "$ns" /watch) | $(ip netns exec "$ns" curl -sg "$URL/watch" | wc -c) |"
		bench_stop "$pid"
	done
	bench_ns_delete "$ns"
}

for part in $PARTS; do
	case $part in
	churn) churn_part ;;
	scrape) scrape_part ;;
	*) bench_die "unknown part $part (churn, scrape)" ;;
	esac
done
