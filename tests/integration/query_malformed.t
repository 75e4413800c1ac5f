#!/bin/bash
# query_malformed.t - malformed queries on /routes, /routes/lookup and /expiring: bad
# prefixes and addresses (IPv6, and IPv4 on /routes?family=inet and /routes/lookup), bad
# numbers, unknown, repeated and too many parameters, overlong values, percent-encoding
# tricks (%00 in keys and values, encoded separators, double encoding, invalid escapes).
# Each is answered 400 with a JSON {"error": ...} that names the parameter, and none
# disturbs the daemon: afterwards it is healthy and still serves the kernel's table. Run
# against the normal build and, when it is built, the ASan+UBSan one (whose log must stay
# free of reports).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl jq
require_rtsnapd

# CASES: expected status, the word the error must contain, path (already URL-encoded).
long() { head -c "$1" /dev/zero | tr '\0' "$2"; }
CASES=(
	"400 prefix /routes?prefix=2001:db8::/129"
	"400 prefix /routes?prefix=2001:db8::/-1"
	"400 prefix /routes?prefix=2001:db8::/"
	"400 prefix /routes?prefix=/64"
	"400 prefix /routes?prefix="
	"400 prefix /routes?prefix"
	"400 prefix /routes?prefix=10.0.0.0/8"
	"400 prefix /routes?prefix=2001:db8:::/48"
	"400 prefix /routes?prefix=2001:db8::/48/1"
	"400 prefix /routes?prefix=fe80::1%25eth0/64"
	"400 prefix /routes?prefix=2001:db8::%2F+32"
	"400 prefix /routes?prefix=2001:db8::%2520/32"
	"400 prefix /routes?prefix=%5B2001:db8::%5D/32"
	"400 covers /routes?covers=nothing"
	"400 covers /routes?covers=2001:db8::1/200"
	"400 gateway /routes?gateway=2001:db8::/64"
	"400 gateway /routes?gateway=1.2.3.4"
	"400 metric /routes?metric=-1"
	"400 metric /routes?metric=%2B1"
	"400 metric /routes?metric=1e3"
	"400 metric /routes?metric=0x10"
	"400 metric /routes?metric=4294967296"
	"400 metric /routes?metric=99999999999999999999999"
	"400 metric /routes?metric=1%20"
	"400 limit /routes?limit=0"
	"400 limit /routes?limit=-5"
	"400 limit /routes?limit=ten"
	"400 table /routes?table=nosuchtable"
	"400 table /routes?table=0"
	"400 table /routes?table=-1"
	"400 table /routes?table=4294967296"
	"400 protocol /routes?protocol=nosuch"
	"400 protocol /routes?protocol=256"
	"400 type /routes?type=nosuch"
	"400 dev /routes?dev=a/b"
	"400 dev /routes?dev=$(long 16 x)"
	"400 dev /routes?dev="
	"400 expiring /routes?expiring=yes"
	"400 after /routes?after=0123"
	"400 after /routes?after=$(long 132 g)"
	"400 repeated /routes?prefix=2001:db8::/32&prefix=2001:db8::/32"
	"400 repeated /routes?table=main&dev=lo&table=main"
	"400 unknown /routes?Prefix=2001:db8::/32"
	"400 unknown /routes?prefix%3D2001:db8::/32"
	"400 unknown /routes?nosuch=1"
	"400 unknown /routes?%C3%A9=1"
	"400 unknown /routes?=1"
	"400 NUL /routes?prefix=2001:db8::%00/32"
	"400 NUL /routes?prefix=2001:db8::/32%00junk"
	"400 NUL /routes?prefix%00junk=2001:db8::/32"
	"400 NUL /routes?metric=1%00"
	"400 long /routes?metric=$(long 300 1)"
	"400 long /routes?prefix=$(long 8000 a)"
	"400 too /routes?$(for i in $(seq 17); do printf 'a%d=1&' "$i"; done)"
	"400 addr /routes/lookup"
	"400 addr /routes/lookup?addr="
	"400 addr /routes/lookup?addr=2001:db8::/64"
	"400 addr /routes/lookup?addr=2001:db8::1%00"
	"400 from /routes/lookup?addr=2001:db8::1&from=x"
	"400 table /routes/lookup?addr=2001:db8::1&table=all"
	"400 repeated /routes/lookup?addr=2001:db8::1&addr=2001:db8::2"
	"400 unknown /routes/lookup?addr=2001:db8::1&prefix=::/0"
	"400 prefix /routes?family=inet&prefix=10.0.0.0/33"
	"400 prefix /routes?family=inet&prefix=10.0.0/8"
	"400 prefix /routes?family=inet&prefix=2001:db8::/32"
	"400 prefix /routes?family=inet&prefix=10.0.0.0/8/1"
	"400 prefix /routes?family=inet&prefix=10.0.0.0/"
	"400 prefix /routes?family=all&prefix=10.0.0.0/33"
	"400 covers /routes?family=all&covers=x"
	"400 gateway /routes?family=all&gateway=10.0.0.0/8"
	"400 after /routes?family=all&after=x"
	"400 after /routes?family=all&after=4"
	"400 limit /routes?family=all&limit=0"
	"400 prefix /events?family=inet&prefix=2001:db8::/32"
	"400 gateway /changes?family=inet&since=1&gateway=10.0.0.256"
	"400 covers /routes?family=inet&covers=10.1.2.3.4"
	"400 covers /routes?family=inet&covers=010.1.2.3"
	"400 covers /routes?family=inet&covers=10.1.2.3%00"
	"400 gateway /routes?family=inet&gateway=10.0.0.256"
	"400 gateway /routes?family=inet&gateway=10.0.0.0/8"
	"400 after /routes?family=inet&after=x"
	"400 addr /routes/lookup?addr=10.0.0.1/32"
	"400 addr /routes/lookup?addr=10.0.0"
	"400 addr /routes/lookup?addr=+10.0.0.1"
	"400 addr /routes/lookup?addr=10.0.0.1%00"
	"400 from /routes/lookup?addr=10.0.0.1&from=::1"
	"400 unknown /expiring?limit=1"
	"400 unknown /expiring?x"
)
# well-formed but unusual: must work (200) and equal the plain form
EQUIV=(
	"/routes?prefix=2001%3Adb8%3A%3A%2F32 /routes?prefix=2001:db8::/32"
	"/routes?prefix=2001:DB8::/32 /routes?prefix=2001:db8::/32"
	"/routes?prefix=2001:0db8:0000::/32 /routes?prefix=2001:db8::/32"
	"/routes?prefix=2001:db8::1/32 /routes?prefix=2001:db8::/32"
	"/routes?covers=2001:db8:10::1 /routes?covers=2001:db8:10::1/128"
	"/routes?prefix=default /routes?prefix=::/0"
	"/routes?table=main&prefix=::/0 /routes?table=254"
	"/routes?table=all /routes"
	"/routes?table=0xfe /routes?table=main"
	"/routes?%74able=main /routes?table=main"
	"/routes?family=inet&prefix=default /routes?family=inet&prefix=0.0.0.0/0"
	"/routes?family=inet&prefix=127.1.2.3/8 /routes?family=inet&prefix=127.0.0.0/8"
	"/routes?family=inet&covers=127.0.0.1 /routes?family=inet&covers=127.0.0.1/32"
	"/routes/lookup?addr=127.0.0.1&table=local /routes/lookup?addr=127.0.0.1&table=255"
)

