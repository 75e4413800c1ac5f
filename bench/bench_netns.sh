#!/usr/bin/env bash
# bench/bench_netns.sh — one rtsnapd serving many network namespaces.
#
# Two parts, each a markdown table on stdout (details on stderr):
#   many   for each N in COUNTS: N named namespaces of ROUTES_PER IPv6 routes each (plus
#          what the kernel puts in every namespace: lo's local routes, IPv4 and IPv6), one
#          rtsnapd with --netns all in a namespace of its own. Time until every namespace is
#          served; RSS and open descriptors against the same daemon serving none (in the same
#          run), per namespace; CPU at rest over REST seconds (user + system ticks, from
#          /proc/PID/stat); time from `ip netns add` (and ROUTES_PER routes) until
#          /netns/NAME/healthz answers 200, for ADDS namespaces added one after another
#          (p50, max); whether every view of a sample namespace equals its kernel's.
#   fair   a quiet namespace beside a busy one: the daemon's own namespace holds nothing but
#          the probe's routes, a named one BUSY_ROUTES routes; the probe (a route added every
#          0.5 s, time until /routes/lookup answers it, as in bench_churn.sh) in the quiet one
#          while the busy one is idle, then while it changes at BUSY_RATE/s: whether the busy
#          namespace's publications delay the quiet one's (p50, p99, max; CPU).
#   busy   one namespace of BUSY_ROUTES routes at BUSY_RATE changes/s, served alone and
#          beside IDLE idle named namespaces: bench_churn.sh's churn part with two variants
#          (probe latency p50/p99, CPU, publications, RSS per route), the daemon following
#          the busy namespace as its own and the idle ones with --netns.
#
# Needs root. Every namespace and process it starts is removed on exit (bench/lib.sh).
#
# Environment (defaults in brackets):
#   PARTS        ["many busy"]
#   COUNTS       namespaces in the many part ["100 1000"]
#   ROUTES_PER   IPv6 routes per namespace [10]
#   REST         seconds of rest for the CPU figure [10]
#   ADDS         namespaces added while running, timed one by one [10]
#   BUSY_ROUTES  [1000000]; BUSY_RATE [1000]; IDLE [100]; T [20]
#   RTSNAPD      [build/rtsnapd]
#   PORT         rtsnapd's port on [::1] inside its namespace [9816]
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PARTS=${PARTS:-many fair busy}
COUNTS=${COUNTS:-100 1000}
ROUTES_PER=${ROUTES_PER:-10}
REST=${REST:-10}
ADDS=${ADDS:-10}
BUSY_ROUTES=${BUSY_ROUTES:-1000000}
BUSY_RATE=${BUSY_RATE:-1000}
IDLE=${IDLE:-100}
T=${T:-20}
RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
PORT=${PORT:-9816}
URL="http://[::1]:$PORT"
PREFIX=rtsnapn-$$

[ "$(id -u)" = 0 ] || bench_die "needs root"
[ -x "$RTSNAPD" ] || bench_die "no $RTSNAPD: make build/rtsnapd"
for tool in ip curl jq awk; do
	command -v "$tool" >/dev/null || bench_die "needs $tool"
done
mkdir -p "$BENCH_TMP"

# make_ns NAME: a namespace with lo up and ROUTES_PER IPv6 routes (unreachable: no device)
make_ns() {
	ip netns add "$1" || return 1
	BENCH_NS_LIST+=("$1")
	ip -n "$1" link set lo up
	awk -v n="$ROUTES_PER" 'BEGIN { for (i = 0; i < n; i++)
		printf "route add unreachable 2001:db8:%x::/48\n", i }' | ip -n "$1" -6 -batch -
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# cpu_ticks PID: user + system clock ticks of the process
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
nfds() { ls "/proc/$1/fd" | wc -l; }

