#!/bin/bash
# The rule without d_seq (issue 24): seq-forget's pruner clears d_inode
# without moving d_seq, so every reader's seqcount check passes and the
# walker returns a false ENOENT on an unchanged d_seq. dcrace.ko's own
# truth (the sample saw an inode, or the kill record, bound by the RCU
# grace period, says the dentry was positive when killed in the walker's
# section) calls each one false_enoent with seq_state=unchanged; every
# user-visible one is matched to such an event; fixed has none. Also: the
# walk ends and try_to_unlazy() are probed on our 6.1 kernels.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 10

secs=${DCRACE_SEQ_FORGET_SECONDS:-4}
out=$T_RESULTS/seq-forget
mkdir -p "$out"
rc=0
"$HS/compare" --kernels seq-forget,fixed --duration "$secs" --json "$out/c.json" \
	--results "$out" >"$out/compare.txt" 2>&1 || rc=$?
diag "$(tail -n 4 "$out/compare.txt")"
ok "$rc" "compare seq-forget,fixed ($secs s, injected): exit 0 (got $rc)"
k() { jq -r ".kernels[\"$1\"].$2 // \"x\"" "$out/c.json" 2>/dev/null || echo x; }
u=$(k seq-forget user_false_enoent)
ok "$([[ $u =~ ^[0-9]+$ && $u -gt 0 && $(k seq-forget matched) == "$u" && $(k seq-forget user_only) == 0 && $(k seq-forget module_only) == 0 ]]; echo $?)" \
	"seq-forget: user-visible false ENOENTs ($u) all matched one to one ($(k seq-forget matched))"
log=$(find "$out" -name 'seq-forget-run1.log' | head -n 1)
ev=$(grep -o 'verdict=false_enoent .*' "${log:-/dev/null}" | sort -u || true)
nu=$(grep -c 'seq_state=unchanged$' <<<"$ev" || true)
nc=$(grep -c 'seq_state=changed$' <<<"$ev" || true)
ok "$([[ $nu -gt 0 && $nu -ge $u && $nc -eq 0 ]]; echo $?)" \
	"seq-forget: every false_enoent event says seq_state=unchanged ($nu unchanged, $nc changed)"
st() { sed -n '/^DCRACE-STATS-BEGIN/,/^DCRACE-STATS-END/p' "$2" | sed -n "s/^$1: \([0-9]*\)$/\1/p" | tail -n 1; }
fe=$(st false_enoent "${log:-/dev/null}")
fs=$(st false_enoent_seq_unchanged "${log:-/dev/null}")
ok "$([[ -n $fe && $fe -gt 0 && $fe == "$fs" ]]; echo $?)" \
	"seq-forget: stats false_enoent_seq_unchanged equals false_enoent ($fs = $fe)"
ok "$([[ $(k fixed user_false_enoent) == 0 && $(k fixed module_false_enoent) == 0 ]]; echo $?)" \
	"fixed: no false ENOENT, user $(k fixed user_false_enoent), module $(k fixed module_false_enoent)"
flog=$(find "$out" -name 'fixed-run1.log' | head -n 1)
ok "$([[ $(st false_enoent_seq_unchanged "${flog:-/dev/null}") == 0 ]]; echo $?)" \
	"fixed: false_enoent_seq_unchanged 0"

# The probes of the walk's end, on unfixed.
plog=$T_RESULTS/walk-end-probes.log
prc=0
"$HS/run-guest" -q --module --timeout 200 --log "$plog" \
	--exec "sed 's/^/DCRACE-P /' /sys/kernel/debug/dcrace/probes" unfixed >/dev/null || prc=$?
ok "$prc" "unfixed: guest printed probes (log $plog)"
n=$(grep -cE '^DCRACE-P unlazy_call link_path_walk[.a-z0-9]*\+0x[0-9a-f]+/0x[0-9a-f]+ kprobe armed -$' "$plog" || true)
ok "$([[ $n -ge 1 ]]; echo $?)" \
	"unlazy_call: link_path_walk's calls of try_to_unlazy() probed (the walk's revalidations: end_caught) ($n)"
n=$(grep -c '^DCRACE-P end_return ' "$plog" || true)
ok "$([[ $n -ge 4 ]]; echo $?)" "unfixed: end_return after the calls of path_lookupat/path_parentat ($n)"
j=$(grep -cE '^DCRACE-P walk_end (path_lookupat|path_parentat|path_openat) judged$' "$plog" || true)
ok "$([[ $j -eq 3 ]]; echo $?)" "unfixed: walk_end path_lookupat, path_parentat, path_openat judged ($j of 3)"
done_testing
