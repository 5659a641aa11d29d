#!/bin/bash
# compare and check-kernel without a guest: JSON/log parsing, the verdict
# and the exit codes on canned logs, usage errors. (The real runs are in
# 60-compare.t.)
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/canned.sh
source "$(dirname "$0")/canned.sh"
plan 88

tmp_dir
C=$HS/compare

# mklog FILE USER_FALSE MODULE_FALSE CAUGHT [how]: a canned serial log;
# how: truncated, garbage, killed (broken logs), other (2 other errors),
# few (12 syscalls), splat (a WARNING in dmesg), gone (1 path really gone),
# pruned (prunes and other_errors fields, 0 errors), wrong (2 of 1000
# successes met another object: the identity oracle). CAUGHT is caught on
# each path (walk_caught, open_caught) unless WC or OC say otherwise; MIX:
# the result's mix.
mklog() {
	local f=$1 u=$2 m=$3 c=$4 how=${5:-} sc=1000 extra=
	case $how in
	other) extra=',"other_errors":2' ;;
	few) sc=12 ;;
	gone) extra=',"gone":1' ;;
	pruned) extra=',"other_errors":0,"prunes":321' ;;
	wrong) extra=',"identity_checks":1000,"wrong_objects":2,"first_wrong_object":"/mnt/dcrace/d01/f002: got directory ino 12 dev 2, not the file ino 40 dev 2"' ;;
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
		echo "DCRACE-TRACE-NONE dcrace.ko has no dcrace/dcrace_race trace event"
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

# the identity oracle: a success on another object makes a kernel
# affected whatever its errnos (fixed: no false ENOENT, 2 wrong objects)
mklog "$tmp/f-wrong" 0 0 7 wrong
run wrong "$C" --from-logs "unfixed=$tmp/u-good" "fixed=$tmp/f-wrong"
ok "$([[ $(rcof wrong) -eq 1 ]] && grep -q 'FIX DOES NOT HOLD' "$tmp/wrong.out" &&
	grep -qE '^wrong objects \(identity oracle\) +0 +2$' "$tmp/wrong.out" &&
	grep -qE '^identity checks \(successes checked\) +0 +1000$' "$tmp/wrong.out" &&
	grep -qE '^verdict +AFFECTED \(false ENOENT\) +AFFECTED \(wrong objects 2\)$' "$tmp/wrong.out" &&
	grep -q '^note: wrong objects on fixed: 2 calls .*d01/f002: got directory' "$tmp/wrong.out"; echo $?)" \
	"wrong objects on fixed, no false ENOENT: fix does not hold, exit 1 (got $(rcof wrong)), rows, verdict and the first one shown"

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

# A module without the trace event (DCRACE-TRACE-NONE): counts only, said so.
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
	--kernel) echo "$2" >>"${FAKE_KERNELS:-/dev/null}" ;;
	--exec) printf '%s\n' "$2" >"$FAKE_EXEC" ;;
	esac
	shift
done
cp "$FAKE_LOG" "$log"
FAKE
chmod +x "$tmp/fake-rg"
# (the per-event match itself: tests/32-match.t)
mktr "$tmp/f-good" 0 '[]' 0
mktr "$tmp/t-match" 1 "[$(pe $F 101 $((B - 1000)) $((B + 1000)))]" 0 101:f7:$B
mktr "$tmp/t-uonly" 2 "[$(pe $F 101 $((B - 1000)) $((B + 1000))),$(pe $F 101 $((B + 2000)) $((B + 3000)))]" 0 101:f7:$B
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
ok "$(for k in unfixed fixed mount-refetch open-last backport seq-forget debian debug; do
	grep -q "$k" "$tmp/help.out" && grep -q "$k" "$tmp/help2.out" || exit 1; done; echo 0)" \
	"compare --help and check-kernel --help list every kernel"
mktr "$tmp/v" 1 "[$(pe $F 101 $((B - 1000)) $((B + 1000)))]" 0 101:f7:$B
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
ELAPSED='"soon"' mktr "$tmp/t-el" 1 "[$(pe $F 101 $((B - 1000)) $((B + 1000)))]" 0 101:f7:$B
FIRST='"x"' mktr "$tmp/t-first" 1 "[$(pe $F 101 $((B - 1000)) $((B + 1000)))]" 0 101:f7:$B
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