# start D [OPTION...]: rtsnapd in namespace D; sets PID
start() {
	local d=$1 i
	shift
	bench_bg ip netns exec "$d" "$RTSNAPD" --listen "[::1]:$PORT" "$@" \
		2>>"$BENCH_TMP/netns-rtsnapd.log"
	PID=$BENCH_BG_PID
	for i in $(seq 600); do
		ip netns exec "$d" curl -sgf --max-time 2 "$URL/healthz" >/dev/null 2>&1 && return 0
		kill -0 "$PID" 2>/dev/null || bench_die "rtsnapd exited; see $BENCH_TMP/netns-rtsnapd.log"
		sleep 0.1
	done
	bench_die "rtsnapd not healthy after 60 s"
}

# served D: how many named namespaces /netns lists
served() {
	ip netns exec "$1" curl -sgf --max-time 10 "$URL/netns" 2>/dev/null |
		jq '[.namespaces[] | select(.own | not)] | length'
}

part_many() {
	local n d i t0 t1 rss0 fd0 rss fd c0 c1 adds=() ms s name eq
	echo
	echo "## Many namespaces of $ROUTES_PER routes, one daemon (--netns all)"
	echo
	echo "| namespaces | served after s | RSS MB | RSS KiB per namespace | descriptors per namespace | CPU ticks at rest in ${REST} s | new namespace served, ms p50 / max | views equal |"
	echo "|---:|---:|---:|---:|---:|---:|---|---|"
	for n in $COUNTS; do
		d=$PREFIX-d
		ip netns add "$d" && BENCH_NS_LIST+=("$d")
		ip -n "$d" link set lo up
		# the same daemon serving no named namespace: the baseline of this run
		start "$d"
		sleep 1
		rss0=$(rss_kb "$PID")
		fd0=$(nfds "$PID")
		bench_stop "$PID"
		bench_log "creating $n namespaces"
		for i in $(seq "$n"); do
			make_ns "$PREFIX-$i" || bench_die "cannot create namespace $i"
		done
		t0=$(now_ms) # the first dumps run before the daemon listens
		start "$d" --netns all
		while [ "$(served "$d")" -lt $((n + 1)) ]; do sleep 0.1; done # and $d itself
		t1=$(now_ms)
		sleep 2
		rss=$(rss_kb "$PID")
		fd=$(nfds "$PID")
		c0=$(cpu_ticks "$PID")
		sleep "$REST"
		c1=$(cpu_ticks "$PID")
		adds=()
		for i in $(seq "$ADDS"); do
			name=$PREFIX-add-$i
			s=$(now_ms)
			make_ns "$name" || bench_die "cannot add $name"
			until ip netns exec "$d" curl -sgf --max-time 2 -o /dev/null "$URL/netns/$name/healthz"; do
				sleep 0.002
			done
			adds+=($(($(now_ms) - s)))
		done
		ms=$(printf '%s\n' "${adds[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%d / %d", v[int((NR + 1) / 2)], v[NR] }')
		name=$PREFIX-$((n / 2))
		if cmp -s <(ip netns exec "$name" cat /proc/net/ipv6_route | sed -E 's/^(.{114}).{8}/\1--------/') \
			<(ip netns exec "$d" curl -sgf "$URL/netns/$name/ipv6_route" | sed -E 's/^(.{114}).{8}/\1--------/') &&
			cmp -s <(ip netns exec "$name" cat /proc/net/route) \
				<(ip netns exec "$d" curl -sgf "$URL/netns/$name/route"); then
			eq=yes
		else
			eq=NO
		fi
		printf '| %d | %.2f | %.1f | %d | %.1f | %d | %s | %s |\n' "$n" \
			"$(echo "($t1 - $t0) / 1000" | bc -l)" "$(echo "$rss / 1024" | bc -l)" \
			$(((rss - rss0) / n)) "$(echo "($fd - $fd0) / $n" | bc -l)" $((c1 - c0)) "$ms" "$eq"
		bench_stop "$PID"
		bench_log "deleting $n namespaces"
		for i in $(seq "$n") $(for i in $(seq "$ADDS"); do echo "add-$i"; done); do
			bench_ns_delete "$PREFIX-$i"
		done
		bench_ns_delete "$d"
	done
}

