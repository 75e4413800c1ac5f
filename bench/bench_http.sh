#!/usr/bin/env bash
# bench/bench_http.sh — the HTTP front door under many connections, A/B in one run.
#
# Loads ROUTES routes (bench_gen_routes) into one namespace, then for each rtsnapd binary in
# BINARIES ("NAME=PATH ...", each in turn, ROUNDS times, a fresh daemon per scenario) runs wrk
# for DURATION seconds per cell, all on [::1] inside the namespace:
#   plain    /healthz, /metrics, /routes/lookup at CONNS, /ipv6_route (a full read) at FULL_CONNS
#   streams  the same daemon with STREAMS /events streams held open by one python client:
#            /healthz and /routes/lookup at CONNS
#   tls      a daemon with a self-signed certificate (--web-config-file): as plain
#   auth     TLS and basic auth (bcrypt cost AUTH_COST); wrk sends the right password (checked
#            once before, so it is cached): /healthz, /metrics, /routes/lookup at CONNS
#   flood    the same daemon while AUTH_CLIENTS clients (tests/lib/authflood.py) send fresh
#            wrong passwords on kept-alive TLS connections from the same address
#   ceiling  (when nginx is installed, unless CEILING=0) nginx in the same namespace answering
#            every request with a constant 200 (two workers, no log): /healthz at CONNS. What
#            this machine, with wrk on the same cores, serves at best; rtsnapd's rows compare
#            with it, not with a figure from another machine. Nothing in rtsnap needs nginx.
# Then, unless BIG_ROUTES is 0, a second namespace with BIG_ROUTES routes: /routes/lookup
# (plain) for two addresses at CONNS.
#
# Prints a markdown table: requests/s, p50 and p99 latency, wrk's socket errors (connect,
# read, write, timeout), non-2xx answers, the daemon's CPU (utime + stime from /proc/PID/stat
# around the cell) per 10 000 requests, and the ratio of requests/s to the first connection
# count of the same daemon, scenario and path. wrk (and the streams and flood clients) share
# the machine's cores with rtsnapd: compare rows of one run, not runs of different machines.
#
# Needs root, wrk (with TLS), curl, openssl, python3 (with crypt for the auth scenarios).
# Environment: BINARIES [new=build/rtsnapd], ROUTES [100000], CONNS ["32 256 1024 4096"],
# FULL_CONNS ["8 64"; empty skips], DURATION [5], ROUNDS [1], SCENARIOS ["plain streams tls auth flood"; empty: only BIG_ROUTES],
# STREAMS [1000], AUTH_CLIENTS [50], AUTH_COST [12], BIG_ROUTES [1000000; 0 skips],
# MAX_CONNECTIONS [8192], CEILING [1 if nginx is installed], OUT=FILE (append the table), PERF_DIR=DIR (record each cell with
# `perf record -g -p PID` into DIR; for profiling runs only, since it perturbs the numbers).
set -u
BENCH_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$BENCH_ROOT/bench/lib.sh"
cd "$BENCH_ROOT" || exit 1

BINARIES=${BINARIES:-"new=build/rtsnapd"}
ROUTES=${ROUTES:-100000}
CONNS=${CONNS:-"32 256 1024 4096"}
FULL_CONNS=${FULL_CONNS-"8 64"}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-1}
SCENARIOS=${SCENARIOS-"plain streams tls auth flood"}
STREAMS=${STREAMS:-1000}
AUTH_CLIENTS=${AUTH_CLIENTS:-50}
AUTH_COST=${AUTH_COST:-12}
BIG_ROUTES=${BIG_ROUTES:-1000000}
MAX_CONNECTIONS=${MAX_CONNECTIONS:-8192}
OUT=${OUT:-}
LISTEN='[::1]:9816'
LOOKUP="/routes/lookup?addr=2001:db8:ff00::5"
TCK=$(getconf CLK_TCK)
[ "$(id -u)" = 0 ] || bench_die "needs root"
for tool in ip curl wrk awk openssl python3; do
	command -v "$tool" >/dev/null || bench_die "missing $tool"
