#!/bin/bash
# The per-event match without a guest: dcrace.ko's dcrace:dcrace_race
# trace events against the workload's "paths" (each failed call's thread,
# op, path and its start and end), on canned logs through
# `compare --from-logs`; the trace section's presence; the guest script's
# tracefs setup.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/canned.sh
source "$(dirname "$0")/canned.sh"
plan 55

tmp_dir
C=$HS/compare
mktr "$tmp/f-good" 0 '[]' 0
# call TID [START END [OP [PATH]]]: a failed call of $F, by default from
# B - 1000 to B + 1000, op stat.
call() { pe "${5:-$F}" "$1" "${2:-$((B - 1000))}" "${3:-$((B + 1000))}" "${4:-stat}"; }

# An event is the failed call's when same thread, judged between the
# call's start and end, lookup agreeing with the op, component in the path.
mktr "$tmp/t-match" 2 "[$(call 101),$(pe /mnt/dcrace/d1/f2 102 $((B + 500)) $((B + 1500)))]" 0 \
	101:f7:$B 102:f2:$((B + 800))
judge t-match "$tmp/t-match"
diag "$(cat "$tmp/t-match.out")"
ok "$([[ $(rcof t-match) -eq 0 ]] && rows t-match 2 0 0 && grep -qE '^module and user space agree +yes +yes$' "$tmp/t-match.out"; echo $?)" \
	"every event matched both ways: 2 matched, 0 user-only, 0 module-only, agree, exit 0 (got $(rcof t-match))"
ok "$([[ $(jq -r '.runs.unfixed[0].trace.matched' "$tmp/t-match.json") == 2 && $(jq -r '.kernels.unfixed.runs_traced' "$tmp/t-match.json") == 1 ]]; echo $?)" \
	"--json holds each run's per-event match"

# The issue's case: a module false alarm on d03, then 50 ms later a
# failure on /mnt/d03/f006 the module missed, same thread. The old 100 ms
# window paired them ("matched", exit 0).
mktr "$tmp/t-issue" 1 "[$(pe /mnt/d03/f006 101 $((B + 49999000)) $((B + 50000000)))]" 0 101:d03:$B
judge t-issue "$tmp/t-issue"
diag "$(cat "$tmp/t-issue.out")"
ok "$([[ $(rcof t-issue) -eq $EX_DETECTOR ]] && rows t-issue 0 1 1; echo $?)" \
	"event d03 at 0, failure on /mnt/d03/f006 at +50 ms: 1 user-only, 1 module-only, exit $EX_DETECTOR (got $(rcof t-issue))"

# Equal counts that hide a miss and a false alarm.
mktr "$tmp/t-cancel" 2 "[$(call 101),$(call 101 $((B + 899999000)) $((B + 900000000)))]" 0 \
	101:f7:$B 103:f7:$((B + 899999500))
judge t-cancel "$tmp/t-cancel"
ok "$([[ $(rcof t-cancel) -eq $EX_DETECTOR ]] && rows t-cancel 1 1 1 && grep -qE '^module and user space agree +NO' "$tmp/t-cancel.out" &&
	grep -q '^verdict: DETECTOR FAILURE: unfixed: 1 user-only (module missed), 1 module-only' "$tmp/t-cancel.out"; echo $?)" \
	"a miss and a false alarm with equal counts: 1 user-only, 1 module-only, detector failure, exit $EX_DETECTOR (got $(rcof t-cancel))"
mktr "$tmp/t-uonly" 2 "[$(call 101),$(call 101 $((B + 899999000)) $((B + 900000000)))]" 0 101:f7:$B
judge t-uonly "$tmp/t-uonly"
ok "$([[ $(rcof t-uonly) -eq $EX_DETECTOR ]] && rows t-uonly 1 1 0; echo $?)" "a user failure the module missed: user-only, exit $EX_DETECTOR (got $(rcof t-uonly))"
ok "$([[ $(jq -r '.runs.unfixed[0].trace.user_only_first[0].start_ns' "$tmp/t-uonly.json") == $((B + 899999000)) ]]; echo $?)" \
	"--json names the unmatched user failure"
