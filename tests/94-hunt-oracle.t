#!/bin/bash
# The hunt's "none" means none (issue 37), without a boot: every kind of
# kernel report is a finding (canned logs), a guest that died or hung is
# its cell's "crash" and the matrix goes on (a fake run-guest), a cell that
# did not reach the windows its scenario and filesystem must have is "not
# reached" with its own exit status, and the scenarios' truth tables are
# as narrow as their states allow (dcrace-hunt built and run on the host).
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 22

tmp_dir
py() { (cd "$HS" && python3 -c "$@"); }

# 1. every report kind, each once, with its task and syscall
n=$(py '
import sys
from dcrace_harness import hunt
f = hunt.kernel_findings(open(sys.argv[1]).read())
print(" ".join("%s:%s:%s:%d" % (x["oracle"], x["task"], x["syscall"], x["count"]) for x in f))
' "$ROOT/tests/canned/hunt-reports.log" 2>&1 || true)
want="kasan:dcr-walk:openat:1 crash:dcr-walk:newfstatat:1 lockup:dcr-ctl:umount:1 rcu:dcr-walk:newfstatat:2 lockup:dcr-ctl:chdir:1 ubsan:dcr-walk:None:1 warning:None:unlinkat:1 crash:dcr-ctl:None:1 crash:dcr-walk:openat:1"
ok "$([[ $n == "$want" ]]; echo $?)" \
	"KASAN null-ptr-deref, GPF, soft lockup, RCU stall (reported twice: once, x2), hung task, UBSAN, WARNING, kernel BUG at, 6.12's Oops: 9 findings ($n)"

# 1b. a kernel without KASAN (Debian's stock images) boots with
# slub_debug=FZP: SLUB's own report of a poisoned object is a finding
n=$(py '
import sys
from dcrace_harness import hunt
f = hunt.kernel_findings(open(sys.argv[1]).read())
print(" ".join("%s:%s:%s:%d" % (x["oracle"], x["task"], x["syscall"], x["count"]) for x in f),
      "slub_debug=FZP" in hunt.hunt_append("debian"), "slub_debug=FZP" in hunt.hunt_append("debian-6.12"),
      "slub_debug" in hunt.hunt_append("pristine-debug"))
' "$ROOT/tests/canned/hunt-slub.log" 2>&1 || true)
ok "$([[ $n == 'kernel:dcr-walk:newfstatat:1 True True False' ]]; echo $?)" \
	"Debian's kernels boot the hunt with slub_debug=FZP, the KASAN ones without; SLUB's 'BUG kmalloc-96 (...): Poison overwritten' is a finding of the walker's stat ($n)"

# 2. a report printed on the console and again in the final dmesg: once
n=$(py '
import sys
from dcrace_harness import hunt
t = open(sys.argv[1]).read()
t += "DCRACE-DMESG-BEGIN\n" + t + "DCRACE-DMESG-END\n"
print(" ".join("%s:%d" % (x["oracle"], x["count"]) for x in hunt.kernel_findings(t)))
' "$ROOT/tests/canned/hunt-kasan.log" 2>&1 || true)
ok "$([[ $n == 'kasan:1 lockdep:1' ]]; echo $?)" "the console's and the dmesg's copy of one report: one finding, counted once ($n)"

# 3. a guest that panicked: the cell is a crash, its report the finding
n=$(py '
import sys
from dcrace_harness import hunt
r = hunt.parse_cell_log(sys.argv[1], 125, "run-guest: error: guest kernel panicked")
j = hunt.judge("pristine-debug:procfs:proc-exit", r)
print(j["status"], j["findings"][0]["oracle"], j["findings"][0]["task"], "**crash**" in hunt.fmt_findings(j))
' "$ROOT/tests/canned/hunt-crash.log" 2>&1 || true)
ok "$([[ $n == 'crash crash dcr-walk True' ]]; echo $?)" "a panicked guest's log is parsed whatever the exit status: crash, GPF by the walker ($n)"
n=$(py '
from dcrace_harness import hunt
j = hunt.judge("pristine-debug:procfs:proc-exit", hunt.parse_cell_log("/no/such.log", 124, "run-guest: error: guest did not finish"))
print(j["status"], hunt.fmt_findings(j).startswith("**broken**"))
' 2>&1 || true)
ok "$([[ $n == 'broken True' ]]; echo $?)" "a guest killed with no report in its log: broken, never none ($n)"

# 4. reached means reached: the window kinds and the lifetime ends
n=$(py '
from dcrace_harness import hunt
def cell(cid, hits, it=500, secs=10, delays=100, ctl=0):
    st = {"window_" + k: v for k, v in hits.items()}
    st["injected_delays"] = delays
    w = {"seconds": secs, "iterations": it, "calls": 1000, "ctl_errors": ctl,
         "ctl_error": "synchronize_rcu 1: No such file or directory" if ctl else ""}
    return hunt.judge(cid, {"workload": w, "stats": st, "callbacks": [], "kernel_findings": []})
full = {"permission": 9, "d_revalidate": 9, "get_link": 9, "load": 9, "free": 9}
a = cell("pristine-debug:procfs:proc-exit", full)
b = cell("pristine-debug:procfs:proc-exit", dict(full, free=0))
c = cell("pristine-debug:procfs:proc-exit", full, it=14)
d = cell("pristine-debug:ext4:prune", {"permission": 9}, it=5000)
e = cell("pristine-debug:overlayfs:lazy-umount", {"permission": 9}, it=100)
e2 = cell("pristine-debug:overlayfs:prune", {"permission": 9}, it=5000)
f = cell("pristine-debug:procfs:proc-exit", full, ctl=1)
g = cell("pristine-debug:tmpfs:lazy-umount", {"permission": 9}, it=100)
print(a["status"], "|", b["status"], b["why"], "|", c["why"], "|", d["why"], "|", e["why"], e2["status"], "|", f["status"], "|", g["why"])
' 2>&1 || true)
diag "$n"
ok "$([[ $n == 'none | not reached no free window entered | 14 lifetime ends (cycles) in 10 s, fewer than 2 a second | no d_hash window entered; no d_compare window entered | no get_link window entered none | broken | no get_link window entered' ]]; echo $?)" \
	"reach rules: proc-exit needs its free window and 2 cycles a second, ext4 its casefold d_hash/d_compare, overlayfs its symlinks (its revalidate is never called over tmpfs layers), tmpfs a symlink's get_link; a failed controller is broken"

# 5. the matrix goes on past a crashed cell; exit status and page
cat >"$tmp/fake-run-guest" <<'EOF'
#!/bin/bash
log= script=
echo "argv: $*" >>"$FAKE_ARGV"
while [[ $# -gt 0 ]]; do
	case $1 in
	--log) log=$2; shift 2 ;;
	--exec) script=$2; shift 2 ;;
	*) shift ;;
	esac
done
if [[ $script == *proc-exit* ]]; then
	cp "$FAKE_CRASH" "$log"
	echo "run-guest: error: guest kernel panicked: Kernel panic - not syncing: Fatal exception" >&2
	exit 125
fi
cat >"$log" <<'EOL'
DCRACE-H-BEGIN
DCRACE-H exit 0
DCRACE-H json {"scenario": "prune", "seconds": 8.0, "iterations": 1200, "walkers": 2, "uid": -1, "ctl_tid": 90, "walker_tids": [91, 92], "outcomes": {"p00/f": {"0": 4000}}, "false_errors": {}, "states": 1, "grace": {"0": 400, "1": 400, "3": 400}, "false_total": 0, "calls": 4000, "ctl_errors": 0, "ctl_error": ""}
DCRACE-H stat injected_delays: 300
DCRACE-H stat window_permission: 4000
DCRACE-H probe callback generic_permission kprobe armed 4000 generic:permission
DCRACE-H probe callback shmem_get_link kprobe missing 0 tmpfs:get_link
DCRACE-H-END
EOL
exit 0
EOF
chmod +x "$tmp/fake-run-guest"
rc=0
FAKE_ARGV=$tmp/argv FAKE_CRASH=$ROOT/tests/canned/hunt-crash.log DCRACE_RUN_GUEST=$tmp/fake-run-guest \
	"$HS/hunt" --cell pristine-debug:procfs:proc-exit --cell pristine-debug:tmpfs:prune --duration 8 \
	--results "$tmp/res" >"$tmp/out" 2>"$tmp/err" || rc=$?
diag "$(cat "$tmp/out" "$tmp/err")"
st=$(jq -r '.status' "$tmp/res/pristine-debug_procfs_proc-exit.json" "$tmp/res/pristine-debug_tmpfs_prune.json" 2>/dev/null | tr '\n' ' ')
ok "$([[ $st == 'crash none ' ]]; echo $?)" "a crashed cell does not stop the matrix: crash, then the next cell ran (${st:-no results})"
ok "$([[ $rc -eq 0 ]] && grep -q '2 cells, 1 with findings (1 crashed), 0 broken, 0 not reaching' "$tmp/out"; echo $?)" \
	"exit 0: every cell ran, the crash is a finding (exit $rc)"
ok "$(grep -q 'pristine-debug:procfs:proc-exit` .*\*\*crash\*\*.*general protection fault' "$tmp/res/hunt.md" &&
	grep -q 'pristine-debug:tmpfs:prune` .*(missing: get_link:shmem_get_link) (grace periods: 0 x400, 1 x400, 3 x400) .* none |$' "$tmp/res/hunt.md"; echo $?)" \
	"the page shows the crash, a missing window and the grace periods per cell"
ok "$(grep -q 'kasan_multi_shot ignore_loglevel' "$tmp/argv"; echo $?)" "hunt boots with kasan_multi_shot and ignore_loglevel"
# a cell that did not reach: exit 2 (inconclusive)
sed -i 's/window_permission: 4000/window_permission: 0/' "$tmp/fake-run-guest"
rc=0
FAKE_ARGV=$tmp/argv DCRACE_RUN_GUEST=$tmp/fake-run-guest "$HS/hunt" --cell pristine-debug:tmpfs:prune --duration 8 \
	--results "$tmp/res2" >"$tmp/out" 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq $EX_INCONCLUSIVE ]] && grep -q 'not reached.*no permission window entered' "$tmp/res2/hunt.md"; echo $?)" \
	"a cell not reaching its windows: exit $EX_INCONCLUSIVE (got $rc), the page says not reached and why"
ok "$(jq -e '.status == "not reached"' "$tmp/res2/pristine-debug_tmpfs_prune.json" >/dev/null; echo $?)" "its result says so too"

# 6. truth tables: dcrace-hunt on the host, proc-exit per state
gcc -O2 -static -pthread -Wall -Wextra -Werror -o "$tmp/dcrace-hunt" "$ROOT"/guest/hunt/*.c 2>"$tmp/cc" || diag "$(cat "$tmp/cc")"
rc=0
(cd "$tmp" && ./dcrace-hunt --scenario proc-exit --dir "$tmp/h" --duration 2 --grace 0 >"$tmp/pe.json" 2>"$tmp/pe.err") || rc=$?
diag "$(cat "$tmp/pe.json" "$tmp/pe.err")"
n=$(jq -c '[.states, .false_total, (.outcomes.status | keys), .iterations > 10, .grace["0"] > 10]' "$tmp/pe.json" 2>/dev/null || echo none)
ok "$([[ $rc -eq 0 && $n == '[4,0,["0","ENOENT","ESRCH"],true,true]' ]]; echo $?)" \
	"proc-exit on this host's kernel: 4 states, every outcome allowed by a state the call overlapped: status 0 alive, ESRCH/ENOENT reaped or left ($n)"
# start points: a dirfd the controller closes (EBADF once closed), a
# chroot root, a thread's task directory; every outcome allowed
res=""
for st in dirfd root task; do
	rc=0
	(cd "$tmp" && ./dcrace-hunt --scenario proc-exit --start $st --dir "$tmp/h" --duration 1 --grace 0 >"$tmp/st-$st.json" 2>"$tmp/st.err") || rc=$?
	res+="$st:$rc:$(jq -c '[.start, .false_total, .iterations > 5, (.outcomes.status | has("0"))]' "$tmp/st-$st.json" 2>/dev/null || echo none) "
done
diag "$res"
ok "$([[ $res == 'dirfd:0:["dirfd",0,true,true] root:0:["root",0,true,true] task:0:["task",0,true,true] ' ]] &&
	jq -e '.outcomes.status.EBADF > 0' "$tmp/st-dirfd.json" >/dev/null; echo $?)" \
	"proc-exit from a dirfd another thread closes, a chroot root and a dying thread's task dir: cycles made, status read alive, no outcome outside the tables"
# an rmdir'd cwd: lazy-umount's tree in --dir/w, emptied and removed
# under the walks, then left (a tmpfs mounted per cycle: root only)
# lazy_host START NAME: lazy-umount from START on a tmpfs in $tmp/NAME,
# its result in $tmp/NAME.json
lazy_host() {
	mkdir -p "$tmp/$2"
	(cd "$tmp" && ./dcrace-hunt --scenario lazy-umount --start "$1" --dir "$tmp/$2" \
		--mount tmpfs:tmpfs:size=8m --duration 2 --grace 0 >"$tmp/$2.json" 2>"$tmp/$2.err")
}
if [[ $(id -u) -eq 0 ]]; then
	rc=0
	lazy_host rmdir rm || rc=$?
	n=$(jq -c '[.start, .iterations > 20, .false_total, .wrong_total, .identity_checks > 100, .ctl_errors, (.outcomes["d/f"] | keys), (.outcomes.lll | keys)]' "$tmp/rm.json" 2>/dev/null || echo none)
	ok "$([[ $rc -eq 0 && $n == '["rmdir",true,0,0,true,0,["0","ENOENT"],["0","ENOENT"]]' ]] &&
		! mountpoint -q "$tmp/rm" && [[ ! -e $tmp/rm/w ]]; echo $?)" \
		"--start rmdir: the cwd emptied and removed under the walks, then left: files and symlinks found, then ENOENT, every success the object made, nothing left mounted ($rc; $n)"
else
	skip "--start rmdir mounts a tmpfs per cycle: needs root"
fi
# --start dirfd: the walkers' fd number never changes hands (leaving
# dup2()s an empty removed directory over it): a walk from it meets the
# tree, the empty directory (ENOENT) or EBADF, never a file the
# controller opened under a freed number (ENOTDIR)
if [[ $(id -u) -eq 0 ]]; then
	rc=0
	lazy_host dirfd df || rc=$?
	n=$(jq -c '[.start, .start_fd >= 512, .start_fd_entries == .iterations, .iterations > 20, .false_total, .wrong_total, .ctl_errors, ([.outcomes[] | keys] | add | unique | map(select(. != "ENOENT")))]' "$tmp/df.json" 2>/dev/null || echo none)
	ok "$([[ $rc -eq 0 && $n == '["dirfd",true,true,true,0,0,0,["0","EBADF"]]' ]] &&
		! mountpoint -q "$tmp/df" && ! ls -d /tmp/dcr-empty-* >/dev/null 2>&1; echo $?)" \
		"--start dirfd: one fd number above the controller's for every cycle, walks found the tree or EBADF (ENOENT from the empty directory), never ENOTDIR, nothing left behind ($rc; $n)"
else
	skip "--start dirfd with lazy-umount mounts a tmpfs per cycle: needs root"
fi
# symlink: links of every body kind replaced by rename (never absent:
# ENOENT is false while present), unlinked and made again (absent:
# ENOENT only); every success must be t0 or d/e/t1
rc=0
mkdir -p "$tmp/sl"
(cd "$tmp" && ./dcrace-hunt --scenario symlink --dir "$tmp/sl" --duration 2 --evict 0 >"$tmp/sl.json" 2>"$tmp/sl.err") || rc=$?
n=$(jq -c '[.states, .iterations > 20, .false_total, .wrong_total, .identity_checks > 100, .ctl_errors, ([.outcomes[] | keys] | add | unique)]' "$tmp/sl.json" 2>/dev/null || echo none)
ok "$([[ $rc -eq 0 && $n == '[2,true,0,0,true,0,["0","ENOENT"]]' ]] && [[ $(readlink "$tmp/sl/s4") == s1 && $(readlink "$tmp/sl/s3" | wc -c) -eq 1003 ]]; echo $?)" \
	"symlink on the host: 2 states, cycles made, links of 2-6, 202 and 1002 bytes and a link to a link followed, every success t0 or d/e/t1 ($rc; $n)"
rc=0
"$tmp/dcrace-hunt" --scenario replace --start root >/dev/null 2>"$tmp/st.err" || rc=$?
ok "$([[ $rc -eq 2 ]] && grep -q 'not for scenario replace' "$tmp/st.err"; echo $?)" "--start root for replace: usage error ($rc)"
rc=0
(cd "$tmp" && ./dcrace-hunt --scenario proc-exit --dir "$tmp/h" --duration 1 --grace 1 >"$tmp/pe2.json" 2>/dev/null) || rc=$?
n=$(jq -r '[.ctl_errors, .ctl_error] | @tsv' "$tmp/pe2.json" 2>/dev/null || echo none)
ok "$([[ $n == [1-9]*$'\t'"synchronize_rcu 1: "* ]]; echo $?)" \
	"--grace 1 without dcrace.ko's synchronize_rcu: the controller's error is in the result (exit $rc; $n)"
# 7. identity: every successful call checked against what the controller
# made; an object made behind its back (locked/y renamed over by this
# test, as a kernel returning another file would) is a wrong object (the
# host's filesystem may give the planted file the number of a file the
# controller made and removed: it is then named as that one)
rc=0
(cd "$tmp" && ./dcrace-hunt --scenario replace --dir "$tmp/r" --duration 2 >"$tmp/id0.json" 2>/dev/null) || rc=$?
n=$(jq -c '[.identity_checks > 1000, .wrong_total, .false_total]' "$tmp/id0.json" 2>/dev/null || echo none)
ok "$([[ $rc -eq 0 && $n == '[true,0,0]' ]]; echo $?)" "replace on the host: every success checked, no wrong object ($n)"
rc=0
(cd "$tmp" && ./dcrace-hunt --scenario replace --dir "$tmp/r" --duration 3 >"$tmp/id1.json" 2>/dev/null) & hp=$!
for _ in $(seq 1 200); do
	{ [[ -f $tmp/r/locked/y ]] && echo other >"$tmp/r/locked/y2" && mv -f "$tmp/r/locked/y2" "$tmp/r/locked/y"; } 2>/dev/null || true
	sleep 0.01
done
wait "$hp" || rc=$?
n=$(jq -c '[.wrong_total > 0, ([.wrong_objects[] | select(.path == "locked/y" and (.got | startswith("file ")))] | length > 0), ([.wrong_objects[].path] | unique)]' "$tmp/id1.json" 2>/dev/null || echo none)
ok "$([[ $rc -eq 1 && $n == '[true,true,["locked/y"]]' ]]; echo $?)" \
	"a file put in place of locked/y behind the controller: wrong objects on locked/y only, exit 1 ($rc; $n)"
res=""
for bad in "--grace x" "--grace 1,2,3,4,5,6,7,8,9" "--grace 101" "--casefold 2"; do
	rc=0
	# shellcheck disable=SC2086
	"$tmp/dcrace-hunt" --scenario prune $bad >/dev/null 2>&1 || rc=$?
	res+="$rc "
done
ok "$([[ $res == '2 2 2 2 ' ]]; echo $?)" "bad --grace and --casefold values: usage errors ($res)"
done_testing
