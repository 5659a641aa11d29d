#!/bin/bash
# dcrace.ko's trace events read with Debian's trace-cmd in the guest (the
# base initramfs carries /usr/bin/trace-cmd and its libraries):
# `trace-cmd record -e 'dcrace:*'` around an injected workload, then
# `trace-cmd report`. On unfixed, dcrace_race lines in the contract's
# format (docs/debugfs.md, "Trace events"), as many false_enoent lines as
# the module's stats count, and dcrace_prune lines; on Debian's stock
# kernel (clean) the races are caught: dcrace_race verdict=caught lines,
# no false_enoent, and dcrace_prune lines.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 10

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The guest command: injection on, the tree made, then the workload run
# under trace-cmd record; the report's dcrace lines between markers.
# shellcheck disable=SC2016
script='d=/sys/kernel/debug/dcrace
echo dcr-walk > $d/inject/comm && echo 20 > $d/inject/delay_us || exit 1
dcrace-workload --quiet --setup-only >/dev/null || exit 1
cd /tmp
trace-cmd record -q -e "dcrace:*" -o /tmp/dcrace.dat dcrace-workload --quiet --no-setup --duration 1 >/tmp/wl.out; echo "TC-RECORD-EXIT $?"
trace-cmd report -i /tmp/dcrace.dat >/tmp/report.txt; echo "TC-REPORT-EXIT $?"
echo TC-REPORT-BEGIN; grep -E "dcrace_(race|prune):" /tmp/report.txt; echo TC-REPORT-END
echo TC-STATS-BEGIN; cat $d/stats; echo TC-STATS-END
echo "TC-WORKLOAD $(cat /tmp/wl.out)"'

# The contract's TP_printk fields, in order (docs/debugfs.md).
race_re='dcrace_race: +verdict=(false_enoent|caught|caught_late|unexpected|end_caught) pid=[0-9]+ comm=[^ ]+ lookup=(walk|open|[a-z_]+) component=[^ ]+ seq=[0-9]+/[0-9]+ result=-?[0-9]+ killer=-?[0-9]+/[^ ]+ kill_to_read_ns=-?[0-9]+ ns=[0-9]+ errno=(ENOENT|ECHILD|ENOTDIR|EACCES) end=[^ ]+ seq_state=(changed|unchanged)$'
prune_re='dcrace_prune: +pid=[0-9]+ comm=[^ ]+ component=[^ ]+ seq=[0-9]+ ns=[0-9]+$'

# section LOG NAME: the lines between TC-NAME-BEGIN and TC-NAME-END.
section() {
	sed -n "/^TC-$2-BEGIN\$/,/^TC-$2-END\$/p" "$1" | sed '1d;$d'
}

# mstat LOG KEY: a counter of the module's stats.
mstat() {
	section "$1" STATS | sed -n "s/^$2: //p" | head -n 1
}

for k in unfixed debian; do
	log=$T_RESULTS/trace-cmd-$k.log
	rc=0
	"$HS/run-guest" -q --module --timeout 400 --log "$log" --kernel "$k" --exec "$script" >/dev/null 2>"$tmp/err" || rc=$?
	tr -d '\r' <"$log" >"$tmp/$k.log"
	section "$tmp/$k.log" REPORT >"$tmp/$k.rep"
	races=$(grep -c 'dcrace_race:' "$tmp/$k.rep" || true)
	prunes=$(grep -c 'dcrace_prune:' "$tmp/$k.rep" || true)
	bad=$(grep -E 'dcrace_race:' "$tmp/$k.rep" | grep -cvE "$race_re" || true)
	badp=$(grep -E 'dcrace_prune:' "$tmp/$k.rep" | grep -cvE "$prune_re" || true)
	fe=$(grep -cE 'dcrace_race: +verdict=false_enoent ' "$tmp/$k.rep" || true)
	caught=$(grep -cE 'dcrace_race: +verdict=caught ' "$tmp/$k.rep" || true)
	m_fe=$(mstat "$tmp/$k.log" false_enoent)
	m_caught=$(mstat "$tmp/$k.log" caught)
	diag "$k: run-guest exit $rc; $races dcrace_race lines ($fe false_enoent, $caught caught), $prunes dcrace_prune; module stats: false_enoent $m_fe, caught $m_caught; log $log"
	diag "$(grep -m 3 'dcrace_race:' "$tmp/$k.rep" || true)"
	diag "$(grep -m 1 'dcrace_prune:' "$tmp/$k.rep" || true)"
	ok "$([[ $rc -eq 0 ]] && grep -q '^TC-RECORD-EXIT 0$' "$tmp/$k.log" && grep -q '^TC-REPORT-EXIT 0$' "$tmp/$k.log"; echo $?)" \
		"$k: trace-cmd record -e 'dcrace:*' and trace-cmd report run in the guest (run-guest exit $rc)"
	ok "$([[ $races -gt 0 && $bad -eq 0 ]]; echo $?)" "$k: $races dcrace_race lines, every one in the contract's format ($bad not)"
	ok "$([[ $prunes -gt 0 && $badp -eq 0 ]]; echo $?)" "$k: $prunes dcrace_prune lines, every one pid comm component seq ns ($badp not)"
	if [[ $k == unfixed ]]; then
		ok "$(is_count "$m_fe" && [[ $fe -gt 0 && $fe -eq $m_fe ]]; echo $?)" \
			"unfixed: every false ENOENT in trace-cmd's report ($fe lines, module false_enoent $m_fe)"
		ok "$(grep -qE 'dcrace_race: +verdict=false_enoent pid=[0-9]+ comm=dcr-walk lookup=(walk|open) ' "$tmp/$k.rep"; echo $?)" \
			"unfixed: the walker's comm and the lookup (walk or open) in the false_enoent lines"
	else
		ok "$(is_count "$m_caught" && [[ $fe -eq 0 && $caught -gt 0 && $caught -eq $m_caught ]]; echo $?)" \
			"debian: no false_enoent line, every caught race in the report ($caught lines, module caught $m_caught)"
		ok "$([[ $(mstat "$tmp/$k.log" false_enoent) == 0 ]] && grep -q '"false_enoent":0,' "$tmp/$k.log"; echo $?)" \
			"debian: 0 false ENOENT in the module and in user space"
	fi
done
done_testing