mktr "$tmp/t-monly" 1 "[$(call 101)]" 0 101:f7:$B 101:f7:$((B + 2000))
judge t-monly "$tmp/t-monly"
ok "$([[ $(rcof t-monly) -eq $EX_DETECTOR ]] && rows t-monly 1 0 1; echo $?)" "an event after the call ended: module-only, exit $EX_DETECTOR (got $(rcof t-monly))"
# One failed call holds one event at most (its walk ends at the first
# -ENOENT): a second one inside it is module-only.
mktr "$tmp/t-2in1" 1 "[$(call 101)]" 0 101:d3:$((B - 500)) 101:f7:$B
judge t-2in1 "$tmp/t-2in1"
ok "$([[ $(rcof t-2in1) -eq $EX_DETECTOR ]] && rows t-2in1 1 0 1; echo $?)" \
	"two events inside one failed call: 1 matched, 1 module-only, exit $EX_DETECTOR (got $(rcof t-2in1))"

# Events of other processes (the guest's shell exec'ing /proc/self/exe,
# the pruner): not the workload's, so neither matched nor module-only,
# counted as outside. Without "tids" the walkers are known by their comm,
# with it by their tid (a dcr-walk of another pid is outside then).
mktr "$tmp/t-out" 1 "[$(call 101)]" 0 101:f7:$B 68:68:$((B + 500)):exe
judge t-out "$tmp/t-out"
ok "$([[ $(rcof t-out) -eq 0 ]] && rows t-out 1 0 0 &&
	grep -qE '^  outside the workload \(other processes\) +1 +0$' "$tmp/t-out.out" &&
	grep -q '^note: module false_enoent events in other processes of the guest.*: unfixed 1$' "$tmp/t-out.out" &&
	[[ $(jq -r '.runs.unfixed[0].trace.outside_first[0].comm' "$tmp/t-out.json") == exe ]]; echo $?)" \
	"an event of another process (comm exe, no tids): outside the workload, not module-only, exit 0 (got $(rcof t-out))"
TIDS=101,102 mktr "$tmp/t-tids" 1 "[$(call 101)]" 0 101:f7:$B 64:f7:$((B + 500)) 102:f7:$((B + 600))
judge t-tids "$tmp/t-tids"
ok "$([[ $(rcof t-tids) -eq $EX_DETECTOR ]] && rows t-tids 1 0 1 &&
	grep -qE '^  outside the workload \(other processes\) +1 +0$' "$tmp/t-tids.out"; echo $?)" \
	"with tids: a dcr-walk event of pid 64 (not a walker) is outside; walker 102's event without a failure is module-only, exit $EX_DETECTOR (got $(rcof t-tids))"

# The call's edges: an event at its start or its end matches; 1 ns before
# the start or after the end does not.
for c in "$((B - 1000)):1:0:0" "$((B + 1000)):1:0:0" "$((B - 1001)):0:1:1" "$((B + 1001)):0:1:1"; do
	IFS=: read -r t m uo mo <<<"$c"
	mktr "$tmp/t-w" 1 "[$(call 101)]" 0 "101:f7:$t"
	judge t-w "$tmp/t-w"
	ok "$(rows t-w "$m" "$uo" "$mo"; echo $?)" "event at B$(printf '%+d' $((t - B))) ns, call from B-1000 to B+1000: $m matched, $uo user-only, $mo module-only"
done
run t-window "$C" --from-logs "unfixed=$tmp/t-w" "fixed=$tmp/f-good" --match-window-ms 200
ok "$([[ $(rcof t-window) -eq $EX_USAGE ]]; echo $?)" "compare --match-window-ms is gone (no time window): usage error (got $(rcof t-window))"
# One thread, two failed calls of the same path: each its own event; with
# one event only, one call stays user-only.
mktr "$tmp/t-two" 2 "[$(call 101),$(call 101 $((B + 2000)) $((B + 3000)))]" 0 101:f7:$B 101:f7:$((B + 2500))
judge t-two "$tmp/t-two"
ok "$([[ $(rcof t-two) -eq 0 ]] && rows t-two 2 0 0; echo $?)" "same tid, two events, two failed calls: both matched (exit $(rcof t-two))"
mktr "$tmp/t-two1" 2 "[$(call 101),$(call 101 $((B + 2000)) $((B + 3000)))]" 0 101:f7:$((B + 2500))
judge t-two1 "$tmp/t-two1"
ok "$([[ $(rcof t-two1) -eq $EX_DETECTOR ]] && rows t-two1 1 1 0; echo $?)" "same tid, one event, two failed calls: one event matches one call only"

