# tests/lib/cdp.sh - drive headless Chromium over the DevTools protocol, from bash.
#
# Source after common.sh. Chromium is started with --remote-debugging-pipe: it reads
# commands from fd 3 and writes replies and events to fd 4, each a JSON text followed by
# a NUL byte. Two FIFOs connect those fds to this shell, so no TCP port is opened and
# nothing but jq is needed.
#
#   cdp_start NS                 # chromium in namespace NS, attached to one page
#   cdp_nav URL                  # load URL and wait for its load event
#   cdp_eval 'JS EXPRESSION'     # print the value (JSON) it returns (promises awaited)
#   cdp_wait 'JS CONDITION' [S]  # true once CONDITION is truthy, polling in the page for
#                                # at most S seconds (default 15)
#   cdp_type 'CSS SELECTOR' TEXT # focus the element, clear it and type TEXT as keystrokes
#   cdp_key Enter                # press a key in the focused element
#   cdp_screenshot FILE [SEL]    # PNG of the whole page, or of the element SEL
#   cdp_stop
#
# Every read has a timeout, and a reply is awaited through at most CDP_MAX_MSGS messages.

CDP_MAX_MSGS=${CDP_MAX_MSGS:-5000}
CDP_TIMEOUT=${CDP_TIMEOUT:-30}
CHROMIUM=${CHROMIUM:-chromium}
_cdp_id=0
_cdp_session=''
_cdp_pid=''

# The flags every headless run needs here (root, no GPU, no network of its own).
chromium_flags() {
	echo --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-extensions --disable-default-apps --mute-audio --hide-scrollbars \
		--password-store=basic --use-mock-keychain
}

# cdp_start NS: start chromium in NS; 0 once a page target is attached.
cdp_start() {
	local ns=$1 targets tid r
	_cdp_dir=$(mktemp -d "$RTSNAP_TMP/cdp.XXXXXX")
	mkfifo "$_cdp_dir/in" "$_cdp_dir/out" || return 1
	# shellcheck disable=SC2046
	ip netns exec "$ns" "$CHROMIUM" $(chromium_flags) --user-data-dir="$_cdp_dir/profile" \
		--window-size=1280,1000 --remote-debugging-pipe about:blank \
		3<"$_cdp_dir/in" 4>"$_cdp_dir/out" >"$_cdp_dir/log" 2>&1 </dev/null &
	_cdp_pid=$!
	bg_register "$_cdp_pid"
	# the child opens "in" for reading, then "out" for writing; open ours in that order
	exec {_cdp_w}>"$_cdp_dir/in"
	exec {_cdp_r}<"$_cdp_dir/out"
	targets=$(cdp_call Target.getTargets '{}' '') || return 1
	tid=$(jq -r '[.result.targetInfos[] | select(.type == "page")][0].targetId // empty' <<<"$targets")
	[ -n "$tid" ] || return 1
	r=$(cdp_call Target.attachToTarget "$(jq -cn --arg t "$tid" '{targetId: $t, flatten: true}')" '') || return 1
	_cdp_session=$(jq -r '.result.sessionId // empty' <<<"$r")
	[ -n "$_cdp_session" ] || return 1
	cdp_call Page.enable '{}' >/dev/null
}

# cdp_call METHOD PARAMS [SESSION]: send one command, print its reply (the whole message).
# Non-zero on timeout, a closed pipe, or an error reply (printed too).
cdp_call() {
	local method=$1 params=${2:-'{}'} session=${3-$_cdp_session} msg line n=0 id
	_cdp_id=$((_cdp_id + 1))
	id=$_cdp_id
	msg=$(jq -cn --argjson id "$id" --arg m "$method" --argjson p "$params" --arg s "$session" \
		'{id: $id, method: $m, params: $p} + (if $s == "" then {} else {sessionId: $s} end)') || return 1
	printf '%s\0' "$msg" >&"$_cdp_w" || return 1
	while [ $n -lt "$CDP_MAX_MSGS" ]; do
		n=$((n + 1))
		IFS= read -r -d '' -t "$CDP_TIMEOUT" line <&"$_cdp_r" || return 1
		case $line in
		"{\"id\":$id,"*)
			printf '%s\n' "$line"
			[[ $line != *'"error":{'* ]]
			return
			;;
		esac
	done
	return 1
}

