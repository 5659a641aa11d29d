#!/bin/bash
# compare and check-kernel without a guest: JSON/log parsing, the verdict
# and the exit codes on canned logs, usage errors. (The real runs are in
# 60-compare.t.)
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 90

tmp_dir
C=$HS/compare

# mklog FILE USER_FALSE MODULE_FALSE CAUGHT [how]: a canned serial log;
# how: truncated, garbage, killed (broken logs), other (2 other errors),
# few (12 syscalls), splat (a WARNING in dmesg), gone (1 path really gone),
# pruned (prunes and other_errors fields, 0 errors). CAUGHT is caught on
# each path (walk_caught, open_caught) unless WC or OC say otherwise; MIX:
# the result's mix.
mklog() {
	local f=$1 u=$2 m=$3 c=$4 how=${5:-} sc=1000 extra=
	case $how in
	other) extra=',"other_errors":2' ;;
	few) sc=12 ;;
	gone) extra=',"gone":1' ;;
	pruned) extra=',"other_errors":0,"prunes":321' ;;
	esac
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		echo "DCRACE-MODULE-LOADED"
		if [[ $how == garbage ]]; then
			echo 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":12'
		elif [[ $how != killed ]]; then
			printf 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":%d,"false_enoent":%d,"first_false_enoent_s":%s,"per_second":[%d],"elapsed_s":1.0%s%s}\n' \
				"$sc" "$u" "$([[ $u -gt 0 ]] && echo 0.5 || echo null)" "$u" "$extra" "${MIX:+,\"mix\":\"$MIX\"}"
		fi
		[[ $how == killed ]] && return
		echo "DCRACE-STATS-BEGIN"
		printf 'enabled: 1\nnull_inode_seen: %d\nfalse_enoent: %d\ncaught: %d\ncaught_late: 3\nevents: %d\nevents_lost: 0\nwalk_caught: %d\nopen_caught: %d\n' \
			$((m + c)) "$m" "$c" $((m + c)) "${WC:-$c}" "${OC:-$c}"
		echo "DCRACE-STATS-END"
		[[ $how == truncated ]] && return
		echo "DCRACE-DMESG-BEGIN"
		[[ $how != splat ]] || echo "[    3.1] WARNING: CPU: 1 PID: 60 at fs/dcache.c:600 dentry_free+0x1/0x2"
		echo "DCRACE-DMESG-END"
		echo "DCRACE-EXIT 0"
	} >"$f"
}

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


# A verdict needs an unfixed and a fixed run (issue 12, item 14).
run only-f "$C" --from-logs "fixed=$tmp/f-good"
ok "$([[ $(rcof only-f) -eq 2 ]] && grep -q '^verdict: INCONCLUSIVE: no verdict without an unfixed and a fixed kernel' "$tmp/only-f.out"; echo $?)" \
	"only a fixed run: no verdict, exit 2 (got $(rcof only-f))"
run only-u "$C" --from-logs "unfixed=$tmp/u-good"
ok "$([[ $(rcof only-u) -eq 2 ]]; echo $?)" "only an unfixed run: exit 2 (got $(rcof only-u))"
run only-fb "$C" --from-logs "fixed=$tmp/f-bad"
ok "$([[ $(rcof only-fb) -eq 1 ]] && grep -q 'FIX DOES NOT HOLD' "$tmp/only-fb.out"; echo $?)" \
	"only a fixed run with a false ENOENT: the fix fails, exit 1 (got $(rcof only-fb))"
run deb-bad "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" "debian=$tmp/f-bad"
ok "$([[ $(rcof deb-bad) -eq 1 ]] && grep -q '^verdict: FIX DOES NOT HOLD: 1 false ENOENT on the debian kernel' "$tmp/deb-bad.out"; echo $?)" \
	"a third kernel expected clean (debian) with a false ENOENT: exit 1 (got $(rcof deb-bad))"
run deb-ok "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" "debian=$tmp/f-good"
ok "$([[ $(rcof deb-ok) -eq 0 ]]; echo $?)" "unfixed, fixed and a clean debian: fix holds, exit 0 (got $(rcof deb-ok))"
run path-bad "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" "/some/bzImage=$tmp/u-good"
ok "$([[ $(rcof path-bad) -eq 0 ]]; echo $?)" "a bzImage path's column does not judge the fix (exit $(rcof path-bad))"