done
# as many descriptors as allowed: wrk needs one per connection, rtsnapd (which inherits the
# limit) one per connection too, the streams client one per stream
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((${CONNS##* } + STREAMS + 64)) ] ||
	bench_log "warning: ulimit -n is $(ulimit -n), less than the connections asked"

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}
to_ms() {
	awk '{ v = $1 + 0
		if ($1 ~ /us$/) v /= 1000; else if ($1 ~ /ms$/) v += 0; else if ($1 ~ /s$/) v *= 1000
		printf "%.2f\n", v }'
}
# cpu_ticks PID: utime + stime of the process (all threads), in clock ticks
cpu_ticks() {
	local p t=0 v
	for p in "$1" $(pgrep -P "$1" 2>/dev/null); do # and its children (nginx's workers)
		v=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/bench_http.XXXXXX") || bench_die "no scratch directory"
chmod 700 "$T"
HOSTS_DIRS=()
trap 'bench_cleanup; rm -rf "$T" "${HOSTS_DIRS[@]}"' EXIT

# new_ns: a namespace (BENCH_NS) whose /etc/hosts (bind-mounted by `ip netns exec`) names ::1
# localhost only. wrk sends the URL's host as TLS server name, and GnuTLS refuses a handshake
# whose server name is an address literal ("::1"): TLS cells go to https://localhost:9816.
new_ns() {
	bench_ns_create
	mkdir -p "/etc/netns/$BENCH_NS" || bench_die "cannot create /etc/netns/$BENCH_NS"
	HOSTS_DIRS+=("/etc/netns/$BENCH_NS")
	printf '::1 localhost\n' >"/etc/netns/$BENCH_NS/hosts"
}

# ---------------------------------------------------------------- certificate, passwords

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$T/srv.key" -out "$T/srv.crt" -subj "/CN=localhost" \
	-addext "subjectAltName=DNS:localhost,IP:::1" 2>"$T/openssl.log" ||
	bench_die "openssl: $(tail -n 3 "$T/openssl.log")"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$T/srv.crt" "$T/srv.key" >"$T/tls.yml"
AUTH_HDR=
if python3 -W ignore -c 'import crypt' 2>/dev/null; then
	h=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** int(sys.argv[2]))))' \
		'right horse' "$AUTH_COST")
	{ cat "$T/tls.yml"; printf "basic_auth_users:\n  alice: '%s'\n" "$h"; } >"$T/auth.yml"
	AUTH_HDR="Authorization: Basic $(printf '%s' 'alice:right horse' | base64)"
else
	bench_log "python3 has no crypt module: no auth and flood scenarios"
fi

# The streams client: holds N /events streams on [::1]:9816 open (reading whatever comes)
# until SIGTERM or SECONDS; writes "ready OPENED" to READY once all are open; prints one JSON
# line at the end: opened, answered 200, closed by the server, bytes read.
cat >"$T/streams.py" <<'PY'
import json, selectors, signal, socket, sys, time
n, seconds, ready = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
sel = selectors.DefaultSelector()
st = {"opened": 0, "ok": 0, "closed": 0, "bytes": 0, "errors": 0}
deadline = time.monotonic() + seconds
for i in range(n):
    try:
        s = socket.create_connection(("::1", 9816), timeout=5)
        s.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, {"head": b""})
        st["opened"] += 1
    except OSError:
        st["errors"] += 1
with open(ready, "w") as f:
    f.write("ready %d\n" % st["opened"])
while not stop[0] and time.monotonic() < deadline:
    for key, _ in sel.select(timeout=0.5):
        s, c = key.fileobj, key.data
        try:
            d = s.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            d = b""
        if not d:
            st["closed"] += 1
            sel.unregister(s)
            s.close()
            continue
        st["bytes"] += len(d)
        if c["head"] is not None:
            c["head"] += d
            if len(c["head"]) >= 12:
                st["ok"] += c["head"][9:12] == b"200"
                c["head"] = None
print(json.dumps(st))
PY

# ---------------------------------------------------------------- one cell, one daemon

