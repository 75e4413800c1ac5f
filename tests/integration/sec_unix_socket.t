#!/bin/bash
# unix:/path listeners (issue 13, item 5): the socket's mode does not come from the umask
# (default 0660, --unix-mode, --unix-group); a second instance on the same path refuses to
# start and leaves the first one reachable; a stale socket (nobody answers) is replaced, a
# file that is not a socket is refused and left alone; at exit only the daemon's own socket
# is removed.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl setpriv python3 timeout stat
require_rtsnapd

ns_new NS
ns_new NS2
chmod 0711 "$RTSNAP_TMP"
S=$RTSNAP_TMP/rtsnapd.sock

# can UID GID SOCK: can that user talk to the daemon on SOCK?
can() {
	setpriv --reuid="$1" --regid="$2" --clear-groups -- \
		curl -sf --max-time 5 --unix-socket "$3" http://x/healthz >/dev/null 2>&1
}
# second NS ARG...: another rtsnapd in NS; its exit status (1 expected) and log in $RTSNAP_TMP/2.log
second() {
	local ns=$1
	shift
	timeout 20 ip netns exec "$ns" "$RTSNAPD" --listen '[::1]:9816' "$@" >"$RTSNAP_TMP/2.log" 2>&1 </dev/null
}
mkstale() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$1"; }

# ---- default mode under umask 000
old_umask=$(umask)
umask 000
daemon_start "$NS" --listen "unix:$S"
st=$?
umask "$old_umask"
tap_ok $st "rtsnapd starts with a unix listener under umask 000" || tap_done
tap_is "$(stat -c '%F %a %u' "$S")" "socket 660 0" "the socket is 0660 root's, not 0777 from the umask"
can 0 0 "$S"
tap_ok $? "root is served on it"
can 65534 65534 "$S"
tap_ok "$([ $? != 0 ]; echo $?)" "uid 65534 (not in its group) is not"
ino=$(stat -c %i "$S")

# ---- a second instance on the same path
second "$NS2" --listen "unix:$S"
tap_is "$?" 1 "a second instance on the same path refuses to start"
tap_ok "$(grep -q 'another process answers on this socket' "$RTSNAP_TMP/2.log"; echo $?)" "and says why"
tap_diag "$(grep -m1 answers "$RTSNAP_TMP/2.log")"
tap_is "$(stat -c %i "$S" 2>/dev/null)" "$ino" "the first instance's socket is still there"
can 0 0 "$S"
tap_ok $? "the first instance is still reachable"

# ---- at exit, only its own socket is removed
mv "$S" "$S.moved"
mkstale "$S"
ino2=$(stat -c %i "$S")
daemon_stop "$NS" >/dev/null
tap_ok $? "first instance exits 0"
tap_is "$(stat -c %i "$S" 2>/dev/null)" "$ino2" "at exit it left alone a socket that is not its own"
rm -f "$S.moved"

# ---- the stale socket left there is replaced; --unix-mode and --unix-group apply
daemon_start "$NS" --listen "unix:$S" --unix-mode 0660 --unix-group 65534
tap_ok $? "a stale socket (nobody answers) does not stop a new instance"
tap_is "$(stat -c '%F %a %g' "$S")" "socket 660 65534" "--unix-mode 0660 --unix-group 65534 set mode and group"
can 65534 65534 "$S"
tap_ok $? "a member of that group is served"
can 65533 65533 "$S"
tap_ok "$([ $? != 0 ]; echo $?)" "another user is not"
tap_ok "$(grep -q 'removing the stale socket' "$(daemon_log "$NS")"; echo $?)" "the log says the stale socket was removed"
daemon_stop "$NS" >/dev/null
tap_ok "$([ ! -e "$S" ]; echo $?)" "its own socket is removed at exit"

daemon_start "$NS" --listen "unix:$S" --unix-mode 0666
tap_is "$(stat -c '%a' "$S")" 666 "--unix-mode 0666 opens it to everyone"
can 65534 65534 "$S"
tap_ok $? "uid 65534 is served then"
daemon_stop "$NS" >/dev/null

# ---- a file that is not a socket
printf 'keep me\n' >"$S"
second "$NS2" --listen "unix:$S"
tap_is "$?" 1 "a regular file at the path: refused"
tap_is "$(cat "$S")" "keep me" "and the file is left alone"
tap_ok "$(grep -q 'is not a socket' "$RTSNAP_TMP/2.log"; echo $?)" "the log says why"
rm -f "$S"

second "$NS2" --listen "unix:$S" --unix-mode 999
tap_is "$?" 2 "a bad --unix-mode is a usage error"
second "$NS2" --listen "unix:$S" --unix-group no-such-group-rtsnap
tap_is "$?" 2 "an unknown --unix-group is a usage error"
tap_done
