#!/bin/bash
# Churn: multipath groups are replaced and deleted and blocks of routes come and go continuously
# while rtsnapd republishes with no debounce. Every snapshot a reader sees, over HTTP and in the
# --proc-file export, must be a state the kernel could have been in: complete lines, no
# duplicated line, each multipath group whole (one of the sets it was ever given, or absent when
# it is the one being deleted), the permanent routes all there. When the churn stops, the
# snapshot equals the kernel's file again. Bounded in time and count.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl awk
require_rtsnapd
DURATION=${CHURN_SECONDS:-10}

ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev v1 nodad
for i in $(seq 1 150); do
	echo "route add 2001:db8:f0:$i::/64 via 2001:db8:1::2"
	echo "route add 2001:db8:f1:$i::/64 dev v1 table 100"
done | ip -6 -n "$NS" -batch -
MPA="2001:db8:aa::/64"
MPB="2001:db8:ab::/64"
SET1="nexthop via 2001:db8:1::11 nexthop via 2001:db8:1::12 nexthop via 2001:db8:2::13"
SET2="nexthop via 2001:db8:2::14 weight 2 nexthop via 2001:db8:1::15"
ip -n "$NS" -6 route add $MPA $SET1

EXPORT="$RTSNAP_TMP/ipv6_route"
daemon_start "$NS" --debounce-ms 0 --interval 1 --proc-file "$EXPORT" || tap_bail "daemon did not start"
wait_until 5 test -s "$EXPORT"

# check FILE: exit 0 when the text is a consistent state; else print why
check() {
	awk -v base=300 '
	function hexw(f, w) { return length(f) == w && f ~ /^[0-9a-f]+$/ }
	function fail(m) { print m; bad = 1; exit 1 }
	{
		# field widths by position (mawk has no {n} in regular expressions)
		if (NF != 10 || length($0) < 149 || !hexw($1, 32) || !hexw($2, 2) || !hexw($3, 32) ||
		    !hexw($4, 2) || !hexw($5, 32) || !hexw($6, 8) || !hexw($7, 8) || !hexw($8, 8) ||
		    !hexw($9, 8) || substr($0, 141, 1) != " " && length($10) <= 8)
			fail("malformed line " NR ": " $0)
		k = substr($0, 1, 114) substr($0, 123)
		if ($6 != "ffffffff" && seen[k]++) fail("duplicated line: " $0) # placeholders: one per table
		if ($1 ~ /^20010db800f[01]/) nbase++
		if ($1 == "20010db800aa00000000000000000000") a = a " " $5
		if ($1 == "20010db800ab00000000000000000000") b = b " " $5
	}
	END {
		if (bad) exit 1
		if (nbase != base) { print "permanent routes: " nbase " of " base; exit 1 }
		A1 = " 20010db8000100000000000000000011 20010db8000100000000000000000012 20010db8000200000000000000000013"
		A2 = " 20010db8000200000000000000000014 20010db8000100000000000000000015"
		if (a != A1 && a != A2) { print "group A torn:" a; exit 1 }
		if (b != "" && b != A1) { print "group B torn:" b; exit 1 }
		if (NR == 0 || last_nl == 0) {}
	}' "$1"
}

churn() {
	local end=$((SECONDS + DURATION)) k=0
	while [ $SECONDS -lt $end ] && [ $k -lt 5000 ]; do
		k=$((k + 1))
		if [ $((k % 2)) = 0 ]; then
			ip -n "$NS" -6 route replace $MPA $SET1
			ip -n "$NS" -6 route add $MPB $SET1 2>/dev/null
		else
			ip -n "$NS" -6 route replace $MPA $SET2
			ip -n "$NS" -6 route del $MPB 2>/dev/null
		fi
		for j in $(seq 0 9); do echo "route add 2001:db8:c$((k % 2)):$j::/64 via 2001:db8:1::2"; echo "route del 2001:db8:c$(((k + 1) % 2)):$j::/64"; done |
			ip -6 -n "$NS" -force -batch - 2>/dev/null
	done
}

observe() { # SOURCE OUT: read snapshots until the time is up; log every inconsistent one
	local src=$1 out=$2 end=$((SECONDS + DURATION)) i=0 f="$RTSNAP_TMP/obs.$1.$BASHPID"
	while [ $SECONDS -lt $end ] && [ $i -lt 4000 ]; do
		i=$((i + 1))
		if [ "$src" = http ]; then
			http_get "$NS" /ipv6_route >"$f" || { echo "http: request failed" >>"$out"; continue; }
		else
			cat "$EXPORT" >"$f" || { echo "file: cannot read" >>"$out"; continue; }
		fi
		if [ -s "$f" ] && [ "$(tail -c1 "$f" | od -An -c | tr -d ' ')" != '\n' ]; then
			echo "$src: text does not end with a newline" >>"$out"
		elif ! why=$(check "$f"); then
			echo "$src: $why" >>"$out"
		fi
		echo >>"$out.n"
	done
}

gen0=$(http_get "$NS" /status | jq .generation)
churn &
cpid=$!
observe http "$RTSNAP_TMP/bad.http" &
o1=$!
observe file "$RTSNAP_TMP/bad.file" &
o2=$!
observe http "$RTSNAP_TMP/bad.http2" &
o3=$!
wait $cpid $o1 $o2 $o3
gen1=$(http_get "$NS" /status | jq .generation)
nh=$(cat "$RTSNAP_TMP"/bad.http.n "$RTSNAP_TMP"/bad.http2.n 2>/dev/null | wc -l)
nf=$(wc -l <"$RTSNAP_TMP/bad.file.n" 2>/dev/null || echo 0)
tap_diag "$((gen1 - gen0)) publications in ${DURATION}s; $nh HTTP reads and $nf file reads checked"
tap_ok "$([ $((gen1 - gen0)) -ge $DURATION ]; echo $?)" "snapshots were republished throughout ($((gen1 - gen0)))"
bad_http=$(cat "$RTSNAP_TMP"/bad.http "$RTSNAP_TMP"/bad.http2 2>/dev/null | wc -l)
tap_is "$bad_http" 0 "every snapshot read over HTTP is a consistent kernel state"
[ "$bad_http" = 0 ] || tap_diag "$(cat "$RTSNAP_TMP"/bad.http "$RTSNAP_TMP"/bad.http2 | sort | uniq -c | head)"
bad_file=$(cat "$RTSNAP_TMP/bad.file" 2>/dev/null | wc -l)
tap_is "$bad_file" 0 "every read of the exported file is one complete, consistent snapshot"
[ "$bad_file" = 0 ] || tap_diag "$(sort "$RTSNAP_TMP/bad.file" | uniq -c | head)"
tap_ok "$([ "$nh" -gt 0 ] && [ "$nf" -gt 0 ]; echo $?)" "both readers were served"

same() {
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	proc_masked "$EXPORT" >"$RTSNAP_TMP/f"
	http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/h"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" && cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/f"
}
wait_until 5 same
kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/h"
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/h" "after the churn, /ipv6_route equals the kernel's file"
proc_masked "$EXPORT" >"$RTSNAP_TMP/f"
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/f" "after the churn, the exported file equals the kernel's file"
tap_ok "$(ls "$RTSNAP_TMP" | grep -c 'ipv6_route.tmp' | grep -qx 0; echo $?)" "no temporary export file left behind"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
