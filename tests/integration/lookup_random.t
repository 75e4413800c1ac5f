#!/bin/bash
# lookup_random.t - GET /routes/lookup?addr=A[&from=S] against `ip -6 route get A [from S]`
# for thousands of random addresses, in a namespace where only the main table and the
# default rules matter (the local table holds only this namespace's own addresses, which
# the addresses never hit).
#
# The main table gets over 1000 pseudo-random, heavily nested prefixes (/16 to /128, several
# metrics per prefix, gateway and device routes), ECMP routes, reject routes of every type
# and source-specific routes (a destination with a source subtree is entered only through a
# matching source prefix: the kernel then skips that destination's source-less routes,
# and so must rtsnapd). Forwarding is on, so the kernel does not prefer routes by neighbour
# reachability. The kernel's answer and rtsnapd's must agree:
#   route          -> 200 with the same metric, protocol, and a nexthop (gateway, dev) the
#                     kernel could have picked (one of the route's nexthops for ECMP);
#   "No route to host" (unreachable), "Invalid argument" (blackhole), "Permission denied"
#                  (prohibit) -> 200 with that route type;
#   "Network is unreachable" -> 404, or a throw route (the kernel goes on to the next rule
#                  and finds nothing).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl perl jq
require_rtsnapd
perl -MJSON::PP -MSocket=inet_pton -e 1 2>/dev/null || tap_skip_all "perl JSON::PP/Socket missing"

ns_new NS
rk_prep "$NS"
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.forwarding=1
veth_pair "$NS" l0 "" l0p && veth_pair "$NS" l1 "" l1p &&
	ip -n "$NS" -6 addr add 2001:db8:ff00::1/64 dev l0 nodad &&
	ip -n "$NS" -6 addr add 2001:db8:ff01::1/64 dev l1 nodad
tap_ok $? "namespace with two links" || tap_done

# Routes and queries, from a fixed seed. Queries: addresses inside random routes (random
# host bits), random addresses in the same /36, and some with a source address.
perl -MSocket=inet_pton,inet_ntop,AF_INET6 - "$RTSNAP_TMP" <<'PERL'
use strict; use warnings;
my $dir = shift; srand(20261129);
sub ntop { inet_ntop(AF_INET6, pack('B128', $_[0])) }
my $base = unpack('B128', inet_pton(AF_INET6, '2001:db8::'));
# a random prefix in 2001:db8:0::/36 with few distinct values per level, so prefixes nest
sub rprefix {
	my @lens = (16, 24, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96, 112, 120, 127, 128);
	my $l = $lens[int(rand(@lens))];
	my $b = substr($base, 0, 32);
	for my $i (32 .. 127) { $b .= ($i < 36 ? '0' : ($i % 8 == 0 || $i % 13 == 0 || $i > 100 ? (rand() < 0.5 ? '1' : '0') : '0')); }
	return (substr($b, 0, $l) . ('0' x (128 - $l)), $l);
}
my (@routes, @q);
open(my $r, '>', "$dir/routes.batch") or die;
for my $i (1 .. 2000) {
	my ($b, $l) = rprefix();
	my $p = ntop($b) . "/$l";
	my $m = (1024, 100, 2000, 5)[int(rand(4))];
	my $x = rand();
	if ($x < 0.04) {
		my $t = (qw(unreachable blackhole prohibit throw))[int(rand(4))];
		print $r "route add $t $p metric $m\n";
	} elsif ($x < 0.08) {
		my ($sb, $sl) = (unpack('B128', inet_pton(AF_INET6, '2001:db8:aa00::')), 40 + 8 * int(rand(3)));
		substr($sb, 40, 8) = sprintf('%08b', int(rand(4)));
		my $s = ntop(substr($sb, 0, $sl) . ('0' x (128 - $sl))) . "/$sl";
		print $r "route add $p from $s via 2001:db8:ff0" . int(rand(2)) . "::2 metric $m\n";
		push @q, [ntop(substr($b, 0, $l) . join('', map { rand() < 0.5 ? 1 : 0 } 1 .. 128 - $l)),
			ntop(substr($sb, 0, $sl) . join('', map { rand() < 0.5 ? 1 : 0 } 1 .. 128 - $sl))];
	} elsif ($x < 0.11) {
		print $r "route add $p metric $m nexthop via 2001:db8:ff00::2 dev l0 nexthop via 2001:db8:ff01::2 dev l1\n";
	} elsif ($x < 0.55) {
		print $r "route add $p via 2001:db8:ff0" . int(rand(2)) . "::2 metric $m\n";
	} else {
		print $r "route add $p dev l" . int(rand(2)) . " metric $m\n";
	}
	push @routes, [$b, $l];
}
close $r;
for my $i (1 .. 3000) {
	my $a;
	if (rand() < 0.7) {
		my ($b, $l) = @{ $routes[int(rand(@routes))] };
		$a = substr($b, 0, $l) . join('', map { rand() < 0.5 ? 1 : 0 } 1 .. 128 - $l);
	} else {
		$a = substr($base, 0, 36) . join('', map { rand() < 0.3 ? 1 : 0 } 1 .. 92);
	}
	push @q, [ntop($a), undef];
}
open(my $q, '>', "$dir/queries") or die;
print $q join(' ', grep { defined } @$_), "\n" for @q;
close $q;
PERL
ip -n "$NS" -6 -batch "$RTSNAP_TMP/routes.batch" -force 2>/dev/null
tap_cmd "kernel: main table has over 1000 routes" test "$(ip -n "$NS" -6 route show | wc -l)" -gt 1000
tap_is "$(ip -n "$NS" -6 rule show | wc -l)" 2 "kernel: only the default rules (local, main)"
tap_cmd "kernel: source-specific, ECMP and reject routes are there" sh -c \
	"ip -n $NS -6 route show | grep -q ' from ' && ip -n $NS -6 route show | grep -q nexthop &&
	 ip -n $NS -6 route show | grep -q '^unreachable' && ip -n $NS -6 route show | grep -q '^blackhole'"

