#!/bin/bash
# compare and check-kernel for real: one short compare in each mode and
# check-kernel on both kernels. The verdict and exit-code logic on canned
# logs is in 30-verdict.t.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 15

tmp_dir
C=$HS/compare

# One short real compare: injection on, 5 s per kernel.
run real "$C" --duration 5 --json "$tmp/real.json" --results "$T_RESULTS"
diag "$(cat "$tmp/real.out")"
ok "$([[ $(rcof real) -eq 0 ]]; echo $?)" "real compare, 5 s injected: exit 0 (got $(rcof real); $(tail -n 1 "$tmp/real.err"))"
ok "$([[ $(jq -r '.kernels.unfixed.user_false_enoent' "$tmp/real.json") -gt 0 && $(jq -r '.kernels.fixed.user_false_enoent' "$tmp/real.json") == 0 ]]; echo $?)" \
	"real compare: unfixed reproduces, fixed clean"
ok "$([[ $(jq -r '.kernels.unfixed.agree' "$tmp/real.json") == true ]]; echo $?)" "real compare: module and user space agree on unfixed"
# The default workload stats and opens (the workload echoes its mix).
ok "$(grep -q '^dcrace compare: mode=stat mix=stat=50,open=50 ' "$tmp/real.out" &&
	[[ $(jq -r '[.runs[][] | .result.mix] | unique | join(" ")' "$tmp/real.json") == "stat=50,open=50" ]]; echo $?)" \
	"real compare: the default mix stat=50,open=50 reached the workload"
# Per event: with a module that has the dcrace_race trace event, every
# event matched both ways on both kernels; without, the counts fallback
# is announced.
if grep -rq 'TRACE_EVENT(dcrace_race' "$ROOT/module" "$ROOT/include" 2>/dev/null; then
	ok "$([[ $(jq -r '[.kernels[] | select(.runs_traced == .runs and .user_only == 0 and .module_only == 0 and .matched == .user_false_enoent)] | length' "$tmp/real.json") == 2 &&
		$(jq -r '.kernels.unfixed.matched' "$tmp/real.json") -gt 0 ]]; echo $?)" \
		"real compare: trace events matched one to one on both kernels ($(jq -c '[.kernels[] | {matched, user_only, module_only}]' "$tmp/real.json"))"
else
	ok "$(grep -q '^note: no dcrace:dcrace_race trace events on: unfixed, fixed' "$tmp/real.out"; echo $?)" \
		"real compare: a module without trace events is compared by counts, and the output says so"
fi

# The clean kernel catches the race on both paths (stats' per-lookup
# counters): walk_component's steps (stat, and every intermediate
# component) and open()'s last component.
read -r wc oc < <(jq -r '[.runs.fixed[].stats | .walk_caught, .open_caught] | @tsv' "$tmp/real.json" || echo "x x")
ok "$(is_count "$wc" "$oc" && [[ $wc -gt 0 && $oc -gt 0 ]]; echo $?)" "real compare: fixed catches on the stat path (walk_caught $wc) and the open path (open_caught $oc)"

# Each bug variant, injected, in stat (default mix) and open mode: every
# run reproduces, within a second, and every event matched one to one
# (host-scripts/variants, the matrix of docs/variants.md, in short).
run var "$HS/variants" --kernels mount-refetch,open-last --modes stat,open --kinds injected \
	--runs 1 --duration 3 --results "$T_RESULTS" --json "$tmp/var.json"
diag "$(cat "$tmp/var.out")"
ok "$([[ $(rcof var) -eq 0 ]]; echo $?)" "variants, mount-refetch and open-last injected: every check holds, exit 0 (got $(rcof var); $(tail -n 1 "$tmp/var.err"))"
ok "$([[ $(jq -r '[.cells[] | select(.reproduced == 1 and .user > 0 and .runs_one_to_one == 1 and .user_only == 0 and .module_only == 0 and .matched == .user)] | length' "$tmp/var.json") == 4 ]]; echo $?)" \
	"variants: the 4 cells reproduced and matched one to one ($(jq -c '[.cells[] | {kernel, mode, user, matched, user_only, module_only}]' "$tmp/var.json"))"
ok "$([[ $(jq -r '[.cells[] | select(.firsts | length == 1 and .[0] <= 1)] | length' "$tmp/var.json") == 4 ]]; echo $?)" \
	"variants: time to the first false ENOENT <= 1 s in each ($(jq -c '[.cells[].firsts[]]' "$tmp/var.json"))"
