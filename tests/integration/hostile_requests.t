#!/bin/bash
# Hostile and broken requests (issue 13, item 3): every one gets a 4xx/5xx answer with a JSON
# {"error": ...} body and application/json, never a closed connection or libmicrohttpd's HTML:
# invalid UTF-8 in the path or in an unknown query key, a key cut in the middle of a character
# by the error message's length limit, POST/PUT with a body, %00 in the path, and what
# libmicrohttpd would refuse itself (400 malformed, 413, 414, 431, 505), sent raw over
# /dev/tcp, as the first request of a connection (answered by the gate) and as the second of a
# kept-alive one (refused by the check of every head in http_conn.c, or answered by
# libmicrohttpd with its page replaced by http_mhd_errors.c); a head
# that never completes gets 408 after --header-timeout. The request counter counts each status
# under its own code. The server stays healthy throughout.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq timeout
require_rtsnapd

ns_new NS
veth_pair "$NS" v0 "$NS" v1 || tap_bail "cannot create a veth pair"
daemon_start "$NS" --header-timeout 2 || tap_bail "daemon did not start"

# is_json_error FILE: FILE is one JSON object with a non-empty string "error".
is_json_error() { jq -e '(.error | type == "string" and length > 0)' "$1" >/dev/null 2>&1; }

# via_curl DESC WANT CURL-ARG...: the answer has status WANT, is application/json and a JSON error.
via_curl() {
	local desc=$1 want=$2 got ctype
	shift 2
	got=$(ip netns exec "$NS" curl -sg --max-time 10 -o "$RTSNAP_TMP/body" -D "$RTSNAP_TMP/hdr" \
		-w '%{http_code}' "$@")
	ctype=$(tr -d '\r' <"$RTSNAP_TMP/hdr" | awk -F': ' 'tolower($1)=="content-type"{print $2}' | tail -1)
	is_json_error "$RTSNAP_TMP/body"
	tap_is "$got $ctype $?" "$want application/json 0" "$desc: $want with a JSON error"
	[ "$got" = "$want" ] || tap_diag "body: $(head -c 300 "$RTSNAP_TMP/body")"
}

