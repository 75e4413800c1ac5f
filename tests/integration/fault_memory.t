#!/bin/bash
# Recovery after running out of memory. rtsnapd runs under an address-space limit
# (RLIMIT_AS, set on the running process with prlimit) that the routes added outgrow: the
# collector runs out, keeps serving the previous snapshot and reports it (/status stale, the
# memory fault in /status and rtsnap_fault{kind="memory"} 1, /healthz 503). Then it must become
# healthy again by itself, with the kernel's tables, in both ways memory comes back:
#   A. every route flushed (the limit stays): the fresh dump is small;
#   B. the routes added again past the limit, then the limit lifted: the fresh dump is large.
# Each time /ipv6_route must equal the kernel's /proc/net/ipv6_route (refcnt masked). How long
# recovery took is printed, never asserted.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq prlimit awk
require_rtsnapd
# a sanitizer build reserves terabytes of address space for its shadow: no RLIMIT_AS fits it
grep -qa -e __asan_init -e __tsan_init "$RTSNAPD" &&
	tap_skip_all "$RTSNAPD is a sanitizer build: an address-space limit cannot apply"

ns_new NS
veth_pair "$NS" d0 "$NS" d1 || tap_bail "cannot create a veth pair"
daemon_start "$NS" --debounce-ms 20 || tap_bail "daemon did not start"

# rtsnapd's own pid (daemon_start records the one of `ip netns exec`).
real_pid() {
	ip netns pids "$NS" | while read -r p; do
		[ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$RTSNAPD")" ] && echo "$p"
	done | head -1
}
PID=$(real_pid)
[ -n "$PID" ] || tap_bail "rtsnapd's pid not found"
vm_kb() { sed -n 's/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status"; }

status() { ip netns exec "$NS" curl -sS -g --max-time 5 "$RTSNAP_URL/status" 2>/dev/null; }
mem_metric() {
	ip netns exec "$NS" curl -sS -g --max-time 5 "$RTSNAP_URL/metrics" 2>/dev/null |
		sed -n 's/^rtsnap_fault{kind="memory"} //p'
}
faulted() {
	status | jq -e '.stale and ([.faults[].kind] | index("memory") != null)' >/dev/null &&
		[ "$(mem_metric)" = 1 ]
}
healthy() {
	status | jq -e '(.stale | not) and (.faults | length == 0)' >/dev/null &&
		[ "$(mem_metric)" = 0 ]
}
same_as_kernel() {
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/h"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/h"
}
BATCH=10000
# grow PHASE: add batches of routes until the daemon reports the memory fault (at most 40).
grow() {
	local b i
	for b in $(seq 0 39); do
		awk -v p="$1$b" -v n=$BATCH \
			'BEGIN { for (i = 0; i < n; i++) printf "route add 2001:db8:%s:%x::/64 dev d0\n", p, i }' \
			>"$RTSNAP_TMP/batch"
		ip -n "$NS" -batch "$RTSNAP_TMP/batch" || return 1
		wait_until 1 faulted && return 0
	done
	wait_until 10 faulted
}
ms() { date +%s%3N; }

wait_until 5 same_as_kernel
tap_ok $? "before the limit: /ipv6_route equals the kernel's"
tap_is "$(mem_metric)" 0 "before the limit: rtsnap_fault{kind=\"memory\"} 0"

# the limit (soft: lifting it needs no privilege): what it maps now and 24 MiB more
LIMIT=$(($(vm_kb) * 1024 + (24 << 20)))
prlimit --pid "$PID" --as="$LIMIT:" || tap_bail "prlimit failed"
tap_diag "VmSize $(vm_kb) kB, RLIMIT_AS set to $((LIMIT >> 10)) kB"

grow a
tap_ok $? "A: routes past the limit: stale, the memory fault in /status, the metric 1"
tap_diag "A: $(ip -n "$NS" -6 route | wc -l) routes in main when the fault showed"
tap_ok "$(status | jq -e '.faults[] | select(.kind == "memory") |
	(.error == "Cannot allocate memory") and (.detail | test("out of memory"))' >/dev/null
	echo $?)" "A: the fault says why"
code=$(ip netns exec "$NS" curl -s -g -o /dev/null -w '%{http_code}' --max-time 5 "$RTSNAP_URL/healthz")
tap_is "$code" 503 "A: /healthz 503 while the fault lasts"

t0=$(ms)
ip -n "$NS" -6 route flush dev d0
t1=$(ms)
wait_until 30 healthy
tap_ok $? "A: every route flushed: healthy again under the same limit"
t2=$(ms)
tap_diag "A: flush took $((t1 - t0)) ms; healthy $((t2 - t1)) ms after it ended"
wait_until 5 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" "A: /ipv6_route equals the kernel's again"

grow b
tap_ok $? "B: routes past the limit again: the memory fault again"
n=$(ip -n "$NS" -6 route | wc -l)
t0=$(ms)
prlimit --pid "$PID" --as=unlimited: || tap_bail "prlimit failed"
wait_until 30 healthy
tap_ok $? "B: the limit lifted: healthy again with every route"
t1=$(ms)
tap_diag "B: $n routes in main; healthy $((t1 - t0)) ms after the limit was lifted"
wait_until 10 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" "B: /ipv6_route equals the kernel's again"
grep -q "recovered from running out of memory" "$(daemon_log "$NS")"
tap_ok $? "the log says it recovered"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0"
tap_done
