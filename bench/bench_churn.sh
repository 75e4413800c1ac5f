#!/usr/bin/env bash
# bench/bench_churn.sh — the incremental collector under change (issue 8, item 6).
#
# Three parts, each a markdown table on stdout (details on stderr):
#   churn  at N routes (ROUTES) and R changes/s (RATES), for T seconds each:
#          a probe route added every 0.5 s (on average: the gaps are
#          drawn from 0.25-0.75 s), time until /routes/lookup answers
#          with it (p50, p99, max); rtsnapd CPU (user, system); full and
#          targeted dumps; publications; RSS per route (VmRSS, VmHWM);
#          the churn rate achieved. When RATES has 0, a second table: the
#          floor, the same probe cadence answered by a bare listener thread
#          (nlload -L) before any rtsnapd runs, i.e. what the kernel and the
#          machine alone cost before a reader can see a change.
#   seed   seed 000's test: one `ip -6 -batch` per CPU, SEED_ROUTES routes
#          each into its own table, in parallel, in a fresh namespace; wall
#          time without and with rtsnapd running there, best of SEED_RUNS
#          each, alternated; the slowdown.
#   full   FULL_ROUTES routes loaded as fast as nlload can while rtsnapd runs
#          in an empty namespace: time from the load's end until /status
#          counts every route; notification overruns; full dumps.
#   expiry an expiry storm: EXP_ROUTES routes that expire EXP_AFTER s after
#          they were added, added 20 ms apart, beside EXP_BASE permanent ones;
#          while their deadlines pass: rtsnapd CPU, full and targeted dumps,
#          publications, and rtsnap_routes_past_deadline at the end. (Not in
#          the default PARTS; the kernel deletes overdue routes only at its
#          next GC run, with one RTM_DELROUTE each.)
#   adopt  the resync after an overflow that finds every chunk changed:
#          ADOPT_ROUTES routes at rest, then every route via 2001:db8:ff00::2
#          (3/8, all over the key space) replaced while rtsnapd is stopped;
#          RSS at rest and its peak until the change is served. (Not in the
#          default PARTS.)
#
# Needs root. Every namespace and process it starts is removed by the trap
# in bench/lib.sh. See bench/README-churn.md.
#
# Environment (defaults in brackets; QUICK=1 changes the defaults to
# ROUTES=20000 RATES="idle 0 100" T=5 SEED_ROUTES=20000 SEED_RUNS=1
# FULL_ROUTES=20000, about a minute):
#   ROUTES       route counts for the churn part ["100000 1000000"]
#   RATES        changes per second ["idle 0 10 100 1000 10000"]; "idle" is a
#                window with neither churn nor probe (rtsnapd's CPU at rest)
#   T            seconds per churn window [20]
#   PARTS        which parts ["churn seed full"]
#   SEED_ROUTES  routes per CPU in seed 000's test [100000]
#   SEED_RUNS    runs of each kind (best is reported) [3]
#   FULL_ROUTES  routes in the full-table load [1000000]
#   EXP_BASE, EXP_ROUTES, EXP_AFTER  expiry storm [100000, 500, 10]
#   ADOPT_ROUTES routes in the adopt part [1000000]
#   RTSNAPD      [build/rtsnapd]; RTSNAPD_ARGS extra options ["--interval 0"]
#   VARIANTS     churn part: the daemons to compare, "NAME=BINARY [OPTION...]" separated
#                by ';' ["new=$RTSNAPD $RTSNAPD_ARGS"]; on one namespace per route count,
#                each in turn, ROUNDS times (A/B in one run: build the code before in
#                another directory, e.g. VARIANTS="base=/tmp/base/build/rtsnapd
#                --interval 30; new=build/rtsnapd --interval 30")
#   ROUNDS       churn part: rounds of the variants [1]
#   PROBE_POLL_MS  how often a probe polls /routes/lookup, ms (fractions allowed) [0.5]
#   PORT         rtsnapd's port on [::1] inside the namespaces [9816]
#   READY_TIMEOUT  seconds to wait for rtsnapd to count every route [600]
#   PROBE_TIMEOUT  ms a probe may take before it counts as not seen [10000]
#   OUT=FILE     also append the tables to FILE
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUTES=${ROUTES:-20000} RATES=${RATES:-"idle 0 100"} T=${T:-5}
	SEED_ROUTES=${SEED_ROUTES:-20000} SEED_RUNS=${SEED_RUNS:-1} FULL_ROUTES=${FULL_ROUTES:-20000}
