#!/bin/bash
# web_watch.t - the web page's "Watched routes" section, in headless Chromium, against rtsnapd
# started with --watch in a namespace with known routes, and a named namespace served beside it
# (--netns) with a watch of its own. The rows equal /watch's entries of the namespace shown
# (name, target, family, present/absent, the route's destination, gateways, devices, table,
# last change, changes; a multipath route's hops one per line); a watch absent from the start
# says so; a hostile watch name is text (no element made of it, no CSP violation): a NAME= is
# letters, digits and _.:/-@+ only, but a watch without one is named by its spec, here one in a
# table that /etc/iproute2/rt_tables.d names <b>x</b>;
# the default route deleted in the kernel turns its watch and the lookup it answered absent on
# the page without a reload (the change stream), in words and in colour, and added back
# through another gateway shows the new gateway; the namespace selector shows the named
# namespace's watches alone, then the own namespace's again. An rtsnapd without watches: the
# section stays hidden and the page never asks /watch. Skipped when this rtsnapd has no --watch.
# Screenshot: build/web-watch.png.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/cdp.sh"
require_root
require_cmd ip curl jq
require_rtsnapd
"$RTSNAPD" --help 2>&1 | grep -q -- --watch ||
	tap_skip_all "this rtsnapd has no --watch (the daemon side of watched routes is not built in)"
command -v "$CHROMIUM" >/dev/null 2>&1 || tap_skip_all "chromium not installed (make deps installs it)"

SHOTS=${WEB_SHOTS:-$TOP/build}
HOSTILE='<b>x</b>'
HNAME="2001:db8:40::/64 table $HOSTILE" # the watch's name: its spec

ns_new NS
ETCNS=/etc/netns/$NS
trap '_st=$?; cdp_stop >/dev/null 2>&1; rm -rf "$ETCNS"; (exit $_st); _cleanup' EXIT
mkdir -p "$ETCNS" && cp -a /etc/iproute2 "$ETCNS/iproute2" && mkdir -p "$ETCNS/iproute2/rt_tables.d" &&
	printf '300\t%s\n' "$HOSTILE" >"$ETCNS/iproute2/rt_tables.d/watch.conf" || tap_bail "cannot create $ETCNS/iproute2"
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
veth_pair "$NS" v0 "$NS" v1 &&
	ip -n "$NS" -6 addr add 2001:db8:1::1/64 dev v0 nodad &&
	ip -n "$NS" -6 addr add 2001:db8:2::1/64 dev v1 nodad &&
	ip -n "$NS" -6 route add default via 2001:db8:1::9 dev v0 &&
	ip -n "$NS" -6 route add 2001:db8:20::/48 nexthop via 2001:db8:1::2 dev v0 nexthop via 2001:db8:2::2 dev v1 &&
	ip -n "$NS" -6 route add 2001:db8:30::/64 via 2001:db8:2::7 table 100 &&
	ip -n "$NS" -6 route add 2001:db8:40::/64 dev v1 table 300
tap_ok $? "the namespace: a default route, a multipath route, routes in tables 100 and 300 ('$HOSTILE')" || tap_done
N1="rtsnapt-$$-blue"
ip netns add "$N1" && _ns_list+=("$N1") &&
	ip netns exec "$N1" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 &&
	ip -n "$N1" link set lo up && ip -n "$N1" link add d0 type veth peer name d1 &&
	ip -n "$N1" link set d0 up && ip -n "$N1" link set d1 up &&
	ip -n "$N1" -6 addr add 2001:db8:71:a::1/64 dev d0 nodad &&
	ip -n "$N1" -6 route add 2001:db8:71::/64 via 2001:db8:71:a::2
tap_ok $? "a named namespace '$N1' with a route of its own" || tap_done

