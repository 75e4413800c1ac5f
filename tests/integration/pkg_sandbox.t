#!/bin/bash
# rtsnapd under the sandbox of packaging/systemd/rtsnapd.service. Where systemd is the
# service manager (PID 1) the unit itself is run with systemd-run; elsewhere (containers,
# this CI) each setting the test knows is rebuilt with unshare (mount, UTS, IPC namespaces),
# setpriv (user, capabilities, no_new_privs) and a seccomp filter (tests/unit/sandbox_exec.c:
# SystemCallFilter= from `systemd-analyze syscall-filter`, RestrictAddressFamilies=,
# MemoryDenyWriteExecute=, RestrictNamespaces=, SystemCallArchitectures=). The test lists
# which settings it rebuilt and which it could not. Under them the daemon must serve the
# kernel's routes, write --proc-file into its RuntimeDirectory, reload on SIGHUP and stop
# cleanly; and the same sandbox must refuse what the unit forbids (writing /etc, reading
# /root, an AF_ALG socket, a new network namespace, a writable executable mapping).
# Also: systemd-analyze security --offline=true rates the unit 2.0 or lower.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd ip curl jq systemd-analyze unshare setpriv findmnt python3
require_rtsnapd

UNIT=$TOP/packaging/systemd/rtsnapd.service
SANDBOX=$TOP/build/tests/sandbox_exec
T=$RTSNAP_TMP
# The sandbox hides /home, /root (ProtectHome=) and /tmp, /var/tmp (PrivateTmp=), where a
# checkout usually is: it runs copies placed as a package places its binaries.
if [ -x "$SANDBOX" ]; then
	public_copy BIN "$RTSNAPD" "$SANDBOX" || tap_bail "cannot copy the binaries under ${RTSNAP_PUBLIC_DIR:-/usr/local/libexec}"
	SANDBOX=$BIN/sandbox_exec
else
	public_copy BIN "$RTSNAPD" || tap_bail "cannot copy rtsnapd under ${RTSNAP_PUBLIC_DIR:-/usr/local/libexec}"
fi
RTSNAPD=$BIN/$(basename "$RTSNAPD")
tap_diag "binaries run from $BIN"

score=$(systemd-analyze security --offline=true "$UNIT" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
tap_ok "$(awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.0) }'; echo $?)" \
	"systemd-analyze security --offline=true: exposure $score (at most 2.0)"

# the unit's [Service] settings, KEY=VALUE, continuation-free
settings() { sed -n '/^\[Service\]/,/^\[/p' "$UNIT" | grep -E '^[A-Za-z]+=' ; }
val() { settings | sed -n "s/^$1=//p" | tail -n 1; }

if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then
	tap_diag "systemd is the service manager here: running the unit's settings with systemd-run"
	props=()
	while IFS= read -r l; do
		case ${l%%=*} in ExecStart|ExecReload|EnvironmentFile|Restart|Type) continue ;; esac
		props+=(-p "$l")
	done < <(settings)
	ns_new NS
	systemd-run --unit="rtsnapt-$$" --wait --collect -q "${props[@]}" \
		ip netns exec "$NS" "$RTSNAPD" --once >"$T/once" 2>"$T/once.err"
	tap_ok $? "rtsnapd --once under systemd-run with every setting of the unit"
	tap_done
fi
tap_diag "PID 1 is $(ps -p 1 -o comm=), not systemd: rebuilding the unit's sandbox by hand"
[ -x "$SANDBOX" ] || tap_skip_all "build/tests/sandbox_exec not built (libseccomp-dev missing)"