# The workload's health (item 15): each problem makes the verdict 2 or 3,
# even where the counts alone say "fix holds".
for h in other:2 few:2 splat:3 gone:3; do
	mklog "$tmp/f-${h%:*}" 0 0 7 "${h%:*}"
	run "h-${h%:*}" "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-${h%:*}"
	ok "$([[ $(rcof "h-${h%:*}") -eq ${h#*:} ]]; echo $?)" \
		"fixed run with ${h%:*}: exit ${h#*:} (got $(rcof "h-${h%:*}"); $(grep '^verdict:' "$tmp/h-${h%:*}.out"))"
done
ok "$([[ $(rcof dis) -eq 2 ]] && grep -q '^verdict: INCONCLUSIVE: unfixed: module and user-space counts differ' "$tmp/dis.out"; echo $?)" \
	"module and user space disagree: inconclusive, exit 2 (got $(rcof dis))"
mklog "$tmp/u-pruned" 5 5 0 pruned
run pruned "$C" --from-logs "unfixed=$tmp/u-pruned" "fixed=$tmp/f-other"
ok "$(grep -qE '^prunes \(pruner passes\) +321 +0$' "$tmp/pruned.out" &&
	grep -qE '^other errors \(not ENOENT\) +0 +2$' "$tmp/pruned.out"; echo $?)" "the table shows prunes and other errors per kernel"

# check-kernel under git bisect run (item 17): a bad command line aborts
# the bisection (>= 128), not "skip" (125) or "bad" (1..127).
for bad in "--duration nan" "--duration inf" "--duration -1" "--inject 20000" "--inject -5" "--tries 0" "--bogus"; do
	# shellcheck disable=SC2086
	run ck-usage "$HS/check-kernel" --kernel unfixed $bad
	ok "$([[ $(rcof ck-usage) -eq $EX_BISECT_USAGE && $(grep -c . "$tmp/ck-usage.err") -eq 1 ]]; echo $?)" \
		"check-kernel $bad: usage error, exit $EX_BISECT_USAGE, one line (got $(rcof ck-usage): $(head -c 200 "$tmp/ck-usage.err"))"
done
ok "$(grep -q 'make -j2 bzImage || exit 125' "$tmp/help2.out" && ! grep -q 'make[^|]*&& ' "$tmp/help2.out"; echo $?)" \
	"check-kernel --help maps a failed build to 125 (skip), not make's 2 (bad)"
# A value dcrace.ko refuses stops the run with a setup error (run-guest:
# 125, so check-kernel cannot test, compare's infrastructure error), not a
# run without injection: the guest script on a fake debugfs where the
# delay_us write fails.
mkdir -p "$tmp/dbg/inject" "$tmp/dbg/inject/delay_us"
(cd "$HS" && python3 -c '
import sys
from dcrace_harness import spec
spec.DEBUGFS = sys.argv[1]
print(spec.RunSpec(inject_us=50).guest_script().replace("dcrace-workload", "echo WORKLOAD-RAN"))' "$tmp/dbg") >"$tmp/guest.sh"
rc=0
out=$(sh "$tmp/guest.sh" 2>/dev/null) || rc=$?
ok "$([[ $rc -ne 0 && $out == *"DCRACE-SETUP-ERROR dcrace.ko refused inject/delay_us=50"* && $out != *WORKLOAD-RAN* &&
	$(cat "$tmp/dbg/inject/comm") == dcr-walk ]]; echo $?)" \
	"a refused inject value stops the guest with a setup error, before the workload (exit $rc: $out)"
# Paths in the output are relative to the checkout (README's sample).
ok "$(cd "$ROOT" && python3 -c '
import os, sys
sys.path.insert(0, "host-scripts")
from dcrace_harness.runner import shown
sys.exit(not (shown(os.path.abspath("results/compare-1")) == "results/compare-1" and shown("/elsewhere/x") == "/elsewhere/x"))'; echo $?)" \
	"compare and check-kernel print their logs directory relative to the current one"

