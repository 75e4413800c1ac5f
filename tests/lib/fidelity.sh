# tests/lib/fidelity.sh - does a running rtsnapd follow what the kernel changes without saying?
# Source after common.sh and json.sh.
#
# The tests built on it (tests/integration/*_silent*.t and the fidelity classes) start rtsnapd
# first, change the kernel, and compare both views with the kernel's own after every change:
# /ipv6_route with /proc/net/ipv6_route (refcnt masked) and /routes with
# `ip -j -6 route show table all` (byte for byte with "expires" masked, and every "expires"
# within 2 s of the kernel's). Then the same for a dump taken afresh (`rtsnapd --once`), the
# path a daemon started after the change takes.

# _fid_read NS: kernel and daemon views into $RTSNAP_TMP/fid.{kp,dp,kj,dj} (masked) and
# .kjr/.djr (raw JSON). Non-zero when the daemon does not answer.
_fid_read() {
	local ns=$1 d="$RTSNAP_TMP/fid"
	kernel_proc "$ns" | proc_masked >"$d.kp"
	http_get "$ns" /ipv6_route >"$d.dpr" || return 1
	proc_masked "$d.dpr" >"$d.dp"
	kernel_json "$ns" >"$d.kjr"
	http_get "$ns" /routes >"$d.djr" || return 1
	_json_masked "$d.kjr" >"$d.kj"
	_json_masked "$d.djr" >"$d.dj"
}

# _fid_expires_close WANT GOT: the "expires" values, in order, differ by at most 2 s.
_fid_expires_close() {
	paste <(grep -oE '"expires":-?[0-9]+' "$1" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$2" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -2 || d > 2 || NF != 2) bad = 1 } END { exit bad }'
}

# fid_agree NS: 0 when rtsnapd's two views equal the kernel's now.
fid_agree() {
	local d="$RTSNAP_TMP/fid"
	_fid_read "$1" || return 1
	cmp -s "$d.kp" "$d.dp" && cmp -s "$d.kj" "$d.dj" && _fid_expires_close "$d.kjr" "$d.djr"
}

# fid_check NS DESC [SECONDS]: rtsnapd agrees with the kernel within SECONDS (default 5):
# one result; on failure the differences as comments.
fid_check() {
	local ns=$1 desc=$2 t=${3:-5} d="$RTSNAP_TMP/fid"
	if wait_until "$t" fid_agree "$ns"; then
		_tap_result 0 "$desc"
		return 0
	fi
	_tap_result 1 "$desc"
	tap_diag "--- /ipv6_route (kernel vs rtsnapd):" "$(diff -U1 "$d.kp" "$d.dp" | head -20)" \
		"--- /routes (kernel vs rtsnapd):" "$(diff "$d.kj" "$d.dj" | head -20)"
	cmp -s "$d.kj" "$d.dj" && tap_diag "--- expires (kernel, rtsnapd):" \
		"$(paste <(grep -oE '"expires":-?[0-9]+' "$d.kjr") <(grep -oE '"expires":-?[0-9]+' "$d.djr") | head)"
	return 1
}

# fid_check_once NS DESC: a fresh dump (`rtsnapd --once`, proc and JSON) equals the kernel.
fid_check_once() {
	local ns=$1 desc=$2 d="$RTSNAP_TMP/fido" i ok=1
	for i in 1 2 3 4 5; do
		kernel_proc "$ns" | proc_masked >"$d.kp"
		kernel_json "$ns" >"$d.kjr"
		rtsnapd_once "$ns" proc 2>/dev/null | proc_masked >"$d.dp"
		rtsnapd_once "$ns" json >"$d.djr" 2>/dev/null
		_json_masked "$d.kjr" >"$d.kj"
		_json_masked "$d.djr" >"$d.dj"
		cmp -s "$d.kp" "$d.dp" && cmp -s "$d.kj" "$d.dj" && _fid_expires_close "$d.kjr" "$d.djr" &&
			{ ok=0; break; }
		sleep 0.3
	done
	_tap_result $ok "$desc"
	[ $ok = 0 ] || tap_diag "--- proc (kernel vs --once):" "$(diff -U1 "$d.kp" "$d.dp" | head -20)" \
		"--- json (kernel vs --once):" "$(diff "$d.kj" "$d.dj" | head -20)"
	return $ok
}

# fid_step NS DESC CMD...: run `ip -n NS CMD...` (it must succeed; a failure is a result),
# then fid_check NS DESC.
fid_step() {
	local ns=$1 desc=$2 out
	shift 2
	if ! out=$(ip -n "$ns" "$@" 2>&1); then
		_tap_result 1 "$desc (ip $* failed: $out)"
		return 1
	fi
	fid_check "$ns" "$desc"
}

# fid_tdumps NS REASON: rtsnapd's count of targeted dumps for REASON.
fid_tdumps() {
	http_get "$1" /status | jq ".collector.targeted_dumps.$2 // 0"
}