# Mode mutate: the hard-error rule, judged per kernel by the table's
# errors column (fixed, debian: race; backport, 6.12's: clean). A race
# kernel reproduces with user-visible false errors, all matched; a clean
# one has none of any errno and dcrace.ko's end_caught > 0.
mkmut "$tmp/m-race" "[$(pe "$M" 101 $((B - 1000)) $((B + 1000)) stat EACCES)]" '{"EACCES":1}' 101:m00:$B
mkmut "$tmp/m-clean" '[]' '{}'
END_CAUGHT=0 mkmut "$tmp/m-nocaught" '[]' '{}'
mjudge m-ok "$tmp/m-race" "$tmp/m-clean"
diag "$(cat "$tmp/m-ok.out")"
ok "$([[ $(rcof m-ok) -eq 0 ]] && grep -q '^verdict: hard-error rule holds: fixed reproduces (fixed: 1 false error (EACCES 1)), backport is clean' "$tmp/m-ok.out" &&
	grep -qE '^  false EACCES +1 +0$' "$tmp/m-ok.out" && grep -qE '^module end_caught \(caught at walk end\) +5 +5$' "$tmp/m-ok.out" &&
	grep -qE '^expected \(errors column\) +race: yes +clean: yes$' "$tmp/m-ok.out"; echo $?)" \
	"mutate: fixed with a matched false EACCES, backport clean with end_caught: rule holds, per-errno rows, exit 0 (got $(rcof m-ok))"
ok "$([[ $(jq -r '.kernels.fixed.rule, .kernels.fixed.user_false_by_errno.EACCES, .kernels.backport.end_caught' "$tmp/m-ok.json" | tr '\n' ' ') == "hard-error 1 5 " ]]; echo $?)" \
	"mutate: --json holds the rule, the false errors per errno, end_caught"
mjudge m-bad "$tmp/m-race" "$tmp/m-race"
ok "$([[ $(rcof m-bad) -eq $EX_FAIL ]] && grep -q '^verdict: FIX DOES NOT HOLD: 1 false error (EACCES 1) on the backport kernel (hard-error rule)' "$tmp/m-bad.out"; echo $?)" \
	"mutate: a false EACCES on backport (errors clean): exit $EX_FAIL (got $(rcof m-bad); $(grep '^verdict:' "$tmp/m-bad.out"))"
mjudge m-noev "$tmp/m-race" "$tmp/m-nocaught"
ok "$([[ $(rcof m-noev) -eq $EX_INCONCLUSIVE ]] && grep -q '^verdict: INCONCLUSIVE: backport: no evidence the window was reached' "$tmp/m-noev.out" &&
	grep -qE '^expected \(errors column\) +race: yes +clean: no evidence$' "$tmp/m-noev.out"; echo $?)" \
	"mutate: backport clean but end_caught 0: inconclusive, exit $EX_INCONCLUSIVE (got $(rcof m-noev))"
mjudge m-norep "$tmp/m-clean" "$tmp/m-clean"
ok "$([[ $(rcof m-norep) -eq $EX_INCONCLUSIVE ]] && grep -q '^verdict: INCONCLUSIVE: the fixed kernel did not reproduce the race (hard-error rule' "$tmp/m-norep.out"; echo $?)" \
	"mutate: fixed (errors race) without a false error: not reproduced, exit $EX_INCONCLUSIVE (got $(rcof m-norep))"
# The issue's five kernels, both lines in one compare: a verdict each.
run m-five "$C" --from-logs "debian=$tmp/m-race" "fixed=$tmp/m-race" "backport=$tmp/m-clean" "debian-6.12=$tmp/m-clean" "6.12/fixed=$tmp/m-clean"
ok "$([[ $(rcof m-five) -eq 0 ]] && grep -qE '^expected \(errors column\) +race: yes +race: yes +clean: yes +clean: yes +clean: yes$' "$tmp/m-five.out"; echo $?)" \
	"mutate: debian, fixed, backport, debian-6.12, 6.12/fixed: race, race, clean, clean, clean by the errors column, exit 0 (got $(rcof m-five))"
run m-mixed "$C" --from-logs "fixed=$tmp/m-race" "fixed=$tmp/u-good" "backport=$tmp/m-clean"
ok "$([[ $(rcof m-mixed) -eq $EX_HARNESS_INFRA ]] && grep -q 'runs of mode mutate and of other modes' "$tmp/m-mixed.err"; echo $?)" \
	"runs of mode mutate and stat judged as one kernel: exit $EX_HARNESS_INFRA (got $(rcof m-mixed))"
