#!/bin/bash
# web_netns.t - the web page's namespace selector, in headless Chromium, against rtsnapd
# serving named namespaces beside its own (--netns). Two named namespaces, a plain name and a
# hostile one (a space, a quote, <i>, &amp; and <script>), each with routes of its own: the
# selector lists /netns's namespaces, names as text (no element made of them, no CSP
# violation); choosing one shows its routes (= ip -n NAME -j -6 route show table all), its
# table summary (the /metrics series labelled netns="NAME"), its header, lookups and expiring
# list, every request under the /netns path it lists; its IPv4 family; the URL keeps it
# (reload); a route added in it appears live; a namespace beyond --metrics-netns-limit says
# its counts are unknown; the own namespace again (series without a netns label). With
# --netns all: a namespace made while the page is open joins the selector, and deleted while
# shown, the page falls back to the own one with a note. An rtsnapd serving its own namespace
# alone: no selector, and a link naming a namespace shows the own one with the note.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/cdp.sh"
require_root
require_cmd ip curl jq
require_rtsnapd
command -v "$CHROMIUM" >/dev/null 2>&1 || tap_skip_all "chromium not installed (make deps installs it)"

SHOTS=${WEB_SHOTS:-$TOP/build}
trap '_st=$?; cdp_stop >/dev/null 2>&1; (exit $_st); _cleanup' EXIT

# named NAME N: the named namespace NAME (deleted on exit) with a veth pair d0/d1 and routes
# of its own: 2001:db8:N::/64 (and more), 10.N.0.0/16, a multipath and an expiring route.
named() {
	ip netns add "$1" || return 1
	_ns_list+=("$1")
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 &&
		ip -n "$1" link set lo up &&
		ip -n "$1" link add d0 type veth peer name d1 &&
		ip -n "$1" link set d0 up && ip -n "$1" link set d1 up &&
		ip -n "$1" -6 addr add "2001:db8:$2:a::1/64" dev d0 nodad &&
		ip -n "$1" -6 addr add "2001:db8:$2:b::1/64" dev d1 nodad &&
		ip -n "$1" -6 route add "2001:db8:$2::/64" dev d0 &&
		ip -n "$1" -6 route add "2001:db8:$2:1::/64" via "2001:db8:$2:a::2" proto static &&
		ip -n "$1" -6 route add "2001:db8:$2:2::/64" nexthop via "2001:db8:$2:a::2" dev d0 \
			nexthop via "2001:db8:$2:b::2" dev d1 &&
		ip -n "$1" -6 route add "2001:db8:$2:3::/64" dev d1 expires 600 &&
		ip -n "$1" -4 addr add "10.$2.0.1/24" dev d0 &&
		ip -n "$1" -4 route add "10.$2.0.0/16" via "10.$2.0.2" proto static
}

ns_new NS
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" o0 "$NS" o1
ip -n "$NS" -6 addr add 2001:db8:1::1/64 dev o0 nodad
ip -n "$NS" -6 route add 2001:db8:70::/48 via 2001:db8:1::2
ip -n "$NS" -4 addr add 10.1.0.1/24 dev o0
N1="rtsnapt-$$-blue"
N2="rtsnapt-$$ a b\"c<i>&amp;<script>alert(1)"
named "$N1" 71 && named "$N2" 72
tap_ok $? "namespaces: the daemon's own, '$N1' and '$N2' (ip netns add takes no '/')" || tap_done

