#!/bin/bash
# The walk's end, its probes and its slots, in guests (dcrace.ko loaded by
# hand with test knobs): enabled=0 stops the walk-end handlers; the
# try_to_unlazy() calls probed are link_path_walk()'s only (both lines);
# one caller too many for the return sites' room refuses that caller
# alone, with one line naming it; the slots of ends nobody judged are
# reclaimed when their tasks exit.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 12

D=/sys/kernel/debug/dcrace
tmp_dir
if ! gcc -O2 -static -Wall -Wextra -Werror -o "$tmp/openat-notdir" \
	"$ROOT/tests/workload/openat-notdir.c" 2>"$tmp/cc.log"; then
	diag "$(cat "$tmp/cc.log")"
fi
# s NAME: a counter of the stats file, in the guest's shell
s() { echo "\$(sed -n 's/^$1: //p' $D/stats)"; }
# o LOG KEY: the last value the guest printed after "DCRACE-O KEY "
o() { sed -n "s/^DCRACE-O $2 //p" "$1" | tail -n 1; }

for k in ${DCRACE_END_KERNELS:-unfixed 6.12/unfixed}; do
	log=$T_RESULTS/end-rules-${k//\//-}.log
	rc=0
	"$HS/run-guest" -q --kernel "$k" --timeout 600 --log "$log" \
		--copy "$("$HS/build-module" --kernel "$k")" --copy "$tmp/openat-notdir" --exec "
insmod /dcrace/copy/dcrace.ko || exit 1
grep -E '^(unlazy_call|slot_reclaim|walk_end) ' $D/probes | sed 's/^/DCRACE-P /'
echo 0 > $D/enabled
/dcrace/copy/openat-notdir /mnt/dcr-end 50 | sed 's/^/DCRACE-O off_run /'
echo DCRACE-O off $(s end_judged) $(s end_genuine) $(s end_caught) $(s end_not_judged)
echo 1 > $D/enabled
/dcrace/copy/openat-notdir /mnt/dcr-end 50 | sed 's/^/DCRACE-O on_run /'
echo DCRACE-O on $(s end_judged) $(s end_genuine)
rmmod dcrace
insmod /dcrace/copy/dcrace.ko test_miss_returns=1 || exit 1
i=0; while [ \$i -lt 300 ]; do stat /mnt/dcr-none >/dev/null 2>&1; i=\$((i + 1)); done
echo DCRACE-O miss $(s slots_reclaimed) $(s task_slots_full) $(s end_unjudged)
rmmod dcrace
insmod /dcrace/copy/dcrace.ko test_end_room=3 || exit 1
grep -E '^walk_end ' $D/probes | sed 's/^/DCRACE-R /'
rmmod dcrace
" >/dev/null || rc=$?
	ok "$rc" "$k: four loads with test knobs completed (log $log)"

	# enabled=0: not one end judged or caught; enabled=1: every ENOTDIR of
	# openat(file_fd, "x") (path_init(), RCU mode) judged, genuine
	read -r oj og oc on <<<"$(o "$log" off)"
	read -r nj ng <<<"$(o "$log" on)"
	ok "$(is_count "$oj" "$og" "$oc" "$on" "$nj" "$ng" && [[ $oj -eq 0 && $og -eq 0 && $oc -eq 0 && $on -eq 0 && $nj -ge 50 && $ng -ge 50 ]]; echo $?)" \
		"$k: enabled=0: end_judged $oj, end_genuine $og, end_caught $oc, end_not_judged $on (all 0); enabled=1: end_judged $nj, end_genuine $ng (>= 50)"

	# the walk's own revalidations only: link_path_walk() and its clones
	all=$(grep -c '^DCRACE-P unlazy_call ' "$log" || true)
	lpw=$(grep -cE '^DCRACE-P unlazy_call link_path_walk[.a-z0-9]*\+0x[0-9a-f]+/0x[0-9a-f]+ kprobe armed -$' "$log" || true)
	ok "$([[ $all -ge 1 && $lpw -eq $all ]]; echo $?)" \
		"$k: every try_to_unlazy() call probed is in link_path_walk() ($lpw of $all; $(grep '^DCRACE-P unlazy_call' "$log" | awk '{print $3}' | tr '\n' ' '))"

	# slots of ends whose returns were missed: reclaimed at their tasks' exit
	read -r rec full unj <<<"$(o "$log" miss)"
	ok "$(is_count "$rec" "$full" "$unj" && [[ $rec -ge 290 && $full -eq 0 ]] &&
		grep -q '^DCRACE-P slot_reclaim do_exit kprobe armed -$' "$log"; echo $?)" \
		"$k: 300 processes ending in RCU mode, returns unjudged (test_miss_returns=1): slots_reclaimed $rec (>= 290), task_slots_full $full (0), end_unjudged $unj"

	# room for 3 return sites: the callers that do not fit refused, each
	# with one line naming it; the rest judged
	refused=$(grep -cE 'dcrace: walk ends through [a-z_]+ not judged: [0-9]+ calls of path_(lookupat|parentat), room for [0-9]+ more' "$log" || true)
	judged=$(grep -cE '^DCRACE-R walk_end (path_lookupat|path_parentat) (judged|partial)$' "$log" || true)
	ok "$([[ $refused -ge 1 && $judged -ge 1 ]] && ! grep -q '^DCRACE-R walk_end path_lookupat missing$' "$log"; echo $?)" \
		"$k: test_end_room=3: $refused caller(s) refused with one line each, $judged walk function(s) still judged ($(grep '^DCRACE-R' "$log" | cut -d' ' -f3,4 | tr '\n' ';'))"
	s=$(splat "$log")
	diag "$s"
	ok "$([[ -z $s ]]; echo $?)" "$k: no splat"
done
done_testing
