#!/bin/bash
# A genuine error is never called false. One walker running as another user
# (--uid 65534) stats locked/y under a real 0700 directory: EACCES, decided
# in RCU mode by 6.1's may_lookup() on valid state. Another thread renames
# locked to locked.r and back (--rename-locked), and dcrace.ko's test
# window 4 busy-waits between that decision and the walk-end snapshot
# (terminate_walk()), so the rename lands there: the directory's d_seq has
# moved, its inode is the same. The first version of the rule read any
# movement as stale state and called these EACCES false_eacces (a "BUG:"
# line each); now they are end_unvouched. The false_eacces that remain are
# mNN/y's (the mutator's file -> directory: 6.1's real bogus EACCES), each a
# user-visible false error: the module's count equals user space's.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 8

D=/sys/kernel/debug/dcrace
# s NAME LOG: a counter from the stats block the guest printed
s() {
	sed -n '/^DCRACE-STATS-BEGIN/,/^DCRACE-STATS-END/p' "$2" |
		sed -n "s/^$1: \([0-9-]*\)$/\1/p" | tail -n 1
}
for k in debian fixed; do
	log=$T_RESULTS/unvouched-$k.log
	rc=0
	"$HS/run-guest" -q --kernel "$k" --module --timeout 400 --log "$log" --exec "
echo dcr-walk > $D/inject/comm && echo 4 > $D/inject/window && echo 1000 > $D/inject/delay_us &&
	echo 1 > $D/inject/verbose || exit 1
dcrace-workload --quiet --seed 1 --threads 1 --mode mutate --uid 65534 --rename-locked --duration 3 || echo DCRACE-O workload-failed
echo DCRACE-STATS-BEGIN; cat $D/stats; echo DCRACE-STATS-END
" >/dev/null || rc=$?
	res=$(guest_json "$log")
	read -r ue un ufe <<<"$(jq -r '[(.outcomes_by_path["locked/y"].EACCES // 0), (.outcomes_by_path["locked/y"].ENOENT // 0), (.false_errors.EACCES // 0)] | @tsv' <<<"$res" 2>/dev/null || echo "x x x")"
	fe=$(s false_eacces "$log")
	uv=$(s end_unvouched "$log")
	inj=$(s injected_delays "$log")
	ok "$([[ $rc -eq 0 ]] && ! grep -q '^DCRACE-O workload-failed' "$log" && is_count "$ue" "$un" "$ufe" "$fe" "$uv" "$inj" &&
		[[ $ue -gt 0 && $inj -gt 0 ]]; echo $?)" \
		"$k: --uid 65534 walker on locked/y renamed back and forth, window 4 (1000 us): locked/y EACCES $ue, ENOENT $un; delays $inj (log $log)"
	ok "$(is_count "$fe" "$ufe" && [[ $fe -eq $ufe ]]; echo $?)" \
		"$k: module false_eacces ($fe) = user-visible false EACCES ($ufe, mNN/y only): no genuine EACCES of locked/y called false"
	ok "$(is_count "$uv" && [[ $uv -gt 0 ]]; echo $?)" \
		"$k: end_unvouched $uv > 0 (renames landed between the decision and the snapshot: the window was reached), end_genuine $(s end_genuine "$log")"
	n=$(grep -c 'BUG: dcrace: false EACCES' "$log" || true)
	ok "$(is_count "$ufe" && [[ ($ufe -eq 0 && $n -eq 0) || ($n -ge 1 && $n -le $ufe) ]]; echo $?)" \
		"$k: verbose=1: 'BUG: dcrace: false EACCES' lines $n (rate-limited; none without a user-visible false EACCES: $ufe)"
done
done_testing
