#!/bin/bash
# inet_daemon.t - the running daemon serves IPv4 (--family all): GET /route and
# /proc/net/route are the kernel's /proc/net/route byte for byte (header and padding
# included), /routes?family=inet is `ip -j -4 route show table all` byte for byte,
# /routes?family=all is ip -j -4's objects then ip -j -6's in one array, and /routes (the
# default, inet6) is still `ip -j -6 route show table all`. Every IPv4 route kind
# (tests/lib/routekinds4.sh rk4_all) at start, then while the daemon runs: routes added,
# prepended, appended, replaced and deleted, a device down and up, a carrier lost, an
# address and the last address of a device removed, a nexthop object deleted (the kernel
# says nothing of the routes these take), and a SIGHUP resync (no drift). After each change
# the test waits for the IPv4 generation (/route's ETag) to move, then compares. net-tools'
# route -n and netstat -rn print the same over the served file as over the kernel's. Without
# --family all, /route is 404 and /routes?family=inet too; a bad family is 400. The change
# stream and /changes of the IPv4 instance (family=inet) see a change. The --proc-file4 file
# is compared as /route is.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds4.sh"

require_root
require_cmd ip curl cmp python3 unshare mount jq
require_rtsnapd

# etag4 NS: the IPv4 snapshot's generation, as /route's ETag says it
etag4() {
	ip netns exec "$1" curl -sgI --max-time 5 "$RTSNAP_URL/route" | tr -d '\r' |
		awk -F': ' 'tolower($1)=="etag"{print $2}'
}

# views NS PREFIX: the kernel's texts (PREFIX.k*) and the daemon's (PREFIX.d*)
kernel_views() {
	local ns=$1 p=$2
	ip netns exec "$ns" cat /proc/net/route >"$p.kp"
	ip netns exec "$ns" ip -j -4 route show table all >"$p.kj4"
	kernel_json "$ns" >"$p.kj6"
}
daemon_views() {
	local ns=$1 p=$2
	http_get "$ns" /route >"$p.dp"
	http_get "$ns" /proc/net/route >"$p.dpp"
	http_get "$ns" "/routes?family=inet" >"$p.dj4"
	http_get "$ns" /routes >"$p.dj6"
	http_get "$ns" "/routes?family=all" >"$p.dja"
	cat "$RTSNAP_TMP/route4" >"$p.dpf" 2>/dev/null
}

# check NS WHAT: the served views against the kernel's, read before and after them; while
# they differ (the daemon has not caught up, or the kernel moved meanwhile) read again, a
# bounded number of times, then report what the last reading says.
check() {
	local ns=$1 what=$2 p="$RTSNAP_TMP/v" i
	for i in $(seq 25); do
		kernel_views "$ns" "$p.a"
		daemon_views "$ns" "$p"
		kernel_views "$ns" "$p"
		cmp -s "$p.a.kp" "$p.kp" && cmp -s "$p.a.kj4" "$p.kj4" && cmp -s "$p.a.kj6" "$p.kj6" &&
			cmp -s "$p.kp" "$p.dp" && cmp -s "$p.kp" "$p.dpp" && cmp -s "$p.kj4" "$p.dj4" &&
			cmp -s "$p.kj6" "$p.dj6" && cmp -s "$p.kp" "$p.dpf" && break
		sleep 0.2
	done
	python3 - "$p.kj4" "$p.kj6" >"$p.kja" <<'EOF'
import sys
a, b = (open(f).read().strip()[1:-1] for f in sys.argv[1:3])
sys.stdout.write("[" + a + ("," if a and b else "") + b + "]\n")
EOF
	tap_diff "$p.kp" "$p.dp" "$what: /route is /proc/net/route ($(($(wc -l <"$p.kp") - 1)) routes)"
	tap_diff "$p.kp" "$p.dpp" "$what: /proc/net/route is the kernel's"
	tap_diff "$p.kp" "$p.dpf" "$what: the --proc-file4 file is the kernel's /proc/net/route"
	tap_diff "$p.kj4" "$p.dj4" "$what: /routes?family=inet is ip -j -4 route show table all"
	tap_diff "$p.kj6" "$p.dj6" "$what: /routes is still ip -j -6 route show table all"
	tap_diff "$p.kja" "$p.dja" "$what: /routes?family=all is ip -j -4's objects, then ip -j -6's"
}

