#!/bin/bash
# lookup4_random.t - GET /routes/lookup?addr=A for IPv4 addresses against
# `ip -4 route get fibmatch A` for 2000 random addresses, and the /routes?family=inet filters
# prefix=, covers=, gateway= (and paging) against what ip prints, in a namespace where only the
# main table and the default rules matter: every route and address is in 10.0.0.0/8, which
# the local table (this namespace's own addresses, 127/8 and 192.168/16) never touches.
# Without rules of the user's the kernel keeps local and main in one trie, and `ip route get`
# looks there, then in table default (empty here).
#
# The main table gets 5000 pseudo-random, heavily nested prefixes (/8 to /32, several metrics
# per prefix), gateway and device routes, multipath routes, routes with a TOS (a lookup
# without tos never takes them), appended and prepended aliases of one group, metrics,
# protocols, routes over nexthop objects (a group, a blackhole object, an object on a device
# that goes down: its routes go), reject routes of every type, and routes through a device
# that goes down at the end (its routes go, except scope host ones; a multipath route keeps
# its other hops and shows the hop dead). Forwarding is on. The kernel's answer and rtsnapd's
# must agree:
#   a route (fibmatch prints the FIB entry) -> 200 with that very object, byte for byte;
#   "No route to host" (unreachable), "Invalid argument" (blackhole type or object),
#   "Permission denied" (prohibit) -> 200 with that route type;
#   "Network is unreachable" -> 404, or a throw route (the kernel goes on to table default,
#                  empty, and finds nothing).
# Malformed IPv4 values are in query_malformed.t.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl perl jq cmp
require_rtsnapd
perl -MJSON::PP -MSocket=inet_aton -e 1 2>/dev/null || tap_skip_all "perl JSON::PP/Socket missing"

ns_new NS
ip netns exec "$NS" sysctl -qw net.ipv4.conf.all.forwarding=1
veth_pair "$NS" l0 "" l0p && veth_pair "$NS" l1 "" l1p && veth_pair "$NS" d0 "" d0p &&
	ip -n "$NS" addr add 192.168.0.1/24 dev l0 && ip -n "$NS" addr add 192.168.1.1/24 dev l1 &&
	ip -n "$NS" addr add 192.168.2.1/24 dev d0 &&
	ip -n "$NS" nexthop add id 1 via 192.168.0.2 dev l0 &&
	ip -n "$NS" nexthop add id 2 via 192.168.1.2 dev l1 &&
	ip -n "$NS" nexthop add id 3 group 1/2 &&
	ip -n "$NS" nexthop add id 4 blackhole &&
	ip -n "$NS" nexthop add id 5 via 192.168.2.2 dev d0
tap_ok $? "namespace with three links and nexthop objects" || tap_done

# Routes and queries, from a fixed seed. Queries: addresses inside random routes (random
# host bits) and random addresses in 10.0.0.0/8 (mostly zero bits, so they hit nested
# prefixes); filter values: route prefixes, shorter and longer ones, addresses, gateways.
perl -MSocket=inet_aton,inet_ntoa - "$RTSNAP_TMP" <<'PERL'
use strict; use warnings;
my $dir = shift; srand(20261206);
sub ntoa { inet_ntoa(pack('B32', $_[0])) }
my $base = unpack('B32', inet_aton('10.0.0.0'));
# a random prefix in 10.0.0.0/8 with few distinct values per level, so prefixes nest
sub rprefix {
	my @lens = (8, 10, 12, 14, 16, 18, 20, 22, 24, 25, 26, 28, 30, 31, 32);
	my $l = $lens[int(rand(@lens))];
	my $b = substr($base, 0, 8);
	for my $i (8 .. 31) { $b .= ($i % 3 == 0 || $i > 20) && rand() < 0.5 ? '1' : '0'; }
	return (substr($b, 0, $l) . ('0' x (32 - $l)), $l);
}
my @gw = ('via 192.168.0.2 dev l0', 'via 192.168.1.2 dev l1', 'via 192.168.0.3 dev l0',
	'via 192.168.2.2 dev d0');
