#!/bin/bash
# compare and check-kernel: JSON/log parsing and the verdict and exit-code
# logic on canned logs, then one short real compare and check-kernel run.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 26

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
C=$HS/compare

# mklog FILE USER_FALSE MODULE_FALSE CAUGHT [broken]: a canned serial log.
mklog() {
	local f=$1 u=$2 m=$3 c=$4 how=${5:-}
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		echo "DCRACE-MODULE-LOADED"
		if [[ $how == garbage ]]; then
			echo 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":12'
		elif [[ $how != killed ]]; then
			printf 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":1000,"false_enoent":%d,"first_false_enoent_s":%s,"per_second":[%d],"elapsed_s":1.0}\n' \
				"$u" "$([[ $u -gt 0 ]] && echo 0.5 || echo null)" "$u"
		fi
		[[ $how == killed ]] && return
		echo "DCRACE-STATS-BEGIN"
		printf 'enabled: 1\nnull_inode_seen: %d\nfalse_enoent: %d\ncaught: %d\ncaught_late: 3\nevents: %d\nevents_lost: 0\n' \
			$((m + c)) "$m" "$c" $((m + c))
		echo "DCRACE-STATS-END"
		[[ $how == truncated ]] && return
		echo "DCRACE-DMESG-BEGIN"
		echo "DCRACE-DMESG-END"
		echo "DCRACE-EXIT 0"
	} >"$f"
}

run() {
	# run NAME CMD...: keep stdout/stderr/exit status.
	local n=$1 rc=0
	shift
	"$@" >"$tmp/$n.out" 2>"$tmp/$n.err" || rc=$?
	echo "$rc" >"$tmp/$n.rc"
}
rcof() { cat "$tmp/$1.rc"; }

mklog "$tmp/u-good" 5 5 0
mklog "$tmp/f-good" 0 0 7
mklog "$tmp/f-bad" 1 1 7
mklog "$tmp/u-none" 0 0 0
mklog "$tmp/u-disagree" 5 4 0
mklog "$tmp/trunc" 5 5 0 truncated
mklog "$tmp/garbage" 5 5 0 garbage
mklog "$tmp/killed" 0 0 0 killed

run ok "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" --json "$tmp/ok.json"
ok "$([[ $(rcof ok) -eq 0 ]]; echo $?)" "fix holds: exit 0 (got $(rcof ok))"
ok "$(grep -q '^verdict: fix holds' "$tmp/ok.out"; echo $?)" "fix holds: verdict line"
ok "$(grep -qE '^user-visible false ENOENT +5 +0$' "$tmp/ok.out"; echo $?)" "table: user-visible false ENOENT per kernel"
ok "$(grep -qE '^module and user space agree +yes +yes$' "$tmp/ok.out"; echo $?)" "table: module and user space agree"
ok "$([[ $(jq -r '.exit' "$tmp/ok.json") == 0 && $(jq -r '.kernels.fixed.module_caught' "$tmp/ok.json") == 7 ]]; echo $?)" "--json writes the verdict and the counts"
diag "$(cat "$tmp/ok.out")"

run bad "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-bad"
ok "$([[ $(rcof bad) -eq 1 ]] && grep -q 'FIX DOES NOT HOLD' "$tmp/bad.out"; echo $?)" "a false ENOENT on fixed: exit 1 (got $(rcof bad))"
run inc "$C" --from-logs "unfixed=$tmp/u-none" "fixed=$tmp/f-good"
ok "$([[ $(rcof inc) -eq 2 ]] && grep -q 'INCONCLUSIVE' "$tmp/inc.out"; echo $?)" "unfixed did not reproduce: exit 2 (got $(rcof inc))"
run dis "$C" --from-logs "unfixed=$tmp/u-disagree" "fixed=$tmp/f-good"
ok "$(grep -qE '^module and user space agree +NO' "$tmp/dis.out" && grep -q '^note: module and user-space counts differ on: unfixed' "$tmp/dis.out"; echo $?)" "disagreement between module and user space is shown"
run two "$C" --from-logs "unfixed=$tmp/u-good" "unfixed=$tmp/u-none" "fixed=$tmp/f-good"
ok "$(grep -qE '^runs that reproduced +1/2 +0/1$' "$tmp/two.out"; echo $?)" "several runs per kernel are aggregated"

