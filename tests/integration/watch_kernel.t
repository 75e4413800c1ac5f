#!/bin/bash
# watch_kernel.t - watched routes (--watch, --watch-file; docs/watch.md) against the kernel in
# a test namespace: bad specs and files refused at start with the reason (exit 2); watched
# default routes (IPv6, IPv4) deleted and added again (present 1 -> 0 -> 1 in /watch and
# /metrics, two changes, the last change moved, route_info gone and back, the history newest
# first); a lookup that moves to a more specific route and back (route_info's dst); a watch on
# a table that does not exist yet (absent, no error) then created; a watch in a named
# namespace (--netns) and one in a namespace not served (absent); a multipath route's hops;
# SIGHUP with a broken --watch-file keeps the old list (the log names the line), a good edit
# is taken; promtool accepts /metrics throughout.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl jq promtool
require_rtsnapd

# w NAME FIELD: FIELD (a jq path) of watch NAME in /watch
w() {
	http_get "$NS" /watch | jq -c ".watches[] | select(.name == \"$1\") | $2"
}
# m SERIES: the samples of /metrics whose line starts with SERIES (a regex)
m() {
	http_get "$NS" /metrics | grep -E "^$1"
}
# refused DESC WANT ARG...: rtsnapd ARG... exits 2 and its stderr contains WANT
refused() {
	local desc=$1 want=$2 st
	shift 2
	ip netns exec "$NS" "$RTSNAPD" --listen "$RTSNAP_LISTEN" "$@" >"$RTSNAP_TMP/err" 2>&1
	st=$?
	tap_is "$st" 2 "$desc: exit status 2"
	grep -qF -- "$want" "$RTSNAP_TMP/err"
	tap_ok $? "... saying $want" || tap_diag "$(cat "$RTSNAP_TMP/err")"
}

ns_new NS
NN="rtsnapt-$$-named"
ip netns add "$NN" && _ns_list+=("$NN")
ip -n "$NN" link set lo up &&
	ip -n "$NN" link add n0 type veth peer name n1 &&
	ip -n "$NN" link set n0 up && ip -n "$NN" link set n1 up &&
	ip -n "$NN" -6 addr add 2001:db8:77::1/64 dev n0 nodad &&
	ip -n "$NN" -6 route add default via 2001:db8:77::2 dev n0
tap_ok $? "named namespace with an IPv6 default route" || tap_done
veth_pair "$NS" d0 "$NS" d1 && veth_pair "$NS" d2 "$NS" d3 &&
	ip -n "$NS" -6 addr add 2001:db8:1::1/64 dev d0 nodad &&
	ip -n "$NS" -6 addr add 2001:db8:2::1/64 dev d2 nodad &&
	ip -n "$NS" addr add 192.0.2.1/24 dev d0 &&
	ip -n "$NS" -6 route add default via 2001:db8:1::2 dev d0 &&
	ip -n "$NS" route add default via 192.0.2.2 &&
	ip -n "$NS" route add 10.0.0.0/8 via 192.0.2.3 &&
	ip -n "$NS" -6 route add 2001:db8:99::/48 nexthop via 2001:db8:1::9 dev d0 \
		nexthop via 2001:db8:2::9 dev d2
tap_ok $? "test namespace: default routes, 10.0.0.0/8, a multipath route" || tap_done

# ---- refused at start
refused "--watch with an unknown word" "rtsnapd: --watch 'default via fe80::1': unknown word 'via'" \
	--watch 'default via fe80::1'
refused "--watch with host bits" "rtsnapd: --watch '10.0.0.1/8': '10.0.0.1/8' has host bits set" \
	--watch 10.0.0.1/8
refused "--watch with a bad length" "rtsnapd: --watch '2001:db8::/200': bad prefix length" \
	--watch 2001:db8::/200
refused "--watch of an unknown table name" "table 'nosuch'" --watch 'default table nosuch'
refused "two watches of one name" "rtsnapd: --watch: watch name 'a' given twice" \
	--watch a=default --watch a=default4
