#!/usr/bin/env bash
# bench/bench_web.sh [N...] - the web page at "/" with N routes (default 1000 200000).
#
# For each N: a fresh namespace (bench/lib.sh) with N routes over five tables plus EXPIRING
# routes with a lifetime, rtsnapd in it, headless Chromium in it driven over DevTools
# (tests/lib/cdp.sh). Measured:
#   - page weight: the bytes of /, app.js, style.css, icon.svg as sent (gzip) and plain;
#   - first load: ms from navigation start until every view has rendered the first snapshot
#     (the page's data-ready-ms), first contentful paint, and the bytes the browser received
#     for the whole load (Resource Timing transferSize, documents and API calls included);
#   - a filtered page: ms from the page's request for a typed filter (table 1000, 100 per
#     page) until its rows are in the DOM (the page's data-ms), and the same for the next page
#     through the X-Next-After cursor;
#   - live polling: bytes per idle poll (/healthz + /status answered 304);
#   - for scale: the bytes of GET /routes (the whole table), which the page never asks for.
# Median of RUNS page loads (fresh browser profile each, so nothing is cached).
#
# Prints a markdown table on stdout; progress on stderr. Needs root and chromium.
# Environment: RUNS=3, EXPIRING=100, RTSNAPD=build/rtsnapd, OUT=FILE (also append there).
set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RTSNAPD=${RTSNAPD:-$BENCH_ROOT/build/rtsnapd}
RUNS=${RUNS:-3}
EXPIRING=${EXPIRING:-100}
OUT=${OUT:-}
URL='http://[::1]:9816'

if [ $# -eq 0 ]; then set -- 1000 200000; fi
for n in "$@"; do
	case $n in '' | *[!0-9]*) bench_die "not a route count: $n" ;; esac
done
[ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
for tool in ip curl jq chromium; do
	command -v "$tool" >/dev/null || bench_die "missing $tool"
done
[ -x "$RTSNAPD" ] || bench_die "$RTSNAPD not built (make)"

# tests/lib/cdp.sh expects these from tests/lib/common.sh
mkdir -p "$BENCH_TMP"
RTSNAP_TMP=$(mktemp -d "$BENCH_TMP/web.XXXXXX")
bg_register() { BENCH_PIDS+=("$1"); }
_stop_pid() { bench_stop "$1"; }
. "$BENCH_ROOT/tests/lib/cdp.sh"

emit() {
	printf '%s\n' "$*"
	[ -z "$OUT" ] || printf '%s\n' "$*" >>"$OUT"
}
size() { # NS PATH [CURL-ARG...]: bytes of the response body as received
	local ns=$1 p=$2
	shift 2
	ip netns exec "$ns" curl -sg -o /dev/null -w '%{size_download}' "$@" "$URL$p"
}

emit "| routes | page B gzip | page B plain | first render ms | first paint ms | load B received | filtered page ms | next page ms | idle poll B | GET /routes B |"
emit "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "$@"; do
	bench_ns_create
	ns=$BENCH_NS
	bench_log "loading $n routes into $ns"
	bench_load_routes "$ns" "$n" || bench_die "loading routes failed"
	bench_add_expiring "$ns" "$EXPIRING" 3600 || bench_die "adding expiring routes failed"
	bench_bg ip netns exec "$ns" "$RTSNAPD" --listen '[::1]:9816' --interval 0 2>>"$BENCH_TMP/rtsnapd-web.log"
	for i in $(seq 1 600); do
		ip netns exec "$ns" curl -sgf --max-time 2 "$URL/healthz" >/dev/null 2>&1 && break
		sleep 0.5
	done
	w_gz=0 w_plain=0
	for p in / /web/app.js /web/style.css /web/icon.svg; do
		w_gz=$((w_gz + $(size "$ns" "$p" -H 'Accept-Encoding: gzip')))
		w_plain=$((w_plain + $(size "$ns" "$p")))
	done
	all_routes=$(size "$ns" /routes)
	etag=$(ip netns exec "$ns" curl -sgI "$URL/status" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
	poll=$(($(size "$ns" /healthz) + $(size "$ns" /status -H "If-None-Match: $etag")))
	ready=() paint=() bytes=() filt=() next=()
	for r in $(seq 1 "$RUNS"); do
		cdp_start "$ns" || bench_die "chromium did not start"
		cdp_nav "$URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 120 ||
			bench_die "the page did not render"
		ready+=("$(cdp_eval 'Number(document.documentElement.dataset.readyMs)')")
		paint+=("$(cdp_eval 'Math.round((performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime)')")
		bytes+=("$(cdp_eval '[...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")].reduce((a, e) => a + e.transferSize, 0)')")
		cdp_eval 'document.querySelector("#filter select[name=limit]").value = "100", true' >/dev/null
		cdp_type '#filter input[name=table]' 1000
		cdp_key Enter
		cdp_wait 'document.getElementById("routes-state").textContent.startsWith("Page 1:")' 60 ||
			bench_die "the filtered page did not show"
		filt+=("$(cdp_eval 'Number(document.getElementById("route-table").dataset.ms)')")
		if [ "$(cdp_eval 'document.getElementById("page-next").disabled')" = false ]; then
			cdp_eval 'document.getElementById("page-next").click(), true' >/dev/null
			cdp_wait 'document.getElementById("routes-state").textContent.startsWith("Page 2:")' 60 ||
				bench_die "the next page did not show"
			next+=("$(cdp_eval 'Number(document.getElementById("route-table").dataset.ms)')")
		else
			next+=(n/a)
		fi
		[ "$r" != 1 ] || cdp_screenshot "$BENCH_TMP/web-$n.png"
		cdp_stop
	done
	emit "| $n | $w_gz | $w_plain | $(bench_median "${ready[@]}") | $(bench_median "${paint[@]}") | $(bench_median "${bytes[@]}") | $(bench_median "${filt[@]}") | $(bench_median "${next[@]}") | $poll | $all_routes |"
	bench_stop "$BENCH_BG_PID"
	bench_ns_delete "$ns"
	bench_settle
done
bench_log "screenshots: $BENCH_TMP/web-N.png"