my (@routes, @q);
open(my $r, '>', "$dir/routes.batch") or die;
for my $i (1 .. 5000) {
	my ($b, $l) = rprefix();
	my $p = ntoa($b) . "/$l";
	my $m = (0, 100, 1024, 5)[int(rand(4))];
	my $g = $gw[int(rand(@gw))];
	my $x = rand();
	if ($x < 0.05) {
		my $t = (qw(unreachable blackhole prohibit throw))[int(rand(4))];
		print $r "route add $t $p metric $m\n";
	} elsif ($x < 0.09) {
		print $r "route add $p metric $m nexthop via 192.168.0.2 dev l0 nexthop via 192.168.1.2 dev l1" .
			(rand() < 0.5 ? " nexthop via 192.168.2.2 dev d0\n" : "\n");
	} elsif ($x < 0.12) {
		print $r "route add $p tos 0x" . ('10', '08', '04')[int(rand(3))] . " $g metric $m\n";
	} elsif ($x < 0.16) {
		print $r "route add $p nhid " . (1 + int(rand(5))) . " metric $m\n";
	} elsif ($x < 0.20) {
		print $r "route add $p $g metric $m\n";
		print $r "route " . (rand() < 0.5 ? 'append' : 'prepend') . " $p $gw[int(rand(3))] metric $m\n";
	} elsif ($x < 0.24) {
		print $r "route add $p $g metric $m mtu 1400 advmss 1360\n";
	} elsif ($x < 0.27) {
		print $r "route add $p dev d0 scope host metric $m\n";
	} elsif ($x < 0.60) {
		print $r "route add $p $g metric $m proto " . (qw(static bgp boot))[int(rand(3))] . "\n";
	} else {
		print $r "route add $p dev l" . int(rand(2)) . " metric $m\n";
	}
	push @routes, [$b, $l];
}
close $r;
for my $i (1 .. 2000) {
	my $a;
	if (rand() < 0.7) {
		my ($b, $l) = @{ $routes[int(rand(@routes))] };
		$a = substr($b, 0, $l) . join('', map { rand() < 0.5 ? 1 : 0 } 1 .. 32 - $l);
	} else {
		$a = substr($base, 0, 8) . join('', map { rand() < 0.3 ? 1 : 0 } 1 .. 24);
	}
	push @q, ntoa($a);
}
open(my $q, '>', "$dir/queries") or die;
print $q "$_\n" for @q;
close $q;
# filter values: prefix= (route prefixes, shorter, longer), covers= (addresses, prefixes)
open(my $f, '>', "$dir/filters") or die;
for my $i (1 .. 40) {
	my ($b, $l) = @{ $routes[int(rand(@routes))] };
	my $pl = $l + int(rand(5)) - 2;
	$pl = 0 if $pl < 0; $pl = 32 if $pl > 32;
	print $f "prefix " . ntoa(substr($b, 0, $pl) . ('0' x (32 - $pl))) . "/$pl\n";
	print $f "covers " . $q[int(rand(@q))] . "\n";
	print $f "covers " . ntoa($b) . "/$l\n";
}
print $f "prefix 0.0.0.0/0\nprefix default\nprefix 10.0.0.0/8\ncovers 10.255.255.255\n";
close $f;
PERL
ip -n "$NS" -4 -batch "$RTSNAP_TMP/routes.batch" -force 2>/dev/null
ip -n "$NS" link set dev d0 down
tap_cmd "kernel: main table has over 2500 routes" test "$(ip -n "$NS" -4 route show | wc -l)" -gt 2500
tap_is "$(ip -n "$NS" -4 rule show | wc -l)" 3 "kernel: only the default rules (local, main, default)"
tap_cmd "kernel: multipath, TOS, nexthop object, reject routes, a dead hop are there" sh -c \
	"ip -n $NS -4 route show | grep -q nexthop && ip -n $NS -4 route show | grep -q ' tos ' &&
	 ip -n $NS -4 route show | grep -q nhid && ip -n $NS -4 route show | grep -q '^unreachable' &&
	 ip -n $NS -4 route show | grep -q '^prohibit' && ip -n $NS -4 route show | grep -q '^throw' &&
	 ip -n $NS -4 route show | grep -q 'dead'"
