# shellcheck shell=bash disable=SC2034
# bench/lib.sh — helpers for rtsnap benchmarks. Source it; do not run it.
#
#   . bench/lib.sh
#   bench_ns_create                 # namespace rtsnapb-$$ with lo, d0, d1, d2 up
#   bench_load_routes "$BENCH_NS" 100000
#   echo "loaded in $BENCH_LOAD_SECONDS s"
#   bench_add_expiring "$BENCH_NS" 500 300
#
# Every namespace created here and every process started with bench_bg is
# removed/stopped by the EXIT/INT/TERM trap that sourcing this file installs.
#
# Environment knobs:
#   BENCH_LOADER     nlload (default; falls back to ip if no C compiler) | ip
#   BENCH_LOAD_JOBS  parallel loader processes (default: nproc + 1, measured
#                    fastest on 2 cores: 1M routes 9.0 s with 1, 4.8 s with 2,
#                    4.0 s with 3, 5.7 s with 4)
#   BENCH_TMP        scratch directory (default: /tmp/rtsnap-bench.$UID)

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(cd "$BENCH_DIR/.." && pwd)
BENCH_TMP=${BENCH_TMP:-/tmp/rtsnap-bench.$UID}
BENCH_LOADER=${BENCH_LOADER:-nlload}
BENCH_LOAD_JOBS=${BENCH_LOAD_JOBS:-$(($(nproc) + 1))}
BENCH_NS=${BENCH_NS:-}
BENCH_NS_LIST=()
BENCH_PIDS=()

# Tables the generator spreads routes over, with weights out of 20 (by /48
# site, so a site and its more-specifics stay in one table). Tables listed in
# BENCH_DEFAULT_TABLES get a ::/0 route; the others end with the kernel's
# placeholder row in /proc/net/ipv6_route.
BENCH_TABLES="254 100 200 1000 70000"
BENCH_DEFAULT_TABLES="254 100 70000"

bench_log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
bench_die() { bench_log "error: $*"; exit 1; }

# ---------------------------------------------------------------- cleanup

bench_cleanup() {
	local pid ns i
	for pid in "${BENCH_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || continue
		for i in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null
	done
	BENCH_PIDS=()
	for ns in "${BENCH_NS_LIST[@]}"; do
		ip -n "$ns" -6 route flush table all >/dev/null 2>&1 # see bench_ns_delete
		ip netns del "$ns" 2>/dev/null
	done
	BENCH_NS_LIST=()
}
trap 'bench_cleanup' EXIT
trap 'bench_cleanup; trap - INT; kill -INT $BASHPID' INT
trap 'bench_cleanup; exit 143' TERM

# Start "$@" in the background and remember it for cleanup; pid in BENCH_BG_PID.
bench_bg() {
	"$@" &
	BENCH_BG_PID=$!
	BENCH_PIDS+=("$BENCH_BG_PID")
}

# Stop one process started with bench_bg (bounded wait, then SIGKILL).
bench_stop() {
	local pid=$1 i p keep=()
	kill "$pid" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for p in "${BENCH_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
	BENCH_PIDS=("${keep[@]}")
}

# ---------------------------------------------------------------- namespace