# cell NS PID URL CONNS [HEADER]: one wrk run; prints "rps p50 p99 errors non2xx cpu_ms_per_10k"
cell() {
	local ns=$1 pid=$2 url=$3 c=$4 hdr=${5:-} out rps p50 p99 err bad n c0 c1 perfpid
	local -a h=()
	[ -z "$hdr" ] || h=(-H "$hdr")
	if [ -n "${PERF_DIR:-}" ]; then
		mkdir -p "$PERF_DIR"
		perf record -q -g -p "$pid" -o "$PERF_DIR/$CELL_TAG.data" -- sleep "$DURATION" \
			>/dev/null 2>&1 &
		perfpid=$!
	fi
	c0=$(cpu_ticks "$pid")
	out=$(ip netns exec "$ns" timeout $((DURATION + 60)) wrk -t2 -c"$c" -d"${DURATION}s" \
		--timeout 2s --latency "${h[@]}" "$url" 2>&1)
	c1=$(cpu_ticks "$pid")
	[ -z "${PERF_DIR:-}" ] || wait "$perfpid"
	rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
	n=$(awk '/ requests in / { print $1 }' <<<"$out")
	p50=$(awk '$1 == "50%" { print $2 }' <<<"$out" | to_ms)
	p99=$(awk '$1 == "99%" { print $2 }' <<<"$out" | to_ms)
	err=$(awk '/Socket errors/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' <<<"$out")
	bad=$(awk '/Non-2xx or 3xx responses:/ { print $4 }' <<<"$out")
	[ -n "$rps" ] || bench_log "wrk $c $url: $(tail -n 2 <<<"$out")"
	echo "${rps:-0} ${p50:--} ${p99:--} ${err:-0} ${bad:-0}" \
		"$(awk -v t=$((c1 - c0)) -v k="$TCK" -v n="${n:-0}" \
			'BEGIN { if (n > 0) printf "%.1f", t / k * 1000 / n * 10000; else print "-" }')"
}

# daemon_start NS BIN ROUTES CURL-ARGS... -- RTSNAPD-ARGS...: start rtsnapd in NS and wait (at
# most 600 s) until its mirror holds ROUTES routes; pid in DPID, seconds to ready in DREADY
daemon_start() {
	local ns=$1 bin=$2 want=$3 t0 i have=0
	local -a c=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do c+=("$1"); shift; done
	shift
	t0=$EPOCHREALTIME
	bench_bg ip netns exec "$ns" "$bin" --listen "$LISTEN" --interval 0 \
		--max-connections "$MAX_CONNECTIONS" "$@" 2>>"$T/rtsnapd.log"
	DPID=$BENCH_BG_PID
	for _ in $(seq 1 3000); do
		kill -0 "$DPID" 2>/dev/null || bench_die "rtsnapd exited: $(tail -n 5 "$T/rtsnapd.log")"
		have=$(ip netns exec "$ns" curl -sgf --max-time 5 "${c[@]}" "$SCHEME_URL/metrics" |
			awk '/^rtsnap_mirror_routes / { print $2 + 0 }')
		[ "${have:-0}" -lt "$want" ] || break
		sleep 0.2
	done
	[ "${have:-0}" -ge "$want" ] || bench_die "rtsnapd has ${have:-0} of $want routes after 600 s"
	DREADY=$(bench_elapsed "$t0")
}

# row NAME ROUND ROUTES SCENARIO PATH CONNS VALUES FIRST: one table row
row() {
	local rps p50 p99 err bad cpu
	read -r rps p50 p99 err bad cpu <<<"$7"
	emit "| $1 | $2 | $3 | $4 | ${5%%\?*} | $6 | $rps | $p50 | $p99 | $err | $bad | $cpu |" \
		"$(bench_ratio "$rps" "$8") |"
}

# run_paths NAME ROUND ROUTES SCENARIO NS URL [HEADER] -- PATH...: CONNS cells for each PATH
# (/ipv6_route at FULL_CONNS) against the daemon DPID
run_paths() {
	local name=$1 round=$2 routes=$3 scen=$4 ns=$5 url=$6 hdr=${7:-} path conns c v first
	shift 7
	[ "${1:-}" != -- ] || shift
	for path in "$@"; do
		conns=$CONNS
		[ "$path" = /ipv6_route ] && conns=$FULL_CONNS
		first=
		for c in $conns; do
			CELL_TAG=$(printf '%s-%s-%s-%s-%s' "$name" "$routes" "$scen" "$path" "$c" | tr -c 'A-Za-z0-9.\n-' _)
			v=$(cell "$ns" "$DPID" "$url$path" "$c" "$hdr")
			[ -n "$first" ] || first=${v%% *}
			row "$name" "$round" "$routes" "$scen" "$path" "$c" "$v" "$first"
			sleep 1
		done
	done
}

daemon_stop() {
	local rss
	rss=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$DPID/status" 2>/dev/null)
	bench_stop "$DPID"
	NOTES+=("$1: rtsnapd ready ${DREADY} s after start, peak RSS ${rss:-?} MB")
	sleep 2
}

metric() { # metric NS CURL-ARGS... -- NAME: one sample's value
	local ns=$1
	local -a c=()
	shift
	while [ "$1" != -- ]; do c+=("$1"); shift; done
	ip netns exec "$ns" curl -sgf --max-time 5 "${c[@]}" "$SCHEME_URL/metrics" |
		awk -v m="$2" '$1 == m { print $2 + 0 }'
}

