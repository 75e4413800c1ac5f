#!/bin/bash
# rtsnapd core, end to end in a network namespace: the proc text, its alias and --once equal the
# kernel's /proc/net/ipv6_route (refcnt masked); /routes equals `ip -j -6 route show table all`;
# /status counts equal the kernel's per table; errors, HEAD, ETag/304, a unix listener, change
# notifications, SIGHUP, the stale path when collections fail, and a clean SIGTERM.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq
require_rtsnapd

ns_new NS
ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev v1 nodad
ip -n "$NS" -6 route add 2001:db8:10::/48 via 2001:db8:1::2
ip -n "$NS" -6 route add 2001:db8:11::/64 dev v1 metric 7
ip -n "$NS" -6 route add default via 2001:db8:1::9
for t in 100 300 1000 4242; do
	ip -n "$NS" -6 route add 2001:db8:$t::/64 via 2001:db8:2::2 table $t
	ip -n "$NS" -6 route add 2001:db8:$t:1::/64 dev v0 table $t metric 99
done
ip -n "$NS" -6 route add default via 2001:db8:2::3 table 300

SOCK="$RTSNAP_TMP/rtsnapd.sock"
daemon_start "$NS" --listen "unix:$SOCK" --interval 30 --debounce-ms 20 || tap_bail "daemon did not start"

same_as_kernel() { # PATH: the HTTP body equals the kernel's proc file, refcnt masked
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	http_get "$NS" "$1" | proc_masked >"$RTSNAP_TMP/o"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/o"
}
wait_until 5 same_as_kernel /ipv6_route
kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/kernel"
http_get "$NS" /ipv6_route | proc_masked >"$RTSNAP_TMP/http"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/http" "/ipv6_route equals the kernel's file (refcnt masked)"
http_get "$NS" /proc/net/ipv6_route | proc_masked >"$RTSNAP_TMP/alias"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/alias" "/proc/net/ipv6_route alias equals the kernel's file"
rtsnapd_once "$NS" proc | proc_masked >"$RTSNAP_TMP/once"
tap_diff "$RTSNAP_TMP/kernel" "$RTSNAP_TMP/once" "--once --format proc equals the kernel's file"
tap_is "$(grep -c . "$RTSNAP_TMP/kernel")" "$(grep -c . "$RTSNAP_TMP/http")" "same number of lines"

kernel_json "$NS" | jq -S . >"$RTSNAP_TMP/kj"
http_get "$NS" /routes | jq -S . >"$RTSNAP_TMP/hj"
tap_diff "$RTSNAP_TMP/kj" "$RTSNAP_TMP/hj" "/routes equals ip -j -6 route show table all"
rtsnapd_once "$NS" json | jq -S . >"$RTSNAP_TMP/oj"
tap_diff "$RTSNAP_TMP/kj" "$RTSNAP_TMP/oj" "--once --format json equals ip -j -6 route show table all"

# /status: routes per table as the kernel lists them
kernel_json "$NS" | jq -S '[.[] | (.table // "main")] | group_by(.) | map({(.[0]): length}) | add' >"$RTSNAP_TMP/kt"
http_get "$NS" /status | jq -S '[.tables[] | select(.routes > 0) | {(.name): .routes}] | add' >"$RTSNAP_TMP/st"
tap_diff "$RTSNAP_TMP/kt" "$RTSNAP_TMP/st" "/status routes per table equal the kernel's"
tap_is "$(http_get "$NS" /status | jq -r '.stale')" false "/status: not stale"
tap_is "$(http_get "$NS" /healthz | jq -r .status)" ok "/healthz says ok"

