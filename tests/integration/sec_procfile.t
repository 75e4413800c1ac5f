#!/bin/bash
# --proc-file against a local attacker (issue 13, item 1). An unprivileged user (uid 65534, as
# `setpriv --reuid=65534` leaves it) plants symlinks to a root-owned 0600 file at every name the
# daemon could predict (PATH.tmp.<pid> for the next pids, PATH.tmp, .PATH.tmp, PATH itself) in a
# sticky world-writable directory and in a plain world-writable one. The file must stay
# untouched (checksum, mode, owner, link count). rtsnapd refuses to start in a directory other
# users can write to without the sticky bit, in one owned by another user, and through a
# symlink to such a directory; in a sticky one it warns and writes a fresh root-owned 0644 file
# (replacing the planted link, not following it). The normal case: the file equals the daemon's
# /ipv6_route, follows a route change, keeps mode 0644 under umask 077 and leaves no temporary
# files behind.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl setpriv sha256sum stat perl timeout
require_rtsnapd

ns_new NS
veth_pair "$NS" d0 "$NS" d1 || tap_bail "cannot create a veth pair"
ip -n "$NS" -6 route add 2001:db8:1::/64 dev d0

chmod 0711 "$RTSNAP_TMP" # uid 65534 must reach the directories below, not list them
VICTIM=$RTSNAP_TMP/victim
printf 'root-only secret\n' >"$VICTIM"
chmod 0600 "$VICTIM"
victim_state() { echo "$(sha256sum <"$VICTIM" | cut -d' ' -f1) $(stat -c '%a %u %g %s %h %F' "$VICTIM")"; }
VICTIM0=$(victim_state)
tap_diag "fs.protected_symlinks=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

# plant DIR BASE: as uid 65534, symlinks to the victim at PATH, PATH.tmp, .PATH.tmp, PATH~ and
# PATH.tmp.<pid> for the next 2000 pids (the old temporary name).
plant() {
	local last
	last=$(cat /proc/sys/kernel/ns_last_pid)
	as_nobody perl -e '
		my ($d, $b, $v, $lo, $hi) = @ARGV;
		symlink($v, "$d/$_") or die "symlink $d/$_: $!\n" for ($b, "$b.tmp", ".$b.tmp", "$b~");
		symlink($v, "$d/$b.tmp.$_") or die "symlink: $!\n" for ($lo .. $hi);
	' "$1" "$2" "$VICTIM" $((last + 1)) $((last + 2000))
}

# rtsnapd's own pid (daemon_start records the one of `ip netns exec`).
real_pid() {
	ip netns pids "$NS" | while read -r p; do
		[ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$RTSNAPD")" ] && echo "$p"
	done | head -1
}

# file_is_current FILE: FILE equals the daemon's /ipv6_route.
file_is_current() {
	http_get "$NS" /ipv6_route >"$RTSNAP_TMP/served" && cmp -s "$RTSNAP_TMP/served" "$1"
}

# refused DIR DESC: rtsnapd with --proc-file DIR/ipv6_route exits 1 by itself, saying why.
refused() {
	local dir=$1 log="$RTSNAP_TMP/refused.log" st
	shift
	timeout 20 ip netns exec "$NS" "$RTSNAPD" --listen "$RTSNAP_LISTEN" --proc-file "$dir/ipv6_route" \
		>"$log" 2>&1 </dev/null
	st=$?
	tap_is "$st" 1 "$* (exit status)"
	tap_diag "$(grep -m1 -- --proc-file "$log")"
	grep -q -- '--proc-file: .*refusing to write there' "$log"
	tap_ok $? "$*: the log says why"
}