# open-last's bug is on open()'s last component only: its false ENOENTs
# come from opens, and the module saw them as lookup=open.
ok "$([[ $(jq -r '[.cells[] | select(.kernel == "open-last") | .open_false] | add' "$tmp/var.json") -gt 0 &&
	$(jq -r '[.cells[] | select(.kernel == "open-last") | .walk_false] | add' "$tmp/var.json") == 0 ]]; echo $?)" \
	"variants: open-last's false ENOENTs are all open()'s last component (open_false_enoent $(jq -r '[.cells[] | select(.kernel == "open-last") | .open_false] | add' "$tmp/var.json"), walk_false_enoent $(jq -r '[.cells[] | select(.kernel == "open-last") | .walk_false] | add' "$tmp/var.json"))"

# cp mode (Hugh's walker: cp -a style copies, pruned by drop_caches),
# injected: every ENOENT on a path the copier knows exists is a false one,
# the module explains each one to one, the first within a second.
run cp "$C" --mode cp --duration 5 --json "$tmp/cp.json" --results "$T_RESULTS"
diag "$(cat "$tmp/cp.out")"
ok "$([[ $(rcof cp) -eq 0 ]]; echo $?)" "cp mode, 5 s injected: fix holds, exit 0 (got $(rcof cp); $(tail -n 1 "$tmp/cp.err"))"
ok "$([[ $(jq -r '[.kernels[] | select(.runs_traced == .runs and .user_only == 0 and .module_only == 0 and .matched == .user_false_enoent)] | length' "$tmp/cp.json") == 2 &&
	$(jq -r '[.runs[][] | .result | select(.other_errors == 0 and .pruner == "drop_caches" and .mode == "cp" and .syscalls > 1000)] | length' "$tmp/cp.json") == 2 &&
	$(jq -r '.runs.unfixed[0].result.first_false_enoent_s // 99 | . <= 1' "$tmp/cp.json") == true ]]; echo $?)" \
	"cp mode: copying (syscalls > 1000), drop_caches, no other errors; every event matched one to one on both kernels; unfixed's first at $(jq -r '.runs.unfixed[0].result.first_false_enoent_s' "$tmp/cp.json") s (<= 1)"
# --pruner pressure: Hugh's memory shortage (192M, the shrinker prunes);
# its races are rare, so only that it runs as set up and that whatever it
# shows is matched (exit 0 fix holds or 2 inconclusive, never 3 or 4).
run cpp "$C" --mode cp --pruner pressure --kernels unfixed --duration 8 --json "$tmp/cpp.json" --results "$T_RESULTS"
diag "$(cat "$tmp/cpp.out")"
ok "$([[ $(rcof cpp) -eq 0 || $(rcof cpp) -eq 2 ]] &&
	[[ $(jq -r '.settings.mem' "$tmp/cpp.json") == 192M &&
	$(jq -r '[.runs.unfixed[].result | select(.other_errors == 0 and .pruner == "pressure" and .cache_pressure == 10000 and .syscalls > 1000 and .prunes > 0)] | length' "$tmp/cpp.json") == 1 &&
	$(jq -r '.kernels.unfixed | .user_only + .module_only' "$tmp/cpp.json") == 0 ]]; echo $?)" \
	"cp --pruner pressure: 192M guest, vfs_cache_pressure 10000, copying and reclaim passes made, exit 0 or 2 (got $(rcof cpp)), nothing unmatched ($(jq -c '.kernels.unfixed | {user_false_enoent, matched, user_only, module_only}' "$tmp/cpp.json"))"

# check-kernel, as git bisect run would call it.
run ck-u "$HS/check-kernel" --kernel unfixed --duration 3 --results "$T_RESULTS"
run ck-f "$HS/check-kernel" --kernel fixed --duration 3 --results "$T_RESULTS"
diag "$(cat "$tmp/ck-u.out" "$tmp/ck-f.out")"
ok "$([[ $(rcof ck-u) -eq 1 ]]; echo $?)" "check-kernel unfixed: bad (1; got $(rcof ck-u))"
ok "$([[ $(rcof ck-f) -eq 0 ]]; echo $?)" "check-kernel fixed: good (0; got $(rcof ck-f))"
done_testing