# bench_ns_create [NAME]: create a namespace (default rtsnapb-$$, or
# rtsnapb-$$-K while earlier ones still exist; $BASHPID, so that subshells
# sourcing this file do not collide), set BENCH_NS. Interfaces d0, d1, d2 are dummy
# devices (veth pairs with an up peer dNp when the kernel has no dummy
# driver), each with an address and a permanent neighbour used as gateway:
#   d0 2001:db8:ff00::1/64  gw 2001:db8:ff00::2
#   d1 2001:db8:ff01::1/64  gw 2001:db8:ff01::2
#   d2 2001:db8:ff02::1/64  gw fe80::2 (link-local gateway)
bench_ns_create() {
	local ns=${1:-} i
	if [ -z "$ns" ]; then
		ns=rtsnapb-$BASHPID
		[ ${#BENCH_NS_LIST[@]} -eq 0 ] || ns=rtsnapb-$BASHPID-${#BENCH_NS_LIST[@]}
	fi
	ip netns add "$ns" || bench_die "cannot create namespace $ns"
	BENCH_NS_LIST+=("$ns")
	BENCH_NS=$ns
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
	for i in 0 1 2; do
		if ! ip -n "$ns" link add "d$i" type dummy 2>/dev/null; then
			ip -n "$ns" link add "d$i" type veth peer name "d${i}p" ||
				bench_die "cannot create d$i in $ns"
			ip -n "$ns" link set "d${i}p" up
		fi
		ip -n "$ns" link set "d$i" up
		ip -n "$ns" -6 addr add "2001:db8:ff0$i::1/64" dev "d$i" nodad
	done
	ip -n "$ns" -6 neigh replace 2001:db8:ff00::2 lladdr 02:00:00:00:00:02 dev d0 nud permanent
	ip -n "$ns" -6 neigh replace 2001:db8:ff01::2 lladdr 02:00:00:00:01:02 dev d1 nud permanent
	ip -n "$ns" -6 neigh replace fe80::2 lladdr 02:00:00:00:02:02 dev d2 nud permanent
}

# bench_ns_delete NAME: delete now (the kernel frees the routes asynchronously).
bench_ns_delete() {
	local ns=$1 n keep=()
	# the routes first: their memory comes back now, even if the kernel's namespace
	# cleanup is slow or stuck
	ip -n "$ns" -6 route flush table all >/dev/null 2>&1
	ip netns del "$ns" 2>/dev/null
	for n in "${BENCH_NS_LIST[@]}"; do [ "$n" = "$ns" ] || keep+=("$n"); done
	BENCH_NS_LIST=("${keep[@]}")
	[ "$BENCH_NS" != "$ns" ] || BENCH_NS=
}

# ---------------------------------------------------------------- routes

# bench_gen_routes N [WORKER JOBS [FMT]]: print routes 0..N-1 (only those
# with i % JOBS == WORKER). FMT "nl" (nlload lines, default) or "ip"
# (`ip -batch` lines). Route i belongs to /48 site s = i/8; the site's
# 8 routes are the /48 itself, a /56, a /60, two /64s, an /80, a /96 or /112
# and a /128 inside it, so the tree has realistic nesting. Sites are spread
# over 2400::/5 by a multiplicative hash (distinct for every s < 2^32), so
# all prefixes are distinct. Mix: 3/8 via 2001:db8:ff00::2 dev d0, 2/8 via
# fe80::2 dev d2, 3/8 device routes on d1; a few metric 512.
bench_gen_routes() {
	awk -v N="$1" -v W="${2:-0}" -v P="${3:-1}" -v FMT="${4:-nl}" \
		-v TABLES="$BENCH_TABLES" '
	BEGIN {
		split(TABLES, tb, " ")
		# site % 20 -> table: 8/20 main, 4/20, 3/20, 2/20, 3/20
		for (r = 0; r < 20; r++)
			tab[r] = tb[r < 8 ? 1 : r < 12 ? 2 : r < 15 ? 3 : r < 17 ? 4 : 5]
		for (i = W; i < N; i += P) {
			s = int(i / 8); j = i % 8
			k = (s * 2654435761) % 4294967296
			p = sprintf("%x:%x:%x", 9216 + s % 2048, int(k / 65536), k % 65536)
			x = (s * 40503 + 12345) % 65536
			y = (s * 9973 + 777) % 65536
			z = (s * 31337 + 4242) % 65536
			if (j == 0)      { d = p "::"; l = 48 }
			else if (j == 1) { d = sprintf("%s:%x::", p, x - x % 256); l = 56 }
			else if (j == 2) { d = sprintf("%s:%x::", p, x - x % 16); l = 60 }
			else if (j == 3) { d = sprintf("%s:%x::", p, x); l = 64 }
			else if (j == 4) { d = sprintf("%s:%x::", p, (x + 32768) % 65536); l = 64 }
			else if (j == 5) { d = sprintf("%s:%x:%x::", p, x, y); l = 80 }
			else if (j == 6) {
				if (s % 2) { d = sprintf("%s:%x:%x:%x::", p, x, y, z); l = 96 }
				else { d = sprintf("%s:%x:%x:%x:%x:0", p, x, y, z, (x + z) % 65536); l = 112 }
			} else { d = sprintf("%s:%x:%x:%x:%x:%x", p, x, y, z, (x + y) % 65536, 1 + s % 65535); l = 128 }
			if (j == 0 || j == 3 || j == 5) { dev = "d0"; gw = "2001:db8:ff00::2" }
			else if (j == 1 || j == 6)      { dev = "d2"; gw = "fe80::2" }
			else                            { dev = "d1"; gw = "-" }
			m = (j == 4 && s % 5 == 0) ? 512 : 0
			t = tab[s % 20]
			if (FMT == "ip")
				printf "route add %s/%d%s dev %s table %d%s\n", d, l,
					gw == "-" ? "" : " via " gw, dev, t, m ? " metric " m : ""
			else
				printf "%s/%d %d %s %s %d\n", d, l, t, dev, gw, m
		}
	}'
}

# bench_gen_defaults: one ::/0 per table in BENCH_DEFAULT_TABLES (nlload lines).
bench_gen_defaults() {
	local t n=0 gws=("d0 2001:db8:ff00::2" "d2 fe80::2" "d1 2001:db8:ff01::2")
	for t in $BENCH_DEFAULT_TABLES; do
		echo "::/0 $t ${gws[n % 3]} 0"
		n=$((n + 1))
	done
}

# bench_gen_expiring K SECONDS [OFFSET]: K /64s under 2001:db8:e000::/36,
# alternating main and table 100, with `expires SECONDS` (nlload lines).
bench_gen_expiring() {
	awk -v K="$1" -v E="$2" -v O="${3:-0}" 'BEGIN {
		for (m = O; m < O + K; m++)
			printf "2001:db8:%x:%x::/64 %d d0 2001:db8:ff00::2 0 %d\n",
				57344 + int(m / 65536), m % 65536, m % 2 ? 100 : 254, E
	}'
}

# Path of the nlload helper, built on first use from bench/nlload.c.
bench_nlload() {
	local bin=$BENCH_TMP/nlload
	if [ ! -x "$bin" ] || [ "$BENCH_DIR/nlload.c" -nt "$bin" ]; then
		mkdir -p "$BENCH_TMP"
		${CC:-cc} -O2 -Wall -o "$bin.tmp" "$BENCH_DIR/nlload.c" 2>"$BENCH_TMP/nlload.log" ||
			return 1
		mv "$bin.tmp" "$bin"
	fi
	echo "$bin"
}

# Convert nlload lines to `ip -batch` lines (fallback loader).
bench_nl_to_ip() {
	awk '{
		printf "route add %s dev %s table %s", $1, $3, $2
		if ($4 != "-") printf " via %s", $4
		if ($5 + 0) printf " metric %s", $5
		if ($6 + 0) printf " expires %s", $6
		printf "\n"
	}'
}