for b in trunc garbage killed; do
	run "$b" "$C" --from-logs "unfixed=$tmp/$b" "fixed=$tmp/f-good"
	ok "$([[ $(rcof "$b") -eq 3 && $(grep -c . "$tmp/$b.err") -eq 1 ]] && grep -q "infrastructure error: .*$tmp/$b" "$tmp/$b.err"; echo $?)" \
		"$b log: infrastructure error, exit 3, one line naming the log ($(cat "$tmp/$b.err"))"
done
run missing "$C" --from-logs "unfixed=$tmp/nonexistent" "fixed=$tmp/f-good"
ok "$([[ $(rcof missing) -eq 3 ]]; echo $?)" "a missing log is an infrastructure error"

run usage "$C" --duration nope
ok "$([[ $(rcof usage) -eq 64 && $(grep -c . "$tmp/usage.err") -eq 1 ]]; echo $?)" "bad usage: exit 64, one line"
run usage2 "$C" --natural --inject 5
ok "$([[ $(rcof usage2) -eq 64 ]]; echo $?)" "--natural and --inject conflict: exit 64"
run help "$C" --help
ok "$([[ $(rcof help) -eq 0 ]] && grep -q -- '--natural' "$tmp/help.out"; echo $?)" "compare --help"
run help2 "$HS/check-kernel" --help
ok "$([[ $(rcof help2) -eq 0 ]] && grep -q 'git bisect run' "$tmp/help2.out"; echo $?)" "check-kernel --help"
run ck-bad "$HS/check-kernel" --kernel /no/such/bzImage
ok "$([[ $(rcof ck-bad) -eq 125 ]]; echo $?)" "check-kernel on a missing kernel: 125, could not test"

# One short real compare: injection on, 5 s per kernel.
run real "$C" --duration 5 --json "$tmp/real.json" --results "$T_RESULTS"
diag "$(cat "$tmp/real.out")"
ok "$([[ $(rcof real) -eq 0 ]]; echo $?)" "real compare, 5 s injected: exit 0 (got $(rcof real); $(tail -n 1 "$tmp/real.err"))"
ok "$([[ $(jq -r '.kernels.unfixed.user_false_enoent' "$tmp/real.json") -gt 0 && $(jq -r '.kernels.fixed.user_false_enoent' "$tmp/real.json") == 0 ]]; echo $?)" \
	"real compare: unfixed reproduces, fixed clean"
ok "$([[ $(jq -r '.kernels.unfixed.agree' "$tmp/real.json") == true ]]; echo $?)" "real compare: module and user space agree on unfixed"

# cp mode (Hugh's reproduction: copies in 192M, the shrinker prunes), with
# injection so that 20 s suffice: every ENOENT on a path the copier knows
# exists is a false one, and the module explains each (agree).
run cp "$C" --mode cp --duration 20 --json "$tmp/cp.json" --results "$T_RESULTS"
diag "$(cat "$tmp/cp.out")"
ok "$([[ $(rcof cp) -eq 0 ]]; echo $?)" "cp mode, 20 s injected: fix holds, exit 0 (got $(rcof cp); $(tail -n 1 "$tmp/cp.err"))"
ok "$([[ $(jq -r '.kernels.unfixed.agree and .kernels.fixed.agree' "$tmp/cp.json") == true ]]; echo $?)" "cp mode: module and user space agree on both kernels"
ok "$([[ $(jq -r '[.runs[][] | .result | select(.other_errors == 0 and .cache_pressure == 10000 and .mode == "cp" and .copies > 0)] | length' "$tmp/cp.json") == 2 ]]; echo $?)" \
	"cp mode: copies made, no other errors, vfs_cache_pressure 10000, in both runs"

# check-kernel, as git bisect run would call it.
run ck-u "$HS/check-kernel" --kernel unfixed --duration 3 --results "$T_RESULTS"
run ck-f "$HS/check-kernel" --kernel fixed --duration 3 --results "$T_RESULTS"
diag "$(cat "$tmp/ck-u.out" "$tmp/ck-f.out")"
ok "$([[ $(rcof ck-u) -eq 1 ]]; echo $?)" "check-kernel unfixed: bad (1; got $(rcof ck-u))"
ok "$([[ $(rcof ck-f) -eq 0 ]]; echo $?)" "check-kernel fixed: good (0; got $(rcof ck-f))"
done_testing