else
	ROUTES=${ROUTES:-"100000 1000000"} RATES=${RATES:-"idle 0 10 100 1000 10000"} T=${T:-20}
	SEED_ROUTES=${SEED_ROUTES:-100000} SEED_RUNS=${SEED_RUNS:-3} FULL_ROUTES=${FULL_ROUTES:-1000000}
fi
PARTS=${PARTS:-"churn seed full"}
ADOPT_ROUTES=${ADOPT_ROUTES:-1000000}
EXP_BASE=${EXP_BASE:-100000} EXP_ROUTES=${EXP_ROUTES:-500} EXP_AFTER=${EXP_AFTER:-10}
RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
RTSNAPD_ARGS=${RTSNAPD_ARGS:-"--interval 0"}
PORT=${PORT:-9816}
URL="http://[::1]:$PORT"
READY_TIMEOUT=${READY_TIMEOUT:-600}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-10000}
PROBE_POLL_MS=${PROBE_POLL_MS:-0.5}
ROUNDS=${ROUNDS:-1}
VARIANTS=${VARIANTS:-"new=$RTSNAPD $RTSNAPD_ARGS"}
OUT=${OUT:-}
HZ=$(getconf CLK_TCK)

for v in $ROUTES ${RATES//idle/} $T $SEED_ROUTES $SEED_RUNS $FULL_ROUTES $ROUNDS; do
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

# ---------------------------------------------------------------- daemon

# status NS: GET /status inside NS (empty on failure).
status() {
	ip netns exec "$1" curl -sgf --max-time 5 "$URL/status" 2>/dev/null
}

# counters JSON: "routes full targeted publications overruns" from /status.
counters() {
	jq -r '[.routes, ([.collector.full_dumps[]] | add), ([.collector.targeted_dumps[]] | add),
		.collector.publications, .collector.notification_overruns] | @tsv' <<<"$1"
}

# build_sum NS: "sum count" of rtsnap_collection_duration_seconds from /metrics (the time
# each publication took to compose its snapshot; resyncs' dumps too, and none ran here).
build_sum() {
	ip netns exec "$1" curl -sgf --max-time 5 "$URL/metrics" 2>/dev/null |
		awk '$1 == "rtsnap_collection_duration_seconds_sum" { s = $2 }
		     $1 == "rtsnap_collection_duration_seconds_count" { c = $2 }
		     END { print s + 0, c + 0 }'
}

# cpu_ticks PID: "utime stime" in clock ticks (fields 14 and 15 of stat).
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$1/stat"
}

# vm_kb PID FIELD: VmRSS or VmHWM in kB.
vm_kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# pct TICKS SECONDS: CPU ticks as % of one core over SECONDS.
pct() {
	awk -v t="$1" -v s="$2" -v hz="$HZ" 'BEGIN { printf "%.1f", (s > 0 ? 100 * t / hz / s : 0) }'
}

# per_route KB N: bytes per route.
per_route() {
	awk -v k="$1" -v n="$2" 'BEGIN { printf "%.0f", k * 1024 / n }'
}

