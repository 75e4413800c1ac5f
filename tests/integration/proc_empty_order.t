#!/bin/bash
# proc_empty_order.t - where an empty table's placeholder row goes (issue 12, item 4).
#
# The kernel keeps tables in hash-bucket order (id % 256), the newest first within a bucket,
# and main and local are the oldest tables of theirs, so an empty table of bucket 254 (510,
# 766, ...) always comes before main. rtsnapd keeps the order of every table it has seen, also
# once a table becomes empty, puts a table created while it runs first in its bucket, and puts
# an empty table it finds at start (named by a rule) before main or local. (Among the other
# tables of a bucket, the age of an empty table found at start cannot be known.)
. "$(dirname "$0")/../lib/common.sh"

require_root
require_cmd ip curl
require_rtsnapd

ns_new NS
veth_pair "$NS" t0 "" t1 || tap_bail "veth"
ip -n "$NS" -6 route add 2001:db8:1::/64 dev t0 table 766
ip -n "$NS" -6 route add 2001:db8:2::/64 dev t0 table 510
# bucket 255: an empty table named by a rule; its age against local is known (local is older)
ip -n "$NS" -6 rule add from 2001:db8:77::/48 table 767
check_proc_once "$NS" "--once: tables of main's and local's buckets in kernel order"
daemon_start "$NS" --interval 0 || tap_bail "daemon did not start"
check_proc_http "$NS" /ipv6_route "daemon: the same"
ip -n "$NS" -6 route flush table 766
check_proc_http "$NS" /ipv6_route "table 766 emptied: its row stays where the table was (between 510 and main)"
ip -n "$NS" -6 route add 2001:db8:4::/64 dev t0 table 1278 # a new table of bucket 254
check_proc_http "$NS" /ipv6_route "a table created while rtsnapd runs goes first in its bucket"
ip -n "$NS" -6 route flush table 1278
ip -n "$NS" -6 route flush table 510
check_proc_http "$NS" /ipv6_route "all of them emptied: placeholder rows in the kernel's order"
ip -n "$NS" -6 rule add from 2001:db8:78::/48 table 2046 # created by a rule while running
check_proc_http "$NS" /ipv6_route "a table created by a rule while rtsnapd runs: first in its bucket"
daemon_stop "$NS" >/dev/null
tap_ok $? "clean exit"
tap_done