printf 'ok=default\n# a comment\n\nbad=lookup:nowhere\n' >"$RTSNAP_TMP/bad.watch"
refused "--watch-file with a bad line" \
	"rtsnapd: --watch-file $RTSNAP_TMP/bad.watch:4: 'nowhere' is not an IPv6 or IPv4 address" \
	--watch-file "$RTSNAP_TMP/bad.watch"
refused "--watch-file that does not exist" "rtsnapd: --watch-file $RTSNAP_TMP/none:" \
	--watch-file "$RTSNAP_TMP/none"

# ---- the daemon
F=$RTSNAP_TMP/watches
cat >"$F" <<EOF
# watched routes
gw6=default
gw4=default4        # the IPv4 default
lk=lookup:10.1.2.3
t200=2001:db8:5::/48 table 200
mp=2001:db8:99::/48
nsgw=default netns $NN
nsnot=default netns rtsnapt-$$-absent
EOF
daemon_start "$NS" --netns "$NN" --watch-file "$F" --watch 'cli=lookup:2001:db8:1::5'
tap_ok $? "rtsnapd with --watch-file and --watch" || tap_done
pid=${_daemon_pid[$NS]}

tap_is "$(http_get "$NS" /watch | jq -c '[.watches[].name]')" \
	'["cli","gw6","gw4","lk","t200","mp","nsgw","nsnot"]' "/watch: every watch, --watch first"
tap_is "$(w gw6 '[.kind,.family,.netns,.table,.target,.present,.changes,.route.dst,.route.gateway]')" \
	'["route","inet6","","main","::/0",true,0,"default","2001:db8:1::2"]' "gw6: present, its route"
tap_is "$(w gw6 .route)" "$(http_get "$NS" '/routes?covers=::/0' | jq -c '.[] | select(.dst == "default")')" \
	"gw6: the route object as /routes prints it"
tap_is "$(w gw4 '[.family,.target,.present,.route.gateway]')" '["inet","0.0.0.0/0",true,"192.0.2.2"]' \
	"gw4: present"
tap_is "$(w lk '[.kind,.target,.present,.route.dst]')" '["lookup","10.1.2.3",true,"10.0.0.0/8"]' \
	"lk: 10.1.2.3 resolves to 10.0.0.0/8"
tap_is "$(w cli '[.kind,.family,.route.dst]')" '["lookup","inet6","2001:db8:1::/64"]' \
	"cli: 2001:db8:1::5 resolves to 2001:db8:1::/64"
tap_is "$(w t200 '[.present,.route,.changes,.table]')" '[false,null,0,"200"]' \
	"t200: table 200 does not exist: absent"
tap_is "$(w nsgw '[.netns,.present,.route.gateway]')" "[\"$NN\",true,\"2001:db8:77::2\"]" \
	"nsgw: the named namespace's default route"
tap_is "$(w nsnot '[.present,.generation]')" '[false,null]' "nsnot: a namespace not served: absent"
m 'rtsnap_watches ' >"$RTSNAP_TMP/n"
tap_is "$(cat "$RTSNAP_TMP/n")" "rtsnap_watches 8" "rtsnap_watches 8"
tap_is "$(m 'rtsnap_watch_present\{watch="nsgw"')" \
	"rtsnap_watch_present{watch=\"nsgw\",family=\"inet6\",netns=\"$NN\"} 1" "nsgw: labelled netns"
tap_is "$(m 'rtsnap_watch_present\{watch="nsnot"')" \
	"rtsnap_watch_present{watch=\"nsnot\",family=\"inet6\",netns=\"rtsnapt-$$-absent\"} 0" \
	"nsnot: present 0"
tap_is "$(m 'rtsnap_watch_route_info\{watch="mp"')" \
	'rtsnap_watch_route_info{watch="mp",family="inet6",table="main",dst="2001:db8:99::/48",dev="d0,d2",gateway="2001:db8:1::9,2001:db8:2::9",protocol="boot",metric="1024",nexthops="2"} 1' \
	"mp: every hop's dev and gateway, nexthops 2"
