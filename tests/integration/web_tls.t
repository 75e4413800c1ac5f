#!/bin/bash
# --web-config-file end to end, in a network namespace, with a CA and certificates that the
# test makes with openssl: curl over HTTPS (server certificate verified against the CA)
# reads the same routes as the kernel lists; plain HTTP to the TLS port is refused with a
# plain-text 400; a missing, wrong or unknown user's password gets 401 with
# WWW-Authenticate; min_version is enforced; with client_ca_file a client certificate from
# that CA is required (none, or one from another CA, is refused); configurations with
# unknown keys or unreadable certificates stop the daemon at start with a message naming
# the problem; SIGHUP rotates the certificate and the passwords for new connections, and a
# broken new file keeps the old settings (the web_config fault in /status and /metrics until a
# good one loads); a real Prometheus scrapes rtsnapd over TLS with
# basic auth (and fails to with a wrong password).
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq openssl python3
require_rtsnapd
# pki_ca NAME: a self-signed EC CA, $RTSNAP_TMP/NAME.crt and NAME.key
pki_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$RTSNAP_TMP/$1.key" -out "$RTSNAP_TMP/$1.crt" -subj "/CN=rtsnap test $1" \
		2>"$RTSNAP_TMP/openssl.log"
}

# pki_cert NAME CA CN SAN [EXT]: a key and certificate NAME.{key,crt} signed by CA; SAN is
# an openssl subjectAltName value (e.g. "IP:::1,DNS:localhost"), EXT the extendedKeyUsage.
pki_cert() {
	local name=$1 ca=$2 cn=$3 san=$4 eku=${5:-serverAuth}
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$RTSNAP_TMP/$name.key" -out "$RTSNAP_TMP/$name.csr" -subj "/CN=$cn" \
		2>>"$RTSNAP_TMP/openssl.log" || return 1
	printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$san" "$eku" >"$RTSNAP_TMP/$name.ext"
	openssl x509 -req -in "$RTSNAP_TMP/$name.csr" -CA "$RTSNAP_TMP/$ca.crt" \
		-CAkey "$RTSNAP_TMP/$ca.key" -set_serial "0x$(openssl rand -hex 8)" -days 2 \
		-extfile "$RTSNAP_TMP/$name.ext" -out "$RTSNAP_TMP/$name.crt" 2>>"$RTSNAP_TMP/openssl.log"
}

# bcrypt_hash PASSWORD [COST]: a $2b$ hash made by libcrypt (through Python's crypt module,
# or htpasswd when Python has none).
bcrypt_hash() {
	local cost=${2:-5}
	if python3 -W ignore -c 'import crypt' 2>/dev/null; then
		python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** int(sys.argv[2]))))' "$1" "$cost"
	elif command -v htpasswd >/dev/null; then
		htpasswd -nbBC "$cost" "" "$1" | tr -d ':\n'
	else
		return 1
	fi
}

# tls_daemon_start NS CURL-ARGS... -- RTSNAPD-ARGS...: start rtsnapd in NS and wait up to
# 10 s until GET /healthz with the curl arguments answers 200. The pid is in $TLS_PID, the
# log in $TLS_LOG.
tls_daemon_start() {
	local ns=$1 i
	local -a c=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do c+=("$1"); shift; done
	shift
	TLS_LOG="$RTSNAP_TMP/rtsnapd-tls.$((++_tls_seq)).log"
	ip netns exec "$ns" "$RTSNAPD" --listen "$RTSNAP_LISTEN" --log-level debug "$@" \
		>"$TLS_LOG" 2>&1 </dev/null &
	TLS_PID=$!
	bg_register "$TLS_PID"
	for i in $(seq 50); do
		kill -0 "$TLS_PID" 2>/dev/null || { tap_diag "rtsnapd exited early:" "$(tail -n 20 "$TLS_LOG")"; return 1; }
		ip netns exec "$ns" curl -q -sf -g --max-time 1 "${c[@]}" "${RTSNAP_URL/http:/https:}/healthz" \
			>/dev/null 2>&1 && return 0
		sleep 0.2
	done
	tap_diag "rtsnapd not healthy over TLS after 10 s:" "$(tail -n 20 "$TLS_LOG")"
	return 1
}