# Per-event ground truth (issue 13): dcrace.ko's dcrace:dcrace_race trace
# events matched one to one to the workload's "paths" (pid = tid, the
# event's component in the path, 0 <= user ns - module ns <= 100 ms).
# mktr FILE FALSE PATHS LOST [PID:COMPONENT:NS...]: a canned log whose
# workload saw FALSE false ENOENTs listed in PATHS (a JSON list), with
# one trace event per PID:COMPONENT:NS[:COMM] (COMM default dcr-walk;
# LOST: the trace's lost count; "cut": the section has no end; TIDS=a,b:
# the result's "tids", else it has none; CAUGHT: caught on each path,
# default 4; ELAPSED, FIRST: the result's elapsed_s, first_false_enoent_s).
B=5000000000
pe() { printf '{"path":"%s","t":0.5,"tid":%d,"ns":%d,"op":"stat"}' "$1" "$2" "$3"; }
mktr() {
	local f=$1 u=$2 paths=$3 lost=$4 e pid comp ns
	shift 4
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		echo "DCRACE-MODULE-LOADED"
		printf 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":1000,"false_enoent":%d,%s"first_false_enoent_s":%s,"per_second":[%d],"elapsed_s":%s,"paths":%s,"paths_dropped":0,"gone":0,"mix":"stat=50,open=50"}\n' \
			"$u" "${TIDS:+\"tids\":[$TIDS],}" "${FIRST:-$([[ $u -gt 0 ]] && echo 0.5 || echo null)}" "$u" "${ELAPSED:-1.0}" "$paths"
		echo "DCRACE-TRACE-BEGIN"
		for e in "$@"; do
			IFS=: read -r pid comp ns comm <<<"$e"
			comm=${comm:-dcr-walk}
			echo "        $comm-$pid     [001] d..1.     5.000000: dcrace_race: verdict=false_enoent pid=$pid comm=$comm lookup=walk component=$comp seq=4/6 result=-2 killer=-1/unknown kill_to_read_ns=-1 ns=$ns"
		done
		[[ $lost == cut ]] || echo "DCRACE-TRACE-END"
		[[ $lost == cut ]] || echo "DCRACE-TRACE-LOST $lost"
		echo "DCRACE-STATS-BEGIN"
		printf 'enabled: 1\nnull_inode_seen: %d\nfalse_enoent: %d\ncaught: %d\ncaught_late: 0\nevents: %d\nevents_lost: 0\nwalk_caught: %d\nopen_caught: %d\n' \
			$(($# + ${CAUGHT:-4})) $(($# + ${STATS_EXTRA:-0})) "${CAUGHT:-4}" $(($# + ${CAUGHT:-4})) "${CAUGHT:-4}" "${CAUGHT:-4}"
		echo "DCRACE-STATS-END"
		echo "DCRACE-DMESG-BEGIN"
		echo "DCRACE-DMESG-END"
		echo "DCRACE-EXIT 0"
	} >"$f"
}
# judge NAME LOG: compare the log as unfixed against a clean fixed run.
judge() { run "$1" "$C" --from-logs "unfixed=$2" "fixed=$tmp/f-good" --json "$tmp/$1.json"; }
# rows NAME MATCHED USER_ONLY MODULE_ONLY: the table's rows for unfixed.
rows() {
	grep -qE "^module events matched to user failures +$2 +0$" "$tmp/$1.out" &&
		grep -qE "^  user-only \(module missed\) +$3 +0$" "$tmp/$1.out" &&
		grep -qE "^  module-only \(no user failure\) +$4 +0$" "$tmp/$1.out"
}
F=/mnt/dcrace/d3/f7
mktr "$tmp/f-good" 0 '[]' 0
mktr "$tmp/t-match" 2 "[$(pe $F 101 $((B + 500))),$(pe /mnt/dcrace/d1/f2 102 $((B + 900)))]" 0 \
	101:f7:$B 102:f2:$((B + 800))
judge t-match "$tmp/t-match"
diag "$(cat "$tmp/t-match.out")"
ok "$([[ $(rcof t-match) -eq 0 ]] && rows t-match 2 0 0 && grep -qE '^module and user space agree +yes +yes$' "$tmp/t-match.out"; echo $?)" \
	"every event matched both ways: 2 matched, 0 user-only, 0 module-only, agree, exit 0 (got $(rcof t-match))"
ok "$([[ $(jq -r '.runs.unfixed[0].trace.matched' "$tmp/t-match.json") == 2 && $(jq -r '.kernels.unfixed.runs_traced' "$tmp/t-match.json") == 1 ]]; echo $?)" \
	"--json holds each run's per-event match"
# Equal counts that hide a miss and a false alarm: the old check agreed.
mktr "$tmp/t-cancel" 2 "[$(pe $F 101 $((B + 500))),$(pe $F 101 $((B + 900000000)))]" 0 \
	101:f7:$B 103:f7:$((B + 890000000))
judge t-cancel "$tmp/t-cancel"
diag "$(cat "$tmp/t-cancel.out")"
ok "$([[ $(rcof t-cancel) -eq $EX_DETECTOR ]] && rows t-cancel 1 1 1 && grep -qE '^module and user space agree +NO' "$tmp/t-cancel.out" &&
	grep -q '^verdict: DETECTOR FAILURE: unfixed: 1 user-only (module missed), 1 module-only' "$tmp/t-cancel.out"; echo $?)" \
	"a miss and a false alarm with equal counts: 1 user-only, 1 module-only, detector failure, exit $EX_DETECTOR (got $(rcof t-cancel))"
mktr "$tmp/t-uonly" 2 "[$(pe $F 101 $((B + 500))),$(pe $F 101 $((B + 900000000)))]" 0 101:f7:$B
judge t-uonly "$tmp/t-uonly"
ok "$([[ $(rcof t-uonly) -eq $EX_DETECTOR ]] && rows t-uonly 1 1 0; echo $?)" "a user failure the module missed: user-only, exit $EX_DETECTOR (got $(rcof t-uonly))"
ok "$([[ $(jq -r '.runs.unfixed[0].trace.user_only_first[0].ns' "$tmp/t-uonly.json") == $((B + 900000000)) ]]; echo $?)" \
	"--json names the unmatched user failure"
mktr "$tmp/t-monly" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B 101:f7:$((B + 2000))
judge t-monly "$tmp/t-monly"
ok "$([[ $(rcof t-monly) -eq $EX_DETECTOR ]] && rows t-monly 1 0 1; echo $?)" "a module event without a user failure: module-only, exit $EX_DETECTOR (got $(rcof t-monly))"
# Events of other processes (the guest's shell exec'ing /proc/self/exe,
# the pruner): not the workload's, so neither matched nor module-only,
# counted as outside. Without "tids" the walkers are known by their comm,
# with it by their tid (a dcr-walk of another pid is outside then).
mktr "$tmp/t-out" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B 68:68:$((B + 1000)):exe
judge t-out "$tmp/t-out"
ok "$([[ $(rcof t-out) -eq 0 ]] && rows t-out 1 0 0 &&
	grep -qE '^  outside the workload \(other processes\) +1 +0$' "$tmp/t-out.out" &&
	grep -q '^note: module false_enoent events in other processes of the guest.*: unfixed 1$' "$tmp/t-out.out" &&
	[[ $(jq -r '.runs.unfixed[0].trace.outside_first[0].comm' "$tmp/t-out.json") == exe ]]; echo $?)" \
	"an event of another process (comm exe, no tids): outside the workload, not module-only, exit 0 (got $(rcof t-out))"
