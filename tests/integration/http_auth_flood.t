#!/bin/bash
# Workers never wait for a password check: rtsnapd over TLS with basic auth at bcrypt cost 12;
# 50 clients on another host (a second namespace over a veth pair) send wrong passwords (25 for
# a real user, 25 for an unknown one; a fresh random password each time, so no cache can answer
# them) for 8 s, with a SIGHUP in the middle. Meanwhile a scraper on a clean address reads
# /metrics with the right password every 0.4 s. Compared with one bcrypt measured in the same run
# (a first scrape with a password never checked before, on the idle daemon): every scrape with
# the known password is answered 200 in less than 3 such hashes (before, they waited for the
# flood's hashes: 7.5-12.3 s at 0.27 s each), a password never seen before from the clean
# address in less than 4; the flooding address is refused before it costs more hashes (429)
# and its hashes stay few. No time is asserted on its own.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq openssl python3
require_rtsnapd

T=$RTSNAP_TMP
python3 -W ignore -c 'import crypt' 2>/dev/null || tap_skip_all "python3 has no crypt module"
hash() {
	python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** 12)))' "$1"
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout "$T/ca.key" \
	-out "$T/ca.crt" -subj "/CN=rtsnap test ca" 2>"$T/openssl.log" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/srv.key" \
		-out "$T/srv.csr" -subj "/CN=fd00:21::1" 2>>"$T/openssl.log" &&
	printf 'subjectAltName=IP:fd00:21::1\nextendedKeyUsage=serverAuth\n' >"$T/srv.ext" &&
	openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -set_serial 0x43 \
		-days 2 -extfile "$T/srv.ext" -out "$T/srv.crt" 2>>"$T/openssl.log" ||
	tap_skip_all "openssl cannot make a test certificate: $(tail -n 3 "$T/openssl.log")"
cat >"$T/web.yml" <<EOF
tls_server_config:
  cert_file: $T/srv.crt
  key_file: $T/srv.key
basic_auth_users:
  alice: '$(hash 'right horse')'
  bob: '$(hash 'battery staple')'
  carol: '$(hash 'correct carol')'
EOF

ns_new SRV
ns_new CLI
veth_pair "$SRV" vs "$CLI" vc || tap_bail "cannot create a veth pair"
ip -n "$SRV" addr add fd00:21::1/64 dev vs nodad
ip -n "$CLI" addr add fd00:21::2/64 dev vc nodad
URL='https://[fd00:21::1]:9816'
ip netns exec "$SRV" "$RTSNAPD" --listen '[fd00:21::1]:9816' --web-config-file "$T/web.yml" \
	--log-level debug >"$T/rtsnapd.log" 2>&1 </dev/null &
PID=$!
bg_register $PID
wait_until 10 ip netns exec "$SRV" curl -sg --cacert "$T/ca.crt" -o /dev/null "$URL/healthz" ||
	tap_bail "rtsnapd did not start: $(tail -n 5 "$T/rtsnapd.log")"

# scrape USER:PASSWORD: "CODE SECONDS" of one /metrics read from the server's own address
scrape() {
	ip netns exec "$SRV" curl -sg --max-time 30 --cacert "$T/ca.crt" -u "$1" -o /dev/null \
		-w '%{http_code} %{time_total}\n' "$URL/metrics"
}
auth_metric() {
	ip netns exec "$SRV" curl -sg --cacert "$T/ca.crt" -u 'alice:right horse' "$URL/metrics" |
		awk -v m="$1" '$1 == m { print $2 }'
}

# one bcrypt: bob's first scrape on the idle daemon, less the known password's scrape
set -- $(scrape 'bob:battery staple')
tap_is "$1" 200 "bob's first scrape on the idle daemon: 200" || tap_done
cold=$2
scrape 'alice:right horse' >/dev/null
set -- $(scrape 'alice:right horse')
warm=$2
hash_s=$(awk -v c="$cold" -v w="$warm" 'BEGIN { printf "%.3f", (c - w > 0.05 ? c - w : 0.05) }')
tap_diag "idle daemon: a scrape that hashes takes $cold s, a cached one $warm s: one bcrypt ~ $hash_s s"
runs0=$(auth_metric rtsnap_auth_bcrypt_total)

# the flood, then the probes while it runs; a SIGHUP in the middle
ip netns exec "$CLI" python3 "$TOP/tests/lib/authflood.py" fd00:21::1 9816 "$T/ca.crt" 8 25 alice \
	>"$T/flood1" 2>&1 &
f1=$!
ip netns exec "$CLI" python3 "$TOP/tests/lib/authflood.py" fd00:21::1 9816 "$T/ca.crt" 8 25 nobody \
	>"$T/flood2" 2>&1 &
f2=$!
bg_register $f1
bg_register $f2
sleep 1
: >"$T/probes"
for i in $(seq 16); do
	[ "$i" = 8 ] && kill -HUP $PID
	scrape 'alice:right horse' >>"$T/probes"
	sleep 0.4
done
set -- $(scrape 'carol:correct carol') # never checked before: one hash, from the clean address
carol_code=$1 carol_s=$2
wait $f1 $f2
runs1=$(auth_metric rtsnap_auth_bcrypt_total)
limited=$(auth_metric 'rtsnap_auth_refused_total{reason="limited"}')
tap_diag "probes during the flood (code seconds):" "$(tr '\n' ' ' <"$T/probes")"
tap_diag "flood: $(cat "$T/flood1") $(cat "$T/flood2")"
tap_diag "bcrypt during the flood: $((runs1 - runs0)); refused as limited: $limited"

tap_is "$(awk '$1 != 200' "$T/probes" | wc -l)" 0 "every scrape with the known password during the flood (and the SIGHUP) is answered 200"
worst=$(sort -k2 -n "$T/probes" | tail -n 1 | awk '{ print $2 }')
tap_ok "$(awk -v a="$worst" -v h="$hash_s" 'BEGIN { exit !(a < 3 * h) }' && echo 0 || echo 1)" \
	"the slowest of them took $worst s: less than 3 bcrypts ($hash_s s each)"
tap_ok "$([ "$carol_code" = 200 ] && awk -v a="$carol_s" -v h="$hash_s" 'BEGIN { exit !(a < 4 * h + 0.1) }' && echo 0 || echo 1)" \
	"a password never checked before, from a clean address during the flood: $carol_code in $carol_s s, less than 4 bcrypts"
tap_ok "$([ "${limited:-0}" -gt 0 ] && echo 0 || echo 1)" "the flooding address is refused (429) before it costs a hash ($limited times)"
tap_ok "$([ $((runs1 - runs0)) -le 16 ] && echo 0 || echo 1)" \
	"the flood cost $((runs1 - runs0)) bcrypts in 8 s (50 clients; unlimited, one thread would hash about 8 / $hash_s)"
tap_ok "$(jq -e '.statuses["429"] > 0 and .errors == 0' "$T/flood1" >/dev/null && echo 0 || echo 1)" \
	"the flooding clients are answered (401, 429), not left hanging or cut"
kill -TERM $PID
wait $PID
tap_is "$?" 0 "rtsnapd exits 0"
tap_done
