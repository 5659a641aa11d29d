#!/bin/bash
# dcrace.ko end to end, on both kernels, with the pipeline's workload:
# every user-visible false ENOENT is explained by the module, nothing else
# is called one; injection widens the window; insmod/rmmod under load.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 52

# The loaded natural runs (section 1) race hundreds of times in 10 s (the
# module's probes slow the walk: 673 in 30 s in a cold run); the rate
# comparison's natural run without the module (section 2) keeps 30 s (10
# in 30 s there).
secs=${DCRACE_MODULE_SECONDS:-10}
nsecs=${DCRACE_NATURAL_SECONDS:-30}
isecs=${DCRACE_INJECT_SECONDS:-10}
D=/sys/kernel/debug/dcrace
WL="dcrace-workload --quiet --seed 1 --threads 2"
# The rate comparison (sections 2 and 3) uses issue 3's tree: 8 x 64 files,
# nothing pinned. The default tree (8 x 8, half the directories pinned) is
# built to make open()'s last component race naturally, so its natural rate
# is 3x higher and its injected one lower (fewer dentries per prune): 88x
# there in one CI run, against 711x and 858x here (4505/10 s vs 19/30 s,
# 3147/10 s vs 11/30 s).
WLR="$WL --dirs 8 --files 64 --pin-dirs 0"

# stat NAME LOG: a counter from the stats block the guest printed.
stat() {
	sed -n '/^DCRACE-STATS-BEGIN/,/^DCRACE-STATS-END/p' "$2" |
		sed -n "s/^$1: \([0-9-]*\)$/\1/p" | tail -n 1
}
jf() { jq -r ".$1 // \"x\"" <<<"$(guest_json "$2")"; }

guest() {
	# guest KERNEL LOG CMD: run with the module loaded.
	local rc=0
	"$HS/run-guest" -q --module --timeout 400 --log "$2" --exec "$3" "$1" >/dev/null || rc=$?
	return $rc
}
# counts KERNEL LOG: user-visible and module false ENOENTs, module caught.
counts() {
	u[$1]=$(jf false_enoent "$2")
	m[$1]=$(stat false_enoent "$2")
	c[$1]=$(stat caught "$2")
}
STATS="echo DCRACE-STATS-BEGIN; cat $D/stats; echo DCRACE-STATS-END"

# 1. natural race, module loaded, 10 s
declare -A u m c
for k in unfixed fixed; do
	log=$T_RESULTS/module-natural-$k.log
	rc=0
	guest "$k" "$log" "$WL --duration $secs; $STATS; cat $D/events" || rc=$?
	ok "$rc" "$k: natural run with dcrace.ko loaded completed (log $log)"
	counts "$k" "$log"
	diag "$k natural ${secs}s: user-visible false ENOENT ${u[$k]}, module false_enoent ${m[$k]}, caught ${c[$k]}, caught_late $(stat caught_late "$log"), parent_changed_echild $(stat parent_changed_echild "$log"), genuine_negative $(stat genuine_negative "$log"), pruned_negative $(stat pruned_negative "$log"), syscalls $(jf syscalls "$log")"
done
ok "$([[ ${u[unfixed]} =~ ^[0-9]+$ && ${u[unfixed]} -gt 0 ]]; echo $?)" "unfixed: user space saw false ENOENTs (${u[unfixed]})"
ok "$(is_count "${m[unfixed]}" "${u[unfixed]}" && [[ ${m[unfixed]} == "${u[unfixed]}" ]]; echo $?)" "unfixed: module false_enoent equals user-visible count (${m[unfixed]} = ${u[unfixed]})"
ok "$([[ ${c[unfixed]} == 0 ]]; echo $?)" "unfixed: caught = 0 (got ${c[unfixed]})"
ok "$([[ ${u[fixed]} == 0 && ${m[fixed]} == 0 ]]; echo $?)" "fixed: no false ENOENT, user ${u[fixed]}, module ${m[fixed]}"
ok "$([[ ${c[fixed]} =~ ^[0-9]+$ && ${c[fixed]} -gt 0 ]]; echo $?)" "fixed: caught > 0 (${c[fixed]})"
ev=$T_RESULTS/module-natural-unfixed.log
ok "$(grep -q '^type: false_enoent' "$ev" && grep -qE '^killer: pid=[0-9]+ comm=dcr-prune kill_to_read_ns=[0-9]+' "$ev" &&
	grep -qE '^component: (d[0-9]{2}|f[0-9]{3})$' "$ev" && grep -qE '^  (link_path_walk|path_lookupat|filename_lookup|path_openat)' "$ev" &&
	! grep -qE '^  .*(rethook|kretprobe)' "$ev"; echo $?)" \
	"unfixed: events name the component, the killer and the walker's stack"