# ceiling_cells ROUND: nginx answering a constant in the namespace, /healthz at CONNS
ceiling_cells() {
	local c=$T/nginx.conf
	cat >"$c" <<-EOF
		worker_processes 2;
		daemon off;
		pid $T/nginx.pid;
		error_log $T/nginx.log;
		events { worker_connections $((MAX_CONNECTIONS + 64)); use epoll; }
		http {
			access_log off;
			client_body_temp_path $T; proxy_temp_path $T; fastcgi_temp_path $T;
			uwsgi_temp_path $T; scgi_temp_path $T;
			keepalive_requests 100000000;
			keepalive_timeout 60s;
			server {
				listen $LISTEN reuseport backlog=4096;
				location / { default_type application/json; return 200 '{"status":"ok"}\n'; }
			}
		}
	EOF
	bench_bg ip netns exec "$ns" nginx -e "$T/nginx.log" -c "$c"
	DPID=$BENCH_BG_PID
	for _ in $(seq 1 50); do
		ip netns exec "$ns" curl -sgf --max-time 1 "http://$LISTEN/healthz" >/dev/null && break
		sleep 0.1
	done
	DPID=$(cat "$T/nginx.pid" 2>/dev/null || echo "$DPID") # the master, whose children serve
	run_paths "nginx (constant)" "$1" "$ROUTES" plain "$ns" "http://$LISTEN" "" -- /healthz
	bench_stop "$BENCH_BG_PID"
	sleep 2
}

has() { case " $SCENARIOS " in *" $1 "*) return 0 ;; esac; return 1; }

# ---------------------------------------------------------------- the run

NOTES=()
new_ns
ns=$BENCH_NS
bench_log "loading $ROUTES routes into $ns"
bench_load_routes "$ns" "$ROUTES" || bench_die "load failed"
NOTES+=("$ROUTES routes loaded in $BENCH_LOAD_SECONDS s")
emit ""
emit "rtsnap bench_http — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r)," \
	"wrk ${DURATION}s per cell (2 threads, 2 s timeout), rtsnapd --max-connections $MAX_CONNECTIONS," \
	"ulimit -n $(ulimit -n)"