# check-kernel --mode mutate: the same judge, bisect's codes.
mck() {
	run "$1" env FAKE_LOG="$2" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
		"$HS/check-kernel" --kernel "$3" --mode mutate --uid 65534 --duration 1 --results "$tmp/res"
}
mck mck-bad "$tmp/m-race" backport
mck mck-good "$tmp/m-clean" backport
mck mck-noev "$tmp/m-nocaught" backport
ok "$([[ $(rcof mck-bad) -eq 1 && $(rcof mck-good) -eq 0 && $(rcof mck-noev) -eq 125 ]] &&
	grep -q 'BAD: the kernel returns false errors (1 false error (EACCES 1)' "$tmp/mck-bad.out"; echo $?)" \
	"check-kernel --mode mutate: a false EACCES bad 1 (got $(rcof mck-bad)), clean with end_caught good 0 (got $(rcof mck-good)), without 125 (got $(rcof mck-noev))"
ok "$(grep -q -- '--mode mutate --mix stat=50,open=50 --uid 65534 --no-setup' "$tmp/exec" &&
	grep -q 'echo 2 > /sys/kernel/debug/dcrace/inject/window ||' "$tmp/exec"; echo $?)" \
	"check-kernel --mode mutate: the workload gets --uid, the module window=2 before the delay"
# compare --mode mutate boots kernels of both lines, passes --uid, sets
# window=2 (or --window N); by default fixed and backport.
: >"$tmp/kernels"
run m-boot env FAKE_LOG="$tmp/m-race" FAKE_EXEC="$tmp/exec" FAKE_KERNELS="$tmp/kernels" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$C" --mode mutate --uid 65534 --kernels fixed,6.12/fixed --duration 1 --results "$tmp/res"
ok "$([[ $(tr '\n' ' ' <"$tmp/kernels") == "fixed 6.12/fixed " ]] &&
	grep -q '^dcrace compare: mode=mutate mix=stat=50,open=50 pruner=none uid=65534 .* threads=1 injection 300 us p=100% window=2' "$tmp/m-boot.out" &&
	grep -q -- '--mode mutate --mix stat=50,open=50 --uid 65534 --no-setup' "$tmp/exec" &&
	grep -q 'echo 2 > /sys/kernel/debug/dcrace/inject/window' "$tmp/exec"; echo $?)" \
	"compare --mode mutate --uid 65534 --kernels fixed,6.12/fixed: both lines booted, --uid and window=2 passed ($(head -n 1 "$tmp/m-boot.out"))"
: >"$tmp/kernels"
run m-def env FAKE_LOG="$tmp/m-clean" FAKE_EXEC="$tmp/exec" FAKE_KERNELS="$tmp/kernels" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$C" --mode mutate --window 3 --duration 1 --results "$tmp/res"
ok "$([[ $(tr '\n' ' ' <"$tmp/kernels") == "fixed backport " ]] && grep -q 'echo 3 > /sys/kernel/debug/dcrace/inject/window' "$tmp/exec"; echo $?)" \
	"compare --mode mutate: by default fixed and backport; --window 3 sets window=3 ($(tr '\n' ' ' <"$tmp/kernels"))"
res=
for bad in "--uid 1:--uid is for --mode mutate" "--mode mutate --window 8:argument --window: must be in 1..7" \
	"--mode mutate --natural --window 2:--window is for injected runs" "--rename-locked:--rename-locked is for --mode mutate"; do
	# shellcheck disable=SC2086
	run mbad "$C" ${bad%%:*}
	res+="$(rcof mbad):$(grep -c -- "${bad#*:}" "$tmp/mbad.err" || true) "
done
ok "$([[ $res == "64:1 64:1 64:1 64:1 " ]]; echo $?)" "compare --uid or --rename-locked outside mode mutate, --window 8, --window without injection: usage errors that say so ($res)"
# --rename-locked goes to the workload and shows in the settings line;
# --window takes dcrace.ko's bit mask, 1..7 (4: at terminate_walk(),
# before the end snapshot).
run m-ren env FAKE_LOG="$tmp/m-clean" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$C" --mode mutate --uid 65534 --rename-locked --window 5 --kernels backport --duration 1 --results "$tmp/res" --json "$tmp/m-ren.json"
ok "$(grep -q '^dcrace compare: mode=mutate mix=stat=50,open=50 pruner=none uid=65534 rename-locked .* window=5' "$tmp/m-ren.out" &&
	grep -q -- '--mode mutate --mix stat=50,open=50 --uid 65534 --rename-locked --no-setup' "$tmp/exec" &&
	grep -q 'echo 5 > /sys/kernel/debug/dcrace/inject/window' "$tmp/exec" &&
	[[ $(jq -r '.settings.rename_locked' "$tmp/m-ren.json") == true ]]; echo $?)" \
	"compare --mode mutate --rename-locked --window 5: the workload gets --rename-locked, the module window=5, the settings line and --json say so ($(head -n 1 "$tmp/m-ren.out"))"