# change NS WHAT CMD...: run CMD, wait for the IPv4 generation to move, compare
change() {
	local ns=$1 what=$2 before
	shift 2
	before=$(etag4 "$ns")
	"$@"
	tap_ok $? "$what" || return
	wait_true 10 '[ "$(etag4 '"$ns"')" != "'"$before"'" ]' ||
		tap_diag "$what: the IPv4 generation stayed $before"
	check "$ns" "$what"
}

# nettools NS WHAT: route -n, route -ne and netstat -rn over the served /route and over a copy
# of the kernel's file, each in a mount namespace whose /proc holds nothing but net/route
# (as inet_once.t does: a bind mount over /proc/PID/net/route does not hold)
nettools() {
	local ns=$1 what=$2 d="$RTSNAP_TMP/nt" cmd
	ip netns exec "$ns" cat /proc/net/route >"$d.k"
	http_get "$ns" /route >"$d.r"
	for cmd in "route -n" "route -ne" "netstat -rn"; do
		ip netns exec "$ns" unshare -m sh -c \
			'mount -t tmpfs rtsnapt /proc && mkdir /proc/net && cp "$1" /proc/net/route &&
			 exec '"$cmd" sh "$d.k" >"$d.ok" 2>&1
		ip netns exec "$ns" unshare -m sh -c \
			'mount -t tmpfs rtsnapt /proc && mkdir /proc/net && cp "$1" /proc/net/route &&
			 exec '"$cmd" sh "$d.r" >"$d.or" 2>&1
		tap_diff "$d.ok" "$d.or" "$what: $cmd prints the same over /route as over the kernel's file"
	done
}

ns_new NS
rk4_all "$NS"
tap_ok $? "build every IPv4 route kind in $NS" || tap_done
ns_settle "$NS"
sleep 1 # carrier settles
timeout 10 "$RTSNAPD" --family inet6 --proc-file4 "$RTSNAP_TMP/x" --listen 127.0.0.1:1 >/dev/null 2>&1
tap_is "$?" 2 "--proc-file4 with --family inet6 is refused"
daemon_start "$NS" --family all --proc-file4 "$RTSNAP_TMP/route4"
tap_ok $? "rtsnapd --family all --proc-file4 starts" || tap_done
check "$NS" "every kind"
if command -v route >/dev/null && command -v netstat >/dev/null; then
	nettools "$NS" "every kind"
else
	tap_skip "net-tools (route, netstat) not installed"
fi
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' -H "If-None-Match: $(etag4 "$NS")" \
	"$RTSNAP_URL/route")" 304 "/route: If-None-Match with the IPv4 generation is 304"
# /metrics with both instances: the route series of each family against its own kernel
# listing, by their family label; every family once (promtool), gzip the same text
metrics_fam() { # FILE NAME FAMILY: "labels... value" of NAME's non-zero samples of FAMILY
	awk -v n="$2" -v f="$3" 'index($0, n "{family=\"" f "\",") == 1 && $NF + 0 != 0 {
		s = substr($0, length(n) + length(f) + 12); out = ""
		while (match(s, /^[a-z_]+="[^"]*"[,}]/)) {
			kv = substr(s, 1, RLENGTH - 1); sub(/^[a-z_]+="/, "", kv); sub(/"$/, "", kv)
			out = out kv " "; s = substr(s, RLENGTH + 1)
		}
		print out $NF }' "$1" | sort
}
kernel_counts() { # FILE WHAT: the same counts from ip -j's listing
	case $2 in
	routes) jq -r '[.[] | "\(.table // "main") \(.protocol // "boot") \(.type // "unicast")"]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" ;;
	mp) jq -r '[.[] | select((.nexthops // []) | length > 1) | (.table // "main")]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" ;;
	nh) jq -r '[.[] | select((.nexthops // []) | length > 1) | {t: (.table // "main"), n: (.nexthops | length)}]
		| group_by(.t) | .[] | "\(.[0].t) \(map(.n) | add)"' "$1" ;;
	dev) jq -r '[.[] | ([.dev] + [(.nexthops // [])[] | .dev]) | map(select(. != null)) | unique[]]
		| group_by(.) | .[] | "\(.[0]) \(length)"' "$1" ;;
	esac | sort
}
http_get "$NS" /metrics >"$RTSNAP_TMP/m.prom"
for fam in inet inet6; do
	v=6
	[ "$fam" = inet ] && v=4
	ip -n "$NS" -j "-$v" route show table all >"$RTSNAP_TMP/m.k"
	for w in routes:rtsnap_routes mp:rtsnap_multipath_routes nh:rtsnap_multipath_nexthops \
		dev:rtsnap_device_routes; do
		kernel_counts "$RTSNAP_TMP/m.k" "${w%%:*}" >"$RTSNAP_TMP/m.kc"
		metrics_fam "$RTSNAP_TMP/m.prom" "${w#*:}" "$fam" >"$RTSNAP_TMP/m.mc"
		tap_diff "$RTSNAP_TMP/m.kc" "$RTSNAP_TMP/m.mc" "/metrics: ${w#*:}{family=\"$fam\"} equal ip -j -$v's listing ($(wc -l <"$RTSNAP_TMP/m.kc") series)"
	done