daemon_start "$NS" --debounce-ms 20
tap_ok $? "rtsnapd starts" || tap_done
same_count() { [ "$(http_get "$NS" /routes | jq length)" = "$(kernel_json "$NS" | jq length)" ]; }
wait_until 10 same_count
tap_ok $? "the daemon's snapshot has every route"

# the kernel's answers (one ip -batch; successes on stdout, errors numbered on stderr)
awk '{ printf("route get %s%s\n", $1, (NF > 1 ? " from " $2 : "")) }' "$RTSNAP_TMP/queries" |
	ip -n "$NS" -6 -j -batch - -force >"$RTSNAP_TMP/k.out" 2>"$RTSNAP_TMP/k.err"
# rtsnapd's answers (one curl, keep-alive)
awk -v u="$RTSNAP_URL" -v d="$RTSNAP_TMP" '{ printf "url = \"%s/routes/lookup?addr=%s%s\"\noutput = \"%s/r.%d\"\n",
	u, $1, (NF > 1 ? "&from=" $2 : ""), d, NR }' "$RTSNAP_TMP/queries" >"$RTSNAP_TMP/curl.cfg"
ip netns exec "$NS" curl -sS -g -K "$RTSNAP_TMP/curl.cfg" -w '%{http_code}\n' >"$RTSNAP_TMP/codes"

perl - "$RTSNAP_TMP" <<'PERL' >"$RTSNAP_TMP/verdict"
use strict; use warnings; use JSON::PP;
my $d = shift;
open(my $q, '<', "$d/queries") or die; my @q = map { chomp; [split / /] } <$q>; close $q;
open(my $c, '<', "$d/codes") or die; my @codes = map { chomp; $_ } <$c>; close $c;
my (%ok, %err, $last);
open(my $o, '<', "$d/k.out") or die;
while (<$o>) { for my $r (@{ decode_json($_) }) { $ok{$r->{dst} . ' ' . ($r->{from} // '::')} = $r; } }
close $o;
open(my $e, '<', "$d/k.err") or die;
while (<$e>) { $last = $1 if /^RTNETLINK answers: (.*)$/; $err{$1} = $last if /^Command failed -:(\d+)/; }
close $e;
my %type_of = ('No route to host' => 'unreachable', 'Invalid argument' => 'blackhole',
	'Permission denied' => 'prohibit');
my ($n, $bad, %kind) = (0, 0);
for my $i (0 .. $#q) {
	my ($a, $s) = @{ $q[$i] }; my $line = $i + 1; $n++;
	my $code = $codes[$i] // 'none';
	my $got = -s "$d/r.$line" ? decode_json(do { local $/; open(my $f, '<', "$d/r.$line"); <$f> }) : {};
	my $why;
	my $k = $ok{"$a " . ($s // '::')};
	if ($k) {
		$kind{route}++;
		my @nh = $got->{nexthops} ? @{ $got->{nexthops} } : ({ gateway => $got->{gateway}, dev => $got->{dev} });
		if ($code ne '200') { $why = "kernel has a route, rtsnapd $code" }
		elsif (($got->{type} // 'unicast') ne 'unicast') { $why = "type $got->{type}" }
		elsif ($got->{metric} != $k->{metric}) { $why = "metric $got->{metric} != $k->{metric}" }
		elsif (($got->{protocol} // 'boot') ne ($k->{protocol} // 'boot')) { $why = 'protocol' }
		elsif (!grep { ($_->{gateway} // '') eq ($k->{gateway} // '') && $_->{dev} eq $k->{dev} } @nh) { $why = 'nexthop' }
	} elsif (defined(my $msg = $err{$line})) {
		$kind{$msg}++;
		if (my $t = $type_of{$msg}) {
			$why = "kernel: $msg, rtsnapd $code " . ($got->{type} // 'unicast')
				unless $code eq '200' && ($got->{type} // '') eq $t;
		} elsif ($msg eq 'Network is unreachable') {
			$why = "kernel: $msg, rtsnapd $code " . ($got->{type} // 'unicast')
				unless $code eq '404' || ($code eq '200' && ($got->{type} // '') eq 'throw');
		} else { $why = "kernel: $msg" }
	} else { $why = 'no kernel answer' }
	if ($why) { $bad++; print "# $a" . ($s ? " from $s" : '') . ": $why; got " . encode_json($got) . ($k ? '; kernel ' . encode_json($k) : '') . "\n" if $bad <= 15; }
}
print "# answers: ", join(', ', map { "$_ $kind{$_}" } sort keys %kind), "\n";
print "RESULT $n $bad\n";
PERL
grep '^#' "$RTSNAP_TMP/verdict"
read -r _ n bad < <(grep '^RESULT' "$RTSNAP_TMP/verdict")
tap_cmd "over 3000 lookups compared" test "${n:-0}" -gt 3000
tap_is "${bad:-?}" 0 "every /routes/lookup agrees with ip -6 route get ($n addresses)"

# lookups never disturb the daemon
tap_is "$(ip netns exec "$NS" curl -sg -o /dev/null -w '%{http_code}' "$RTSNAP_URL/healthz")" 200 "daemon still healthy"
daemon_stop "$NS" >/dev/null
tap_ok $? "rtsnapd exits 0 on SIGTERM"
tap_done