# bench_feed NS: load nlload lines from stdin into NS with the chosen loader.
bench_feed() {
	local ns=$1 bin
	if [ "$BENCH_LOADER" = nlload ] && bin=$(bench_nlload); then
		ip netns exec "$ns" "$bin" 2>"$BENCH_TMP/feed.$BASHPID.log"
	else
		bench_nl_to_ip | ip -n "$ns" -6 -batch - 2>"$BENCH_TMP/feed.$BASHPID.log"
	fi
	local rc=$?
	[ $rc -eq 0 ] || bench_log "loader failed (rc $rc): $(head -3 "$BENCH_TMP/feed.$BASHPID.log")"
	return $rc
}

# bench_load_routes NS N: default routes, then N generated routes with
# BENCH_LOAD_JOBS loaders in parallel (generation is piped, and included in
# the time). Sets BENCH_LOAD_SECONDS (wall). Returns non-zero on any error.
bench_load_routes() {
	local ns=$1 n=$2 jobs=$BENCH_LOAD_JOBS w rc=0 t0 pids=()
	mkdir -p "$BENCH_TMP"
	if [ "$BENCH_LOADER" = nlload ] && ! bench_nlload >/dev/null; then
		bench_log "no C compiler for bench/nlload.c, falling back to ip -batch"
		BENCH_LOADER=ip
	fi
	[ "$BENCH_LOADER" = nlload ] || jobs=1 # parallel ip -batch is slower
	t0=$EPOCHREALTIME
	bench_gen_defaults | bench_feed "$ns" || rc=1
	if [ "$BENCH_LOADER" = ip ]; then
		bench_gen_routes "$n" 0 1 ip | ip -n "$ns" -6 -batch - || rc=1
	else
		for ((w = 0; w < jobs; w++)); do
			bench_gen_routes "$n" "$w" "$jobs" | bench_feed "$ns" &
			pids+=($!)
		done
		for w in "${pids[@]}"; do wait "$w" || rc=1; done
	fi
	BENCH_LOAD_SECONDS=$(bench_elapsed "$t0")
	return $rc
}

# bench_add_expiring NS K SECONDS: add K routes that expire after SECONDS
# among the permanent ones. Sets BENCH_LOAD_SECONDS.
bench_add_expiring() {
	local t0=$EPOCHREALTIME
	bench_gen_expiring "$2" "$3" "${4:-0}" | bench_feed "$1"
	local rc=$?
	BENCH_LOAD_SECONDS=$(bench_elapsed "$t0")
	return $rc
}

