#!/bin/bash
# web_page.t - the web page at "/", loaded by headless Chromium from rtsnapd in a namespace
# with known routes, compared with what the kernel and iproute2 say in that namespace:
# table summary and protocol chart counts, a filter typed into the route browser, paging
# with the X-Next-After cursor, a route's full JSON, the lookup box, the expiring list and
# its countdown, routes added after the page loaded (shown without a reload, from the change
# stream /events, which the page follows with the route browser's filter), the family
# switch (IPv4 view = ip -4, its refresh on IPv4 changes only; none on an IPv6-only daemon), the
# stale banner, hostile table/device/protocol names shown as text, and without JavaScript the
# links to the raw views. Over plain HTTP: content types, CSP, no inline script or style,
# gzip bodies equal to the plain ones, ETag/304. Screenshots of each view: build/web-*.png.
#
# Chromium is driven over the DevTools protocol on a pipe (tests/lib/cdp.sh): no port.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/cdp.sh"
require_root
require_cmd ip curl jq gzip
require_rtsnapd
command -v "$CHROMIUM" >/dev/null 2>&1 || tap_skip_all "chromium not installed (make deps installs it)"

SHOTS=${WEB_SHOTS:-$TOP/build}
HOSTILE_TABLE='<img/src=x/onerror=alert(1)>'
HOSTILE_DEV='<b>d&amp;'
HOSTILE_PROTO='<i>p&amp;'

ns_new NS
ETCNS=/etc/netns/$NS
trap '_st=$?; cdp_stop >/dev/null 2>&1; rm -rf "$ETCNS"; (exit $_st); _cleanup' EXIT
mkdir -p "$ETCNS" && cp -a /etc/iproute2 "$ETCNS/iproute2" || tap_bail "cannot create $ETCNS/iproute2"
mkdir -p "$ETCNS/iproute2/rt_tables.d" "$ETCNS/iproute2/rt_protos.d"
printf '100\tblue\n300\t%s\n' "$HOSTILE_TABLE" >"$ETCNS/iproute2/rt_tables.d/web.conf"
printf '250\t%s\n' "$HOSTILE_PROTO" >"$ETCNS/iproute2/rt_protos.d/web.conf"

ns_exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1
ip -n "$NS" link add name "$HOSTILE_DEV" type veth peer name vh1 &&
	ip -n "$NS" link set dev "$HOSTILE_DEV" up && ip -n "$NS" link set dev vh1 up
ip -n "$NS" addr add 2001:db8:1::1/64 dev v0 nodad
ip -n "$NS" addr add 2001:db8:2::1/64 dev v1 nodad
# IPv4 beside it (the daemon follows both: --family all), for the lookup box
ip -n "$NS" addr add 10.1.0.1/24 dev v0
ip -n "$NS" route add 10.50.0.0/16 via 10.1.0.2 proto static
ip -n "$NS" route add 10.51.0.0/16 dev v1 metric 7
{
	echo "route add 2001:db8:10::/48 via 2001:db8:1::2"
	echo "route add 2001:db8:11::/64 dev v1 metric 7"
	echo "route add 2001:db8:20::/48 nexthop via 2001:db8:1::2 dev v0 nexthop via 2001:db8:2::2 dev v1"
	echo "route add default via 2001:db8:1::9"
	echo "route add 2001:db8:30::/64 dev v1 expires 600"
	echo "route add 2001:db8:31::/64 via 2001:db8:1::5 expires 300"
	echo "route add 2001:db8:32::/64 dev v0 table 100 expires 900"
	echo "route add 2001:db8:100::/64 via 2001:db8:2::2 table 100 proto static"
	echo "route add 2001:db8:100:1::/64 dev v0 table 100 metric 99"
	echo "route add unreachable 2001:db8:100:2::/64 table 100"
	echo "route add 2001:db8:300::/64 dev $HOSTILE_DEV table 300 proto 250"
	echo "route add default via 2001:db8:2::3 table 300"
	echo "rule add to 2001:db8:100::/48 table 100 pref 100" # so that ip -6 route get looks in 100
	for i in $(seq 0 119); do printf 'route add 2001:db8:1000:%x::/64 via 2001:db8:1::2 table 1000\n' "$i"; done
} >"$RTSNAP_TMP/batch"
ip -6 -n "$NS" -batch "$RTSNAP_TMP/batch"
tap_ok $? "routes in main, blue (100), a hostile-named table (300) and 1000; a hostile device and protocol"
tap_is "$(kernel_json "$NS" | jq -r --arg t "$HOSTILE_TABLE" '[.[] | select(.table == $t)] | length')" 2 \
	"kernel: ip names table 300 '$HOSTILE_TABLE' (per-namespace rt_tables.d)"

