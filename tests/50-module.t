#!/bin/bash
# dcrace.ko end to end, on both kernels, with the pipeline's workload:
# every user-visible false ENOENT is explained by the module, nothing else
# is called one; injection widens the window; insmod/rmmod under load.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 21

secs=${DCRACE_MODULE_SECONDS:-30}
isecs=${DCRACE_INJECT_SECONDS:-10}
D=/sys/kernel/debug/dcrace
WL="dcrace-workload --quiet --seed 1 --threads 2"

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

# 1. natural race, module loaded, 30 s
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
"$HS/run-guest" -q --timeout 300 --log "$log" --exec "$WL --duration $secs" unfixed >/dev/null || true
nat=$(jf false_enoent "$log")
diag "unfixed without module: $nat false ENOENT in $secs s"

# 3. injection: delay 20 us in the window, walkers only
INJ="echo 20 > $D/inject/delay_us; echo 100 > $D/inject/probability; echo dcr-walk > $D/inject/comm"
for k in unfixed fixed; do
	log=$T_RESULTS/module-inject-$k.log
	rc=0
	guest "$k" "$log" "$INJ; $WL --duration $isecs; $STATS" || rc=$?
	ok "$rc" "$k: injected run completed"
	counts "$k" "$log"
	diag "$k injected ${isecs}s: user-visible ${u[$k]}, module false_enoent ${m[$k]}, caught ${c[$k]}, injected_delays $(stat injected_delays "$log")"
done
ok "$([[ ${u[unfixed]} =~ ^[0-9]+$ && $nat =~ ^[0-9]+$ ]] &&
	awk -v i="${u[unfixed]}" -v is="$isecs" -v n="$nat" -v ns="$secs" \
	'BEGIN { r = (n > 0 ? n : 1) / ns; printf "# injected %.1f/s vs natural %.2f/s: %.0fx\n", i / is, r, i / is / r > "/dev/stderr"; exit !(i / is >= 100 * r) }'; echo $?)" \
	"unfixed: injected false-ENOENT rate >= 100x the natural one"
ok "$(is_count "${m[unfixed]}" "${u[unfixed]}" && [[ ${m[unfixed]} == "${u[unfixed]}" ]]; echo $?)" "unfixed injected: module count equals user-visible (${m[unfixed]} = ${u[unfixed]})"
ok "$([[ ${u[fixed]} == 0 && ${m[fixed]} == 0 ]]; echo $?)" "fixed injected: 0 user-visible false ENOENT (${u[fixed]})"
ok "$([[ ${c[fixed]} =~ ^[0-9]+$ && ${c[fixed]} -gt 0 ]]; echo $?)" "fixed injected: caught > 0 (${c[fixed]})"

# 4. insmod/rmmod 20 times while the workload runs
log=$T_RESULTS/module-cycles.log
rc=0
# --tcg single: under multi-threaded TCG, disarming a kprobe in code another
# vCPU is executing hangs the guest (see run-guest --help).
"$HS/run-guest" -q --tcg single --timeout 400 --log "$log" --copy "$("$HS/build-module")" --exec "
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
done_testing
