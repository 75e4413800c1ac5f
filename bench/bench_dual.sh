#!/usr/bin/env bash
# bench/bench_dual.sh — IPv4 beside IPv6 in one namespace (rtsnapd --family all).
#
# Loads N6 IPv6 routes (bench_gen_routes) and N4 IPv4 routes (below) into one namespace, then
# prints one markdown table per part:
#   start    the kernel's own listing (`ip -4 route show table all` then `ip -6 ...`, JSON as
#            rtsnapd prints it: -j) against `rtsnapd --once --family all --format json`
#            (median of RUNS each, alternated) and against a daemon's start until /status
#            counts every route of both families
#   churn    CHURN changes/s on each family at once (one nlload -c per family, the IPv4 one
#            toggling "via 10.254.0.2 dev d0" and "via 10.255.1.2 dev d1"), a probe route per
#            family every 0.5 s (nlload -p, -p -4), T seconds: probe p50/p99/max per family,
#            rtsnapd's CPU (user + system, % of one core) for both together, RSS
#   memory   bytes per IPv4 route: VmRSS of a --family all daemon minus a --family inet6 one
#            on the same tables, over N4
#   read     a full /route read (curl, its own time_total) against the kernel's
#            /proc/net/route (cat), best of RUNS each, alternated
#
# The IPv4 routes: route i has its own /24 at 20.0.0.0 + 256 i (so N4 up to 4 000 000 stays
# below 84.0.0.0); i % 8 in 0..5 the /24 itself, 6 its upper /25, 7 its .1/32. 3/8 via
# 10.254.0.2 dev d0, 2/8 via 10.253.0.2 dev d2, 3/8 on d1; every 20th in table 100.
#
# Needs root, curl, jq. Every namespace and process it starts is removed by bench/lib.sh's trap.
# Environment: N6 [1000000], N4 [1000000], CHURN [1000], T [20], RUNS [3],
# BIN [build/rtsnapd], PARTS ["start churn memory read"].
set -u
BENCH_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$BENCH_ROOT/bench/lib.sh"
cd "$BENCH_ROOT" || exit 1

N6=${N6:-1000000}
N4=${N4:-1000000}
CHURN=${CHURN:-1000}
T=${T:-20}
RUNS=${RUNS:-3}
BIN=${BIN:-build/rtsnapd}
PARTS=${PARTS:-"start churn memory read"}
PORT=9816
URL="http://[::1]:$PORT"
[ "$(id -u)" = 0 ] || bench_die "needs root"
for tool in ip curl jq awk; do command -v "$tool" >/dev/null || bench_die "missing $tool"; done
[ -x "$BIN" ] || bench_die "no $BIN (make first)"
NL=$(bench_nlload) || bench_die "cannot build bench/nlload.c"
TCK=$(getconf CLK_TCK)

# gen4 N [WORKER JOBS]: the IPv4 routes as nlload lines
gen4() {
	awk -v N="$1" -v W="${2:-0}" -v P="${3:-1}" 'BEGIN {
		for (i = W; i < N; i += P) {
			b = 20 * 16777216 + i * 256; j = i % 8
			a = sprintf("%d.%d.%d", int(b / 16777216), int(b / 65536) % 256, int(b / 256) % 256)
			if (j <= 5) d = a ".0/24"; else if (j == 6) d = a ".128/25"; else d = a ".1/32"
			if (j == 0 || j == 3 || j == 5) { dev = "d0"; gw = "10.254.0.2" }
			else if (j == 1 || j == 6)      { dev = "d2"; gw = "10.253.0.2" }
			else                            { dev = "d1"; gw = "-" }
			printf "%s %d %s %s 0\n", d, i % 20 == 7 ? 100 : 254, dev, gw
		}
	}'
}

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$1/stat"; }
vm_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
pct() { # TICKS SECONDS: % of one core
	awk -v t="$1" -v s="$2" -v h="$TCK" 'BEGIN { printf "%.1f", 100 * t / h / s }'
}
# served NS: "IPV6 IPV4" routes the daemon's /status counts (empty when it does not answer)
served() {
	ip netns exec "$1" curl -sg --max-time 2 "$URL/status" 2>/dev/null |
		jq -r '"\(.routes) \(.inet.routes // 0)"' 2>/dev/null
}
# start_daemon NS ARGS...: rtsnapd in the background; DAEMON_PID; waits until it serves
# K6 IPv6 and K4 IPv4 routes (globals), at most 120 s; DAEMON_READY seconds
start_daemon() {
	local ns=$1 t0 s i
	shift
	t0=$EPOCHREALTIME
	bench_bg ip netns exec "$ns" "$BIN" --listen "[::1]:$PORT" --interval 0 "$@"
	DAEMON_PID=$BENCH_BG_PID
	for i in $(seq 1 2400); do
		s=$(served "$ns")
		if [ -n "$s" ] && [ "${s% *}" -ge "$K6" ] && { [ "$K4" = 0 ] || [ "${s#* }" -ge "$K4" ]; }; then
			DAEMON_READY=$(bench_elapsed "$t0")
			# the daemon's own pid (ip netns exec execs it)
			return 0
		fi
		sleep 0.05
	done
	bench_die "rtsnapd did not serve $K6 + $K4 routes in 120 s (last: ${s:-nothing})"
}