daemon_start "$NS" --debounce-ms 20 --interval 30 --family all
tap_ok $? "rtsnapd starts" || tap_done

# tap_diff for lists that must not be empty: an empty expectation is a broken set-up
tap_diff_ne() {
	if [ ! -s "$1" ]; then
		_tap_result 1 "$3"
		tap_diag "the expected list is empty"
		return 1
	fi
	tap_diff "$@"
}

# ---------------------------------------------------------------- plain HTTP

hdr() { # PATH HEADER [CURL-ARG...]: value of HEADER in the GET response
	local p=$1 h=$2
	shift 2
	ip netns exec "$NS" curl -sg -D - -o /dev/null "$@" "$RTSNAP_URL$p" | tr -d '\r' |
		awk -v h="$h" -F': ' 'tolower($1) == tolower(h) { sub(/^[^:]*: /, ""); print }'
}
code() { ip netns exec "$NS" curl -sg -o "$RTSNAP_TMP/body" -w '%{http_code}' "$@"; }

http_get "$NS" / >"$RTSNAP_TMP/index.html"
tap_ok $? "GET / answers 200"
tap_is "$(hdr / Content-Type)" "text/html; charset=utf-8" "/ is text/html"
csp=$(hdr / Content-Security-Policy)
tap_ok "$([[ $csp == "default-src 'self';"* && $csp != *unsafe* && $csp == *"script-src 'self'"* ]]; echo $?)" \
	"/ carries a strict Content-Security-Policy ($csp)"
tap_ok "$(grep -Eiq '<script' "$RTSNAP_TMP/index.html" && ! grep -Eio '<script[^>]*>' "$RTSNAP_TMP/index.html" | grep -vq 'src="/web/'; echo $?)" \
	"every <script> of the page has a src under /web/"
tap_ok "$(! grep -Eiq '<script[^>]*>[^<]+</script>|<style|[[:space:]]style=|[[:space:]]on[a-z]+=|javascript:' "$RTSNAP_TMP/index.html"; echo $?)" \
	"the page has no inline script, style, event handler or javascript: URL"
for a in / /web/app.js /web/style.css /web/icon.svg; do
	plain=$RTSNAP_TMP/plain gz=$RTSNAP_TMP/gz.gz
	http_get "$NS" "$a" >"$plain"
	http_get "$NS" "$a" -H 'Accept-Encoding: gzip' >"$gz"
	tap_ok "$([ "$(hdr "$a" Content-Encoding -H 'Accept-Encoding: gzip, deflate')" = gzip ] &&
		gzip -t "$gz" && gzip -dc "$gz" | cmp -s - "$plain"; echo $?)" "$a: gzip on request, inflates to the plain body"
done
tap_is "$(hdr /web/app.js Content-Type)" "text/javascript; charset=utf-8" "app.js is text/javascript"
tap_is "$(hdr /web/style.css Content-Type)" "text/css; charset=utf-8" "style.css is text/css"
tap_is "$(hdr /web/app.js Content-Encoding -H 'Accept-Encoding: gzip;q=0')" "" "gzip;q=0 gets the plain body"
etag=$(hdr /web/app.js ETag)
tap_is "$(code -H "If-None-Match: $etag" "$RTSNAP_URL/web/app.js")" 304 "app.js: If-None-Match with its ETag ($etag) is 304"
tap_is "$(code "$RTSNAP_URL/web/nope.js")" 404 "an unknown file under /web/ is 404"
tap_is "$(code "$RTSNAP_URL/?x=1")" 400 "a query parameter on / is 400"
tap_is "$(http_get "$NS" /web/about.json | jq -r .netns)" "$NS" "/web/about.json names the namespace"
setag=$(hdr /status ETag)
tap_is "$(code -H "If-None-Match: $setag" "$RTSNAP_URL/status")" 304 "/status: If-None-Match with the generation is 304"
tap_is "$setag" "$(http_get "$NS" /status | jq -r '"\"\(.generation).\(.inet.generation)\""')" \
	"/status with --family all: the ETag names both generations, IPv6.IPv4"
g4=$(http_get "$NS" /status | jq .inet.generation)
ip -n "$NS" -4 route add 10.60.0.0/16 via 10.1.0.2
wait_until 5 sh -c "[ \$(ip netns exec $NS curl -sg '$RTSNAP_URL/status' | jq .inet.generation) -gt $g4 ]"
tap_is "$(code -H "If-None-Match: $setag" "$RTSNAP_URL/status")" 200 "/status: after an IPv4 change the old ETag ($setag) is a 200"

# ---------------------------------------------------------------- without JavaScript

