#!/bin/bash
# inet_notify.t - the IPv4 model (src/route/fib4.c) against the kernel this runs on: the
# "routes" and "links" streams of tests/data/capture_inet_notify.sh are recorded live in fresh
# namespaces (every notification, and the kernel's dump and /proc/net/route after every step)
# and replayed by build/tests/test_fib4, which must equal the kernel's dump after every step
# (announced changes and the silent flushes of device down, carrier loss, the last address,
# device and nexthop object deletion), and by build/tests/test_replay4, which renders every
# step's dump as /proc/net/route and compares with the kernel's file, and by
# build/tests/test_mirror4: the IPv4 mirror (src/mirror/mirror4.c) fed the same stream, a
# snapshot published after every step equal to the kernel's /proc/net/route and dump.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip
for b in build/tools/nlrec4 build/tests/test_fib4 build/tests/test_replay4 build/tests/test_mirror4; do
	[ -x "$TOP/$b" ] || tap_skip_all "$b missing (make all)"
done

for s in routes links; do
	(cd "$TOP" && INET_NOTIFY_OUT=$RTSNAP_TMP tests/data/capture_inet_notify.sh "$s") \
		>"$RTSNAP_TMP/record-$s.log" 2>&1
	tap_ok $? "record the $s stream live" || { sed 's/^/# /' "$RTSNAP_TMP/record-$s.log" >&2; continue; }
	d=$RTSNAP_TMP/inet-notify-$s
	out=$("$TOP/build/tests/test_fib4" "$d" 2>&1)
	tap_ok $? "$s: the model equals the kernel's dump after every step"
	printf '%s\n' "$out" | grep '^# ' >&2
	out=$("$TOP/build/tests/test_mirror4" "$d" 2>&1)
	tap_ok $? "$s: the IPv4 mirror's snapshots equal the kernel's file and dump after every step" ||
		printf '%s\n' "$out" | sed 's/^/# /' >&2
	printf '%s\n' "$out" | grep '^# ' >&2
	out=$("$TOP/build/tests/test_replay4" "$d" "$d/start" "$d/end" 2>&1)
	tap_ok $? "$s: every step renders as the kernel's /proc/net/route, first and last as ip -j too" ||
		printf '%s\n' "$out" | sed 's/^/# /' >&2
done
tap_done
