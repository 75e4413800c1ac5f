# tests/lib/randomops.sh - the random operation generator of the differential tests
# (mirror_random.t, netns_random.t), parameterised by the namespace it changes.
#
# Source it after common.sh. For each namespace NS:
#     rops_setup NS [SEED]   four veth links e0-e3 (peers p0-p3), sources on lo, nexthop
#                            objects 1-4 and groups 10, 11; NS's generator state reset
#     rops_burst NS N FILE   N random operations for NS written to FILE (the ip -batch
#                            commands; lines starting with "!" are shell commands)
#     rops_apply NS FILE     run FILE's operations in NS (safe in the background: it
#                            changes no generator state)
#     agree KNS DNS PFX OUT  0 when the daemon running in DNS serves, at PFX/ipv6_route and
#                            PFX/routes, what KNS's kernel shows (PFX "" for the daemon's own
#                            namespace, /netns/NAME for a named one); scratch files OUT.*
#
# The generator keeps state in shell globals (links while e3 is renamed, renamed, exp_specs,
# exp_gw, and RANDOM): rops_burst swaps them per namespace, so that two namespaces' generators
# do not share any. RANDOM is swapped only for namespaces given a SEED: without one (a single
# namespace, mirror_random.t) the caller's RANDOM stream is used untouched, so the operations
# are those the generator drew before it moved here.
#
# Note: functions called through $(...) run in a subshell, where bash reseeds RANDOM (from the
# time and pid) and where assignments are lost: only the draws made by gen_op itself (which
# kind of operation) follow SEED, and exp_hop's counter does not advance.

tables=(main 100 200 1000 70000)
metrics=(100 1024 1024 2000)
rej=(unreachable blackhole prohibit)
nhids=(1 2 3 4 10 11)
protos=(static 77 188 boot)
prefs=(low medium high)
dmetrics=(1500 1500 2500)

# the current generator state (of namespace $_rops_cur)
links=(e0 e1 e2 e3) # e3 is r3 while renamed
renamed=0
exp_specs=()
exp_gw=0
_rops_cur=''
declare -A _rops_state=() # NS -> its saved state (declare -p text)
declare -A _rops_seed=()  # NS -> the RANDOM seed its next burst starts from

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
expiring() {
	local spec
	spec=$(printf '%s table %s metric 3000 %s' "$(prefix)" "$(pick tables)" \
		"$([ $((RANDOM % 2)) = 0 ] && echo "dev $(dev)" || echo "nhid $(pick nhids)")")
	exp_specs+=("$spec")
	printf 'route add %s expires %d\n' "$spec" $((RANDOM % 500 + 1000))
}
# A sibling's own attributes, each now and then (the kernel keeps them per sibling; a dump
# tells the first sibling's for the group, an append notification the appended one's).
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
multi() {
	local n=$((RANDOM % 3 + 2)) s=''
	for _ in $(seq $n); do s+=" nexthop $(hop)"; done
	printf '%s' "$s"
}

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
# The operations of the third round (fidelity): sibling attributes, first legs,
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

# _rops_save: keep the current namespace's generator state (and, if it was given a seed, the
# seed its next burst starts from).
_rops_save() {
	[ -n "$_rops_cur" ] || return 0
	_rops_state[$_rops_cur]=$(declare -p links renamed exp_specs exp_gw)
	[ -z "${_rops_seed[$_rops_cur]+x}" ] || _rops_seed[$_rops_cur]=$RANDOM
}
# _rops_load NS: make NS's generator state the current one.
_rops_load() {
	[ "$_rops_cur" != "$1" ] || return 0
	_rops_save
	eval "${_rops_state[$1]//declare -/declare -g -}"
	[ -z "${_rops_seed[$1]+x}" ] || RANDOM=${_rops_seed[$1]}
	_rops_cur=$1
}

