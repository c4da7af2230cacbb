#!/usr/bin/env bash
# Instructions per probed call of the in-process API probes, per program of
# bench/progs/apiprobe.bpf.c: build/bench/apiprobe_bench --only SITE under
# callgrind with 100000 and 200000 calls; the difference over 100000 is one
# call (the set-up cancels out).  Unlike wall time, it does not depend on
# how busy the machine is, so it shows what a change to the trampolines or
# the JIT entry saves.  Needs valgrind; run from the repository root.
#
#   bench/apiprobe_instr.sh        (after make)
set -u
cd "$(dirname "$0")/.." || exit 1
BENCH=build/bench/apiprobe_bench
command -v valgrind > /dev/null || { echo "apiprobe_instr: valgrind not installed" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "apiprobe_instr: $BENCH not built (make)" >&2; exit 1; }
ir() { # ir SITE CALLS: instructions of the whole run
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH" --only "$1" --calls "$2" 2>&1 |
		sed -n 's/.*Collected : //p'
}
base=0
echo "| call of a 2-argument C function | instructions per call | added by the probe |"
echo "|---|---:|---:|"
for site in bench_unhooked bench_empty bench_count bench_hash bench_count_ret; do
	a=$(ir "$site" 100000) b=$(ir "$site" 200000)
	if [ -z "$a" ] || [ -z "$b" ]; then echo "apiprobe_instr: callgrind failed on $site" >&2; exit 1; fi
	n=$(( (b - a) / 100000 ))
	[ "$site" = bench_unhooked ] && base=$n
	echo "| $site | $n | +$((n - base)) |"
done
