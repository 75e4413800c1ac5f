#!/bin/bash
# make deb: the package builds with debhelper, lintian reports no error and no warning, its
# contents, control fields, conffiles and maintainer scripts are the expected ones; then it is
# installed with dpkg -i into a copy-on-write overlay of this machine's root (unshare + overlayfs
# + chroot, so nothing reaches the real system): every file in place, the unit enabled and
# `systemd-analyze verify` clean, the installed daemon works; dpkg -r leaves only the
# conffile, dpkg --purge leaves nothing.
. "$(dirname "$0")/../lib/common.sh"
require_root
require_cmd dpkg-buildpackage dh lintian unshare chroot systemd-analyze ip curl
grep -qw overlay /proc/filesystems || tap_skip_all "no overlayfs in this kernel"
T=$RTSNAP_TMP
VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
ARCH=$(dpkg --print-architecture)
DEB=$T/b/deb/rtsnapd_${VERSION}_$ARCH.deb

nice make -C "$TOP" --no-print-directory BUILD="$T/b" deb >"$T/make.log" 2>&1
tap_ok $? "make deb builds rtsnapd_${VERSION}_$ARCH.deb" || { tap_diag "$(tail -n 30 "$T/make.log")"; tap_done; }

# contents: exactly these paths
cat >"$T/want" <<EOF
./etc/default/rtsnapd
./lib/systemd/system/rtsnapd.service
./usr/sbin/rtsnapd
./usr/share/doc/rtsnapd/changelog.gz
./usr/share/doc/rtsnapd/copyright
./usr/share/doc/rtsnapd/examples/web-config.yml
./usr/share/man/man8/rtsnapd.8.gz
./usr/share/rtsnapd/grafana/rtsnapd.json
./usr/share/rtsnapd/prometheus/rtsnapd.rules.yml
EOF
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | sort >"$T/got"
tap_diff "$T/want" "$T/got" "the package holds exactly the expected files"
tap_is "$(dpkg-deb -c "$DEB" | awk '$6 == "./usr/sbin/rtsnapd" { print $1, $2 }')" "-rwxr-xr-x root/root" "/usr/sbin/rtsnapd is root's, 0755"
tap_is "$(dpkg-deb -f "$DEB" Package Version Architecture | tr '\n' ' ')" \
	"Package: rtsnapd Version: $VERSION Architecture: $ARCH " "control: package, version (the Makefile's), architecture"
deps=$(dpkg-deb -f "$DEB" Depends)
for lib in libmicrohttpd12 libgnutls30 libyaml-0-2 libcrypt1 libnl-3-200 liburcu8 libjansson4; do
	grep -q "$lib" <<<"$deps" || tap_diag "Depends lacks $lib: $deps"
done
tap_ok "$(for l in libmicrohttpd12 libgnutls30 libyaml-0-2 libcrypt1; do grep -q $l <<<"$deps" || exit 1; done; echo 0)" \
	"Depends (from shlibs) name libmicrohttpd12, libgnutls30, libyaml-0-2, libcrypt1"
mkdir "$T/ctl"
dpkg-deb -e "$DEB" "$T/ctl"
tap_is "$(cat "$T/ctl/conffiles")" /etc/default/rtsnapd "the one conffile is /etc/default/rtsnapd"
tap_ok "$(grep -q "deb-systemd-helper enable 'rtsnapd.service'" "$T/ctl/postinst"; echo $?)" "postinst enables rtsnapd.service"
tap_ok "$(grep -q "deb-systemd-invoke \$_dh_action 'rtsnapd.service'" "$T/ctl/postinst"; echo $?)" "postinst starts (or restarts) it where systemd runs"
tap_ok "$(grep -q "deb-systemd-invoke stop 'rtsnapd.service'" "$T/ctl/prerm"; echo $?)" "prerm stops it"
tap_ok "$(grep -q "deb-systemd-helper purge 'rtsnapd.service'" "$T/ctl/postrm"; echo $?)" "postrm purges its enablement state"
tap_ok "$(for s in postinst prerm postrm; do sh -n "$T/ctl/$s" || exit 1; done; echo 0)" "maintainer scripts parse (sh -n)"
tap_ok "$(! ls "$T/ctl" | grep -qxE 'preinst|config|templates'; echo $?)" "no preinst, no debconf: nothing asked, no user created (DynamicUser=)"

lintian --pedantic -I "$DEB" >"$T/lintian" 2>&1
tap_is "$(grep -cE '^[EW]: ' "$T/lintian")" 0 "lintian: no error and no warning"
tap_diag "lintian: $(grep -E '^[EWIPX]: ' "$T/lintian" | tr '\n' ';')"

