#!/bin/bash
# --proc-file on a full file system: the write fails, the last good file stays, and the fault
# shows in /status ("faults": kind proc_file, its error) and in /metrics
# (rtsnap_fault{kind="proc_file"} 1) while it lasts. The writer tries again by itself (no
# route change needed): once space is freed the file is written again, equal to the kernel's
# ipv6_route, and the fault is cleared in both. Then --proc-file4 (IPv4) the same way, its
# fault under /status's "inet".
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq dd cmp
require_rtsnapd

ns_new NS
veth_pair "$NS" d0 "$NS" d1 || tap_bail "cannot create a veth pair"
ip -n "$NS" -6 route add 2001:db8:1::/64 dev d0
tmpfs_new D 256k || tap_skip_all "cannot mount a tmpfs"
F=$D/ipv6_route

daemon_start "$NS" --debounce-ms 20 --proc-file "$F" || tap_bail "daemon did not start"

file_is_current() {
	http_get "$NS" /ipv6_route >"$RTSNAP_TMP/served" && cmp -s "$RTSNAP_TMP/served" "$F"
}
# faults: the kinds in /status's "faults", one line each
faults() { http_get "$NS" /status | jq -r '.faults[].kind'; }
fault_metric() {
	http_get "$NS" /metrics | sed -n 's/^rtsnap_fault{kind="proc_file"} //p'
}
fault_is() { [ "$(fault_metric)" = "$1" ] && [ "$(faults | grep -c '^proc_file$')" = "$1" ]; }

wait_until 5 file_is_current
tap_ok $? "the file equals /ipv6_route"
tap_is "$(faults | tr '\n' ' ')" "" "/status: no fault"
tap_is "$(fault_metric)" 0 "metric: rtsnap_fault{kind=\"proc_file\"} 0"
tap_is "$(http_get "$NS" /metrics | grep -c '^rtsnap_fault{')" \
	"$(http_get "$NS" /metrics | grep -c '^rtsnap_fault{\(family="inet",\)\?kind="[a-z_]*"} 0$')" \
	"metric: every kind listed, all 0 (both families)"
cp "$F" "$RTSNAP_TMP/good"

# fill the file system, then change the routes: the new file cannot be written
dd if=/dev/zero of="$D/fill" bs=4k >/dev/null 2>&1
for i in $(seq 100 400); do echo "route add 2001:db8:$i::/64 dev d0"; done | ip -n "$NS" -batch -
wait_until 10 fault_is 1
tap_ok $? "full file system: the fault is in /status and the metric is 1"
http_get "$NS" /status >"$RTSNAP_TMP/status"
tap_is "$(jq -r '.faults[] | select(.kind == "proc_file") | .error' "$RTSNAP_TMP/status")" \
	"No space left on device" "/status: the fault names the error"
tap_ok "$(jq -e --arg f "$F" '.faults[] | select(.kind == "proc_file") |
	(.detail | contains($f)) and (.since | test("Z$")) and .age_seconds >= 0' \
	"$RTSNAP_TMP/status" >/dev/null; echo $?)" "/status: the fault names the file and since when"
tap_ok "$(jq -e '.proc_file_errors >= 1 and .stale == false' "$RTSNAP_TMP/status" >/dev/null; echo $?)" \
	"/status: failed writes counted; the snapshot itself is not stale"
tap_diff "$RTSNAP_TMP/good" "$F" "the last good file is kept"

# free the space: written again without another change
rm -f "$D/fill"
wait_until 30 fault_is 0
tap_ok $? "space freed: the fault is cleared in /status and the metric"
same_as_kernel() {
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	proc_masked "$F" >"$RTSNAP_TMP/f"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/f"
}
wait_until 5 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/f" "the file equals the kernel's ipv6_route again (refcnt masked)"
tap_is "$(ls -A "$D")" ipv6_route "no temporary file left behind"
grep -q "written again" "$(daemon_log "$NS")"
tap_ok $? "the log says the file is written again"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0"

# --proc-file4 with --family all: the same, its fault in /status's "inet" (the IPv4
# instance's own), none at the top (the IPv6 instance's)
tmpfs_new D4 256k || tap_bail "cannot mount a second tmpfs"
F4=$D4/route
ip -n "$NS" addr add 10.9.0.1/24 dev d0
daemon_start "$NS" --family all --debounce-ms 20 --proc-file4 "$F4" || tap_bail "daemon did not start"
faults4() { http_get "$NS" /status | jq -r '.inet.faults[].kind'; }
fault4_metric() {
	http_get "$NS" /metrics | sed -n 's/^rtsnap_fault{family="inet",kind="proc_file"} //p'
}
fault4_is() { [ "$(faults4 | grep -c '^proc_file$')" = "$1" ] && [ "$(fault4_metric)" = "$1" ]; }
file4_is_kernel() {
	ip netns exec "$NS" cat /proc/net/route >"$RTSNAP_TMP/k4" && cmp -s "$RTSNAP_TMP/k4" "$F4"
}
wait_until 5 file4_is_kernel
tap_ok $? "--proc-file4: the file equals the kernel's /proc/net/route"
http_get "$NS" /status >"$RTSNAP_TMP/status4"
tap_ok "$(jq -e '.inet.stale == false and (.inet.faults | length) == 0 and
	.inet.generation >= 1 and .inet.routes >= 1' "$RTSNAP_TMP/status4" >/dev/null; echo $?)" \
	"/status: the IPv4 instance is in \"inet\", fresh, no fault"
dd if=/dev/zero of="$D4/fill" bs=4k >/dev/null 2>&1
for i in $(seq 1 250); do echo "route add 10.10.$i.0/24 dev d0"; done | ip -n "$NS" -batch -
wait_until 10 fault4_is 1
tap_ok $? "full file system: the fault is in /status's inet.faults and rtsnap_fault{family=\"inet\",kind=\"proc_file\"} is 1"
http_get "$NS" /status >"$RTSNAP_TMP/status4"
tap_is "$(jq -r '.inet.faults[] | select(.kind == "proc_file") | .error' "$RTSNAP_TMP/status4")" \
	"No space left on device" "/status: inet's fault names the error"
tap_ok "$(jq -e --arg f "$F4" '(.inet.faults[] | select(.kind == "proc_file") | .detail |
	contains($f)) and .inet.proc_file_errors >= 1 and (.faults | length) == 0' \
	"$RTSNAP_TMP/status4" >/dev/null; echo $?)" \
	"/status: it names the file, counts the writes, and is not the IPv6 instance's"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")" 200 \
	"/healthz: a file that cannot be written does not make the snapshots stale"
rm -f "$D4/fill"
wait_until 30 fault4_is 0
tap_ok $? "space freed: the IPv4 fault is cleared in /status and the metric"
tap_is "$(http_get "$NS" /metrics | sed -n 's/^rtsnap_fault{kind="proc_file"} //p')" 0 \
	"the IPv6 instance's rtsnap_fault{kind=\"proc_file\"} is 0: the fault was the IPv4 instance's"
wait_until 5 file4_is_kernel
tap_diff "$RTSNAP_TMP/k4" "$F4" "the file equals the kernel's /proc/net/route again"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd --family all exits 0"
tap_done
