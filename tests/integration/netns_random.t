#!/bin/bash
# netns_random.t - the randomized differential test of mirror_random.t in two named
# namespaces at once, served by one daemon from a third.
#
# Namespaces A and B (in /run/netns) each get mirror_random.t's set-up (four veth links,
# sources on lo, nexthop objects and groups); rtsnapd runs in a third namespace, D, with
# --netns A --netns B (one collector thread for the three). Bursts of random operations (those
# of mirror_random.t, tests/lib/randomops.sh, each namespace with a generator state and a SEED
# of its own) are applied to A and B at the same time (the two ip -batch runs in parallel);
# after each burst the test waits until /netns/A/ipv6_route and /netns/A/routes equal A's
# kernel (/proc/net/ipv6_route, refcnt masked; `ip -j -6 route show table all`, expiries
# within 2 s), the same for B, and D's own /ipv6_route and /routes still equal D's kernel
# (which nobody changes). Then a SIGHUP resyncs every namespace: each resync found no drift
# and its dump was trusted, and no full dump ran in any namespace besides the one at start
# and that one; SIGTERM ends the daemon cleanly. The same again, over fewer operations, with
# the ASan+UBSan build (build/asan/rtsnapd, make asan): no sanitizer report.
#
# SEED=N varies the operations (A draws from SEED, B from SEED+7919; SEED_A, SEED_B set them
# apart), OPS=N their number per namespace (default 2000), OPS_ASAN=N for the ASan build
# (default 750), BURST=N operations per burst and namespace (default 50). On failure the
# failing burst's operations of both namespaces and the differences are printed on stderr
# (keep them: the parts of an operation drawn in $(...) subshells, where bash reseeds RANDOM,
# do not follow SEED, see tests/lib/randomops.sh; RTSNAP_KEEP_TMP=1 keeps every operation in
# $RTSNAP_TMP/VARIANT.A.all and .B.all).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/randomops.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

SEED=${SEED:-1}
SEED_A=${SEED_A:-$SEED}
SEED_B=${SEED_B:-$((SEED + 7919))}
OPS=${OPS:-2000}
BURST=${BURST:-50}
tap_diag "SEED_A=$SEED_A SEED_B=$SEED_B OPS=$OPS (per namespace) BURST=$BURST"