# 2. natural rate without the module, for the injection comparison
log=$T_RESULTS/module-nomod-unfixed.log
"$HS/run-guest" -q --timeout 300 --log "$log" --exec "$WLR --duration $nsecs" unfixed >/dev/null || true
nat=$(jf false_enoent "$log")
diag "unfixed without module: $nat false ENOENT in $nsecs s"

# 3. injection: delay 20 us in the window, walkers only
INJ="echo dcr-walk > $D/inject/comm; echo 20 > $D/inject/delay_us; echo 100 > $D/inject/probability"
for k in unfixed fixed; do
	log=$T_RESULTS/module-inject-$k.log
	rc=0
	guest "$k" "$log" "$INJ; $WLR --duration $isecs; $STATS" || rc=$?
	ok "$rc" "$k: injected run completed"
	counts "$k" "$log"
	diag "$k injected ${isecs}s: user-visible ${u[$k]}, module false_enoent ${m[$k]}, caught ${c[$k]}, injected_delays $(stat injected_delays "$log")"
done
ok "$([[ ${u[unfixed]} =~ ^[0-9]+$ && $nat =~ ^[0-9]+$ ]] &&
	awk -v i="${u[unfixed]}" -v is="$isecs" -v n="$nat" -v ns="$nsecs" \
	'BEGIN { r = (n > 0 ? n : 1) / ns; printf "# injected %.1f/s vs natural %.2f/s: %.0fx\n", i / is, r, i / is / r > "/dev/stderr"; exit !(i / is >= 100 * r) }'; echo $?)" \
	"unfixed: injected false-ENOENT rate >= 100x the natural one"
ok "$(is_count "${m[unfixed]}" "${u[unfixed]}" && [[ ${m[unfixed]} == "${u[unfixed]}" ]]; echo $?)" "unfixed injected: module count equals user-visible (${m[unfixed]} = ${u[unfixed]})"
ok "$([[ ${u[fixed]} == 0 && ${m[fixed]} == 0 ]]; echo $?)" "fixed injected: 0 user-visible false ENOENT (${u[fixed]})"
ok "$([[ ${c[fixed]} =~ ^[0-9]+$ && ${c[fixed]} -gt 0 ]]; echo $?)" "fixed injected: caught > 0 (${c[fixed]})"

# 4. insmod/rmmod 20 times while the workload runs
log=$T_RESULTS/module-cycles.log
rc=0
# run-guest runs it single-threaded (--tcg auto: more than one load):
# under multi-threaded TCG, disarming a kprobe in code another vCPU is
# executing hangs the guest (see run-guest --help).
"$HS/run-guest" -q --timeout 400 --log "$log" --copy "$("$HS/build-module")" --exec "
$WL --duration 60 > /tmp/wl.out & wl=\$!
ok=0
for i in \$(seq 1 20); do
	insmod /dcrace/copy/dcrace.ko delay_us=5 verbose=1 || break
	sleep 0.5
	echo 0 > $D/enabled; echo 1 > $D/enabled; echo 1 > $D/reset
	cat $D/stats > /dev/null; cat $D/events > /dev/null
	rmmod dcrace || break
	ok=\$((ok + 1))
done
echo DCRACE-CYCLES \$ok
kill \$wl 2>/dev/null; wait \$wl; cat /tmp/wl.out
" unfixed >/dev/null || rc=$?
cyc=$(sed -n 's/^DCRACE-CYCLES //p' "$log")
ok "$([[ $rc -eq 0 && $cyc == 20 ]]; echo $?)" "20 insmod/rmmod cycles under load (got ${cyc:-none})"
s=$(splat "$log")
diag "$s"
ok "$([[ -z $s ]]; echo $?)" "no oops, BUG or WARNING during the cycles"

# 5. no splat anywhere, report header when verbose
for f in "$T_RESULTS"/module-natural-*.log "$T_RESULTS"/module-inject-*.log; do
	s=$(splat "$f")
	ok "$([[ -z $s ]]; echo $?)" "no splat in $(basename "$f")"