run mck-ren env FAKE_LOG="$tmp/m-clean" FAKE_EXEC="$tmp/exec" DCRACE_RUN_GUEST="$tmp/fake-rg" \
	"$HS/check-kernel" --kernel backport --mode mutate --rename-locked --window 7 --duration 1 --results "$tmp/res"
run mck-renbad "$HS/check-kernel" --kernel backport --rename-locked
ok "$([[ $(rcof mck-ren) -eq 0 && $(rcof mck-renbad) -eq $EX_BISECT_USAGE ]] && grep -q -- '--mode mutate --mix stat=50,open=50 --rename-locked --no-setup' "$tmp/exec" &&
	grep -q 'echo 7 > /sys/kernel/debug/dcrace/inject/window' "$tmp/exec"; echo $?)" \
	"check-kernel --mode mutate --rename-locked --window 7: passed to the workload and the module (exit $(rcof mck-ren)); outside mode mutate a usage error (exit $(rcof mck-renbad))"

# A clean verdict needs evidence of the window, each piece: mutations, the
# walkers' own end_caught EACCES events (ENOTDIR catches, which every
# kernel makes, or another thread's EACCES are not it), every state of the
# truth table met. Without one: inconclusive (compare 2, check-kernel 125).
MUTATIONS=0 mkmut "$tmp/m-nomut" '[]' '{}'
TIDS=101 CAUGHT_EV="101:ENOTDIR 101:ENOTDIR 77:EACCES:dcr-mutate" mkmut "$tmp/m-notdir" '[]' '{}'
OUTCOMES='{"m/y":{"ENOENT":9,"ENOTDIR":9},"m":{"0":9,"ENOENT":9}}' mkmut "$tmp/m-nostate" '[]' '{}'
UID_=65534 RENAME=1 OUTCOMES='{"m/y":{"0":1,"ENOENT":9,"ENOTDIR":9},"m":{"0":9,"ENOENT":9},"locked/y":{"EACCES":9}}' mkmut "$tmp/m-noren" '[]' '{}'
res=
for c in m-nomut:'mutations 0' m-notdir:'end_caught EACCES of the walkers 0' \
	m-nostate:'states of the truth table not met: m/y succeeded$' m-noren:'states of the truth table not met: locked/y ENOENT$'; do
	mjudge "e-${c%%:*}" "$tmp/m-race" "$tmp/${c%%:*}"
	mck "ck-${c%%:*}" "$tmp/${c%%:*}" backport
	res+="${c%%:*}:$(rcof "e-${c%%:*}"):$(rcof "ck-${c%%:*}"):$(grep -c "^verdict: INCONCLUSIVE: backport: no evidence the window was reached: .*${c#*:}" "$tmp/e-${c%%:*}.out" || true) "
done
ok "$([[ $res == "m-nomut:2:125:1 m-notdir:2:125:1 m-nostate:2:125:1 m-noren:2:125:1 " ]]; echo $?)" \
	"backport without mutations, without the walkers' EACCES catches (ENOTDIR ones, another thread's EACCES), with m/y never read, with --rename-locked's locked/y never ENOENT: inconclusive, compare 2, check-kernel 125, saying which ($res)"
ok "$(grep -qE '^  end_caught EACCES \(walkers\) +2 +0$' "$tmp/e-m-notdir.out" && grep -qE '^  end_caught ENOTDIR \(walkers\) +1 +2$' "$tmp/e-m-notdir.out" &&
	grep -qE '^truth-table states met \(path, errno\) +5/5 +4/5$' "$tmp/e-m-nostate.out" && grep -qE '^mutations \(mutator syscalls\) +500 +0$' "$tmp/e-m-nomut.out" &&
	grep -qE '^expected \(errors column\) +race: yes +clean: no evidence$' "$tmp/e-m-nomut.out"; echo $?)" \
	"the table shows the evidence: end_caught per errno of the walkers, the states met, the mutations"
