#!/bin/bash
# The walk's end never reads a step's dentry (debug kernel: KASAN). An
# open() of a missing file fails in RCU mode on its last component: its
# step (the negative dentry) waits in the slot for path_openat()'s return.
# With that return missed (test_miss_returns=1) the slot outlives the walk;
# the dentry is pruned and freed; the task's next walk,
# openat(file_fd, "x"), ends in RCU mode in path_init() (ENOTDIR) at the
# same nameidata address. A walk-end snapshot that read the step's dentry
# there (as the first version of the rule did, for open()'s "step_stale")
# reads freed memory: KASAN use-after-free.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 3

D=/sys/kernel/debug/dcrace
log=$T_RESULTS/end-slot.log
tmp_dir
rc=0
if gcc -O2 -static -Wall -Wextra -Werror -o "$tmp/openat-notdir" "$ROOT/tests/workload/openat-notdir.c" 2>"$tmp/cc.log"; then
	"$HS/run-guest" -q --kernel debug --mem 1536M --timeout 600 --log "$log" \
		--copy "$("$HS/build-module" --kernel debug)" --copy "$tmp/openat-notdir" --exec "
insmod /dcrace/copy/dcrace.ko test_miss_returns=1 || exit 1
/dcrace/copy/openat-notdir /mnt/dcr-end-slot 200 negative | sed 's/^/DCRACE-O run /'
echo DCRACE-O stats \$(sed -n 's/^open_lookups: //p' $D/stats) \$(sed -n 's/^end_judged: //p' $D/stats)
rmmod dcrace
" >/dev/null || rc=$?
else
	rc=1
	diag "$(cat "$tmp/cc.log")"
fi
o() { sed -n "s/^DCRACE-O $1 //p" "$log" | tail -n 1; }
ok "$rc" "debug kernel, test_miss_returns=1: the guest ran (log $log)"
read -r opens judged <<<"$(o stats)"
ok "$([[ $(o run) == 'OPENAT-NOTDIR loops=200 good=200 enotdir=200' ]] && is_count "$opens" && [[ $opens -ge 200 ]]; echo $?)" \
	"200 x (open of a missing file: ENOENT in RCU mode on its last step, its return missed; prune; openat(file_fd, \"x\")): $(o run), open steps $opens, ends judged (no return: 0 expected) ${judged:-x}"
s=$(splat "$log")
diag "$s"
ok "$([[ -z $s ]]; echo $?)" "no KASAN report or other splat (the end snapshot reads no step dentry)"
done_testing
