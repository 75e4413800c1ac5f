#!/bin/bash
# query_filters.t - every /routes filter against the same filter applied to what iproute2
# prints in the same namespace.
#
# Namespaces: several route kinds of tests/lib/routekinds.sh (static, multipath, reject,
# source routes, tables, expires, nexthop objects) and one with 20 000 generated routes in
# five tables (bench/lib.sh's generator, loaded with `ip -batch`), where results are
# fragmented enough to take the streaming path. Filter values come from the kernel's own
# listing (every table, device, protocol, type, metric and gateway it shows; every
# destination as prefix= and covers=, with its /16../64 parents and addresses inside it),
# never typed in. The kernel side of each comparison is `ip -j -6 route show table all`
# filtered by a small Perl reference (below), and for prefix= / covers= also
# `ip -6 route show table all root P` / `match A`, iproute2's own implementation.
# "expires" is masked here (json_*.t and expiring_*.t compare it with the kernel).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/routekinds.sh"

require_root
require_cmd ip curl jq perl
require_rtsnapd
perl -MJSON::PP -MSocket=inet_pton -e 1 2>/dev/null || tap_skip_all "perl JSON::PP/Socket missing"

MASK='s/"expires":-?[0-9]+/"expires":0/g'

# The reference: reads the kernel listing (argv[0]) and queries "k=v&k=v" on stdin; prints,
# for each query, the kernel's objects that match, as one JSON array on one line, with the
# objects' bytes exactly as ip printed them. Objects are split by brace depth.
cat >"$RTSNAP_TMP/ref.pl" <<'PERL'
use strict; use warnings;
use JSON::PP; use Socket qw(inet_pton AF_INET6);
my $txt;
{ local $/; open(my $fh, '<', $ARGV[0]) or die; $txt = <$fh>; close $fh; }
$txt =~ s/^\[//; $txt =~ s/\]\s*$//;
my (@raw, $d, $start, $instr);
$d = 0; $instr = 0;
for (my $i = 0; $i < length $txt; $i++) {
	my $c = substr($txt, $i, 1);
	if ($instr) { $i++ if $c eq '\\'; $instr = 0 if $c eq '"'; next; }
	if ($c eq '"') { $instr = 1; next; }
	if ($c eq '{') { $start = $i if $d++ == 0; }
	elsif ($c eq '}') { push @raw, substr($txt, $start, $i - $start + 1) if --$d == 0; }
}
my @obj = map { decode_json($_) } @raw;
my %bits;
sub bits { my ($p) = @_; return @{ $bits{$p} } if $bits{$p};
	my $q = $p eq 'default' ? '::/0' : $p; my ($a, $l) = split m{/}, $q;
	$l = 128 unless defined $l; my $b = inet_pton(AF_INET6, $a); die "bad $p" unless defined $b;
	$bits{$p} = [unpack('B128', $b), $l]; return @{ $bits{$p} }; }
sub in_pfx { my ($x, $p) = @_; my ($xb, $xl) = bits($x); my ($pb, $pl) = bits($p);
	return $xl >= $pl && substr($xb, 0, $pl) eq substr($pb, 0, $pl); }
sub uses { my ($o, $k, $v) = @_; return 1 if defined $o->{$k} && $o->{$k} eq $v;
	for my $n (@{ $o->{nexthops} || [] }) { return 1 if defined $n->{$k} && $n->{$k} eq $v; }
	return 0; }
while (my $q = <STDIN>) {
	chomp $q; my %f = map { split /=/, $_, 2 } split /&/, $q;
	my @m;
	for my $i (0 .. $#obj) {
		my $o = $obj[$i];
		next if defined $f{table} && $f{table} ne 'all' && ($o->{table} // 'main') ne $f{table};
		next if defined $f{dev} && !uses($o, 'dev', $f{dev});
		next if defined $f{gateway} && !uses($o, 'gateway', $f{gateway});
		next if defined $f{protocol} && ($o->{protocol} // 'boot') ne $f{protocol};
		next if defined $f{type} && ($o->{type} // 'unicast') ne $f{type};
		next if defined $f{metric} && $o->{metric} != $f{metric};
		next if defined $f{expiring} && (exists $o->{expires} ? 1 : 0) != $f{expiring};
		next if defined $f{prefix} && !in_pfx($o->{dst}, $f{prefix});
		next if defined $f{covers} && !in_pfx($f{covers}, $o->{dst});
		push @m, $raw[$i];
	}
	print '[', join(',', @m), "]\n";
}
PERL

# Prefix helpers: "parents P" prints P's parents at /16 /32 /40 /48 /56 /64 shorter than P;
# "inside P" prints P's first address + 1 and last address. Reads prefixes on stdin.
cat >"$RTSNAP_TMP/pfx.pl" <<'PERL'
use strict; use warnings; use Socket qw(inet_pton inet_ntop AF_INET6);
my $mode = shift;
while (my $p = <STDIN>) {
	chomp $p; $p = '::/0' if $p eq 'default'; $p .= '/128' unless $p =~ m{/};
	my ($a, $l) = split m{/}, $p; my $b = unpack('B128', inet_pton(AF_INET6, $a));
	my $out = sub { inet_ntop(AF_INET6, pack('B128', $_[0])) };
	if ($mode eq 'parents') {
		for my $n (16, 32, 40, 48, 56, 64) {
			print $out->(substr($b, 0, $n) . ('0' x (128 - $n))), "/$n\n" if $l > $n;
		}
	} else {
		print $out->(substr($b, 0, $l) . ('1' x (128 - $l))), "\n";
		print $out->(substr($b, 0, $l) . ('0' x (127 - $l)) . '1'), "\n" if $l < 127;
	}
}
PERL

# settle NS: wait until the daemon's /routes equals the kernel listing (expires masked),
# and keep that listing in $RTSNAP_TMP/k-NS.json.
settle() {
	local ns=$1 i
	for i in $(seq 20); do
		kernel_json "$ns" | sed -E "$MASK" >"$RTSNAP_TMP/k-$ns.json"
		http_get "$ns" /routes | sed -E "$MASK" >"$RTSNAP_TMP/r-$ns.json"
		cmp -s "$RTSNAP_TMP/k-$ns.json" "$RTSNAP_TMP/r-$ns.json" && return 0
		sleep 0.3
	done
	return 1
}

# check_group NS DESC IPMODE: run every query in $RTSNAP_TMP/q (one "k=v&..." per line)
# against the daemon (one curl for all) and the reference; with IPMODE root|match, also
# against `ip -j -6 route show table all root|match VALUE` (one ip -batch for all) for the
# query's single value. One TAP result for the group; differences go to diagnostics.
check_group() {
	local ns=$1 desc=$2 ipmode=${3:-} q want got ipw fails=0 n=0 d=$RTSNAP_TMP/cg
	rm -rf "$d"
	mkdir -p "$d"
	sort -u "$RTSNAP_TMP/q" >"$d/qs"
	perl "$RTSNAP_TMP/ref.pl" "$RTSNAP_TMP/k-$ns.json" <"$d/qs" >"$d/want"
	awk -v u="$RTSNAP_URL" -v d="$d" '{ printf "url = \"%s/routes?%s\"\noutput = \"%s/got.%d\"\n", u, $0, d, NR }' \
		"$d/qs" >"$d/curl.cfg"
	ip netns exec "$ns" curl -sS -g -K "$d/curl.cfg" 2>"$d/curl.err"
	if [ -n "$ipmode" ]; then
		sed "s|^[a-z]*=|route show table all $ipmode |" "$d/qs" | ip -n "$ns" -j -6 -batch - >"$d/ip" 2>"$d/ip.err"
	fi
	while read -r q; do
		n=$((n + 1))
		want=$(sed -n "${n}p" "$d/want")
		got=$(sed -E "$MASK" "$d/got.$n" 2>/dev/null)
		if [ "$got" != "$want" ]; then
			fails=$((fails + 1))
			tap_diag "/routes?$q differs from the reference:" "  got  ${got:0:300}" "  want ${want:0:300}"
		fi
		if [ -n "$ipmode" ]; then
			ipw=$(sed -n "${n}p" "$d/ip" | sed -E "$MASK")
			if [ "$got" != "$ipw" ]; then
				fails=$((fails + 1))
				tap_diag "/routes?$q differs from ip route show table all $ipmode ${q#*=}:" \
					"  got  ${got:0:300}" "  want ${ipw:0:300}"
			fi
		fi
	done <"$d/qs"
	[ -s "$d/curl.err" ] && tap_diag "curl: $(head -n 3 "$d/curl.err")"
	tap_ok $((fails != 0)) "$desc ($n queries)"
}

# uq NS JQ: the unique values JQ gives over the kernel listing of NS.
uq() { jq -r "[.[] | $2] | unique | .[]" "$RTSNAP_TMP/k-$1.json"; }

run_filters() {
	local ns=$1 label=$2 v t
	settle "$ns"
	tap_ok $? "$label: daemon and kernel agree before filtering" || return

	{ for v in $(uq "$ns" '.table // "main"'); do echo "table=$v"; done; echo table=all; } >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: table= (every table, by the name ip prints)"
	{ for v in $(uq "$ns" '.dev // empty, (.nexthops // [] | .[].dev)'); do echo "dev=$v"; done
	  echo dev=nosuchdev; } >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: dev= (every device, single path and nexthops)"
	{ for v in $(uq "$ns" '.protocol // "boot"'); do echo "protocol=$v"; done
	  for v in $(uq "$ns" '.type // "unicast"'); do echo "type=$v"; done
	  for v in $(uq "$ns" '.metric'); do echo "metric=$v"; done
	  for v in $(uq "$ns" '.gateway // empty, (.nexthops // [] | .[].gateway // empty)'); do echo "gateway=$v"; done
	  echo expiring=1; echo expiring=0; } >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: protocol=, type=, metric=, gateway=, expiring= (every value shown)"
	uq "$ns" '.dst' | shuf -n 30 --random-source=<(yes) >"$RTSNAP_TMP/dsts"
	{ sed 's|^|prefix=|' "$RTSNAP_TMP/dsts"
	  perl "$RTSNAP_TMP/pfx.pl" parents <"$RTSNAP_TMP/dsts" | sed 's|^|prefix=|'; } |
		sed 's|^prefix=default$|prefix=::/0|' >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: prefix= (destinations and their parents) = ip route show root" root
	{ sed 's|^|covers=|' "$RTSNAP_TMP/dsts"
	  perl "$RTSNAP_TMP/pfx.pl" inside <"$RTSNAP_TMP/dsts" | sed 's|^|covers=|'; } |
		sed 's|^covers=default$|covers=::/0|' >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: covers= (destinations and addresses inside) = ip route show match" match
	{ for v in $(uq "$ns" '.dev // empty' | head -n 3); do
		for t in $(uq "$ns" '.table // "main"' | head -n 3); do
			echo "dev=$v&table=$t&expiring=0"
			echo "table=$t&prefix=2001:db8::/32&type=unicast"
		done
	  done
	  perl "$RTSNAP_TMP/pfx.pl" inside <"$RTSNAP_TMP/dsts" | head -n 10 | sed 's|^|metric=1024\&covers=|'
	} >"$RTSNAP_TMP/q"
	check_group "$ns" "$label: combined filters"
}

for k in static multipath reject srcroute tables expires nexthop; do
	ns_new n
	"rk_$k" "$n" 2>"$RTSNAP_TMP/rk-$k.err"
	tap_ok $? "build $k routes" || { tap_diag "$(cat "$RTSNAP_TMP/rk-$k.err")"; continue; }
	daemon_start "$n" --debounce-ms 20
	tap_ok $? "$k: rtsnapd starts" || continue
	run_filters "$n" "$k"
	daemon_stop "$n" >/dev/null
done

# 20 000 generated routes in five tables (bench/lib.sh's generator and its ip -batch form)
BENCH_TMP=$RTSNAP_TMP/bench
. "$TOP/bench/lib.sh"
trap _cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ns_new BIG
rk_prep "$BIG" # no DAD: link-local routes exist at once, the listing does not change later
ok=0
for i in 0 1 2; do
	veth_pair "$BIG" "d$i" "" "d${i}p" || ok=1
	ip -n "$BIG" -6 addr add "2001:db8:ff0$i::1/64" dev "d$i" nodad || ok=1
done
ip -n "$BIG" -6 neigh replace 2001:db8:ff00::2 lladdr 02:00:00:00:00:02 dev d0 nud permanent
ip -n "$BIG" -6 neigh replace fe80::2 lladdr 02:00:00:00:02:02 dev d2 nud permanent
{ bench_gen_defaults | bench_nl_to_ip; bench_gen_routes 20000 0 1 ip; } | ip -n "$BIG" -6 -batch - || ok=1
tap_ok $ok "load 20 000 generated routes into $BIG"
daemon_start "$BIG" --debounce-ms 20
tap_ok $? "big: rtsnapd starts" || tap_done
run_filters "$BIG" big
{ for p in 2400::/5 2400::/8 2500::/8 2400::/12 ::/0 2000::/3 2001:db8::/32; do echo "prefix=$p"; done; } >"$RTSNAP_TMP/q"
check_group "$BIG" "big: wide prefix= = ip route show root" root

# paging: pages of 997 concatenate to the whole answer, with and without a filter
for q in "table=all" "dev=d1" "prefix=2400::/6" "covers=2400::1&table=all"; do
	after='' pages=0
	: >"$RTSNAP_TMP/pages"
	while :; do
		hdr=$(ip netns exec "$BIG" curl -sS -g -D - -o "$RTSNAP_TMP/page" \
			"$RTSNAP_URL/routes?$q&limit=997${after:+&after=$after}")
		jq -c '.[]' "$RTSNAP_TMP/page" >>"$RTSNAP_TMP/pages"
		after=$(printf '%s\n' "$hdr" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-next-after" { print $2 }')
		pages=$((pages + 1))
		[ -n "$after" ] && [ $pages -lt 100 ] || break
	done
	http_get "$BIG" "/routes?$q" | jq -c '.[]' >"$RTSNAP_TMP/whole"
	tap_diff "$RTSNAP_TMP/whole" "$RTSNAP_TMP/pages" "big: $q in $pages pages of 997 = the whole answer"
done
daemon_stop "$BIG" >/dev/null
tap_ok $? "big: rtsnapd exits 0 on SIGTERM"
tap_done