# one_event NAME PID:COMPONENT EXIT MATCHED USER_ONLY MODULE_ONLY DESC: one
# failed call of $F (OP, default stat; PATH=...: another path) by tid 101
# around B, against one event (lookup LK, default walk) at B.
one_event() {
	mktr "$tmp/$1" 1 "[$(call 101 "" "" "${OP:-stat}" "${PATH_:-}")]" 0 "$2:$B::${LK:-walk}"
	judge "$1" "$tmp/$1"
	ok "$([[ $(rcof "$1") -eq $3 ]] && rows "$1" "$4" "$5" "$6"; echo $?)" "$7 (exit $(rcof "$1"))"
}
one_event t-pid 102:f7 "$EX_DETECTOR" 0 1 1 "another thread's event does not match"
# The pruned component may be an intermediate directory of the path.
one_event t-dir 101:d3 0 1 0 0 "component d3, an intermediate directory of $F: matched"
one_event t-nodir 101:d4 "$EX_DETECTOR" 0 1 1 "component d4, not in $F: no match"
one_event t-part 101:f "$EX_DETECTOR" 0 1 1 "component f, a prefix of a short component: no match"
# lookup=open (open()'s last component) only in an open-type call, on
# the path's last component; lookup=walk in any call.
LK=open one_event t-op-stat 101:f7 "$EX_DETECTOR" 0 1 1 "a lookup=open event in a stat call: wrong op, no match"
LK=open OP=open one_event t-op-open 101:f7 0 1 0 0 "a lookup=open event on the last component of an open: matched"
LK=open OP=openat one_event t-op-openat 101:f7 0 1 0 0 "a lookup=open event in an openat: matched"
LK=open OP=opendir one_event t-op-opendir 101:f7 0 1 0 0 "a lookup=open event in an opendir (an openat): matched"
LK=open OP=open one_event t-op-dir 101:d3 "$EX_DETECTOR" 0 1 1 "a lookup=open event on an intermediate directory: no match"
OP=open one_event t-op-walk 101:d3 0 1 0 0 "a lookup=walk event on an open's intermediate directory: matched"
LK=open OP=mkdir one_event t-op-mkdir 101:f7 "$EX_DETECTOR" 0 1 1 "a lookup=open event in a mkdir: no match"
# Names: the module keeps DCRACE_NAME_LEN - 1 = 47 characters of a longer
# name (include/dcrace/dcrace.h, dcrace_copy_name()): 47 may be truncated,
# a shorter prefix is another name.
long=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ
PATH_=/mnt/dcrace/$long one_event t-name47 "101:${long:0:47}" 0 1 0 0 "the first 47 characters of a 62-character name: matched (truncated)"
PATH_=/mnt/dcrace/$long one_event t-name31 "101:${long:0:31}" "$EX_DETECTOR" 0 1 1 "the first 31 characters of a 62-character name: no match"
PATH_=/mnt/dcrace/${long:0:47} one_event t-name47x "101:${long:0:46}" "$EX_DETECTOR" 0 1 1 "46 characters of a 47-character name: no match"

# Mode mutate (the hard-error rule): a failed call matches an event only
# with its errno; an end event (lookup=end, the end of the walk) in any
# call that walks; an unmatched event whose errno some walked path allows
# is hidden (user space cannot check it), not module-only. Compared as
# fixed (errors: race) against a clean backport run.
mkmut "$tmp/m-clean" '[]' '{}'
mkmut "$tmp/m-match" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B
mjudge m-match "$tmp/m-match" "$tmp/m-clean"
diag "$(cat "$tmp/m-match.out")"
ok "$([[ $(rcof m-match) -eq 0 ]] && mrows m-match 1 0 0 0; echo $?)" \
	"an EACCES failure and a false_eacces event (lookup=end) in it: matched, exit 0 (got $(rcof m-match): $(grep '^verdict:' "$tmp/m-match.out" || head -c 200 "$tmp/m-match.err"))"
mkmut "$tmp/m-errno" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B:false_enoent:walk:ENOENT
mjudge m-errno "$tmp/m-errno" "$tmp/m-clean"
ok "$([[ $(rcof m-errno) -eq $EX_DETECTOR ]] && mrows m-errno 0 1 0 1 &&
	grep -q '^verdict: DETECTOR FAILURE: fixed: 1 user-only (module missed), 0 module-only (no user failure) false error' "$tmp/m-errno.out"; echo $?)" \
	"an EACCES failure and a false_enoent event at the same time: no match (errno differs); the event is hidden (ENOENT allowed), the failure user-only, exit $EX_DETECTOR (got $(rcof m-errno))"
