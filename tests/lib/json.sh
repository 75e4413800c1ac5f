# tests/lib/json.sh - comparing rtsnapd's JSON with `ip -j -6 route show table all`.
# Source after common.sh.

# _json_masked FILE: the bytes with every "expires" value replaced by E, and a newline
# after every "}," (so that a difference shows as the objects that differ).
_json_masked() {
	sed -E 's/"expires":-?[0-9]+/"expires":E/g; s/\},/},\n/g' "$1"
}

# _json_expires_close WANT GOT: the "expires" values, in order, differ by at most 1.
_json_expires_close() {
	paste <(grep -oE '"expires":-?[0-9]+' "$1" | cut -d: -f2) \
		<(grep -oE '"expires":-?[0-9]+' "$2" | cut -d: -f2) |
		awk '{ d = $1 - $2; if (d < -1 || d > 1 || NF != 2) bad = 1 } END { exit bad }'
}

# _json_kernel NS: `ip -j -6 route show table all` in NS, through jq -c "$JSON_FILTER"
# when that is set.
_json_kernel() {
	if [ -n "${JSON_FILTER:-}" ]; then
		kernel_json "$1" | jq -c "$JSON_FILTER"
	else
		kernel_json "$1"
	fi
}

# json_compare NS DESC CMD...: CMD's output (run in NS) equals `ip -j -6 route show
# table all` (expires within 1 s), byte for byte; with JSON_FILTER set, the kernel's
# array goes through that jq filter and CMD's through `jq -c .`. The kernel is read
# before and after; if it changed meanwhile (RA refresh, DAD, daemon lag) the sample is
# retried, up to 10 times.
json_compare() {
	local ns=$1 desc=$2 d="$RTSNAP_TMP/json" i
	shift 2
	for i in $(seq 10); do
		_json_kernel "$ns" >"$d.k1"
		if [ -n "${JSON_FILTER:-}" ]; then
			"$@" 2>"$d.err" | jq -c . >"$d.got"
		else
			"$@" >"$d.got" 2>"$d.err"
		fi
		_json_kernel "$ns" >"$d.want"
		_json_masked "$d.k1" >"$d.k1m"
		_json_masked "$d.want" >"$d.wantm"
		_json_masked "$d.got" >"$d.gotm"
		cmp -s "$d.k1m" "$d.wantm" && cmp -s "$d.wantm" "$d.gotm" && break
		sleep 0.5
	done
	tap_diff "$d.wantm" "$d.gotm" "$desc"
	_json_expires_close "$d.want" "$d.got"
	tap_ok $? "$desc: expires within 1 s ($(grep -c '"expires"' <(tr '}' '\n' <"$d.want")) routes expire)"
	[ -s "$d.err" ] && tap_diag "stderr:" "$(head -n 5 "$d.err")"
	return 0
}