done
if command -v promtool >/dev/null; then
	promtool check metrics <"$RTSNAP_TMP/m.prom" >"$RTSNAP_TMP/m.lint" 2>&1
	tap_ok $? "/metrics with both families passes promtool check metrics" ||
		tap_diag "$(head -n 5 "$RTSNAP_TMP/m.lint")"
else
	tap_skip "promtool not installed"
fi
tap_is "$(grep -c '^# TYPE rtsnap_routes ' "$RTSNAP_TMP/m.prom") $(grep -c '^rtsnap_build_info{' "$RTSNAP_TMP/m.prom")" "1 1" \
	"/metrics: one rtsnap_routes family, one build info"
tap_is "$(sed -n 's/^rtsnap_snapshot_generation{family="inet"} //p' "$RTSNAP_TMP/m.prom") $(sed -n 's/^rtsnap_snapshot_fresh{family="inet"} //p' "$RTSNAP_TMP/m.prom") $(grep -c '^rtsnap_collections_total{family="inet",' "$RTSNAP_TMP/m.prom")" \
	"$(etag4 "$NS" | tr -d '"') 1 $(grep -c '^rtsnap_collections_total{trigger=' "$RTSNAP_TMP/m.prom")" \
	"/metrics: the IPv4 instance's generation (/route's), freshness and every counter, labelled family=\"inet\""
snapshot_series() { grep -E '^(rtsnap_routes|rtsnap_multipath_|rtsnap_device_|rtsnap_routes_expiring|rtsnap_build_info|# )' "$1" | grep -v '^# .* rtsnap_snapshot'; }
ip netns exec "$NS" curl -sg --compressed -H 'Accept-Encoding: gzip' "$RTSNAP_URL/metrics" >"$RTSNAP_TMP/m.gz.prom"
tap_diff <(snapshot_series "$RTSNAP_TMP/m.prom") <(snapshot_series "$RTSNAP_TMP/m.gz.prom") \
	"/metrics gzip: the route series are the plain body's"
http_get "$NS" /status >"$RTSNAP_TMP/status"
tap_is "$(jq -r '[.inet.generation, .inet.routes, .routes] | map(tostring) | join(" ")' "$RTSNAP_TMP/status")" \
	"$(etag4 "$NS" | tr -d '"') $(ip -n "$NS" -j -4 route show table all | jq length) $(ip -n "$NS" -j -6 route show table all | jq length)" \
	"/status: inet's generation is /route's, its routes ip -j -4's count; the top level is still IPv6's"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/routes?family=inet4")" \
	400 "/routes?family=inet4 is 400"
tap_is "$(ip netns exec "$NS" curl -sg "$RTSNAP_URL/routes?family=bad" | python3 -c \
	'import json,sys; print("error" in json.load(sys.stdin))')" True "... with a JSON error"

# filters with family=inet: the full objects of ip -j -4 that match (as for IPv6, a filter
# hides no key); family=all: the IPv4 answer's objects, then the IPv6 one's
ip -n "$NS" -j -4 route show table all >"$RTSNAP_TMP/all4"
for f in table=main table=local table=100 table=all dev=v0 dev=a-fifteen-chars type=local \
	type=unicast type=blackhole protocol=kernel protocol=boot metric=5 metric=0 \
	"table=main&dev=v1" "type=broadcast&table=local"; do
	python3 - "$RTSNAP_TMP/all4" "$f" >"$RTSNAP_TMP/f.k" <<'EOF'
import json, sys
routes = json.load(open(sys.argv[1]))
want = dict(kv.split("=", 1) for kv in sys.argv[2].split("&"))
def ok(r):
    for k, v in want.items():
        if k == "table" and v != "all" and r.get("table", "main") != v:
            return False
        if k == "dev" and r.get("dev") != v and not any(h.get("dev") == v for h in r.get("nexthops", [])):
            return False
        if k == "type" and r.get("type", "unicast") != v:
            return False
        if k == "protocol" and r.get("protocol", "boot") != v:
            return False
        if k == "metric" and r.get("metric", 0) != int(v):
            return False
    return True
sys.stdout.write(json.dumps([r for r in routes if ok(r)], separators=(",", ":")) + "\n")
EOF
	http_get "$NS" "/routes?family=inet&$f" >"$RTSNAP_TMP/f.d"
	tap_diff "$RTSNAP_TMP/f.k" "$RTSNAP_TMP/f.d" "/routes?family=inet&$f: ip -j -4's objects that match ($(grep -o '"dst"' "$RTSNAP_TMP/f.k" | wc -l))"
	http_get "$NS" "/routes?$f" >"$RTSNAP_TMP/f6"
	http_get "$NS" "/routes?family=all&$f" >"$RTSNAP_TMP/fa"
	python3 - "$RTSNAP_TMP/f.d" "$RTSNAP_TMP/f6" >"$RTSNAP_TMP/fj" <<'EOF'
import sys
a, b = (open(f).read().strip()[1:-1] for f in sys.argv[1:3])
sys.stdout.write("[" + a + ("," if a and b else "") + b + "]\n")
EOF
	tap_diff "$RTSNAP_TMP/fj" "$RTSNAP_TMP/fa" "/routes?family=all&$f: the IPv4 answer, then the IPv6 one"
done
# family=all with an address: prefix= and covers= answer from their family's snapshot alone;
# gateway= with an IPv6 address also matches IPv4 routes via inet6
ip -n "$NS" -j -4 route show table all root 10.0.0.0/8 >"$RTSNAP_TMP/f.k"
http_get "$NS" "/routes?family=all&prefix=10.0.0.0/8" >"$RTSNAP_TMP/f.d"
tap_diff "$RTSNAP_TMP/f.k" "$RTSNAP_TMP/f.d" "/routes?family=all&prefix=10.0.0.0/8 is ip -j -4 route show root 10.0.0.0/8"
ip -n "$NS" -j -6 route show table all root fe80::/10 >"$RTSNAP_TMP/f.k"
http_get "$NS" "/routes?family=all&prefix=fe80::/10" >"$RTSNAP_TMP/f.d"
tap_diff "$RTSNAP_TMP/f.k" "$RTSNAP_TMP/f.d" "/routes?family=all&prefix=fe80::/10 is ip -j -6 route show root fe80::/10"
joined() { # the two answers as one array, as family=all gives them
	python3 -c 'import sys
a, b = (open(f).read().strip()[1:-1] for f in sys.argv[1:3])
sys.stdout.write("[" + a + ("," if a and b else "") + b + "]\n")' "$1" "$2"
}
for f in covers=10.0.0.5 covers=fe80::1 gateway=10.0.0.2 gateway=2001:db8:4::2 gateway=fe80::1 \
	"prefix=172.26.0.0/15&table=main" "covers=ff02::1&table=local"; do
	http_get "$NS" "/routes?family=inet&$f" >"$RTSNAP_TMP/f4" 2>/dev/null
	grep -q '^\[' "$RTSNAP_TMP/f4" || echo '[]' >"$RTSNAP_TMP/f4"
	http_get "$NS" "/routes?family=inet6&$f" >"$RTSNAP_TMP/f6" 2>/dev/null
	grep -q '^\[' "$RTSNAP_TMP/f6" || echo '[]' >"$RTSNAP_TMP/f6"
	joined "$RTSNAP_TMP/f4" "$RTSNAP_TMP/f6" >"$RTSNAP_TMP/fj"
	http_get "$NS" "/routes?family=all&$f" >"$RTSNAP_TMP/fa"
	tap_diff "$RTSNAP_TMP/fj" "$RTSNAP_TMP/fa" "/routes?family=all&$f: the IPv4 answer (if the address can be IPv4's), then the IPv6 one ($(grep -o '"dst"' "$RTSNAP_TMP/fa" | wc -l) routes)"
done
tap_is "$(http_get "$NS" "/routes?family=all&prefix=10.0.0.0/8&covers=fe80::1")" "[]" \
	"/routes?family=all with addresses of both families matches nothing"
code_all() { ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/routes?family=all&$1"; }
tap_is "$(code_all prefix=10.0.0.0/33) $(code_all gateway=10.0.0.0/8) $(code_all covers=x)" "400 400 400" \
	"/routes?family=all: an address of neither family is 400"
tap_is "$(code_all after=x) $(code_all after=4) $(code_all after=6x) $(code_all limit=0)" "400 400 400 400" \
	"/routes?family=all: a cursor not from X-Next-After, or limit=0, is 400"
# paging family=all: every page at most limit= routes, the pages joined are the whole answer
pages_all() { # QUERY LIMIT: the pages of family=all&QUERY joined into one array; page count on fd 3
	local q=$1 lim=$2 after="" i k=0
	for i in $(seq 1000); do
		ip netns exec "$NS" curl -sgf -D "$RTSNAP_TMP/ph" \
			"$RTSNAP_URL/routes?family=all&limit=$lim${q:+&$q}${after:+&after=$after}" >"$RTSNAP_TMP/p.$i" || return 1
		[ "$(jq length "$RTSNAP_TMP/p.$i")" -le "$lim" ] || return 1
		k=$i
		after=$(tr -d '\r' <"$RTSNAP_TMP/ph" | sed -n 's/^[Xx]-[Nn]ext-[Aa]fter: //p')
		[ -n "$after" ] || break
	done
	echo "$k" >&3
	jq -s -c 'add' $(for i in $(seq "$k"); do echo "$RTSNAP_TMP/p.$i"; done)
}
for pq in "1 " "7 " "50 " "3 table=local" "2 gateway=fe80::1" "4 prefix=10.0.0.0/8" "1 covers=ff02::1"; do
	lim=${pq%% *} q=${pq#* }
	pages_all "$q" "$lim" >"$RTSNAP_TMP/pj" 3>"$RTSNAP_TMP/pn"
	http_get "$NS" "/routes?family=all${q:+&$q}" | jq -c . >"$RTSNAP_TMP/pw"
	tap_diff "$RTSNAP_TMP/pw" "$RTSNAP_TMP/pj" "/routes?family=all&limit=$lim${q:+&$q}: $(cat "$RTSNAP_TMP/pn") pages of at most $lim, joined, are the whole answer ($(jq length "$RTSNAP_TMP/pw") routes)"
done
ip netns exec "$NS" ip -j -4 route show table all root 0.0.0.0/0 >"$RTSNAP_TMP/f.k"
http_get "$NS" "/routes?family=inet&prefix=0.0.0.0/0" >"$RTSNAP_TMP/f.d"
tap_diff "$RTSNAP_TMP/f.k" "$RTSNAP_TMP/f.d" "/routes?family=inet&prefix=0.0.0.0/0 is ip route show root (lookup4_random.t checks the rest)"

n="ip -n $NS"
# the IPv4 change stream and /changes?family=inet see the first change
g0=$(etag4 "$NS" | tr -d '"')
ip netns exec "$NS" curl -sgN --max-time 20 "$RTSNAP_URL/events?family=inet" >"$RTSNAP_TMP/ev" 2>/dev/null &
ev_pid=$!
wait_true 10 'grep -q "change stream after generation" "$RTSNAP_TMP/ev"'
change "$NS" "a route added" $n route add 10.60.0.0/16 via 10.0.0.2
obj=$(ip -n "$NS" -j -4 route show 10.60.0.0/16 | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[0], separators=(",", ":")))')
wait_true 10 'grep -qF "$obj" "$RTSNAP_TMP/ev"'
tap_ok $? "/events?family=inet streams the added route as ip -j -4 prints it"
kill "$ev_pid" 2>/dev/null
wait "$ev_pid" 2>/dev/null
http_get "$NS" "/changes?family=inet&since=$g0" >"$RTSNAP_TMP/ch"
tap_is "$(grep -cF "\"added\":[$obj]" "$RTSNAP_TMP/ch")" 1 \
	"/changes?family=inet&since=$g0 lists it as added"
tap_is "$(http_get "$NS" "/changes?family=inet&since=$g0&table=main" | grep -cF "\"added\":[$obj]")" 1 \
	"/changes?family=inet&table=main lists it"
tap_is "$(http_get "$NS" "/changes?family=inet&since=$g0&table=100" | grep -c '"added":\[\]')" 1 \
	"/changes?family=inet&table=100 does not"
for f in prefix=10.0.0.0/8 prefix=10.60.0.0/16 covers=10.60.1.1 gateway=10.0.0.2; do
	tap_is "$(http_get "$NS" "/changes?family=inet&since=$g0&$f" | grep -cF "\"added\":[$obj]")" 1 \
		"/changes?family=inet&$f lists it"