# An end event fits any call that walks a path.
res=
for op in lstat open openat; do
	mkmut "$tmp/m-$op" "[$(mcall 101 $op)]" '{"EACCES":1}' 101:m00:$B
	mjudge "m-$op" "$tmp/m-$op" "$tmp/m-clean"
	res+="$op:$(rcof "m-$op"):$(if mrows "m-$op" 1 0 0 0; then echo matched; fi) "
done
ok "$([[ $res == "lstat:0:matched open:0:matched openat:0:matched " ]]; echo $?)" "a lookup=end event matches an lstat, an open, an openat ($res)"
# An end event names the dentry the walk stood on as it is at the walk's
# end: the mutator may have renamed m00 to m00.t meanwhile (seen in a
# --uid run: the one unmatched EACCES of 5). The thread, the interval and
# the errno say which call it is.
mkmut "$tmp/m-ren" "[$(mcall 101)]" '{"EACCES":1}' 101:m00.t:$B
mjudge m-ren "$tmp/m-ren" "$tmp/m-clean"
ok "$([[ $(rcof m-ren) -eq 0 ]] && mrows m-ren 1 0 0 0; echo $?)" \
	"an end event on a renamed component (m00.t) in the EACCES call on m00/y: matched, exit 0 (got $(rcof m-ren))"
# Unmatched: an errno no walked path allows is module-only (a detector
# failure); one some path allows is hidden, and on a kernel whose errors
# column is clean that is a finding, said, not a failure.
mkmut "$tmp/m-monly" '[]' '{}' 101:m00:$B
mjudge m-monly "$tmp/m-monly" "$tmp/m-clean"
ok "$([[ $(rcof m-monly) -eq $EX_DETECTOR ]] && mrows m-monly 0 0 1 0; echo $?)" \
	"a false_eacces event without a failure, as root (EACCES allowed nowhere): module-only, exit $EX_DETECTOR (got $(rcof m-monly))"
mkmut "$tmp/m-hidden" '[]' '{}' 102:y:$B:false_enoent:walk:ENOENT 102:m00:$((B + 5000)):false_enotdir:end:ENOTDIR
mjudge m-hidden "$tmp/m-match" "$tmp/m-hidden"
diag "$(cat "$tmp/m-hidden.out")"
ok "$([[ $(rcof m-hidden) -eq 0 ]] && grep -qE '^  hidden \(errno allowed: unverifiable\) +0 +2$' "$tmp/m-hidden.out" &&
	grep -qE '^  module-only \(no user failure\) +0 +0$' "$tmp/m-hidden.out" &&
	grep -q '^FINDING: backport: 2 hidden module false_\* event(s) on a kernel whose errors column is clean' "$tmp/m-hidden.out" &&
	[[ $(jq -r '.runs.backport[0].trace.hidden_first[0].errno' "$tmp/m-hidden.json") == ENOENT ]]; echo $?)" \
	"a false_enoent and a false_enotdir event without failures: hidden (2), not module-only; on backport (errors clean) a FINDING line; exit 0 (got $(rcof m-hidden))"
# "Allowed" is decided where the event happened, not by the union of every
# path's errnos: with --uid, locked/y allows EACCES, mNN/y never does. An
# unmatched event in a listed call is judged by that call's path; else by
# its component's paths (m00: mNN/y and mNN; locked: locked/y).
UID_=65534 mkmut "$tmp/m-uid-m" '[]' '{}' 102:m00:$B
mjudge m-uid-m "$tmp/m-match" "$tmp/m-uid-m"
UID_=65534 mkmut "$tmp/m-uid-l" '[]' '{}' 102:locked:$B
mjudge m-uid-l "$tmp/m-match" "$tmp/m-uid-l"
ok "$([[ $(rcof m-uid-m) -eq $EX_DETECTOR && $(rcof m-uid-l) -eq 0 ]] &&
	grep -qE '^  module-only \(no user failure\) +0 +1$' "$tmp/m-uid-m.out" && grep -qE '^  hidden \(errno allowed: unverifiable\) +0 +0$' "$tmp/m-uid-m.out" &&
	grep -qE '^  hidden \(errno allowed: unverifiable\) +0 +1$' "$tmp/m-uid-l.out"; echo $?)" \
	"--uid 65534: an unmatched false_eacces on m00 is module-only, exit $EX_DETECTOR (got $(rcof m-uid-m)); on locked (EACCES allowed there) hidden, exit 0 (got $(rcof m-uid-l))"
