#!/bin/bash
# inet_random.t - the randomized differential test of the IPv4 models against the kernel this
# runs on: 5 000 random operations (tests/data/capture_inet_notify.sh bulk: routes added,
# prepended, appended, replaced, deleted and flushed with TOS, metrics, multipath, IPv6
# gateways and nexthop objects; objects and groups replaced and deleted; devices down and up;
# carrier lost and back; addresses added and removed, the last one of a device included) in 50
# batches, recorded live in a fresh namespace with every notification and the kernel's dump
# and /proc/net/route after each batch. Replayed without a dump of their own by
# build/tests/test_mirror4 (the IPv4 mirror, a snapshot published after every batch) and
# build/tests/test_fib4 (the reference model): after every batch both must equal the kernel,
# route for route and byte for byte in /proc/net/route. Zero differences, zero drift.
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip
for b in build/tools/nlrec4 build/tests/test_fib4 build/tests/test_mirror4; do
	[ -x "$TOP/$b" ] || tap_skip_all "$b missing (make all)"
done

(cd "$TOP" && INET_NOTIFY_OUT=$RTSNAP_TMP timeout 600 tests/data/capture_inet_notify.sh bulk) \
	>"$RTSNAP_TMP/record.log" 2>&1
tap_ok $? "record 5 000 random operations in 50 batches live" ||
	{ sed 's/^/# /' "$RTSNAP_TMP/record.log" >&2; tap_done; }
d=$RTSNAP_TMP/inet-notify-bulk
tap_is "$(grep -c '' "$d/steps.txt" | awk '{print ($1 >= 50)}')" 1 "50 batches recorded"
tap_is "$(awk '/^[0-9]/ {n++} END {print (n > 1000)}' "$d/notify.txt")" 1 \
	"more than 1 000 notifications"
out=$("$TOP/build/tests/test_mirror4" "$d" 2>&1)
tap_ok $? "the IPv4 mirror's snapshots equal the kernel's file and dump after every batch" ||
	printf '%s\n' "$out" | sed 's/^/# /' >&2
printf '%s\n' "$out" | grep '^# ' | grep -v '^# ok' >&2
out=$("$TOP/build/tests/test_fib4" "$d" 2>&1)
tap_ok $? "the reference model equals the kernel's dump after every batch" ||
	printf '%s\n' "$out" | sed 's/^/# /' >&2
printf '%s\n' "$out" | grep '^# ' | grep -v '^# ok' >&2
tap_done
