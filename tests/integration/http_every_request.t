#!/bin/bash
# Every request is checked as strictly as the first: request heads that libmicrohttpd 0.9.75
# parsed laxly when they came after a first request (or on TLS), where it sent its error's
# head twice ("Content-Length: +5", "0, 7", "0x5") or answered 200 (differing duplicate
# Content-Lengths, Content-Length with Transfer-Encoding, HTTP/1.2, a NUL in the path), sent
# pipelined behind a valid request in one write, on a plain and on a TLS listener: each is
# answered once, with the same status and JSON error as the same head gets as a first request
# on the plain listener (the gate's answer), and the connection is closed. A pipelined request
# that never completes is closed after --header-timeout like a first one, not after
# --http-timeout (the two are compared in the same run; no time is asserted on its own).
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq openssl python3
require_rtsnapd

PIPE="python3 $TOP/tests/lib/pipeline.py"
T=$RTSNAP_TMP
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout "$T/ca.key" \
	-out "$T/ca.crt" -subj "/CN=rtsnap test ca" 2>"$T/openssl.log" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/srv.key" \
		-out "$T/srv.csr" -subj "/CN=::1" 2>>"$T/openssl.log" &&
	printf 'subjectAltName=IP:::1\nextendedKeyUsage=serverAuth\n' >"$T/srv.ext" &&
	openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -set_serial 0x42 \
		-days 2 -extfile "$T/srv.ext" -out "$T/srv.crt" 2>>"$T/openssl.log" ||
	tap_skip_all "openssl cannot make a test certificate: $(tail -n 3 "$T/openssl.log")"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$T/srv.crt" "$T/srv.key" >"$T/web.yml"

ns_new NS
veth_pair "$NS" v0 "$NS" v1 || tap_bail "cannot create a veth pair"
# plain on 9816, TLS on 9817 (a second daemon: a web configuration covers every listener)
daemon_start "$NS" --header-timeout 2 --http-timeout 20 || tap_bail "daemon did not start"
ip netns exec "$NS" "$RTSNAPD" --listen '[::1]:9817' --web-config-file "$T/web.yml" \
	--header-timeout 2 --http-timeout 20 >"$T/tls.log" 2>&1 </dev/null &
TLS_PID=$!
bg_register $TLS_PID
wait_until 10 ip netns exec "$NS" curl -sgf --cacert "$T/ca.crt" https://[::1]:9817/healthz ||
	tap_bail "the TLS daemon did not start: $(tail -n 5 "$T/tls.log")"

OK='GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'
# pipe PORT FIRST SECOND [TLS]: pipeline.py's JSON line
pipe() {
	if [ -n "${4:-}" ]; then
		ip netns exec "$NS" $PIPE ::1 "$1" "$2" "$3" --tls "$T/ca.crt" --wait 8
	else
		ip netns exec "$NS" $PIPE ::1 "$1" "$2" "$3" --wait 8
	fi
}

# shape DESC HEAD: the head as a first plain request sets the expected status; pipelined
# behind a valid request (plain and TLS) and first on TLS it must get that status, once, in
# JSON, after the valid request's 200, and the connection must close.
shape() {
	local desc=$1 head=$2 want got
	want=$(pipe 9816 '' "$head" | jq -r '"\(.statuses | join(",")) \(.json_errors | join(","))"')
	case $want in
	4??\ true | 505\ true) ;;
	*)
		tap_ok 1 "$desc: the gate answers a first request with a JSON 4xx/505 (got '$want')"
		return
		;;
	esac
	want=${want% *}
	got=$(pipe 9816 "$OK" "$head" | jq -c '[.statuses, .json_errors, .heads, .closed]')
	tap_is "$got" "[[200,$want],[false,true],2,true]" \
		"$desc: pipelined on a plain connection: 200, then $want once in JSON, closed"
	got=$(pipe 9817 "$OK" "$head" tls | jq -c '[.statuses, .json_errors, .heads, .closed]')
	tap_is "$got" "[[200,$want],[false,true],2,true]" \
		"$desc: pipelined on TLS: 200, then $want once in JSON, closed"
	got=$(pipe 9817 '' "$head" tls | jq -c '[.statuses, .json_errors, .heads, .closed]')
	tap_is "$got" "[[$want],[true],1,true]" "$desc: first on TLS: $want once in JSON, closed"
}

shape 'Content-Length: +5' 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n'
shape 'Content-Length: 0, 7' 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 7\r\n\r\n'
shape 'Content-Length: 0x5' 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\n'
shape 'two differing Content-Lengths' \
	'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello'
shape 'Content-Length and Transfer-Encoding' \
	'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
shape 'HTTP/1.2' 'GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n'
shape 'a NUL byte in the path' 'GET /healthz\x00junk HTTP/1.1\r\nHost: x\r\n\r\n'
shape 'a POST with a body' 'POST /routes HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'

# valid pipelined requests are all answered, bodies of GETs counted through
got=$(pipe 9816 "$OK" 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
	jq -c '.statuses')
tap_is "$got" "[200,200,200]" "three valid pipelined requests (one with a body): three answers"
got=$(pipe 9817 "$OK" 'HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' tls | jq -c '.statuses')
tap_is "$got" "[200,200]" "two valid pipelined requests on TLS: two answers"

# an incomplete pipelined request: closed after --header-timeout (2 s) like an incomplete first
# one, not after --http-timeout (20 s)
first=$(pipe 9816 '' 'GET /healthz HTTP/1.1\r\nHo' | jq -r '.seconds')
for port in 9816 9817; do
	tls=
	[ $port = 9817 ] && tls=tls
	got=$(pipe $port "$OK" 'GET /healthz HTTP/1.1\r\nHo' $tls | jq -r '"\(.statuses | join(",")) \(.closed) \(.seconds)"')
	set -- $got
	tap_ok "$([ "$1 $2" = "200 true" ] && awk -v a="$3" -v b="$first" 'BEGIN { exit !(a <= 2.5 * b) }' && echo 0 || echo 1)" \
		"port $port: an incomplete pipelined request is closed after $3 s, like an incomplete first request ($first s), not after --http-timeout"
done

ip netns exec "$NS" curl -sg "$RTSNAP_URL/metrics" >"$T/metrics"
tap_ok "$(grep -q '^rtsnap_http_requests_total{endpoint="/healthz",code="505"} [1-9]' "$T/metrics"; echo $?)" \
	"the refused requests are counted under their endpoint and code"
http_get "$NS" /healthz -o /dev/null
tap_ok $? "the plain daemon still answers"
ip netns exec "$NS" curl -sgf --cacert "$T/ca.crt" https://[::1]:9817/healthz -o /dev/null
tap_ok $? "the TLS daemon still answers"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"
tap_done
