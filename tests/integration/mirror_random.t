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
renamed=0
links=(e0 e1 e2 e3)
ns_new NS
for i in 0 1 2 3; do
	veth_pair "$NS" "e$i" "$NS" "p$i" || tap_bail "veth e$i"
done
ip netns exec "$NS" sysctl -qw net.ipv6.route.gc_interval=3600 >/dev/null 2>&1
for i in 1 2 3; do ip -n "$NS" addr add 2001:db8:ff::$i/128 dev lo; done # for src
tables=(main 100 200 1000 70000)
metrics=(100 1024 1024 2000)
pick() { # pick ARRAY-NAME: a random element
	local -n a=$1
	printf '%s' "${a[RANDOM % ${#a[@]}]}"
}
prefix() {
	case $((RANDOM % 4)) in
	0) printf '2001:db8:%x::/48' $((RANDOM % 12)) ;;
	1) printf '2001:db8:%x:%x::/64' $((RANDOM % 12)) $((RANDOM % 3)) ;;
	2) printf '2001:db8:%x::%x/128' $((RANDOM % 12)) $((RANDOM % 3 + 1)) ;;
	3) printf '2001:db8:%x::/40' $((RANDOM % 4 * 256)) ;;
	esac
}
links=(e0 e1 e2 e3) # e3 is r3 while renamed
dev() { printf '%s' "${links[RANDOM % 4]}"; }
# An encapsulation, now and then (two of a few kinds, so that some hops differ by it only).
encap() {
	case $((RANDOM % 16)) in
	0) printf 'encap seg6 mode encap segs fc00::%x ' $((RANDOM % 2 + 1)) ;;
	1) printf 'encap ip6 dst 2001:db8:ff::%x ' $((RANDOM % 2 + 1)) ;;
	esac
}
hop() { # [encap ...] via GW dev D
	printf '%svia fe80::%x dev %s' "$(encap)" $((RANDOM % 3 + 1)) "$(dev)"
}
# Optional pref on routes that cannot join an ECMP group.
attrs() {
	case $((RANDOM % 8)) in
	0) printf ' pref high' ;;
	1) printf ' pref low' ;;
	esac
}
# Routes with a lifetime get a metric of their own: an append or prepend that duplicates an
# expiring route makes the kernel change (or clear) its expiry without any message and
# answer EEXIST (fib6_add_rt2node); only a resync can see that (docs/kernel-facts.md).
# The route (without its expiry) is kept in exp_specs: later an append of the same route with
# another expiry, or none, changes it silently (the check of the expiring routes catches it).
exp_specs=()
expiring() {
	local spec
	spec=$(printf '%s table %s metric 3000 %s' "$(prefix)" "$(pick tables)" \
		"$([ $((RANDOM % 2)) = 0 ] && echo "dev $(dev)" || echo "nhid $(pick nhids)")")
	exp_specs+=("$spec")
	printf 'route add %s expires %d\n' "$spec" $((RANDOM % 500 + 1000))
}
# A sibling's own attributes, each now and then (the kernel keeps them per sibling; a dump
# tells the first sibling's for the group, an append notification the appended one's).
protos=(static 77 188 boot)
prefs=(low medium high)
sib_attrs() {
	[ $((RANDOM % 3)) = 0 ] && printf ' proto %s' "$(pick protos)"
	[ $((RANDOM % 3)) = 0 ] && printf ' src 2001:db8:ff::%x' $((RANDOM % 3 + 1))
	[ $((RANDOM % 3)) = 0 ] && printf ' mtu %d' $((1300 + RANDOM % 3 * 50))
	[ $((RANDOM % 3)) = 0 ] && printf ' pref %s' "$(pick prefs)"
	return 0
}
# An expiring sibling: a gateway of its own, never used again, so that no later append
# duplicates it (that would move its expiry silently, and a dump shows only the first
# sibling's: docs/kernel-facts.md §7.2).
exp_gw=0
exp_hop() {
	exp_gw=$((exp_gw + 1))
	printf 'via fe80::1:%x dev %s expires %d' $exp_gw "$(dev)" $((RANDOM % 2000 + 1000))
}
loc() { printf '%s table %s metric %s' "$(prefix)" "$(pick tables)" "$(pick metrics)"; }
# Device-only, reject and nexthop-object routes get metrics of their own: one that sits between the siblings of a group
# in the kernel's list (a gateway hop appended after it) is printed there by the proc file but
# not by any dump, which reports the group at its first sibling (docs/kernel-facts.md §7, the
# case netlink cannot reproduce).
dloc() { printf '%s table %s metric %s' "$(prefix)" "$(pick tables)" "$(pick dmetrics)"; }
dmetrics=(1500 1500 2500)
multi() {
	local n=$((RANDOM % 3 + 2)) s=''
	for _ in $(seq $n); do s+=" nexthop $(hop)"; done
	printf '%s' "$s"
}

