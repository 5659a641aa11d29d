#!/bin/bash
# The docs cannot rot silently: every command README.md and docs/*.md show
# (host-scripts/*, make targets) answers --help, and is run for real,
# either by another test file (named here) or below. The guest commands of
# debugfs.md's examples run in a guest as written.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"

# Commands named in the docs: code blocks and `inline code`.
python3 - README.md docs/*.md >"$tmp/cmds" <<'EOF'
import re, sys
scripts, targets = set(), set()
for path in sys.argv[1:]:
    text = open(path).read()
    spans = re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(r"`([^`\n]+)`", text)
    for s in spans:
        for m in re.finditer(r"host-scripts/([a-z][a-z_-]*)(?![\w./])", s):
            scripts.add(m.group(1))
        for m in re.finditer(r"(?:^|[\s$(])make ([a-z][a-z-]*)", s, re.M):
            targets.add(m.group(1))
for s in sorted(scripts):
    print("script", s)
for t in sorted(targets):
    print("target", t)
EOF
mapfile -t scripts < <(sed -n 's/^script //p' "$tmp/cmds")
mapfile -t targets < <(sed -n 's/^target //p' "$tmp/cmds")
# lib.sh and the dcrace_harness package are sourced/imported, not run.
plan $((${#scripts[@]} * 2 + ${#targets[@]} + 11))
diag "the docs name: scripts ${scripts[*]}; make targets ${targets[*]}"

# 1. every script: --help, and a real run in some test file
for s in "${scripts[@]}"; do
	rc=0
	out=$("$HS/$s" --help 2>&1) || rc=$?
	ok "$([[ $rc -eq 0 ]] && grep -qi usage <<<"$out"; echo $?)" "host-scripts/$s --help (exit $rc)"
	users=$(grep -lE "(\\\$HS|host-scripts)/$s\\b" tests/*.t | xargs -r -n1 basename | tr '\n' ' ' || true)
	ok "$([[ -n $users ]]; echo $?)" "host-scripts/$s runs for real in: ${users:-NO TEST}"
done

# 2. every make target: run for real, here or elsewhere
for t in "${targets[@]}"; do
	rc=0
	case $t in
	check)
		# this very run is make check's (tests/run is what it runs)
		grep -q 'tests/run' Makefile || rc=1
		ok "$rc" "make check runs tests/run (this suite)"
		continue ;;
	lint)
		# make lint is tests/run lint, which is 05-lint.t: a file of
		# this suite, run for real by make check (its own checks there)
		lr=$(make -s -n lint 2>/dev/null | tr -s ' ')
		lf=$(tests/run --list lint 2>/dev/null | tr '\n' ' ')
		[[ $lr == 'tests/run lint' && $lf == '05-lint.t ' ]] || rc=1
		ok "$rc" "make lint runs tests/run lint, that is ${lf:-nothing}(recipe: ${lr:-none})"
		continue ;;
	compare) make compare ARGS="--duration 3" >"$tmp/out" 2>&1 || rc=$? ;;
	bench) make bench ARGS="--only overhead --rounds 1 --probe-rounds 0 --row-seconds 1 --settle 0" >"$tmp/out" 2>&1 || rc=$? ;;
	kernels | initramfs | module | deps | help) make "$t" >"$tmp/out" 2>&1 || rc=$? ;;
	*) rc=1; echo "no way to run make $t" >"$tmp/out" ;;
	esac
	[[ $rc -eq 0 ]] || tail -n 5 "$tmp/out" | while IFS= read -r l; do diag "$l"; done
	ok "$rc" "make $t runs (exit $rc)"
done

# 3. compare --plot draws a PNG (from canned logs: no boot)
for k in unfixed fixed; do
	{
		echo "DCRACE-BOOTED 6.1.192 cpus=2"
		printf 'DCRACE-RESULT {"version":1,"mode":"stat","syscalls":100,"false_enoent":%d,"first_false_enoent_s":null,"per_second":[%d,1,0],"elapsed_s":3.0}\n' \
			"$([[ $k == unfixed ]] && echo 3 || echo 0)" "$([[ $k == unfixed ]] && echo 2 || echo 0)"
		echo "DCRACE-TICK 10.0 false_enoent: 0 caught: 0 caught_late: 0"
		echo "DCRACE-TICK 11.0 false_enoent: 2 caught: 5 caught_late: 0"
		echo "DCRACE-STATS-BEGIN"
		printf 'false_enoent: %d\ncaught: 5\nnull_inode_seen: 5\nevents: 5\n' "$([[ $k == unfixed ]] && echo 3 || echo 0)"
		echo "DCRACE-STATS-END"
		echo "DCRACE-TRACE-NONE dcrace.ko has no dcrace/dcrace_race trace event"
		echo "DCRACE-EXIT 0"
	} >"$tmp/$k.log"
done
rc=0
"$HS/compare" --from-logs unfixed="$tmp/unfixed.log" fixed="$tmp/fixed.log" --plot "$tmp/p.png" >"$tmp/out" 2>&1 || rc=$?
ok "$([[ -s $tmp/p.png ]] && file "$tmp/p.png" | grep -q 'PNG image'; echo $?)" "compare --plot FILE.png draws a PNG (exit $rc)"
rc=0
"$HS/compare" --from-logs unfixed="$tmp/unfixed.log" --plot "$tmp/p.svg" >/dev/null 2>&1 || rc=$?
ok "$([[ $rc -eq 64 ]]; echo $?)" "compare --plot refuses a name not ending in .png (64; got $rc)"

# 4. debugfs.md's examples, run in a guest as written
ko=$("$HS/build-module")
python3 - docs/debugfs.md >"$tmp/guest.sh" <<'EOF'
import re, sys
lines = [l for b in re.findall(r"```sh\n(.*?)```", open(sys.argv[1]).read(), re.S)
         for l in b.splitlines()]
# the module first, then the debugfs writes
lines.sort(key=lambda l: not l.startswith("insmod "))
for line in lines:
    print(re.sub(r"^insmod dcrace\.ko", "insmod /dcrace/copy/dcrace.ko", line))
EOF
cat >>"$tmp/guest.sh" <<'EOF'
echo "CHECK $(cat $D/inject/delay_us) $(cat $D/inject/probability) $(cat $D/inject/comm) $(cat /sys/module/dcrace/parameters/verbose)"
EOF
diag "$(cat "$tmp/guest.sh")"
rc=0
out=$("$HS/run-guest" -q --copy "$ko" --log "$T_RESULTS/docs-debugfs.log" --exec "$(cat "$tmp/guest.sh")" 2>&1) || rc=$?
ok "$rc" "debugfs.md's example commands run in the guest (exit $rc)"
ok "$(grep -qx 'CHECK 20 100 dcr-walk 1' <<<"$out"; echo $?)" "and leave the knobs as the docs say ($(grep CHECK <<<"$out" || echo none))"

# 5. docs/benchmarks.md is what make bench made of docs/benchmarks.json
rc=0
"$HS/bench" --render >"$tmp/bench.md" 2>"$tmp/bench.err" || rc=$?
ok "$([[ $rc -eq 0 ]] && cmp -s "$tmp/bench.md" docs/benchmarks.md; echo $?)" \
	"docs/benchmarks.md matches docs/benchmarks.json (bench --render, exit $rc)"

# 6. README's main command is the one .ci/run's test command relies on
ok "$(grep -q '^make check' README.md && grep -q 'make check' .ci/run; echo $?)" "README's test command is what CI runs"

# 7. README as a new user reads it: on a fresh Debian 12 (no git, no
# make) it says what to install before the two commands, how long a cold
# make check takes, no internal issue numbers, one sample table per
# command; committed files hold no absolute path of the machine that
# made them.
first_make=$({ grep -n '^make compare' README.md || true; } | head -n 1 | cut -d: -f1)
first_apt=$({ grep -nE '^apt-get .*install .*\bgit\b.*\bmake\b|^apt-get .*install .*\bmake\b.*\bgit\b' README.md || true; } | head -n 1 | cut -d: -f1)
ok "$([[ -n $first_apt && -n $first_make && $first_apt -lt $first_make ]]; echo $?)" \
	"README installs git and make before the two commands (apt-get at line ${first_apt:-none}, make compare at ${first_make:-none})"
ok "$(grep -qiE 'cold .?make check.? (takes|took)|make check.? from an empty cache (takes|took)' README.md; echo $?)" \
	"README says how long a cold make check takes"
issues=$(grep -noiE '\bissues? [0-9]+' README.md || true)
ok "$([[ -z $issues ]]; echo $?)" "README names no internal issue numbers (${issues:-none})"
tables=$(grep -c '^dcrace compare: mode=' README.md || true)
ok "$([[ $tables -eq 1 ]]; echo $?)" "README shows one sample table of make compare (got $tables)"
abs=$(grep -nE '"(/work|/root|/home|/tmp)/' docs/*.json || true)
ok "$([[ -z $abs ]]; echo $?)" "committed JSON holds no absolute path of the machine that made it (${abs:-none})"

done_testing