bench_log "namespace and routes: $N6 IPv6, $N4 IPv4"
bench_ns_create
NS=$BENCH_NS
ip -n "$NS" addr add 10.254.0.1/16 dev d0
ip -n "$NS" addr add 10.255.0.1/16 dev d1
ip -n "$NS" addr add 10.253.0.1/16 dev d2
ip -n "$NS" neigh replace 10.254.0.2 lladdr 02:00:00:00:00:12 dev d0 nud permanent
ip -n "$NS" neigh replace 10.253.0.2 lladdr 02:00:00:00:02:12 dev d2 nud permanent
ip -n "$NS" neigh replace 10.255.1.2 lladdr 02:00:00:00:01:12 dev d1 nud permanent
bench_load_routes "$NS" "$N6" || bench_die "loading the IPv6 routes failed"
L6=$BENCH_LOAD_SECONDS
t0=$EPOCHREALTIME
pids=()
for ((w = 0; w < BENCH_LOAD_JOBS; w++)); do
	gen4 "$N4" "$w" "$BENCH_LOAD_JOBS" | ip netns exec "$NS" "$NL" 2>"$BENCH_TMP/load4.$w.log" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || bench_die "loading the IPv4 routes failed: $(cat "$BENCH_TMP"/load4.*.log)"; done
L4=$(bench_elapsed "$t0")
K6=$(ip -n "$NS" -6 route show table all | wc -l)
K4=$(ip -n "$NS" -4 route show table all | wc -l)
bench_log "loaded: IPv6 $K6 routes in $L6 s, IPv4 $K4 routes in $L4 s"

echo
echo "rtsnap bench_dual — $(date -u '+%F %H:%M') UTC, $(nproc) cores, kernel $(uname -r), $K6 IPv6 + $K4 IPv4 routes in one namespace ($(git -C "$BENCH_ROOT" log -1 --format=%h 2>/dev/null))"

if [[ " $PARTS " == *" start "* ]]; then
	ips=() ons=()
	for ((r = 0; r < RUNS; r++)); do
		ips+=("$(ip netns exec "$NS" bash -c 'TIMEFORMAT=%3R; { time { ip -j -4 route show table all >/dev/null; ip -j -6 route show table all >/dev/null; }; } 2>&1')")
		ons+=("$(ip netns exec "$NS" bash -c 'TIMEFORMAT=%3R; { time "$0" --once --family all --format json >/dev/null; } 2>&1' "$BIN")")
	done
	ip_t=$(bench_median "${ips[@]}")
	once_t=$(bench_median "${ons[@]}")
	start_daemon "$NS" --family all
	ready=$DAEMON_READY
	bench_stop "$DAEMON_PID"
	echo
	echo "| what | seconds (median of $RUNS) | ratio to ip -j -4 + ip -j -6 |"
	echo "|---|---:|---:|"
	echo "| ip -j -4 route show table all; ip -j -6 route show table all | $ip_t | 1.0 |"
	echo "| rtsnapd --once --family all --format json | $once_t | $(awk -v a="$once_t" -v b="$ip_t" 'BEGIN { printf "%.2f", a / b }') |"
	echo "| rtsnapd --family all: start until /status counts every route | $ready | $(awk -v a="$ready" -v b="$ip_t" 'BEGIN { printf "%.2f", a / b }') |"
	bench_log "start: ip ${ips[*]}; --once ${ons[*]}; daemon ready $ready s"
fi