# nexthop objects 1-4 (one per link) and groups 10, 11
{
	for i in 1 2 3 4; do echo "nexthop add id $i via fe80::$i dev e$((i - 1))"; done
	echo "nexthop add id 10 group 1/2"
	echo "nexthop add id 11 group 3/4/1"
} | ip -n "$NS" -force -batch - >/dev/null 2>&1

renamed=0
gen_op() {
	local r=$((RANDOM % 127))
	if [ $r -ge 100 ]; then
		gen_op_new $r
	elif [ $r -lt 18 ]; then
		echo "route add $(loc) $(hop)"
	elif [ $r -lt 26 ]; then
		echo "route append $(loc) $(hop)"
	elif [ $r -lt 30 ]; then
		echo "route prepend $(loc) $(hop)"
	elif [ $r -lt 38 ]; then
		echo "route add $(loc)$(multi)"
	elif [ $r -lt 44 ]; then
		echo "route replace $(loc) $(hop)"
	elif [ $r -lt 48 ]; then
		echo "route replace $(loc)$(multi)"
	elif [ $r -lt 50 ]; then
		echo "route add $(dloc) $(encap)dev $(dev)$(attrs)"
	elif [ $r -lt 52 ]; then
		expiring
	elif [ $r -lt 54 ]; then
		echo "route append $(dloc) dev $(dev)"
	elif [ $r -lt 56 ]; then
		echo "route add $(pick rej) $(dloc)"
	elif [ $r -lt 60 ]; then
		echo "route add $(dloc) nhid $(pick nhids)$(attrs)"
	elif [ $r -lt 72 ]; then
		echo "route del $([ $((RANDOM % 2)) = 0 ] && loc || dloc)"
	elif [ $r -lt 82 ]; then
		echo "route del $(loc) $(hop)"
	elif [ $r -lt 84 ]; then
		echo "route add $(prefix) from 2001:db8:f$((RANDOM % 2))::/56 $(hop)"
	elif [ $r -lt 85 ]; then
		echo "route del $(prefix) from 2001:db8:f$((RANDOM % 2))::/56"
	elif [ $r -lt 87 ]; then
		local i=$((RANDOM % 4 + 1))
		echo "nexthop replace id $i $(encap)via fe80::$((RANDOM % 3 + 1)) dev $(dev)"
	elif [ $r -lt 88 ]; then
		local i=$((RANDOM % 4 + 1))
		echo "nexthop del id $i"
		echo "nexthop add id $i via fe80::$i dev e$((i - 1))"
	elif [ $r -lt 89 ]; then
		echo "nexthop replace id $((RANDOM % 2 + 10)) group $((RANDOM % 4 + 1))/$((RANDOM % 4 + 1))"
	elif [ $r -lt 92 ]; then
		local d
		d=$(dev)
		echo "link set dev $d down"
		echo "link set dev $d up"
	elif [ $r -lt 93 ]; then
		if [ $renamed = 0 ]; then
			echo "link set dev e3 down"
			echo "link set dev e3 name r3"
			echo "link set dev r3 up"
			renamed=1
			links[3]=r3
		else
			echo "link set dev r3 down"
			echo "link set dev r3 name e3"
			echo "link set dev e3 up"
			renamed=0
			links[3]=e3
		fi
	elif [ $r -lt 94 ]; then
		echo "link del dev e2"
		echo "link add name e2 type veth peer name p2"
		echo "link set dev e2 up"
		echo "link set dev p2 up"
		echo "nexthop add id 2 via fe80::2 dev e1"
		echo "nexthop add id 3 via fe80::3 dev e2"
	elif [ $r -lt 95 ]; then
		echo "route flush table $(pick tables)"
	elif [ $r -lt 96 ]; then
		echo "rule add from ::/0 pref $((RANDOM % 1000 + 1000)) table $((RANDOM % 50 + 300))"
	else
		echo "route del $(dloc) dev $(dev)"
	fi
}
# The operations of the third round (issue: fidelity): sibling attributes, first legs,
# silent changes.
gen_op_new() {
	local r=$1
	if [ $r -lt 106 ]; then
		echo "route add $(loc) $(hop)$(sib_attrs)"
	elif [ $r -lt 112 ]; then
		echo "route append $(loc) $(hop)$(sib_attrs)"
	elif [ $r -lt 115 ]; then
		echo "route append $(loc) $(exp_hop)$(sib_attrs)"
	elif [ $r -lt 117 ]; then
		if [ ${#exp_specs[@]} -gt 0 ]; then
			echo "route append ${exp_specs[RANDOM % ${#exp_specs[@]}]}$([ $((RANDOM % 2)) = 0 ] && printf ' expires %d' $((RANDOM % 500 + 1000)))"
		else
			expiring
		fi
	elif [ $r -lt 118 ]; then
		echo "!sysctl -qw net.ipv4.nexthop_compat_mode=$((RANDOM % 2))"
	elif [ $r -lt 119 ]; then
		echo "!sysctl -qw net.ipv6.conf.all.keep_addr_on_down=$((RANDOM % 2))"
	elif [ $r -lt 121 ]; then
		echo "address add 2001:db8:a$((RANDOM % 3))::$((RANDOM % 3 + 1))/64 dev $(dev) nodad"
	elif [ $r -lt 122 ]; then
		echo "address del 2001:db8:a$((RANDOM % 3))::$((RANDOM % 3 + 1))/64 dev $(dev)"
	elif [ $r -lt 123 ]; then
		echo "link set dev $(dev) mtu $((1300 + RANDOM % 200))"
	elif [ $r -lt 125 ]; then
		printf 'route del %s via fe80::%x dev %s\n' "$(loc)" $((RANDOM % 3 + 1)) "$(dev)"
	else
		# the routes that named it as their source lose it, silently
		local k=$((RANDOM % 3 + 1))
		echo "address del 2001:db8:ff::$k/128 dev lo"
		echo "address add 2001:db8:ff::$k/128 dev lo"
	fi
}
rej=(unreachable blackhole prohibit)
nhids=(1 2 3 4 10 11)

daemon_start "$NS" --interval 0 --debounce-ms 5 || tap_bail "$V: rtsnapd did not start"
D="$RTSNAP_TMP/d"

# agree: 0 when rtsnapd's views equal the kernel's now.
agree() {
	kernel_proc "$NS" | proc_masked >"$D.kp"
	http_get "$NS" /ipv6_route | proc_masked >"$D.dp" || return 1
	cmp -s "$D.kp" "$D.dp" || return 1
	kernel_json "$NS" | sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' >"$D.kj"
	http_get "$NS" /routes >"$D.djr" || return 1
	sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' "$D.djr" >"$D.dj"
	cmp -s "$D.kj" "$D.dj" || return 1
	# and every expiry within 2 s of the kernel's (an append can move one silently)
	kernel_json "$NS" >"$D.kjr"
	paste <(grep -oE '"expires":-?[0-9]+' "$D.kjr" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$D.djr" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -2 || d > 2 || NF != 2) bad = 1 } END { exit bad }'
}

done_ops=0
bursts=0
bad=0
while [ $done_ops -lt "$N_OPS" ]; do
	: >"$D.ops"
	for _ in $(seq "$BURST"); do gen_op >>"$D.ops"; done
	cat "$D.ops" >>"$D.all" # every operation so far (kept with RTSNAP_KEEP_TMP=1)
	done_ops=$((done_ops + BURST))
	bursts=$((bursts + 1))
	# no -6: nexthop groups have no family; every route and rule names an IPv6 prefix.
	# Lines starting with "!" are shell commands, run between the parts ip runs.
	: >"$D.part"
	while IFS= read -r line; do
		if [ "${line#!}" != "$line" ]; then
			ip -n "$NS" -force -batch "$D.part" >/dev/null 2>&1
			: >"$D.part"
			ip netns exec "$NS" sh -c "${line#!}" >/dev/null 2>&1
		else
			printf '%s\n' "$line" >>"$D.part"
		fi
	done <"$D.ops"
	ip -n "$NS" -force -batch "$D.part" >/dev/null 2>&1
	if ! wait_until 8 agree; then
		agree
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
wait_until 5 agree
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