# as web_page.t compares the route browser with ip
row_fmt='.[] | [(.type // ""), .dst, (.from // ""), ((.nexthops // [.]) | map(.gateway // "") | join(",")),
	((.nexthops // [.]) | map(.dev // "") | join(",")), (.table // "main"), (.protocol // "boot"), (.metric // 0 | tostring)] | join("|")'
tables_fmt='group_by(.table // "main") | map([(.[0].table // "main"), length,
	(map(select((.nexthops // []) | length > 1)) | length), (map(select(.expires)) | length)] | join("|")) | .[]'
dom_rows() { # SELECTOR: each row's cells joined by |, multipath cells' lines by ,
	cdp_eval "[...document.querySelectorAll($(jq -cn --arg s "$1" '$s'))].map((tr) => [...tr.cells].map((c) => {
		const nh = [...c.querySelectorAll('.nh')]; return nh.length ? nh.map((s) => s.textContent).join(',') : c.textContent;
	}).join('|'))" | jq -r '.[]'
}
dom_routes() { dom_rows '#route-table tbody tr' | awk -F'|' '{ print $1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7 "|" $9 }'; }
dom_tables() { dom_rows '#table-summary tbody tr' | awk -F'|' '$3 != "0" { print $2 "|" $3 "|" $4 "|" $5 }' | sort; }
page_is() { cdp_wait "document.getElementById('routes-state').textContent.startsWith($(jq -cn --arg s "$1" '$s'))" 15; }
js() { jq -cn --arg s "$1" '$s'; } # a JS string literal
kr() { # NAME -4|-6 [JQ]: ip -j route show table all in namespace NAME
	ip -n "$1" -j "$2" route show table all | jq -r "${3:-$row_fmt}"
}
tap_diff_ne() { # tap_diff for lists that must not be empty
	if [ ! -s "$1" ]; then
		_tap_result 1 "$3"
		tap_diag "the expected list is empty"
		return 1
	fi
	tap_diff "$@"
}
# pick NAME: choose NAME ('' = the own namespace) in the selector, as a user does
pick() {
	cdp_eval "(() => { delete document.documentElement.dataset.renderedNetns; window.__pickAt = performance.now();
		const s = document.getElementById('netns'); s.value = $(js "$1");
		s.dispatchEvent(new Event('change')); return s.value; })()" >/dev/null
}
# shown NAME FAMILY: wait until every view shows namespace NAME in FAMILY
shown() {
	cdp_wait "document.documentElement.dataset.renderedNetns === $(js "$1") &&
		document.documentElement.dataset.renderedFamily === '$2'" 20
}
# routes_are NAME -6|-4 WHAT: the route browser's rows equal ip's in NAME
routes_are() {
	local n
	n=$(kr "$1" "$2" length)
	page_is "Page 1: $n route"
	kr "$1" "$2" >"$RTSNAP_TMP/k.r"
	dom_routes >"$RTSNAP_TMP/d.r"
	tap_diff_ne "$RTSNAP_TMP/k.r" "$RTSNAP_TMP/d.r" "$3"
}
nspath() { http_get "$NS" /netns | jq -r --arg n "$1" '.namespaces[] | select(.own | not) | select(.name == $n) | .path'; }

daemon_start "$NS" --debounce-ms 20 --family all --netns "$N1" --netns "$N2" --metrics-netns-limit 1
tap_ok $? "rtsnapd starts with --netns for both, --metrics-netns-limit 1" || tap_done

cdp_start "$NS"
tap_ok $? "chromium starts" || { tap_diag "$(tail -n 20 "$_cdp_dir/log")"; tap_done; }
cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_ok $? "the page loads" || tap_done

# ---------------------------------------------------------------- the selector

tap_is "$(cdp_eval '!document.getElementById("netns-pick").hidden')" true "namespaces served: the page offers the selector"
http_get "$NS" /netns | jq -r '.namespaces[] | if .own then "(this host)" else .name end' >"$RTSNAP_TMP/k.opts"
cdp_eval '[...document.querySelectorAll("#netns option")].map((o) => o.textContent)' | jq -r '.[]' >"$RTSNAP_TMP/d.opts"
tap_diff_ne "$RTSNAP_TMP/k.opts" "$RTSNAP_TMP/d.opts" "its options are /netns's namespaces, own first ('(this host)'), names as text"
tap_is "$(cdp_eval '[...document.querySelectorAll("#netns option")].map((o) => o.value)' | jq -c .)" \
	"$(jq -cn --arg a "$N2" --arg b "$N1" '["", $a, $b]')" "the options' values are the names ('' for the own)"
tap_is "$(cdp_eval '[document.getElementById("netns").value, document.documentElement.dataset.renderedNetns]' | jq -c .)" \
	'["",""]' "the own namespace is shown first"

# ---------------------------------------------------------------- a named namespace

pick "$N2"
shown "$N2" inet6
tap_ok $? "choosing '$N2' shows it"
routes_are "$N2" -6 "'$N2': the routes equal ip -n NAME -j -6 route show table all, in order"
tap_is "$(cdp_eval 'document.querySelectorAll("i, b, img, script:not([src])").length')" 0 \
	"no element was made of the name (no i, script)"
tap_is "$(cdp_eval 'document.documentElement.dataset.cspViolations')" '"0"' "no Content-Security-Policy violation"
tap_is "$(cdp_eval 'document.getElementById("f-netns").textContent' | jq -r .)" "$N2" "header: the namespace's name, as text"
tap_is "$(cdp_eval 'document.getElementById("f-gen").textContent' | jq -r .)" \
	"$(http_get "$NS" "$(nspath "$N2")status" | jq .generation)" "header: generation = /netns/NAME/status's"
p2=$(nspath "$N2")
tap_ok "$([[ $p2 == /netns/*%3Ci%3E* ]]; echo $?)" "/netns lists its path percent-encoded ($p2)"
# what the page asked for since the choice (the own namespace's requests then in flight aside)
cdp_eval '[...new Set(performance.getEntriesByType("resource").filter((e) => e.startTime >= window.__pickAt).map((e) => new URL(e.name).pathname))].sort()' |
	jq -r '.[]' >"$RTSNAP_TMP/d.paths"
tap_is "$(for v in expiring healthz routes status; do grep -qx "$p2$v" "$RTSNAP_TMP/d.paths" && echo "$v"; done | tr '\n' ' ')" \
	"expiring healthz routes status " "its views read from that path: $(grep "^$p2" "$RTSNAP_TMP/d.paths" | sed "s|^$p2||" | tr '\n' ' ')"
tap_is "$(grep -v "^$p2" "$RTSNAP_TMP/d.paths" | grep -v '^/metrics$' | grep -v '^/netns$' | tr '\n' ' ')" "" \
	"... and nothing of the own namespace's paths (/metrics and /netns are one for all)"
tap_is "$(cdp_eval '[...document.querySelectorAll("nav a[data-path]")].map((a) => a.getAttribute("href")).join(" ")' | jq -r .)" \
	"${p2}ipv6_route ${p2}routes ${p2}status ${p2}healthz ${p2}expiring" "the raw-view links point into the namespace"
kr "$N2" -6 "$tables_fmt" | sort >"$RTSNAP_TMP/k.t2"
dom_tables >"$RTSNAP_TMP/d.t2"
tap_diff_ne "$RTSNAP_TMP/k.t2" "$RTSNAP_TMP/d.t2" "table summary (name|routes|multipath|expiring) = its kernel's, from its netns=\"...\" series"
kr "$N2" -6 'group_by(.protocol // "boot") | map("\(.[0].protocol // "boot"): \(length)") | .[]' | sort >"$RTSNAP_TMP/k.p2"
cdp_eval '[...document.querySelectorAll("#chart-protocols title")].map((t) => t.textContent)' | jq -r '.[]' | sort >"$RTSNAP_TMP/d.p2"
tap_diff_ne "$RTSNAP_TMP/k.p2" "$RTSNAP_TMP/d.p2" "protocol chart = its routes per protocol"
tap_is "$(cdp_eval '[...document.querySelectorAll("#expiring-table tbody tr td:nth-child(2)")].map((t) => t.textContent).join(" ")' | jq -r .)" \
	"2001:db8:72:3::/64" "expiring list: its expiring route"
tap_is "$(cdp_eval 'document.getElementById("metrics-note").hidden')" true "within --metrics-netns-limit: no note"
cdp_screenshot "$SHOTS/web-netns.png"

# the URL keeps it: a reload opens the same namespace
hash=$(cdp_eval 'location.hash' | jq -r .)
tap_is "$hash" "#routes?$(jq -rn --arg n "$N2" '"netns=" + ($n | @uri) | gsub("%20"; "+") | gsub("\\("; "%28") | gsub("\\)"; "%29")')&limit=100" "the URL names the namespace ($hash)"
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/$hash" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
shown "$N2" inet6
tap_ok $? "the link opens '$N2' again"
tap_is "$(cdp_eval 'document.getElementById("netns").value' | jq -r .)" "$N2" "the selector says so"
routes_are "$N2" -6 "after the reload: its routes"

# live: a route added in the namespace shown appears (its change stream)
cdp_wait 'document.documentElement.dataset.stream === "open"' 10
tap_ok $? "the page follows the namespace's change stream"
cdp_eval 'window.__noReload = 1' >/dev/null
ip -n "$N2" -6 route add 2001:db8:72:9::/64 via 2001:db8:72:a::3
ip -n "$NS" -6 route add 2001:db8:70:9::/64 via 2001:db8:1::2 # the own namespace's: not this view
routes_are "$N2" -6 "a route added in '$N2' while shown appears, and nothing of the own namespace's"
tap_is "$(cdp_eval 'window.__noReload')" 1 "without a reload"

# lookup in the namespace
cdp_type '#lookup-form input[name=addr]' 2001:db8:72:1::5
cdp_key Enter
cdp_wait "document.getElementById('lookup-result').dataset.state === 'found'" 10
want=$(ip -n "$N2" -j -6 route get 2001:db8:72:1::5 | jq -r '.[0] | [.gateway // "", .dev, (.protocol // "boot")] | join("|")')
got=$(dom_rows '#lookup-table tbody tr' | awk -F'|' '{ print $4 "|" $5 "|" $7 }')
tap_is "$got" "$want" "lookup 2001:db8:72:1::5 in '$N2': gateway|dev|protocol as ip -n NAME route get"

# its IPv4 family
cdp_eval 'document.querySelector("#family input[value=inet]").click(), true' >/dev/null
shown "$N2" inet
routes_are "$N2" -4 "'$N2', IPv4: the routes equal ip -n NAME -j -4 route show table all"
kr "$N2" -4 'group_by(.table // "main") | map([(.[0].table // "main"), length, 0, 0] | join("|")) | .[]' | sort >"$RTSNAP_TMP/k.t4"
dom_tables >"$RTSNAP_TMP/d.t4"
tap_diff_ne "$RTSNAP_TMP/k.t4" "$RTSNAP_TMP/d.t4" "'$N2', IPv4: table summary = its kernel's"
tap_is "$(cdp_eval 'document.getElementById("f-gen").textContent' | jq -r .)" \
	"$(http_get "$NS" "${p2}status" | jq .inet.generation)" "'$N2', IPv4: header generation = its inet.generation"
hash=$(cdp_eval 'location.hash' | jq -r .)
tap_ok "$([[ $hash == '#routes?netns='*'&family=inet&'* ]]; echo $?)" "the URL keeps both: $hash"
ip -n "$N2" -4 route add 10.72.9.0/24 via 10.72.0.3
routes_are "$N2" -4 "'$N2', IPv4: a route added while shown appears"

# another namespace, beyond --metrics-netns-limit 1 (the lowest name is kept: '$N2')
pick "$N1"
shown "$N1" inet
routes_are "$N1" -4 "'$N1' chosen while IPv4 is shown: its IPv4 routes"
cdp_eval 'document.querySelector("#family input[value=inet6]").click(), true' >/dev/null
shown "$N1" inet6
routes_are "$N1" -6 "'$N1', IPv6: its routes"
tap_is "$(cdp_eval '[document.getElementById("metrics-note").hidden, document.getElementById("sum-mpath").textContent]' | jq -c .)" \
	'[false,"?"]' "'$N1' has no /metrics series (beyond the limit): the page says its counts are unknown"
kr "$N1" -6 'group_by(.table // "main") | map("\(.[0].table // "main")|\(length)") | .[]' | sort >"$RTSNAP_TMP/k.t1"
dom_tables | cut -d'|' -f1,2 >"$RTSNAP_TMP/d.t1"
tap_diff_ne "$RTSNAP_TMP/k.t1" "$RTSNAP_TMP/d.t1" "... and its routes per table (from its /status) = its kernel's"
tap_is "$(cdp_eval '[...document.querySelectorAll("#expiring-table tbody tr td:nth-child(2)")].map((t) => t.textContent).join(" ")' | jq -r .)" \
	"2001:db8:71:3::/64" "its expiring list is its own"

# the own namespace again: the series without a netns label
pick ''
shown '' inet6
routes_are "$NS" -6 "the own namespace again: its routes"
kr "$NS" -6 "$tables_fmt" | sort >"$RTSNAP_TMP/k.t0"
dom_tables >"$RTSNAP_TMP/d.t0"
tap_diff_ne "$RTSNAP_TMP/k.t0" "$RTSNAP_TMP/d.t0" "its table summary = its kernel's (series without a netns label)"
tap_is "$(cdp_eval '[location.hash, document.getElementById("f-netns").textContent, document.querySelector("nav a[data-path=status]").getAttribute("href")]' | jq -c .)" \
	"$(jq -cn --arg n "$NS" '["#routes?limit=100", $n, "/status"]')" "no namespace in the URL; the header names the daemon's; links to /status"
tap_is "$(cdp_eval 'document.documentElement.dataset.cspViolations')" '"0"' "still no CSP violation"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"

# ---------------------------------------------------------------- --netns all: names come and go

daemon_start "$NS" --debounce-ms 20 --family all --netns all
tap_ok $? "rtsnapd --netns all starts" || tap_done
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_ok $? "the page loads"
N3="rtsnapt-$$-new <b>"
named "$N3" 73
cdp_wait "[...document.querySelectorAll('#netns option')].some((o) => o.textContent === $(js "$N3"))" 20
tap_ok $? "a namespace made while the page is open joins the selector"
pick "$N3"
shown "$N3" inet6
routes_are "$N3" -6 "chosen: its routes"
cdp_wait 'document.documentElement.dataset.stream === "open"' 10
ip -n "$N3" -6 route add 2001:db8:73:9::/64 via 2001:db8:73:a::3
routes_are "$N3" -6 "a route added in it appears"
ip netns del "$N3"
cdp_wait "document.documentElement.dataset.renderedNetns === '' && !document.getElementById('netns-note').hidden" 30
tap_ok $? "deleted while shown: the page falls back to the own namespace, with a note"
# shellcheck disable=SC1111 # the note's quotation marks
tap_is "$(cdp_eval 'document.getElementById("netns-note").textContent' | jq -r .)" \
	"The namespace “$N3” is not served by rtsnapd (deleted, or not given to --netns): showing rtsnapd's own namespace." \
	"the note names it, as text"
routes_are "$NS" -6 "the own namespace's routes"
tap_is "$(cdp_eval '[location.hash, document.getElementById("netns").value, [...document.querySelectorAll("#netns option")].some((o) => o.value === '"$(js "$N3")"'), document.querySelectorAll("b").length]' | jq -c .)" \
	'["#routes?limit=100","",false,0]' "the URL and the selector say the own namespace; the name left the list; no element made of it"
daemon_stop "$NS" >/dev/null

# ---------------------------------------------------------------- the own namespace alone

daemon_start "$NS" --debounce-ms 20 --family all
tap_ok $? "rtsnapd without --netns starts" || tap_done
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_is "$(cdp_eval '[document.getElementById("netns-pick").hidden, document.getElementById("netns-note").hidden]' | jq -c .)" \
	'[true,true]' "the own namespace alone: no selector, no note"
routes_are "$NS" -6 "its routes, as before"
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/#routes?netns=$(jq -rn --arg n "$N1" '$n|@uri')&family=inet&limit=100" &&
	cdp_wait 'document.documentElement.dataset.ready === "1"' 20
shown '' inet
tap_ok $? "a link naming a namespace not served: the own namespace"
tap_is "$(cdp_eval '[location.hash, document.getElementById("netns-note").hidden]' | jq -c .)" \
	'["#routes?family=inet&limit=100",false]' "... the URL without it, and the note"
routes_are "$NS" -4 "... its IPv4 routes"

cdp_stop
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"
tap_done
