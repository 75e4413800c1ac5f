#!/bin/bash
# Hostile kept-alive connections (issue 13, the last gap): the gate checks a connection's first
# request head, so an attacker sends one valid request and then trickles the next one a byte a
# second on the same connection, where only libmicrohttpd's idle timer (reset by every byte)
# would bound it. Here, with --header-timeout 2 and --http-timeout 60 (so that libmicrohttpd's
# timer is never what closes them):
#   - 40 connections trickling their second request (TCP, and 10 over a unix socket), a body
#     trickled after a valid first head, a TLS handshake followed by a trickled head, and a TLS
#     request followed by a trickled one: the server closes every one of them, counted in
#     rtsnap_http_request_timeouts_total; /healthz is answered meanwhile;
#   - a kept-alive connection that is only idle is left open (a scraper between two scrapes);
#   - 200 such attackers that reconnect as soon as they are closed, over --max-connections 32:
#     20 of 20 /healthz from another client are answered, by evicting connections that wait for
#     their clients (rtsnap_http_evicted_connections_total), and the daemon exits cleanly.
# Latencies and hold times are diagnostics only (no wall-clock assertion); every load loop is
# bounded in connections and seconds, and traffic stays on the namespace's loopback.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl python3 timeout openssl
require_rtsnapd
ulimit -n "$(ulimit -Hn)"

ns_new NS
FLOOD="$TOP/tests/lib/flood.py"
SOCK=$RTSNAP_TMP/rtsnapd.sock
T=$RTSNAP_TMP

# probe N [URL]: N sequential /healthz requests; prints "answered p50 p99 max" (seconds).
probe() {
	local n=$1 url=${2:-$RTSNAP_URL} i
	for i in $(seq "$n"); do
		ip netns exec "$NS" curl -sgk -o /dev/null --max-time 15 -w '%{http_code} %{time_total}\n' "$url/healthz"
	done | awk '$1 == 200 { t[++n] = $2 } END {
		if (!n) { print 0, "-", "-", "-"; exit }
		for (i = 2; i <= n; i++) { v = t[i]; for (j = i - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
		p50 = t[int((n + 1) * 0.5) > 0 ? int((n + 1) * 0.5) : 1]; p99 = t[int(n * 0.99) > 0 ? int(n * 0.99) : 1]
		printf "%d %.4f %.4f %.4f\n", n, p50, p99, t[n] }'
}

# metric NAME [URL]: the value of the series NAME (with its labels, as written) in /metrics.
metric() {
	ip netns exec "$NS" curl -sgk --max-time 10 "${2:-$RTSNAP_URL}/metrics" |
		awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print "none" }'
}

# field NAME FILE: the value after NAME on the last line of a flood.py output.
field() { tail -n 1 "$2" | awk -v n="$1" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }'; }

# flood OUT HOST MODE N SECONDS [once]: start flood.py in the background (pid in $FLOOD_PID)
# and wait until it has its connections open.
flood() {
	local out=$1
	shift
	ip netns exec "$NS" python3 "$FLOOD" "$1" 9816 "${@:2}" >"$out" 2>&1 &
	FLOOD_PID=$!
	bg_register "$FLOOD_PID"
	wait_until 20 grep -q '^ready' "$out"
}

# trickled DESC OUT N: the flood in OUT (ended) had N connections trickling and the server
# closed every one of them.
trickled() {
	local desc=$1 out=$2 n=$3
	tap_is "$(field trickled "$out") $(field trickled_closed "$out") $(field still_trickling "$out")" "$n $n 0" \
		"$desc: the server closed all $n"
	tap_diag "$desc: $(tail -n 1 "$out")"
}

# ---- the deadline: trickled next requests are closed, idle ones are not
daemon_start "$NS" --header-timeout 2 --http-timeout 60 --max-connections 64 --listen "unix:$SOCK" ||
	tap_bail "daemon did not start"
flood "$T/ka" ::1 keepalive 40 40 once
flood "$T/ka.unix" "unix:$SOCK" keepalive 10 40 once
sleep 1
read -r res < <(probe 10)
tap_is "${res%% *}" 10 "10 of 10 /healthz answered while 50 connections trickle their second request"
tap_diag "during the trickle /healthz answered/p50/p99/max: $res"
wait "$FLOOD_PID"
wait_until 40 sh -c "tail -n 1 $T/ka | grep -q ^opened"
trickled "40 connections trickling their second request" "$T/ka" 40
trickled "10 connections trickling their second request over the unix socket" "$T/ka.unix" 10
later=$(metric 'rtsnap_http_request_timeouts_total{request="later"}')
tap_ok "$([ "$later" -ge 50 ] 2>/dev/null; echo $?)" "rtsnap_http_request_timeouts_total{request=\"later\"} counts them ($later)"

flood "$T/body" ::1 body 20 40 once
wait "$FLOOD_PID"
trickled "20 first requests announcing a body and trickling it" "$T/body" 20
first=$(metric 'rtsnap_http_request_timeouts_total{request="first"}')
tap_ok "$([ "$first" -ge 20 ] 2>/dev/null; echo $?)" "rtsnap_http_request_timeouts_total{request=\"first\"} counts them ($first)"