# via_raw DESC WANT BYTES: send BYTES (printf %b escapes) on a fresh TCP connection, read the
# answer until the server closes; same checks as via_curl.
via_raw() {
	local desc=$1 want=$2 f=$RTSNAP_TMP/raw got ctype
	ip netns exec "$NS" timeout 10 bash -c \
		'exec 3<>/dev/tcp/::1/9816 || exit 1; printf "%b" "$1" >&3; cat <&3' _ "$3" >"$f"
	got=$(head -n1 "$f" | tr -d '\r' | awk '{print $2}')
	ctype=$(sed -n '1,/^\r$/p' "$f" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-type"{print $2}')
	sed '1,/^\r$/d' "$f" >"$RTSNAP_TMP/body"
	is_json_error "$RTSNAP_TMP/body"
	tap_is "$got $ctype $?" "$want application/json 0" "$desc: $want with a JSON error"
	[ "$got" = "$want" ] || tap_diag "answer: $(head -c 300 "$f" | tr -d '\r')"
}

U=$RTSNAP_URL
euro22=$(for i in $(seq 22); do printf '%%e2%%82%%ac'; done) # 66 bytes: the 64-byte cut splits one

via_curl "invalid UTF-8 in the path (/%ff)" 404 "$U/%ff"
via_curl "invalid UTF-8 in an unknown query key (/routes?%ff=1)" 400 "$U/routes?%ff=1"
via_curl "a key cut in a character by the message limit" 400 "$U/routes?$euro22=1"
tap_ok "$(jq -e '.error | test("\u20ac")' "$RTSNAP_TMP/body" >/dev/null; echo $?)" "the whole characters before the cut are kept"
via_curl "half a character as a key (/healthz?%e2%82=1)" 400 "$U/healthz?%e2%82=1"
via_curl "POST with a body" 405 -X POST -d 'abc' "$U/routes"
tap_ok "$(grep -qi '^Allow: GET, HEAD' "$RTSNAP_TMP/hdr"; echo $?)" "405 carries Allow: GET, HEAD"
via_curl "PUT with a body" 405 -X PUT -d 'abc' "$U/ipv6_route"
head -c 200000 /dev/zero | tr '\0' x >"$RTSNAP_TMP/big"
via_curl "POST with a 200 kB body (Expect: 100-continue)" 405 -X POST --data-binary @"$RTSNAP_TMP/big" "$U/routes"
via_curl "POST with a 200 kB body, no Expect" 405 -X POST -H 'Expect:' --data-binary @"$RTSNAP_TMP/big" "$U/routes"
via_curl "DELETE" 405 -X DELETE "$U/healthz"
via_curl "%00 in the path (/healthz%00junk)" 400 "$U/healthz%00junk"
via_curl "%00 in a query value" 400 "$U/routes?table=main%00junk"

long=$(head -c 9000 /dev/zero | tr '\0' a)
huge=$(head -c 17000 /dev/zero | tr '\0' a)
via_raw "HTTP/2.0 request line" 505 'GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n'
via_raw "HTTP/3.1 request line" 505 'GET /healthz HTTP/3.1\r\nHost: x\r\n\r\n'
via_raw "garbage instead of a request line" 400 'GARBAGE\r\n\r\n'
via_raw "a request line without a version" 400 'GET /healthz\r\n\r\n'
via_raw "a 9000-byte request target" 414 "GET /$long HTTP/1.1\r\nHost: x\r\n\r\n"
via_raw "a 17000-byte request line with no end" 414 "GET /$huge"
via_raw "a 17000-byte header" 431 "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: $huge\r\n\r\n"
via_raw "Content-Length beyond any body" 413 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n'
via_raw "Content-Length that is not a number" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'
via_raw "conflicting Content-Length headers" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx'
via_raw "a chunked GET" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'
via_raw "a header line without a colon" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'
via_raw "a NUL byte in a header" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n'
via_raw "POST with a body, raw" 405 'POST /routes HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'
via_raw "%00 in the path, raw" 400 'GET /healthz%00junk HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
via_raw "invalid UTF-8 in the path, raw" 404 'GET /%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

# a head that never completes: 408 after --header-timeout (2 s), even while bytes trickle in
ip netns exec "$NS" timeout 15 bash -c '
	exec 3<>/dev/tcp/::1/9816 || exit 1
	cat <&3 &
	printf "GET /healthz HTTP/1.1\r\n" >&3
	for i in 1 2 3 4 5 6 7 8; do printf "X-%d: y\r\n" $i >&3 2>/dev/null || break; sleep 0.5; done
	wait' >"$RTSNAP_TMP/raw" 2>/dev/null
got=$(head -n1 "$RTSNAP_TMP/raw" | tr -d '\r' | awk '{print $2}')
sed '1,/^\r$/d' "$RTSNAP_TMP/raw" >"$RTSNAP_TMP/body"
is_json_error "$RTSNAP_TMP/body"
tap_is "$got $?" "408 0" "a head trickled for longer than --header-timeout: 408 with a JSON error"

# a well-formed request still works, on one connection after another and kept alive
tap_is "$(ip netns exec "$NS" curl -sg --max-time 5 "$U/healthz" "$U/healthz" | jq -r .status | tr '\n' ' ')" "ok ok " \
	"two requests on one kept-alive connection are answered"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' -I --max-time 5 "$U/ipv6_route")" 200 "HEAD is answered"

# after the first request of a kept-alive connection, libmicrohttpd parses alone, and answers
# what it cannot parse itself. (Sent pipelined in one segment, libmicrohttpd 0.9.75 often resets
# the connection before either answer is read, with or without the gate: the second request
# follows the first answer here.)
# second_raw BYTES: a valid request, its answer, then BYTES on the same connection; what the
# server sends, until it closes, in $RTSNAP_TMP/raw.
second_raw() {
	ip netns exec "$NS" timeout 10 bash -c \
		'exec 3<>/dev/tcp/::1/9816 || exit 1
		cat <&3 &
		printf "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" >&3
		sleep 0.3
		printf "%b" "$1" >&3
		wait' _ "$1" >"$RTSNAP_TMP/raw" 2>/dev/null
}
# via_second DESC WANT BYTES: second_raw BYTES; the second answer must have status WANT and a
# JSON error body.
via_second() {
	local desc=$1 want=$2 f=$RTSNAP_TMP/raw got ctype
	second_raw "$3"
	tr -d '\r' <"$f" | awk '/^HTTP\/1\.1 / { n++ } n == 2' >"$f.2"
	got=$(head -n1 "$f.2" | awk '{print $2}')
	ctype=$(sed -n '1,/^$/p' "$f.2" | awk -F': ' 'tolower($1)=="content-type"{print $2}')
	sed '1,/^$/d' "$f.2" >"$RTSNAP_TMP/body"
	is_json_error "$RTSNAP_TMP/body"
	tap_is "$(grep -a -c '^HTTP/1.1 200' "$f") $got $ctype $?" "1 $want application/json 0" \
		"second request on a kept-alive connection, $desc: $want with a JSON error"
	[ "$got" = "$want" ] || tap_diag "answer: $(head -c 600 "$f" | tr -d '\r')"
}
via_second "HTTP/2.0 request line" 505 'GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n'
via_second "a malformed HTTP version" 400 'GET /healthz HTXP/1.1\r\nHost: x\r\n\r\n'
via_second "Content-Length that is not a number" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'
via_second "a header line without a colon" 400 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'
via_second "Content-Length beyond any body" 413 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n'
big=$(head -c 70000 /dev/zero | tr '\0' a)
via_second "a 70000-byte header" 431 "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: $big\r\n\r\n"
via_second "a 70000-byte request target" 414 "GET /$big HTTP/1.1\r\nHost: x\r\n\r\n"
tap_is "$(grep -a -c '<html>' "$RTSNAP_TMP/raw")" 0 "no HTML page from libmicrohttpd"
# a line that is no request line: libmicrohttpd closed the connection without an answer; every
# later head is now checked by the gate's rules before libmicrohttpd reads it, so: 400
via_second "garbage instead of a request line" 400 'GARBAGE\r\n\r\n'

# the counter: every code under its own name, nothing as "other"
http_get "$NS" /metrics >"$RTSNAP_TMP/m"
for c in 400 404 405 408 413 414 431 505; do
	n=$(grep -E "^rtsnap_http_requests_total\{.*code=\"$c\"\}" "$RTSNAP_TMP/m" | awk '{s += $2} END {print s + 0}')
	tap_ok "$([ "$n" -ge 1 ]; echo $?)" "rtsnap_http_requests_total counts code=\"$c\" ($n)"
done
tap_is "$(grep -c 'code="other"' "$RTSNAP_TMP/m")" 0 "no answer counted under code=\"other\""
tap_ok "$(grep -q '^rtsnap_http_header_timeouts_total [1-9]' "$RTSNAP_TMP/m"; echo $?)" "rtsnap_http_header_timeouts_total counts the 408"

tap_is "$(http_get "$NS" /healthz | jq -r .status)" ok "/healthz still ok after all of it"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0"
tap_done