# Number of routes the kernel lists (netlink dump, all tables, lines).
bench_count_routes() {
	ip -n "$1" -6 route show table all | wc -l
}

# ---------------------------------------------------------------- timing

# bench_elapsed T0: seconds since T0 (an $EPOCHREALTIME value), 3 decimals.
bench_elapsed() {
	local now=$EPOCHREALTIME
	awk -v a="$1" -v b="$now" 'BEGIN { printf "%.3f", b - a }'
}

# bench_time_ns NS CMD...: run CMD inside NS (stdout and stderr discarded)
# under `timeout $BENCH_TIMEOUT` (default 600 s). Prints "WALL SYS RC":
# wall and system CPU seconds of CMD alone (not of `ip netns exec`), and its
# exit status (124: timed out).
bench_time_ns() {
	local ns=$1
	shift
	ip netns exec "$ns" bash -c '
		TIMEFORMAT="%3R %3S"
		t=$1; shift
		out=$({ time timeout "$t" "$@" >/dev/null 2>&1; } 2>&1)
		echo "$out $?"' _ "${BENCH_TIMEOUT:-600}" "$@"
}

# bench_median_ns RUNS SLOW NS CMD...: run once; if that took less than SLOW
# seconds, run RUNS-1 more times. Sets BENCH_T to the median wall time,
# "timeout" or "failed (rc N)", and BENCH_SYS to the system CPU of that run.
# (Sets variables instead of printing so that callers need no subshell.)
bench_median_ns() {
	local runs=$1 slow=$2 ns=$3 r out all rc
	shift 3
	out=$(bench_time_ns "$ns" "$@")
	rc=${out##* }
	BENCH_SYS=n/a
	if [ "$rc" = 124 ]; then BENCH_T=timeout; return 1; fi
	if [ "$rc" != 0 ]; then BENCH_T="failed (rc $rc)"; return 1; fi
	all=$out
	if awk -v t="${out%% *}" -v s="$slow" 'BEGIN { exit !(t < s) }'; then
		for ((r = 1; r < runs; r++)); do
			all+=$'\n'$(bench_time_ns "$ns" "$@")
		done
	fi
	out=$(printf '%s\n' "$all" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }')
	read -r BENCH_T BENCH_SYS rc <<<"$out"
}

# bench_median LIST...: median of numbers.
bench_median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}

# bench_settle: after deleting a big namespace the kernel frees its routes in
# a workqueue; wait (at most 60 s) until unreclaimable slab stops shrinking
# so that the freeing does not steal CPU from the next measurement.
bench_settle() {
	local prev cur i
	prev=$(awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo)
	for i in $(seq 1 60); do
		sleep 1
		cur=$(awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo)
		[ $((prev - cur)) -gt 4096 ] || return 0
		prev=$cur
	done
}

# bench_fmt X: a duration for a table cell (3 significant digits, no
# exponent above 1e-4); anything that is not a number is printed unchanged.
bench_fmt() {
	awk -v x="$1" 'BEGIN {
		if (x !~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/) { print x; exit }
		if (x >= 100) printf "%.0f\n", x
		else if (x >= 10) printf "%.1f\n", x
		else if (x >= 1) printf "%.2f\n", x
		else printf "%.3g\n", x
	}'
}

# bench_ratio A B: A/B with 1 decimal, or n/a when either is not a number.
bench_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "n/a"
		else printf "%.1f\n", a / b
	}'
}

# bench_percentiles FILE [WORD]: "p50 p99 max seen timeouts" of the lines "WORD K NAME MS" or
# "WORD K NAME timeout" in FILE (WORD: probe, nlload's probe lines, by default; nearest rank;
# "n/a" when none was seen).
bench_percentiles() {
	awk -v w="${2:-probe}" '$1 == w && NF == 4 { if ($4 ~ /^-?[0-9.]+$/) print $4; else print "x" }' "$1" |
		sort -g | awk '
		$1 == "x" { to++; next }
		{ v[++n] = $1 }
		END {
			if (!n) { printf "n/a n/a n/a 0 %d\n", to; exit }
			i50 = int(n * 0.50 + 0.999999); i99 = int(n * 0.99 + 0.999999)
			printf "%.1f %.1f %.1f %d %d\n", v[i50], v[i99], v[n], n, to
		}'
}