UID_=65534 mkmut "$tmp/m-uid-call" "[$(mcall 101 stat EPERM)]" '{"EPERM":1}' 101:m00:$B:false_eperm:end:EPERM 101:y:$((B + 500))
mjudge m-uid-call "$tmp/m-uid-call" "$tmp/m-clean"
ok "$([[ $(rcof m-uid-call) -eq $EX_DETECTOR ]] && mrows m-uid-call 1 0 1 0; echo $?)" \
	"--uid 65534: a false_eacces (component y) inside a listed EPERM call on m00/y, whose path allows no EACCES: module-only, exit $EX_DETECTOR (got $(rcof m-uid-call))"
mkmut "$tmp/m-lk-noent" '[]' '{}' 102:locked:$B:false_enoent:walk:ENOENT
UID_=65534 mkmut "$tmp/m-lk-noent-u" '[]' '{}' 102:locked:$B:false_enoent:walk:ENOENT
UID_=65534 RENAME=1 mkmut "$tmp/m-lk-noent-r" '[]' '{}' 102:locked:$B:false_enoent:walk:ENOENT 102:locked.r:$((B + 500)):false_eacces
res=
for c in m-lk-noent m-lk-noent-u m-lk-noent-r; do
	mjudge "$c" "$tmp/m-match" "$tmp/$c"
	res+="$(rcof "$c"):$(sed -nE 's/^  hidden \(errno allowed: unverifiable\) +0 +([0-9]+)$/\1/p' "$tmp/$c.out") "
done
ok "$([[ $res == "$EX_DETECTOR:0 $EX_DETECTOR:0 0:2 " ]]; echo $?)" \
	"a false_enoent on locked: module-only as root (locked/y not walked) and with --uid alone; with --rename-locked (ENOENT allowed) hidden, as an EACCES on locked.r ($res)"

# Trace lines of a module before errno=, end=, seq_state=: the errno is
# the result's (-13 EACCES, -2 ENOENT).
mkmut "$tmp/m-old" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B:false_eacces:walk:EACCES:old
mjudge m-old "$tmp/m-old" "$tmp/m-clean"
ok "$([[ $(rcof m-old) -eq 0 ]] && mrows m-old 1 0 0 0; echo $?)" "an old trace line (no errno=) of a false_eacces with result=-13: matched to the EACCES failure, exit 0 (got $(rcof m-old))"
mkmut "$tmp/m-old2" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B:false_enoent:walk:ENOENT:old
mjudge m-old2 "$tmp/m-old2" "$tmp/m-clean"
ok "$([[ $(rcof m-old2) -eq $EX_DETECTOR ]] && mrows m-old2 0 1 0 1; echo $?)" "an old false_enoent line (result=-2) in an EACCES failure: no match, hidden, exit $EX_DETECTOR (got $(rcof m-old2))"
# A workload before errno= (no errno in paths): its entries are ENOENT
# failures; a false_enoent event with errno=ENOENT matches them, one with
# errno=EACCES does not.
mktr "$tmp/t-new" 1 "[$(call 101)]" 0 101:f7:$B
sed -i 's/ ns=\([0-9]*\)$/ ns=\1 errno=ENOENT end=path_lookupat seq_state=unchanged/' "$tmp/t-new"
judge t-new "$tmp/t-new"
mktr "$tmp/t-new2" 1 "[$(call 101)]" 0 101:f7:$B
sed -i 's/ ns=\([0-9]*\)$/ ns=\1 errno=EACCES end=path_lookupat seq_state=changed/' "$tmp/t-new2"
judge t-new2 "$tmp/t-new2"
ok "$([[ $(rcof t-new) -eq 0 && $(rcof t-new2) -eq $EX_DETECTOR ]] && rows t-new 1 0 0 && rows t-new2 0 1 1; echo $?)" \
	"paths without errno are ENOENT failures: an event with errno=ENOENT matches (exit $(rcof t-new)), errno=EACCES does not (exit $(rcof t-new2))"
