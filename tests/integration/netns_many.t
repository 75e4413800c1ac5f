#!/bin/bash
# netns_many.t - one rtsnapd serving twenty named network namespaces beside its own.
#
# Twenty namespaces, each with a different route set (multipath, expiring, several tables,
# reject, static, source routes, preferences, connected, nexthop objects, every IPv4 kind),
# served by one daemon running in a namespace of its own with --netns NAME for each: every
# /netns/NAME/ipv6_route equals that namespace's /proc/net/ipv6_route (refcnt masked),
# /netns/NAME/routes its `ip -j -6 route show table all` ("expires" masked), /netns/NAME/route
# its /proc/net/route and /netns/NAME/routes?family=inet its `ip -j -4 route show table all`;
# the daemon's own paths stay its own namespace's. Routes changed in five of them while it runs
# are served there and nowhere else. Then, with --netns all: namespaces added while the daemon
# runs are served (a name made, deleted and made again starts afresh), deleted ones answer 404
# and leave /netns, also while another namespace churns; a namespace with 100 000 routes under
# churn beside idle ones: the idle ones publish nothing meanwhile and every view equals its
# kernel's afterwards. One collector thread serves them all.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/routekinds4.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl cmp jq
require_rtsnapd

NNS=20
KINDS=(rk_multipath rk_expires rk_tables rk_static rk_reject rk_srcroute rk_pref rk_connected
	rk_nexthop rk4_all)

# urlname NAME: NAME percent-encoded for a path segment
urlname() {
	jq -rn --arg n "$1" '$n|@uri'
}

# code NS PATH: the HTTP status of GET PATH from the daemon in NS
code() {
	ip netns exec "$1" curl -sg -o /dev/null -w '%{http_code}' --max-time 10 "$RTSNAP_URL$2"
}

# views_equal D N: 0 when the daemon in D serves N's four views as N's kernel prints them
# (read the kernel before and after: a change meanwhile is not a difference)
views_equal() {
	local d=$1 n=$2 p="$RTSNAP_TMP/ve" u
	u=/netns/$(urlname "$n")
	kernel_proc "$n" | proc_masked >"$p.k6"
	ip netns exec "$n" cat /proc/net/route >"$p.k4"
	kernel_json "$n" | _json_masked /dev/stdin >"$p.kj6"
	ip netns exec "$n" ip -j -4 route show table all | _json_masked /dev/stdin >"$p.kj4"
	http_get "$d" "$u/ipv6_route" 2>/dev/null | proc_masked >"$p.g6" || return 1
	http_get "$d" "$u/route" >"$p.g4" 2>/dev/null || return 1
	http_get "$d" "$u/routes" 2>/dev/null | _json_masked /dev/stdin >"$p.gj6" || return 1
	http_get "$d" "$u/routes?family=inet" 2>/dev/null | _json_masked /dev/stdin >"$p.gj4" ||
		return 1
	cmp -s "$p.k6" "$p.g6" && cmp -s "$p.k4" "$p.g4" && cmp -s "$p.kj6" "$p.gj6" &&
		cmp -s "$p.kj4" "$p.gj4"
}

# check_views D N DESC: views_equal, retried while the daemon catches up (up to 10 s); on a
# difference the diffs are printed
check_views() {
	local d=$1 n=$2 desc=$3 p="$RTSNAP_TMP/ve" i
	for i in $(seq 40); do
		views_equal "$d" "$n" && break
		sleep 0.25
	done
	if views_equal "$d" "$n"; then
		tap_ok 0 "$desc"
	else
		tap_ok 1 "$desc"
		tap_diag "$(diff "$p.k6" "$p.g6" | head -n 10)" "$(diff "$p.k4" "$p.g4" | head -n 10)" \
			"$(diff "$p.kj6" "$p.gj6" | head -n 10)" "$(diff "$p.kj4" "$p.gj4" | head -n 10)"
	fi
}

# listed D N: 0 when /netns lists N
listed() {
	http_get "$1" /netns 2>/dev/null | jq -e --arg n "$2" '[.namespaces[].name] | index($n) != null' \
		>/dev/null
}

# generation D N: the IPv6 generation /netns/N/status reports
generation() {
	http_get "$1" "/netns/$(urlname "$2")/status" 2>/dev/null | jq -r .generation
}