code() { ip netns exec "$NS" curl -s -g -o "$RTSNAP_TMP/body" -w '%{http_code}' "$@"; }
tap_is "$(code "$RTSNAP_URL/healthz")" 200 "/healthz 200 while fresh"
tap_is "$(code -X POST "$RTSNAP_URL/routes")" 405 "POST is 405"
tap_is "$(jq -r .error "$RTSNAP_TMP/body")" "method not allowed" "405 body is a JSON error"
tap_is "$(code -X DELETE "$RTSNAP_URL/ipv6_route")" 405 "DELETE is 405"
tap_is "$(code "$RTSNAP_URL/nope")" 404 "unknown path is 404"
tap_ok "$(jq -e '.error|length>0' "$RTSNAP_TMP/body" >/dev/null; echo $?)" "404 body is a JSON error"
tap_is "$(code "$RTSNAP_URL/ipv6_route?bogus=1")" 400 "unknown query parameter is 400"
tap_ok "$(jq -e '.error|test("bogus")' "$RTSNAP_TMP/body" >/dev/null; echo $?)" "400 names the parameter"
len_get=$(http_get "$NS" /ipv6_route | wc -c)
len_head=$(ip netns exec "$NS" curl -sgI "$RTSNAP_URL/ipv6_route" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')
tap_is "$len_head" "$len_get" "HEAD announces the GET body length"
tap_is "$(ip netns exec "$NS" curl -sg -X HEAD -o /dev/null -w '%{size_download}' "$RTSNAP_URL/ipv6_route" --max-time 5)" 0 "HEAD sends no body"
etag=$(ip netns exec "$NS" curl -sgI "$RTSNAP_URL/ipv6_route" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
tap_ok "$([[ $etag =~ ^\"[0-9]+\"$ ]]; echo $?)" "ETag is the quoted generation ($etag)"
tap_is "$(code -H "If-None-Match: $etag" "$RTSNAP_URL/ipv6_route")" 304 "If-None-Match with the current ETag is 304"
tap_is "$(code -H 'If-None-Match: "999999"' "$RTSNAP_URL/ipv6_route")" 200 "If-None-Match with another ETag is 200"

# unix listener serves the same bytes
ip netns exec "$NS" curl -s --unix-socket "$SOCK" http://x/ipv6_route | proc_masked >"$RTSNAP_TMP/unix"
tap_diff "$RTSNAP_TMP/http" "$RTSNAP_TMP/unix" "unix:/path listener serves the same text"

# a change notification leads to a new snapshot equal to the kernel again
gen0=$(http_get "$NS" /status | jq .generation)
ip -n "$NS" -6 route add 2001:db8:77::/64 via 2001:db8:1::2 table 300
ip -n "$NS" -6 route del 2001:db8:11::/64 dev v1 metric 7
wait_until 5 same_as_kernel /ipv6_route
tap_ok "$(same_as_kernel /ipv6_route; echo $?)" "after route add/del, /ipv6_route equals the kernel's file again"
gen1=$(http_get "$NS" /status | jq .generation)
tap_ok "$([ "$gen1" -gt "$gen0" ]; echo $?)" "generation advanced ($gen0 -> $gen1)"

# SIGHUP: a resync by signal
pid=$(ip netns pids "$NS" | while read -r p; do [ "$(readlink /proc/$p/exe)" = "$(readlink -f "$RTSNAPD")" ] && echo "$p"; done | head -1)
kill -HUP "$pid"
wait_until 5 sh -c "ip netns exec $NS curl -sg $RTSNAP_URL/status | jq -e '.collections.signal >= 1'"
tap_is "$(http_get "$NS" /status | jq .collections.signal)" 1 "SIGHUP made one collection"

# the stale path: a second daemon whose collections fail after the first
ns_new NS2
veth_pair "$NS2" w0 "$NS2" w1
ip -n "$NS2" -6 route add 2001:db8:5::/64 dev w0
RTSNAP_TEST_FAIL_AFTER=1 daemon_start "$NS2" --interval 30 || tap_bail "second daemon did not start"
before=$(http_get "$NS2" /ipv6_route)
pid2=${_daemon_pid[$NS2]}
kill -HUP "$pid2"
wait_until 5 sh -c "! ip netns exec $NS2 curl -sgf $RTSNAP_URL/healthz"
tap_is "$(ip netns exec "$NS2" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")" 503 "after a failed collection /healthz is 503"
tap_is "$(http_get "$NS2" /status | jq -r '.stale')" true "/status says stale"
tap_ok "$(http_get "$NS2" /status | jq -e '.last_error != null' >/dev/null; echo $?)" "/status names the last error"
tap_is "$(http_get "$NS2" /ipv6_route)" "$before" "the previous snapshot is still served"
daemon_stop "$NS2" >/dev/null

daemon_stop "$NS"
tap_ok $? "SIGTERM: rtsnapd exits 0"
tap_ok "$([ ! -e "$SOCK" ]; echo $?)" "unix socket removed on exit"
tap_done