done
for f in prefix=192.168.0.0/16 prefix=10.60.0.0/17 covers=10.61.0.1 gateway=10.0.0.3; do
	tap_is "$(http_get "$NS" "/changes?family=inet&since=$g0&$f" | grep -c '"added":\[\]')" 1 \
		"/changes?family=inet&$f does not"
done
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/changes?family=inet&since=$g0&prefix=2001:db8::/32")" \
	400 "/changes?family=inet with an IPv6 prefix is 400"
change "$NS" "a route prepended" $n route prepend 10.60.0.0/16 via 10.0.0.3
change "$NS" "a route appended" $n route append 10.60.0.0/16 dev v1
change "$NS" "a route replaced" $n route replace 10.60.0.0/16 via 10.0.0.4
change "$NS" "a route with TOS added" $n route add 10.60.0.0/16 tos 0x10 via 10.0.0.5 metric 3
change "$NS" "a multipath route added" $n route add 10.61.0.0/16 nexthop via 10.0.0.2 weight 3 \
	nexthop via 10.1.0.2
change "$NS" "a route deleted" $n route del 10.60.0.0/16 via 10.0.0.4
change "$NS" "a route in table 100 added" $n route add 10.62.0.0/16 via 10.0.0.2 table 100
change "$NS" "device v1 down (its routes flushed silently)" $n link set dev v1 down
change "$NS" "device v1 up" $n link set dev v1 up
change "$NS" "carrier lost on v3 (linkdown)" $n link set dev v3p down
change "$NS" "carrier back on v3" $n link set dev v3p up
change "$NS" "a secondary address removed" $n addr del 10.0.0.9/24 dev v0
change "$NS" "the last address of a device removed" $n addr flush dev a-fifteen-chars
change "$NS" "a nexthop object deleted (its routes go silently)" $n nexthop del id 1
change "$NS" "a nexthop object added" $n nexthop add id 20 via 10.0.0.3 dev v0
change "$NS" "a route over it added" $n route add 10.63.0.0/16 nhid 20
change "$NS" "a nexthop group added" sh -c "$n nexthop add id 22 via 10.0.0.4 dev v0 &&
	$n nexthop add id 21 group 20,3/22"
