# shellcheck shell=bash
# TAP helpers for dcrace test files (tests/*.t). Sourced.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034
HS=$ROOT/host-scripts
T_N=0
T_FAILED=0
T_PLANNED=

plan() {
	T_PLANNED=$1
	echo "1..$1"
}

ok() {
	# ok COND_STATUS DESCRIPTION
	local st=$1
	shift
	T_N=$((T_N + 1))
	if [[ $st -eq 0 ]]; then
		echo "ok $T_N - $*"
	else
		echo "not ok $T_N - $*"
		T_FAILED=$((T_FAILED + 1))
	fi
}

pass() { ok 0 "$@"; }
fail() { ok 1 "$@"; }

skip() {
	T_N=$((T_N + 1))
	echo "ok $T_N # SKIP $*"
}

# check DESCRIPTION CMD...: a test point that passes when CMD succeeds.
check() {
	local d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}

diag() {
	local l
	while IFS= read -r l; do echo "# $l"; done <<<"$*"
}

done_testing() {
	if [[ -n $T_PLANNED && $T_PLANNED -ne $T_N ]]; then
		echo "not ok $((T_N + 1)) - planned $T_PLANNED tests, ran $T_N"
		exit 1
	fi
	[[ $T_FAILED -eq 0 ]]
}

# Results of guest runs made by tests go here (kept for triage).
T_RESULTS=$ROOT/results/tests
mkdir -p "$T_RESULTS"

# guest_json LOG: the workload's JSON result line from a serial log.
guest_json() {
	sed -n 's/^DCRACE-RESULT //p' "$1" | tail -n 1
}