# a scraper's kept-alive connection, idle for 2.5 x --header-timeout between two requests
cat >"$T/idle.py" <<'PY'
import http.client, socket, sys, time
c = http.client.HTTPConnection("::1", 9816, timeout=10)
c.request("GET", "/healthz"); r = c.getresponse(); r.read(); first = r.status
sock = c.sock
time.sleep(5)
c.request("GET", "/healthz"); r = c.getresponse(); r.read()
print(first, r.status, "same connection" if c.sock is sock else "reconnected")
PY
tap_is "$(ip netns exec "$NS" timeout 20 python3 "$T/idle.py" 2>&1)" "200 200 same connection" \
	"an idle kept-alive connection is left open: its next request is answered on it"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0"

# ---- more attackers than connection slots, reconnecting as fast as they are closed
daemon_start "$NS" --header-timeout 2 --http-timeout 60 --max-connections 32 ||
	tap_bail "daemon did not start"
read -r res < <(probe 5)
tap_diag "before the flood /healthz answered/p50/p99/max: $res"
flood "$T/evict" ::1 keepalive 200 25
tap_diag "flood client $(head -n 1 "$T/evict")"
sleep 2
read -r res < <(probe 20)
tap_is "${res%% *}" 20 "20 of 20 /healthz answered while 200 reconnecting attackers trickle over 32 slots"
tap_diag "during the flood /healthz answered/p50/p99/max: $res"
evicted=$(metric rtsnap_http_evicted_connections_total)
tap_ok "$([ "$evicted" -ge 1 ] 2>/dev/null; echo $?)" "rtsnap_http_evicted_connections_total counts the connections closed to let them in ($evicted)"
tap_diag "busy (503): $(metric rtsnap_http_busy_total), request timeouts: $(metric 'rtsnap_http_request_timeouts_total{request="later"}')"
wait "$FLOOD_PID"
tap_diag "flood client $(tail -n 1 "$T/evict")"
tap_ok "$([ "$(field trickled_closed "$T/evict")" -ge 32 ] 2>/dev/null; echo $?)" \
	"the attackers' connections were closed by the server ($(field trickled_closed "$T/evict") of $(field trickled "$T/evict"))"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 after the flood (no libmicrohttpd worker left hanging)"

# ---- TLS: a handshake then a trickled head, and a request then a trickled next one
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout "$T/srv.key" \
	-out "$T/srv.crt" -subj /CN=localhost -addext 'subjectAltName=IP:::1' 2>"$T/openssl.log" ||
	tap_bail "openssl: $(tail -n 3 "$T/openssl.log")"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$T/srv.crt" "$T/srv.key" >"$T/web.yml"
ip netns exec "$NS" "$RTSNAPD" --listen "$RTSNAP_LISTEN" --web-config-file "$T/web.yml" \
	--header-timeout 2 --http-timeout 60 >"$T/tls.log" 2>&1 </dev/null &
TLS_PID=$!
bg_register "$TLS_PID"
URL=${RTSNAP_URL/http:/https:}
wait_until 10 ip netns exec "$NS" curl -sfgk --max-time 1 "$URL/healthz"
cat >"$T/tls.py" <<'PY'
# 5 connections: handshake, then a head a byte a second; 5: one request, then the next one
# trickled. Prints "closed C of 10 hold_max S" once the server has closed them (30 s at most).
import socket, ssl, sys, time
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
conns = []
for k in range(10):
    s = ctx.wrap_socket(socket.create_connection(("::1", 9816), timeout=5))
    if k >= 5:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        if not s.recv(4096).startswith(b"HTTP/1.1 200"):
            print("first request not answered"); sys.exit(1)
    s.sendall(b"GET /healthz HTTP/1.1\r\n")
    s.setblocking(False)
    conns.append([s, time.monotonic(), None])
end = time.monotonic() + 30
while time.monotonic() < end and any(c[2] is None for c in conns):
    time.sleep(1)
    for c in conns:
        if c[2] is not None:
            continue
        try:
            c[0].send(b"X")
            if c[0].recv(4096) == b"":
                c[2] = time.monotonic() - c[1]
        except ssl.SSLWantReadError:
            pass
        except OSError:
            c[2] = time.monotonic() - c[1]
done = [c[2] for c in conns if c[2] is not None]
print("closed %d of 10 hold_max %.1f" % (len(done), max(done) if done else 0))
PY
ip netns exec "$NS" timeout 60 python3 "$T/tls.py" >"$T/tls.out" 2>&1
tap_is "$(awk '{print $1, $2, $3, $4}' "$T/tls.out")" "closed 10 of 10" \
	"TLS: 5 trickled heads after the handshake, 5 trickled second requests: all closed"
tap_diag "TLS: $(cat "$T/tls.out")"
tap_diag "TLS: request timeouts first $(metric 'rtsnap_http_request_timeouts_total{request="first"}' "$URL") later $(metric 'rtsnap_http_request_timeouts_total{request="later"}' "$URL")"
kill -TERM "$TLS_PID"
wait "$TLS_PID"
tap_is $? 0 "TLS: rtsnapd exits 0"
tap_done