# tls_daemon_stop: SIGTERM $TLS_PID and wait; returns its exit status.
tls_daemon_stop() {
	local i
	kill -TERM "$TLS_PID" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$TLS_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$TLS_PID" 2>/dev/null
}
_tls_seq=0

bcrypt_hash x >/dev/null || tap_skip_all "no way to make a bcrypt hash (python3 crypt or htpasswd)"
URL=${RTSNAP_URL/http:/https:}
T=$RTSNAP_TMP
ns_new NS
ip -n "$NS" -6 route add 2001:db8:77::/64 dev lo table 77
ip -n "$NS" -6 route add unreachable 2001:db8:78::/64

pki_ca ca && pki_cert srv ca localhost 'IP:::1,DNS:localhost' &&
	pki_cert srv2 ca localhost 'IP:::1,DNS:localhost' &&
	pki_ca clientca && pki_cert client clientca scraper 'DNS:scraper' clientAuth &&
	pki_ca rogue && pki_cert rogueclient rogue scraper 'DNS:scraper' clientAuth ||
	tap_bail "openssl could not make the certificates: $(tail -n 5 "$T/openssl.log")"
HASH=$(bcrypt_hash 'correct horse')
HASH2=$(bcrypt_hash 'new horse')

# c ARGS...: curl from inside the namespace; prints the status code, body in $T/body,
# headers in $T/hdr
c() { ip netns exec "$NS" curl -q -sS -g --max-time 5 -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" 2>"$T/curl.err"; }

# ---- refused at start
start_refused() { # DESC CONFIG-TEXT EXPECTED-IN-LOG
	printf '%s\n' "$2" >"$T/bad.yml"
	ip netns exec "$NS" "$RTSNAPD" --listen "$RTSNAP_LISTEN" --web-config-file "$T/bad.yml" \
		>"$T/bad.log" 2>&1 </dev/null
	st=$?
	tap_is "$st" 2 "$1: rtsnapd exits 2 at start"
	grep -qF -- "$3" "$T/bad.log" || tap_diag "log: $(cat "$T/bad.log")"
	tap_ok "$(grep -qF -- "$3" "$T/bad.log"; echo $?)" "$1: the message says: $3"
}
start_refused "unknown key" "tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  client_auth: RequireAndVerifyClientCert" "bad.yml:4:3: unknown key 'client_auth' in tls_server_config"
start_refused "unreadable certificate" "tls_server_config:
  cert_file: $T/missing.crt
  key_file: $T/srv.key" "cannot read $T/missing.crt: No such file or directory"
start_refused "key of another certificate" "tls_server_config:
  cert_file: $T/srv.crt
  key_file: $T/srv2.key" "cannot be used together"
start_refused "not a bcrypt hash" "basic_auth_users:
  alice: secret" "the hash of 'alice' is not a bcrypt hash"
chmod 000 "$T/srv.key" 2>/dev/null
if ip netns exec "$NS" setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	cat >"$T/perm.yml" <<YML
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
YML
	chmod 644 "$T/perm.yml"
	chmod 755 "$T"
	# a copy uid 65534 can run wherever the checkout is (/root is 0700)
	public_copy BIN "$RTSNAPD" || tap_bail "cannot copy rtsnapd for uid 65534"
	ip netns exec "$NS" setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/$(basename "$RTSNAPD")" \
		--listen "$RTSNAP_LISTEN" --web-config-file "$T/perm.yml" >"$T/perm.log" 2>&1 </dev/null
	tap_is "$?" 2 "a key file the daemon's user cannot read: exits 2 at start"
	tap_ok "$(grep -qF "cannot read $T/./srv.key: Permission denied" "$T/perm.log" ||
		grep -qF "cannot read $T/srv.key: Permission denied" "$T/perm.log"; echo $?)" \
		"the message names the key file and the reason ($(tail -n 1 "$T/perm.log"))"
	chmod 700 "$T"
else
	tap_skip "setpriv cannot drop to nobody here"
	tap_skip "setpriv cannot drop to nobody here"