TIDS=101,102 mktr "$tmp/t-tids" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B 64:f7:$((B + 1000)) 102:f7:$((B + 2000))
judge t-tids "$tmp/t-tids"
ok "$([[ $(rcof t-tids) -eq $EX_DETECTOR ]] && rows t-tids 1 0 1 &&
	grep -qE '^  outside the workload \(other processes\) +1 +0$' "$tmp/t-tids.out"; echo $?)" \
	"with tids: a dcr-walk event of pid 64 (not a walker) is outside; walker 102's event without a failure is module-only, exit $EX_DETECTOR (got $(rcof t-tids))"

# The window's edges: 0 and 100 ms after the event match; 100 ms + 1 ns
# after, or 1 ns before, do not.
W=100000000
for c in "0:1:0:0" "$W:1:0:0" "$((W + 1)):0:1:1" "-1:0:1:1"; do
	IFS=: read -r d m uo mo <<<"$c"
	mktr "$tmp/t-w" 1 "[$(pe $F 101 $((B + d)))]" 0 101:f7:$B
	judge t-w "$tmp/t-w"
	ok "$(rows t-w "$m" "$uo" "$mo"; echo $?)" "user failure $d ns after the event: $m matched, $uo user-only, $mo module-only"
done
mktr "$tmp/t-w" 1 "[$(pe $F 101 $((B + 150000000)))]" 0 101:f7:$B
run t-w2 "$C" --from-logs "unfixed=$tmp/t-w" "fixed=$tmp/f-good" --match-window-ms 200
ok "$(rows t-w2 1 0 0; echo $?)" "--match-window-ms 200: 150 ms after the event matches"
# One thread, two failures of the same path: one to one, each to its own
# event (the latest before it); with one event only, one stays user-only.
mktr "$tmp/t-two" 2 "[$(pe $F 101 $((B + 500))),$(pe $F 101 $((B + 1500)))]" 0 101:f7:$B 101:f7:$((B + 1000))
judge t-two "$tmp/t-two"
ok "$([[ $(rcof t-two) -eq 0 ]] && rows t-two 2 0 0; echo $?)" "same tid, two events, two failures: both matched (exit $(rcof t-two))"
mktr "$tmp/t-two1" 2 "[$(pe $F 101 $((B + 500))),$(pe $F 101 $((B + 1500)))]" 0 101:f7:$B
judge t-two1 "$tmp/t-two1"
ok "$([[ $(rcof t-two1) -eq $EX_DETECTOR ]] && rows t-two1 1 1 0; echo $?)" "same tid, one event, two failures: one event matches one failure only"
# one_event NAME PID:COMPONENT:NS EXIT MATCHED USER_ONLY MODULE_ONLY DESC: one
# user failure of $F by tid 101, 500 ns after B, against one module event.
one_event() {
	mktr "$tmp/$1" 1 "[$(pe $F 101 $((B + 500)))]" 0 "$2:$B"
	judge "$1" "$tmp/$1"
	ok "$([[ $(rcof "$1") -eq $3 ]] && rows "$1" "$4" "$5" "$6"; echo $?)" "$7 (exit $(rcof "$1"))"
}
one_event t-pid 102:f7 "$EX_DETECTOR" 0 1 1 "another thread's event does not match"
# The pruned component may be an intermediate directory of the path.
one_event t-dir 101:d3 0 1 0 0 "component d3, an intermediate directory of $F: matched"
one_event t-nodir 101:d4 "$EX_DETECTOR" 0 1 1 "component d4, not in $F: no match"
one_event t-part 101:f "$EX_DETECTOR" 0 1 1 "component f, a prefix of a short component: no match"
# Lost events, a truncated paths list, a cut section: infrastructure.
mktr "$tmp/t-lost" 1 "[$(pe $F 101 $((B + 500)))]" 3 101:f7:$B
judge t-lost "$tmp/t-lost"
ok "$([[ $(rcof t-lost) -eq $EX_HARNESS_INFRA ]] && grep -q '^verdict: INFRASTRUCTURE ERROR: unfixed: 3 trace event(s) lost' "$tmp/t-lost.out"; echo $?)" \
	"3 trace events lost: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof t-lost))"
