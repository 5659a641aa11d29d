#!/bin/bash
# KUnit suites (oracle, ring, knob parser, call-site decoder, the walk's end,
# the per-task slots) run in the
# guest; each KUnit case becomes one TAP test point here.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

log=$T_RESULTS/kunit.log
ko=$("$HS/build-module" --kunit)
rc=0
"$HS/run-guest" -q --timeout 200 --log "$log" --copy "$ko" \
	--exec 'insmod /dcrace/copy/dcrace_kunit.ko && rmmod dcrace_kunit' unfixed >/dev/null || rc=$?
# KTAP in dmesg: "    # Subtest: SUITE", then "    ok N CASE" / "    not ok N CASE".
cases=$(sed -n '/^DCRACE-DMESG-BEGIN/,/^DCRACE-DMESG-END/p' "$log" | sed 's/^\[[ 0-9.]*\] //' |
	awk '/^    # Subtest: / { suite = $3 } /^    (not )?ok [0-9]+ / {
		st = ($1 == "not") ? "not ok" : "ok"; name = ($1 == "not") ? $4 : $3
		print st "\t" suite "." name }')
n=$(grep -c . <<<"$cases" || true)
plan $((n + 2))
ok "$rc" "guest loaded dcrace_kunit.ko (log $log)"
while IFS=$'\t' read -r st name; do
	[[ -n $name ]] || continue
	ok "$([[ $st == ok ]]; echo $?)" "kunit $name"
done <<<"$cases"
suites=$(grep -cE '^\[[ 0-9.]*\] ok [0-9]+ dcrace_(oracle|ring|knobs|decode|end|slots)$' "$log" || true)
ok "$([[ $suites -eq 6 && $n -ge 26 ]]; echo $?)" "all 6 suites passed as a whole (oracle, ring, knobs, decode, end: the rule at the walk's end, slots), $n cases ran"
done_testing