fi
chmod 600 "$T/srv.key"

# ---- TLS and basic auth
cat >"$T/web.yml" <<YML
# relative names are resolved against this file's directory
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  min_version: TLS13
basic_auth_users:
  alice: '$HASH'
http_server_config:
  headers:
    Strict-Transport-Security: max-age=31536000
YML
tls_daemon_start "$NS" --cacert "$T/ca.crt" -u 'alice:correct horse' -- \
	--web-config-file "$T/web.yml" --interval 0 || tap_bail "rtsnapd did not start with TLS"
tap_ok 0 "rtsnapd starts with TLS and basic auth and answers /healthz over https"

tap_is "$(c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/ipv6_route")" 200 \
	"GET /ipv6_route over https with the right password: 200 (server certificate verified against the test CA)"
kernel_proc "$NS" | proc_masked >"$T/kernel"
proc_masked "$T/body" >"$T/got"
tap_diff "$T/kernel" "$T/got" "the body over TLS equals the kernel's ipv6_route"
tap_ok "$(grep -qi '^Strict-Transport-Security: max-age=31536000' "$T/hdr"; echo $?)" \
	"http_server_config.headers are sent"
st() { c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/status" >/dev/null; jq -r "$1" "$T/body"; }
runs0=$(st .web_config.bcrypt_checks)
for i in 1 2 3 4 5; do c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/healthz" >/dev/null; done
tap_is "$(st .web_config.bcrypt_checks)" "$runs0" \
	"/status: six more requests with the same password ran no bcrypt (cached: $(st .web_config.cached_checks))"
tap_is "$(st '[.web_config.tls, .web_config.basic_auth_users] | @tsv')" "$(printf 'true\t1')" "/status shows the web configuration in force"
tap_is "$(c --cacert "$T/ca.crt" -u 'alice:wrong' "$URL/routes")" 401 "wrong password: 401"
tap_ok "$(grep -qi '^WWW-Authenticate: Basic realm="rtsnapd"' "$T/hdr"; echo $?)" "401 carries WWW-Authenticate: Basic"
tap_is "$(jq -r .error "$T/body")" "authentication required" "401 body is a JSON error"
tap_ok "$(! grep -q 2001:db8 "$T/body"; echo $?)" "401 body holds no route"
tap_is "$(c --cacert "$T/ca.crt" "$URL/metrics")" 401 "no password: 401"
tap_ok "$(grep -qi '^WWW-Authenticate: Basic' "$T/hdr"; echo $?)" "... with WWW-Authenticate"
tap_is "$(c --cacert "$T/ca.crt" -u 'mallory:correct horse' "$URL/status")" 401 "unknown user: 401"
tap_is "$(c --cacert "$T/ca.crt" -u 'alice:correct horse' -X POST "$URL/routes")" 405 \
	"POST with the right password: 405"
# every request head is checked by the gate's rules before anything else, on TLS as on a plain
# listener's first request: a method other than GET and HEAD is refused before authentication
tap_is "$(c --cacert "$T/ca.crt" -X POST "$URL/routes")" 405 "POST without a password: 405"

code=$(c "http://[::1]:9816/ipv6_route")
tap_is "$code" 400 "plain HTTP to the TLS port: 400"
tap_is "$(jq -r .error "$T/body")" "this port speaks TLS only: use https://" "... saying the port speaks TLS"
tap_ok "$(! grep -q 2001:db8 "$T/body"; echo $?)" "... and holds no route"
code=$(c --cacert "$T/ca.crt" -u 'alice:correct horse' --tls-max 1.2 "$URL/healthz")
tap_ok "$([ "$code" = 000 ]; echo $?)" "min_version TLS13: a TLS 1.2 client cannot connect ($(head -c 120 "$T/curl.err"))"
code=$(c -u 'alice:correct horse' "$URL/healthz")
tap_ok "$([ "$code" = 000 ]; echo $?)" "a client that does not trust the test CA refuses the server"

serial() { # the serial of the certificate the server presents now
	ip netns exec "$NS" openssl s_client -connect '[::1]:9816' -CAfile "$T/ca.crt" </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null
}
s_old=$(serial)
tap_is "$s_old" "$(openssl x509 -noout -serial -in "$T/srv.crt")" "the server presents srv.crt"

# ---- SIGHUP: a broken file keeps the old settings
cp "$T/web.yml" "$T/web.good"
printf 'tls_server_config:\n  cert_file: srv2.crt\n  key_file: srv2.key\n  ciphers: [x]\n' >"$T/web.yml"
kill -HUP "$TLS_PID"
wait_until 5 grep -q "keeping the previous web configuration" "$TLS_LOG"
tap_ok "$(grep -q "SIGHUP: keeping the previous web configuration: .*unknown key 'ciphers'" "$TLS_LOG"; echo $?)" \
	"SIGHUP with a broken file: logged, naming the key"
tap_is "$(c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/healthz")" 200 "... and the old settings still serve"
tap_is "$(serial)" "$s_old" "... with the old certificate"
tap_ok "$(kill -0 "$TLS_PID"; echo $?)" "... and the daemon still runs"
c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/status" >/dev/null
tap_is "$(jq -r '.faults[] | select(.kind == "web_config") | .detail' "$T/body" | grep -c "unknown key 'ciphers'")" 1 \
	"... and /status shows the web_config fault, naming the key"
