#!/bin/bash
# make install / make uninstall with PREFIX and DESTDIR, and the man page: mandoc -Tlint is
# silent; every option of `rtsnapd --help`, every endpoint, signal and exit status is in it.
. "$(dirname "$0")/../lib/common.sh"
require_cmd make
require_rtsnapd
T=$RTSNAP_TMP

for prefix in /usr/local /usr /opt/rtsnap; do
	d=$T/root$(echo "$prefix" | tr / _)
	make -C "$TOP" --no-print-directory install DESTDIR="$d" PREFIX="$prefix" >"$T/install.log" 2>&1
	tap_ok $? "make install PREFIX=$prefix DESTDIR=..." || tap_diag "$(tail "$T/install.log")"
	(cd "$d" && find . -type f | sort) >"$T/got"
	cat >"$T/want" <<EOF
./etc/default/rtsnapd
.$prefix/lib/systemd/system/rtsnapd.service
.$prefix/sbin/rtsnapd
.$prefix/share/doc/rtsnapd/examples/web-config.yml
.$prefix/share/man/man8/rtsnapd.8
.$prefix/share/rtsnapd/grafana/rtsnapd.json
.$prefix/share/rtsnapd/prometheus/rtsnapd.rules.yml
EOF
	sort -o "$T/want" "$T/want"
	tap_diff "$T/want" "$T/got" "PREFIX=$prefix: binary in sbin, man page, unit, /etc/default/rtsnapd, examples, rules, dashboard"
	unit=$d$prefix/lib/systemd/system/rtsnapd.service
	tap_is "$(sed -n 's/^ExecStart=//p' "$unit")" "$prefix/sbin/rtsnapd \$ARGS" "PREFIX=$prefix: the unit starts $prefix/sbin/rtsnapd"
	tap_is "$(stat -c %a "$d$prefix/sbin/rtsnapd") $(stat -c %a "$unit") $(stat -c %a "$d/etc/default/rtsnapd")" \
		"755 644 644" "modes: binary 0755, unit and defaults 0644"
	echo 'ARGS="--listen [::1]:1"' >"$d/etc/default/rtsnapd"
	make -C "$TOP" --no-print-directory install DESTDIR="$d" PREFIX="$prefix" >"$T/install.log" 2>&1
	tap_is "$(cat "$d/etc/default/rtsnapd")" 'ARGS="--listen [::1]:1"' "a second make install keeps an edited /etc/default/rtsnapd"
	make -C "$TOP" --no-print-directory uninstall DESTDIR="$d" PREFIX="$prefix" >"$T/install.log" 2>&1
	tap_is "$(cd "$d" && find . -type f)" "./etc/default/rtsnapd" "make uninstall removes everything but the edited defaults"
done
if command -v systemd-analyze >/dev/null; then
	d=$T/root_usr
	make -C "$TOP" --no-print-directory install DESTDIR="$d" PREFIX=/usr >/dev/null 2>&1
	sed "s|/usr/sbin/rtsnapd|$d/usr/sbin/rtsnapd|" "$d/usr/lib/systemd/system/rtsnapd.service" >"$T/rtsnapd.service"
	out=$(MANPATH=$d/usr/share/man systemd-analyze verify "$T/rtsnapd.service" 2>&1)
	tap_is "$out" "" "systemd-analyze verify of the installed unit is silent"
else
	tap_skip "systemd-analyze not installed"
fi

M=$TOP/man/rtsnapd.8
if command -v mandoc >/dev/null; then
	tap_is "$(mandoc -Tlint "$M" 2>&1)" "" "mandoc -Tlint is silent on rtsnapd(8)"
else
	tap_skip "mandoc not installed"
fi
txt=$(MANWIDTH=200 man -l "$M" 2>/dev/null | col -b)
missing=""
for o in $("$RTSNAPD" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -qF -- "$o" <<<"$txt" || missing+=" $o"
done
tap_is "$missing" "" "every option of rtsnapd --help is in the man page"
missing=""
for e in /ipv6_route /proc/net/ipv6_route /routes /routes/lookup /expiring /metrics /status /healthz /web/about.json; do
	grep -qF -- "$e" <<<"$txt" || missing+=" $e"
done
tap_is "$missing" "" "every endpoint is in the man page"
for sect in SIGNALS "EXIT STATUS" FILES "WEB CONFIGURATION"; do
	grep -q "^$sect" <<<"$txt"
	tap_ok $? "the man page has $sect"
done
tap_done