mkdir "$T/x"
dpkg-deb -x "$DEB" "$T/x"
score=$(systemd-analyze security --offline=true "$T/x/lib/systemd/system/rtsnapd.service" 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
tap_ok "$(awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.0) }'; echo $?)" \
	"the packaged unit: systemd-analyze security --offline=true $score (at most 2.0)"

# ---- dpkg in an overlay of / (tmpfs upper layer): the real system is never written
mkdir -p "$T/ovl"
cat >"$T/inroot.sh" <<'EOF'
#!/bin/sh
# inroot.sh OVL DEB STEP...: mount the overlay, run each step in the chroot, print markers
set -e
ovl=$1 deb=$2
shift 2
mount -n --make-rprivate /
mount -n -t tmpfs tmpfs "$ovl"
mkdir "$ovl/u" "$ovl/w" "$ovl/m"
mount -n -t overlay overlay -o "lowerdir=/,upperdir=$ovl/u,workdir=$ovl/w" "$ovl/m"
for d in proc sys dev; do mount -n --rbind "/$d" "$ovl/m/$d"; done
mount -n -t tmpfs tmpfs "$ovl/m/run"
mount -n -t tmpfs tmpfs "$ovl/m/tmp"
cp "$deb" "$ovl/m/tmp/rtsnapd.deb"
(cd "$ovl/u" && find . -path ./tmp -prune -o -print | sort) >"$ovl/../upper.0"
for step in "$@"; do
	echo "== $step"
	chroot "$ovl/m" /bin/sh -c "$step" 2>&1 || echo "== FAILED: $step"
	(cd "$ovl/u" && find . -path ./tmp -prune -o -print | sort) >"$ovl/../upper.$(echo "$step" | cut -d' ' -f1-2 | tr -c 'a-z0-9\n' _)"
done
EOF
chmod +x "$T/inroot.sh"
steps=(
	"dpkg -i /tmp/rtsnapd.deb"
	"dpkg-query -W -f '\${Status} \${Version}' rtsnapd; echo"
	"for f in \$(dpkg -L rtsnapd); do [ -e \"\$f\" ] || echo missing \$f; done; echo listed \$(dpkg -L rtsnapd | wc -l)"
	"readlink /etc/systemd/system/multi-user.target.wants/rtsnapd.service"
	"systemd-analyze verify /lib/systemd/system/rtsnapd.service && echo verify-ok"
	"/usr/sbin/rtsnapd --version && man -w rtsnapd"
	"dpkg -r rtsnapd"
	"dpkg-query -W -f '\${Status}' rtsnapd; echo; ls /etc/default/rtsnapd /etc/systemd/system/multi-user.target.wants/rtsnapd.service /usr/sbin/rtsnapd /lib/systemd/system/rtsnapd.service 2>&1; true"
	"dpkg --purge rtsnapd"
	"dpkg-query -W rtsnapd 2>&1; ls /etc/default/rtsnapd /etc/systemd/system/multi-user.target.wants/rtsnapd.service 2>&1; true"
)
unshare --mount "$T/inroot.sh" "$T/ovl" "$DEB" "${steps[@]}" >"$T/inroot.log" 2>&1
tap_ok "$(! grep -q '^== FAILED' "$T/inroot.log"; echo $?)" "dpkg -i, -r, --purge run in the overlay chroot"
grep -q '^== FAILED' "$T/inroot.log" && tap_diag "$(cat "$T/inroot.log")"
out() { awk -v s="== $1" '$0 == s { on = 1; next } /^== / { on = 0 } on' "$T/inroot.log"; }
tap_is "$(out "${steps[1]}")" "install ok installed $VERSION" "dpkg -i: installed"
tap_is "$(out "${steps[2]}")" "listed $(($(dpkg-deb -c "$DEB" | wc -l) - 0))" "every path dpkg -L lists exists"
tap_is "$(out "${steps[3]}")" /lib/systemd/system/rtsnapd.service "the unit is enabled (multi-user.target.wants)"
tap_is "$(out "${steps[4]}")" verify-ok "systemd-analyze verify of the installed unit: clean"
tap_ok "$(out "${steps[5]}" | grep -q "^rtsnapd $VERSION" && out "${steps[5]}" | grep -q '/usr/share/man/man8/rtsnapd.8.gz'; echo $?)" \
	"the installed binary runs; man finds rtsnapd(8)"
tap_is "$(out "${steps[7]}" | grep -v 'No such file' | sort | tr '\n' ' ')" \
	"/etc/default/rtsnapd /etc/systemd/system/multi-user.target.wants/rtsnapd.service deinstall ok config-files " \
	"dpkg -r: configuration stays (the conffile, the enablement link, as Debian keeps them until purge)"
tap_is "$(out "${steps[7]}" | grep -c 'No such file')" 2 "... the binary and the unit are gone"
tap_ok "$(out "${steps[9]}" | grep -q 'no packages found matching rtsnapd' &&
	[ "$(out "${steps[9]}" | grep -c 'No such file')" = 2 ]; echo $?)" \
	"dpkg --purge: the package, its conffile and the enablement link are gone"
# what the overlay's upper layer holds after the purge, apart from dpkg's own records
after=$(ls "$T"/upper.dpkg*purge* 2>/dev/null | head -1)
[ -s "$after" ] || tap_bail "no listing of the overlay after the purge"
grep -vE '^\./var/(lib/dpkg|log|cache)(/|$)|^\.$|^\./var$|^\./var/lib$' "$after" >"$T/left"
left=$(grep -i rtsnap "$T/left")
tap_is "$left" "" "nothing named rtsnap is left anywhere after the purge"
tap_diag "upper layer after purge, outside dpkg's records: $(tr '\n' ' ' <"$T/left")"
new=""
while read -r f; do
	[ -e "/${f#./}" ] || [ -L "/${f#./}" ] || new+=" $f"
done <"$T/left"
tap_is "$new" "" "everything else the upper layer holds after the purge exists on the host (copied-up directories, nothing new)"
tap_ok "$(! grep -q rtsnapd "$T/upper.0"; echo $?)" "(the overlay started without rtsnapd files)"
tap_done