c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/metrics" >/dev/null
tap_ok "$(grep -qx 'rtsnap_fault{kind="web_config"} 1' "$T/body"; echo $?)" '... and rtsnap_fault{kind="web_config"} 1'

# ---- SIGHUP: certificate rotation and a new password
sed -e 's/srv\.crt/srv2.crt/; s/srv\.key/srv2.key/' -e "s|'$HASH'|'$HASH2'|" "$T/web.good" >"$T/web.yml"
# a kept-alive connection opened before the reload: one request before, SIGHUP, one after
cat >"$T/keepalive.py" <<'PY'
import base64, http.client, os, signal, ssl, sys, time
pid, log, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
c = http.client.HTTPSConnection("::1", 9816, context=ctx, timeout=5)
auth = {"Authorization": "Basic " + base64.b64encode(b"alice:correct horse").decode()}
c.request("GET", "/healthz", headers=auth)
r = c.getresponse(); r.read(); first = r.status
os.kill(pid, signal.SIGHUP)
for _ in range(50):
    if open(log).read().count("in force for new connections"):
        break
    time.sleep(0.1)
c.request("GET", "/healthz", headers=auth)
r = c.getresponse(); r.read()
print(first, r.status)
PY
tap_is "$(ip netns exec "$NS" python3 "$T/keepalive.py" "$TLS_PID" "$TLS_LOG" "$T/ca.crt" 2>&1)" "200 200" \
	"a connection opened before SIGHUP keeps its settings: the old password still works on it"
rotated() { [ "$(serial)" = "$(openssl x509 -noout -serial -in "$T/srv2.crt")" ]; }
wait_until 5 rotated
tap_ok "$(rotated; echo $?)" "after SIGHUP new connections get the rotated certificate srv2.crt"
tap_is "$(c --cacert "$T/ca.crt" -u 'alice:correct horse' "$URL/healthz")" 401 "... and the old password is refused"
tap_is "$(c --cacert "$T/ca.crt" -u 'alice:new horse' "$URL/healthz")" 200 "... and the new one accepted"
wait_until 5 grep -q "web configuration $T/web.yml in force" "$TLS_LOG"
tap_ok "$(grep -q "SIGHUP: web configuration $T/web.yml in force" "$TLS_LOG"; echo $?)" "the reload is logged"
c --cacert "$T/ca.crt" -u 'alice:new horse' "$URL/status" >/dev/null
tap_is "$(jq -c '.faults' "$T/body")" "[]" "a good reload clears the web_config fault in /status"
c --cacert "$T/ca.crt" -u 'alice:new horse' "$URL/metrics" >/dev/null
tap_ok "$(grep -qx 'rtsnap_fault{kind="web_config"} 0' "$T/body"; echo $?)" '... and in the metric'
tls_daemon_stop
tap_is "$?" 0 "rtsnapd exits 0 on SIGTERM after two reloads"