# ---- a sticky world-writable directory (like /tmp): accepted with a warning
D1=$RTSNAP_TMP/sticky
mkdir -m 1777 "$D1"
plant "$D1" ipv6_route
tap_ok $? "uid 65534 planted symlinks in the sticky directory"
daemon_start "$NS" --debounce-ms 20 --proc-file "$D1/ipv6_route" || tap_bail "daemon did not start"
pid=$(real_pid)
as_nobody perl -e 'symlink($ARGV[0], $ARGV[1])' "$VICTIM" "$D1/ipv6_route.tmp.$pid" 2>/dev/null
ip -n "$NS" -6 route add 2001:db8:2::/64 dev d0
wait_until 5 file_is_current "$D1/ipv6_route"
tap_ok $? "sticky dir: the file equals /ipv6_route after a route change"
tap_is "$(victim_state)" "$VICTIM0" "sticky dir: the root-owned 0600 file is untouched"
tap_is "$(stat -c '%F %u %a' "$D1/ipv6_route")" "regular file 0 644" \
	"sticky dir: PATH is a root-owned 0644 regular file (the planted link was replaced)"
left=$(find "$D1" -mindepth 1 ! -name ipv6_route ! \( -type l -user 65534 \) | wc -l)
tap_is "$left" 0 "sticky dir: nothing left besides PATH and the planted links"
grep -q -- "--proc-file: $D1 (mode 1777) is writable by other users" "$(daemon_log "$NS")"
tap_ok $? "sticky dir: the log warns about the directory"
daemon_stop "$NS" >/dev/null
tap_ok $? "sticky dir: rtsnapd exits 0"

# ---- a plain world-writable directory: refused, nothing written
D2=$RTSNAP_TMP/open
mkdir -m 0777 "$D2"
chmod 0777 "$D2"
plant "$D2" ipv6_route
tap_ok $? "uid 65534 planted symlinks in the world-writable directory"
refused "$D2" "world-writable directory without the sticky bit is refused"
tap_is "$(victim_state)" "$VICTIM0" "world-writable dir: the root-owned 0600 file is untouched"
tap_is "$(find "$D2" -mindepth 1 ! \( -type l -user 65534 \) | wc -l)" 0 \
	"world-writable dir: rtsnapd created nothing there"

ln -s "$D2" "$RTSNAP_TMP/via-link"
refused "$RTSNAP_TMP/via-link" "a symlink to that directory is refused too"

D3=$RTSNAP_TMP/users
mkdir -m 0755 "$D3"
chown 65534:65534 "$D3"
refused "$D3" "a directory owned by another user is refused"

D4=$RTSNAP_TMP/group
mkdir -m 0775 "$D4"
chgrp 65534 "$D4"
chmod 0775 "$D4"
refused "$D4" "a directory another group can write to is refused"
tap_is "$(victim_state)" "$VICTIM0" "after all attempts the root-owned 0600 file is untouched"

# ---- the normal case: a directory only root writes to, under umask 077
D5=$RTSNAP_TMP/safe
mkdir -m 0755 "$D5"
old_umask=$(umask)
umask 077
daemon_start "$NS" --debounce-ms 20 --proc-file "$D5/ipv6_route"
st=$?
umask "$old_umask"
tap_ok $st "safe dir: rtsnapd starts" || tap_done
wait_until 5 file_is_current "$D5/ipv6_route"
tap_ok $? "safe dir: the file equals /ipv6_route"
ip -n "$NS" -6 route add 2001:db8:3::/64 dev d0
wait_until 5 file_is_current "$D5/ipv6_route"
tap_ok $? "safe dir: the file follows a route change"
same_as_kernel() {
	kernel_proc "$NS" | proc_masked >"$RTSNAP_TMP/k"
	proc_masked "$D5/ipv6_route" >"$RTSNAP_TMP/f"
	cmp -s "$RTSNAP_TMP/k" "$RTSNAP_TMP/f"
}
wait_until 5 same_as_kernel
tap_diff "$RTSNAP_TMP/k" "$RTSNAP_TMP/f" "safe dir: the file equals the kernel's ipv6_route (refcnt masked)"
tap_is "$(stat -c '%F %u %a' "$D5/ipv6_route")" "regular file 0 644" "safe dir: mode 0644 under umask 077"
tap_is "$(ls -A "$D5")" ipv6_route "safe dir: no temporary file left behind"
tap_ok "$(! grep -q 'writable by other users' "$(daemon_log "$NS")"; echo $?)" "safe dir: no warning"
daemon_stop "$NS" >/dev/null
tap_ok $? "safe dir: rtsnapd exits 0"
tap_is "$(victim_state)" "$VICTIM0" "the root-owned 0600 file is untouched at the end"
tap_done
