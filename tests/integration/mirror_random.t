#!/bin/bash
# mirror_random.t - randomized differential test of the incremental collector against the
# real kernel.
#
# In a namespace with four veth links, rtsnapd runs while bursts of random operations change
# the kernel: add, append, prepend, replace and delete of single and multipath routes (whole
# and one hop), dev-only and reject routes, routes over nexthop objects and groups, nexthop
# replace and delete, expires and pref, lightweight tunnel encapsulations on hops (so that
# siblings may differ only by their encapsulation) and on nexthop objects, five tables, a
# table flushed, rules naming new tables, links set down and up, renamed, deleted and
# re-created; siblings with protocols, source addresses, mtu metrics, expiries and preferences of
# their own, first legs removed by `route del ... via` and by deleting their device, appends that
# duplicate an expiring route (EEXIST, and the expiry moved or cleared without a message),
# addresses added and deleted (a source address too), MTU changes, and net.ipv4.nexthop_compat_mode and
# net.ipv6.conf.all.keep_addr_on_down toggled mid-run (lines starting with "!" in a burst are
# run as shell commands in the namespace, between the parts of the burst ip runs).
# After each burst the test
# waits until rtsnapd agrees with the kernel: /ipv6_route with /proc/net/ipv6_route (refcnt
# masked) and /routes with `ip -j -6 route show table all` ("expires" values masked; their
# presence still counts). At the end a SIGHUP resync compares a full dump with the mirror:
# drift must be 0, and no full dump may have run besides the one at start and that one.
#
# SEED=N varies the operations (default 1), OPS=N their number (default 5000); MR_RTSNAPD=PATH
# runs the first variant with another build (a slower one, e.g. build/tsan/rtsnapd, shifts the
# timing of notifications against targeted dumps). On failure
# the operation log of the failing burst and the differences are printed (on stderr, so that
# a non-verbose prove, as in make check, shows them too).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/randomops.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

SEED=${SEED:-1}
OPS=${OPS:-5000}
BURST=${BURST:-50}
RANDOM=$SEED
tap_diag "SEED=$SEED OPS=$OPS BURST=$BURST"

# run_variant NAME BINARY OPS: one daemon, OPS random operations, the checks below.
run_variant() {
V=$1
RTSNAPD=$2
N_OPS=$3
ns_new NS
rops_setup "$NS" || tap_bail "$V: veth links"

daemon_start "$NS" --interval 0 --debounce-ms 5 || tap_bail "$V: rtsnapd did not start"
D="$RTSNAP_TMP/d"

# agree: 0 when rtsnapd's views equal the kernel's now.
nagree() { agree "$NS" "$NS" "" "$D"; }

done_ops=0
bursts=0
bad=0
while [ $done_ops -lt "$N_OPS" ]; do
	rops_burst "$NS" "$BURST" "$D.ops"
	cat "$D.ops" >>"$D.all" # every operation so far (kept with RTSNAP_KEEP_TMP=1)
	done_ops=$((done_ops + BURST))
	bursts=$((bursts + 1))
	rops_apply "$NS" "$D.ops"
	if ! wait_until 8 nagree; then
		nagree
		tap_diag "$V: burst $bursts (operations $((done_ops - BURST + 1))-$done_ops) disagrees; its operations:" \
			"$(cat "$D.ops")" "--- proc (kernel vs rtsnapd):" "$(diff -U2 "$D.kp" "$D.dp" | head -30)" \
			"--- json (kernel vs rtsnapd):" "$(diff "$D.kj" "$D.dj" | head -20)" >&2
		bad=1
		break
	fi
done
tap_ok $bad "$V: $done_ops random operations in $bursts bursts: after each burst /ipv6_route and /routes equal the kernel's"

st() { http_get "$NS" /status | jq -c "$1"; }
tap_diag "notifications applied: $(st .collector.notifications_applied)" \
	"targeted dumps: $(st .collector.targeted_dumps)" \
	"publications: $(st .collector.publications), unknown deletes: $(st .collector.unknown_deletes)"
tap_is "$(st '[.collector.full_dumps[]] | add')" 1 "$V: no full dump besides the one at start"
# the kernel announces a link's carrier and operstate change from linkwatch up to a second
# later: let those arrive (no notification for a second, at most 20 s), or they land during
# the SIGHUP's dump and it is rightly not trusted
prev=-1
for _ in $(seq 20); do
	cur=$(st '[.collector.notifications_applied[]] | add')
	[ "$cur" != "$prev" ] || break
	prev=$cur
	sleep 1
done
kill -HUP "${_daemon_pid[$NS]}"
wait_until 10 sh -c "ip netns exec $NS curl -sg $RTSNAP_URL/status | jq -e '.collector.full_dumps.signal >= 1'"
tap_ok $? "$V: SIGHUP ran a resync"
tap_is "$(st .collector.resync_drift_routes)" 0 "$V: the resync found no drift between the mirror and the kernel" ||
	tap_diag "$(grep -A12 'resync drift' "${_daemon_log[$NS]}" | head -40)" >&2
tap_is "$(st .collector.resyncs_postponed)" 0 "$V: the resync dump was trusted"
wait_until 5 nagree
tap_ok $? "$V: after the resync rtsnapd still equals the kernel"
tap_cmd "$V: rtsnapd logged no drift" sh -c "! grep -q 'resync drift' '${_daemon_log[$NS]}'"
daemon_stop "$NS" >/dev/null
tap_ok $? "$V: rtsnapd exits 0 on SIGTERM"
}

run_variant normal "${MR_RTSNAPD:-$TOP/build/rtsnapd}" "$OPS"
# the ASan+UBSan build over fewer operations: memory errors in the mirror's edge cases
if [ -x "$TOP/build/asan/rtsnapd" ]; then
	RANDOM=$((SEED + 1000))
	run_variant asan "$TOP/build/asan/rtsnapd" "${OPS_ASAN:-1500}"
	tap_cmd "asan: no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\\|runtime error' '$RTSNAP_TMP'/rtsnapd-*.log"
else
	tap_skip "asan: no ASan build (make asan)"
fi
tap_done
