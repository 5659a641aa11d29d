#!/bin/bash
# The hunt (docs/design.md, "The hunt"): the job list, bad cells, the
# parser of the kernel's reports on a canned KASAN log, and the short
# matrix for real on both lines: Debian's pristine 6.1 with KASAN has the
# procfs use-after-free (proc_fs_info freed without a grace period, read
# by ->get_link() in an RCU walk after a lazy umount), found by the
# generic proc-umount scenario and attributed to a walker, and so is a
# bogus ESRCH (may_lookup() returns a lazy ->permission() failure on an
# evicted /proc/<pid> inode: the EACCES bug's root through another
# filesystem); each one-patch fix (procfs-debug, backport-debug) removes
# its finding, 6.12 (which has both) is clean, the same windows reached:
# Debian's shipped 6.12 image with slub_debug=FZP (poisoned frees), so
# that make check builds no 6.12 debug kernel.
# And the struct pid use-after-free (issue 37): proc_evict_inode() puts
# the pid before it clears ei->pid, found by the generic proc-exit
# scenario once the reaped task's own reference is a grace period gone
# (--grace) and the windows sit on both sides (a walker after its load of
# ei->pid, the controller after the put); pidfree-debug (upstream's
# 47458802f660) is clean under the same windows.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 19

tmp_dir
H=$HS/hunt
rcof() { cat "$tmp/$1.rc" 2>/dev/null || echo x; }
run() {
	local name=$1 rc=0
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	echo "$rc" >"$tmp/$name.rc"
}

run help "$H" --help
ok "$([[ $(rcof help) -eq 0 ]] && grep -q 'KERNEL:FS:SCENARIO' "$tmp/help.out"; echo $?)" "hunt --help (exit $(rcof help))"

run list "$H" --list
n=$(jq -r '[length, ([.[] | select((.command | startswith("host-scripts/hunt --cell ")) and (.result | startswith("RESULTS/")))] | length), ([.[].kernel] | unique | join(",")), ([.[] | select(.fs == "procfs")] | length)] | @tsv' "$tmp/list.out" 2>&1 || true)
ok "$([[ $(rcof list) -eq 0 && $n == $'58\t58\t6.12/pristine-debug,pristine-debug\t12' ]]; echo $?)" \
	"--list: the default matrix as a job list, 2 kernels x 5 filesystems x their scenarios and start points = 58 jobs, each one command and its result file ($n)"

res=""
for bad in "--cell nope" "--cell pristine-debug:procfs:replace" "--cell pristine-debug:zfs:prune" "--cell nokernel:procfs:proc-exit" "--fs zfs" "--scenarios nope" "--duration 0" "--repeat 0"; do
	# shellcheck disable=SC2086
	run bad "$H" $bad --results "$tmp/never"
	res+="$(rcof bad):$(grep -c . "$tmp/bad.err") "
done
ok "$([[ $res == "64:1 64:1 64:1 64:1 64:1 64:1 64:1 64:1 " && ! -e $tmp/never ]]; echo $?)" \
	"bad cells, filesystems, scenarios, durations, repeats: usage errors of one line, nothing run ($res)"

