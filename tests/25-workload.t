#!/bin/bash
# The workload on the host (no guest): a host build of guest/workload/
# runs against a temporary tree, with an LD_PRELOAD shim
# (tests/workload/fault.c) that makes chosen calls fail with ENOENT.
# Covers how failures are counted: verified false ENOENTs, paths really
# gone ("gone"), one count per failure in the copier's retries, copies;
# mode mutate's truth by construction (section 7).
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 53

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wl=$tmp/dcrace-workload
so=$tmp/fault.so

rc=0
gcc -O2 -pthread -Wall -Wextra -Werror -o "$wl" "$ROOT"/guest/workload/*.c 2>"$tmp/cc.log" || rc=$?
diag "$(cat "$tmp/cc.log")"
ok "$rc" "the workload builds on the host with -Wall -Wextra -Werror"
rc=0
gcc -shared -fPIC -Wall -Wextra -Werror -o "$so" "$ROOT/tests/workload/fault.c" -ldl 2>"$tmp/cc.log" || rc=$?
diag "$(cat "$tmp/cc.log")"
ok "$rc" "the fault shim builds"

# The workload's files call only downward: the mode (mutate.c) calls the
# tree's helpers (tree.c), never the other way; no cycle of references
# between the files (A -> B when A.o uses a symbol B.o defines, nm).
mkdir "$tmp/obj"
for f in "$ROOT"/guest/workload/*.c; do
	gcc -O2 -pthread -c -o "$tmp/obj/$(basename "$f" .c).o" "$f"
done
for o in "$tmp"/obj/*.o; do
	nm "$o" | awk -v f="$(basename "$o" .o)" '$1 == "U" { print "U", f, $2; next }
		NF == 3 && $2 ~ /^[A-Z]$/ { print "D", f, $3 }'
done >"$tmp/syms"
n=$(python3 - "$tmp/syms" <<'PY'
import sys
defs, g = {}, {}
lines = [l.split() for l in open(sys.argv[1])]
for k, f, s in lines:
    g.setdefault(f, set())
    if k == "D":
        defs[s] = f
for k, f, s in lines:
    if k == "U" and s in defs and defs[s] != f:
        g[f].add(defs[s])
def reach(a, b, seen):
    return a == b or any(reach(c, b, seen) for c in g[a] - seen if not seen.add(c))
cyc = sorted("%s<->%s" % (a, b) for a in g for b in g[a] if a < b and reach(b, a, set()))
print("tree->" + ",".join(sorted(g.get("tree", ()))), "cycles:" + (",".join(cyc) or "none"))
PY
)
ok "$([[ $n == *"cycles:none" && $n != *tree-\>*mutate* ]]; echo $?)" "the workload's files: tree.c calls no mode's code, no cycle between files ($n)"

# jget FILE EXPR: a Python expression over the result JSON `r` (or the
# error's last line).
jget() {
	python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().split(" ", 1)[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>&1 | tail -n 1 || true
}

# run OUT ARGS...: the workload on $tmp/tree, its result line in OUT;
# with the shim's variables from the array fault (then emptied).
fault=()
run() {
	local out=$1
	shift
	env "${fault[@]}" "$wl" --dir "$tmp/tree" --quiet --pruner none --threads 1 "$@" >"$out" 2>"$out.err" || true
	fault=()
	diag "$(cat "$out.err")"
}

small=(--dirs 1 --files 4)
"$wl" --dir "$tmp/tree" --setup-only --quiet "${small[@]}" >/dev/null

# 1. A file really removed (after --no-setup's check): every ENOENT on it
# is "gone", none is false.
(sleep 0.2; rm "$tmp/tree/d00/f001") &
run "$tmp/gone" --no-setup "${small[@]}" --duration 1.5
wait
fe=$(jget "$tmp/gone" 'r["false_enoent"]')
gone=$(jget "$tmp/gone" 'r.get("gone")')
ok "$([[ $fe == 0 ]]; echo $?)" "removed file: no false ENOENT (got $fe)"
ok "$([[ $gone =~ ^[1-9][0-9]*$ ]]; echo $?)" "removed file: counted as gone (got $gone)"

# 2. ENOENT on a file that is there (the shim's stat): false, verified.
# Bounded by count, not time (--max-syscalls; --duration only a safety
# net): a faster machine makes no more failures than a slow one.
"$wl" --dir "$tmp/tree" --setup-only --quiet "${small[@]}" >/dev/null
fault=(DCRACE_FAULT_OP=stat DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
ns0=$(python3 -c 'import time; print(time.monotonic_ns())')
run "$tmp/false" --no-setup "${small[@]}" --duration 60 --max-syscalls 20000 --threads 2
ns1=$(python3 -c 'import time; print(time.monotonic_ns())')
fe=$(jget "$tmp/false" 'r["false_enoent"]')
gone=$(jget "$tmp/false" 'r.get("gone")')
paths=$(jget "$tmp/false" 'sorted(set(p["path"] for p in r["paths"]))')
ok "$([[ $fe =~ ^[1-9][0-9]*$ && $gone == 0 ]]; echo $?)" "ENOENT on an existing file: false ($fe), not gone ($gone)"
ok "$([[ $paths == "['$tmp/tree/d00/f002']" ]]; echo $?)" "the listed paths are that file ($paths)"
# Every false ENOENT listed by default, each with its thread, op and time.
n=$(jget "$tmp/false" 'len(r["paths"]) == r["false_enoent"] and r["paths_dropped"] == 0')
ok "$([[ $n == True ]]; echo $?)" "by default every false ENOENT is listed in paths"
n=$(jget "$tmp/false" 'sorted(set((p["op"], type(p["tid"]).__name__) for p in r["paths"])), len(set(p["tid"] for p in r["paths"]))')
ok "$([[ $n == "([('stat', 'int')], 2)" ]]; echo $?)" "each entry has op stat and the tid of one of the 2 walkers ($n)"
# "tids": the walkers' thread ids (the harness matches only their events).
n=$(jget "$tmp/false" 'len(r["tids"]) == len(set(r["tids"])) == 2 and all(t > 0 for t in r["tids"]) and set(p["tid"] for p in r["paths"]) == set(r["tids"])')
ok "$([[ $n == True ]]; echo $?)" "tids: the 2 walkers' distinct thread ids, the tids of the listed failures ($(jget "$tmp/false" 'r["tids"]'))"
n=$(jget "$tmp/false" "all($ns0 < p['start_ns'] <= p['end_ns'] < $ns1 for p in r['paths']) and [p['start_ns'] for p in r['paths']] == sorted(p['start_ns'] for p in r['paths']) and abs(r['paths'][0]['end_ns'] - $ns0 - 1e9 * r['paths'][0]['t']) < 2e8")
ok "$([[ $n == True ]]; echo $?)" "start_ns <= end_ns: CLOCK_MONOTONIC around the failed call (within the run, in order, matches t)"
n=$(jget "$tmp/false" '[sorted(set(p.get("errno", "none") for p in r["paths"])), r.get("false_errors"), r["false_enoent"], r.get("truth")]')
ok "$([[ $n == "[['ENOENT'], {'ENOENT': $fe}, $fe, 'lstat']" ]]; echo $?)" "each entry names its errno (ENOENT); false_errors counts them per errno; truth lstat ($n)"
n=$(jget "$tmp/false" "all(a['end_ns'] <= b['start_ns'] for t in r['tids'] for a, b in zip([p for p in r['paths'] if p['tid'] == t], [p for p in r['paths'] if p['tid'] == t][1:]))")
ok "$([[ $n == True ]]; echo $?)" "a thread's failed calls do not overlap in time"
# --max-syscalls: the run ends after that many syscalls (one walker: at
# most 3 verifying lstat()s more), long before --duration, and the same
# seed gives the same failures on any machine.
n=$(jget "$tmp/false" 'r["syscalls"] >= 20000 and r["syscalls"] < 20010 and r["elapsed_s"] < 30')
ok "$([[ $n == True ]]; echo $?)" "--max-syscalls 20000 with 2 walkers: 20000 syscalls and a few, the run ended early ($(jget "$tmp/false" 'r["syscalls"], r["elapsed_s"]'))"
for i in 1 2; do
	fault=(DCRACE_FAULT_OP=stat DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
	run "$tmp/count$i" --no-setup "${small[@]}" --duration 60 --max-syscalls 3000
done
n=$(jget "$tmp/count1" 'r["syscalls"], r["false_enoent"], len(r["paths"])')
ok "$([[ $n == "$(jget "$tmp/count2" 'r["syscalls"], r["false_enoent"], len(r["paths"])')" && $n =~ ^\(300[0-3],\ [1-9] ]]; echo $?)" \
	"one walker, --max-syscalls 3000: the same syscalls and false ENOENTs twice ($n)"
# The cap of "paths" (--max-paths), by count: more false ENOENTs than the
# cap list the first ones and count the rest in paths_dropped.
fault=(DCRACE_FAULT_OP=stat DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
run "$tmp/cap" --no-setup "${small[@]}" --duration 60 --max-syscalls 3000 --max-paths 10
n=$(jget "$tmp/cap" 'r["false_enoent"] > 10 and len(r["paths"]) == 10 and r["paths_dropped"] == r["false_enoent"] - 10')
ok "$([[ $n == True ]]; echo $?)" "--max-paths 10 with $(jget "$tmp/cap" 'r["false_enoent"]') false ENOENTs: 10 listed, the rest in paths_dropped"
# The verification's own lstat() that failed is a false ENOENT with its
# own start and end, after the failed stat() it checks.
fault=("DCRACE_FAULT_OP=stat,lstat" DCRACE_FAULT_PATH=d00/f002 DCRACE_FAULT_TIMES=2 LD_PRELOAD="$so")
run "$tmp/verify" "${small[@]}" --duration 60 --max-syscalls 100
n=$(jget "$tmp/verify" '[p["op"] for p in r["paths"]] == ["stat", "lstat"] and r["paths"][0]["end_ns"] <= r["paths"][1]["start_ns"] <= r["paths"][1]["end_ns"]')
ok "$([[ $n == True ]]; echo $?)" "a failed verifying lstat(): its own entry, timed after the stat() it checks ($(jget "$tmp/verify" '[(p["op"], p.get("start_ns"), p.get("end_ns")) for p in r["paths"]]'))"

# 3. The file is there right after the failures, gone at the end of the
# run: the check at the end moves them all from false to gone.
(sleep 0.2; rm -f "$tmp/tree/d00/f002") &
fault=(DCRACE_FAULT_OP=stat DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
run "$tmp/late" --no-setup "${small[@]}" --duration 1.5
wait
fe=$(jget "$tmp/late" 'r["false_enoent"]')
gone=$(jget "$tmp/late" 'r.get("gone")')
hist=$(jget "$tmp/late" 'sum(r["per_second"])')
np=$(jget "$tmp/late" 'len(r["paths"])')
ok "$([[ $fe == 0 && $gone =~ ^[1-9][0-9]*$ ]]; echo $?)" "removed during the run: false $fe, gone $gone"
ok "$([[ $hist == 0 && $np == 0 ]]; echo $?)" "removed during the run: per_second sums to $hist, $np paths listed"

# 4. cp mode, one file of the copy that unlink() always reports missing
# (it is there): each removal tries it 3 times and counts each try (each
# is a syscall that returned a false ENOENT, an event dcrace.ko sees); the
# copy cannot be removed, so the next top-level mkdir fails with EEXIST,
# which is no copy.
rm -rf "$tmp/tree"
fault=(DCRACE_FAULT_OP=unlink DCRACE_FAULT_PATH=cp0/d00/f000 DCRACE_FAULT_COUNT="$tmp/count" LD_PRELOAD="$so")
run "$tmp/cp" --mode cp "${small[@]}" --stagger-ms 0 --duration 60 --max-syscalls 5000
fe=$(jget "$tmp/cp" 'r["false_enoent"]')
copies=$(jget "$tmp/cp" 'r["copies"]')
errs=$(jget "$tmp/cp" 'r["other_errors"]')
made=$(cat "$tmp/count" 2>/dev/null || echo 0)
diag "unlink failures made: $made; false_enoent $fe; other_errors $errs; copies $copies"
ok "$([[ $fe =~ ^[1-9][0-9]*$ && $made -eq $fe && $((made % 3)) -eq 0 ]]; echo $?)" "a failure retried 3 times counts 3 times ($made failures made, $fe counted)"
ok "$([[ $copies == 1 ]]; echo $?)" "a top-level mkdir that failed (EEXIST) is no copy (copies $copies, want 1)"

# 4b. The leftover copy from 4 is there; the copier's first lookup of it
# (which may find nothing: ENOENT is fine there) fails once: found right
# after, it is a false ENOENT, and the leftover is still removed.
rm -f "$tmp/count"
fault=(DCRACE_FAULT_OP=lstat DCRACE_FAULT_PATH=/cp0 DCRACE_FAULT_TIMES=1 DCRACE_FAULT_COUNT="$tmp/count" LD_PRELOAD="$so")
run "$tmp/left" --mode cp --no-setup "${small[@]}" --stagger-ms 0 --duration 60 --max-syscalls 2000
n=$(jget "$tmp/left" '(r["false_enoent"], [(p["op"], p["path"].endswith("/cp0")) for p in r["paths"]], r["copies"] > 0, r.get("other_errors", 0))')
made=$(cat "$tmp/count" 2>/dev/null || echo 0)
ok "$([[ $made == 1 && $n == "(1, [('lstat', True)], True, 0)" ]]; echo $?)" "a leftover's lookup failed once: 1 false ENOENT, the leftover removed, copies made ($made made; $n)"

# 5. --mix: the walkers' calls in proportion; the default is the mode's.
"$wl" --dir "$tmp/tree" --setup-only --quiet "${small[@]}" >/dev/null
fault=(DCRACE_FAULT_OP=open DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
run "$tmp/mix" --no-setup "${small[@]}" --duration 60 --max-syscalls 20000 --mix stat=50,open=50
n=$(jget "$tmp/mix" 'r["mix"], sorted(set(p["op"] for p in r["paths"])), 0.07 < r["false_enoent"] / r["syscalls"] < 0.18')
diag "mix run: $(jget "$tmp/mix" 'r["syscalls"], r["false_enoent"]')"
ok "$([[ $n == "('stat=50,open=50', ['open'], True)" ]]; echo $?)" "--mix stat=50,open=50: about 1 call in 8 is an open of the faulted file ($n)"
fault=(DCRACE_FAULT_OP=open DCRACE_FAULT_PATH=d00/f002 LD_PRELOAD="$so")
run "$tmp/nomix" --no-setup "${small[@]}" --duration 60 --max-syscalls 2000
n=$(jget "$tmp/nomix" 'r["mix"], r["false_enoent"], r["syscalls"] > 0')
ok "$([[ $n == "('stat=100', 0, True)" ]]; echo $?)" "default: stat only, no open ($n)"
(sleep 0.2; rm "$tmp/tree/d00/f001") &
run "$tmp/openat" --no-setup "${small[@]}" --duration 1 --mix openat=1
wait
n=$(jget "$tmp/openat" 'r["mix"], r["false_enoent"], r["other_errors"], r["gone"] > 0')
ok "$([[ $n == "('openat=1', 0, 0, True)" ]]; echo $?)" "--mix openat=1: relative opens, the removed file gone ($n)"
rc=0
"$wl" --mix stat=1,rename=1 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q "invalid --mix" "$tmp/err"; echo $?)" "--mix with an unknown call: exit 2 (got $rc)"
rc=0
"$wl" --mode cp --mix stat=1 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q "mix is for" "$tmp/err"; echo $?)" "--mix in mode cp: exit 2 (got $rc)"
n=$("$wl" --help | grep -c -- '--mix OP=W' || true)
ok "$([[ $n == 1 ]]; echo $?)" "--help documents --mix"

# 5b. --pin-dirs: the first N directories held open (O_PATH) for the run,
# so the pruner cannot take them; the default pins half in stat/open
# mode (8 dirs x 8 files), none in cp mode.
"$wl" --dir "$tmp/pin" --pruner none --quiet --duration 3 --dirs 3 --files 1 --pin-dirs 2 >"$tmp/pin.out" &
pid=$!
# Polled: on a loaded machine the tree and the pins take a while.
held=
for _ in $(seq 50); do
	sleep 0.1
	held=$(for f in "/proc/$pid/fd"/*; do readlink "$f" || true; done 2>/dev/null | sed -n "s|^$tmp/pin/||p" | sort | tr '\n' ' ')
	[[ $held != "d00 d01 " ]] || break
done
wait $pid
ok "$([[ $held == "d00 d01 " ]]; echo $?)" "--pin-dirs 2: d00 and d01 held open, d02 not (held: $held)"
n=$(jget "$tmp/pin.out" 'r["pinned_dirs"], r["false_enoent"]')
n2=$("$wl" --dir "$tmp/pin2" --pruner none --quiet --duration 0.1 | python3 -c 'import json, sys; r = json.loads(sys.stdin.read().split(" ", 1)[1]); print(r["dirs"], r["files"], r["pinned_dirs"])')
ok "$([[ $n == "(2, 0)" && $n2 == "8 8 4" ]]; echo $?)" "the result says what was pinned ($n); default tree 8 x 8, 4 pinned ($n2)"
rc=0
"$wl" --dir "$tmp/pin3" --dirs 2 --pin-dirs 3 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q 'pin-dirs 3 is more than --dirs 2' "$tmp/err"; echo $?)" "--pin-dirs above --dirs: exit 2 (got $rc)"

# 7. Mode mutate: mutators turn mNN file -> gone -> dir (with y) -> gone
# -> file (renames now and then); walkers stat/open mNN/y and mNN. Truth
# by construction: mNN/y allows 0, ENOENT, ENOTDIR; mNN 0, ENOENT;
# locked/y (with --uid) EACCES for a non-root uid, 0 for root. Bounded by
# count; the host kernel is consistent, so no false error.
chmod 755 "$tmp"
mut=(--dir "$tmp/mut" --mode mutate --mutators 2 --quiet --threads 2 --duration 60 --max-syscalls 200000)
"$wl" "${mut[@]}" --mix stat=1,lstat=1,open=1,openat=1 >"$tmp/mut.out" 2>"$tmp/mut.err" || true
diag "$(cat "$tmp/mut.err")"
n=$(jget "$tmp/mut.out" '[r["mode"], r["pruner"], r["truth"], r["false_errors"], r["false_enoent"], r["other_errors"], r["paths"], r["mutators"], r["mutations"] > 0, r["uid"]]')
ok "$([[ $n == "['mutate', 'none', 'construction', {}, 0, 0, [], 2, True, None]" ]]; echo $?)" \
	"mutate as root: no pruner, truth by construction, 0 false errors, 0 other errors, 2 mutators mutating ($n)"
n=$(jget "$tmp/mut.out" '{k: sorted(v) for k, v in r["outcomes_by_path"].items()}, r["allowed"]')
ok "$([[ $n == "({'m/y': ['0', 'ENOENT', 'ENOTDIR'], 'm': ['0', 'ENOENT'], 'locked/y': []}, {'m/y': ['0', 'ENOENT', 'ENOTDIR'], 'm': ['0', 'ENOENT']})" ]]; echo $?)" \
	"mutate as root: mNN/y succeeded, ENOENT and ENOTDIR; mNN succeeded and ENOENT; each as allowed ($(jget "$tmp/mut.out" 'r["outcomes_by_path"]'))"
n=$(jget "$tmp/mut.out" 'all(r["outcomes"][op] for op in ("stat", "lstat", "open", "openat")) and sum(sum(v.values()) for v in r["outcomes"].values()) == r["syscalls"] >= 200000')
ok "$([[ $n == True ]]; echo $?)" "mutate: outcomes per op for each of the mix's 4 calls, summing to the syscalls ($(jget "$tmp/mut.out" 'r["outcomes"]'))"
n=$({ stat -c '%F %a' "$tmp/mut/m00" "$tmp/mut/m01" "$tmp/mut/locked" "$tmp/mut/locked/y" && ls "$tmp/mut"; } 2>&1 | tr '\n' ' ' || true)
ok "$([[ $n == "regular empty file 644 regular empty file 644 directory 700 regular empty file 644 locked m00 m01 " ]]; echo $?)" \
	"mutate: the mutators end their cycle, the tree is left as set up ($n)"
# --uid: the walkers alone become that uid (raw setresuid in each): locked/y
# gives EACCES, allowed; the mutators stay root (they create the files).
"$wl" "${mut[@]}" --no-setup --uid 65534 >"$tmp/uid.out" 2>"$tmp/uid.err" || true
diag "$(cat "$tmp/uid.err")"
n=$(jget "$tmp/uid.out" '[r["uid"], r["false_errors"], r["other_errors"], r["outcomes_by_path"]["locked/y"].keys() == {"EACCES"}, r["outcomes_by_path"]["m/y"].get("0", 0) > 0, r["allowed"]["locked/y"]]')
ok "$([[ $n == "[65534, {}, 0, True, True, ['EACCES']]" ]]; echo $?)" \
	"--uid 65534: locked/y gives EACCES only, counted as allowed (0 false errors); mNN/y still read ($(jget "$tmp/uid.out" 'r["outcomes_by_path"]'))"
n=$(jget "$tmp/uid.out" 'r["mutations"] > 0')$(stat -c ' %u' "$tmp/mut/m00" 2>&1 || true)
ok "$([[ $n == "True 0" ]]; echo $?)" "--uid 65534: the mutators stay root: they mutate, without errors, and m00 is root's ($n)"
# A false error: an errno no state allows (the shim's EACCES on stat of
# m00/y, as root), listed with its errno, counted per errno, and stopping
# nothing else (no verifying lookup in this mode).
fault=(DCRACE_FAULT_OP=stat DCRACE_FAULT_PATH=m00/y DCRACE_FAULT_ERRNO=13 DCRACE_FAULT_TIMES=5 LD_PRELOAD="$so")
env "${fault[@]}" "$wl" --dir "$tmp/mut" --mode mutate --quiet --threads 1 --duration 60 --max-syscalls 20000 >"$tmp/fe.out" 2>"$tmp/fe.err" || true
n=$(jget "$tmp/fe.out" '[r["false_errors"], r["false_enoent"], [(p["op"], p["errno"], p["path"].endswith("/m00/y")) for p in r["paths"]][:2], len(r["paths"]), r["paths_dropped"], r["first_false_error_s"] is not None, r["first_false_enoent_s"]]')
ok "$([[ $n == "[{'EACCES': 5}, 0, [('stat', 'EACCES', True), ('stat', 'EACCES', True)], 5, 0, True, None]" ]]; echo $?)" \
	"mutate: an EACCES on m00/y as root is a false error: listed with errno EACCES, counted in false_errors, not as ENOENT ($n)"
# --rename-locked: a thread renames locked to locked.r and back; locked/y
# may then give ENOENT too (renamed away), allowed, with --uid or without
# (as root: 0 or ENOENT). Every outcome counted per path; the renamer ends
# with locked in place; a setup removes a leftover locked.r.
# The counts of renames and mutations depend on the scheduler (84 renames
# in 50000 syscalls on a loaded CI machine, thousands here): > 0 only.
mkdir -p "$tmp/mut/locked.r" && : >"$tmp/mut/locked.r/y"
"$wl" "${mut[@]}" --max-syscalls 50000 --uid 65534 --rename-locked >"$tmp/ren.out" 2>"$tmp/ren.err" || true
diag "$(cat "$tmp/ren.err")"
n=$(jget "$tmp/ren.out" '[r["rename_locked"], r["locked_renames"] > 0, r["false_errors"], r["other_errors"], r["allowed"]["locked/y"], sorted(r["outcomes_by_path"]["locked/y"])]')
ok "$([[ $n == "[True, True, {}, 0, ['ENOENT', 'EACCES'], ['EACCES', 'ENOENT']]" ]]; echo $?)" \
	"--rename-locked --uid 65534: locked renamed to and fro, locked/y gives EACCES and ENOENT, both allowed, 0 false errors ($n; $(jget "$tmp/ren.out" 'r["outcomes_by_path"]["locked/y"], r["locked_renames"]'))"
n=$({ stat -c '%F %a %u' "$tmp/mut/locked" && ls "$tmp/mut"; } 2>&1 | tr '\n' ' ' || true)
ok "$([[ $n == "directory 700 0 locked m00 m01 " ]]; echo $?)" "--rename-locked: the renamer ends with locked in place, the leftover locked.r removed by the setup ($n)"
"$wl" "${mut[@]}" --no-setup --max-syscalls 50000 --rename-locked >"$tmp/ren0.out" 2>"$tmp/ren0.err" || true
n=$(jget "$tmp/ren0.out" '[r["uid"], r["false_errors"], r["allowed"]["locked/y"], sorted(r["outcomes_by_path"]["locked/y"])]')
ok "$([[ $n == "[None, {}, ['0', 'ENOENT'], ['0', 'ENOENT']]" ]]; echo $?)" "--rename-locked as root: locked/y walked, 0 and ENOENT, allowed ($n)"
rc=0
"$wl" --mode stat --rename-locked >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q -- '--rename-locked is for --mode mutate' "$tmp/err"; echo $?)" "--rename-locked outside mode mutate: usage error (got $rc: $(cat "$tmp/err"))"
# A false success: a call that succeeds where no state allows it (here
# the 0700 directory made searchable behind the workload's back, so a
# --uid walker reads locked/y): listed with errno "0", counted in
# false_errors["0"] (the harness's false_success).
chmod 755 "$tmp/mut/locked"
"$wl" "${mut[@]}" --no-setup --uid 65534 --max-syscalls 2000 --max-paths 5 >"$tmp/fs.out" 2>"$tmp/fs.err" || true
chmod 700 "$tmp/mut/locked"
n=$(jget "$tmp/fs.out" '[list(r["false_errors"]), r["false_errors"]["0"] > 0, sorted(set((p["errno"], p["path"].endswith("/locked/y")) for p in r["paths"]))]')
ok "$([[ $n == "[['0'], True, [('0', True)]]" ]]; echo $?)" "a --uid walker that reads locked/y: a false success, listed with errno 0 ($n)"
rc=0
"$wl" --mode stat --uid 65534 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q -- '--mutators and --uid are for --mode mutate' "$tmp/err"; echo $?)" "--uid outside mode mutate: usage error (got $rc: $(cat "$tmp/err"))"
mkdir -m 700 "$tmp/priv"
rc=0
"$wl" --dir "$tmp/priv/m" --mode mutate --quiet --duration 1 --uid 65534 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 1 ]] && grep -q -- '--uid 65534 cannot search' "$tmp/err"; echo $?)" "--uid N that cannot search --dir: the workload's own error, exit 1 (got $rc: $(cat "$tmp/err"))"
n=$("$wl" --help | grep -c -- '--mode stat|open|cp|mutate\|--mutators N\|--uid N\|--rename-locked' || true)
ok "$([[ $n == 4 ]]; echo $?)" "--help documents --mode mutate, --mutators, --uid, --rename-locked ($n)"
# docs/design.md says the defaults --help says.
d=$(sed -n 's/.*.--mutators K. (default \([0-9]*\)).*/\1/p' "$ROOT/docs/design.md")
h=$("$wl" --help | sed -n '/--mutators N/,/default/s/.*(default \([0-9]*\)).*/\1/p')
ok "$([[ -n $d && $d == "$h" ]]; echo $?)" "docs/design.md's --mutators default is the workload's (design.md ${d:-none}, --help ${h:-none})"