# The trace's events per false_* verdict against the stats' counters.
STATS_EXTRA=1 mkmut "$tmp/m-stats" "[$(mcall 101)]" '{"EACCES":1}' 101:m00:$B
mjudge m-stats "$tmp/m-stats" "$tmp/m-clean"
ok "$([[ $(rcof m-stats) -eq $EX_HARNESS_INFRA ]] && grep -q 'another number of events of a false_\* verdict' "$tmp/m-stats.out"; echo $?)" \
	"stats false_eacces 2, trace 1: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof m-stats))"

# The workload's data must make sense: a thread's calls do not overlap
# (its syscalls are sequential), a call does not end before it starts,
# and the list is not longer than the count.
mktr "$tmp/t-overlap" 2 "[$(call 101 $B $((B + 2000))),$(call 101 $((B + 1000)) $((B + 3000)))]" 0 101:f7:$((B + 500)) 101:f7:$((B + 2500))
judge t-overlap "$tmp/t-overlap"
ok "$([[ $(rcof t-overlap) -eq $EX_HARNESS_INFRA ]] && grep -q "thread 101's failed calls overlap" "$tmp/t-overlap.err"; echo $?)" \
	"two failed calls of one thread overlapping in time: infrastructure error (got $(rcof t-overlap))"
mktr "$tmp/t-back" 1 "[$(call 101 $((B + 1000)) $((B - 1000)))]" 0 101:f7:$B
judge t-back "$tmp/t-back"
ok "$([[ $(rcof t-back) -eq $EX_HARNESS_INFRA ]] && grep -q 'ends before it starts' "$tmp/t-back.err"; echo $?)" \
	"a call that ends before it starts: infrastructure error (got $(rcof t-back))"
mktr "$tmp/t-long" 1 "[$(call 101),$(call 101 $((B + 2000)) $((B + 3000)))]" 0 101:f7:$B 101:f7:$((B + 2500))
judge t-long "$tmp/t-long"
ok "$([[ $(rcof t-long) -eq $EX_HARNESS_INFRA ]] && grep -q 'lists 2 false-ENOENT paths, more than its count 1' "$tmp/t-long.err"; echo $?)" \
	"a paths list longer than the count: infrastructure error (got $(rcof t-long))"
# Lost events, a truncated paths list, a cut section: infrastructure.
mktr "$tmp/t-lost" 1 "[$(call 101)]" 3 101:f7:$B
judge t-lost "$tmp/t-lost"
ok "$([[ $(rcof t-lost) -eq $EX_HARNESS_INFRA ]] && grep -q '^verdict: INFRASTRUCTURE ERROR: unfixed: 3 trace event(s) lost' "$tmp/t-lost.out"; echo $?)" \
	"3 trace events lost: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof t-lost))"
mktr "$tmp/t-trunc" 2 "[$(call 101)]" 0 101:f7:$B 101:f7:$((B + 2000))
judge t-trunc "$tmp/t-trunc"
ok "$([[ $(rcof t-trunc) -eq $EX_HARNESS_INFRA ]] && grep -q "1 false ENOENT missing from the workload's paths list" "$tmp/t-trunc.out"; echo $?)" \
	"a paths list shorter than the count: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof t-trunc))"
mktr "$tmp/t-cut" 1 "[$(call 101)]" cut 101:f7:$B
judge t-cut "$tmp/t-cut"
ok "$([[ $(rcof t-cut) -eq $EX_HARNESS_INFRA ]] && grep -q 'trace events cut off' "$tmp/t-cut.err"; echo $?)" \
	"a trace section without its end: infrastructure error (got $(rcof t-cut))"
STATS_EXTRA=1 mktr "$tmp/t-stats" 1 "[$(call 101)]" 0 101:f7:$B
judge t-stats "$tmp/t-stats"
ok "$([[ $(rcof t-stats) -eq $EX_HARNESS_INFRA ]] && grep -q 'another number of events of a false_\* verdict than the module' "$tmp/t-stats.out"; echo $?)" \
	"a trace with fewer events than the module's false_enoent count: infrastructure error (got $(rcof t-stats))"

# The module loaded (its stats in the log) but neither the trace section
# nor DCRACE-TRACE-NONE: the guest script always prints one of them, so
# the log is broken; no fall-back to counts.
mktr "$tmp/t-notrace" 1 "[$(call 101)]" none
judge t-notrace "$tmp/t-notrace"
ok "$([[ $(rcof t-notrace) -eq $EX_HARNESS_INFRA ]] && grep -q 'no trace section' "$tmp/t-notrace.err"; echo $?)" \
	"module stats but no trace section at all: infrastructure error, exit $EX_HARNESS_INFRA (got $(rcof t-notrace): $(head -c 200 "$tmp/t-notrace.err"))"