run_cases() {
	local ns=$1 label=$2 c st word path body bad=0 n=0
	for c in "${CASES[@]}"; do
		read -r st word path <<<"$c"
		n=$((n + 1))
		body=$(ip netns exec "$ns" curl -sS -g -o - -w '\n%{http_code}' "$RTSNAP_URL$path" 2>&1)
		if [ "${body##*$'\n'}" != "$st" ] ||
			! printf '%s' "${body%$'\n'*}" | jq -e --arg w "$word" \
				'type == "object" and (.error | type == "string") and (.error | ascii_downcase | contains($w | ascii_downcase))' \
				>/dev/null 2>&1; then
			bad=$((bad + 1))
			tap_diag "${path:0:120}: want $st mentioning '$word', got: ${body:0:200}"
		fi
	done
	tap_is "$bad" 0 "$label: $n malformed queries answered $st with a JSON error naming the parameter"
	bad=0 n=0
	for c in "${EQUIV[@]}"; do
		read -r a b <<<"$c"
		n=$((n + 1))
		if [ "$(http_get "$ns" "$a" | sed -E 's/"expires":-?[0-9]+//g')" != \
			"$(http_get "$ns" "$b" | sed -E 's/"expires":-?[0-9]+//g')" ]; then
			bad=$((bad + 1))
			tap_diag "$a differs from $b"
		fi
	done
	tap_is "$bad" 0 "$label: $n unusual but well-formed spellings answer like the plain ones"
	# a request line larger than the connection's memory: refused (400 or 414), no crash
	st=$(ip netns exec "$ns" curl -s -g -o /dev/null -w '%{http_code}' \
		"$RTSNAP_URL/routes?prefix=$(long 100000 a)")
	case $st in 400 | 414 | 431) tap_ok 0 "$label: a 100 kB query is refused ($st)" ;;
	*) tap_ok 1 "$label: a 100 kB query is refused (got $st)" ;; esac
	tap_is "$(ip netns exec "$ns" curl -s -g -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")" 200 \
		"$label: daemon healthy afterwards"
	json_equal "$ns" "$label: /routes still equals ip -j -6 route show table all"
}

json_equal() {
	local ns=$1 desc=$2 i
	for i in $(seq 10); do
		kernel_json "$ns" | sed -E 's/"expires":-?[0-9]+//g' >"$RTSNAP_TMP/want"
		http_get "$ns" /routes | sed -E 's/"expires":-?[0-9]+//g' >"$RTSNAP_TMP/got"
		cmp -s "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" && break
		sleep 0.3
	done
	tap_diff "$RTSNAP_TMP/want" "$RTSNAP_TMP/got" "$desc"
}

ns_new NS
rk_expires "$NS"
tap_ok $? "routes (some expiring) in $NS"
# the "expires 0" route is overdue at once; a dump within its first USER_HZ tick sees
# rta_expires 0, i.e. no lifetime at all (netlink cannot tell): start the daemon later
sleep 1.2

daemon_start "$NS" --debounce-ms 20 --family all
tap_ok $? "rtsnapd starts" || tap_done
run_cases "$NS" rtsnapd
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

ASAN=$TOP/build/asan/rtsnapd
if [ -x "$ASAN" ]; then
	RTSNAPD=$ASAN daemon_start "$NS" --debounce-ms 20 --family all
	tap_ok $? "ASan+UBSan rtsnapd starts" || tap_done
	run_cases "$NS" "ASan+UBSan rtsnapd"
	daemon_stop "$NS" >/dev/null
	tap_ok $? "ASan+UBSan rtsnapd exits 0 on SIGTERM"
	tap_cmd "no sanitizer report in its log" sh -c "! grep -E 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' '$(daemon_log "$NS")'"
else
	tap_skip "build/asan/rtsnapd not built (make asan)"
fi
tap_done
