#!/bin/bash
# --proc-file on a full file system: the write fails, the last good file stays, and the fault
# shows in /status ("faults": kind proc_file, its error) and in /metrics
# (rtsnap_fault{kind="proc_file"} 1) while it lasts. The writer tries again by itself (no
# route change needed): once space is freed the file is written again, equal to the kernel's
# ipv6_route, and the fault is cleared in both.
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
	"$(http_get "$NS" /metrics | grep -c '^rtsnap_fault{kind="[a-z_]*"} 0$')" \
	"metric: every kind listed, all 0"
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
tap_done
