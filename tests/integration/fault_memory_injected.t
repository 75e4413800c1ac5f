#!/bin/bash
# Recovery from running out of memory, with the failures injected (RTSNAP_TEST_NOMEM=K: the K
# builds after the first publication fail with ENOMEM), so that it runs under any build,
# sanitizers included (fault_memory.t needs an address-space limit, which they cannot take).
# A route change makes the first build fail: the memory fault shows in /status and the metric,
# the previous snapshot is served; the collector drops its mirror, and its fresh dumps fail
# until the injected failures are used up; then it is healthy again by itself, with
# /ipv6_route equal to the kernel's, and follows changes as before.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" d0 "$NS" d1 || tap_bail "cannot create a veth pair"
for i in $(seq 1 300); do echo "route add 2001:db8:1:$(printf %x "$i")::/64 dev d0"; done |
	ip -n "$NS" -batch -
# the link-local addresses' routes come after duplicate address detection: a change the
# daemon saw then would use up the injected failures before the test's own change
ns_settle "$NS"
RTSNAP_TEST_NOMEM=4 daemon_start "$NS" --debounce-ms 20 || tap_bail "daemon did not start"

mem_metric() { http_get "$NS" /metrics | sed -n 's/^rtsnap_fault{kind="memory"} //p'; }
faulted() {
	http_get "$NS" /status | jq -e '.stale and ([.faults[].kind] | index("memory") != null)' >/dev/null &&
		[ "$(mem_metric)" = 1 ]
}
healthy() {
	http_get "$NS" /status | jq -e '(.stale | not) and (.faults | length == 0)' >/dev/null &&
		[ "$(mem_metric)" = 0 ]
}
same_as_kernel() {
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/h"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/h"
}

wait_until 5 same_as_kernel
tap_ok $? "at start: /ipv6_route equals the kernel's"
gen0=$(http_get "$NS" /status | jq .generation)
ip -n "$NS" -6 route add 2001:db8:2::/64 dev d0
wait_until 5 faulted
tap_ok $? "a build out of memory: stale, the memory fault in /status, the metric 1"
tap_is "$(http_get "$NS" /status | jq .generation)" "$gen0" "the previous snapshot is served"
ip -n "$NS" -6 route del 2001:db8:1:5::/64 dev d0
wait_until 30 healthy
tap_ok $? "healthy again by itself once the failures are used up"
wait_until 5 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" "/ipv6_route equals the kernel's (with the changes made meanwhile)"
tap_ok "$(http_get "$NS" /status | jq -e '.errors.nomem >= 4' >/dev/null; echo $?)" \
	"/status counts the failures (errors.nomem)"
ip -n "$NS" -6 route add 2001:db8:3::/64 dev d0
wait_until 5 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" "then it follows changes as before"
tap_is "$(grep -c 'recovered from running out of memory' "$(daemon_log "$NS")")" 1 \
	"the log says it recovered, once"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0"
tap_done
