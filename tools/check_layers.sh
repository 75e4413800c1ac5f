#!/bin/sh
# check_layers.sh OBJDIR LAYER... - check that calls between rtsnap's objects point one way.
#
# LAYERs are given bottom first; OBJDIR/LAYER/*.o are a layer's objects and OBJDIR/main.o sits on
# top of them all. Reads each object's defined and undefined symbols with nm and fails (exit 1,
# one line per finding) on:
#   - a call from an object into an object of a higher layer;
#   - a cycle between objects (even within one layer), found with tsort.
# (A source file outside every layer stops the Makefile itself.)
set -eu
export LC_ALL=C
objdir=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

rank=0
for layer in "$@"; do
	rank=$((rank + 1))
	for o in "$objdir/$layer"/*.o; do
		[ -e "$o" ] || continue
		echo "$layer/$(basename "$o" .o) $rank $o"
	done
done >"$tmp/objs"
[ -e "$objdir/main.o" ] && echo "main 999 $objdir/main.o" >>"$tmp/objs"

# name rank symbol: what each object defines and what it needs.
while read -r name r o; do
	nm --defined-only -g "$o" | awk -v n="$name" -v r="$r" 'NF >= 3 { print $3, n, r }'
done <"$tmp/objs" | sort >"$tmp/defs"
while read -r name r o; do
	nm -u "$o" | awk -v n="$name" -v r="$r" '{ print $NF, n, r }'
done <"$tmp/objs" | sort >"$tmp/uses"

# symbol user user_rank definer definer_rank
join "$tmp/uses" "$tmp/defs" | awk '$2 != $4' >"$tmp/calls"

awk '$3 < $5 { printf "layers: %s calls %s in %s, a higher layer\n", $2, $1, $4 }' "$tmp/calls" \
	>"$tmp/up"
if [ -s "$tmp/up" ]; then
	cat "$tmp/up"
	status=1
fi

# tsort takes "user definer" pairs; a loop means two objects need each other.
{ awk '{ print $2, $4 }' "$tmp/calls" | sort -u; awk '{ print $1, $1 }' "$tmp/objs"; } |
	tsort >/dev/null 2>"$tmp/loops" || true
if [ -s "$tmp/loops" ]; then
	awk '/input contains a loop/ { if (l != "") print "layers: objects call each other in a circle:" l; l = ""; next }
	     { sub(/^tsort: /, ""); l = l " " $0 }
	     END { if (l != "") print "layers: objects call each other in a circle:" l }' "$tmp/loops"
	status=1
fi

[ $status = 0 ] && echo "layers: $(wc -l <"$tmp/objs") objects in $# layers, calls point one way"
exit $status