tap_is "$(ip -n "$NS" -4 route show table default 2>/dev/null | wc -l)" 0 "kernel: table default is empty"

daemon_start "$NS" --debounce-ms 20 --family all
tap_ok $? "rtsnapd --family all starts" || tap_done
same_routes() {
	cmp -s <(http_get "$NS" "/routes?family=inet") <(ip netns exec "$NS" ip -j -4 route show table all)
}
wait_until 15 same_routes
tap_ok $? "the daemon's IPv4 snapshot is ip -j -4 route show table all"

# the kernel's answers (one ip -batch; each success prints one line on stdout, each error is
# numbered on stderr)
sed 's/^/route get fibmatch /' "$RTSNAP_TMP/queries" |
	ip -n "$NS" -4 -j -batch - -force >"$RTSNAP_TMP/k.out" 2>"$RTSNAP_TMP/k.err"
# rtsnapd's answers (one curl, keep-alive)
awk -v u="$RTSNAP_URL" -v d="$RTSNAP_TMP" '{ printf "url = \"%s/routes/lookup?addr=%s\"\noutput = \"%s/r.%d\"\n",
	u, $1, d, NR }' "$RTSNAP_TMP/queries" >"$RTSNAP_TMP/curl.cfg"
ip netns exec "$NS" curl -sS -g -K "$RTSNAP_TMP/curl.cfg" -w '%{http_code}\n' >"$RTSNAP_TMP/codes"

perl - "$RTSNAP_TMP" <<'PERL' >"$RTSNAP_TMP/verdict"
use strict; use warnings; use JSON::PP;
my $d = shift;
my $js = JSON::PP->new->canonical;
open(my $q, '<', "$d/queries") or die; my @q = map { chomp; $_ } <$q>; close $q;
open(my $c, '<', "$d/codes") or die; my @codes = map { chomp; $_ } <$c>; close $c;
my (%err, $last);
open(my $e, '<', "$d/k.err") or die;
while (<$e>) { $last = $1 if /^RTNETLINK answers: (.*)$/; $err{$1} = $last if /^Command failed -:(\d+)/; }
close $e;
open(my $o, '<', "$d/k.out") or die; my @out = grep { /\S/ } <$o>; close $o;
my %type_of = ('No route to host' => 'unreachable', 'Invalid argument' => 'blackhole',
	'Permission denied' => 'prohibit');