change "$NS" "a route over the group added" $n route add 10.64.0.0/16 nhid 21
change "$NS" "a member of the group deleted (its routes change silently)" $n nexthop del id 20
if command -v route >/dev/null && command -v netstat >/dev/null; then
	nettools "$NS" "after the changes"
fi

# a resync finds nothing to correct
log=$(daemon_log "$NS")
before=$(grep -c 'merged;' "$log")
kill -HUP "${_daemon_pid[$NS]}"
wait_true 10 '[ "$(grep -c "merged;" "'"$log"'")" -ge $((before + 2)) ]'
tap_ok $? "SIGHUP resyncs both families"
tap_is "$(grep -c 'differed from the kernel' "$log")" 0 "no resync found drift"
check "$NS" "after the resync"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits cleanly"

# with --family inet6: IPv4 is not served
ns_new N6
daemon_start "$N6" --family inet6
tap_ok $? "rtsnapd (IPv6 only) starts" || tap_done
code() { ip netns exec "$N6" curl -sg -o /dev/null -w '%{http_code}' --max-time 5 "$RTSNAP_URL$1"; }
tap_is "$(code /route)" 404 "IPv6 only: /route is 404"
tap_is "$(code /proc/net/route)" 404 "IPv6 only: /proc/net/route is 404"
tap_is "$(code '/routes?family=inet')" 404 "IPv6 only: /routes?family=inet is 404"
tap_is "$(code '/routes?family=inet6')" 200 "IPv6 only: /routes?family=inet6 is 200"
tap_is "$(code '/changes?family=inet&since=1')" 404 "IPv6 only: /changes?family=inet is 404"
tap_is "$(ip netns exec "$N6" curl -sg "$RTSNAP_URL/route" | python3 -c \
	'import json,sys; print("error" in json.load(sys.stdin))')" True "... with a JSON error"
daemon_stop "$N6"
tap_done