ns_new D
names=()
for i in $(seq $NNS); do
	ns_new n
	names+=("$n")
	kind=${KINDS[$(((i - 1) % ${#KINDS[@]}))]}
	$kind "$n" >/dev/null 2>"$RTSNAP_TMP/kind.err" ||
		tap_bail "$kind in $n failed: $(cat "$RTSNAP_TMP/kind.err")"
	# and something of each namespace's own, so that no two route sets are alike
	ip -n "$n" link add "own$i" type veth peer name "ownp$i" &&
		ip -n "$n" link set "own$i" up &&
		ip -n "$n" -6 route add "2001:db8:7:$i::/64" dev "own$i" &&
		ip -n "$n" route add "10.77.$i.0/24" dev "own$i" ||
		tap_bail "cannot add $n's own routes"
done
ip -n "$D" link add dd0 type veth peer name dd1 && ip -n "$D" link set dd0 up &&
	ip -n "$D" -6 route add 2001:db8:d::/64 dev dd0 || tap_bail "cannot set up $D"

args=()
for n in "${names[@]}"; do
	args+=(--netns "$n")
done
daemon_start "$D" "${args[@]}" || tap_bail "rtsnapd with $NNS namespaces did not start"
pid=${_daemon_pid[$D]}

tap_is "$(http_get "$D" /netns | jq '.namespaces | length')" $((NNS + 1)) \
	"/netns lists the daemon's own namespace and the $NNS named ones"
tap_is "$(http_get "$D" /netns | jq -r '.namespaces[0].own')" true "the own namespace comes first"
for n in "${names[@]}"; do
	check_views "$D" "$n" "$n (${KINDS[$(((${n##*-} - 2) % ${#KINDS[@]}))]}): its four views equal its kernel's"
done
check_proc_http "$D" /ipv6_route "the plain /ipv6_route is still the daemon's own namespace"
tap_is "$(http_get "$D" /routes | jq -c '[.[] | select(.dst == "2001:db8:d::/64")] | length')" 1 \
	"the plain /routes is the daemon's own namespace's"

# changes in five namespaces, served there and nowhere else
untouched=${names[10]}
g_untouched=$(generation "$D" "$untouched")
for i in 0 3 6 9 12; do
	n=${names[$i]}
	ip -n "$n" -6 route add 2001:db8:aa:$i::/64 dev "own$((i + 1))" metric 9
	ip -n "$n" route add 10.99.$i.0/24 dev "own$((i + 1))" metric 9
	ip -n "$n" -6 route del "2001:db8:7:$((i + 1))::/64" dev "own$((i + 1))"
done
for i in 0 3 6 9 12; do
	check_views "$D" "${names[$i]}" "${names[$i]}: a change while running is served"
done
tap_is "$(generation "$D" "$untouched")" "$g_untouched" \
	"a namespace nothing changed in published nothing meanwhile"
tap_is "$(http_get "$D" /routes | jq -c '[.[] | select(.dst | startswith("2001:db8:aa:"))] | length')" 0 \
	"the changes are not in the daemon's own namespace"
tap_is "$(code "$D" /netns/no-such-namespace/ipv6_route)" 404 "an unknown name is 404"
threads20=$(ls /proc/"$pid"/task | wc -l)
daemon_stop "$D"
tap_ok $? "SIGTERM: rtsnapd with $NNS namespaces exits 0"
daemon_start "$D" || tap_bail "rtsnapd without --netns did not start"
threads0=$(ls /proc/"${_daemon_pid[$D]}"/task | wc -l)
daemon_stop "$D" >/dev/null
tap_is "$threads20" "$threads0" \
	"as many threads with $NNS namespaces as without (one collector thread for all)"

# ---- --netns all: namespaces come and go while the daemon runs
daemon_start "$D" --netns all || tap_bail "rtsnapd --netns all did not start"
for n in "${names[@]}"; do
	listed "$D" "$n" || break
done
tap_ok $? "--netns all serves every namespace there at start"
check_views "$D" "${names[4]}" "--netns all: ${names[4]}'s views equal its kernel's"

new="rtsnapt-$$-new"
ip netns add "$new" && _ns_list+=("$new")
ip -n "$new" link set lo up
ip -n "$new" link add x0 type veth peer name x1 && ip -n "$new" link set x0 up
ip -n "$new" -6 route add 2001:db8:e1::/64 dev x0
ip -n "$new" route add 10.88.1.0/24 dev x0
wait_until 10 listed "$D" "$new"
tap_ok $? "a namespace added while running is listed"
check_views "$D" "$new" "a namespace added while running is served"

gone=${names[5]}
# a stream of it open while it goes: it ends, and its last reference frees the namespace
ip netns exec "$D" curl -sgN --max-time 30 "$RTSNAP_URL/netns/$gone/events" >"$RTSNAP_TMP/gone.ev" 2>/dev/null &
streamer=$!
bg_register "$streamer"
wait_until 5 grep -q "change stream" "$RTSNAP_TMP/gone.ev"
ip netns del "$gone"
wait_until 10 sh -c "! ip netns exec $D curl -sgf --max-time 2 '$RTSNAP_URL/netns' | jq -e --arg n '$gone' '[.namespaces[].name] | index(\$n) != null' >/dev/null"
tap_ok $? "a deleted namespace leaves /netns"
tap_is "$(code "$D" "/netns/$gone/ipv6_route")" 404 "a deleted namespace's paths answer 404"
wait_until 10 sh -c "! kill -0 $streamer 2>/dev/null"
tap_ok $? "a stream of a deleted namespace ends"

# made again under the same name: a new namespace, served afresh
ip netns add "$gone"
ip -n "$gone" link set lo up
ip -n "$gone" link add y0 type veth peer name y1 && ip -n "$gone" link set y0 up
ip -n "$gone" -6 route add 2001:db8:e2::/64 dev y0
wait_until 10 sh -c "ip netns exec $D curl -sgf --max-time 2 '$RTSNAP_URL/netns/$gone/ipv6_route' | grep -q '^20010db800e2'"
check_views "$D" "$gone" "a name deleted and made again is served afresh (its new routes only)"

# namespaces come and go while another one churns (a bounded loop)
churn=${names[7]}
(
	for r in $(seq 400); do
		ip -n "$churn" -6 route add "2001:db8:cc:$r::/64" dev own8 2>/dev/null
		[ $((r % 3)) = 0 ] && ip -n "$churn" -6 route del "2001:db8:cc:$((r - 1))::/64" dev own8 2>/dev/null
	done
) &
churner=$!
bg_register "$churner"
late="rtsnapt-$$-late"
ip netns add "$late" && _ns_list+=("$late")
ip -n "$late" link set lo up
ip -n "$late" link add z0 type veth peer name z1 && ip -n "$late" link set z0 up
ip -n "$late" -6 route add 2001:db8:e3::/64 dev z0
ip netns del "${names[8]}"
wait "$churner"
wait_until 10 listed "$D" "$late"
tap_ok $? "a namespace added while another churns is listed"
check_views "$D" "$late" "... and served"
check_views "$D" "$churn" "the churning namespace's views equal its kernel's afterwards"
wait_until 10 sh -c "[ \$(ip netns exec $D curl -sg -o /dev/null -w '%{http_code}' --max-time 2 '$RTSNAP_URL/netns/${names[8]}/routes') = 404 ]"
tap_ok $? "a namespace deleted while another churns answers 404"

# a namespace of 100 000 routes under churn beside idle ones
big=${names[2]}
awk 'BEGIN { for (i = 0; i < 100000; i++)
	printf "route add 2001:db8:b:%x:%x::/80 dev t0\n", int(i / 65536), i % 65536 }' >"$RTSNAP_TMP/big.batch"
ip -n "$big" -6 -batch "$RTSNAP_TMP/big.batch" || tap_bail "cannot load 100 000 routes"
idle=(${names[1]} ${names[11]} ${names[15]})
declare -A g0
for n in "${idle[@]}"; do
	g0[$n]=$(generation "$D" "$n")
done
awk 'BEGIN { for (r = 0; r < 3; r++) for (i = 0; i < 2000; i++) {
	printf "route del 2001:db8:b:0:%x::/80 dev t0\n", i + r * 2000
	printf "route add 2001:db8:b:f:%x::/80 dev t0\n", i + r * 2000 } }' >"$RTSNAP_TMP/churn.batch"
ip -n "$big" -6 -batch "$RTSNAP_TMP/churn.batch" || tap_bail "cannot churn"
check_views "$D" "$big" "100 000 routes after churn: the views equal the kernel's"
for n in "${idle[@]}"; do
	tap_is "$(generation "$D" "$n")" "${g0[$n]}" "idle $n published nothing while $big churned"
	check_views "$D" "$n" "idle $n: still equal to its kernel's"
done
tap_is "$(http_get "$D" /healthz -o /dev/null -w '%{http_code}')" 200 "/healthz: every namespace fresh"
daemon_stop "$D"
tap_ok $? "SIGTERM: rtsnapd --netns all exits 0"

# the same comings and goings under the ASan+UBSan build: no memory error when a namespace
# goes while a stream still reads it, nor when the daemon stops
if [ -x "$TOP/build/asan/rtsnapd" ]; then
	RTSNAPD=$TOP/build/asan/rtsnapd daemon_start "$D" --netns all ||
		tap_bail "asan: rtsnapd --netns all did not start"
	for r in 1 2 3; do
		x="rtsnapt-$$-asan$r"
		ip netns add "$x" && _ns_list+=("$x")
		ip -n "$x" link set lo up
		wait_until 10 listed "$D" "$x"
		ip netns exec "$D" curl -sgN --max-time 20 "$RTSNAP_URL/netns/$x/events" >/dev/null 2>&1 &
		bg_register $!
		sleep 0.3
		ip netns del "$x"
		wait_until 10 sh -c "[ \$(ip netns exec $D curl -sg -o /dev/null -w '%{http_code}' --max-time 2 '$RTSNAP_URL/netns/$x/status') = 404 ]"
	done
	tap_is "$(code "$D" /healthz)" 200 "asan: healthy after three namespaces came and went with streams open"
	daemon_stop "$D"
	tap_ok $? "asan: SIGTERM: exits 0"
	tap_cmd "asan: no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\\|runtime error\\|LeakSanitizer' '$(daemon_log "$D")'"
else
	tap_skip "asan: no ASan build (make asan)"
fi
tap_done