# cdp_eval EXPR: evaluate in the page, awaiting a promise; print the JSON value.
cdp_eval() {
	local r
	r=$(cdp_call Runtime.evaluate "$(jq -cn --arg e "$1" \
		'{expression: $e, returnByValue: true, awaitPromise: true}')") || return 1
	if jq -e '.result.exceptionDetails' <<<"$r" >/dev/null; then
		jq -c '.result.exceptionDetails' <<<"$r" >&2
		return 1
	fi
	jq -c '.result.result.value' <<<"$r"
}

# cdp_wait COND [SECONDS]: poll COND in the page every 100 ms, at most SECONDS.
cdp_wait() {
	local cond=$1 tenths=$((${2:-15} * 10))
	[ "$(cdp_eval "new Promise((ok) => { let n = 0; const f = () => {
		let v = false; try { v = !!($cond); } catch (e) { v = false; }
		if (v || n++ >= $tenths) ok(v); else setTimeout(f, 100); }; f(); })")" = true ]
}

# cdp_nav URL: navigate and wait (at most 30 s) for the document to finish loading.
cdp_nav() {
	cdp_call Page.navigate "$(jq -cn --arg u "$1" '{url: $u}')" >/dev/null || return 1
	cdp_wait 'document.readyState === "complete" && location.href.startsWith('"$(jq -cn --arg u "${1%%#*}" '$u')"')' 30
}

# cdp_type SELECTOR TEXT: focus the element, select its content and type TEXT over it.
cdp_type() {
	cdp_eval "(() => { const e = document.querySelector($(jq -cn --arg s "$1" '$s')); e.focus(); e.select(); return true; })()" >/dev/null || return 1
	cdp_call Input.insertText "$(jq -cn --arg t "$2" '{text: $t}')" >/dev/null
}

# cdp_key KEY: press and release a key (Enter, Tab, ...) in the focused element.
cdp_key() {
	local code=$1 vk=0 text=''
	case $1 in
	Enter) vk=13 text=$'\r' ;;
	Tab) vk=9 ;;
	Space) code=' ' vk=32 text=' ' ;;
	esac
	cdp_call Input.dispatchKeyEvent "$(jq -cn --arg k "$code" --arg t "$text" --argjson v $vk \
		'{type: "keyDown", key: $k, code: $k, windowsVirtualKeyCode: $v, text: $t}')" >/dev/null &&
		cdp_call Input.dispatchKeyEvent "$(jq -cn --arg k "$code" --argjson v $vk \
			'{type: "keyUp", key: $k, code: $k, windowsVirtualKeyCode: $v}')" >/dev/null
}

# cdp_screenshot FILE [SELECTOR]: save a PNG of the whole page or of one element.
cdp_screenshot() {
	local file=$1 sel=${2:-} clip r
	if [ -n "$sel" ]; then
		clip=$(cdp_eval "(() => { const e = document.querySelector($(jq -cn --arg s "$sel" '$s'));
			const b = e.getBoundingClientRect();
			return {x: b.left + scrollX, y: b.top + scrollY, width: Math.max(1, b.width), height: Math.max(1, b.height), scale: 1}; })()") || return 1
	else
		clip=$(cdp_eval '({x: 0, y: 0, width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight, scale: 1})') || return 1
	fi
	r=$(cdp_call Page.captureScreenshot "$(jq -cn --argjson c "$clip" '{format: "png", clip: $c, captureBeyondViewport: true}')") || return 1
	jq -r '.result.data' <<<"$r" | base64 -d >"$file"
}

# cdp_stop: close the browser (it exits when its pipe closes) and wait for it.
cdp_stop() {
	[ -n "$_cdp_pid" ] || return 0
	cdp_call Browser.close '{}' '' >/dev/null 2>&1
	exec {_cdp_w}>&- {_cdp_r}<&-
	_stop_pid "$_cdp_pid"
	_cdp_pid=''
}
