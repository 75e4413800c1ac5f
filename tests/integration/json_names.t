#!/bin/bash
# json_names.t - table and protocol names as iproute2 reads them: /etc/iproute2/rt_tables
# (decimal and 0x hex ids, comments, a later line for the same id winning),
# rt_tables.d/*.conf overriding rt_tables, rt_protos and rt_protos.d/*.conf, long names,
# numbers without a name. The files are per namespace: `ip netns exec` bind-mounts
# /etc/netns/NS/iproute2 over /etc/iproute2 for both ip and rtsnapd, so the system's own
# files are never touched. Output must be byte-identical to ip -j; the table= and
# protocol= filters must accept the same names.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd


ns_new NS
ETCNS=/etc/netns/$NS
# remove the per-namespace files however the script ends (common.sh's trap runs after)
trap '_st=$?; rm -rf "$ETCNS"; (exit $_st); _cleanup' EXIT
mkdir -p "$ETCNS" && cp -a /etc/iproute2 "$ETCNS/iproute2" || tap_bail "cannot create $ETCNS/iproute2"
mkdir -p "$ETCNS/iproute2/rt_tables.d" "$ETCNS/iproute2/rt_protos.d"
cat >>"$ETCNS/iproute2/rt_tables" <<'EOF2'
100	blue
0x12c	hexname
# 400	commented
70000	big   # trailing comment
200	first
200	second
4294967295	maxtable
EOF2
cat >"$ETCNS/iproute2/rt_tables.d/site.conf" <<'EOF2'
500	from_d
100	blue_d
EOF2
echo "900 ignored_not_conf" >"$ETCNS/iproute2/rt_tables.d/site.txt"
cat >>"$ETCNS/iproute2/rt_protos" <<'EOF2'
250	myproto
EOF2
echo "251 proto_d" >"$ETCNS/iproute2/rt_protos.d/x.conf"

rk_prep "$NS"
veth_pair "$NS" t0 "" t1
ok=0
# table T gets 2001:db8:X::/48 where X is T mod 65536 in hex
tdst() { printf '2001:db8:%x::/48' $(($1 % 65536)); }
for t in 100 300 400 500 900 200 70000 4294967295 12345; do
	ip -n "$NS" -6 route add "$(tdst $t)" dev t0 table $t || ok=1
done
ip -n "$NS" -6 route add 2001:db8:1::/64 dev t0 proto 250 || ok=1
ip -n "$NS" -6 route add 2001:db8:2::/64 dev t0 proto 251 table 100 || ok=1
ip -n "$NS" -6 route add 2001:db8:3::/64 dev t0 proto 252 || ok=1
tap_ok $ok "routes in named and unnamed tables, with named and unnamed protocols"

kn() { kernel_json "$NS" | jq -r "$@"; }
tap_is "$(kn '[.[] | .table // empty] | unique | join(",")')" \
	"12345,400,4294967295,900,big,blue_d,from_d,hexname,local,second" \
	"kernel: ip names tables from rt_tables and rt_tables.d/*.conf (ids >= 2^31 in the files are ignored)"
tap_is "$(kn '[.[] | .protocol // empty] | unique | join(",")')" "252,kernel,myproto,proto_d" \
	"kernel: ip names protocols from rt_protos and rt_protos.d/*.conf"

json_compare "$NS" "--once --format json equals ip -j -6 route show table all" \
	ip netns exec "$NS" "$RTSNAPD" --once --format json
daemon_start "$NS" --debounce-ms 20
tap_ok $? "rtsnapd starts" || tap_done
json_compare "$NS" "GET /routes equals ip -j -6 route show table all" http_get "$NS" /routes

# table=NAME selects what ip lists under the name it prints for that table's id
for q in blue_d:100 hexname:300 from_d:500 big:70000 second:200 4294967295:4294967295 \
	0x1f4:500 12345:12345 400:400 900:900 main:254 local:255; do
	name=${q%%:*} id=${q#*:}
	case $id in
	254) shown=main ;;
	255) shown=local ;;
	*) shown=$(kn --arg d "$(tdst "$id")" 'first(.[] | select(.dst == $d) | .table // "main")') ;;
	esac
	JSON_FILTER="[.[] | select((.table // \"main\") == \"$shown\")]" json_compare "$NS" \
		"GET /routes?table=$name: what ip lists as table $shown (id $id)" \
		http_get "$NS" "/routes?table=$name"
done
# an id given a newer name keeps its older ones (ip accepts both); ids >= 2^31 and
# names outside *.conf files are unknown to ip: rtsnapd accepts exactly what ip accepts
for name in blue first maxtable ignored_not_conf; do
	if ip -n "$NS" -6 route show table "$name" >/dev/null 2>&1; then want=200; else want=400; fi
	st=$(ip netns exec "$NS" curl -s -g -o /dev/null -w '%{http_code}' "$RTSNAP_URL/routes?table=$name")
	tap_is "$st" "$want" "table=$name: rtsnapd answers $want as ip $([ $want = 200 ] && echo accepts || echo refuses) it"
done
tap_is "$(http_get "$NS" '/routes?table=blue' | jq -c .)" "$(http_get "$NS" '/routes?table=100' | jq -c .)" \
	"table=blue (older name of 100) selects table 100"
for q in myproto:2001:db8:1::/64 proto_d:2001:db8:2::/64 250:2001:db8:1::/64 252:2001:db8:3::/64; do
	name=${q%%:*} dst=${q#*:}
	shown=$(kn --arg d "$dst" 'first(.[] | select(.dst == $d) | .protocol)')
	JSON_FILTER="[.[] | select(.protocol == \"$shown\")]" json_compare "$NS" \
		"GET /routes?protocol=$name: what ip lists as protocol $shown" \
		http_get "$NS" "/routes?protocol=$name"
done
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