emit ""
emit "| daemon | round | routes | scenario | path | conns | req/s | p50 ms | p99 ms | socket errors | non-2xx | CPU ms / 10k req | req/s vs first |"
emit "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
CEILING=${CEILING:-$(command -v nginx >/dev/null && echo 1 || echo 0)}
[ "$CEILING" = 1 ] || NOTES+=("no ceiling rows (CEILING=0 or nginx not installed)")
for ((round = 1; round <= ROUNDS; round++)); do
	[ "$CEILING" != 1 ] || ceiling_cells "$round"
	for b in $BINARIES; do
		name=${b%%=*} bin=${b#*=}
		[ -x "$bin" ] || bench_die "no executable $bin"
		SCHEME_URL="http://$LISTEN"
		if has plain || has streams; then
			daemon_start "$ns" "$bin" "$ROUTES" --
			! has plain || run_paths "$name" "$round" "$ROUTES" plain "$ns" "$SCHEME_URL" "" -- \
				/healthz /metrics "$LOOKUP" /ipv6_route
			if has streams && [ "$STREAMS" -gt 0 ]; then
				rm -f "$T/ready"
				ip netns exec "$ns" timeout 900 python3 "$T/streams.py" "$STREAMS" 800 "$T/ready" \
					>"$T/streams.out" 2>&1 &
				spid=$!
				BENCH_PIDS+=("$spid")
				for _ in $(seq 1 300); do [ -s "$T/ready" ] && break; sleep 0.2; done
				sleep 2
				open0=$(metric "$ns" -- rtsnap_event_streams)
				run_paths "$name" "$round" "$ROUTES" "streams $STREAMS" "$ns" "$SCHEME_URL" "" -- \
					/healthz "$LOOKUP"
				open1=$(metric "$ns" -- rtsnap_event_streams)
				bench_stop "$spid"
				NOTES+=("$name streams: client $(tr -d '\n' <"$T/ready" 2>/dev/null), $(tail -n 1 "$T/streams.out"); rtsnap_event_streams ${open0:-?} before the cells, ${open1:-?} after")
			fi
			daemon_stop "$name plain"
		fi
		SCHEME_URL="https://localhost:${LISTEN##*:}"
		if has tls; then
			daemon_start "$ns" "$bin" "$ROUTES" -k -- --web-config-file "$T/tls.yml"
			run_paths "$name" "$round" "$ROUTES" tls "$ns" "$SCHEME_URL" "" -- \
				/healthz /metrics "$LOOKUP" /ipv6_route
			daemon_stop "$name tls"
		fi
		if [ -n "$AUTH_HDR" ] && { has auth || has flood; }; then
			daemon_start "$ns" "$bin" "$ROUTES" -k -u 'alice:right horse' -- \
				--web-config-file "$T/auth.yml"
			! has auth || run_paths "$name" "$round" "$ROUTES" "tls+auth" "$ns" "$SCHEME_URL" \
				"$AUTH_HDR" -- /healthz /metrics "$LOOKUP"
			if has flood; then
				b0=$(metric "$ns" -k -u 'alice:right horse' -- rtsnap_auth_bcrypt_total)
				l0=$(metric "$ns" -k -u 'alice:right horse' -- 'rtsnap_auth_refused_total{reason="limited"}')
				r0=$(metric "$ns" -k -u 'alice:right horse' -- 'rtsnap_http_requests_total{endpoint="/metrics",code="401"}')
				secs=$(($(wc -w <<<"$CONNS") * 3 * (DURATION + 5) + 20)) # outlasts the cells
				half=$((AUTH_CLIENTS / 2))
				ip netns exec "$ns" timeout $((secs + 30)) python3 "$BENCH_ROOT/tests/lib/authflood.py" \
					::1 9816 "$T/srv.crt" "$secs" "$half" alice >"$T/flood1" 2>&1 &
				f1=$!
				ip netns exec "$ns" timeout $((secs + 30)) python3 "$BENCH_ROOT/tests/lib/authflood.py" \
					::1 9816 "$T/srv.crt" "$secs" $((AUTH_CLIENTS - half)) nobody >"$T/flood2" 2>&1 &
				f2=$!
				BENCH_PIDS+=("$f1" "$f2")
				sleep 2
				run_paths "$name" "$round" "$ROUTES" "tls+auth, $AUTH_CLIENTS wrong" "$ns" \
					"$SCHEME_URL" "$AUTH_HDR" -- /healthz /metrics "$LOOKUP"
				b1=$(metric "$ns" -k -u 'alice:right horse' -- rtsnap_auth_bcrypt_total)
				lim=$(metric "$ns" -k -u 'alice:right horse' -- 'rtsnap_auth_refused_total{reason="limited"}')
				r1=$(metric "$ns" -k -u 'alice:right horse' -- 'rtsnap_http_requests_total{endpoint="/metrics",code="401"}')
				bench_stop "$f1"
				bench_stop "$f2"
				NOTES+=("$name flood: $AUTH_CLIENTS clients on their own TLS connections (stopped after the cells); while they ran: $((${b1:-0} - ${b0:-0})) bcrypt, $((${lim:-0} - ${l0:-0})) refused as limited (429), $((${r1:-0} - ${r0:-0})) answered 401")
			fi
			daemon_stop "$name tls+auth"
		fi
	done
done

if [ "$BIG_ROUTES" -gt 0 ]; then
	bench_ns_delete "$ns"
	bench_settle
	new_ns
	ns=$BENCH_NS
	bench_log "loading $BIG_ROUTES routes into $ns"
	bench_load_routes "$ns" "$BIG_ROUTES" || bench_die "load failed"
	NOTES+=("$BIG_ROUTES routes loaded in $BENCH_LOAD_SECONDS s; kernel slab $(awk '/^Slab:/ { printf "%.0f", $2 / 1024 }' /proc/meminfo) MB after")
	# a /128 inside a /112 or /96 inside a /80 ... inside a /48 (site 1000, table main)
	deep=$(bench_gen_routes 8008 | tail -n 1 | awk '{ sub("/128", "", $1); print $1 }')
	SCHEME_URL="http://$LISTEN"
	for ((round = 1; round <= ROUNDS; round++)); do
		for b in $BINARIES; do
			name=${b%%=*} bin=${b#*=}
			daemon_start "$ns" "$bin" "$BIG_ROUTES" --
			run_paths "$name" "$round" "$BIG_ROUTES" plain "$ns" "$SCHEME_URL" "" -- \
				"$LOOKUP" "/routes/lookup?addr=$deep"
			daemon_stop "$name plain $BIG_ROUTES routes"
		done
	done
	emit ""
	emit "The second /routes/lookup of the $BIG_ROUTES-route rows asks for $deep (a /128 nested in its /48 site)."
fi
emit ""
for n in "${NOTES[@]}"; do emit "- $n"; done
