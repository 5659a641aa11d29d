# shellcheck shell=bash
# Canned serial logs with dcrace.ko's trace events, for the tests of the
# per-event match (tests/30-verdict.t, tests/32-match.t). Sourced after
# tests/lib.sh, with $tmp set.

# B: a CLOCK_MONOTONIC time (ns) the canned events and calls are around;
# F: a path of the walk tree (both used by the test files).
# shellcheck disable=SC2034
B=5000000000
# shellcheck disable=SC2034
F=/mnt/dcrace/d3/f7

# pe PATH TID START END [OP [ERRNO]]: a workload "paths" entry, a failed
# call OP (default stat) of thread TID on PATH that ran from START to END
# ns, with errno ERRNO (default: none said, as before errno=: ENOENT).
# "ns" (the call's end) is what workloads before start_ns/end_ns wrote:
# kept so that an older parser reads these logs too (the new one ignores it).
pe() {
	printf '{"path":"%s","t":0.5,"tid":%d,"ns":%d,"start_ns":%d,"end_ns":%d,"op":"%s"%s}' \
		"$1" "$2" "$4" "$3" "$4" "${5:-stat}" "${6:+,\"errno\":\"$6\"}"
}

# M: a mode mutate path of the walkers (mNN/y: 0, ENOENT, ENOTDIR allowed).
# shellcheck disable=SC2034
M=/mnt/m00/y

# mcall TID [OP [ERRNO [START END]]]: a failed call of $M, by default stat
# with EACCES from B - 1000 to B + 1000.
mcall() { pe "$M" "$1" "${4:-$((B - 1000))}" "${5:-$((B + 1000))}" "${2:-stat}" "${3:-EACCES}"; }

# errno_of NAME: the errno's number (the few the canned logs use).
errno_of() {
	case $1 in
	EPERM) echo 1 ;; ENOENT) echo 2 ;; EACCES) echo 13 ;; ENOTDIR) echo 20 ;; ECHILD) echo 10 ;;
	*) echo "errno_of: $1?" >&2; return 1 ;;
	esac
}