# run_variant NAME BINARY OPS SEED_A SEED_B: A, B and D, one daemon, OPS random operations in
# each of A and B, the checks below.
run_variant() {
	V=$1
	RTSNAPD=$2
	N_OPS=$3
	local x
	ns_new A
	ns_new B
	ns_new DN
	rops_setup "$A" "$4" || tap_bail "$V: veth links in A"
	rops_setup "$B" "$5" || tap_bail "$V: veth links in B"
	# the daemon's own namespace: a link and a few routes, left alone
	veth_pair "$DN" d0 "$DN" d1 || tap_bail "$V: veth in D"
	ip -n "$DN" -6 route add 2001:db8:d::/64 dev d0 &&
		ip -n "$DN" -6 route add 2001:db8:d:1::/64 via fe80::1 dev d0 metric 100 table 100
	ns_settle "$DN"
	ns_settle "$A"
	ns_settle "$B"

	daemon_start "$DN" --interval 0 --debounce-ms 5 --netns "$A" --netns "$B" ||
		tap_bail "$V: rtsnapd did not start"
	T="$RTSNAP_TMP/$V"
	declare -gA P=([$A]=/netns/$A [$B]=/netns/$B [$DN]='')
	declare -gA L=([$A]=A [$B]=B [$DN]=D)

	http_get "$DN" /netns | jq -e --arg a "$A" --arg b "$B" \
		'(tostring | contains($a)) and (tostring | contains($b))' >/dev/null
	tap_ok $? "$V: /netns lists A and B"

	# all_agree: 0 when the daemon's views of A, B and its own namespace equal their kernels'
	all_agree() {
		agree "$A" "$DN" "${P[$A]}" "$T.A" && agree "$B" "$DN" "${P[$B]}" "$T.B" &&
			agree "$DN" "$DN" '' "$T.D"
	}

	done_ops=0
	bursts=0
	bad=0
	: >"$T.A.all"
	: >"$T.B.all"
	while [ $done_ops -lt "$N_OPS" ]; do
		rops_burst "$A" "$BURST" "$T.A.ops"
		rops_burst "$B" "$BURST" "$T.B.ops"
		cat "$T.A.ops" >>"$T.A.all" # every operation so far (kept with RTSNAP_KEEP_TMP=1)
		cat "$T.B.ops" >>"$T.B.all"
		done_ops=$((done_ops + BURST))
		bursts=$((bursts + 1))
		rops_apply "$A" "$T.A.ops" &
		local pa=$!
		rops_apply "$B" "$T.B.ops" &
		local pb=$!
		wait $pa $pb
		if ! wait_until 10 all_agree; then
			for x in "$A" "$B" "$DN"; do
				agree "$x" "$DN" "${P[$x]}" "$T.${L[$x]}" && continue
				bad=1
				tap_diag "$V: burst $bursts (operations $((done_ops - BURST + 1))-$done_ops of each):" \
					"namespace ${L[$x]} ($x, served at ${P[$x]:-/}) disagrees" \
					"--- proc (kernel vs rtsnapd):" "$(diff -U2 "$T.${L[$x]}.kp" "$T.${L[$x]}.dp" | head -30)" \
					"--- json (kernel vs rtsnapd):" "$(diff "$T.${L[$x]}.kj" "$T.${L[$x]}.dj" | head -20)" >&2
			done
			if [ $bad = 1 ]; then
				tap_diag "$V: the burst's operations in A:" "$(cat "$T.A.ops")" \
					"$V: the burst's operations in B:" "$(cat "$T.B.ops")" >&2
				break
			fi
		fi
	done
	tap_ok $bad "$V: $done_ops random operations in each of A and B at once, $bursts bursts:" \
		"after each burst /netns/A/, /netns/B/ and D's own ipv6_route and routes equal the kernels'"

	st() { http_get "$DN" "${P[$1]}/status" | jq -c "$2"; }
	for x in "$A" "$B"; do
		tap_diag "${L[$x]}: notifications applied: $(st "$x" .collector.notifications_applied)" \
			"${L[$x]}: targeted dumps: $(st "$x" .collector.targeted_dumps)" \
			"${L[$x]}: publications: $(st "$x" .collector.publications), unknown deletes: $(st "$x" .collector.unknown_deletes)"
	done
	for x in "$A" "$B" "$DN"; do
		tap_is "$(st "$x" '[.collector.full_dumps[]] | add')" 1 \
			"$V: ${L[$x]}: no full dump besides the one at start"
	done
	# let the links' late carrier and operstate changes arrive (no notification in any
	# namespace for a second, at most 20 s), or they land during a SIGHUP dump, rightly untrusted
	prev=-1
	for _ in $(seq 20); do
		cur=$(for x in "$A" "$B" "$DN"; do st "$x" '[.collector.notifications_applied[]] | add'; done | tr '\n' ' ')
		[ "$cur" != "$prev" ] || break
		prev=$cur
		sleep 1
	done
	kill -HUP "${_daemon_pid[$DN]}"
	wait_true 15 '[ "$(for x in "$A" "$B" "$DN"; do st "$x" ".collector.full_dumps.signal >= 1"; done | sort -u)" = true ]'
	tap_ok $? "$V: SIGHUP ran a resync in A, B and D"
	for x in "$A" "$B" "$DN"; do
		tap_is "$(st "$x" .collector.resync_drift_routes)" 0 \
			"$V: ${L[$x]}: the resync found no drift between the mirror and the kernel" ||
			tap_diag "$(grep -A12 'resync drift' "${_daemon_log[$DN]}" | head -40)" >&2
		tap_is "$(st "$x" .collector.resyncs_postponed)" 0 "$V: ${L[$x]}: the resync dump was trusted"
		tap_is "$(st "$x" '[.collector.full_dumps[]] | add')" 2 \
			"$V: ${L[$x]}: no full dump besides the one at start and the SIGHUP's"
	done
	wait_until 5 all_agree
	tap_ok $? "$V: after the resync rtsnapd still equals the three kernels"
	tap_cmd "$V: rtsnapd logged no drift" sh -c "! grep -q 'resync drift' '${_daemon_log[$DN]}'"
	daemon_stop "$DN" >/dev/null
	tap_ok $? "$V: rtsnapd exits 0 on SIGTERM"
}

run_variant normal "$RTSNAPD" "$OPS" "$SEED_A" "$SEED_B"
# the ASan+UBSan build over fewer operations: memory errors in the namespaces' collectors
if [ -x "$TOP/build/asan/rtsnapd" ]; then
	run_variant asan "$TOP/build/asan/rtsnapd" "${OPS_ASAN:-750}" $((SEED_A + 1000)) $((SEED_B + 1000))
	tap_cmd "asan: no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\\|runtime error' '$RTSNAP_TMP'/rtsnapd-*.log"
else
	tap_skip "asan: no ASan build (make asan)"
fi
tap_done