js() { jq -cn --arg s "$1" '$s'; } # a JS string literal
# the rows on the page: their cells joined by |, a multipath cell's lines by ,
dom_watch() {
	cdp_eval '[...document.querySelectorAll("#watch-table tbody tr")].map((tr) => [...tr.cells].map((c) => {
		const nh = [...c.querySelectorAll(".nh")]; return nh.length ? nh.map((s) => s.textContent).join(",") : c.textContent;
	}).join("|"))' | jq -r '.[]'
}
# the same, from /watch: the entries of namespace $1 ('' = own), as the page words them
api_watch() {
	http_get "$NS" /watch | jq -r --arg ns "$1" '.watches[] | select((.netns // "") == $ns) |
		(if .present then .route else null end) as $r | (if $r then ($r.nexthops // [$r]) else [] end) as $h |
		[.name, ((if .kind == "lookup" then "lookup " else "" end) + .target + (if (.table // "main") != "main" then " table " + .table else "" end)),
		 (if .family == "inet" then "IPv4" else "IPv6" end), (if .present then "present" else "absent" end),
		 (if $r then $r.dst else "\u2014" end), ($h | map(.gateway // "") | join(",")), ($h | map(.dev // "") | join(",")),
		 (if $r then $r.table // "main" else "" end),
		 (if .changed_at then (.changed_at | sub("T"; " ") | sub("Z"; " UTC")) else "never" end),
		 (.changes // 0 | tostring)] | join("|")'
}
# same_watch NS: the page's rows equal /watch's entries of namespace NS right now
same_watch() {
	api_watch "$1" >"$RTSNAP_TMP/k.w"
	dom_watch >"$RTSNAP_TMP/d.w"
	[ -s "$RTSNAP_TMP/k.w" ] && cmp -s "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w"
}
state_of() { # NAME: the data-state of its row ('' when there is none)
	cdp_eval "(() => { const r = [...document.querySelectorAll('#watch-table tbody tr')].find((tr) => tr.dataset.watch === $(js "$1"));
		return r ? r.dataset.state : ''; })()" | jq -r .
}
pick() { # NAME ('' = the own namespace) in the selector, as a user does
	cdp_eval "(() => { const s = document.getElementById('netns'); s.value = $(js "$1");
		s.dispatchEvent(new Event('change')); return s.value; })()" >/dev/null
}

daemon_start "$NS" --debounce-ms 20 --netns "$N1" --watch 'gw6=default' --watch 'mp=2001:db8:20::/48' \
	--watch "2001:db8:40::/64 table $HOSTILE" --watch 'svc=lookup:2001:db8:99::1' --watch 't100=2001:db8:30::/64 table 100' \
	--watch 'gone=2001:db8:dead::/64' --watch "b1=2001:db8:71::/64 netns $N1"
tap_ok $? "rtsnapd starts with seven --watch (one named '$HNAME', one absent, one in '$N1')" || tap_done
tap_is "$(http_get "$NS" /watch | jq '.watches | length')" 7 "/watch lists the seven"

cdp_start "$NS"
tap_ok $? "chromium starts" || { tap_diag "$(tail -n 20 "$_cdp_dir/log")"; tap_done; }
cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_ok $? "the page loads" || tap_done

cdp_wait '!document.getElementById("watches").hidden && document.documentElement.dataset.watchSeq' 15
tap_ok $? "the Watched routes section is shown"
wait_true 10 'same_watch ""'
tap_diff "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w" "its rows = /watch's entries of the own namespace (name|target|family|state|dst|gateways|devices|table|last change|changes)"
tap_is "$(wc -l <"$RTSNAP_TMP/d.w")" 6 "six rows: the named namespace's watch is not among them"
tap_is "$(grep '^mp|' "$RTSNAP_TMP/d.w" | cut -d'|' -f4-7)" "present|2001:db8:20::/48|2001:db8:1::2,2001:db8:2::2|v0,v1" \
	"the multipath watch: its two hops"
tap_is "$(grep '^t100|' "$RTSNAP_TMP/d.w" | cut -d'|' -f2,4,8)" "2001:db8:30::/64 table 100|present|100" "a watch in table 100"
tap_is "$(grep '^gone|' "$RTSNAP_TMP/d.w" | cut -d'|' -f4,5)" "absent|—" "a watch no route matches: absent, no route"
tap_is "$(grep '^svc|' "$RTSNAP_TMP/d.w" | cut -d'|' -f2,4,5,6)" "lookup 2001:db8:99::1|present|$(ip -n "$NS" -j -6 route show default | jq -r '.[0].dst')|2001:db8:1::9" \
	"a lookup watch: the route that answers it (the default route)"
tap_is "$(state_of "$HNAME")" present "the watch named '$HNAME' has its row, its name as text"
tap_is "$(cdp_eval "[...document.querySelectorAll('#watch-table tbody tr')].filter((tr) => tr.dataset.watch === $(js "$HNAME")).map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent, tr.cells[7].textContent])" | jq -c '.[0]')" \
	"$(jq -cn --arg n "$HNAME" --arg t "$HOSTILE" '[$n, "2001:db8:40::/64 table " + $t, $t]')" "... and the table's name, in its target and table cells"
tap_is "$(cdp_eval 'document.querySelectorAll("b, img, script:not([src])").length')" 0 "no element was made of the name"
tap_is "$(cdp_eval 'document.documentElement.dataset.cspViolations')" '"0"' "no Content-Security-Policy violation"
tap_is "$(cdp_eval 'document.getElementById("watch-state").textContent' | jq -r .)" "6 watched routes: 1 absent." "the summary line counts the absent one"

# ---------------------------------------------------------------- the kernel changes
cdp_wait 'document.documentElement.dataset.stream === "open"' 10
tap_ok $? "the page follows the change stream"
cdp_eval 'window.__noReload = 1' >/dev/null
ip -n "$NS" -6 route del default via 2001:db8:1::9 dev v0
cdp_wait "(() => { const s = (n) => { const r = [...document.querySelectorAll('#watch-table tbody tr')].find((tr) => tr.dataset.watch === n); return r && r.dataset.state; };
	return s('gw6') === 'absent' && s('svc') === 'absent'; })()" 10
tap_ok $? "the default route deleted in the kernel: gw6 and svc turn absent on the page"
tap_is "$(cdp_eval 'window.__noReload')" 1 "without a reload"
wait_true 10 'same_watch ""'
tap_diff "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w" "the rows = /watch's again"
tap_is "$(grep '^gw6|' "$RTSNAP_TMP/d.w" | cut -d'|' -f4-7)" "absent|—||" "gw6: absent, no route"
# the state in colour as well as in words: the absent badge is not drawn like the present one
colours=$(cdp_eval '["gw6", "mp"].map((n) => { const r = [...document.querySelectorAll("#watch-table tbody tr")].find((tr) => tr.dataset.watch === n);
	const b = r.querySelector(".wstate"); return getComputedStyle(b).backgroundColor + " " + b.textContent; })')
tap_ok "$(jq -e '.[0] != .[1] and (.[0] | endswith(" absent")) and (.[1] | endswith(" present"))' <<<"$colours" >/dev/null; echo $?)" \
	"absent and present badges differ in colour, and say it ($colours)"
cdp_screenshot "$SHOTS/web-watch.png" '#watches'
ip -n "$NS" -6 route add default via 2001:db8:1::8 dev v0
cdp_wait "(() => { const r = [...document.querySelectorAll('#watch-table tbody tr')].find((tr) => tr.dataset.watch === 'gw6'); return r && r.dataset.state === 'present'; })()" 10
tap_ok $? "added back: gw6 present again"
wait_true 10 'same_watch ""'
tap_diff "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w" "the rows = /watch's"
tap_is "$(grep '^gw6|' "$RTSNAP_TMP/d.w" | cut -d'|' -f4,6)" "present|2001:db8:1::8" "gw6 shows the new gateway"
tap_ok "$(grep '^gw6|' "$RTSNAP_TMP/d.w" | awk -F'|' '{ exit !($10 >= 2) }'; echo $?)" "gw6 counts its changes ($(grep '^gw6|' "$RTSNAP_TMP/d.w" | cut -d'|' -f10))"

# ---------------------------------------------------------------- per namespace
pick "$N1"
cdp_wait "document.documentElement.dataset.renderedNetns === $(js "$N1") && document.documentElement.dataset.watchNetns === $(js "$N1")" 20
tap_ok $? "'$N1' chosen: the watch list is redrawn for it"
wait_true 10 "same_watch $(printf %q "$N1")"
tap_diff "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w" "its rows = /watch's entries with netns '$N1'"
tap_is "$(cut -d'|' -f1,4,5 "$RTSNAP_TMP/d.w")" "b1|present|2001:db8:71::/64" "... its one watch, present"
ip -n "$N1" -6 route del 2001:db8:71::/64
cdp_wait "(() => { const r = document.querySelector('#watch-table tbody tr'); return r && r.dataset.state === 'absent'; })()" 15
tap_ok $? "its route deleted in '$N1': absent on the page"
pick ''
cdp_wait "document.documentElement.dataset.renderedNetns === '' && document.documentElement.dataset.watchNetns === ''" 20
wait_true 10 'same_watch ""'
tap_diff "$RTSNAP_TMP/k.w" "$RTSNAP_TMP/d.w" "the own namespace again: its six watches"
tap_is "$(cdp_eval 'document.documentElement.dataset.cspViolations')" '"0"' "still no CSP violation"
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"

# ---------------------------------------------------------------- no watch
daemon_start "$NS" --debounce-ms 20
tap_ok $? "rtsnapd without --watch starts" || tap_done
cdp_nav about:blank
cdp_nav "$RTSNAP_URL/" && cdp_wait 'document.documentElement.dataset.ready === "1"' 20
tap_ok $? "the page loads"
sleep 2
tap_is "$(cdp_eval '[document.getElementById("watches").hidden, performance.getEntriesByType("resource").some((e) => new URL(e.name).pathname === "/watch")]' | jq -c .)" \
	'[true,false]' "no watch: the section is hidden, and /watch never asked"
cdp_stop
daemon_stop "$NS"
tap_ok $? "rtsnapd exits 0"
tap_done