if [[ " $PARTS " == *" churn "* ]]; then
	start_daemon "$NS" --family all
	pid=$(pgrep -n -f -- "$BIN --listen \[::1\]:$PORT") || pid=$DAEMON_PID
	bench_gen_routes "$N6" >"$BENCH_TMP/churn6.txt"
	gen4 "$N4" >"$BENCH_TMP/churn4.txt"
	rss0=$(vm_kb "$pid" VmRSS)
	read -r u0 s0 <<<"$(cpu_ticks "$pid")"
	t0=$EPOCHREALTIME
	ip netns exec "$NS" "$NL" -c "$CHURN" -T "$T" -s 1 <"$BENCH_TMP/churn6.txt" >"$BENCH_TMP/c6.out" 2>&1 &
	c6=$!
	ip netns exec "$NS" "$NL" -c "$CHURN" -T "$T" -s 2 <"$BENCH_TMP/churn4.txt" >"$BENCH_TMP/c4.out" 2>&1 &
	c4=$!
	ip netns exec "$NS" "$NL" -p "$PORT" -T "$T" -k 1 -w 1 -x 10000 -D d0 >"$BENCH_TMP/p6.out" 2>/dev/null &
	p6=$!
	ip netns exec "$NS" "$NL" -p "$PORT" -T "$T" -4 -k 1 -w 1 -x 10000 -D d0 >"$BENCH_TMP/p4.out" 2>/dev/null &
	p4=$!
	hwm=0
	while kill -0 "$p6" 2>/dev/null || kill -0 "$p4" 2>/dev/null; do
		r=$(vm_kb "$pid" VmRSS)
		[ "${r:-0}" -gt "$hwm" ] && hwm=$r
		sleep 1
	done
	wait "$c6" "$c4" "$p6" "$p4"
	secs=$(bench_elapsed "$t0")
	read -r u1 s1 <<<"$(cpu_ticks "$pid")"
	rss1=$(vm_kb "$pid" VmRSS)
	bench_stop "$DAEMON_PID"
	echo
	echo "Churn: $CHURN changes/s on each family at once for ${T} s, a probe route per family every 0.5 s polled every 1 ms ($(tail -n 1 "$BENCH_TMP/c6.out" | cut -d' ' -f2-); IPv4: $(tail -n 1 "$BENCH_TMP/c4.out" | cut -d' ' -f2-))."
	echo
	echo "| family | probes | visible p50 ms | p99 ms | max ms | timeouts |"
	echo "|---|---:|---:|---:|---:|---:|"
	for f in 6 4; do
		to=$(awk '$1 == "probe" && $4 == "timeout"' "$BENCH_TMP/p$f.out" | wc -l)
		awk '$1 == "probe" && $4 ~ /^[0-9.]+$/ { print $4 }' "$BENCH_TMP/p$f.out" | sort -g |
			awk -v fam="$([ $f = 6 ] && echo inet6 || echo inet)" -v to="$to" '
			{ v[++n] = $1 }
			END {
				if (!n) { printf "| %s | %d | n/a | n/a | n/a | %d |\n", fam, to, to; exit }
				p50 = v[int((n + 1) / 2)]; k = int(n * 0.99); if (k < n * 0.99) k++
				printf "| %s | %d | %.1f | %.1f | %.1f | %d |\n", fam, n + to, p50, v[k], v[n], to
			}'
	done
	echo
	echo "| rtsnapd CPU user % | system % | total % of one core | RSS before MB | peak MB | after MB |"
	echo "|---:|---:|---:|---:|---:|---:|"
	echo "| $(pct $((u1 - u0)) "$secs") | $(pct $((s1 - s0)) "$secs") | $(pct $((u1 - u0 + s1 - s0)) "$secs") | $((rss0 / 1024)) | $((hwm / 1024)) | $((rss1 / 1024)) |"
fi

if [[ " $PARTS " == *" memory "* ]]; then
	k4=$K4
	K4=0
	start_daemon "$NS" --family inet6
	pid=$(pgrep -n -f -- "$BIN --listen \[::1\]:$PORT") || pid=$DAEMON_PID
	sleep 2 # the start-up's memory given back
	r6=$(vm_kb "$pid" VmRSS)
	bench_stop "$DAEMON_PID"
	K4=$k4
	start_daemon "$NS" --family all
	pid=$(pgrep -n -f -- "$BIN --listen \[::1\]:$PORT") || pid=$DAEMON_PID
	sleep 2
	ra=$(vm_kb "$pid" VmRSS)
	bench_stop "$DAEMON_PID"
	echo
	echo "| daemon | VmRSS MB | bytes per route |"
	echo "|---|---:|---:|"
	echo "| --family inet6 ($K6 IPv6 routes) | $((r6 / 1024)) | $((r6 * 1024 / K6)) per IPv6 route |"
	echo "| --family all (+ $K4 IPv4 routes) | $((ra / 1024)) | $(((ra - r6) * 1024 / K4)) per IPv4 route (the difference) |"
fi

if [[ " $PARTS " == *" read "* ]]; then
	start_daemon "$NS" --family all
	ks=() ds=()
	for ((r = 0; r < RUNS; r++)); do
		ks+=("$(ip netns exec "$NS" bash -c 'TIMEFORMAT=%3R; { time cat /proc/net/route >/dev/null; } 2>&1')")
		ds+=("$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{time_total}' "$URL/route")")
	done
	ip netns exec "$NS" curl -sg "$URL/route" >"$BENCH_TMP/route.d"
	ip netns exec "$NS" cat /proc/net/route >"$BENCH_TMP/route.k"
	same=$(cmp -s "$BENCH_TMP/route.k" "$BENCH_TMP/route.d" && echo yes || echo no)
	bench_stop "$DAEMON_PID"
	kb=$(printf '%s\n' "${ks[@]}" | sort -g | head -n 1)
	db=$(printf '%s\n' "${ds[@]}" | sort -g | head -n 1)
	echo
	echo "| full read of the IPv4 table ($(wc -l <"$BENCH_TMP/route.k") lines, $(($(wc -c <"$BENCH_TMP/route.k") / 1024)) KiB) | best of $RUNS, s | ratio |"
	echo "|---|---:|---:|"
	echo "| cat /proc/net/route (the kernel) | $kb | 1.0 |"
	echo "| curl $URL/route (rtsnapd; byte-identical: $same) | $db | $(awk -v a="$kb" -v b="$db" 'BEGIN { printf "%.0fx faster", a / b }') |"
	bench_log "read: kernel ${ks[*]}; rtsnapd ${ds[*]}"
fi