# shellcheck disable=SC2046
ip netns exec "$NS" timeout 60 "$CHROMIUM" $(chromium_flags) --user-data-dir="$(mktemp -d "$RTSNAP_TMP/dump.XXXXXX")" \
	--virtual-time-budget=3000 --dump-dom "$RTSNAP_URL/" >"$RTSNAP_TMP/dom.html" 2>"$RTSNAP_TMP/dom.err"
tap_ok "$(grep -q '<tr data-table="blue">' "$RTSNAP_TMP/dom.html"; echo $?)" "--dump-dom after scripts ran: the table summary is filled in"

# ---------------------------------------------------------------- in the browser

cdp_start "$NS"
tap_ok $? "chromium starts with DevTools on a pipe" || { tap_diag "$(tail -n 20 "$_cdp_dir/log")"; tap_done; }
# without JavaScript (the DOM is read through the DevTools DOM domain, which needs no script)
cdp_call Emulation.setScriptExecutionDisabled '{"value": true}' >/dev/null
cdp_call Page.navigate "$(jq -cn --arg u "$RTSNAP_URL/" '{url: $u}')" >/dev/null
for i in $(seq 50); do
	root=$(cdp_call DOM.getDocument '{"depth": 0}' | jq '.result.root.nodeId')
	cdp_call DOM.getOuterHTML "{\"nodeId\": ${root:-0}}" | jq -r '.result.outerHTML // empty' >"$RTSNAP_TMP/nojs.html"
	grep -q '</footer>' "$RTSNAP_TMP/nojs.html" && break
	sleep 0.2
done
tap_ok "$(for l in /ipv6_route /routes /metrics; do grep -q "href=\"$l\"" "$RTSNAP_TMP/nojs.html" || exit 1; done; echo 0)" \
	"without JavaScript the page links to /ipv6_route, /routes and /metrics"
tap_ok "$(grep -q '<form action="/routes/lookup"' "$RTSNAP_TMP/nojs.html" && grep -q '<main id="main" hidden' "$RTSNAP_TMP/nojs.html"; echo $?)" \
	"without JavaScript: a plain lookup form, and the live views stay hidden"
tap_is "$(cdp_call DOM.getBoxModel "$(cdp_call DOM.querySelector "{\"nodeId\": ${root:-0}, \"selector\": \"#facts\"}" |
	jq -c '{nodeId: .result.nodeId}')" | jq -r '.error.message // "has a box"')" "Could not compute box model." \
	"without JavaScript the empty live header is not displayed"
cdp_screenshot "$SHOTS/web-nojs.png"
cdp_call Emulation.setScriptExecutionDisabled '{"value": false}' >/dev/null

cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_ok $? "the page loads and its scripts finish the first render" || tap_done
tap_is "$(cdp_eval 'document.documentElement.dataset.cspViolations')" '"0"' "no Content-Security-Policy violation while rendering"
tap_is "$(cdp_eval 'document.getElementById("f-netns").textContent' | jq -r .)" "$NS" "header: namespace"
tap_is "$(cdp_eval 'document.getElementById("f-gen").textContent' | jq -r .)" "$(http_get "$NS" /status | jq .generation)" \
	"header: generation as /status says"
tap_is "$(cdp_eval 'document.getElementById("banner").hidden')" true "no stale or error banner while fresh"
cdp_screenshot "$SHOTS/web-page.png"
cdp_screenshot "$SHOTS/web-tables.png" '#tables'