# ---- client certificates
cat >"$T/mtls.yml" <<YML
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  client_ca_file: clientca.crt
  client_auth_type: RequireAndVerifyClientCert
YML
tls_daemon_start "$NS" --cacert "$T/ca.crt" --cert "$T/client.crt" --key "$T/client.key" -- \
	--web-config-file "$T/mtls.yml" --interval 0 || tap_bail "rtsnapd did not start with client_ca_file"
tap_ok 0 "RequireAndVerifyClientCert: a client with a certificate from client_ca_file gets /healthz"
tap_is "$(c --cacert "$T/ca.crt" --cert "$T/client.crt" --key "$T/client.key" "$URL/ipv6_route")" 200 \
	"... and /ipv6_route: 200"
tap_is "$(c --cacert "$T/ca.crt" "$URL/ipv6_route")" 403 "no client certificate: 403"
tap_is "$(jq -r .error "$T/body")" "a client certificate is required" "... saying a client certificate is required"
tap_ok "$(! grep -q 2001:db8 "$T/body"; echo $?)" "... with no route in the answer"
tap_is "$(c --cacert "$T/ca.crt" --cert "$T/rogueclient.crt" --key "$T/rogueclient.key" "$URL/ipv6_route")" 403 \
	"a client certificate from another CA: 403"
tap_ok "$(! grep -q 2001:db8 "$T/body"; echo $?)" "... with no route in the answer"
tls_daemon_stop

# ---- a real Prometheus scrapes over TLS with basic auth
if ! command -v prometheus >/dev/null; then
	tap_skip "prometheus not installed"
	tap_done
fi
tls_daemon_start "$NS" --cacert "$T/ca.crt" -u 'alice:correct horse' -- \
	--web-config-file "$T/web.good" --interval 0 || tap_bail "rtsnapd did not start with TLS"
PROM=127.0.0.1:9090
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rtsnap
    scheme: https
    tls_config:
      ca_file: $T/ca.crt
    basic_auth:
      username: alice
      password: correct horse
    static_configs:
      - targets: ['[::1]:9816']
  - job_name: rtsnap_wrong_password
    scheme: https
    tls_config:
      ca_file: $T/ca.crt
    basic_auth:
      username: alice
      password: not it
    static_configs:
      - targets: ['[::1]:9816']
YML
ip netns exec "$NS" prometheus --config.file="$T/prometheus.yml" \
	--storage.tsdb.path="$T/prometheus-data" --web.listen-address="$PROM" \
	--log.level=warn >"$T/prometheus.log" 2>&1 </dev/null &
bg_register $!
promq() { ip netns exec "$NS" curl -q -sS --max-time 5 "http://$PROM/api/v1/query" --data-urlencode "query=$1"; }
up_is() { [ "$(promq "up{job=\"$1\"}" | jq -r '.data.result[0].value[1]')" = "$2" ]; }
wait_until 30 up_is rtsnap 1
tap_ok "$(up_is rtsnap 1; echo $?)" "Prometheus scrapes rtsnapd over TLS with basic auth: up == 1"
[ "$(up_is rtsnap 1; echo $?)" = 0 ] || tap_diag "$(tail -n 20 "$T/prometheus.log")"
wait_until 10 up_is rtsnap_wrong_password 0
tap_ok "$(up_is rtsnap_wrong_password 0; echo $?)" "a job with a wrong password: up == 0"
err=$(ip netns exec "$NS" curl -q -sS --max-time 5 "http://$PROM/api/v1/targets" |
	jq -r '.data.activeTargets[] | select(.labels.job == "rtsnap_wrong_password") | .lastError')
tap_ok "$(grep -q 401 <<<"$err"; echo $?)" "... its scrape error is the 401 ($err)"
n=$(promq 'sum(rtsnap_routes{job="rtsnap"})' | jq -r '.data.result[0].value[1]')
tap_is "$n" "$(($(kernel_json "$NS" | jq length) + $(ip -n "$NS" -j -4 route show table all | jq length)))" \
	"sum(rtsnap_routes) scraped over TLS = routes the kernel lists (ip -6 and ip -4)"
tls_daemon_stop
tap_done