my ($n, $bad, %kind) = (0, 0);
for my $i (0 .. $#q) {
	my $a = $q[$i]; my $line = $i + 1; $n++;
	my $code = $codes[$i] // 'none';
	my $text = -s "$d/r.$line" ? do { local $/; open(my $f, '<', "$d/r.$line"); <$f> } : '{}';
	my $got = eval { decode_json($text) } // {};
	my $why;
	if (defined(my $msg = $err{$line})) {
		$kind{$msg}++;
		if (my $t = $type_of{$msg}) {
			$why = "kernel: $msg, rtsnapd $code " . ($got->{type} // 'unicast')
				unless $code eq '200' && ($got->{type} // '') eq $t;
		} elsif ($msg eq 'Network is unreachable') {
			$why = "kernel: $msg, rtsnapd $code " . ($got->{type} // 'unicast')
				unless $code eq '404' || ($code eq '200' && ($got->{type} // '') eq 'throw');
		} else { $why = "kernel: $msg" }
	} else {
		my $k = decode_json(shift(@out) // '[{}]')->[0];
		$kind{route}++;
		$kind{'route, multipath'}++ if $k->{nexthops};
		$kind{'route, nexthop object'}++ if $k->{nhid};
		$kind{'route, dead hop'}++ if $k->{nexthops} && grep { grep { $_ eq 'dead' } @{ $_->{flags} } } @{ $k->{nexthops} };
		if ($code ne '200') { $why = "kernel has a route, rtsnapd $code" }
		elsif ($js->encode($got) ne $js->encode($k)) { $why = 'another route' }
		$why .= '; kernel ' . encode_json($k) if $why;
	}
	if ($why) { $bad++; print "# $a: $why; got $text\n" if $bad <= 15; }
}
print "# answers: ", join(', ', map { "$_ $kind{$_}" } sort keys %kind), "\n";
print "# kernel lines left over: ", scalar(@out), "\n" if @out;
print "RESULT $n $bad\n";
PERL
grep '^#' "$RTSNAP_TMP/verdict"
read -r _ n bad < <(grep '^RESULT' "$RTSNAP_TMP/verdict")
tap_cmd "2000 lookups compared" test "${n:-0}" -ge 2000
tap_is "${bad:-?}" 0 "every IPv4 /routes/lookup is the route ip -4 route get fibmatch names ($n addresses)"

# the filters: prefix= is `ip route show root P`, covers= `ip route show match P`, both on
# every table; gateway= what jq selects from ip's objects (ip hides "gateway" under `via`)
nf=0 fbad=0
while read -r what val; do
	case $what in
	prefix) kflt="root $val" ;;
	covers) kflt="match $val" ;;
	esac
	ip netns exec "$NS" ip -j -4 route show table all $kflt | jq -c . >"$RTSNAP_TMP/fk"
	http_get "$NS" "/routes?family=inet&$what=$val" | jq -c . >"$RTSNAP_TMP/fd"
	nf=$((nf + 1))
	cmp -s "$RTSNAP_TMP/fk" "$RTSNAP_TMP/fd" ||
		{ fbad=$((fbad + 1)); [ $fbad -le 5 ] && tap_diag "$what=$val: $(diff "$RTSNAP_TMP/fk" "$RTSNAP_TMP/fd" | head -c 600)"; }
done <"$RTSNAP_TMP/filters"
tap_is "$fbad" 0 "prefix= and covers= are ip route show root / match on every table ($nf values)"

gbad=0
for g in 192.168.0.2 192.168.1.2 192.168.0.3 192.168.2.2 192.168.9.9; do
	ip netns exec "$NS" ip -j -4 route show table all |
		jq -c --arg g "$g" '[.[] | select(.gateway == $g or any(.nexthops[]?; .gateway == $g))]' >"$RTSNAP_TMP/gk"
	http_get "$NS" "/routes?family=inet&gateway=$g" | jq -c . >"$RTSNAP_TMP/gd"
	cmp -s "$RTSNAP_TMP/gk" "$RTSNAP_TMP/gd" || { gbad=$((gbad + 1)); tap_diag "gateway=$g differs"; }
done
tap_is "$gbad" 0 "gateway= is what jq selects from ip -j -4 route show table all (5 gateways)"
tap_cmd "gateway= finds multipath routes by a hop" test \
	"$(http_get "$NS" "/routes?family=inet&gateway=192.168.1.2" | jq 'map(select(.nexthops)) | length')" -gt 0

# combined: a prefix, a gateway and a table, paged 97 routes at a time, is the one answer
combo="prefix=10.0.0.0/9&gateway=192.168.0.2&table=main"
http_get "$NS" "/routes?family=inet&$combo" | jq -c '.[]' >"$RTSNAP_TMP/whole"
ip netns exec "$NS" ip -j -4 route show table main root 10.0.0.0/9 |
	jq -c '.[] | select(.gateway == "192.168.0.2" or any(.nexthops[]?; .gateway == "192.168.0.2"))' >"$RTSNAP_TMP/wholek"
tap_diff "$RTSNAP_TMP/wholek" "$RTSNAP_TMP/whole" "prefix=, gateway= and table= together ($(wc -l <"$RTSNAP_TMP/whole") routes)"
after='' pages=0
: >"$RTSNAP_TMP/paged"
while :; do
	http_get "$NS" "/routes?family=inet&$combo&limit=97${after:+&after=$after}" -D "$RTSNAP_TMP/h" |
		jq -c '.[]' >>"$RTSNAP_TMP/paged"
	pages=$((pages + 1))
	after=$(tr -d '\r' <"$RTSNAP_TMP/h" | awk -F': ' 'tolower($1)=="x-next-after"{print $2}')
	[ -n "$after" ] && [ $pages -lt 1000 ] || break
done
tap_diff "$RTSNAP_TMP/whole" "$RTSNAP_TMP/paged" "limit=97 and after= page through it ($pages pages)"
http_get "$NS" "/routes?family=inet&limit=50" -D "$RTSNAP_TMP/h" >/dev/null
after=$(tr -d '\r' <"$RTSNAP_TMP/h" | awk -F': ' 'tolower($1)=="x-next-after"{print $2}')
: >"$RTSNAP_TMP/paged"
while [ -n "$after" ]; do
	http_get "$NS" "/routes?family=inet&limit=500&after=$after" -D "$RTSNAP_TMP/h" | jq -c '.[]' >>"$RTSNAP_TMP/paged"
	after=$(tr -d '\r' <"$RTSNAP_TMP/h" | awk -F': ' 'tolower($1)=="x-next-after"{print $2}')
done
ip netns exec "$NS" ip -j -4 route show table all | jq -c '.[50:][]' >"$RTSNAP_TMP/restk"
tap_diff "$RTSNAP_TMP/restk" "$RTSNAP_TMP/paged" "paging every table (TOS routes and equal keys included) skips and repeats nothing"

# lookups in another table, where no rule sends the kernel: rtsnapd's answer is the one
# fibmatch gives once a rule sends every lookup to that table first
ip -n "$NS" route add 10.77.0.0/16 via 192.168.1.2 table 100 metric 3 &&
	ip -n "$NS" route add unreachable 10.77.7.0/24 table 100 &&
	ip -n "$NS" rule add pref 100 lookup 100
k1=$(ip netns exec "$NS" ip -j -4 route get fibmatch 10.77.1.1 | jq -c '.[0]')
k2=$(ip netns exec "$NS" ip -4 route get fibmatch 10.77.7.7 2>&1)
ip -n "$NS" rule del pref 100 lookup 100
wait_true 5 '[ "$(http_get "$NS" "/routes/lookup?addr=10.77.1.1&table=100" | jq -r .dst)" = 10.77.0.0/16 ]'
tap_is "$(http_get "$NS" "/routes/lookup?addr=10.77.1.1&table=100" | jq -c .)" "$k1" "table=100: the route fibmatch names when a rule looks up table 100"
tap_is "$(http_get "$NS" "/routes/lookup?addr=10.77.7.7&table=100" | jq -r .type) / $k2" \
	"unreachable / RTNETLINK answers: No route to host" "table=100: the unreachable route the kernel answers with"
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/routes/lookup?addr=10.77.1.1&table=200")" 404 \
	"a table without routes: 404"

# lookups never disturb the daemon
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")" 200 "daemon still healthy"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"

# with --family inet6 an IPv4 address is a 404 that says why
daemon_start "$NS" --family inet6
tap_ok $? "rtsnapd (IPv6 only) starts" || tap_done
tap_is "$(ip netns exec "$NS" curl -sg -w ' %{http_code}' "$RTSNAP_URL/routes/lookup?addr=10.0.0.1" | tr -d '\n')" \
	'{"error":"IPv4 is not followed: start rtsnapd with --family all"} 404' "IPv4 lookup without --family all: 404"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
