#!/bin/bash
# Overflow: while rtsnapd is stopped (SIGSTOP) the kernel changes far more routes than its
# notification socket can hold, so notifications are dropped (ENOBUFS). After SIGCONT the
# collector must notice, resync with a full dump that it adopts, and serve exactly what the
# kernel has: /routes equal to `ip -j -6 route show table all`, the proc text equal to the
# kernel's file in count and in the routes that changed, and a SIGHUP resync afterwards that
# finds no drift. This is the path a BGP session reset takes on a router (and the one where
# the dump is merged into the mirror's copy-on-write chunks, in steps with a publication
# between them: table main holds enough routes before the stop that it is merged, not
# replaced). Bounded: 3 batches.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
require_root
require_cmd ip curl jq awk
require_rtsnapd
N=${OVERFLOW_ROUTES:-150000}

P=${OVERFLOW_KEPT:-50000} # routes of table main the stop leaves alone

tap_plan 10
ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev v1 nodad
# 3 000 routes the stop will partly delete and replace, in two tables
for i in $(seq 0 1499); do
	printf 'route add 2001:db8:%x:%x::/64 via 2001:db8:1::2\n' $((0x100 + i / 256)) $((i % 256))
	printf 'route add 2001:db8:%x:%x::/64 dev v1 table 100\n' $((0x200 + i / 256)) $((i % 256))
done | ip -6 -n "$NS" -batch - || tap_bail "could not add the first 3 000 routes"
for ((i = 0; i < P; i++)); do
	printf 'route add 2001:db8:%x:%x::/64 via 2001:db8:1::2\n' $((0x3000 + i / 65536)) $((i % 65536))
done | ip -6 -n "$NS" -batch - || tap_bail "could not add the $P routes of table main"

st() { http_get "$NS" /status | jq -r "$1"; }
daemon_start "$NS" || tap_bail "daemon did not start"
wait_true 60 'test "$(st .routes)" -ge $((3000 + P))' ||
	tap_diag "rtsnapd serves $(st .routes) routes, not yet $((3000 + P)), at the stop"
PID=${_daemon_pid[$NS]}

kill -STOP "$PID"
{
	for ((i = 0; i < N; i++)); do
		printf 'route add 2001:db8:%x:%x::/64 via 2001:db8:2::%x\n' $((0x1000 + i / 65536)) \
			$((i % 65536)) $((2 + i % 7))
	done
	for i in $(seq 0 2 1499); do # every other route of table main goes
		printf 'route del 2001:db8:%x:%x::/64 via 2001:db8:1::2\n' $((0x100 + i / 256)) $((i % 256))
	done
	for i in $(seq 0 4 1499); do # and a quarter of table 100's move to v0
		printf 'route replace 2001:db8:%x:%x::/64 via 2001:db8:1::9 table 100\n' \
			$((0x200 + i / 256)) $((i % 256))
	done
} | ip -6 -n "$NS" -force -batch - 2>"$RTSNAP_TMP/batch.err"
bst=$?
kill -CONT "$PID"
# -force: a command the kernel refuses does not stop the rest. The checks below compare
# rtsnapd with what the kernel holds, so they stand whatever it refused; this one says
# whether the kernel took every change, and if not, what it answered.
if [ "$bst" != 0 ]; then
	tap_diag "ip -batch exited $bst; $(grep -c '^Command failed' "$RTSNAP_TMP/batch.err") commands failed:" \
		"$(head -n 10 "$RTSNAP_TMP/batch.err")" "kernel routes now: $(ip -n "$NS" -6 route show table all | wc -l)"
fi
tap_ok "$bst" "the kernel took $N adds, 750 deletes and 375 replaces while rtsnapd was stopped"

want=$(ip -n "$NS" -6 route show table all | wc -l)
wait_true 120 'test "$(st .routes)" = "$want"'
tap_is "$(st .routes)" "$want" "rtsnapd serves as many routes as the kernel lists ($want)"
ov=$(st .collector.notification_overruns)
rs=$(st '.collector.full_dumps.resync // 0')
if [ "$ov" -ge 1 ]; then
	tap_ok 0 "the notification socket overflowed ($ov times)"
	[ "$rs" -ge 1 ]
	tap_ok $? "an overflow resync ran ($rs full dumps for it)"
	steps=$(st '.collector.resync_adopt_steps // 0')
	[ "$steps" -ge 1 ]
	tap_ok $? "the dump was merged in steps ($steps publications between them)"
else
	# the socket's buffer (64 MB) held every notification: the checks below still hold,
	# but they test the ordinary path, not the overflow's
	tap_skip "no overflow: the notification socket held all $N changes (raise OVERFLOW_ROUTES)"
	tap_skip "no overflow resync to check"
	tap_skip "no overflow resync, so no dump merged in steps"
fi

json_compare "$NS" "GET /routes equals ip -j -6 route show table all after the overflow" \
	http_get "$NS" /routes
# the proc text: the whole file costs the kernel tens of seconds at this size, so compare
# the lines of the routes that changed under the stop, and the line count
proc_lines() { grep -E '^20010db8(01|02)' | proc_masked; }
http_get "$NS" /ipv6_route >"$RTSNAP_TMP/ours"
ip netns exec "$NS" cat /proc/net/ipv6_route >"$RTSNAP_TMP/kernel"
proc_lines <"$RTSNAP_TMP/kernel" >"$RTSNAP_TMP/kernel.sel"
proc_lines <"$RTSNAP_TMP/ours" >"$RTSNAP_TMP/ours.sel"
tap_diff "$RTSNAP_TMP/kernel.sel" "$RTSNAP_TMP/ours.sel" \
	"the proc lines of the deleted and replaced routes' tables equal the kernel's"
tap_is "$(wc -l <"$RTSNAP_TMP/ours")" "$(wc -l <"$RTSNAP_TMP/kernel")" \
	"/ipv6_route has as many lines as the kernel's file"

d0=$(st .collector.resync_drift_routes)
kill -HUP "$PID"
wait_true 60 'test "$(st ".collector.full_dumps.signal // 0")" -ge 1'
tap_is "$(( $(st .collector.resync_drift_routes) - d0 ))" 0 \
	"a SIGHUP resync afterwards finds no drift between the mirror and the kernel"
daemon_stop "$NS"
tap_done