mktr "$tmp/t-trunc" 2 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B 101:f7:$((B + 1000))
judge t-trunc "$tmp/t-trunc"
ok "$([[ $(rcof t-trunc) -eq $EX_HARNESS_INFRA ]] && grep -q "1 false ENOENT missing from the workload's paths list" "$tmp/t-trunc.out"; echo $?)" \
	"a paths list shorter than the count: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof t-trunc))"
mktr "$tmp/t-cut" 1 "[$(pe $F 101 $((B + 500)))]" cut 101:f7:$B
judge t-cut "$tmp/t-cut"
ok "$([[ $(rcof t-cut) -eq $EX_HARNESS_INFRA ]] && grep -q 'trace events cut off' "$tmp/t-cut.err"; echo $?)" \
	"a trace section without its end: infrastructure error (got $(rcof t-cut))"
STATS_EXTRA=1 mktr "$tmp/t-stats" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B
judge t-stats "$tmp/t-stats"
ok "$([[ $(rcof t-stats) -eq $EX_HARNESS_INFRA ]] && grep -q 'another number of false_enoent events than the module' "$tmp/t-stats.out"; echo $?)" \
	"a trace with fewer events than the module's false_enoent count: infrastructure error (got $(rcof t-stats))"
# Today's module has no trace event: counts only, said so.
ok "$(grep -qE '^module events matched to user failures +no trace +no trace$' "$tmp/ok.out" &&
	grep -q '^note: no dcrace:dcrace_race trace events on: unfixed, fixed .*compared by counts only' "$tmp/ok.out"; echo $?)" \
	"without trace events: the rows say so and a note says counts only"