ok "$(grep -q "^try 1: 1000 syscalls, 0 user-visible false errors (none), 0 false successes, dcrace.ko: no false_\*, end_caught 5 (the walkers': ENOTDIR 2)$" "$tmp/ck-m-notdir.out"; echo $?)" \
	"check-kernel's try line shows the walkers' catches per errno ($(grep '^try 1: 1000' "$tmp/ck-m-notdir.out"))"

# A false success: a call that succeeded where no state allows it (a
# --uid walker read locked/y): its own row and verdict; on a kernel
# expected clean the fix does not hold (compare 1, check-kernel bad 1).
UID_=65534 mkmut "$tmp/m-succ" "[$(pe /mnt/locked/y 101 $((B - 1000)) $((B + 1000)) stat 0)]" '{"0":1}'
mjudge m-succ "$tmp/m-race" "$tmp/m-succ"
diag "$(cat "$tmp/m-succ.out")"
mck mck-succ "$tmp/m-succ" backport
ok "$([[ $(rcof m-succ) -eq $EX_FAIL && $(rcof mck-succ) -eq 1 ]] &&
	grep -q '^verdict: FIX DOES NOT HOLD: 0 false errors (none), 1 false success (a call that succeeded where no state allows it) on the backport kernel' "$tmp/m-succ.out" &&
	grep -qE '^user-visible false success \(no state allows it\) +0 +1$' "$tmp/m-succ.out" &&
	grep -qE '^verdict \(hard-error rule\) +AFFECTED \(EACCES 1\) +AFFECTED \(false success 1\)$' "$tmp/m-succ.out" &&
	grep -qE '^  user-only \(module missed\) +0 +0$' "$tmp/m-succ.out" &&
	grep -q 'BAD: the kernel returns false successes (0 false errors (none), 1 false success' "$tmp/mck-succ.out"; echo $?)" \
	"a false success on backport: its own row and verdict, no user-only event, compare exit 1 (got $(rcof m-succ)), check-kernel bad 1 (got $(rcof mck-succ))"

# The module's new counters (end_unvouched, end_not_judged,
# slots_reclaimed) are rows; logs without them read as 0; check-kernel's
# try line counts each false_* verdict once (not false_enoent again as
# false_enoent_seq_unchanged).
STATS_MORE='end_unvouched: 4\nend_not_judged: 2\nslots_reclaimed: 1' SEQ_UNCHANGED=1 \
	mkmut "$tmp/m-new" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B 102:y:$((B + 5000)):false_enoent:walk:ENOENT
mjudge m-new "$tmp/m-new" "$tmp/m-clean"
mck mck-new "$tmp/m-new" fixed
ok "$([[ $(rcof m-new) -eq 0 ]] && grep -qE '^module end_unvouched \(moved, not that errno.s cause\) +4 +0$' "$tmp/m-new.out" &&
	grep -qE '^module end_not_judged \(errno judged on no state\) +2 +0$' "$tmp/m-new.out" && grep -qE '^module slots_reclaimed +1 +0$' "$tmp/m-new.out" &&
	[[ $(jq -r '.kernels.fixed.end_unvouched, .kernels.backport.end_not_judged' "$tmp/m-new.json" | tr '\n' ' ') == "4 0 " ]]; echo $?)" \
	"stats end_unvouched, end_not_judged, slots_reclaimed: rows and --json; absent in an older log: 0 (exit $(rcof m-new))"
ok "$([[ $(rcof mck-new) -eq 1 ]] && grep -q "^try 1: 1000 syscalls, 1 user-visible false errors (EACCES 1), 0 false successes, dcrace.ko: false_eacces 1, false_enoent 1, end_caught 5 (the walkers': EACCES 2, ENOTDIR 1)$" "$tmp/mck-new.out"; echo $?)" \
	"check-kernel's try line: false_eacces 1, false_enoent 1, the sub-count false_enoent_seq_unchanged not counted again ($(grep '^try 1: 1000' "$tmp/mck-new.out"))"

run c-nan "$C" --duration nan
ok "$([[ $(rcof c-nan) -eq $EX_USAGE && $(grep -c . "$tmp/c-nan.err") -eq 1 ]]; echo $?)" "compare --duration nan: usage error $EX_USAGE (got $(rcof c-nan))"
done_testing
