#!/usr/bin/env bash
# bench/bench_query.sh [N...] - the query API at N routes (default 1000 100000 1000000):
#
#   1. index: collect+publish time of the daemon against `ip -6 route show table all`, and
#      the parts this API adds to every snapshot (index build, JSON pre-render), index bytes
#      per route, in-process longest-prefix match cost;
#   2. /routes/lookup throughput over HTTP with wrk (loopback, inside the namespace),
#      addresses varied by a Lua script: half inside the loaded prefixes, half random;
#   3. expiring routes tracked separately: 10 routes that expire among the N permanent ones;
#      cost of serving /expiring (wrk), of the expiry timer's work (the next deadline from
#      the expiring index, measured in-process), the daemon's CPU while idle (no resync), and,
#      for reference, how long after a deadline the refreshed snapshot is out (a full dump,
#      so that one does grow with N).
#
# Prints markdown tables on stdout; progress on stderr. Needs root, wrk, curl, jq, a C
# compiler and a built tree (make). Each N gets a fresh namespace (bench/lib.sh), removed
# on exit. Bounded: every wait has a limit, wrk runs DURATION seconds (default 10).
#
# Environment: DURATION=10 (wrk seconds), CONNS=64, WRK_THREADS=2 (wrk shares the 2 cores
# with the daemon's 2 HTTP threads), OUT=FILE (append tables).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
URL='http://[::1]:9816'
DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
WRK_THREADS=${WRK_THREADS:-2}
OUT=${OUT:-}
[ $# -gt 0 ] || set -- 1000 100000 1000000

[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
for t in wrk curl jq awk "${CC:-cc}"; do command -v "$t" >/dev/null || bench_die "missing $t"; done
[ -x "$RTSNAPD" ] || bench_die "$RTSNAPD not built (make)"
mkdir -p "$BENCH_TMP"

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}

# ---- in-process helper: collect once in the namespace, time what the query API adds ----
HELPER=$BENCH_TMP/bench_query_helper
cat >"$BENCH_TMP/bench_query_helper.c" <<'EOF'
/* bench_query_helper: one collection in the current namespace, then: the lookup index
 * rebuilt (3 times, best kept), its bytes, in-process lookups, and the expiry timer's work:
 * the next deadline from the expiring index (what collector.c does on every wakeup) and
 * rendering /expiring. Prints "key value" lines. (The JSON is rendered with each segment
 * now, as it is built: no separate pre-render to time.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rtsnap/collector.h"
#include "rtsnap/index.h"
#include "rtsnap/query.h"
#include "rtsnap/snapshot.h"
#include "rtsnap/strbuf.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* what collector.c's next_expiry() does: a binary search in the deadline-ordered index */
static int64_t next_expiry(const struct snapshot *s, int64_t t_ms)
{
	size_t k = snapshot_expiring_after(s, t_ms);

	return k < snapshot_nexpiring(s) ? snapshot_route(s, snapshot_expiring(s)[k])->expires_ms
					 : 0;
}

int main(void)
{
	struct snapshot *s = NULL;
	struct snapshot_views *v;
	double t0 = now(), best, t;
	volatile int64_t sink = 0;
	uint64_t rng = 88172645463325252ull;
	long hits = 0;
	const long nlook = 2000000;
	size_t n;
	int64_t taken;

	if (collector_collect_once(&s)) {
		fprintf(stderr, "collect failed\n");
		return 1;
	}
	n = snapshot_nroutes(s);
	taken = snapshot_taken_mono_ms(s);
	printf("collect_s %.3f\nrecords %zu\nexpiring %zu\n", now() - t0, n, snapshot_nexpiring(s));
	v = snapshot_views(s);
	best = 1e9;
	for (int k = 0; k < 3; k++) {
		index_free(v->lookup);
		v->lookup = NULL;
		t = now();
		if (index_build(s))
			return 1;
		t = now() - t;
		best = t < best ? t : best;
	}
	printf("index_s %.4f\nindex_bytes %zu\njson_s -\n", best, index_bytes(v->lookup));
	t = now();
	for (long k = 0; k < nlook; k++) {
		uint8_t a[16];
		const struct route *r;
		long i;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		r = snapshot_route(s, rng % n);
		memcpy(a, r->dst, 16);
		for (int b = r->dst_len; b < 128; b++) /* random host bits */
			if ((rng >> (b % 61)) & 1)
				a[b / 8] |= (uint8_t)(0x80 >> (b % 8));
		if (k & 1) { /* half anywhere in 2400::/5 */
			a[0] = 0x24 | (uint8_t)(rng >> 40 & 3);
			a[1] = (uint8_t)(rng >> 48);
		}
		i = index_lookup(s, k & 1 ? 254 : r->table, a, NULL, taken);
		hits += i >= 0 && snapshot_route(s, (size_t)i)->dst_len > 0; /* not ::/0 */
	}
	t = now() - t;
	printf("lookup_ns %.0f\nlookup_hits %.3f\n", t / nlook * 1e9, (double)hits / nlook);
	t = now();
	for (long k = 0; k < 10000000; k++)
		sink += next_expiry(s, taken + (k & 1)); /* keep the compiler honest */
	t = now() - t;
	printf("timer_ns %.1f\n", t / 10000000 * 1e9);
	t = now();
	for (long k = 0; k < 20000; k++) {
		struct strbuf sb = { 0 };

		query_render_expiring(s, taken, &sb);
		sink += (int64_t)sb.len;
		strbuf_free(&sb);
	}
	t = now() - t;
	printf("expiring_render_us %.2f\n", t / 20000 * 1e6);
	snapshot_free(s);
	return sink == 42;
}
EOF
objs=$(ls "$BENCH_ROOT"/build/lib/librtsnap-*.a)
# shellcheck disable=SC2046,SC2086
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$BENCH_ROOT/include" \
	$(pkg-config --cflags libnl-3.0 libmicrohttpd jansson liburcu-bp zlib) \
	-o "$HELPER" "$BENCH_TMP/bench_query_helper.c" -Wl,--start-group $objs -Wl,--end-group \
	$(pkg-config --libs libnl-3.0 libmicrohttpd jansson liburcu-bp zlib) -lpthread ||
	bench_die "cannot build the helper (make first)"

# ---- wrk scripts ----
cat >"$BENCH_TMP/lookup.lua" <<'EOF'
-- /routes/lookup with 8192 different addresses per thread: half inside one of the
-- generator's /48 sites (bench/lib.sh bench_gen_routes: site s is
-- (9216 + s % 2048):(k >> 16):(k & 0xffff)::/48, k = s * 2654435761 mod 2^32),
-- half random in 2400::/5.
local paths, n = {}, 0
local sites = tonumber(os.getenv("SITES") or "125000")
init = function(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  for i = 1, 8192 do
    local a
    if i % 2 == 0 then
      local s = math.random(0, sites - 1)
      local k = (s * 2654435761) % 4294967296
      a = string.format("%x:%x:%x:%x:%x:%x:%x:%x", 9216 + s % 2048, math.floor(k / 65536), k % 65536,
        math.random(0, 65535), math.random(0, 65535), math.random(0, 65535), math.random(0, 65535),
        math.random(0, 65535))
    else
      a = string.format("%x:%x:%x:%x::%x", 0x2400 + math.random(0, 0x7ff), math.random(0, 65535),
        math.random(0, 65535), math.random(0, 65535), math.random(1, 65535))
    end
    paths[i] = "/routes/lookup?addr=" .. a
  end
end
request = function()
  n = n + 1
  return wrk.format("GET", paths[(n % 8192) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format("WRK %.0f %.3f %.3f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
EOF
cat >"$BENCH_TMP/plain.lua" <<'EOF'
done = function(summary, latency, requests)
  io.write(string.format("WRK %.0f %.3f %.3f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
EOF

# wrk_run NS SCRIPT PATH [SECONDS]: sets WRK_RPS WRK_P50 WRK_P99 (ms) WRK_BAD
wrk_run() {
	local out
	out=$(SITES=${SITES:-125000} ip netns exec "$1" wrk -t"$WRK_THREADS" -c"$CONNS" -d"${4:-$DURATION}s" \
		--latency -s "$2" "$URL$3" 2>&1 | awk '/^WRK / { print $2, $3, $4, $5 + $6 }')
	read -r WRK_RPS WRK_P50 WRK_P99 WRK_BAD <<<"${out:-n/a n/a n/a n/a}"
}

# daemon_up NS [ARGS]: start rtsnapd, wait (<= 300 s) until it serves; pid in DPID
daemon_up() {
	local ns=$1 i
	shift
	bench_bg ip netns exec "$ns" "$RTSNAPD" --listen '[::1]:9816' --log-level warn "$@"
	DPID=$BENCH_BG_PID
	for i in $(seq 1500); do
		ip netns exec "$ns" curl -sf -g "$URL/healthz" >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# cpu_ms PID: user+system CPU of the daemon (the child of ip netns exec) in ms
cpu_ms() {
	local p
	p=$(pgrep -P "$1" -n 2>/dev/null || echo "$1")
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1000 / hz }' "/proc/$p/stat"
}

status() { ip netns exec "$BENCH_NS" curl -sg "$URL/status" | jq -r "$1"; }

T_INDEX=() T_LOOKUP=() T_EXP=()
for n in "$@"; do
	bench_log "N=$n: namespace and routes"
	bench_ns_create
	bench_load_routes "$BENCH_NS" "$n" || bench_die "loading $n routes failed"
	bench_add_expiring "$BENCH_NS" 10 3600 || bench_die "adding expiring routes failed"
	nk=$(bench_count_routes "$BENCH_NS")
	bench_median_ns 3 2 "$BENCH_NS" ip -6 route show table all
	ipt=$BENCH_T

	bench_log "N=$n: in-process helper"
	declare -A H=()
	while read -r k v; do H[$k]=$v; done < <(ip netns exec "$BENCH_NS" "$HELPER")

	bench_log "N=$n: daemon"
	daemon_up "$BENCH_NS" --interval 0 || bench_die "rtsnapd did not start"
	dur=$(status .duration_seconds)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$(pgrep -P "$DPID" -n || echo "$DPID")/status")
	T_INDEX+=("| $n | $nk | $ipt | $(printf %.3f "$dur") | $(bench_ratio "$dur" "$ipt") | ${H[index_s]} | $(awk -v b="${H[index_bytes]}" 'BEGIN { printf "%.1f", b / 1048576 }') | $(awk -v b="${H[index_bytes]}" -v r="${H[records]}" 'BEGIN { printf "%.1f", b / r }') | ${H[json_s]} | ${H[lookup_ns]} ($(awk -v h="${H[lookup_hits]}" 'BEGIN { printf "%.0f", h * 100 }') % not ::/0) | $((rss / 1024)) |")

	bench_log "N=$n: wrk /routes/lookup"
	SITES=$(((n + 7) / 8)) wrk_run "$BENCH_NS" "$BENCH_TMP/lookup.lua" /
	T_LOOKUP+=("| $n | $WRK_RPS | $WRK_P50 | $WRK_P99 | $WRK_BAD | $CONNS conns, $WRK_THREADS wrk thread(s), ${DURATION} s |")

	bench_log "N=$n: /expiring and the expiry timer"
	wrk_run "$BENCH_NS" "$BENCH_TMP/plain.lua" /expiring 5
	erps=$WRK_RPS ep50=$WRK_P50
	c0=$(cpu_ms "$DPID")
	sleep 10
	c1=$(cpu_ms "$DPID")
	# one route that expires in 4 s: how long after its deadline the refreshed snapshot is
	# out (polled every 50 ms; the refresh is a full dump, so this part grows with N)
	e0=$(status .collections.expiry)
	ip -n "$BENCH_NS" -6 route add 2001:db8:ee00::/64 dev d0 expires 4
	deadline=$(date +%s.%N | awk '{ printf "%.3f", $1 + 4 }')
	for i in $(seq 600); do
		[ "$(status .collections.expiry)" -gt "$e0" ] && break
		sleep 0.05
	done
	pub=$(date +%s.%N | awk -v dl="$deadline" '{ printf "%.2f", $1 - dl }')
	T_EXP+=("| $n | ${H[expiring]} | $erps | $ep50 | ${H[timer_ns]} | ${H[expiring_render_us]} | $((c1 - c0)) | $pub ($(printf %.2f "$(status .duration_seconds)") s dump) |")

	bench_stop "$DPID"
	bench_ns_delete "$BENCH_NS"
	bench_settle
done

emit ""
emit "### Index and pre-render cost per snapshot ($(date -u +%F), $(uname -r), $(nproc) cores)"
emit ""
emit "| routes | kernel lists | \`ip -6 route show table all\` s | rtsnapd collect+publish s | ratio | index build s | index MB | index B/route | JSON pre-render s | in-process lookup ns | daemon RSS MB |"
emit "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in "${T_INDEX[@]}"; do emit "$r"; done
emit ""
emit "### /routes/lookup over HTTP (wrk, loopback; half the addresses inside loaded prefixes)"
emit ""
emit "| routes | requests/s | p50 ms | p99 ms | errors | load |"
emit "|---:|---:|---:|---:|---:|---|"
for r in "${T_LOOKUP[@]}"; do emit "$r"; done
emit ""
emit "### 10 expiring routes among N permanent ones"
emit ""
emit "| routes | expiring | GET /expiring req/s | p50 ms | next deadline (timer) ns | render /expiring µs | daemon CPU ms in 10 s idle | deadline → refreshed snapshot s |"
emit "|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in "${T_EXP[@]}"; do emit "$r"; done