# check-kernel under git bisect: a detector failure with no user-visible
# false ENOENT cannot test (125); with one, the kernel is bad (1).
cat >"$tmp/fake-rg" <<'FAKE'
#!/bin/bash
while [[ $# -gt 0 ]]; do
	case $1 in
	--log) log=$2; shift ;;
	--exec) printf '%s\n' "$2" >"$FAKE_EXEC" ;;
	esac
	shift
done
cp "$FAKE_LOG" "$log"
FAKE
chmod +x "$tmp/fake-rg"
mktr "$tmp/t-monly0" 0 '[]' 0 101:f7:$B
for c in t-monly0:125 t-uonly:1 t-match:1; do
	run ck "env" FAKE_LOG="$tmp/${c%:*}" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
		"$HS/check-kernel" --kernel unfixed --duration 1 --results "$tmp/res"
	ok "$([[ $(rcof ck) -eq ${c#*:} ]]; echo $?)" "check-kernel on ${c%:*}: exit ${c#*:} (got $(rcof ck): $(tail -n 2 "$tmp/ck.out" | tr '\n' ' '))"
done
ok "$(grep -q -- '--mode stat --mix stat=50,open=50 --no-setup' "$tmp/exec"; echo $?)" "check-kernel's stat mode runs stats and opens (--mix stat=50,open=50)"
# compare's workload: stats and opens by default, shown in the settings line.
run mix env FAKE_LOG="$tmp/t-match" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$C" --duration 1 --results "$tmp/res"
ok "$(grep -q '^dcrace compare: mode=stat mix=stat=50,open=50 ' "$tmp/mix.out" &&
	grep -q -- '--mode stat --mix stat=50,open=50 --no-setup' "$tmp/exec"; echo $?)" \
	"compare's default workload: --mix stat=50,open=50, shown in the settings line ($(head -n 1 "$tmp/mix.out"))"
run mix2 env FAKE_LOG="$tmp/t-match" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$C" --duration 1 --results "$tmp/res" --mode open --mix openat=3,lstat=1
ok "$(grep -q '^dcrace compare: mode=open mix=openat=3,lstat=1 ' "$tmp/mix2.out" &&
	grep -q -- '--mode open --mix openat=3,lstat=1 --no-setup' "$tmp/exec"; echo $?)" "compare --mix is passed to the workload"
for bad in "--mode cp --mix stat=1" "--mix chmod=1" "--mix stat=1001" "--mix stat=0"; do
	# shellcheck disable=SC2086
	run mixbad "$C" $bad
	ok "$([[ $(rcof mixbad) -eq $EX_USAGE && $(grep -c . "$tmp/mixbad.err") -eq 1 ]]; echo $?)" "compare $bad: usage error $EX_USAGE (got $(rcof mixbad))"
