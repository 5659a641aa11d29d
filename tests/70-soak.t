#!/bin/bash
# The short soak on the debug kernel (KASAN, lockdep, PROVE_RCU, kmemleak):
# injected workload, 20 load/unload cycles under load, hostile debugfs
# input, tiny reads, kmemleak; no splat in dmesg.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 7

log=$T_RESULTS/soak-short.log
start=$SECONDS
rc=0
out=$("$HS/soak" --short --log "$log" 2>&1) || rc=$?
took=$((SECONDS - start))
diag "$out"
ok "$rc" "short soak on the debug kernel passed (exit $rc, $took s; log $log)"
ok "$(grep -q '^load/unload cycles: 20/20$' <<<"$out" &&
	grep -qE '^workload during cycles: [1-9][0-9]* path lookups$' <<<"$out"; echo $?)" "20 insmod/rmmod cycles under load"
ok "$(grep -qE '^hostile input: tried=[0-9]+ accepted=0 changed=0$' <<<"$out"; echo $?)" "every hostile write refused, nothing changed"
ok "$(grep -q '^tiny reads: files=5 bad=0$' <<<"$out"; echo $?)" "1-byte and seeking reads equal one big read"
ok "$(grep -q '^kmemleak: leaks=0$' <<<"$out"; echo $?)" "kmemleak reports no leak"
ok "$(grep -q '^dmesg: clean' <<<"$out"; echo $?)" "dmesg has no BUG/WARNING/KASAN/lockdep/RCU splat"
ok "$([[ $took -lt 300 ]]; echo $?)" "the short soak takes under 5 minutes ($took s)"
done_testing