part_busy() {
	local i args=""
	bench_log "creating $IDLE idle namespaces"
	for i in $(seq "$IDLE"); do
		make_ns "$PREFIX-idle-$i" || bench_die "cannot create idle namespace $i"
		args="$args --netns $PREFIX-idle-$i"
	done
	echo
	echo "## One namespace of $BUSY_ROUTES routes at $BUSY_RATE changes/s, alone and beside $IDLE idle ones"
	VARIANTS="alone=$RTSNAPD --interval 0; beside$IDLE=$RTSNAPD --interval 0$args" \
		ROUTES=$BUSY_ROUTES RATES=$BUSY_RATE T=$T PARTS=churn ROUNDS=${ROUNDS:-1} \
		bash "$BENCH_DIR/bench_churn.sh"
	for i in $(seq "$IDLE"); do
		bench_ns_delete "$PREFIX-idle-$i"
	done
}

part_fair() {
	local quiet busy nl cpid t0 c0 c1 p50 p99 max seen to cond i
	nl=$(bench_nlload) || bench_die "cannot build nlload"
	bench_ns_create
	quiet=$BENCH_NS
	bench_ns_create
	busy=$BENCH_NS
	bench_log "fair: loading $BUSY_ROUTES routes into $busy"
	bench_load_routes "$busy" "$BUSY_ROUTES" || bench_die "cannot load $busy"
	bench_gen_routes "$BUSY_ROUTES" >"$BENCH_TMP/fair-churn.txt"
	start "$quiet" --interval 0 --netns "$busy"
	until [ "$(ip netns exec "$quiet" curl -sgf --max-time 10 "$URL/netns" |
		jq '[.namespaces[] | select(.own | not) | .routes] | add // 0')" -ge "$BUSY_ROUTES" ]; do
		sleep 0.5
	done
	sleep 2
	echo
	echo "## A quiet namespace beside one of $BUSY_ROUTES routes (one daemon, one collector thread)"
	echo
	echo "| the busy namespace | probe in the quiet one: p50 ms | p99 ms | max ms | probes | rtsnapd CPU % |"
	echo "|---|---:|---:|---:|---:|---:|"
	for cond in idle "$BUSY_RATE/s"; do
		cpid=
		if [ "$cond" != idle ]; then
			ip netns exec "$busy" "$nl" -c "$BUSY_RATE" -T "$T" -s 7 \
				<"$BENCH_TMP/fair-churn.txt" >"$BENCH_TMP/fair-churn.out" 2>/dev/null &
			cpid=$!
			BENCH_PIDS+=("$cpid")
			for ((i = 0; i < 1200; i++)); do
				grep -q '^churn ready' "$BENCH_TMP/fair-churn.out" && break
				sleep 0.05
			done
		fi
		c0=$(cpu_ticks "$PID")
		t0=$(now_ms)
		ip netns exec "$quiet" "$nl" -p "$PORT" -T "$T" -k $((RANDOM * 10)) -w 2 -x 10000 \
			>"$BENCH_TMP/fair-probe.out" 2>/dev/null
		c1=$(cpu_ticks "$PID")
		[ -z "$cpid" ] || wait "$cpid"
		read -r p50 p99 max seen to < <(bench_percentiles "$BENCH_TMP/fair-probe.out")
		printf '| %s | %s | %s | %s | %s | %.1f |\n' "$cond" "$p50" "$p99" "$max" "$seen" \
			"$(echo "($c1 - $c0) * 1000 / $(getconf CLK_TCK) / ($(now_ms) - $t0) * 100" | bc -l)"
	done
	bench_stop "$PID"
	bench_ns_delete "$busy"
	bench_ns_delete "$quiet"
}

for p in $PARTS; do
	"part_$p"
done