# SystemCallFilter=: the allow list minus the ~ lists, and minus what ProtectClock=,
# ProtectKernelModules=, ProtectKernelLogs=, PrivateDevices= take away
expand() { # GROUP-OR-NAME...: system call names, groups expanded
	local x
	for x in "$@"; do
		case $x in
		@*) systemd-analyze syscall-filter "$x" | sed -n '2,$s/^    \([-@a-z0-9_]*\)$/\1/p' |
			while read -r y; do expand "$y"; done ;;
		*) echo "$x" ;;
		esac
	done
}
allow=() deny=(@clock @module @raw-io syslog @swap @reboot @debug @cpu-emulation @obsolete @mount)
while read -r f; do
	case $f in "~"*) read -ra w <<<"${f#\~}"; deny+=("${w[@]}") ;; *) read -ra w <<<"$f"; allow+=("${w[@]}") ;; esac
done < <(settings | sed -n 's/^SystemCallFilter=//p')
expand "${allow[@]}" | sort -u >"$T/allow"
expand "${deny[@]}" | sort -u >"$T/deny"
comm -23 "$T/allow" "$T/deny" >"$T/syscalls"
tap_ok "$([ "$(wc -l <"$T/syscalls")" -gt 200 ]; echo $?)" \
	"SystemCallFilter=$(settings | sed -n 's/^SystemCallFilter=//p' | tr '\n' ' ')-> $(wc -l <"$T/syscalls") system calls allowed"
for s in setrlimit mount reboot init_module settimeofday; do
	grep -qx "$s" "$T/syscalls" && tap_diag "unexpected: $s allowed"
done
fams=$(python3 -c 'import socket, sys
print(",".join(str(int(getattr(socket, f))) for f in sys.argv[1:]))' $(val RestrictAddressFamilies))

UID_=$((61000 + $$ % 1000))  # DynamicUser=: an unused uid/gid of the dynamic range
cat >"$T/sandbox.sh" <<EOF
#!/bin/bash
# run as root in fresh mount, UTS and IPC namespaces; then drop to the unit's identity
set -e
# read before ProtectHome= or PrivateTmp= can hide it
syscalls=\$(cat "$T/syscalls")
mount -n --make-rprivate /
# ProtectSystem=strict: every mount read-only but /dev, /proc, /sys
findmnt -rn -o TARGET | grep -vE '^/(dev|proc|sys)(/|\$)' | sort -r | while read -r m; do
	mount -n -o remount,bind,ro "\$m" 2>/dev/null || mount -n --bind -o ro "\$m" "\$m"
done
# ProtectKernelTunables=, ProtectControlGroups=: /proc/sys, /sys read-only
for m in /proc/sys /sys; do mount -n --bind "\$m" "\$m"; mount -n -o remount,bind,ro "\$m"; done
# ProtectHome=yes
for d in /home /root /run/user; do [ -d "\$d" ] && mount -n -t tmpfs -o ro,mode=0755 tmpfs "\$d"; done
# PrivateTmp=yes (the seccomp allow list moves into the private /tmp)
mount -n -t tmpfs -o mode=1777 tmpfs /tmp
printf '%s\n' "\$syscalls" >/tmp/.syscalls
mount -n -t tmpfs -o mode=1777 tmpfs /var/tmp
# RuntimeDirectory=rtsnap (RuntimeDirectoryMode=0755) in an otherwise read-only /run
mount -n -t tmpfs -o mode=0755 tmpfs /run
mkdir -m 0755 /run/rtsnap && chown $UID_:$UID_ /run/rtsnap
mount -n --bind /run/rtsnap /run/rtsnap
mount -n -o remount,bind,ro /run
# PrivateDevices=yes: null zero full random urandom tty, nothing else
mkdir -p /tmp/.dev && mount -n -t tmpfs -o mode=0755,nosuid tmpfs /tmp/.dev
for d in null zero full random urandom tty; do touch /tmp/.dev/\$d; mount -n --bind /dev/\$d /tmp/.dev/\$d; done
mkdir /tmp/.dev/shm /tmp/.dev/pts
mount -n --move /tmp/.dev /dev
mount -n -o remount,ro,bind /dev
# LimitNOFILE=, UMask=
# (this machine may cap the hard limit lower: then soft = hard, as the unit makes them)
ulimit -n $(val LimitNOFILE) 2>/dev/null || ulimit -n "\$(ulimit -Hn)"
umask $(val UMask)
# DynamicUser=yes, CapabilityBoundingSet=, AmbientCapabilities=, NoNewPrivileges=yes;
# then the seccomp filter
exec setpriv --reuid=$UID_ --regid=$UID_ --clear-groups --bounding-set=-all --inh-caps=-all \\
	--ambient-caps=-all --no-new-privs -- "$SANDBOX" /tmp/.syscalls "$fams" -- "\$@"
EOF
chmod +x "$T/sandbox.sh"
# sandboxed NS CMD...: CMD in network namespace NS under the sandbox (ProtectHostname=,
# PrivateIPC=: fresh UTS and IPC namespaces)
sandboxed() {
	local ns=$1
	shift
	ip netns exec "$ns" unshare --mount --uts --ipc "$T/sandbox.sh" "$@"
}
checked="User=/DynamicUser= CapabilityBoundingSet= AmbientCapabilities= NoNewPrivileges= ProtectSystem=strict
ProtectHome= PrivateTmp= PrivateDevices= DevicePolicy= ProtectKernelTunables= ProtectControlGroups=
ProtectHostname= PrivateIPC= PrivateMounts= RuntimeDirectory= RuntimeDirectoryMode= LimitNOFILE= UMask=
SystemCallFilter= SystemCallErrorNumber= SystemCallArchitectures= RestrictAddressFamilies=
MemoryDenyWriteExecute= RestrictNamespaces= ProtectClock= ProtectKernelModules= ProtectKernelLogs="
not_checked=""
for k in $(settings | sed 's/=.*//' | sort -u | grep -vxE 'ExecStart|ExecReload|EnvironmentFile|Restart|Type|TimeoutStopSec'); do
	case " $(echo $checked) " in *" $k="*|*"/$k="*) ;; *) not_checked+="$k= " ;; esac