# mkmut FILE PATHS FALSE_ERRORS [PID:COMPONENT:NS[:VERDICT[:LOOKUP[:ERRNO[:old]]]]...]:
# a canned log of a mode mutate run (as root: m/y and m walked) listing
# PATHS (a JSON list), counting FALSE_ERRORS (a JSON object, e.g.
# '{"EACCES":1}'; "0": false successes), with one trace event per
# argument: VERDICT default false_eacces, LOOKUP end, ERRNO EACCES; "old":
# the line of a module before errno=, end=, seq_state= (its result says
# the errno). The stats count the events per verdict (STATS_EXTRA=N: N
# more false_eacces); END_CAUGHT: the stats' end_caught (default 5);
# CAUGHT_EV: the trace's end_caught events, PID:ERRNO[:COMM] each
# (default 101:EACCES 101:EACCES 101:ENOTDIR by dcr-walk, none with
# END_CAUGHT=0); TIDS as for mktr. UID_=N: the walkers' uid (locked/y
# walked: EACCES for N > 0, 0 for 0); RENAME=1: --rename-locked (locked/y
# walked, ENOENT allowed too); MUTATIONS: the mutators' count (default
# 500); OUTCOMES: outcomes_by_path (a JSON object; default: every errno
# the truth table allows met 10 times); STATS_MORE: more stats lines.
mkmut() {
	local f=$1 paths=$2 fe=$3 e pid comp ns v lk en old n cc
	shift 3
	declare -A cnt=()
	cc=
	[[ ${END_CAUGHT:-5} -eq 0 ]] || cc="101:EACCES 101:EACCES 101:ENOTDIR"
	cc=${CAUGHT_EV-$cc}
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		echo "DCRACE-MODULE-LOADED"
		python3 - "$fe" "$paths" "${TIDS:-}" "${UID_:-}" "${RENAME:-}" "${MUTATIONS:-500}" "${OUTCOMES:-}" <<'PY'
import json, sys
fe, paths, tids, uid, rename, mutations, outcomes = sys.argv[1:8]
fe = json.loads(fe)
allowed = {"m/y": ["0", "ENOENT", "ENOTDIR"], "m": ["0", "ENOENT"]}
if uid or rename:
    allowed["locked/y"] = (["EACCES"] if uid and int(uid) > 0 else ["0"]) + (["ENOENT"] if rename else [])
res = {"version": 1, "mode": "mutate", "syscalls": 1000, "false_enoent": fe.get("ENOENT", 0),
       "false_errors": fe, "truth": "construction", "mutators": 2, "mutations": int(mutations),
       "uid": int(uid) if uid else None, "rename_locked": bool(rename),
       "locked_renames": 300 if rename else 0, "allowed": allowed,
       "outcomes_by_path": json.loads(outcomes) if outcomes else
       {k: {e: 10 for e in v} for k, v in allowed.items()},
       "first_false_enoent_s": None, "first_false_error_s": 0.5 if fe else None,
       "per_second": [1], "elapsed_s": 1.0, "paths": json.loads(paths), "paths_dropped": 0,
       "gone": 0, "mix": "stat=50,open=50"}
if tids:
    res["tids"] = [int(t) for t in tids.split(",")]
print("DCRACE-RESULT " + json.dumps(res, separators=(",", ":")))
PY
		echo "DCRACE-TRACE-BEGIN"
		for e in "$@"; do
			IFS=: read -r pid comp ns v lk en old <<<"$e"
			v=${v:-false_eacces} en=${en:-EACCES}
			cnt[$v]=$((${cnt[$v]:-0} + 1))
			n=$(errno_of "$en")
			if [[ $old == old ]]; then
				echo "        dcr-walk-$pid     [001] d..1.     5.000000: dcrace_race: verdict=$v pid=$pid comm=dcr-walk lookup=${lk:-end} component=$comp seq=4/6 result=-$n killer=-1/unknown kill_to_read_ns=-1 ns=$ns"
			else
				echo "        dcr-walk-$pid     [001] d..1.     5.000000: dcrace_race: verdict=$v pid=$pid comm=dcr-walk lookup=${lk:-end} component=$comp seq=4/6 result=-$n killer=-1/unknown kill_to_read_ns=-1 ns=$ns errno=$en end=path_lookupat seq_state=changed"
			fi
		done
		for e in $cc; do
			IFS=: read -r pid en comm <<<"$e"
			echo "        ${comm:-dcr-walk}-$pid     [000] d..1.     4.000000: dcrace_race: verdict=end_caught pid=$pid comm=${comm:-dcr-walk} lookup=end component=m00 seq=4/6 result=-10 killer=-1/unknown kill_to_read_ns=-1 ns=$((B - 9000)) errno=$en end=path_lookupat seq_state=changed"
		done
		echo "DCRACE-TRACE-END"
		echo "DCRACE-TRACE-LOST 0"
		echo "DCRACE-STATS-BEGIN"
		printf 'enabled: 1\nnull_inode_seen: 4\nfalse_enoent: %d\ncaught: 4\ncaught_late: 0\nevents: %d\nevents_lost: 0\nwalk_caught: 4\nopen_caught: 4\n' \
			"${cnt[false_enoent]:-0}" $(($# + 4))
		printf 'end_judged: %d\nend_genuine: 3\nend_caught: %d\nfalse_enotdir: %d\nfalse_eacces: %d\nfalse_eperm: %d\nfalse_error: %d\nfalse_enoent_seq_unchanged: %d\n' \
			$(($# + 3 + ${END_CAUGHT:-5})) "${END_CAUGHT:-5}" "${cnt[false_enotdir]:-0}" \
			$((${cnt[false_eacces]:-0} + ${STATS_EXTRA:-0})) "${cnt[false_eperm]:-0}" "${cnt[false_error]:-0}" \
			"${SEQ_UNCHANGED:-0}"
		[[ -z ${STATS_MORE:-} ]] || printf '%b\n' "$STATS_MORE"
		echo "DCRACE-STATS-END"
		echo "DCRACE-DMESG-BEGIN"
		echo "DCRACE-DMESG-END"
		echo "DCRACE-EXIT 0"
	} >"$f"
}

# mjudge NAME RACE_LOG CLEAN_LOG: compare on the hard-error rule: RACE_LOG
# as fixed (its errors column: race), CLEAN_LOG as backport (clean).
# shellcheck disable=SC2154
mjudge() { run "$1" "$HS/compare" --from-logs "fixed=$2" "backport=$3" --json "$tmp/$1.json"; }

# mrows NAME MATCHED USER_ONLY MODULE_ONLY HIDDEN: the table's rows for the
# first kernel (fixed) of a mutate compare.
mrows() {
	grep -qE "^module events matched to user failures +$2 +" "$tmp/$1.out" &&
		grep -qE "^  user-only \(module missed\) +$3 +" "$tmp/$1.out" &&
		grep -qE "^  module-only \(no user failure\) +$4 +" "$tmp/$1.out" &&
		grep -qE "^  hidden \(errno allowed: unverifiable\) +$5 +" "$tmp/$1.out"
}

# mktr FILE FALSE PATHS LOST [PID:COMPONENT:NS[:COMM[:LOOKUP]]...]: a
# canned log whose workload saw FALSE false ENOENTs listed in PATHS (a
# JSON list), with one trace event per argument (COMM default dcr-walk,
# LOOKUP default walk). LOST: the trace's lost count; "cut": the section
# has no end; "none": the log has no trace section at all. TIDS=a,b: the
# result's "tids", else it has none; STATS_EXTRA=N: the module's stats
# count N more false_enoent than the trace holds; CAUGHT: caught on each
# path (walk_caught, open_caught), default 4; ELAPSED, FIRST: the
# result's elapsed_s, first_false_enoent_s.
mktr() {
	local f=$1 u=$2 paths=$3 lost=$4 e pid comp ns comm lk
	shift 4
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		echo "DCRACE-MODULE-LOADED"
		printf 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":1000,"false_enoent":%d,%s"first_false_enoent_s":%s,"per_second":[%d],"elapsed_s":%s,"paths":%s,"paths_dropped":0,"gone":0,"mix":"stat=50,open=50"}\n' \
			"$u" "${TIDS:+\"tids\":[$TIDS],}" "${FIRST:-$([[ $u -gt 0 ]] && echo 0.5 || echo null)}" "$u" "${ELAPSED:-1.0}" "$paths"
		if [[ $lost != none ]]; then
			echo "DCRACE-TRACE-BEGIN"
			for e in "$@"; do
				IFS=: read -r pid comp ns comm lk <<<"$e"
				echo "        ${comm:-dcr-walk}-$pid     [001] d..1.     5.000000: dcrace_race: verdict=false_enoent pid=$pid comm=${comm:-dcr-walk} lookup=${lk:-walk} component=$comp seq=4/6 result=-2 killer=-1/unknown kill_to_read_ns=-1 ns=$ns"
			done
			[[ $lost == cut ]] || echo "DCRACE-TRACE-END"
			[[ $lost == cut ]] || echo "DCRACE-TRACE-LOST $lost"
		fi
		echo "DCRACE-STATS-BEGIN"
		printf 'enabled: 1\nnull_inode_seen: %d\nfalse_enoent: %d\ncaught: %d\ncaught_late: 0\nevents: %d\nevents_lost: 0\nwalk_caught: %d\nopen_caught: %d\n' \
			$(($# + ${CAUGHT:-4})) $(($# + ${STATS_EXTRA:-0})) "${CAUGHT:-4}" $(($# + ${CAUGHT:-4})) "${CAUGHT:-4}" "${CAUGHT:-4}"
		echo "DCRACE-STATS-END"
		echo "DCRACE-DMESG-BEGIN"
		echo "DCRACE-DMESG-END"
		echo "DCRACE-EXIT 0"
	} >"$f"
}

# judge NAME LOG: compare the log as unfixed against a clean fixed run
# ($tmp/f-good, made by the test file).
# shellcheck disable=SC2154
judge() { run "$1" "$HS/compare" --from-logs "unfixed=$2" "fixed=$tmp/f-good" --json "$tmp/$1.json"; }

# rows NAME MATCHED USER_ONLY MODULE_ONLY: the table's rows for unfixed.
rows() {
	grep -qE "^module events matched to user failures +$2 +0$" "$tmp/$1.out" &&
		grep -qE "^  user-only \(module missed\) +$3 +0$" "$tmp/$1.out" &&
		grep -qE "^  module-only \(no user failure\) +$4 +0$" "$tmp/$1.out"
}
