#!/bin/bash
# bench_rcu.sh - compare liburcu flavours for rtsnapd's read side (see bench/rcu_flavours.c).
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -DFLAVOUR_BP rcu_flavours.c -o "$out/bp" -lurcu-bp -lurcu-common -lpthread
cc -O2 -DFLAVOUR_MEMB rcu_flavours.c -o "$out/memb" -lurcu-memb -lurcu-common -lpthread
echo "| flavour | readers | reader Mops/s | reader ns/op | publications/s |"
echo "|---|---:|---:|---:|---:|"
for r in 1 2; do
	for f in bp memb; do "$out/$f" $r 2; done
done
