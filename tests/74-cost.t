#!/bin/bash
# What keeps the detector cheap (docs/design.md, "Cost"), in a guest: the
# sample knob (strict writes; sample=10 judges about one step in ten, the
# rest counted in sampled_out); a walk's slot released at its end (many
# short-lived tasks walking leave no slot to their exit); every armed
# kprobe has its form in "probes" (try_to_unlazy()'s call sites int3,
# being calls); the walk ends' sites counted per call.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 7

D=/sys/kernel/debug/dcrace
k=${DCRACE_COST_KERNEL:-unfixed}
log=$T_RESULTS/cost-${k//\//-}.log
# s NAME: a counter of the stats file, in the guest's shell
s() { echo "\$(sed -n 's/^$1: //p' $D/stats)"; }
# h NAME: a probe's hits (its "probes" line), in the guest's shell
h() { echo "\$(awk '\$1 == \"$1\" && \$4 == \"armed\" {print \$5}' $D/probes)"; }
# o KEY: the last value the guest printed after "DCRACE-O KEY "
o() { sed -n "s/^DCRACE-O $1 //p" "$log" | tail -n 1; }
wl="dcrace-workload --quiet --seed 1 --threads 2 --mode stat --no-setup --pruner none --duration 2"
rc=0
"$HS/run-guest" -q --kernel "$k" --timeout 600 --log "$log" \
	--copy "$("$HS/build-module" --kernel "$k")" --exec "
dcrace-workload --quiet --mode stat --setup-only >/dev/null || exit 1
insmod /dcrace/copy/dcrace.ko || exit 1
for v in 0 -1 1000001 abc 0x10 '10 ' '1 2'; do
	printf '%s' \"\$v\" > $D/sample 2>/dev/null && echo DCRACE-O took \"[\$v]\"
done
echo DCRACE-O after_bad \$(cat $D/sample)
echo 10 > $D/sample && echo DCRACE-O set \$(cat $D/sample)
echo 1 > $D/reset
r0=$(h rcu_lookup)
$wl >/dev/null
echo DCRACE-O s10 \$(( $(h rcu_lookup) - r0 )) $(s walk_steps) $(s sampled_out)
echo 1 > $D/sample
echo 1 > $D/reset
r0=$(h rcu_lookup)
$wl >/dev/null
echo DCRACE-O s1 \$(( $(h rcu_lookup) - r0 )) $(s walk_steps) $(s sampled_out)
echo 1 > $D/reset
e0=\$(sed -n 's/^site_hits end_return //p' $D/probes)
i=0; while [ \$i -lt 200 ]; do stat /mnt/d0/f0 /mnt/d1/f1 >/dev/null; i=\$((i + 1)); done
echo DCRACE-O tasks $(s slots_reclaimed) $(s task_slots_full) $(s end_unjudged)
echo DCRACE-O endret \$(( \$(sed -n 's/^site_hits end_return //p' $D/probes) - e0 ))
sleep 1
grep -E '^(form|site_hits) ' $D/probes | sed 's/^/DCRACE-P /'
grep -vE '^(#|form |site_hits |lookup_caller |walk_end |callback )' $D/probes |
	awk '\$4 == \"armed\" && \$3 != \"kretprobe\" && \$3 != \"from-rcu_lookup\"' | sed 's/^/DCRACE-A /'
rmmod dcrace
" >/dev/null || rc=$?
ok "$rc" "$k: the guest ran (log $log)"

took=$(o took)
ok "$([[ -z $took && $(o after_bad) == 1 && $(o set) == 10 ]]; echo $?)" \
	"sample: 0, -1, 1000001, abc, 0x10, '10 ', '1 2' refused, the value stays 1 (took '${took}', after $(o after_bad)); 10 taken ($(o set))"

read -r r10 w10 so10 <<<"$(o s10)"
read -r r1 w1 so1 <<<"$(o s1)"
ok "$(is_count "$r10" "$w10" "$so10" && [[ $r10 -gt 1000 && $w10 -gt 0 && $((w10 * 5)) -lt $r10 && $((w10 * 20)) -gt $r10 && $so10 -gt 0 ]]; echo $?)" \
	"sample=10: $w10 steps judged of $r10 rcu_lookup hits (between 1 in 20 and 1 in 5), sampled_out $so10"
ok "$(is_count "$r1" "$w1" "$so1" && [[ $r1 -gt 1000 && $so1 -eq 0 && $((w1 * 10)) -ge $((r1 * 9)) ]]; echo $?)" \
	"sample=1: $w1 steps judged of $r1 rcu_lookup hits (>= 90%), sampled_out $so1 (0)"

read -r rec full unj <<<"$(o tasks)"
ok "$(is_count "$rec" "$full" "$unj" && [[ $rec -eq 0 && $full -eq 0 && $unj -eq 0 ]]; echo $?)" \
	"400 walks by 200 short-lived tasks: slots_reclaimed $rec, task_slots_full $full, end_unjudged $unj (each walk's slot released at its end)"

armed=$(grep -c '^DCRACE-A ' "$log" || true)
forms=$(grep -c '^DCRACE-P form ' "$log" || true)
bad=$(grep '^DCRACE-P form ' "$log" | grep -vcE ' (optimized|ftrace|disabled|int3 \(.+\))$' || true)
unlazy=$(grep -c '^DCRACE-A unlazy_call ' "$log" || true)
unlazy_int3=$(grep -cE '^DCRACE-P form link_path_walk\S* int3 \(a call' "$log" || true)
ok "$([[ $armed -gt 0 && $forms -ge $armed && $bad -eq 0 && $unlazy -ge 1 && $unlazy_int3 -eq $unlazy ]]; echo $?)" \
	"probes: $forms form lines for $armed armed kprobes listed, $bad malformed; try_to_unlazy()'s $unlazy call sites int3 as calls ($unlazy_int3)"

er=$(o endret)
ok "$(is_count "$er" && [[ $er -ge 400 && $er -lt 4000 ]]; echo $?)" \
	"site_hits end_return: $er during 200 stat commands of 2 files (400 path_lookupat() calls, and the commands' own: 400 - 4000)"