tap_is "$(w mp '.route.nexthops | length')" 2 "mp: /watch's route has both hops"
http_get "$NS" /metrics >"$RTSNAP_TMP/m0"
promtool_ok "$RTSNAP_TMP/m0" "promtool check metrics: with watches"
t0=$(grep '^rtsnap_watch_last_change_timestamp_seconds{watch="gw6"' "$RTSNAP_TMP/m0" | awk '{print $2}')

# ---- the default routes deleted and added again
sleep 1.1 # a change dated after the start
ip -n "$NS" -6 route del default && ip -n "$NS" route del default
tap_ok $? "both default routes deleted"
wait_true 5 '[ "$(w gw6 .present)$(w gw4 .present)" = falsefalse ]'
tap_is "$(w gw6 '[.present,.route,.changes]')" '[false,null,1]' "gw6: absent, one change"
tap_is "$(w gw4 '[.present,.route,.changes]')" '[false,null,1]' "gw4: absent, one change"
tap_is "$(m 'rtsnap_watch_present\{watch="gw(6|4)"')" \
	"$(printf '%s\n' 'rtsnap_watch_present{watch="gw6",family="inet6"} 0' \
		'rtsnap_watch_present{watch="gw4",family="inet"} 0')" "/metrics: present 0"
tap_is "$(m 'rtsnap_watch_route_info\{watch="gw' | wc -l)" 0 "/metrics: their route_info gone"
tap_is "$(w lk '[.present,.changes]')" '[true,0]' "lk: 10.0.0.0/8 still resolves it"
ip -n "$NS" -6 route add default via 2001:db8:1::2 dev d0 && ip -n "$NS" route add default via 192.0.2.2
tap_ok $? "both default routes added again"
wait_true 5 '[ "$(w gw6 .present)$(w gw4 .present)" = truetrue ]'
tap_is "$(w gw6 '[.present,.changes,.route.gateway]')" '[true,2,"2001:db8:1::2"]' "gw6: present again, two changes"
tap_is "$(w gw4 '[.present,.changes]')" '[true,2]' "gw4: present again, two changes"
tap_is "$(w gw6 '[.history[] | .present]')" '[true,false]' "gw6: history newest first"
tap_is "$(w gw6 '[.history[0].route.dst, .history[1].route]')" '["default",null]' \
	"gw6: history's routes"
tap_ok "$(w gw6 '.history[0].generation > .history[1].generation and .generation >= .history[0].generation' |
	grep -qx true; echo $?)" "gw6: history's generations"
http_get "$NS" /metrics >"$RTSNAP_TMP/m1"
tap_is "$(grep -E '^rtsnap_watch_changes_total\{watch="gw(6|4)"' "$RTSNAP_TMP/m1")" \
	"$(printf '%s\n' 'rtsnap_watch_changes_total{watch="gw6",family="inet6"} 2' \
		'rtsnap_watch_changes_total{watch="gw4",family="inet"} 2')" "changes_total 2"
t1=$(grep '^rtsnap_watch_last_change_timestamp_seconds{watch="gw6"' "$RTSNAP_TMP/m1" | awk '{print $2}')
tap_ok "$(awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b > a) }'; echo $?)" "last_change moved ($t0 -> $t1)"
tap_is "$(grep -c '^rtsnap_watch_route_info{watch="gw' "$RTSNAP_TMP/m1")" 2 "route_info back"
tap_is "$(date -u -d "$(w gw6 .changed_at | tr -d '"')" +%s)" "${t1%.*}" "/watch's changed_at is the metric's time"