# rops_setup NS [SEED]: the links, addresses and nexthop objects the operations name, in the
# (new, empty) namespace NS, and a fresh generator state for it. With SEED, NS's bursts draw
# from a RANDOM stream of their own, started from SEED.
rops_setup() {
	local ns=$1 i
	for i in 0 1 2 3; do
		veth_pair "$ns" "e$i" "$ns" "p$i" || return 1
	done
	ip netns exec "$ns" sysctl -qw net.ipv6.route.gc_interval=3600 >/dev/null 2>&1
	# every table the operations name exists (and is known) from the start: a route add the
	# kernel refuses ("Nexthop device is not up") still creates its table, without a message,
	# and no dump shows an empty table nobody named (docs/kernel-facts.md §13)
	for i in 100 200 1000 70000; do
		ip -n "$ns" -6 route add unreachable 2001:db8:ffff::/64 table $i metric 9999 || return 1
	done
	for i in 1 2 3; do ip -n "$ns" addr add 2001:db8:ff::$i/128 dev lo; done # for src
	# nexthop objects 1-4 (one per link) and groups 10, 11
	{
		for i in 1 2 3 4; do echo "nexthop add id $i via fe80::$i dev e$((i - 1))"; done
		echo "nexthop add id 10 group 1/2"
		echo "nexthop add id 11 group 3/4/1"
	} | ip -n "$ns" -force -batch - >/dev/null 2>&1
	[ "$_rops_cur" != "$ns" ] || _rops_cur=''
	_rops_state[$ns]=$(
		links=(e0 e1 e2 e3) renamed=0 exp_specs=() exp_gw=0
		declare -p links renamed exp_specs exp_gw
	)
	if [ $# -ge 2 ]; then _rops_seed[$ns]=$2; else unset "_rops_seed[$ns]"; fi
	return 0
}

# rops_burst NS N FILE: N random operations for NS, written to FILE.
rops_burst() {
	local ns=$1 n=$2 out=$3
	_rops_load "$ns"
	: >"$out"
	for _ in $(seq "$n"); do gen_op >>"$out"; done
}

# rops_apply NS FILE: run the operations of FILE in NS. No -6: nexthop groups have no family;
# every route and rule names an IPv6 prefix. Lines starting with "!" are shell commands, run
# between the parts ip runs (scratch file FILE.part).
rops_apply() {
	local ns=$1 ops=$2 line
	: >"$ops.part"
	while IFS= read -r line; do
		if [ "${line#!}" != "$line" ]; then
			ip -n "$ns" -force -batch "$ops.part" >/dev/null 2>&1
			: >"$ops.part"
			ip netns exec "$ns" sh -c "${line#!}" >/dev/null 2>&1
		else
			printf '%s\n' "$line" >>"$ops.part"
		fi
	done <"$ops"
	ip -n "$ns" -force -batch "$ops.part" >/dev/null 2>&1
}

# agree KNS DNS PFX OUT: 0 when the daemon in DNS serves at PFX/ipv6_route and PFX/routes what
# the kernel of KNS shows now: /proc/net/ipv6_route (refcnt masked) and
# `ip -j -6 route show table all` ("expires" values masked; their presence still counts, and
# every expiry within 2 s of the kernel's). Leaves OUT.kp, OUT.dp (proc: kernel, daemon) and
# OUT.kj, OUT.dj (json) for a diff.
agree() {
	local kns=$1 dns=$2 pfx=$3 o=$4
	kernel_proc "$kns" | proc_masked >"$o.kp"
	http_get "$dns" "$pfx/ipv6_route" | proc_masked >"$o.dp" || return 1
	cmp -s "$o.kp" "$o.dp" || return 1
	kernel_json "$kns" | sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' >"$o.kj"
	http_get "$dns" "$pfx/routes" >"$o.djr" || return 1
	sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' "$o.djr" >"$o.dj"
	cmp -s "$o.kj" "$o.dj" || return 1
	# and every expiry within 2 s of the kernel's (an append can move one silently)
	kernel_json "$kns" >"$o.kjr"
	paste <(grep -oE '"expires":-?[0-9]+' "$o.kjr" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$o.djr" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -2 || d > 2 || NF != 2) bad = 1 } END { exit bad }'
}