done
ok "$(grep -q 'BUG: dcrace: false ENOENT in rcu-walk' "$log"; echo $?)" "verbose=1 prints the report header to dmesg"

# 6. load-time checks and lifetime (issue 12), one guest, single-threaded
# TCG (run-guest's --tcg auto: it loads and unloads under load)
log=$T_RESULTS/module-checks.log
KO=/dcrace/copy/dcrace.ko
rc=0
"$HS/run-guest" -q --timeout 500 --log "$log" --copy "$("$HS/build-module")" --exec "
try() { n=\$1; shift; if insmod $KO \"\$@\" 2>/tmp/err; then echo \"DCRACE-T \$n loaded\"; rmmod dcrace; else echo \"DCRACE-T \$n refused: \$(cat /tmp/err)\"; fi; }
try selftest_break selftest_break=1
try selftest_break2 selftest_break=2
try early_test_2 early_test=2
try early_test_m1 early_test=-1
try delay_any delay_us=200
try delay_comm delay_us=200 comm=dcr-walk
insmod $KO delay_us=100
echo \"DCRACE-T neg_at_load \$(sed -n 's/^walk_genuine_negative: //p' $D/stats) \$(sed -n 's/^open_genuine_negative: //p' $D/stats)\"
echo 101 > $D/inject/delay_us 2>/dev/null && echo 'DCRACE-T write_delay_any accepted' || echo 'DCRACE-T write_delay_any refused'
echo dcr-walk > $D/inject/comm; echo 5000 > $D/inject/delay_us
echo > $D/inject/comm 2>/dev/null && echo 'DCRACE-T clear_comm accepted' || echo 'DCRACE-T clear_comm refused'
grep -E '^(step_into|dentry_kill) ' $D/probes | sed 's/^/DCRACE-P /'
rmmod dcrace
insmod $KO skip_probes=8 early_test=-1
stat /mnt/nope >/dev/null 2>&1; stat /mnt/nope >/dev/null 2>&1
echo \"DCRACE-T early_no_step \$(sed -n 's/^early_test: //p' $D/stats)\"
rmmod dcrace
insmod $KO verbose=1 delay_us=20 comm=dcr-walk
$WL --duration 4 >/dev/null; sleep 6
echo \"DCRACE-T events_before \$(sed -n 's/^events: //p' $D/stats)\"
echo 0 > $D/inject/times; echo 1 > $D/reset; echo 5 > $D/inject/times
for i in \$(seq 1 25); do
	$WL --duration 0.2 --no-setup >/dev/null
	[ \"\$(sed -n 's/^events: //p' $D/stats)\" -gt 0 ] && break
done
sleep 3
echo \"DCRACE-T events_after \$(sed -n 's/^events: //p' $D/stats)\"
rmmod dcrace
$WL --mix stat=100 --duration 120 > /tmp/wl.out & wl=\$!
sleep 1
for i in \$(seq 1 10); do
	insmod $KO || break
	echo \"DCRACE-LW \$i \$(grep -c '^walk_exit ' $D/probes) \$(grep -c '^walk_return ' $D/probes)\"
	rmmod dcrace || break
done
kill \$wl 2>/dev/null; wait \$wl
$WL --duration 60 > /tmp/wl.out & wl=\$!
ok=0; armed=0
for i in \$(seq 1 12); do
	insmod $KO late_sites=1 || break
	sleep 0.\$((i % 4))
	armed=\$((armed + \$(grep -c '^walk_return .* armed' $D/probes)))
	rmmod dcrace || break
	ok=\$((ok + 1))
done
echo \"DCRACE-T late_cycles \$ok \$armed\"
kill \$wl 2>/dev/null; wait \$wl
" unfixed >/dev/null || rc=$?
t() { sed -n "s/^DCRACE-T $1 //p" "$log" | tail -n 1; }
ok "$rc" "load-time checks ran in the guest (log $log)"
ok "$([[ $(t selftest_break) == refused:*"No such device"* ]] && grep -q 'dcrace: self-check failed: nameidata mirror' "$log"; echo $?)" \
	"a broken nameidata mirror fails insmod with ENODEV and says so ($(t selftest_break))"
# issue 22: the self-check judges error-returning steps, not only that
# some step closed: a cached negative dentry (a walk step and open()'s
# last component) must come out genuine_negative at every load
ok "$([[ $(t selftest_break2) == refused:*"No such device"* ]] &&
	grep -q 'dcrace: self-check failed: a lookup of a cached negative dentry: not judged genuine_negative' "$log"; echo $?)" \
	"d_seq samples 2 off (selftest_break=2): the cached negative is not genuine_negative, insmod fails with ENODEV ($(t selftest_break2))"
read -r nw no <<<"$(t neg_at_load)"
ok "$([[ ${nw:-0} -ge 1 && ${no:-0} -ge 1 ]]; echo $?)" \
	"insmod's self-check judged a cached negative genuine_negative (walk ${nw:-none}, open ${no:-none})"
ok "$([[ $(t early_test_2) == refused:* && $(t early_test_m1) == loaded ]]; echo $?)" \
	"early_test=2 is refused, -1 accepted ($(t early_test_2); $(t early_test_m1))"
ok "$([[ $(t delay_any) == refused:* && $(t delay_comm) == loaded ]]; echo $?)" \
	"delay_us=200 needs a comm filter at load ($(t delay_any); $(t delay_comm))"
ok "$([[ $(t write_delay_any) == refused && $(t clear_comm) == refused ]]; echo $?)" \
	"without a comm filter delay_us stays <= 100 (write 101: $(t write_delay_any); clearing comm at 5000: $(t clear_comm))"
ok "$(grep -q '^DCRACE-P step_into step_into kprobe armed' "$log" && grep -q '^DCRACE-P dentry_kill __dentry_kill kprobe armed' "$log"; echo $?)" \
	"step_into and __dentry_kill are probed"
ok "$([[ $(t early_no_step) == -1 ]]; echo $?)" "without the step_into probe early_test is not learnt (got $(t early_no_step))"
# the reports printed (on the console) between the two lines: every
# event after the reset (a few: 0.2 s, 5 delays), up to the rate limit's
# 10. Before the fix the events the first report work found were skipped.
eb=$(t events_before) ea=$(t events_after)
ra=$(sed -n '/^DCRACE-T events_before/,/^DCRACE-T events_after/p' "$log" | grep -cE 'BUG: dcrace: false ENOENT|dcrace: race caught' || true)
diag "verbose after reset: events before $eb, after $ea, reports after $ra"
ok "$([[ $eb =~ ^[0-9]+$ && $ea =~ ^[1-9][0-9]*$ && $ra -eq $((ea < 10 ? ea : 10)) ]]; echo $?)" \
	"reset restarts the verbose reports from event 1 (events $eb, then $ea after reset, $ra reported)"
# issue 22: the walk probes must not learn a return site in the load's
# window before exit mode is chosen (an int3 in link_path_walk() for
# nothing): 10 loads while stats run
lw=$(sed -n 's/^DCRACE-LW //p' "$log")
diag "loads under a stat loop (load, walk_exit lines, walk_return lines):"$'\n'"$lw"
ok "$(awk '{ n++; if ($2 > 0) e++; if ($2 > 0 && $3 > 0) both++ }
	END { exit !(n == 10 && e > 0 && both == 0) }' <<<"$lw"; echo $?)" \
	"10 loads under a stat loop: never a walk_return site next to the walk exits ($(awk '$2 > 0' <<<"$lw" | grep -c . || true) loads in exit mode)"
read -r lc la <<<"$(t late_cycles)"
ok "$([[ $lc == 12 ]]; echo $?)" "12 insmod/rmmod cycles with late_sites=1 under load (got ${lc:-none})"
ok "$([[ ${la:-0} -gt 0 ]]; echo $?)" "late_sites=1: return sites were armed after load ($la sightings)"
s=$(splat "$log")
diag "$s"
ok "$([[ -z $s ]]; echo $?)" "no oops, BUG or WARNING in the load-time checks"
ok "$([[ -z $(grep 'self-check failed' "$T_RESULTS/module-cycles.log" || true) ]]; echo $?)" \
	"the self-check passed in every load of the 20 cycles under load"
# 7. every RCU lookup (issue 13): open()'s last component on the variant
# kernels, per-lookup counters, the dcrace:dcrace_race trace event (its
# contract format, one line per race), genuine negatives of open()
TR=/sys/kernel/tracing
TRACE_ON="[ -e $TR/trace ] || mount -t tracefs nodev $TR; echo 8192 > $TR/buffer_size_kb; echo 1 > $TR/events/dcrace/dcrace_race/enable"
TRACE_OUT="echo 0 > $TR/tracing_on; sed -n 's/.*dcrace_race: /DCRACE-TR /p' $TR/trace"
NEG="cat /mnt/nope 2>/dev/null; cat /mnt/nope 2>/dev/null; cat /mnt/nope 2>/dev/null"
PROBES="grep -E '^lookup_caller|^open_return' $D/probes | sed 's/^/DCRACE-P /'"
# the contract (docs/debugfs.md, "Trace events")
TRFMT='^DCRACE-TR verdict=(false_enoent|caught|caught_late|unexpected|end_caught) pid=[0-9]+ comm=[^ ]+ lookup=(walk|open|end) component=[^ ]+ seq=[0-9]+/[0-9]+ result=-?[0-9]+ killer=-?[0-9]+/[^ ]+ kill_to_read_ns=-?[0-9]+ ns=[0-9]+ errno=(ENOENT|ECHILD|ENOTDIR|EACCES) end=[^ ]+ seq_state=(changed|unchanged)$'
for k in open-last mount-refetch fixed; do
	log=$T_RESULTS/module-open-$k.log
	rc=0
	guest "$k" "$log" "$TRACE_ON; $INJ; $WL --mode open --duration $isecs; $TRACE_OUT; $NEG; $STATS; $PROBES" || rc=$?
	ok "$rc" "$k: injected open run with trace events completed (log $log)"
	counts "$k" "$log"
	of=$(stat open_false_enoent "$log") wf=$(stat walk_false_enoent "$log")
	trf=$(grep -c '^DCRACE-TR verdict=false_enoent ' "$log" || true)
	trn=$(grep -c '^DCRACE-TR ' "$log" || true)
	trok=$(grep '^DCRACE-TR ' "$log" | grep -cvE "$TRFMT" || true)
	diag "$k open ${isecs}s: user ${u[$k]}, module false_enoent ${m[$k]} (walk $wf, open $of), caught ${c[$k]} (walk $(stat walk_caught "$log"), open $(stat open_caught "$log")), open_lookups $(stat open_lookups "$log"), open_genuine_negative $(stat open_genuine_negative "$log"), trace events $trn ($trf false_enoent, $trok off-format)"
	if [[ $k == fixed ]]; then
		ok "$([[ ${u[$k]} == 0 && ${m[$k]} == 0 && $trf == 0 ]]; echo $?)" "$k open: no false ENOENT (user ${u[$k]}, module ${m[$k]}, trace $trf)"
		ok "$([[ $(stat walk_caught "$log") -gt 0 && $(stat open_caught "$log") -gt 0 ]]; echo $?)" \
			"$k open: caught on both lookups (walk $(stat walk_caught "$log"), open $(stat open_caught "$log"))"
	else
		ok "$([[ ${u[$k]} =~ ^[0-9]+$ && ${u[$k]} -gt 0 ]] && is_count "${m[$k]}" && [[ ${m[$k]} == "${u[$k]}" ]]; echo $?)" \
			"$k open: module false_enoent equals user-visible, > 0 (${m[$k]} = ${u[$k]})"
		ok "$([[ $trf == "${m[$k]}" && $((wf + of)) == "${m[$k]}" ]]; echo $?)" \
			"$k open: one trace event per false ENOENT ($trf), walk + open = total ($wf + $of)"
	fi
	ok "$([[ $trn -gt 0 && $trok == 0 ]]; echo $?)" "$k: every trace event in the contract's format ($trn events, $trok not)"
	ok "$([[ $(stat open_genuine_negative "$log") -gt 0 ]] && grep -q '^DCRACE-P lookup_caller path_openat+[^ ]* open tracked' "$log" &&
		grep -q '^DCRACE-P open_return do_filp_open+' "$log"; echo $?)" \
		"$k: open()'s lookup is tracked, its genuine negatives counted ($(stat open_genuine_negative "$log"))"
done
ok "$([[ $(stat open_false_enoent "$T_RESULTS/module-open-open-last.log") == "${m[open-last]}" ]]; echo $?)" \
	"open-last: every false ENOENT is open()'s last component"
done_testing
