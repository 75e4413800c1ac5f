#!/bin/bash
# A table of 100 000+ routes (plus a few thousand in main and a third table): rtsnapd's text
# equals the kernel's file line for line (refcnt masked), over HTTP and from --once. Reading
# the kernel's file at this size costs tens of seconds of kernel CPU; it is read once.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl
require_rtsnapd
N=${LARGE_ROUTES:-100000}

ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++) {
		# distinct in the first 48 bits, so masking to any length >= 48 keeps them distinct
		len = 48 + (i % 7) * 12
		printf "route add 2001:%x:%x:%x::/%d %s table 100 metric %d\n", 3513 + int(i / 65536), i % 65536, (i * 13) % 65536, len, (i % 3) ? "via 2001:db8:1::2" : "dev v1", 1024 + i % 3
	}
	for (i = 0; i < 3000; i++) printf "route add 2001:db8:%x::/64 via 2001:db8:1::3\n", i + 16
	for (i = 0; i < 3000; i++) printf "route add 2001:db8:%x::/64 dev v0 table 356\n", i + 16
}' | sed 's|/120 | |' | ip -6 -n "$NS" -batch - || tap_bail "route load failed"

daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/http"
rtsnapd_once "$NS" proc | proc_masked >"$RTSNAP_TMP/once"
kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/kernel"
tap_diag "$(wc -l <"$RTSNAP_TMP/kernel") lines in the kernel's file"
tap_ok "$([ "$(wc -l <"$RTSNAP_TMP/kernel")" -gt "$N" ]; echo $?)" "the kernel holds more than $N routes"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/http" "/ipv6_route equals the kernel's file"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/once" "--once --format proc equals the kernel's file"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
