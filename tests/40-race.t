#!/bin/bash
# The two kernels differ exactly as intended: the same workload (walkers
# stat() existing files on the ram-disk fs while a pruner writes 2 to
# drop_caches), no module, no injection, same duration and seed, gives
# false ENOENTs > 0 on unfixed and 0 on fixed.
#
# Sizing: the natural rate measured here is 0.5-0.7 false ENOENT/s with 2
# walkers under TCG (the brief saw 0.2/s). With DCRACE_RACE_SECONDS=40 and
# a rate of at least 0.2/s, P(no race on unfixed) = exp(-0.2*40) = 3.4e-4,
# below 1 in 1000; at 0.5/s it is 2e-9.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 9

secs=${DCRACE_RACE_SECONDS:-40}
declare -A fe sc pr
for k in unfixed fixed; do
	log=$T_RESULTS/race-$k.log
	rc=0
	"$HS/run-guest" -q --timeout $((secs * 3 + 120)) --log "$log" \
		--exec "dcrace-workload --quiet --duration $secs --seed 1 --threads 2" "$k" >/dev/null || rc=$?
	j=$(guest_json "$log")
	ok "$([[ $rc -eq 0 && -n $j ]]; echo $?)" "$k: guest ran the workload (exit $rc; log $log)"
	fe[$k]=$(jq -r '.false_enoent // "x"' <<<"${j:-{\}}")
	sc[$k]=$(jq -r '.syscalls // "x"' <<<"${j:-{\}}")
	pr[$k]=$(jq -r '.prunes // "x"' <<<"${j:-{\}}")
	diag "$k: ${sc[$k]} stat() calls, ${pr[$k]} drop_caches writes, ${fe[$k]} false ENOENTs in $secs s, first at $(jq -r '.first_false_enoent_s' <<<"${j:-{\}}") s"
	ok "$([[ ${sc[$k]} =~ ^[0-9]+$ && ${sc[$k]} -gt 10000 && ${pr[$k]} =~ ^[0-9]+$ && ${pr[$k]} -gt 100 ]]; echo $?)" \
		"$k: walkers and pruner both ran (${sc[$k]} stats, ${pr[$k]} prunes)"
done
ok "$([[ ${fe[unfixed]} =~ ^[0-9]+$ && ${fe[unfixed]} -gt 0 ]]; echo $?)" "unfixed: false ENOENTs > 0 (got ${fe[unfixed]})"
ok "$([[ ${fe[fixed]} == 0 ]]; echo $?)" "fixed: no false ENOENT (got ${fe[fixed]})"
# No splat on either kernel.
for k in unfixed fixed; do
	s=$(splat "$T_RESULTS/race-$k.log")
	diag "$s"
	ok "$([[ -z $s ]]; echo $?)" "$k: no BUG/WARNING/Oops in dmesg"
done
# The pruner silenced the kernel's per-write "drop_caches: 2" message
# (it writes 4 once first): at most the first write's line in the log.
n=$(grep -c 'drop_caches: 2' "$T_RESULTS/race-unfixed.log" || true)
ok "$([[ $n =~ ^[0-9]+$ && $n -le 1 && ${pr[unfixed]} =~ ^[0-9]+$ && ${pr[unfixed]} -gt 100 ]]; echo $?)" "unfixed: ${pr[unfixed]} drop_caches writes printed $n 'drop_caches: 2' line(s) (at most 1)"
done_testing