done
# The bug variants are kernels compare and check-kernel know.
ok "$(for k in unfixed fixed mount-refetch open-last debian debug; do
	grep -q "$k" "$tmp/help.out" && grep -q "$k" "$tmp/help2.out" || exit 1; done; echo 0)" \
	"compare --help and check-kernel --help list every kernel"
mktr "$tmp/v" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B
run variants "$C" --from-logs "unfixed=$tmp/v" "fixed=$tmp/f-good" "mount-refetch=$tmp/v" "open-last=$tmp/f-good"
diag "$(cat "$tmp/variants.out")"
ok "$([[ $(rcof variants) -eq 2 ]] && grep -qE '^ +unfixed +fixed +mount-refetch +open-last$' "$tmp/variants.out" &&
	grep -qE '^expected +race: yes +clean: yes +race: yes +race: NOT REPRODUCED$' "$tmp/variants.out" &&
	grep -q '^verdict: INCONCLUSIVE: the open-last kernel did not reproduce' "$tmp/variants.out"; echo $?)" \
	"four kernels: one column each, an expected row per kernel, a variant that did not reproduce is inconclusive"

# Affected (bad, reproduced) only by the workload's user-visible false
# ENOENTs: one module event in the guest's sh (outside the workload) and
# no user failure is not a reproduction on unfixed, not a failed fix on
# fixed, not bad for check-kernel: unconfirmed, inconclusive.
mktr "$tmp/t-sh" 0 '[]' 0 68:68:$B:sh
judge t-sh "$tmp/t-sh"
ok "$([[ $(rcof t-sh) -eq $EX_INCONCLUSIVE ]] &&
	grep -q '^verdict: INCONCLUSIVE: unfixed: 1 module false_enoent event(s) outside the workload and no user-visible false ENOENT' "$tmp/t-sh.out" &&
	grep -qE '^expected +race: NOT REPRODUCED +clean: yes$' "$tmp/t-sh.out"; echo $?)" \
	"unfixed with one event in sh and 0 user failures: not reproduced, exit $EX_INCONCLUSIVE (got $(rcof t-sh); $(grep '^verdict:' "$tmp/t-sh.out"))"
run t-shf "$C" --from-logs "unfixed=$tmp/t-match" "fixed=$tmp/t-sh"
ok "$([[ $(rcof t-shf) -eq $EX_INCONCLUSIVE ]] && grep -q '^verdict: INCONCLUSIVE: fixed: 1 module false_enoent event(s) outside' "$tmp/t-shf.out"; echo $?)" \
	"fixed with one event in sh and 0 user failures: unconfirmed, exit $EX_INCONCLUSIVE, not 1 (got $(rcof t-shf); $(grep '^verdict:' "$tmp/t-shf.out"))"
# ck NAME LOG KERNEL: check-kernel --kernel KERNEL on a canned log.
ck() {
	run "$1" env FAKE_LOG="$2" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
		"$HS/check-kernel" --kernel "$3" --duration 1 --results "$tmp/res"
}
ck ck-sh "$tmp/t-sh" unfixed
ok "$([[ $(rcof ck-sh) -eq 125 ]]; echo $?)" "check-kernel, one event in sh and 0 user failures: could not test, 125 (got $(rcof ck-sh): $(tail -n 1 "$tmp/ck-sh.out"))"

# A clean verdict needs evidence that the race window was reached: caught
# on the stat path (walk_caught) and on the open path (open_caught, when
# the walkers open files) over the runs of each kernel expected clean.
WC=0 mklog "$tmp/f-nowalk" 0 0 7
OC=0 mklog "$tmp/f-noopen" 0 0 7
MIX=stat=100 OC=0 mklog "$tmp/f-statonly" 0 0 7
WC=0 OC=0 mklog "$tmp/f-bad0" 1 1 0
for c in "f-nowalk:fixed:stat path 0, on the open path 7" "f-noopen:fixed:stat path 7, on the open path 0"; do
	IFS=: read -r lg k why <<<"$c"
	run "ev-$lg" "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/$lg"
	ok "$([[ $(rcof "ev-$lg") -eq $EX_INCONCLUSIVE ]] &&
		grep -q "^verdict: INCONCLUSIVE: $k: no evidence the race window was reached: caught on the $why" "$tmp/ev-$lg.out"; echo $?)" \
		"fixed with caught on the $why: inconclusive, exit $EX_INCONCLUSIVE (got $(rcof "ev-$lg"); $(grep '^verdict:' "$tmp/ev-$lg.out"))"
