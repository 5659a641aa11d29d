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

# Exit codes, the splat pattern, the kernel table (one definition).
# shellcheck source=host-scripts/dcrace_harness/defs.sh
source "$ROOT/host-scripts/dcrace_harness/defs.sh"

# Results of guest runs made by tests go here (kept for triage): one
# directory per tests/run invocation (DCRACE_TEST_RUN), so that two runs
# never write or read each other's logs.
T_RESULTS=$ROOT/results/tests/${DCRACE_TEST_RUN:-$(date +%Y%m%d-%H%M%S)-$$}
mkdir -p "$T_RESULTS"

# splat FILE: the kernel splat lines in FILE (none: empty output).
splat() {
	grep -E "$DCRACE_SPLAT_RE" "$1" | grep -vF "$DCRACE_SPLAT_OWN" || true
}

# is_count VALUE...: every VALUE is a whole number (an empty or "x" field
# from a missing log is not).
is_count() {
	local v
	for v in "$@"; do
		[[ $v =~ ^[0-9]+$ ]] || return 1
	done
}

# tmp_dir: a scratch directory in $tmp, removed at exit.
tmp_dir() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
}

# run NAME CMD...: run CMD, keeping its stdout, stderr and exit status in
# $tmp/NAME.out, .err and .rc (the test file makes $tmp); rcof NAME: that
# status.
run() {
	local n=$1 rc=0
	shift
	# shellcheck disable=SC2154
	"$@" >"$tmp/$n.out" 2>"$tmp/$n.err" || rc=$?
	echo "$rc" >"$tmp/$n.rc"
}
rcof() { cat "$tmp/$1.rc"; }

# guest_json LOG: the workload's JSON result line from a serial log.
guest_json() {
	sed -n 's/^DCRACE-RESULT //p' "$1" | tail -n 1
}
