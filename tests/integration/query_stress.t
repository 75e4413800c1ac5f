#!/bin/bash
# query_stress.t - the query endpoints under load while snapshots are replaced many times a
# second: readers hit filtered /routes (prefix=, covers=, dev=, paging), /routes/lookup and
# /expiring, while routes (many of them with 1-3 s lifetimes, so expiry refreshes happen
# too) are added and deleted without debounce. Run against the ASan+UBSan and the TSan
# builds (retired snapshots are poisoned there): every answer must be complete, well-formed
# JSON, the sanitizers must report nothing, and the daemon must exit 0 on SIGTERM.
# Bounded in time (STRESS_SECONDS, default 8) and count.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl jq

DURATION=${STRESS_SECONDS:-8}
variants=()
[ -x "$TOP/build/asan/rtsnapd" ] && variants+=(asan)
[ -x "$TOP/build/tsan/rtsnapd" ] && variants+=(tsan)
[ ${#variants[@]} -gt 0 ] || tap_skip_all "no sanitizer build (make asan tsan)"

# reader NS OUT SEED: bounded loop; one line in OUT per bad answer, one in OUT.count per round
reader() {
	local ns=$1 out=$2 seed=$3 end=$((SECONDS + DURATION)) i=0 q cfg=$2.cfg
	while [ $SECONDS -lt $end ] && [ $i -lt 500 ]; do
		i=$((i + 1))
		# one curl per round, several queries on one connection
		{
			for q in "routes?prefix=2001:db8::/32" "routes?covers=2001:db8:$((i % 4)):$((i % 20))::1" \
				"routes?dev=s0&limit=7" "routes?expiring=1" "routes?table=10$((i % 3))&limit=3" \
				"routes/lookup?addr=2001:db8:$((i % 2)):$((i % 20))::$seed" \
				"routes/lookup?addr=2001:db8:ffff::1&table=101" "expiring"; do
				printf 'url = "%s/%s"\noutput = "%s.%s"\n' "$RTSNAP_URL" "$q" "$out" "${q//[^a-z0-9]/_}"
			done
		} >"$cfg"
		ip netns exec "$ns" curl -sS -g --max-time 10 -K "$cfg" -w '%{http_code}\n' >"$out.codes" 2>>"$out.err" ||
			echo "curl failed" >>"$out"
		grep -qvE '^(200|404)$' "$out.codes" && echo "status: $(tr '\n' ' ' <"$out.codes")" >>"$out"
		for f in "$out".routes* "$out".expiring; do
			jq -e 'type == "array" or type == "object"' "$f" >/dev/null 2>&1 || echo "bad JSON in ${f##*.}" >>"$out"
		done
		echo ok >>"$out.count"
	done
}

# churn NS: blocks of routes in and out (some with short lifetimes), no debounce
churn() {
	local ns=$1 end=$((SECONDS + DURATION)) k=0 j
	while [ $SECONDS -lt $end ] && [ $k -lt 2000 ]; do
		k=$((k + 1))
		{
			for j in $(seq 0 19); do
				echo "route add 2001:db8:$((k % 2)):$j::/64 via 2001:db8:5::2 table $((100 + j % 3))"
				echo "route add 2001:db8:$((k % 4)):$j::/64 dev s0 expires $((1 + j % 3))"
			done
		} | ip -n "$ns" -6 -batch - -force >/dev/null 2>&1
		{
			for j in $(seq 0 19); do echo "route del 2001:db8:$(((k + 1) % 2)):$j::/64 table $((100 + j % 3))"; done
		} | ip -n "$ns" -6 -batch - -force >/dev/null 2>&1
		sleep 0.05
	done
}

for v in "${variants[@]}"; do
	ns_new NS
	rk_static "$NS" >/dev/null 2>&1
	export TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0"
	export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1"
	RTSNAPD=$TOP/build/$v/rtsnapd daemon_start "$NS" --debounce-ms 0 --interval 1
	tap_ok $? "$v: rtsnapd starts" || continue
	pids=()
	for r in 1 2 3; do
		reader "$NS" "$RTSNAP_TMP/$v-r$r" "$r" &
		pids+=($!)
	done
	churn "$NS" &
	pids+=($!)
	for p in "${pids[@]}"; do wait "$p"; done
	rounds=$(cat "$RTSNAP_TMP/$v"-r*.count 2>/dev/null | wc -l)
	bad=$(cat "$RTSNAP_TMP/$v"-r? 2>/dev/null | sort | uniq -c | head -n 5)
	tap_cmd "$v: readers made progress ($rounds rounds of 8 queries)" test "$rounds" -gt 10
	tap_is "$bad" "" "$v: every answer complete and well-formed"
	gens=$(ip netns exec "$NS" curl -sg "$RTSNAP_URL/status" | jq .generation)
	tap_cmd "$v: snapshots were replaced meanwhile (generation $gens)" test "${gens:-0}" -gt 20
	daemon_stop "$NS" >/dev/null
	tap_ok $? "$v: exits 0 on SIGTERM"
	log=$(daemon_log "$NS")
	tap_cmd "$v: no sanitizer report" sh -c "! grep -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error|LeakSanitizer' '$log'"
	grep -E -A12 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error' "$log" | head -n 40 | sed 's/^/# /'
done
tap_done
