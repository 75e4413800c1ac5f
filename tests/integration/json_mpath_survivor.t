#!/bin/bash
# json_mpath_survivor.t - the siblings of a multipath route have attributes of their own:
# protocol, preferred source, expiry, metrics (mtu) and router preference. A route message and
# a dump carry the first sibling's for the whole group; /proc/net/ipv6_route prints each
# sibling's RTF_EXPIRES and RTF_PREF on its own line. When the first leg goes (`route del P via
# GW1`, or its device deleted) the kernel shows the survivor with its own values.
# rtsnapd keeps each sibling's attributes from the message that announced it (an append
# notification carries the appended sibling's), and where it does not know them (a group a dump
# built) it re-reads the survivor's routes (targeted_dumps{reason="sibling"}). Checked with the
# daemon running through every change (/ipv6_route and /routes against the kernel), for groups
# announced to it and for a group it found in its start-up dump.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
. "$(dirname "$0")/../lib/fidelity.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
veth_pair "$NS" a0 "" a1 || tap_bail "veth"
veth_pair "$NS" b0 "" b1 || tap_bail "veth"
veth_pair "$NS" c0 "" c1 || tap_bail "veth"
ip -n "$NS" addr add 2001:db8:ff::1/128 dev lo
ip -n "$NS" addr add 2001:db8:ff::2/128 dev lo
ip netns exec "$NS" sysctl -qw net.ipv6.route.gc_interval=3600
r() { ip -n "$NS" -6 route "$@" || tap_bail "ip -6 route $*"; }
js() { kernel_json "$NS" | jq -c "[.[] | select(.dst == \"$1\") | $2]"; }

# a group rtsnapd finds in its start-up dump: the second leg's attributes are not in any dump
r add 2001:db8:4::/64 via fe80::1 dev a0 proto 188 mtu 1400
r append 2001:db8:4::/64 via fe80::2 dev b0 proto 77 mtu 1300

daemon_start "$NS" --interval 0 || tap_bail "rtsnapd did not start"
fid_check "$NS" "at start, rtsnapd equals the kernel"

r add 2001:db8:1::/64 via fe80::1 dev a0 proto 188 src 2001:db8:ff::1 expires 60 mtu 1400
r append 2001:db8:1::/64 via fe80::2 dev b0 proto 77 src 2001:db8:ff::2 expires 600 mtu 1300 pref high
fid_check "$NS" "two siblings, each with its own protocol, source, expiry, mtu and preference"
tap_is "$(proc_get "$NS" 2001:db8:1::/64 flags)" $'00400003\n08400003' "kernel: each sibling's proc line has its own preference"
r del 2001:db8:1::/64 via fe80::1 dev a0
tap_is "$(js 2001:db8:1::/64 '[.protocol, .prefsrc, .metrics, .pref, (.expires > 500)]')" \
	'[["77","2001:db8:ff::2",[{"mtu":1300}],"high",true]]' "kernel: the first leg deleted, the survivor shows its own values"
fid_check "$NS" "... and so does rtsnapd"

r add 2001:db8:2::/64 via fe80::1 dev c0 proto static
r append 2001:db8:2::/64 via fe80::2 dev b0 proto 77 mtu 1300
r append 2001:db8:2::/64 via fe80::3 dev a0 proto 99 pref low
fid_check "$NS" "three siblings, the first on c0"
ip -n "$NS" link del c0
tap_is "$(js 2001:db8:2::/64 '[.protocol, .metrics, .pref]')" '[["77",[{"mtu":1300}],"medium"]]' \
	"kernel: the first leg's device deleted, the second sibling shows its own values"
fid_check "$NS" "... and so does rtsnapd (the third keeps its own preference in proc)"

r add 2001:db8:3::/64 via fe80::1 dev a0 pref low
r append 2001:db8:3::/64 via fe80::2 dev a0 pref high expires 3000
r append 2001:db8:3::/64 via fe80::3 dev a0
tap_is "$(proc_get "$NS" 2001:db8:3::/64 flags)" $'18000003\n08400003\n00000003' \
	"kernel: three siblings print their own RTF_PREF and RTF_EXPIRES"
fid_check "$NS" "rtsnapd prints each sibling's flags from the append notifications"
r del 2001:db8:3::/64 via fe80::2 dev a0
fid_check "$NS" "the middle sibling deleted: rtsnapd follows"
r append 2001:db8:3::/64 via fe80::2 dev b0 expires 400 proto 55
r del 2001:db8:3::/64 via fe80::1 dev a0
fid_check "$NS" "a sibling appended again, then the first deleted: rtsnapd follows"

before=$(fid_tdumps "$NS" sibling)
r del 2001:db8:4::/64 via fe80::1 dev a0
tap_is "$(js 2001:db8:4::/64 '[.protocol, .metrics]')" '[["77",[{"mtu":1300}]]]' \
	"kernel: the dumped group's first leg deleted, the survivor shows its own values"
fid_check "$NS" "rtsnapd re-reads the survivor it knew only from a dump"
wait_true 3 '[ "$(fid_tdumps "$NS" sibling)" -gt "$before" ]' # the counters may trail the views
tap_ok "$([ "$(fid_tdumps "$NS" sibling)" -gt "$before" ]; echo $?)" \
	"... counted as targeted_dumps{reason=\"sibling\"} ($(fid_tdumps "$NS" sibling))"
before=$(fid_tdumps "$NS" sibling)
r add 2001:db8:5::/64 via fe80::1 dev a0 proto 188
r append 2001:db8:5::/64 via fe80::2 dev b0 proto 77
r del 2001:db8:5::/64 via fe80::1 dev a0
fid_check "$NS" "a group announced to it: the survivor takes its own values"
tap_is "$(fid_tdumps "$NS" sibling)" "$before" "... without a re-read (the append told them)"
gen=$(http_get "$NS" /status | jq .generation)
kill -HUP "${_daemon_pid[$NS]}"
wait_true 5 '[ "$(http_get "$NS" /status | jq .generation)" -gt "$gen" ]'
fid_check "$NS" "after a SIGHUP resync rtsnapd still has each sibling's own flags (the dump agrees on the rest)"
tap_is "$(http_get "$NS" /status | jq .collector.resync_drift_routes)" 0 "... and found no drift"
# a dump carries the first sibling's preference and expiry for the whole group (kernel-facts §7.2)
TAP_TODO="a dump tells only the first sibling's RTF_PREF and RTF_EXPIRES" \
	fid_check_once "$NS" "a fresh dump equals the kernel too"
JSON_FILTER=. json_compare "$NS" "a fresh dump's JSON equals ip -j" rtsnapd_once "$NS" json
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