# ---- a lookup moving to a more specific route and back
ip -n "$NS" route add 10.1.0.0/16 via 192.0.2.4
wait_true 5 '[ "$(w lk .route.dst)" = "\"10.1.0.0/16\"" ]'
tap_is "$(m 'rtsnap_watch_route_info\{watch="lk"' | grep -o 'dst="[^"]*",dev="[^"]*",gateway="[^"]*"')" \
	'dst="10.1.0.0/16",dev="d0",gateway="192.0.2.4"' "lk: a more specific route takes it"
ip -n "$NS" route del 10.1.0.0/16
wait_true 5 '[ "$(w lk .route.dst)" = "\"10.0.0.0/8\"" ]'
tap_is "$(m 'rtsnap_watch_route_info\{watch="lk"' | grep -o 'dst="[^"]*"')" 'dst="10.0.0.0/8"' "lk: and back"
tap_is "$(w lk .changes)" 2 "lk: two changes"

# ---- a table created
ip -n "$NS" -6 route add 2001:db8:5::/48 dev d0 table 200
wait_true 5 '[ "$(w t200 .present)" = true ]'
tap_is "$(w t200 '[.present,.changes,.route.table]')" '[true,1,"200"]' "t200: present once the table exists"

# ---- the named namespace
ip -n "$NN" -6 route del default
wait_true 5 '[ "$(w nsgw .present)" = false ]'
tap_is "$(m 'rtsnap_watch_present\{watch="nsgw"')" \
	"rtsnap_watch_present{watch=\"nsgw\",family=\"inet6\",netns=\"$NN\"} 0" "nsgw: its route deleted: 0"
tap_is "$(w nsgw .changes)" 1 "nsgw: one change"

# ---- a multipath route losing a hop
ip -n "$NS" -6 route replace 2001:db8:99::/48 nexthop via 2001:db8:2::9 dev d2
wait_true 5 '[ "$(w mp .route.dev)" = "\"d2\"" ]'
tap_is "$(m 'rtsnap_watch_route_info\{watch="mp"' | grep -o 'dev="[^"]*",gateway="[^"]*",.*nexthops="[^"]*"')" \
	'dev="d2",gateway="2001:db8:2::9",protocol="boot",metric="1024",nexthops="1"' "mp: one hop left"
tap_is "$(w mp .changes)" 1 "mp: a change"

# ---- SIGHUP: a broken file keeps the list, a good edit is taken
printf 'gw6=default\nbroken=10.0.0.0/77\n' >"$F"
kill -HUP "$pid"
wait_until 5 grep -q "$F:2: bad prefix length" "$(daemon_log "$NS")"
tap_ok $? "SIGHUP with a broken file: the log names the line"
sleep 0.5
tap_is "$(m 'rtsnap_watches ')" "rtsnap_watches 8" "... and the list in force stays"
tap_is "$(w gw6 .changes)" 2 "... with its state"
cat >"$F" <<EOF
gw6=default
new4=default4
EOF
kill -HUP "$pid"
wait_true 5 '[ "$(m "rtsnap_watches ")" = "rtsnap_watches 3" ]'
tap_is "$(http_get "$NS" /watch | jq -c '[.watches[] | [.name,.present]]')" \
	'[["cli",true],["gw6",true],["new4",true]]' "SIGHUP with a good edit: the new list"
tap_is "$(w gw6 .changes)" 2 "gw6 kept its changes across the reload"
tap_is "$(w new4 '[.changes,.route.gateway]')" '[0,"192.0.2.2"]' "new4: evaluated at once"
http_get "$NS" /metrics >"$RTSNAP_TMP/m2"
promtool_ok "$RTSNAP_TMP/m2" "promtool check metrics: after the reload"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/netns/$NN/watch")" 404 \
	"/netns/NAME/watch: 404 (one /watch for all)"

daemon_stop "$NS"
tap_is "$?" 0 "SIGTERM: exit 0"

# no watch configured: an empty list, no watch series but the count
daemon_start "$NS"
tap_ok $? "rtsnapd without watches" || tap_done
tap_is "$(http_get "$NS" /watch)" '{"watches":[]}' "/watch: {\"watches\":[]}"
tap_is "$(m 'rtsnap_watch')" "rtsnap_watches 0" "/metrics: rtsnap_watches 0 alone"
daemon_stop "$NS"
tap_done
