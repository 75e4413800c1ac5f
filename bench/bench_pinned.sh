#!/usr/bin/env bash
# bench/bench_pinned.sh — rtsnapd's RSS with 100 slow readers under churn (issue 13, item 4).
#
# ROUTES routes in one table (loaded once), one route whose gateway changes every 0.2-1 s,
# and READERS slow readers (curl --limit-rate 1k; 3 of 4 on /ipv6_route, 1 of 4 on /routes),
# started one every 0.2 s and held for HOLD seconds. For each variant: VmRSS before the
# readers, its peak while they read (sampled every 0.5 s), VmRSS 5 s after they left, and
# the responses the bound dropped. Prints a markdown table on stdout; progress on stderr.
#
# Variants (VARIANTS, ';'-separated "label|binary|arguments"), default:
#   before     BEFORE binary (no bound, glibc's dynamic mmap threshold), if BEFORE is set
#   bound off  build/rtsnapd --max-pinned-bytes 0
#   bound 2x   build/rtsnapd (the default: 2x the current snapshot)
#   bound 1x   build/rtsnapd --max-pinned-bytes 1x
# Build a "before" binary from the commit before the change, e.g.
#   git worktree add /tmp/rtsnap-before 4286f55 && make -C /tmp/rtsnap-before
#   BEFORE=/tmp/rtsnap-before/build/rtsnapd bench/bench_pinned.sh
# Needs root; runs in a namespace of its own, removed on exit. Memory: the unbounded
# variants reach READERS x the snapshot (about 4 GB at 100 000 routes).
set -u
. "$(dirname "$0")/lib.sh"
ROUTES=${ROUTES:-100000}
READERS=${READERS:-100}
HOLD=${HOLD:-30}
BEFORE=${BEFORE:-}
BIN=$BENCH_ROOT/build/rtsnapd
if [ -z "${VARIANTS:-}" ]; then
	VARIANTS="bound off|$BIN|--max-pinned-bytes 0;bound 2x (default)|$BIN|;bound 1x|$BIN|--max-pinned-bytes 1x"
	[ -z "$BEFORE" ] || VARIANTS="before|$BEFORE|;$VARIANTS"
fi
URL='http://[::1]:9816'
[ "$(id -u)" = 0 ] || bench_die "needs root"
mkdir -p "$BENCH_TMP"

bench_ns_create
NS=$BENCH_NS
bench_log "loading $ROUTES routes"
awk -v n="$ROUTES" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "route add 2001:%x:%x::/48 via 2001:db8:ff00::2 table 100\n", 3514 + int(i / 65536), i % 65536
}' | ip -6 -n "$NS" -batch - || bench_die "route load failed"

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
metric() { ip netns exec "$NS" curl -sg --max-time 10 "$URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

reader() { # I END: ask, read at 1 kB/s, ask again when cut off, until END
	local i=$1 end=$2 path=/ipv6_route left n=0
	[ $((i % 4)) = 3 ] && path=/routes
	while left=$((end - SECONDS)) && [ $left -gt 0 ] && [ $n -lt 200 ]; do
		n=$((n + 1))
		ip netns exec "$NS" curl -sg --limit-rate 1k --max-time "$left" -o /dev/null "$URL$path"
		[ $? = 28 ] && break
		sleep 0.5
	done
}

echo "| variant | routes | snapshot MB | RSS before MB | RSS peak, $READERS slow readers MB | RSS after they left MB | responses dropped |"
echo "|---|---:|---:|---:|---:|---:|---:|"
IFS=';' read -ra VLIST <<<"$VARIANTS"
for v in "${VLIST[@]}"; do
	IFS='|' read -r label bin args <<<"$v"
	bench_log "$label: $bin $args"
	# shellcheck disable=SC2086
	bench_bg ip netns exec "$NS" "$bin" --listen '[::1]:9816' --interval 0 $args
	dpid=$BENCH_BG_PID
	for i in $(seq 100); do
		ip netns exec "$NS" curl -sgf --max-time 1 "$URL/healthz" >/dev/null 2>&1 && break
		sleep 0.2
	done
	pid=$(pgrep -P "$dpid" -n rtsnapd || echo "$dpid") # ip netns exec may exec or fork
	for k in 1 2 3; do
		ip -6 -n "$NS" route replace 2001:db8:ee::/64 via 2001:db8:ff00::$((2 + k))
		sleep 0.5
	done
	sleep 1
	snap=$(metric rtsnap_snapshot_bytes)
	rss0=$(rss_kb "$pid")
	end=$((SECONDS + HOLD))
	(
		k=0
		while [ $SECONDS -lt $((end + 3)) ] && [ $k -lt 1000 ]; do
			k=$((k + 1))
			ip -6 -n "$NS" route replace 2001:db8:ee::/64 via 2001:db8:ff00::$((2 + k % 50)) 2>/dev/null
			sleep "0.$((2 + RANDOM % 8))"
		done
	) &
	cpid=$!
	BENCH_PIDS+=("$cpid")
	(
		for i in $(seq "$READERS"); do
			reader "$i" "$end" &
			sleep 0.2
		done
		wait # the readers only: this subshell's children
	) &
	lpid=$!
	BENCH_PIDS+=("$lpid")
	peak=$rss0
	while [ $SECONDS -lt "$end" ]; do
		r=$(rss_kb "$pid")
		[ "$r" -gt "$peak" ] && peak=$r
		sleep 0.5
	done
	wait "$lpid" "$cpid"
	sleep 5
	rss1=$(rss_kb "$pid")
	dropped=$(metric 'rtsnap_http_responses_dropped_total{reason="pinned_bytes"}')
	smb=n/a
	[ -z "$snap" ] || smb=$(mb $((snap / 1024)))
	echo "| $label | $ROUTES | $smb | $(mb "$rss0") | $(mb "$peak") | $(mb "$rss1") | ${dropped:-n/a} |"
	bench_stop "$dpid"
	BENCH_PIDS=() # the rest have ended
done
