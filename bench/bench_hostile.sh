#!/usr/bin/env bash
# bench/bench_hostile.sh — /healthz latency for another client while one local user floods
# rtsnapd with connections (issue 13, item 2): none, 5 000 idle connections, 1 100 slowloris
# connections (one header byte a second), 1 100 kept-alive connections that each send one
# valid request and then trickle the next one (one header byte a second; reopened as soon as
# the server closes them). For each rtsnapd binary given (default
# build/rtsnapd; e.g. BINARIES="old/rtsnapd build/rtsnapd" for before/after) and each case,
# PROBES sequential /healthz requests (curl, 15 s limit each; a timeout or an answer other than
# 200 counts as 15 s) after the flood has been held for 2 s; then the flood runs to the end of
# its HOLD seconds, and its client reports how many of its connections the server closed and,
# for keepalive, how long the trickled ones had been held when it did (p50 / max), and how
# many were still trickling at the end. Prints a markdown table on stdout; progress on stderr.
# Needs root and python3; runs in a namespace of its own, removed on exit.
#
# Environment: BINARIES, PROBES=50, HOLD=40 (seconds each flood is held at most), ARGS
# (extra rtsnapd arguments, e.g. "--http-timeout 3"), CASES (e.g. CASES="keepalive_1100": a
# space-separated list of MODE_N; default all four).
set -u
. "$(dirname "$0")/lib.sh"
BINARIES=${BINARIES:-$BENCH_ROOT/build/rtsnapd}
PROBES=${PROBES:-50}
HOLD=${HOLD:-40}
ARGS=${ARGS:-}
CASES=${CASES:-none_0 idle_5000 slowloris_1100 keepalive_1100}
FLOOD=$BENCH_ROOT/tests/lib/flood.py
[ "$(id -u)" = 0 ] || bench_die "needs root"
ulimit -n "$(ulimit -Hn)"
mkdir -p "$BENCH_TMP"

# probe: PROBES /healthz requests; prints "answered/PROBES p50 p99" in ms.
probe() {
	local i
	for i in $(seq "$PROBES"); do
		ip netns exec "$BENCH_NS" curl -sg -o /dev/null --max-time 15 \
			-w '%{http_code} %{time_total}\n' 'http://[::1]:9816/healthz'
	done | awk -v n="$PROBES" '{ t[++k] = ($1 == 200 ? $2 : 15); ok += ($1 == 200) } END {
		for (i = 2; i <= k; i++) { v = t[i]; for (j = i - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
		i50 = int(k * 0.5 + 0.5); i99 = int(k * 0.99 + 0.5); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
		printf "%d/%d | %.1f | %.1f\n", ok, n, t[i50] * 1000, t[i99] * 1000 }'
}

bench_ns_create
echo "| rtsnapd | flood | /healthz answered | p50 ms | p99 ms | flood connections closed by the server | trickle held s, p50 / max |"
echo "|---|---|---:|---:|---:|---:|---:|"
for bin in $BINARIES; do
	for c in $CASES; do
		set -- ${c/_/ }
		bench_log "$bin: $1 $2"
		# shellcheck disable=SC2086
		bench_bg ip netns exec "$BENCH_NS" "$bin" --listen '[::1]:9816' $ARGS
		dpid=$BENCH_BG_PID
		for i in $(seq 50); do
			ip netns exec "$BENCH_NS" curl -sgf --max-time 1 'http://[::1]:9816/healthz' >/dev/null 2>&1 && break
			sleep 0.2
		done
		fpid=
		if [ "$1" != none ]; then
			bench_bg ip netns exec "$BENCH_NS" python3 "$FLOOD" ::1 9816 "$1" "$2" "$HOLD" \
				>"$BENCH_TMP/flood.out" 2>&1
			fpid=$BENCH_BG_PID
			for i in $(seq 100); do grep -q '^ready' "$BENCH_TMP/flood.out" && break; sleep 0.2; done
			sleep 2
		fi
		res=$(probe)
		if [ -z "$fpid" ]; then
			echo "| $bin | $1 $2 | $res | - | - |"
			bench_stop "$dpid"
			continue
		fi
		# let the flood run its HOLD seconds, then its summary: connections closed by the
		# server, and for keepalive how long the trickled ones were held until it closed them
		for i in $(seq $((HOLD * 2 + 10))); do kill -0 "$fpid" 2>/dev/null || break; sleep 0.5; done
		bench_stop "$fpid"
		awk -v m="$1" -v r="$res" -v b="$bin" -v c="$1 $2" 'END {
			for (i = 1; i < NF; i++) v[$i] = $(i + 1)
			held = m == "keepalive" ? sprintf("%s / %s", v["hold_p50"], v["hold_max"]) : "-"
			if (m == "keepalive" && v["still_trickling"] > 0)
				held = held sprintf(" (%d still trickling, longest %s s)", v["still_trickling"], v["longest_trickling"])
			printf "| %s | %s | %s | %s | %s |\n", b, c, r, v["closed_by_server"], held
		}' "$BENCH_TMP/flood.out" </dev/null
		bench_stop "$dpid"
	done
done