# 5b. Identity: every success is checked against what the setup made
# (dNN/fNNN: its inode; mutate: mNN/y a file, locked/y its inode); an
# object put in place behind the workload is a wrong object.
"$wl" --dir "$tmp/id" --setup-only --quiet --dirs 1 --files 1 >/dev/null
env "$wl" --dir "$tmp/id" --quiet --pruner none --threads 2 --no-setup --dirs 1 --files 1 --duration 1 \
	--mix stat=1,lstat=1,open=1,openat=1 >"$tmp/id0" 2>/dev/null || true
n=$(jget "$tmp/id0" '[r["identity_checks"] == r["syscalls"] > 1000, r["wrong_objects"], r["first_wrong_object"]]')
ok "$([[ $n == "[True, 0, None]" ]]; echo $?)" "identity: every stat, lstat, open and openat success checked against the file the setup made, none wrong ($n)"
env "$wl" --dir "$tmp/id" --quiet --pruner none --threads 2 --no-setup --dirs 1 --files 1 --duration 2 \
	--mix stat=1,open=1 >"$tmp/id1" 2>/dev/null & wp=$!
sleep 0.5
echo other >"$tmp/id/d00/f000.new" && mv -f "$tmp/id/d00/f000.new" "$tmp/id/d00/f000"
wait "$wp" || true
n=$(jget "$tmp/id1" '[r["wrong_objects"] > 0, r["first_wrong_object"].startswith("'"$tmp"'/id/d00/f000: got file ino "), r["false_enoent"]]')
ok "$([[ $n == "[True, True, 0]" ]]; echo $?)" "identity: a file renamed over d00/f000 behind the workload: wrong objects, the first one named ($n)"
env "$wl" --dir "$tmp/idm" --quiet --pruner none --threads 2 --mode mutate --mutators 2 --rename-locked --duration 1 \
	--mix stat=1,open=1 >"$tmp/id2" 2>/dev/null || true
n=$(jget "$tmp/id2" '[r["identity_checks"] > 100, r["wrong_objects"], r["false_enoent"], r["other_errors"]]')
ok "$([[ $n == "[True, 0, 0, 0]" ]]; echo $?)" "identity in mode mutate: mNN/y, mNN and locked/y successes checked, none wrong ($n)"

# 6. Behaviour of the old single-file workload kept: usage errors exit 2.
rc=0
"$wl" --threads 0 >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc == 2 ]] && grep -q 'out of range 1..64' "$tmp/err"; echo $?)" "usage error: exit 2 (got $rc)"
rc=0
"$wl" --help >"$tmp/help" || rc=$?
ok "$([[ $rc == 0 ]] && grep -q '^usage: dcrace-workload' "$tmp/help"; echo $?)" "--help: exit 0, usage text"
if grep -qE 'symlink|readlink' "$ROOT"/guest/workload/*.c; then
	fail "no dead symlink copy in cp mode (the source tree has no links)"
else
	pass "no dead symlink copy in cp mode (the source tree has no links)"
fi
done_testing