# The guest script: a tracefs mount that fails stops the run with a setup
# error before the workload (run on the host: fake debugfs and tracefs
# directories, a mount that fails, /proc/filesystems listing tracefs).
mkdir -p "$tmp/dbg" "$tmp/trfs"
printf 'nodev\ttracefs\n' >"$tmp/filesystems"
(cd "$HS" && python3 -c '
import sys
from dcrace_harness import spec
spec.DEBUGFS, spec.TRACEFS, spec.FILESYSTEMS = sys.argv[1:4]
print("mount() { echo \"mount: permission denied\" >&2; return 32; }")
print(spec.RunSpec().guest_script().replace("dcrace-workload", "echo WORKLOAD-RAN"))' "$tmp/dbg" "$tmp/trfs" "$tmp/filesystems") >"$tmp/guest.sh"
rc=0
out=$(sh "$tmp/guest.sh" 2>/dev/null) || rc=$?
ok "$([[ $rc -ne 0 && $out == *"DCRACE-SETUP-ERROR mounting tracefs on $tmp/trfs failed"* && $out != *WORKLOAD-RAN* ]]; echo $?)" \
	"a failed tracefs mount stops the guest with a setup error, before the workload (exit $rc: $out)"
# A kernel without tracefs: the run goes on, and says why it has no trace.
: >"$tmp/filesystems"
(cd "$HS" && python3 -c '
import sys
from dcrace_harness import spec
spec.DEBUGFS, spec.TRACEFS, spec.FILESYSTEMS = sys.argv[1:4]
print(spec.RunSpec().guest_script().replace("dcrace-workload", "echo WORKLOAD-RAN"))' "$tmp/dbg" "$tmp/trfs" "$tmp/filesystems") >"$tmp/guest2.sh"
rc=0
out=$(sh "$tmp/guest2.sh" 2>/dev/null) || rc=$?
ok "$([[ $out == *WORKLOAD-RAN* && $out == *"DCRACE-TRACE-NONE the kernel has no tracefs"* ]]; echo $?)" \
	"a kernel without tracefs: the workload runs, DCRACE-TRACE-NONE says why (exit $rc)"
# The trace section holds the false_* events and the end_caught ones (a
# clean kernel's evidence), not the other verdicts; the parser reads the
# end_caught events per thread and errno.
mkdir -p "$tmp/trfs/events/dcrace/dcrace_race" "$tmp/trfs/per_cpu/cpu0"
: >"$tmp/trfs/trace"
: >"$tmp/trfs/events/dcrace/dcrace_race/enable"
printf 'overrun: 0\ndropped events: 0\n' >"$tmp/trfs/per_cpu/cpu0/stats"
for v in false_eacces:EACCES end_caught:EACCES caught:ECHILD end_caught:ENOTDIR; do
	echo " dcr-walk-101 [000] d..1. 4.0: dcrace_race: verdict=${v%:*} pid=101 comm=dcr-walk lookup=end component=m00 seq=4/6 result=-13 killer=-1/unknown kill_to_read_ns=-1 ns=$B errno=${v#*:} end=path_lookupat seq_state=changed"
done >"$tmp/trlines"
(cd "$HS" && python3 -c '
import sys
from dcrace_harness import spec
spec.DEBUGFS, spec.TRACEFS, spec.FILESYSTEMS = sys.argv[1:4]
print(spec.RunSpec(mode="mutate").guest_script().replace(
    "dcrace-workload", "cat %s >>%s/trace; echo WORKLOAD-RAN" % (sys.argv[4], sys.argv[2])))' \
	"$tmp/dbg" "$tmp/trfs" "$tmp/filesystems" "$tmp/trlines") >"$tmp/guest3.sh"
out=$(sh "$tmp/guest3.sh" 2>/dev/null | sed -n '/^DCRACE-TRACE-BEGIN$/,/^DCRACE-TRACE-END$/p' | grep -o 'verdict=[a-z_]* .* errno=[A-Z]*' | sed 's/ pid.*errno=/:/' | tr '\n' ' ' || true)
ok "$([[ $out == "verdict=false_eacces:EACCES verdict=end_caught:EACCES verdict=end_caught:ENOTDIR " ]]; echo $?)" \
	"the guest script's trace section: the false_* and end_caught events, not caught ($out)"
done_testing
