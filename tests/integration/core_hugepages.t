#!/bin/bash
# The heap on transparent huge pages: where the kernel gives them only to memory that asks
# (transparent_hugepage "madvise"), rtsnapd restarts itself once with glibc.malloc.hugetlb=1
# (same process, same pid, same name), its heap then holds huge pages, and what it serves is unchanged;
# RTSNAP_MALLOC_HUGEPAGES=0 keeps the heap on small pages. A sanitizer's allocator is its own:
# the huge-page counts are then not asserted.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq ldd
require_rtsnapd
THP=/sys/kernel/mm/transparent_hugepage/enabled
[ -r "$THP" ] || tap_skip_all "no $THP (a kernel without transparent huge pages)"
grep -q '\[madvise\]' "$THP" || tap_skip_all "transparent_hugepage is '$(cat "$THP")', not madvise: nothing to ask for"
N=30000

ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "route add 2001:db8:%x:%x::/64 via 2001:db8:1::2 table 100\n", 256 + int(i / 4096), i % 4096
}' | ip -6 -n "$NS" -batch - || tap_bail "route load failed"

sanitized=
ldd "$RTSNAPD" 2>/dev/null | grep -Eq 'lib(a|t|ub)san' && sanitized=1

# huge_kb PID: AnonHugePages of PID, kB
huge_kb() { awk '$1 == "AnonHugePages:" { print $2 }' "/proc/$1/smaps_rollup"; }
# tunables PID: GLIBC_TUNABLES in PID's environment
tunables() { tr '\0' '\n' <"/proc/$1/environ" | sed -n 's/^GLIBC_TUNABLES=//p'; }
served_all() { [ "$(http_get "$NS" /status | jq -r .routes)" -gt "$N" ]; }

for run in on off; do
	if [ "$run" = off ]; then export RTSNAP_MALLOC_HUGEPAGES=0; fi
	daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
	unset RTSNAP_MALLOC_HUGEPAGES
	pid=${_daemon_pid[$NS]}
	wait_until 30 served_all
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/kernel"
	http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/http"
	tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/http" "$run: /ipv6_route equals the kernel's file ($N routes in table 100)"
	kb=$(huge_kb "$pid")
	tap_diag "$run: $(tr -s ' \n' ' ' <"/proc/$pid/smaps_rollup" | grep -Eo 'Rss: [0-9]+ kB|AnonHugePages: [0-9]+ kB' | tr '\n' ' ')"
	if [ "$run" = on ]; then
		tap_is "$(tunables "$pid")" glibc.malloc.hugetlb=1 "on: the same process runs with glibc.malloc.hugetlb=1"
		tap_is "$(cat "/proc/$pid/comm")" "$(basename "$(readlink -f "$RTSNAPD")" | cut -c1-15)" \
			"on: the process keeps its name (ps, pgrep, pidof)"
		if [ -n "$sanitized" ]; then
			tap_skip "on: a sanitizer's allocator: huge pages not asserted"
		else
			tap_ok "$([ "${kb:-0}" -gt 0 ]; echo $?)" "on: the heap holds huge pages ($kb kB)"
		fi
	else
		tap_is "$(tunables "$pid")" "" "off: no tunable set"
		tap_is "${kb:-?}" 0 "off: no huge pages"
	fi
	daemon_stop "$NS" || tap_ok 1 "$run: clean exit"
done
tap_done