done
tap_diag "settings rebuilt: $(echo $checked)"
tap_diag "settings not rebuilt (they need systemd): $not_checked"

ns_new NS
ip -n "$NS" -6 route add 2001:db8:42::/64 dev lo table 42
ip -n "$NS" -6 route add unreachable 2001:db8:43::/64
eval "ARGS_DEFAULT=$(sed -n 's/^ARGS=//p' "$TOP/packaging/default/rtsnapd")"
sandboxed "$NS" "$RTSNAPD" $ARGS_DEFAULT --log-level debug >"$T/d.log" 2>&1 </dev/null &
PID=$!
bg_register $PID
healthy() { ip netns exec "$NS" curl -sf -g --max-time 1 "http://[::1]:9816/healthz"; }
wait_until 10 healthy
tap_ok "$(healthy >/dev/null; echo $?)" "rtsnapd with the packaged ARGS ($ARGS_DEFAULT) answers under the sandbox"
healthy >/dev/null || tap_diag "$(tail -n 20 "$T/d.log")"
# the daemon: the rtsnapd process in that network namespace
DPID=
for p in $(pgrep -x rtsnapd); do
	[ "$(readlink /proc/$p/ns/net)" = "$(ip netns exec "$NS" readlink /proc/self/ns/net)" ] && DPID=$p
done
[ -n "$DPID" ] || tap_bail "cannot find the sandboxed rtsnapd"
st=/proc/$DPID/status
tap_is "$(awk '/^Uid:/ { print $2 }' "$st")" "$UID_" "the daemon runs as the unprivileged uid $UID_"
tap_is "$(awk '/^CapEff:/ { print $2 }' "$st")/$(awk '/^CapBnd:/ { print $2 }' "$st")" \
	0000000000000000/0000000000000000 "no effective and no bounding capabilities"
tap_is "$(awk '/^NoNewPrivs:/ { print $2 }' "$st")/$(awk '/^Seccomp:/ { print $2 }' "$st")" 1/2 \
	"no_new_privs set, seccomp filter in force"