# daemon_start NS [BINARY OPTION...]: start rtsnapd (default $RTSNAPD $RTSNAPD_ARGS) in NS,
# wait for its first snapshot; sets DAEMON_PID (ip netns exec execs the daemon, so it is the
# daemon's pid).
daemon_start() {
	local ns=$1 deadline
	shift
	# shellcheck disable=SC2086 # RTSNAPD_ARGS is a list of options
	[ $# -gt 0 ] || set -- "$RTSNAPD" $RTSNAPD_ARGS
	bench_bg ip netns exec "$ns" "$1" --listen "[::1]:$PORT" "${@:2}" \
		2>>"$BENCH_TMP/rtsnapd.log"
	DAEMON_PID=$BENCH_BG_PID
	deadline=$((SECONDS + READY_TIMEOUT))
	while [ $SECONDS -lt $deadline ]; do
		kill -0 "$DAEMON_PID" 2>/dev/null || {
			bench_log "rtsnapd exited; see $BENCH_TMP/rtsnapd.log"
			return 1
		}
		[ -z "$(status "$ns")" ] || return 0
		sleep 0.05
	done
	bench_log "rtsnapd not ready after ${READY_TIMEOUT}s"
	return 1
}

daemon_stop() {
	[ -z "${DAEMON_PID:-}" ] || bench_stop "$DAEMON_PID"
	DAEMON_PID=
}

# wait_routes NS COUNT: poll /status every 50 ms (at most READY_TIMEOUT s)
# until .routes >= COUNT. Sets WAIT_S (seconds waited) or WAIT_S=timeout.
wait_routes() {
	local ns=$1 want=$2 t0=$EPOCHREALTIME deadline=$((SECONDS + READY_TIMEOUT)) n
	while [ $SECONDS -lt $deadline ]; do
		n=$(status "$ns" | jq -r '.routes // 0' 2>/dev/null)
		if [ "${n:-0}" -ge "$want" ]; then
			WAIT_S=$(bench_elapsed "$t0")
			return 0
		fi
		sleep 0.05
	done
	WAIT_S=timeout
	return 1
}

header() {
	emit ""
	emit "rtsnap bench_churn $1 — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r)," \
		"rtsnapd $RTSNAPD_ARGS, loadavg $(cut -d' ' -f1-3 /proc/loadavg) at start"
	emit ""
}

# ---------------------------------------------------------------- part 1: churn

# floor_window NS N: the floor (nlload -L) for T seconds at the probes' cadence on NS before
# any rtsnapd runs there; appends a row to FLOOR_ROWS.
FLOOR_ROWS=()
floor_window() {
	local ns=$1 n=$2 out=$BENCH_TMP/floor.out p50 p99 max seen to
	ip netns exec "$ns" "$NLLOAD" -L -T "$T" -k $((w * 100000)) -x "$PROBE_TIMEOUT" \
		>"$out" 2>/dev/null
	w=$((w + 1))
	read -r p50 p99 max seen to < <(bench_percentiles "$out" floor)
	# a listener that ran before the writer saw its ack reads negative: count those
	local early
	early=$(awk '$1 == "floor" && $4 ~ /^-/ { k++ } END { print k + 0 }' "$out")
	FLOOR_ROWS+=("| $n | $((seen + to)) | $p50 | $p99 | $max | $early | $to |")
}

churn_part() {
	local n ns kernel rate w=0 i round v name bin
	local -a variants
	IFS=';' read -r -a variants <<<"$VARIANTS"
	for v in "${variants[@]}"; do
		v=${v#"${v%%[![:space:]]*}"}
		bin=${v#*=}
		bin=${bin%% *}
		[ -x "$bin" ] || bench_die "VARIANTS: no executable '$bin' in '$v'"
	done
	header "churn (T=${T}s per rate, probe every 0.5 s on average, polled every ${PROBE_POLL_MS} ms; variants: $VARIANTS)"
	emit "| build | round | routes | churn/s asked | achieved | probes | visible p50 ms | p99 ms | max ms | CPU user % | CPU sys % | full dumps | targeted dumps | publications | build ms (mean) | RSS B/route | peak B/route |"
	emit "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in $ROUTES; do
		bench_ns_create
		ns=$BENCH_NS
		bench_log "churn N=$n: loading into $ns"
		if ! bench_load_routes "$ns" "$n"; then
			emit "| | | $n | load failed | | | | | | | | | | | | |"
			bench_ns_delete "$ns"
			continue
		fi
		kernel=$(bench_count_routes "$ns")
		bench_gen_routes "$n" >"$BENCH_TMP/churn-routes.txt"
		bench_log "churn N=$n: loaded in ${BENCH_LOAD_SECONDS}s, kernel lists $kernel"
		case " $RATES " in *" 0 "*) floor_window "$ns" "$n" ;; esac
		for ((round = 1; round <= ROUNDS; round++)); do
			for v in "${variants[@]}"; do
				v=${v#"${v%%[![:space:]]*}"}
				name=${v%%=*}
				# shellcheck disable=SC2086 # the variant's binary and options, split
				set -- ${v#*=}
				churn_variant "$n" "$ns" "$kernel" "$name" "$round" "$@"
			done
		done
		bench_ns_delete "$ns"
		bench_settle
	done
	[ "${#FLOOR_ROWS[@]}" -gt 0 ] || return 0
	emit ""
	emit "Floor: a probe route every 0.5 s on average, time from the kernel's ack until a bare listener thread (nlload -L) returns from recv() with its notification, while the writer spins; no rtsnapd running."
	emit ""
	emit "| routes | probes | woken p50 ms | p99 ms | max ms | before the ack | timeouts |"
	emit "|---:|---:|---:|---:|---:|---:|---:|"
	local row
	for row in "${FLOOR_ROWS[@]}"; do
		emit "$row"
	done
	FLOOR_ROWS=()
}

# churn_variant N NS KERNEL_ROUTES NAME ROUND BINARY [OPTION...]: one daemon through every
# rate of RATES on the loaded namespace; the probes' prefixes go on from the global w.
churn_variant() {
	local n=$1 ns=$2 kernel=$3 name=$4 round=$5 rate i
	shift 5
	local t0=$EPOCHREALTIME
	kernel=$(bench_count_routes "$ns") # earlier windows' probes are still there
	if ! daemon_start "$ns" "$@" || ! wait_routes "$ns" "$kernel"; then
		emit "| $name | $round | $n | rtsnapd not ready | | | | | | | | | | | | |"
		daemon_stop
		return
	fi
	bench_log "churn $name round $round N=$n: rtsnapd ($*) serves $kernel routes" \
		"$(bench_elapsed "$t0")s after start, VmHWM $(vm_kb "$DAEMON_PID" VmHWM) kB"
	# at rest means after the start-up's own work: the first idle second gives the
	# start-up's memory back (malloc_trim, system time)
	sleep 2
	for rate in $RATES; do
		local cpid='' cout=$BENCH_TMP/churn.out pout=$BENCH_TMP/probe.out
		: >"$cout"
		if [ "$rate" != idle ] && [ "$rate" -gt 0 ]; then
			# not bench_bg: a background command in a function would get
			# /dev/null as stdin instead of the function's redirection
			ip netns exec "$ns" "$NLLOAD" -c "$rate" -T "$T" -s "$((n + rate + round))" \
				<"$BENCH_TMP/churn-routes.txt" >"$cout" 2>"$BENCH_TMP/churn.err" &
			cpid=$!
			BENCH_PIDS+=("$cpid")
			for ((i = 0; i < 1200; i++)); do # reading 1M lines takes ~1 s
				grep -q '^churn ready' "$cout" && break
				kill -0 "$cpid" 2>/dev/null || break
				sleep 0.05
			done
		fi
		echo 5 >"/proc/$DAEMON_PID/clear_refs" # VmHWM := VmRSS
		local st0 tk0 tw0 st1 tk1 tw
		st0=$(counters "$(status "$ns")")
		local bs0 bs1
		bs0=$(build_sum "$ns")
		tk0=$(cpu_ticks "$DAEMON_PID")
		tw0=$EPOCHREALTIME
		if [ "$rate" = idle ]; then
			: >"$pout"
			sleep "$T"
		else
			ip netns exec "$ns" "$NLLOAD" -p "$PORT" -T "$T" -k $((w * 100000)) \
				-w "$PROBE_POLL_MS" -x "$PROBE_TIMEOUT" >"$pout" 2>/dev/null
		fi
		if [ -n "$cpid" ]; then
			for ((i = 0; i < 600; i++)); do
				kill -0 "$cpid" 2>/dev/null || break
				sleep 0.1
			done
			bench_stop "$cpid"
		fi
		tk1=$(cpu_ticks "$DAEMON_PID")
		tw=$(bench_elapsed "$tw0")
		st1=$(counters "$(status "$ns")")
		bs1=$(build_sum "$ns")
		local rss hwm p50 p99 max seen to ach
		rss=$(vm_kb "$DAEMON_PID" VmRSS)
		hwm=$(vm_kb "$DAEMON_PID" VmHWM)
		read -r p50 p99 max seen to < <(bench_percentiles "$pout")
		[ "$to" = 0 ] || max="not seen in ${PROBE_TIMEOUT} ms ($to of $((seen + to)))"
		ach=0
		[ "$rate" = 0 ] || [ "$rate" = idle ] || ach=$(awk '$1 == "churn" && $2 == "changes" { printf "%.0f", $9 }' "$cout")
		[ -n "$ach" ] || ach="failed ($(head -c 200 "$BENCH_TMP/churn.err"))"
		local d
		d=$(awk -v a="$st0" -v b="$st1" 'BEGIN {
			split(a, x, "\t"); split(b, y, "\t")
			printf "%d %d %d %d", y[2] - x[2], y[3] - x[3], y[4] - x[4], y[5] - x[5] }')
		local dfull dtarg dpub dover
		read -r dfull dtarg dpub dover <<<"$d"
		[ "$rate" != idle ] || rate="0, no probe"
		emit "| $name | $round | $n | $rate | $ach | $((seen + to)) | $p50 | $p99 | $max" \
			"| $(pct "$((${tk1% *} - ${tk0% *}))" "$tw") | $(pct "$((${tk1#* } - ${tk0#* }))" "$tw")" \
			"| $dfull | $dtarg | $dpub | $(awk -v a="$bs0" -v b="$bs1" 'BEGIN {
				split(a, x, " "); split(b, y, " "); n = y[2] - x[2]
				if (n > 0) printf "%.2f", 1000 * (y[1] - x[1]) / n; else printf "n/a" }')" \
			"| $(per_route "$rss" "$n") | $(per_route "$hwm" "$n") |"
		bench_log "churn $name round $round N=$n R=$rate: window ${tw}s, $(grep -c '^probe' "$pout") probes," \
			"overruns +$dover, $(tail -1 "$cout"), VmRSS $rss kB VmHWM $hwm kB"
		w=$((w + 1))
		sleep 1 # let the daemon go quiet before the next window
	done
	daemon_stop
}

# ---------------------------------------------------------------- part 2: seed 000

# Seed 000's namespace: a veth pair, routes dev veth0.
seed_ns() {
	local ns=rtsnapb-$BASHPID-seed
	ip netns add "$ns" || bench_die "cannot create $ns"
	BENCH_NS_LIST+=("$ns")
	ip -n "$ns" link set lo up
	ip -n "$ns" link add veth0 type veth peer veth1
	ip -n "$ns" link set veth0 up
	ip -n "$ns" link set veth1 up
	SEED_NS=$ns
}

# seed_run with|without: sets RUN_MS (wall ms of the parallel insertion) and,
# with rtsnapd, RUN_INFO.
seed_run() {
	local ns t pids=() p rc=0 st0 st1 tk0 tk1 before
	seed_ns
	ns=$SEED_NS
	RUN_INFO=
	if [ "$1" = with ]; then
		daemon_start "$ns" || { RUN_MS=failed; daemon_stop; bench_ns_delete "$ns"; return; }
		st0=$(counters "$(status "$ns")")
		before=${st0%%$'\t'*}
		tk0=$(cpu_ticks "$DAEMON_PID")
	fi
	local t0=$EPOCHREALTIME
	for ((t = 1; t <= $(nproc); t++)); do
		ip -n "$ns" -6 -batch "$BENCH_TMP/seed-batch-$t.txt" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	RUN_MS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
	[ $rc = 0 ] || RUN_MS="failed"
	if [ "$1" = with ]; then
		wait_routes "$ns" $((before + $(nproc) * SEED_ROUTES))
		tk1=$(cpu_ticks "$DAEMON_PID")
		st1=$(counters "$(status "$ns")")
		RUN_INFO=$(awk -v a="$st0" -v b="$st1" -v w="$WAIT_S" -v u="$(((${tk1% *} - ${tk0% *}) * 1000 / HZ))" \
			-v s="$(((${tk1#* } - ${tk0#* }) * 1000 / HZ))" 'BEGIN {
			split(a, x, "\t"); split(b, y, "\t")
			printf "caught up %s s after; CPU user %d ms sys %d ms; full dumps +%d, overruns +%d, publications +%d",
				w, u, s, y[2] - x[2], y[5] - x[5], y[4] - x[4] }')
		daemon_stop
	fi
	bench_ns_delete "$ns"
	bench_settle
}

seed_part() {
	local t r with=() without=() info=()
	for ((t = 1; t <= $(nproc); t++)); do
		awk -v n="$SEED_ROUTES" -v t="$t" 'BEGIN {
			for (k = 0; k < n; k++)
				printf "route add 2001:%x:%x::/64 dev veth0 table %d\n",
					1 + int(k / 1000), 1 + k % 1000, t }' >"$BENCH_TMP/seed-batch-$t.txt"
	done
	header "seed 000 (one ip -6 -batch per CPU, $SEED_ROUTES routes each into its own table, in parallel)"
	for ((r = 1; r <= SEED_RUNS; r++)); do
		seed_run without
		without+=("$RUN_MS")
		bench_log "seed run $r without rtsnapd: $RUN_MS ms"
		seed_run with
		with+=("$RUN_MS")
		info+=("$RUN_INFO")
		bench_log "seed run $r with rtsnapd: $RUN_MS ms; $RUN_INFO"
	done
	local bw bwi
	bw=$(printf '%s\n' "${without[@]}" | grep -E '^[0-9]+$' | sort -n | head -1)
	bwi=$(printf '%s\n' "${with[@]}" | grep -E '^[0-9]+$' | sort -n | head -1)
	emit "| routes | runs | without rtsnapd ms (best) | with rtsnapd ms (best) | slowdown | all runs without | all runs with |"
	emit "|---:|---:|---:|---:|---:|---|---|"
	emit "| $(($(nproc) * SEED_ROUTES)) | $SEED_RUNS + $SEED_RUNS | ${bw:-failed} | ${bwi:-failed}" \
		"| $(awk -v a="${bw:-x}" -v b="${bwi:-x}" 'BEGIN { if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) printf "%+.1f %%", (b - a) * 100 / a; else print "n/a" }')" \
		"| ${without[*]} | ${with[*]} |"
	for r in "${!info[@]}"; do emit "" && emit "run $((r + 1)) with rtsnapd: ${info[r]}"; done
}

# ---------------------------------------------------------------- part 3: full load

full_part() {
	local ns st0 st1 tk0 tk1 before want tw0 tw loaded
	header "full-table load ($FULL_ROUTES routes by nlload x$BENCH_LOAD_JOBS while rtsnapd runs)"
	emit "| routes | load s | load end → all served s | notification overruns | full dumps (by reason) | targeted dumps | publications | CPU user % | CPU sys % | peak B/route | kernel = served |"
	emit "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"
	bench_ns_create
	ns=$BENCH_NS
	if ! daemon_start "$ns"; then
		emit "| $FULL_ROUTES | rtsnapd not ready | | | | | | | | | |"
		daemon_stop
		bench_ns_delete "$ns"
		return
	fi
	st0=$(counters "$(status "$ns")")
	local fd0
	fd0=$(status "$ns" | jq -c '.collector.full_dumps')
	before=${st0%%$'\t'*}
	want=$((before + FULL_ROUTES + $(wc -w <<<"$BENCH_DEFAULT_TABLES")))
	tk0=$(cpu_ticks "$DAEMON_PID")
	tw0=$EPOCHREALTIME
	bench_load_routes "$ns" "$FULL_ROUTES" || bench_log "full: the load reported errors"
	loaded=$BENCH_LOAD_SECONDS
	wait_routes "$ns" "$want"
	tk1=$(cpu_ticks "$DAEMON_PID")
	tw=$(bench_elapsed "$tw0")
	local sj fd1 d reasons kernel served
	sj=$(status "$ns")
	st1=$(counters "$sj")
	fd1=$(jq -c '.collector.full_dumps' <<<"$sj")
	reasons=$(jq -rn --argjson a "$fd0" --argjson b "$fd1" \
		'[$b | to_entries[] | select(.value - $a[.key] > 0) | "\(.key) \(.value - $a[.key])"] | join(", ")')
	d=$(awk -v a="$st0" -v b="$st1" 'BEGIN { split(a, x, "\t"); split(b, y, "\t")
		printf "%d %d %d %d", y[2] - x[2], y[3] - x[3], y[4] - x[4], y[5] - x[5] }')
	local dfull dtarg dpub dover
	read -r dfull dtarg dpub dover <<<"$d"
	sleep 1
	kernel=$(bench_count_routes "$ns")
	served=$(status "$ns" | jq -r '.routes')
	emit "| $FULL_ROUTES | $(bench_fmt "$loaded") | $WAIT_S | $dover | $dfull${reasons:+ ($reasons)} | $dtarg | $dpub" \
		"| $(pct "$((${tk1% *} - ${tk0% *}))" "$tw") | $(pct "$((${tk1#* } - ${tk0#* }))" "$tw")" \
		"| $(per_route "$(vm_kb "$DAEMON_PID" VmHWM)" "$FULL_ROUTES")" \
		"| $([ "$kernel" = "$served" ] && echo "yes ($kernel)" || echo "NO: kernel $kernel, served $served") |"
	bench_log "full: CPU over ${tw}s (load + catch-up); $(grep -E '^Vm(RSS|HWM)' "/proc/$DAEMON_PID/status" | tr -s ' \n' ' ')"
	daemon_stop
	bench_ns_delete "$ns"
	bench_settle
}

# ---------------------------------------------------------------- expiry

expiry_part() {
	local ns c0 c1 tk0 tk1 t_first t_end tw past k
	header "expiry storm ($EXP_ROUTES routes expiring ${EXP_AFTER}s after their add, added 20 ms apart, beside $EXP_BASE)"
	emit "| routes | expiring | window s | CPU user ms | CPU sys ms | full dumps | targeted dumps | publications | past deadline at the end |"
	emit "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	bench_ns_create
	ns=$BENCH_NS
	bench_load_routes "$ns" "$EXP_BASE" || bench_die "expiry: load failed"
	daemon_start "$ns" || bench_die "expiry: rtsnapd did not start"
	wait_routes "$ns" "$EXP_BASE" || bench_die "expiry: rtsnapd never served $EXP_BASE routes"
	sleep 2 # the start-up's own work (the first idle second gives memory back)
	t_first=$EPOCHREALTIME
	for ((k = 0; k < EXP_ROUTES; k++)); do
		printf 'route add 2001:db8:%x:%x::/64 via 2001:db8:ff00::2 dev d0 expires %d\n' \
			$((57344 + k / 65536)) $((k % 65536)) "$EXP_AFTER"
		sleep 0.02
	done | ip -n "$ns" -batch - || bench_die "expiry: adding the expiring routes failed"
	t_end=$EPOCHREALTIME
	wait_routes "$ns" $((EXP_BASE + EXP_ROUTES)) || bench_die "expiry: the expiring routes were not served"
	# the window: from the first deadline to one second after the last
	sleep "$(awk -v a="$t_first" -v e="$EXP_AFTER" -v n="$EPOCHREALTIME" 'BEGIN { d = a + e - n; print (d > 0 ? d : 0) }')"
	c0=$(counters "$(status "$ns")")
	tk0=$(cpu_ticks "$DAEMON_PID")
	tw=$(awk -v a="$t_first" -v b="$t_end" 'BEGIN { printf "%.3f", b - a + 1 }')
	sleep "$tw"
	c1=$(counters "$(status "$ns")")
	tk1=$(cpu_ticks "$DAEMON_PID")
	past=$(ip netns exec "$ns" curl -sgf --max-time 5 "$URL/metrics" |
		awk '$1 == "rtsnap_routes_past_deadline" { print $2 }')
	read -r _ f0 g0 p0 _ <<<"$c0"
	read -r _ f1 g1 p1 _ <<<"$c1"
	emit "| $EXP_BASE | $EXP_ROUTES | $tw | $(((${tk1% *} - ${tk0% *}) * 1000 / HZ)) | $(((${tk1#* } - ${tk0#* }) * 1000 / HZ))" \
		"| $((f1 - f0)) | $((g1 - g0)) | $((p1 - p0)) | ${past:-?} |"
	daemon_stop
	bench_ns_delete "$ns"
	bench_settle
}

# ---------------------------------------------------------------- adopt

# The resync after an overflow that finds every chunk changed: ADOPT_ROUTES
# routes served and at rest, then, while rtsnapd is stopped (SIGSTOP), every
# route via 2001:db8:ff00::2 (3/8 of them, spread over the whole key space)
# replaced by one via ::3, far more than its socket holds. On SIGCONT it
# overflows, resyncs and adopts a dump that differs in every chunk. Measured:
# RSS at rest, the peak from the stop until the new gateways are served
# (VmHWM reset through clear_refs), and the time that took.
adopt_part() {
	local ns want rest hwm t0 n_k n_s sj steps drift
	header "resync adopting a dump that differs everywhere ($ADOPT_ROUTES routes; 3/8 of them replaced while rtsnapd is stopped)"
	emit "| routes | replaced | RSS at rest B/route | peak B/route | peak / rest | SIGCONT → last publication s | adopt steps | drift | kernel = served |"
	emit "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	bench_ns_create
	ns=$BENCH_NS
	bench_load_routes "$ns" "$ADOPT_ROUTES" || bench_die "adopt: load failed"
	daemon_start "$ns" || bench_die "adopt: rtsnapd did not start"
	want=$((ADOPT_ROUTES + $(wc -w <<<"$BENCH_DEFAULT_TABLES")))
	wait_routes "$ns" "$want" || bench_die "adopt: rtsnapd never served the table"
	# at rest: RSS steady (within 1 %) over a second, the start-up's memory given back
	local r0 r1=0 k
	for ((k = 0; k < 30; k++)); do
		r0=$r1
		sleep 1
		r1=$(vm_kb "$DAEMON_PID" VmRSS)
		[ "$k" -lt 3 ] || [ $((r0 - r1)) -gt $((r1 / 100)) ] || [ $((r1 - r0)) -gt $((r1 / 100)) ] || break
	done
	rest=$r1
	bench_gen_routes "$ADOPT_ROUTES" |
		awk '$4 == "2001:db8:ff00::2" { $4 = "2001:db8:ff00::3"; print }' >"$BENCH_TMP/adopt.txt"
	n_k=$(wc -l <"$BENCH_TMP/adopt.txt")
	echo 5 >"/proc/$DAEMON_PID/clear_refs" # VmHWM from here
	kill -STOP "$DAEMON_PID"
	ip netns exec "$ns" "$NLLOAD" -r <"$BENCH_TMP/adopt.txt" 2>"$BENCH_TMP/adopt.log" ||
		bench_log "adopt: the replace reported errors: $(cat "$BENCH_TMP/adopt.log")"
	t0=$EPOCHREALTIME
	kill -CONT "$DAEMON_PID"
	# served: a resync ran, no publication for 2 s (polling /status only: reading the whole
	# table while it works would slow it), and then the proc text shows every new gateway
	local deadline=$((SECONDS + READY_TIMEOUT)) pubs=-1 p t_last=$EPOCHREALTIME quiet=0
	n_s=0
	while [ $SECONDS -lt $deadline ]; do
		sj=$(status "$ns")
		p=$(jq -r '"\(.collector.full_dumps.resync // 0) \(.collector.publications)"' <<<"$sj" 2>/dev/null)
		if [ "${p%% *}" -ge 1 ] 2>/dev/null && [ "${p#* }" = "$pubs" ]; then
			quiet=$((quiet + 1))
		else
			[ "$pubs" = -1 ] || t_last=$EPOCHREALTIME
			pubs=${p#* }
			quiet=0
		fi
		if [ "$quiet" -ge 20 ]; then
			n_s=$(ip netns exec "$ns" curl -sgf --max-time 60 "$URL/ipv6_route" |
				grep -c ' 20010db8ff0000000000000000000003 ')
			[ "$n_s" != "$n_k" ] || break
			quiet=0
		fi
		sleep 0.1
	done
	WAIT_S=$(awk -v a="$t0" -v b="$t_last" 'BEGIN { printf "%.1f", b - a }')
	sleep 2
	hwm=$(vm_kb "$DAEMON_PID" VmHWM)
	sj=$(status "$ns")
	steps=$(ip netns exec "$ns" curl -sgf --max-time 5 "$URL/metrics" |
		awk '$1 == "rtsnap_resync_adopt_steps_total" { print $2 }')
	drift=$(jq -r '.collector.resync_drift_routes // "?"' <<<"$sj")
	emit "| $ADOPT_ROUTES | $n_k | $(per_route "$rest" "$ADOPT_ROUTES") | $(per_route "$hwm" "$ADOPT_ROUTES")" \
		"| $(awk -v a="$hwm" -v b="$rest" 'BEGIN { printf "%.2f", a / b }') | $WAIT_S | ${steps:-n/a} | $drift" \
		"| $([ "$n_s" = "$n_k" ] && echo "yes ($n_s via ::3)" || echo "NO: kernel $n_k, served $n_s") |"
	daemon_stop
	bench_ns_delete "$ns"
	bench_settle
}

bench_log "machine: $(nproc) cores, kernel $(uname -r), parts: $PARTS"
for part in $PARTS; do
	case $part in
	churn) churn_part ;;
	seed) seed_part ;;
	full) full_part ;;
	expiry) expiry_part ;;
	adopt) adopt_part ;;
	*) bench_die "unknown part $part (churn, seed, full, expiry, adopt)" ;;
	esac
done