done
run ev-deb "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" "debian=$tmp/f-noopen"
ok "$([[ $(rcof ev-deb) -eq $EX_INCONCLUSIVE ]] && grep -q '^verdict: INCONCLUSIVE: debian: no evidence' "$tmp/ev-deb.out"; echo $?)" \
	"every kernel expected clean needs the evidence: debian without open_caught, exit $EX_INCONCLUSIVE (got $(rcof ev-deb))"
run ev-stat "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-statonly"
ok "$([[ $(rcof ev-stat) -eq 0 ]]; echo $?)" "walkers that open nothing (mix stat=100): walk_caught is the evidence, fix holds (got $(rcof ev-stat))"
run ev-bad "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-bad0"
ok "$([[ $(rcof ev-bad) -eq $EX_FAIL ]] && grep -q '^verdict: FIX DOES NOT HOLD: 1 false ENOENT on the fixed kernel' "$tmp/ev-bad.out"; echo $?)" \
	"a false ENOENT on fixed needs no catches to fail the fix: exit $EX_FAIL (got $(rcof ev-bad))"
CAUGHT=0 mktr "$tmp/t-f0" 0 '[]' 0
ck ck-f0 "$tmp/t-f0" fixed
ck ck-f4 "$tmp/f-good" fixed
ok "$([[ $(rcof ck-f0) -eq 125 && $(rcof ck-f4) -eq 0 ]]; echo $?)" \
	"check-kernel --kernel fixed: without catches could not test, 125 (got $(rcof ck-f0)); with them good, 0 (got $(rcof ck-f4))"

# An unexpected exception is never 1 (the fix does not hold, bisect bad):
# a garbled elapsed_s, a garbled first_false_enoent_s, a --json that
# cannot be written: compare 3, check-kernel 125, one line, no traceback.
ELAPSED='"soon"' mktr "$tmp/t-el" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B
FIRST='"x"' mktr "$tmp/t-first" 1 "[$(pe $F 101 $((B + 500)))]" 0 101:f7:$B
for c in t-el:elapsed_s t-first:error; do
	judge "ex-${c%:*}" "$tmp/${c%:*}"
	ok "$([[ $(rcof "ex-${c%:*}") -eq $EX_HARNESS_INFRA && $(grep -c . "$tmp/ex-${c%:*}.err") -eq 1 ]] &&
		grep -q "${c#*:}" "$tmp/ex-${c%:*}.err"; echo $?)" \
		"compare on ${c%:*}: exit $EX_HARNESS_INFRA, one line (got $(rcof "ex-${c%:*}"): $(head -c 300 "$tmp/ex-${c%:*}.err"))"
done
ck ck-el "$tmp/t-el" unfixed
ok "$([[ $(rcof ck-el) -eq 125 ]] && ! grep -q Traceback "$tmp/ck-el.err"; echo $?)" \
	"check-kernel on a garbled elapsed_s: could not test, 125 (got $(rcof ck-el): $(cat "$tmp/ck-el.err" "$tmp/ck-el.out" | head -c 300))"
run nojson "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-good" --json /nonexistent/x.json
ok "$([[ $(rcof nojson) -eq $EX_HARNESS_INFRA && $(grep -c . "$tmp/nojson.err") -eq 1 ]] &&
	grep -q 'cannot write --json /nonexistent/x.json' "$tmp/nojson.err"; echo $?)" \
	"compare --json /nonexistent/x.json: exit $EX_HARNESS_INFRA, one line (got $(rcof nojson): $(head -c 300 "$tmp/nojson.err"))"

run c-nan "$C" --duration nan
ok "$([[ $(rcof c-nan) -eq $EX_USAGE && $(grep -c . "$tmp/c-nan.err") -eq 1 ]]; echo $?)" "compare --duration nan: usage error $EX_USAGE (got $(rcof c-nan))"
done_testing