http_get "$NS" /ipv6_route >"$T/http"
kernel_proc "$NS" | proc_masked >"$T/k"
proc_masked "$T/http" >"$T/h"
tap_diff "$T/k" "$T/h" "GET /ipv6_route equals the kernel's file under the sandbox"
pf_same() { proc_masked "/proc/$DPID/root/run/rtsnap/ipv6_route" >"$T/pf" 2>/dev/null && cmp -s "$T/k" "$T/pf"; }
wait_until 5 pf_same
tap_diff "$T/k" "$T/pf" "--proc-file /run/rtsnap/ipv6_route is written in the RuntimeDirectory"
tap_is "$(stat -c %a "/proc/$DPID/root/run/rtsnap/ipv6_route" 2>&1)" 644 "... mode 0644 despite UMask=0077"
gen0=$(http_get "$NS" /status | jq .generation)
kill -HUP "$DPID"
gen_up() { [ "$(http_get "$NS" /status | jq .generation)" -gt "$gen0" ]; }
wait_until 5 gen_up
tap_ok "$(gen_up; echo $?)" "SIGHUP: a new generation is published"
combos() { jq -r '.[] | "\(.table // "main") \(.protocol // "boot") \(.type // "unicast")"' | sort -u | wc -l; }
tap_is "$(http_get "$NS" /metrics | grep -c '^rtsnap_routes{')" \
	"$(($(kernel_json "$NS" | combos) + $(ip -n "$NS" -j -4 route show table all | combos)))" \
	"/metrics has one rtsnap_routes series per family/table/protocol/type"
kill -TERM "$DPID"
wait "$PID"
tap_is "$?" 0 "rtsnapd exits 0 on SIGTERM under the sandbox"
tap_ok "$(grep -qiE 'denied|not permitted' "$T/d.log"; [ $? = 1 ]; echo $?)" \
	"nothing was refused to the daemon (its log has no 'denied' or 'not permitted')"
grep -iE 'denied|not permitted' "$T/d.log" | head -5 | while IFS= read -r l; do tap_diag "log: $l"; done

# the same sandbox refuses what the unit forbids
refused() { # DESC CMD...
	local desc=$1
	shift
	sandboxed "$NS" "$@" >"$T/r.out" 2>&1
	tap_ok "$([ $? != 0 ]; echo $?)" "sandbox refuses $desc ($(tail -n 1 "$T/r.out" | cut -c1-100))"
}
refused "writing /etc (ProtectSystem=strict)" touch /etc/rtsnapt-probe
refused "writing /usr (ProtectSystem=strict)" touch /usr/rtsnapt-probe
refused "listing /root (ProtectHome=)" sh -c 'ls -A /root | grep -q .'
refused "other devices (PrivateDevices=)" sh -c 'ls /dev | grep -qvE "^(null|zero|full|random|urandom|tty|shm|pts)$"'
refused "an AF_ALG socket (RestrictAddressFamilies=)" python3 -c 'import socket; socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)'
refused "a new network namespace (RestrictNamespaces=)" unshare --net true
refused "a writable and executable mapping (MemoryDenyWriteExecute=)" python3 -c '
import ctypes, mmap
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
p = libc.mmap(None, 4096, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
raise SystemExit(0 if p not in (None, ctypes.c_void_p(-1).value) else 1)'
refused "lowering its priority (SystemCallFilter=~@resources: setpriority)" python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, 0, 5)'
refused "setting the clock (ProtectClock=)" python3 -c 'import time; time.clock_settime(time.CLOCK_REALTIME, 0)'
tap_cmd "... while allowed work succeeds in it (read /proc/net, write the RuntimeDirectory and /tmp)" \
	sandboxed "$NS" sh -c 'cat /proc/net/ipv6_route >/dev/null && touch /run/rtsnap/x /tmp/x'
ls /etc/rtsnapt-probe /usr/rtsnapt-probe >/dev/null 2>&1
tap_ok "$([ $? != 0 ]; echo $?)" "no probe file reached the host"
tap_done
