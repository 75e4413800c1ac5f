#!/bin/bash
# Stuck clients: connections that send half a request and then nothing, more of them than the
# connection limit. Other clients are still served, and the server closes the stuck ones once
# --http-timeout has passed, freeing their slots. Traffic stays inside the test's namespace.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "$NS" v1
daemon_start "$NS" --http-timeout 2 --max-connections 32 || tap_bail "daemon did not start"

stuck() { # N OUTDIR: open N connections that send half a request, note when each is closed
	local n=$1 dir=$2 i
	for i in $(seq "$n"); do
		ip netns exec "$NS" bash -c '
			exec 3<>/dev/tcp/::1/9816 || exit 1
			printf "GET /ipv6_route HTTP/1.1\r\nHost: x\r\n" >&3
			start=$SECONDS
			timeout 20 cat <&3 >/dev/null
			echo $((SECONDS - start)) >'"$dir/$i"'
		' &
		bg_register $!
	done
}

mkdir -p "$RTSNAP_TMP/s1"
stuck 20 "$RTSNAP_TMP/s1"
sleep 0.5
tap_ok "$(http_get "$NS" /healthz >/dev/null; echo $?)" "served while 20 clients are stuck mid-request"
tap_ok "$(http_get "$NS" /ipv6_route | grep -q .; echo $?)" "/ipv6_route served meanwhile"
wait_until 10 sh -c "[ \$(ls $RTSNAP_TMP/s1 | wc -l) -ge 20 ]"
tap_is "$(ls "$RTSNAP_TMP/s1" | wc -l)" 20 "the server closed every stuck connection"
tap_ok "$(! grep -qE '^(1[0-9]|20)$' "$RTSNAP_TMP"/s1/*; echo $?)" "each was closed by the idle timeout, not held ($(sort -n "$RTSNAP_TMP"/s1/* | tail -1) s at most)"

# more stuck clients than the limit: new clients wait at most until a slot frees up
mkdir -p "$RTSNAP_TMP/s2"
stuck 40 "$RTSNAP_TMP/s2"
sleep 0.5
tap_ok "$(http_get "$NS" /healthz --max-time 15 >/dev/null; echo $?)" "with 40 stuck clients over a limit of 32, a new client is still served"
wait_until 15 sh -c "[ \$(ls $RTSNAP_TMP/s2 | wc -l) -ge 40 ]"
tap_is "$(ls "$RTSNAP_TMP/s2" | wc -l)" 40 "all 40 were closed"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
