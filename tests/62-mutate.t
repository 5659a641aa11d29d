#!/bin/bash
# Mode mutate for real (the hard-error rule, issue 24): short guest runs
# on both lines. The judge on canned logs is in 30-verdict.t and
# 32-match.t; the workload on the host in 25-workload.t.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 9

tmp_dir
C=$HS/compare

# 1. Natural, 6.1's unfixed alone: a healthy run (the verdict can only be
# "no verdict without a clean kernel": any health problem, infrastructure
# or detector, would come first).
run nat "$C" --mode mutate --natural --kernels unfixed --duration 3 --json "$tmp/nat.json" --results "$T_RESULTS"
diag "$(cat "$tmp/nat.out")"
ok "$([[ $(rcof nat) -eq $EX_INCONCLUSIVE ]] &&
	grep -q '^verdict: INCONCLUSIVE: no verdict without a kernel expected to race and one expected clean on the hard-error rule' "$tmp/nat.out"; echo $?)" \
	"natural, unfixed: healthy, no verdict without a clean kernel, exit $EX_INCONCLUSIVE (got $(rcof nat); $(grep '^verdict:' "$tmp/nat.out" || tail -n 1 "$tmp/nat.err"))"
# mNN/y's outcomes: 0, ENOENT, ENOTDIR, and maybe the bug itself: 6.1's
# may_lookup() returns a natural false EACCES now and then (seen: 1 in a
# 3 s run of make check; dcrace.ko's probes widen the window a little),
# which must then be matched like any other.
n=$(jq -c '.runs.unfixed[0] | [.result.truth, .result.pruner, .result.other_errors, .result.mutations > 1000, (.result.outcomes_by_path["m/y"] | keys - ["EACCES"]), .trace.lost, .trace.user_only, .trace.module_only]' "$tmp/nat.json" 2>&1 || true)
ok "$([[ $n == '["construction","none",0,true,["0","ENOENT","ENOTDIR"],0,0,0]' ]]; echo $?)" \
	"natural, unfixed: mutators mutate, mNN/y gives 0, ENOENT, ENOTDIR (and false EACCES, matched), no other error, the trace complete and matched ($n)"

# 2. Injected (300 us, window=2: after a step ends; 1 walker), both lines in one
# compare: 6.1's fixed (its may_lookup() trusts a lazy EACCES) returns
# false EACCES, each matched to its false_eacces event; 6.12's fixed none,
# and dcrace.ko caught the stale state at the walk's end.
run inj "$C" --mode mutate --kernels fixed,6.12/fixed --duration 5 --json "$tmp/inj.json" --results "$T_RESULTS"
diag "$(cat "$tmp/inj.out")"
ok "$([[ $(rcof inj) -eq 0 ]] && grep -q '^verdict: hard-error rule holds: fixed reproduces' "$tmp/inj.out" &&
	grep -q '^dcrace compare: mode=mutate .* threads=1 injection 300 us p=100% window=2' "$tmp/inj.out"; echo $?)" \
	"injected, fixed and 6.12/fixed: the rule holds, exit 0 (got $(rcof inj); $(grep '^verdict:' "$tmp/inj.out" || tail -n 1 "$tmp/inj.err"))"
read -r fe fm fu fo < <(jq -r '.kernels.fixed | [.user_false_by_errno.EACCES // 0, .matched, .user_only, .module_only] | @tsv' "$tmp/inj.json" 2>/dev/null || echo "x x x x")
ok "$(is_count "$fe" "$fm" "$fu" "$fo" && [[ $fe -gt 0 && $fm -eq $(jq -r '.kernels.fixed.user_false_errors' "$tmp/inj.json") && $fu -eq 0 && $fo -eq 0 ]]; echo $?)" \
	"fixed (6.1): $fe false EACCES, every false error matched one to one ($fm matched, $fu user-only, $fo module-only)"
read -r ne nc < <(jq -r '.kernels["6.12/fixed"] | [.user_false_errors, .end_caught] | @tsv' "$tmp/inj.json" 2>/dev/null || echo "x x")
ok "$(is_count "$ne" "$nc" && [[ $ne -eq 0 && $nc -gt 0 ]]; echo $?)" "6.12/fixed: $ne false errors of any errno, end_caught $nc > 0"
n=$(jq -r '[.kernels[] | .hidden, .outside, .other_errors] | add' "$tmp/inj.json" 2>/dev/null || echo x)
ok "$([[ $n == 0 ]]; echo $?)" "injected: no hidden event, none outside the workload, no other error ($n)"

# 3. --uid 65534: the walkers also meet a real 0700 root directory
# (locked/y): its EACCES is allowed, and dcrace.ko does not call it false
# (6.1 judges it at the walk's end: genuine; 6.12 leaves RCU mode first).
run uid "$C" --mode mutate --uid 65534 --kernels fixed,6.12/fixed --duration 3 --json "$tmp/uid.json" --results "$T_RESULTS"
diag "$(cat "$tmp/uid.out")"
# (a short run may also leave 6.12/fixed without the walkers' EACCES
# catches, the evidence a clean verdict needs: inconclusive, said so)
ok "$(grep -q '^dcrace compare: mode=mutate .* uid=65534 ' "$tmp/uid.out" && { [[ $(rcof uid) -eq 0 ]] ||
	{ [[ $(rcof uid) -eq $EX_INCONCLUSIVE ]] && grep -qE '^verdict: INCONCLUSIVE: (the fixed kernel did not reproduce|6\.12/fixed: no evidence the window was reached: end_caught EACCES of the walkers 0 [^;]*$)' "$tmp/uid.out"; }; }; echo $?)" \
	"--uid 65534: exit 0, or 2 only when fixed did not reproduce or 6.12/fixed lacks the walkers' EACCES catches alone (got $(rcof uid); $(grep '^verdict:' "$tmp/uid.out" || tail -n 1 "$tmp/uid.err"))"
n=$(jq -c '[.runs[][] | .result.outcomes_by_path["locked/y"] | keys] | unique' "$tmp/uid.json" 2>&1 || true)
ok "$([[ $n == '[["EACCES"]]' ]]; echo $?)" "--uid 65534: locked/y gives EACCES only, on both kernels ($n)"
n=$(jq -c '[.kernels[] | .hidden + .module_only + .user_only] + [.kernels["6.12/fixed"].user_false_errors, (.runs.fixed[0].stats.end_genuine > 0)]' "$tmp/uid.json" 2>&1 || true)
ok "$([[ $n == '[0,0,0,true]' ]]; echo $?)" \
	"--uid 65534: the locked EACCES are no module event (none hidden or unmatched), 6.12/fixed no false error, 6.1 judged them genuine ($n)"
done_testing
