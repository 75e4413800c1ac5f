#!/bin/bash
# json_ra.t - routes learned from router advertisements (radvd in a peer namespace):
# default router with preference and lifetime, prefix routes, route-information
# options with and without lifetime, a ::/0 route-information option. rtsnapd's
# JSON (--once and GET /routes) must be the bytes `ip -j -6 route show table all`
# prints in the same namespace, "expires" within 1 s.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl jq radvd
require_rtsnapd

# _json_masked FILE: the bytes with every "expires" value replaced by E, and a newline
# after every "}," (so that a difference shows as the objects that differ).
_json_masked() {
	sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' "$1"
}

# _json_expires_close WANT GOT: the "expires" values, in order, differ by at most 1.
_json_expires_close() {
	paste <(grep -oE '"expires":-?[0-9]+' "$1" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$2" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -1 || d > 1 || NF != 2) bad = 1 } END { exit bad }'
}

# _json_kernel NS: `ip -j -6 route show table all` in NS, through jq -c "$JSON_FILTER"
# when that is set.
_json_kernel() {
	if [ -n "${JSON_FILTER:-}" ]; then
		kernel_json "$1" | jq -c "$JSON_FILTER"
	else
		kernel_json "$1"
	fi
}

# json_compare NS DESC CMD...: CMD's output (run in NS) equals `ip -j -6 route show
# table all` (expires within 1 s), byte for byte; with JSON_FILTER set, the kernel's
# array goes through that jq filter and CMD's through `jq -c .`. The kernel is read
# before and after; if it changed meanwhile (RA refresh, DAD, daemon lag) the sample is
# retried, up to 10 times.
json_compare() {
	local ns=$1 desc=$2 d="$RTSNAP_TMP/json" i
	shift 2
	for i in $(seq 10); do
		_json_kernel "$ns" >"$d.k1"
		if [ -n "${JSON_FILTER:-}" ]; then
			"$@" 2>"$d.err" | jq -c . >"$d.got"
		else
			"$@" >"$d.got" 2>"$d.err"
		fi
		_json_kernel "$ns" >"$d.want"
		_json_masked "$d.k1" >"$d.k1m"
		_json_masked "$d.want" >"$d.wantm"
		_json_masked "$d.got" >"$d.gotm"
		cmp -s "$d.k1m" "$d.wantm" && cmp -s "$d.wantm" "$d.gotm" && break
		sleep 0.5
	done
	tap_diff "$d.wantm" "$d.gotm" "$desc"
	_json_expires_close "$d.want" "$d.got"
	tap_ok $? "$desc: expires within 1 s ($(grep -c '"expires"' <(tr '}' '\n' <"$d.want")) routes expire)"
	[ -s "$d.err" ] && tap_diag "stderr:" "$(head -n 5 "$d.err")"
	return 0
}

ns_new NS
ns_new PEER
ns_new NS2
ns_new PEER2
rk_ra "$NS" "$PEER"
tap_ok $? "radvd in $PEER, RA routes learned in $NS"
rk_ra_rtinfo_default "$NS2" "$PEER2"
tap_ok $? "radvd in $PEER2 (route information for ::/0), learned in $NS2"

tap_is "$(kernel_json "$NS" | jq '[.[] | select(.protocol == "ra" and .expires)] | length > 0')" true \
	"kernel: RA routes carry protocol ra and expires"
tap_is "$(kernel_json "$NS" | jq -r '[.[] | select(.protocol == "ra") | .pref] | unique | join(",")')" \
	"high,low,medium" "kernel: RA routes carry every preference"

for ns in "$NS" "$NS2"; do
	json_compare "$ns" "$ns: --once --format json equals ip -j -6 route show table all" \
		ip netns exec "$ns" "$RTSNAPD" --once --format json
	daemon_start "$ns" --debounce-ms 20
	tap_ok $? "$ns: rtsnapd starts" || continue
	json_compare "$ns" "$ns: GET /routes equals ip -j -6 route show table all" http_get "$ns" /routes
	JSON_FILTER='[.[] | select(.protocol == "ra")]' json_compare "$ns" \
		"$ns: GET /routes?protocol=ra equals the kernel's routes with protocol ra" \
		http_get "$ns" '/routes?protocol=ra'
	daemon_stop "$ns" >/dev/null
	tap_ok $? "$ns: rtsnapd exits 0 on SIGTERM"
done
tap_done