# table summary: routes, multipath and expiring routes per table, as the kernel lists them
dom_rows() { # SELECTOR: each row's cells joined by |, multipath cells' lines by ,
	cdp_eval "[...document.querySelectorAll($(jq -cn --arg s "$1" '$s'))].map((tr) => [...tr.cells].map((c) => {
		const nh = [...c.querySelectorAll('.nh')]; return nh.length ? nh.map((s) => s.textContent).join(',') : c.textContent;
	}).join('|'))" | jq -r '.[]'
}
kj() { kernel_json "$NS" | jq -r "$@"; }
kj 'group_by(.table // "main") | map([(.[0].table // "main"), length,
	(map(select((.nexthops // []) | length > 1)) | length), (map(select(.expires)) | length)] | join("|")) | .[]' |
	sort >"$RTSNAP_TMP/k.tables"
dom_rows '#table-summary tbody tr' | awk -F'|' '$3 != "0" { print $2 "|" $3 "|" $4 "|" $5 }' | sort >"$RTSNAP_TMP/d.tables"
tap_diff_ne "$RTSNAP_TMP/k.tables" "$RTSNAP_TMP/d.tables" "table summary (name|routes|multipath|expiring) equals the kernel's counts"
kj 'group_by(.protocol // "boot") | map("\(.[0].protocol // "boot"): \(length)") | .[]' | sort >"$RTSNAP_TMP/k.protos"
cdp_eval '[...document.querySelectorAll("#chart-protocols title")].map((t) => t.textContent)' | jq -r '.[]' | sort >"$RTSNAP_TMP/d.protos"
tap_diff_ne "$RTSNAP_TMP/k.protos" "$RTSNAP_TMP/d.protos" "protocol chart: routes per protocol equal the kernel's"
tap_is "$(cdp_eval '[...document.querySelectorAll("#chart-tables title")].length')" \
	"$(http_get "$NS" /status | jq '.tables | length')" "table chart: one bar per table"

# hostile names are text
tap_is "$(cdp_eval '[...document.querySelectorAll("#table-summary tbody th")].some((th) => th.textContent === '"$(jq -cn --arg t "$HOSTILE_TABLE" '$t')"')')" true \
	"the table named $HOSTILE_TABLE is shown as that text"
tap_is "$(cdp_eval 'document.querySelectorAll("img, b, i, script:not([src])").length')" 0 \
	"no element was made from a kernel or iproute2 string (no img, b, i, inline script)"

# route browser: a filter typed into the form, Enter
row_fmt='.[] | [(.type // ""), .dst, (.from // ""), ((.nexthops // [.]) | map(.gateway // "") | join(",")),
	((.nexthops // [.]) | map(.dev // "") | join(",")), (.table // "main"), (.protocol // "boot"), (.metric | tostring)] | join("|")'
dom_routes() { dom_rows '#route-table tbody tr' | awk -F'|' '{ print $1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7 "|" $9 }'; }
page_is() { cdp_wait "document.getElementById('routes-state').textContent.startsWith($(jq -cn --arg s "$1" '$s'))" 15; }
cdp_type '#filter input[name=table]' blue
cdp_type '#filter input[name=prefix]' 2001:db8:100::/48
cdp_key Enter
page_is "Page 1: 3 routes"
tap_ok $? "typed filter table=blue prefix=2001:db8:100::/48: the browser shows a page"
ip netns exec "$NS" ip -j -6 route show table 100 root 2001:db8:100::/48 | jq -r "$row_fmt" |
	sed 's/|main|/|blue|/' >"$RTSNAP_TMP/k.f1"
dom_routes >"$RTSNAP_TMP/d.f1"
tap_diff_ne "$RTSNAP_TMP/k.f1" "$RTSNAP_TMP/d.f1" "its rows equal ip -6 route show table 100 root 2001:db8:100::/48"
cdp_screenshot "$SHOTS/web-routes.png" '#routes'

cdp_eval 'document.getElementById("filter-clear").click(), true' >/dev/null
page_is "Page 1: 100 routes" # cleared: all tables, first page
cdp_type '#filter input[name=dev]' "$HOSTILE_DEV"
cdp_key Enter
page_is "Page 1: 1 route;"
# ip leaves out "dev" when it filters on it (/routes does not: docs/query.md)
ip netns exec "$NS" ip -j -6 route show table all dev "$HOSTILE_DEV" |
	jq --arg d "$HOSTILE_DEV" 'map(if .nexthops then . else .dev = $d end)' | jq -r "$row_fmt" >"$RTSNAP_TMP/k.f2"
dom_routes >"$RTSNAP_TMP/d.f2"
tap_diff_ne "$RTSNAP_TMP/k.f2" "$RTSNAP_TMP/d.f2" "typed filter dev=$HOSTILE_DEV: rows equal ip -6 route show table all dev ..., names as text"

# a value the server refuses: its error is shown as text
cdp_type '#filter input[name=prefix]' 'not-a-prefix<b>'
cdp_key Enter
cdp_wait "document.getElementById('routes-state').textContent.startsWith('The filter was refused')" 10
tap_ok "$(cdp_eval 'document.getElementById("routes-state").textContent' | grep -q "bad value for 'prefix'"; echo $?)" \
	"a prefix the server refuses: its 400 error is shown ($(cdp_eval 'document.getElementById("routes-state").textContent'))"

# paging: table 1000 (120 routes) 50 per page, through the cursor
cdp_eval 'document.getElementById("filter-clear").click(), true' >/dev/null
page_is "Page 1: 100 routes"
cdp_eval 'document.querySelector("#filter select[name=limit]").value = "50", true' >/dev/null
cdp_type '#filter input[name=table]' 1000
cdp_key Enter
page_is "Page 1: 50 routes; more follow"
tap_ok $? "table 1000, 50 per page: page 1 has 50 routes and more follow"
dom_routes >"$RTSNAP_TMP/d.pages"
cdp_eval 'document.getElementById("page-next").click(), true' >/dev/null
page_is "Page 2: 50 routes; more follow" && dom_routes >>"$RTSNAP_TMP/d.pages"
cdp_eval 'document.getElementById("page-next").click(), true' >/dev/null
page_is "Page 3: 20 routes; last page" && dom_routes >>"$RTSNAP_TMP/d.pages"
tap_ok $? "page 3 has the last 20 routes"
ip netns exec "$NS" ip -j -6 route show table 1000 | jq -r "$row_fmt" | sed 's/|main|/|1000|/' >"$RTSNAP_TMP/k.pages"
tap_diff_ne "$RTSNAP_TMP/k.pages" "$RTSNAP_TMP/d.pages" "the three pages together equal ip -6 route show table 1000, in order"
tap_is "$(cdp_eval 'document.getElementById("page-next").disabled')" true "no next page after the last"
cdp_eval 'document.getElementById("page-prev").click(), true' >/dev/null
page_is "Page 2: 50 routes"
tap_ok $? "previous page goes back to page 2"

# a route's full JSON, opened with the keyboard
cdp_eval 'document.getElementById("filter-clear").click(), true' >/dev/null
cdp_type '#filter input[name=prefix]' 2001:db8:20::/48
cdp_key Enter
page_is "Page 1: 1 route;"
cdp_eval '(document.querySelector("#route-table tbody tr button").focus(), true)' >/dev/null
cdp_key Enter
cdp_wait '!document.getElementById("detail").hidden' 5
cdp_eval 'JSON.parse(document.getElementById("detail-json").textContent)' | jq -S . >"$RTSNAP_TMP/d.detail"
kj '.[] | select(.dst == "2001:db8:20::/48")' | jq -S . >"$RTSNAP_TMP/k.detail"
tap_diff_ne "$RTSNAP_TMP/k.detail" "$RTSNAP_TMP/d.detail" "Enter on a multipath route shows its full JSON object, nexthops included"

# lookup
lookup_is() { # ADDR [TABLE]: the page's lookup row vs ip route get (-6, or -4 for IPv4)
	local addr=$1 table=${2:-} want got v=6 fib=()
	case $addr in *.*) v=4 fib=(fibmatch) ;; esac
	cdp_type '#lookup-form input[name=addr]' "$addr"
	cdp_type '#lookup-form input[name=table]' "$table"
	cdp_key Enter
	cdp_wait "document.getElementById('lookup-result').dataset.state === 'found' &&
		document.querySelector('#lookup-result .lookup-line').textContent.startsWith('$addr ')" 10
	# IPv4: the route the lookup chose (fibmatch; a plain get answers with a cached entry)
	want=$(ip netns exec "$NS" ip -j "-$v" route get "${fib[@]}" "$addr" |
		jq -r '.[0] | [.gateway // "", .dev, (.protocol // "boot"), (.metric // 0 | tostring)] | join("|")')
	got=$(dom_rows '#lookup-table tbody tr' | awk -F'|' '{ print $4 "|" $5 "|" $7 "|" $9 }')
	tap_is "$got" "$want" "lookup $addr${table:+ table $table}: gateway|dev|protocol|metric as ip -$v route get${fib:+ $fib}"
}
lookup_is 2001:db8:10::1
lookup_is 2001:db8:99::1
lookup_is 2001:db8:100::7 100
lookup_is 10.50.3.4
lookup_is 10.51.0.9
cdp_screenshot "$SHOTS/web-lookup.png" '#lookup'

# expiring routes, soonest first, counting down
kj '[.[] | select(.expires)] | sort_by(.expires) | .[].dst' >"$RTSNAP_TMP/k.exp"
dom_rows '#expiring-table tbody tr' | cut -d'|' -f2 >"$RTSNAP_TMP/d.exp"
tap_diff_ne "$RTSNAP_TMP/k.exp" "$RTSNAP_TMP/d.exp" "expiring list: the kernel's routes with a lifetime, soonest first"
first=$(cdp_eval 'document.querySelector("#expiring-table tbody td").textContent')
cdp_wait "document.querySelector('#expiring-table tbody td').textContent !== $first" 5
tap_ok $? "the countdown moves without a reload ($first -> $(cdp_eval 'document.querySelector("#expiring-table tbody td").textContent'))"
cdp_screenshot "$SHOTS/web-expiring.png" '#expiring'

# live: the page follows /events, filtered like the route browser; routes added after load
# appear without a reload
cdp_eval 'document.getElementById("filter-clear").click(), true' >/dev/null
cdp_type '#filter input[name=prefix]' 2001:db8:77::/48
cdp_key Enter
page_is "No route matches."
cdp_wait 'document.documentElement.dataset.stream === "open"' 10
tap_ok $? "the page follows the change stream"
tap_ok "$([ "$(http_get "$NS" /metrics | awk '$1 == "rtsnap_event_streams" { print $2 }')" -ge 1 ]; echo $?)" \
	"rtsnapd counts the page's stream (rtsnap_event_streams)"
cdp_eval 'window.__noReload = 1' >/dev/null
gen0=$(cdp_eval 'document.documentElement.dataset.gen' | jq -r .)
ev0=$(cdp_eval 'Number(document.documentElement.dataset.streamEvents || 0)')
ip -n "$NS" -6 route add 2001:db8:77::/64 via 2001:db8:1::2
ip -n "$NS" -6 route add 2001:db8:77:1::/64 dev v1 table 100
page_is "Page 1: 2 routes"
tap_ok $? "two routes added after load appear in the open route browser"
tap_ok "$([ "$(cdp_eval 'Number(document.documentElement.dataset.streamEvents || 0)')" -gt "$ev0" ]; echo $?)" \
	"they came as events on the stream"
cdp_wait 'document.getElementById("live").textContent.includes(" routes of this view)")' 5
tap_ok $? "the live line reports the change to the view ($(cdp_eval 'document.getElementById("live").textContent'))"
sleep 1.2
ip -n "$NS" -6 route add 2001:db8:88::/64 via 2001:db8:1::2 # outside the browser's filter
cdp_wait 'document.getElementById("live").textContent.includes("(no route of this view)")' 10
tap_ok $? "a change outside the filter: the stream says no route of the view changed"
ip netns exec "$NS" ip -j -6 route show table all root 2001:db8:77::/48 | jq -r "$row_fmt" >"$RTSNAP_TMP/k.live"
dom_routes >"$RTSNAP_TMP/d.live"
tap_diff_ne "$RTSNAP_TMP/k.live" "$RTSNAP_TMP/d.live" "they are what ip shows"
kj 'group_by(.table // "main") | map([(.[0].table // "main"), length,
	(map(select((.nexthops // []) | length > 1)) | length), (map(select(.expires)) | length)] | join("|")) | .[]' |
	sort >"$RTSNAP_TMP/k.tables2"
gen1=$(http_get "$NS" /status | jq .generation)
cdp_wait "Number(document.documentElement.dataset.renderedGen) >= $gen1" 10
tap_ok "$([ "$gen1" -gt "$gen0" ]; echo $?)" "the page saw new generations ($gen0 -> $gen1)"
dom_rows '#table-summary tbody tr' | awk -F'|' '$3 != "0" { print $2 "|" $3 "|" $4 "|" $5 }' | sort >"$RTSNAP_TMP/d.tables2"
tap_diff_ne "$RTSNAP_TMP/k.tables2" "$RTSNAP_TMP/d.tables2" "the table summary follows the kernel again"
tap_is "$(cdp_eval 'window.__noReload')" 1 "without a reload (same document)"
tap_ok "$([ "$(cdp_eval 'Number(document.getElementById("c-spark-text").textContent.match(/\((\d+) samples\)/)[1])')" -ge 2 ]; echo $?)" \
	"the sparkline has a history of samples"

# ---------------------------------------------------------------- IPv4 (--family all)

# the family switch: IPv4 from /routes?family=inet, /status's inet, /metrics' family="inet"
kj4() { ip netns exec "$NS" ip -j -4 route show table all | jq -r "$@"; }
row_fmt4=${row_fmt%'(.metric | tostring)] | join("|")'}'(.metric // 0 | tostring)] | join("|")' # ip -j -4 omits metric 0
tap_is "$(cdp_eval 'document.getElementById("family").hidden')" false "--family all: the page offers the family switch"
cdp_eval 'document.getElementById("filter-clear").click(), true' >/dev/null
page_is "Page 1: 100 routes"
n4=$(kj4 length)
cdp_eval 'document.querySelector("#family input[value=inet]").click(), true' >/dev/null
cdp_wait 'document.documentElement.dataset.renderedFamily === "inet"' 10 &&
	page_is "Page 1: $n4 route"
tap_ok $? "IPv4 selected: the route browser shows the IPv4 routes ($(cdp_eval 'document.getElementById("routes-state").textContent'))"
kj4 "$row_fmt4" >"$RTSNAP_TMP/k.v4"
dom_routes >"$RTSNAP_TMP/d.v4"
tap_diff_ne "$RTSNAP_TMP/k.v4" "$RTSNAP_TMP/d.v4" "IPv4: the route list equals ip -j -4 route show table all, in order"
tap_ok "$(cdp_eval 'location.hash' | jq -r . | grep -q '^#routes?family=inet&'; echo $?)" "the family is kept in the URL ($(cdp_eval 'location.hash'))"
tap_is "$(cdp_eval 'document.getElementById("f-gen").textContent' | jq -r .)" "$(http_get "$NS" /status | jq .inet.generation)" \
	"IPv4: header generation = /status inet.generation"
kj4 'group_by(.table // "main") | map([(.[0].table // "main"), length, 0, 0] | join("|")) | .[]' | sort >"$RTSNAP_TMP/k.tables4"
cdp_wait "document.querySelectorAll('#table-summary tbody tr').length === $(kj4 'map(.table // "main") | unique | length')" 5
dom_rows '#table-summary tbody tr' | awk -F'|' '$3 != "0" { print $2 "|" $3 "|" $4 "|" $5 }' | sort >"$RTSNAP_TMP/d.tables4"
tap_diff_ne "$RTSNAP_TMP/k.tables4" "$RTSNAP_TMP/d.tables4" "IPv4: table summary (name|routes|multipath|expiring) equals ip -4's counts"
kj4 'group_by(.protocol // "boot") | map("\(.[0].protocol // "boot"): \(length)") | .[]' | sort >"$RTSNAP_TMP/k.protos4"
cdp_eval '[...document.querySelectorAll("#chart-protocols title")].map((t) => t.textContent)' | jq -r '.[]' | sort >"$RTSNAP_TMP/d.protos4"
tap_diff_ne "$RTSNAP_TMP/k.protos4" "$RTSNAP_TMP/d.protos4" "IPv4: protocol chart equals ip -4's routes per protocol"
tap_is "$(cdp_eval '[document.getElementById("tables-cmd").textContent, document.getElementById("expiring-state").textContent]' | jq -r 'join(" / ")')" \
	"ip -4 route show table all / IPv4 routes have no lifetime." "IPv4: the table caption names ip -4; no expiring list"
cdp_screenshot "$SHOTS/web-ipv4.png"

# an IPv4 route added while the page is open appears (the stream of the IPv4 instance)
cdp_type '#filter input[name=prefix]' 10.77.0.0/16
cdp_key Enter
page_is "No route matches."
cdp_wait 'document.documentElement.dataset.stream === "open"' 10
ip -n "$NS" -4 route add 10.77.1.0/24 via 10.1.0.2 proto static
page_is "Page 1: 1 route"
tap_ok $? "IPv4: a route added after load appears in the open route browser"
ip netns exec "$NS" ip -j -4 route show table all root 10.77.0.0/16 | jq -r "$row_fmt4" >"$RTSNAP_TMP/k.live4"
dom_routes >"$RTSNAP_TMP/d.live4"
tap_diff_ne "$RTSNAP_TMP/k.live4" "$RTSNAP_TMP/d.live4" "IPv4: it is what ip -4 shows"
gen4=$(http_get "$NS" /status | jq .inet.generation)
tap_ok "$(cdp_wait "Number(document.documentElement.dataset.renderedGen) === $gen4 && document.getElementById('f-gen').textContent === '$gen4'" 10; echo $?)" \
	"IPv4: the views and the header show the new IPv4 generation ($gen4)"
# an IPv6-only change: the page reads /status (its ETag names both generations, so it is not
# a 304), sees the IPv4 generation unchanged and reloads nothing
cdp_eval 'performance.clearResourceTimings(), document.querySelector("#route-table tbody tr").__mark = 1, true' >/dev/null
gen6=$(http_get "$NS" /status | jq .generation)
ip -n "$NS" -6 route add 2001:db8:99::/64 via 2001:db8:1::2
wait_until 5 sh -c "[ \$(ip netns exec $NS curl -sg '$RTSNAP_URL/status' | jq .generation) -gt $gen6 ]"
cdp_wait 'performance.getEntriesByType("resource").some((e) => new URL(e.name).pathname === "/status" && e.responseEnd > 0)' 15
tap_ok $? "after an IPv6 change the page reads /status again"
sleep 0.5
tap_is "$(cdp_eval 'performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname === "/status").map((e) => e.responseStatus).join(" ")' | jq -r .)" \
	200 "... and /status answered 200, not 304: the IPv6 generation moved"
# (/netns, the namespace list, is read every 10 s whatever changed)
tap_is "$(cdp_eval '[...new Set(performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname))].filter((p) => p !== "/netns").sort().join(" ")' | jq -r .)" \
	"/healthz /status" "IPv4 view, IPv6-only change: no /routes, /metrics or /expiring read again"
tap_is "$(cdp_eval 'document.querySelector("#route-table tbody tr").__mark === 1 && document.getElementById("f-gen").textContent')" "\"$gen4\"" \
	"the IPv4 rows were not redrawn; the header still shows IPv4 generation $gen4"

# polling (the first seconds, before the stream opens): an IPv4 change makes /status a 200
# (If-None-Match no longer matches), and the page reads the IPv4 view again
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/#routes?family=inet&prefix=10.78.0.0/16&limit=100" &&
	cdp_wait 'document.documentElement.dataset.ready === "1" && document.documentElement.dataset.renderedFamily === "inet"' 20
ip -n "$NS" -4 route add 10.78.1.0/24 via 10.1.0.2
tap_is "$(cdp_eval 'new Promise((ok) => { let n = 0; const f = () => {
	if (document.getElementById("routes-state").textContent.startsWith("Page 1: 1 route")) ok(document.documentElement.dataset.stream);
	else if (n++ > 100) ok("not shown"); else setTimeout(f, 50); }; f(); })' | jq -r .)" polling \
	"IPv4 view while polling /status: an IPv4 route added appears before the stream opens"

# a link reopens the same view
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/#routes?family=inet&table=local&limit=100" &&
	cdp_wait 'document.documentElement.dataset.ready === "1" && document.documentElement.dataset.renderedFamily === "inet"' 20
tap_ok $? "a link with #routes?family=inet opens the IPv4 view"
page_is "Page 1: $(kj4 'map(select(.table == "local")) | length') route"
ip netns exec "$NS" ip -j -4 route show table local | jq -r "$row_fmt4" | sed 's/|main|/|local|/' >"$RTSNAP_TMP/k.local4"
dom_routes >"$RTSNAP_TMP/d.local4"
tap_diff_ne "$RTSNAP_TMP/k.local4" "$RTSNAP_TMP/d.local4" "its rows equal ip -4 route show table local"
tap_is "$(cdp_eval 'document.querySelector("#family input[value=inet]").checked')" true "the switch says IPv4"
# and back to IPv6
cdp_eval 'document.querySelector("#family input[value=inet6]").click(), true' >/dev/null
cdp_wait 'document.documentElement.dataset.renderedFamily === "inet6"' 10
tap_ok $? "IPv6 selected again"
tap_is "$(cdp_eval '[location.hash, document.getElementById("f-gen").textContent, document.getElementById("tables-cmd").textContent]' | jq -r 'join(" ")')" \
	"#routes?table=local&limit=100 $(http_get "$NS" /status | jq .generation) ip -6 route show table all" \
	"IPv6 again: no family in the URL, the IPv6 generation, ip -6"
page_is "Page 1: $(kj 'map(select(.table == "local")) | length') route"
tap_ok $? "IPv6 again: the route browser lists the IPv6 local table"

# the stale banner: a second daemon in the namespace whose collections fail after the first
ip netns exec "$NS" env RTSNAP_TEST_FAIL_AFTER=1 "$RTSNAPD" --listen '[::1]:9817' --interval 30 --family inet6 \
	>"$RTSNAP_TMP/stale.log" 2>&1 </dev/null &
stale_pid=$!
bg_register $stale_pid
wait_until 10 ip netns exec "$NS" curl -sgf 'http://[::1]:9817/healthz'
kill -HUP $stale_pid
wait_until 10 sh -c "! ip netns exec $NS curl -sgf 'http://[::1]:9817/healthz'"
cdp_nav 'http://[::1]:9817/' && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
cdp_wait 'document.getElementById("banner").dataset.stale === "1" && !document.getElementById("banner").hidden' 10
tap_ok $? "a stale daemon: the page shows the stale banner"
tap_ok "$(cdp_eval 'document.getElementById("banner").textContent' | grep -q 'STALE'; echo $?)" "the banner says STALE in words"
tap_is "$(cdp_eval 'document.getElementById("family").hidden')" true "an IPv6-only daemon: no family switch"
cdp_nav about:blank
cdp_nav 'http://[::1]:9817/#routes?family=inet' && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
cdp_wait "document.getElementById('routes-state').textContent.startsWith('Page 1:')" 10
tap_ok $? "an IPv6-only daemon, a link to the IPv4 view: the IPv6 routes ($(cdp_eval 'document.getElementById("routes-state").textContent'))"
tap_is "$(cdp_eval '[location.hash, document.documentElement.dataset.renderedFamily]' | jq -r 'join(" ")')" "#routes? inet6" \
	"... and the URL no longer asks for IPv4"
cdp_screenshot "$SHOTS/web-stale.png" 'header'

cdp_stop
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"
tap_done
