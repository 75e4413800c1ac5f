#!/bin/bash
# json_long_names.t - table and protocol names longer than 31 and 63 characters, from
# /etc/iproute2, print whole, as ip prints them (issue 12, item 3); and filters accept them.
# The namespace gets its own /etc/iproute2 through /etc/netns/NS (ip netns exec bind-mounts it).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
ETCNS=/etc/netns/$NS
trap '_st=$?; rm -rf "$ETCNS"; (exit $_st); _cleanup' EXIT
mkdir -p "$ETCNS" && cp -a /etc/iproute2 "$ETCNS/iproute2" || tap_bail "cannot create $ETCNS/iproute2"
T100=$(printf 'table_%.0s0123456789' $(seq 8)) # 6 * 8 + 80 = 128 characters
P250=$(printf 'proto_%.0s0123456789' $(seq 5)) # 80 characters
printf '100\t%s\n' "$T100" >>"$ETCNS/iproute2/rt_tables"
printf '250\t%s\n' "$P250" >>"$ETCNS/iproute2/rt_protos"
veth_pair "$NS" t0 "" t1 || tap_bail "veth"
ip -n "$NS" -6 route add 2001:db8:1::/64 dev t0 table 100 proto 250
tap_is "$(kernel_json "$NS" | jq -r '.[] | select(.dst == "2001:db8:1::/64") | .table + " " + .protocol')" \
	"$T100 $P250" "kernel: ip prints the ${#T100}- and ${#P250}-character names whole"
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
json_compare "$NS" "/routes equals ip -j with long names" http_get "$NS" /routes
tap_is "$(http_get "$NS" "/routes?table=$T100&protocol=$P250" | jq -r '.[0].dst')" "2001:db8:1::/64" \
	"filters take the long names"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