# The kernel's reports, parsed: the first line, the task, the syscall.
n=$(cd "$HS" || exit 1; python3 -c '
import json, sys
from dcrace_harness import hunt
f = hunt.kernel_findings(open(sys.argv[1]).read())
print(json.dumps([(x["oracle"], x["summary"], x["task"], x["pid"], x["syscall"]) for x in f]))
' "$ROOT/tests/canned/hunt-kasan.log" 2>&1 || true)
ok "$([[ $n == '[["kasan", "BUG: KASAN: slab-use-after-free in proc_self_get_link+0x2e/0x140", "dcr-walk", 212, "newfstatat"], ["lockdep", "WARNING: possible circular locking dependency detected", "dcr-ctl", 211, "umount"]]' ]]; echo $?)" \
	"a canned log: a KASAN report (printed twice, a stale \"? __do_sys_fstat\" frame in its trace) and a lockdep one, each once with its task, pid and syscall ($n)"

# The short matrix, for real (5 boots of 6.1's debug kernels, 1 of debian-6.12).
run short "$H" --short --duration 8 --results "$tmp/res"
diag "$(cat "$tmp/short.err")"
ok "$([[ $(rcof short) -eq 0 ]]; echo $?)" "hunt --short ran its 6 cells (exit $(rcof short); $(tail -n 1 "$tmp/short.out"))"
cell() { jq -c "$2" "$tmp/res/$1.json" 2>/dev/null || echo missing; }
bug=pristine-debug_procfs_proc-umount
fix=procfs-debug_procfs_proc-umount
bp=backport-debug_procfs_proc-umount
c612=debian-6.12_procfs_proc-umount
kern='[.findings[] | select(.oracle != "truth" and .oracle != "rule")]'
esrch='[.findings[] | select(.oracle == "truth" and (.summary | test("ESRCH")))] | length > 0'
# every KASAN report of the boot is read (kasan_multi_shot): the freed
# proc_fs_info is read by proc_self_get_link(), proc_thread_self_get_link()
# or proc_pid_permission() (hidepid), whichever a walker meets first
n=$(cell $bug '[.findings[] | select(.oracle == "kasan" and (.summary | test("use-after-free in proc_((thread_)?self_get_link|pid_permission)"))) | [true, .task, .by_workload, .syscall != null]] | first')
ok "$([[ $n == '[true,"dcr-walk",true,true]' ]]; echo $?)" \
	"pristine-debug, procfs, proc-umount: KASAN use-after-free of proc_fs_info (proc_self_get_link, proc_thread_self_get_link or proc_pid_permission), by a walker, in a syscall ($n; $(cell $bug '[.findings[].summary]'))"
for c in $bug $fix $bp $c612; do
	n=$(cell "$c" '[.reached, .window_hits.get_link > 0, .window_hits.permission > 0, .calls > 0, .iterations > 0]')
	ok "$([[ $n == '[true,true,true,true,true]' ]]; echo $?)" \
		"$c: the windows reached: get_link and permission entries of the walkers in RCU mode, calls and cycles made ($n; $(cell "$c" '.window_hits'))"
done
# Two findings in the one cell, each removed by its own upstream fix: the
# procfs one (e31f0a57ae1a) removes the use-after-free, may_lookup()'s
# (cdb67fdeed72) the bogus ESRCH of a lazy ->permission() on an evicted
# /proc/<pid> inode.
n=$(cell $bug "[$esrch]")
ok "$([[ $n == '[true]' ]]; echo $?)" "pristine-debug: user-visible ESRCH no state allows, from the truth table ($n)"
n=$(cell $fix "[($kern | length), ($esrch)]")
ok "$([[ $n == '[0,true]' ]]; echo $?)" "procfs-debug (e31f0a57ae1a): no kernel report, the ESRCH still there ($n; $(cell $fix '[.findings[].summary]'))"
n=$(cell $bp "[($kern | map(select(.oracle == \"kasan\")) | length > 0), ($esrch)]")
ok "$([[ $n == '[true,false]' ]]; echo $?)" "backport-debug (cdb67fdeed72): no ESRCH, the use-after-free still there ($n; $(cell $bp '[.findings[].summary]'))"
n=$(cell $c612 '[(.findings | length), (.outcomes["self/status"] | keys)]')
ok "$([[ $n == '[0,["0","ENOENT"]]' ]]; echo $?)" \
	"debian-6.12 (Debian's shipped 6.12, slub_debug=FZP): clean, no finding of any oracle, self/status succeeded and failed ENOENT as allowed ($n)"
n=$(grep -c '^| `' "$tmp/res/hunt.md" 2>/dev/null || echo 0)
ok "$([[ $n -eq 6 ]] && grep -q 'proc_thread_self_get_link\|proc_self_get_link' "$tmp/res/hunt.md"; echo $?)" \
	"the page of the short matrix: 6 cells, the finding named ($n rows)"

# proc-exit: the struct pid use-after-free, and its fix
pe=pristine-debug_procfs_proc-exit
pf=pidfree-debug_procfs_proc-exit
for c in $pe $pf; do
	n=$(cell "$c" '[.status != "not reached" and .status != "broken" and .status != "crash", .window_hits.load > 0, .window_hits.free > 0, ([.grace[]] | length == 3 and all(. > 0))]')
	ok "$([[ $n == '[true,true,true,true]' ]]; echo $?)" \
		"$c: reached: the walkers' load window, the controller's free window, cycles with 0, 1 and 3 grace periods ($n; $(cell "$c" '[.status, .why, .window_hits, .grace]'))"
done
n=$(cell $pe '[.findings[] | select(.oracle == "kasan" and (.summary | test("use-after-free in (get_)?pid_task"))) | [.task, .by_workload]] | first')
ok "$([[ $n == '["dcr-walk",true]' ]]; echo $?)" \
	"pristine-debug, procfs, proc-exit: KASAN use-after-free in pid_task by a walker ($n; $(cell $pe '[.findings[].summary]'))"
n=$(cell $pf "[($kern | length), .false_total // 0, ([.findings[] | select(.oracle == \"truth\")] | length)]")
ok "$([[ $n == '[0,0,0]' ]]; echo $?)" "pidfree-debug (47458802f660): no kernel report, no truth-table finding ($n; $(cell $pf '[.findings[].summary]'))"
done_testing
